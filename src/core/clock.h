#ifndef CONFINE_CLOCK_H
#define CONFINE_CLOCK_H

#include <limits.h>
#include <stdint.h>
#include <time.h>

/* Monotonic nanoseconds. */
static inline int64_t
clock_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Milliseconds to a clock_ns() deadline, rounded up, for poll: INT64_MAX
 * is none (-1). */
static inline int
clock_ms_until(int64_t deadline)
{
	int64_t now = clock_ns(), ms;

	if (deadline == INT64_MAX)
		return -1;
	if (deadline <= now)
		return 0;
	ms = (deadline - now + 999999) / 1000000;
	return ms > INT_MAX ? INT_MAX : (int)ms;
}

#endif
