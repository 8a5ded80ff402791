/*
 * Throughput: jobs per second of /bin/true from N submitting threads, each
 * starting a job and waiting for it in a loop, confine against posix_spawn
 * from the same number of threads, and the floors floor-vfork and
 * floor-confined (vfork + exec, with confine's confinement in between, no
 * helper): the ceiling of any design that confines each job so. They take
 * turns, round by round.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/bench/bench.h"

#define NM 4   /* methods compared */

struct submitter {
	pthread_t t;
	const struct runner *r;
	enum run_method m;
	pthread_barrier_t *start;
	const int64_t *end;
	long jobs;
	int failed;
};

static void *
submit_main(void *arg)
{
	struct submitter *s = arg;

	pthread_barrier_wait(s->start);
	while (bench_now() < *s->end) {
		if (run_true(s->r, s->m) != 0) {
			s->failed = 1;
			break;
		}
		s->jobs++;
	}
	return NULL;
}

/* One phase; jobs per second, or -1. */
static double
phase(const struct bench_opts *o, const struct runner *r, enum run_method m,
    int threads, long *jobs)
{
	struct submitter *s = calloc((size_t)threads, sizeof(*s));
	pthread_barrier_t start;
	int64_t end = INT64_MAX, t0;
	int i, made, failed = 0;

	if (s == NULL)
		return -1;
	pthread_barrier_init(&start, NULL, (unsigned)threads + 1);
	for (made = 0; made < threads; made++) {
		s[made].r = r;
		s[made].m = m;
		s[made].start = &start;
		s[made].end = &end;
		if (pthread_create(&s[made].t, NULL, submit_main, &s[made]) != 0)
			break;
	}
	if (made < threads) {
		/* The barrier cannot open: nothing was started, stop here. */
		fprintf(stderr, "bench: could not start %d threads\n", threads);
		exit(1);
	}
	end = bench_now() + (int64_t)(o->tp_seconds * 1e9);
	pthread_barrier_wait(&start);
	t0 = bench_now();
	*jobs = 0;
	for (i = 0; i < threads; i++) {
		pthread_join(s[i].t, NULL);
		*jobs += s[i].jobs;
		failed |= s[i].failed;
	}
	t0 = bench_now() - t0;
	pthread_barrier_destroy(&start);
	free(s);
	return failed || t0 <= 0 ? -1 : (double)*jobs * 1e9 / (double)t0;
}

int
bench_throughput(const struct bench_opts *o, struct runner *r)
{
	static const enum run_method ms[NM] = { RUN_CONFINE, RUN_SPAWN,
		RUN_FLOOR_VFORK, RUN_FLOOR_CONFINED };
	struct samples s[NM];
	struct summary sum[NM];
	long jobs[NM], n;
	double rate;
	size_t t;
	int round, k, m;

	stats_title("throughput of /bin/true, jobs per second (median of %d "
	    "rounds of %.1f s)", o->tp_rounds, o->tp_seconds);
	stats_line("%7s %18s %14s %14s %14s %7s %7s", "threads",
	    run_name(ms[0]), run_name(ms[1]), run_name(ms[2]), run_name(ms[3]),
	    "ratio", "floor");
	for (t = 0; t < o->tp_threads.n; t++) {
		memset(s, 0, sizeof(s));
		memset(jobs, 0, sizeof(jobs));
		for (round = 0; round < o->tp_rounds; round++)
			for (k = 0; k < NM; k++) {
				m = (round + k) % NM;
				rate = phase(o, r, ms[m], (int)o->tp_threads.v[t], &n);
				if (rate < 0) {
					fprintf(stderr, "bench: throughput with %ld "
					    "threads failed\n", o->tp_threads.v[t]);
					for (m = 0; m < NM; m++)
						stats_free(&s[m]);
					return -1;
				}
				jobs[m] += n;
				(void)stats_add(&s[m], rate);
			}
		for (m = 0; m < NM; m++) {
			stats_summary(&s[m], &sum[m]);
			stats_row("throughput", run_name(ms[m]), "", 0,
			    o->tp_threads.v[t], jobs[m], &sum[m], "jobs/s");
			stats_free(&s[m]);
		}
		/* ratio: confine's; floor: floor-confined's; over posix_spawn's. */
		stats_line("%7ld %18.0f %14.0f %14.0f %14.0f %6.2fx %6.2fx",
		    o->tp_threads.v[t], sum[0].p50, sum[1].p50, sum[2].p50,
		    sum[3].p50, sum[1].p50 > 0 ? sum[0].p50 / sum[1].p50 : 0,
		    sum[1].p50 > 0 ? sum[3].p50 / sum[1].p50 : 0);
	}
	return 0;
}
