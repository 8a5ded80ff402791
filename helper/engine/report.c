#include "helper/engine/report.h"

static int64_t
tv_us(const struct timeval *tv)
{
	return (int64_t)tv->tv_sec * 1000000 + tv->tv_usec;
}

void
report_exited(struct job_report *r, int status, const struct rusage *ru,
    int64_t wall_us)
{
	r->type = REP_EXITED;
	r->status = status;
	r->wall_us = wall_us;
	r->user_us = tv_us(&ru->ru_utime);
	r->sys_us = tv_us(&ru->ru_stime);
#ifdef __APPLE__
	r->max_rss_kib = ru->ru_maxrss / 1024;  /* bytes there */
#else
	r->max_rss_kib = ru->ru_maxrss;
#endif
}
