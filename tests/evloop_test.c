/*
 * The helper's readiness loop, each implementation in turn: epoll (Linux)
 * and poll(2) (elsewhere, and here when forced), held to the same cases.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "helper/evloop.h"
#include "src/core/fd.h"

#define MS 1000000LL
#define MANY 300

struct fixture {
	struct evloop ev;
	bool forced;
	int p[2];
};

static int64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int
setup(void **state, bool force_poll)
{
	static struct fixture f[2];
	struct fixture *x = &f[force_poll];

	x->forced = force_poll;
	if (ev_init(&x->ev, force_poll) != 0 || fd_pipe(x->p) != 0)
		return -1;
	*state = x;
	return 0;
}

static int setup_epoll(void **state) { return setup(state, false); }
static int setup_poll(void **state) { return setup(state, true); }

static int
teardown(void **state)
{
	struct fixture *x = *state;

	ev_fini(&x->ev);
	if (x->p[0] >= 0)
		close(x->p[0]);
	if (x->p[1] >= 0)
		close(x->p[1]);
	return 0;
}

static void
put(int fd)
{
	assert_int_equal(write(fd, "x", 1), 1);
}

/* Waits without a timeout's risk: long enough for anything already ready. */
static int
wait_now(struct fixture *x, struct ev_ready *r, int max)
{
	return ev_wait(&x->ev, r, max, 0);
}

static void
implementation_is_the_one_asked_for(void **state)
{
	struct fixture *x = *state;

#ifdef __linux__
	assert_int_equal(x->ev.epfd >= 0, !x->forced);
#else
	assert_true(x->ev.epfd < 0);
#endif
}

static void
nothing_ready_times_out_and_never_early(void **state)
{
	struct fixture *x = *state;
	struct ev_ready r[4];
	int64_t t0;

	assert_int_equal(ev_add(&x->ev, x->p[0], EV_IN, x), 0);
	assert_int_equal(wait_now(x, r, 4), 0);
	t0 = now_ns();
	assert_int_equal(ev_wait(&x->ev, r, 4, 20 * MS), 0);
	/* Woken early, a deadline would fire before its time. */
	assert_true(now_ns() - t0 >= 20 * MS);
}

static void
readable_is_reported_with_its_object(void **state)
{
	struct fixture *x = *state;
	struct ev_ready r[4];
	int obj;

	assert_int_equal(ev_add(&x->ev, x->p[0], EV_IN, &obj), 0);
	put(x->p[1]);
	assert_int_equal(ev_wait(&x->ev, r, 4, -1), 1);
	assert_ptr_equal(r[0].obj, &obj);
	assert_int_equal(r[0].events, EV_IN);
	/* Level-triggered: still there until read. */
	assert_int_equal(wait_now(x, r, 4), 1);
}

static void
no_interest_hides_it_until_asked_again(void **state)
{
	struct fixture *x = *state;
	struct ev_ready r[4];

	assert_int_equal(ev_add(&x->ev, x->p[0], EV_IN, x), 0);
	put(x->p[1]);
	assert_int_equal(ev_mod(&x->ev, x->p[0], 0, x), 0);
	assert_int_equal(wait_now(x, r, 4), 0);
	assert_int_equal(ev_mod(&x->ev, x->p[0], EV_IN, x), 0);
	assert_int_equal(wait_now(x, r, 4), 1);
}

static void
writable_and_hangup(void **state)
{
	struct fixture *x = *state;
	struct ev_ready r[4];
	int sv[2];

	assert_int_equal(fd_socketpair(sv), 0);
	assert_int_equal(ev_add(&x->ev, sv[0], EV_OUT, x), 0);
	assert_int_equal(wait_now(x, r, 4), 1);
	assert_int_equal(r[0].events, EV_OUT);
	/* A peer gone reads as input: the reader then sees end of file. */
	assert_int_equal(ev_mod(&x->ev, sv[0], EV_IN, x), 0);
	assert_int_equal(wait_now(x, r, 4), 0);
	close(sv[1]);
	assert_int_equal(wait_now(x, r, 4), 1);
	assert_true(r[0].events & EV_IN);
	ev_del(&x->ev, sv[0]);
	close(sv[0]);
}

static void
deleted_is_never_reported_even_if_a_copy_lives(void **state)
{
	struct fixture *x = *state;
	struct ev_ready r[4];
	int copy;

	/* As a shepherd forked a moment ago still holds the helper's fds. */
	copy = dup(x->p[0]);
	assert_true(copy >= 0);
	assert_int_equal(ev_add(&x->ev, x->p[0], EV_IN, x), 0);
	ev_del(&x->ev, x->p[0]);
	close(x->p[0]);
	x->p[0] = -1;
	put(x->p[1]);
	assert_int_equal(wait_now(x, r, 4), 0);
	close(copy);
}

static void
added_twice_is_refused(void **state)
{
	struct fixture *x = *state;

	assert_int_equal(ev_add(&x->ev, x->p[0], EV_IN, x), 0);
	assert_int_equal(ev_add(&x->ev, x->p[0], EV_IN, x), -EEXIST);
}

static void
one_ready_among_many(void **state)
{
	struct fixture *x = *state;
	struct ev_ready r[8];
	int p[MANY][2], i, n, seen = 0;

	for (i = 0; i < MANY; i++) {
		assert_int_equal(fd_pipe(p[i]), 0);
		assert_int_equal(ev_add(&x->ev, p[i][0], EV_IN, p[i]), 0);
	}
	put(p[MANY / 2][1]);
	put(p[MANY - 1][1]);
	n = ev_wait(&x->ev, r, 8, -1);
	/* Both are ready before the wait: each reported once, no other. */
	assert_int_equal(n, 2);
	for (i = 0; i < n; i++) {
		assert_int_equal(r[i].events, EV_IN);
		if (r[i].obj == p[MANY / 2])
			seen |= 1;
		else if (r[i].obj == p[MANY - 1])
			seen |= 2;
	}
	assert_int_equal(seen, 3);
	/* At most max at once; the rest stay for the next turn. */
	assert_int_equal(ev_wait(&x->ev, r, 1, 0), 1);
	for (i = 0; i < MANY; i++) {
		ev_del(&x->ev, p[i][0]);
		close(p[i][0]);
		close(p[i][1]);
	}
	assert_int_equal(wait_now(x, r, 8), 0);
}

/*
 * Timers come due earliest first, whatever order they were added, moved
 * or removed in; a disarmed one never comes due.
 */
static void
timers_come_due_in_order(void **state)
{
	struct fixture *x = *state;
	struct ev_timer t[MANY], *d;
	int64_t last = -1;
	int i, n = 0;

	assert_int_equal(ev_timer_next(&x->ev), INT64_MAX);
	for (i = 0; i < MANY; i++) {
		t[i].at = (int64_t)((i * 7919) % MANY);  /* a shuffle */
		t[i].obj = &t[i];
		assert_int_equal(ev_timer_add(&x->ev, &t[i]), 0);
	}
	assert_int_equal(ev_timer_next(&x->ev), 0);
	assert_null(ev_timer_due(&x->ev, -1));
	ev_timer_del(&x->ev, &t[0]);               /* at 0 */
	ev_timer_set(&x->ev, &t[1], INT64_MAX);    /* disarmed */
	ev_timer_set(&x->ev, &t[2], MANY + 5);     /* moved last */
	while ((d = ev_timer_due(&x->ev, MANY + 5)) != NULL) {
		assert_ptr_equal(d->obj, d);
		assert_true(d->at >= last);
		last = d->at;
		n++;
		ev_timer_del(&x->ev, d);
	}
	assert_int_equal(n, MANY - 2);
	assert_int_equal(last, MANY + 5);
	assert_int_equal(ev_timer_next(&x->ev), INT64_MAX);
	assert_null(ev_timer_due(&x->ev, INT64_MAX - 1));
	ev_timer_del(&x->ev, &t[1]);
	assert_int_equal(ev_timer_next(&x->ev), INT64_MAX);
}

#define BOTH(t) \
	{ "epoll: " #t, t, setup_epoll, teardown, NULL }, \
	{ "poll: " #t, t, setup_poll, teardown, NULL }

int
main(void)
{
	const struct CMUnitTest tests[] = {
		BOTH(implementation_is_the_one_asked_for),
		BOTH(nothing_ready_times_out_and_never_early),
		BOTH(readable_is_reported_with_its_object),
		BOTH(no_interest_hides_it_until_asked_again),
		BOTH(writable_and_hangup),
		BOTH(deleted_is_never_reported_even_if_a_copy_lives),
		BOTH(added_twice_is_refused),
		BOTH(one_ready_among_many),
		BOTH(timers_come_due_in_order),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
