/*
 * Latency of start + settle of /bin/true, every method side by side in the
 * same host: for each host size and thread count, the methods take turns
 * one repetition at a time, so that noise from the rest of the machine
 * falls on all of them alike. With --pause-ms, each job starts after
 * that long at rest: one job's latency, not what the one before it left
 * the machine to do (a helper's next prepared init, a namespace's
 * teardown), which back to back (the default) it pays as well.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "tools/bench/bench.h"

#define WARMUP 2

static bool
enabled(const struct bench_opts *o, enum run_method m, const struct runner *r,
    long host_mib, long threads)
{
	if (!(o->methods & (1u << m)))
		return false;
	if (m == RUN_CONFINE_LATE)
		return r->late != NULL && host_mib > 0 && threads == 1;
	if (m == RUN_CONFINE_SHEP)
		return r->shep != NULL;
	if (m == RUN_CONFINE_UNPREP)
		return r->unprep != NULL;
	return true;
}

/* The methods whose phases are shown: confine's, through any helper. */
static bool
phased(enum run_method m)
{
	return m == RUN_CONFINE || m == RUN_CONFINE_NONE ||
	    m == RUN_CONFINE_SHEP || m == RUN_CONFINE_UNPREP;
}

static int
reps_for(const struct bench_opts *o, enum run_method m, long host_mib)
{
	/* These fork the whole host: hundreds of ms per repetition at 8 GiB. */
	if ((m == RUN_FORK || m == RUN_CONFINE_LATE) && host_mib > 0)
		return o->fork_reps < o->reps ? o->fork_reps : o->reps;
	return o->reps;
}

/* One job, timed: after --pause-ms at rest, where there is one. */
static int
timed(const struct bench_opts *o, struct runner *r, enum run_method m,
    struct samples *s, struct samples ph[3])
{
	struct run_phases p;
	int64_t t0;
	int rc;

	if (o->pause_ms > 0)
		usleep((useconds_t)o->pause_ms * 1000);
	t0 = bench_now();

	rc = run_true_phases(r, m, ph ? &p : NULL);
	if (rc == 0)
		rc = stats_add(s, (double)(bench_now() - t0) / 1000.0);
	if (rc == 0 && ph != NULL) {
		(void)stats_add(&ph[0], p.spawn_us);
		(void)stats_add(&ph[1], p.settle_us);
		(void)stats_add(&ph[2], p.wall_us);
	}
	return rc;
}

static const char *const phase_names[3] = { "spawn", "settle", "job-wall" };

/* Where the confine jobs' time went: one line per method. */
static void
phases(enum run_method m, long host_mib, long threads, struct samples ph[3])
{
	struct summary sum[3];
	int i;

	for (i = 0; i < 3; i++) {
		stats_summary(&ph[i], &sum[i]);
		stats_row("phase", run_name(m), phase_names[i], host_mib, threads,
		    1, &sum[i], "us");
		stats_free(&ph[i]);
	}
	stats_line("  %-16s p50: confine_spawn %.0f + confine_wait %.0f "
	    "(the job's own fork..exit: %.0f)", run_name(m), sum[0].p50,
	    sum[1].p50, sum[2].p50);
}

static int
cell(const struct bench_opts *o, struct runner *r, long host_mib, long threads)
{
	struct samples s[RUN_NMETHODS], ph[RUN_NMETHODS][3];
	struct summary sum[RUN_NMETHODS];
	int reps[RUN_NMETHODS], max = 0, i, k, rc = 0;
	enum run_method m;
	double base;

	memset(s, 0, sizeof(s));
	memset(ph, 0, sizeof(ph));
	for (m = 0; m < RUN_NMETHODS; m++) {
		reps[m] = enabled(o, m, r, host_mib, threads) ?
		    reps_for(o, m, host_mib) : 0;
		if (reps[m] > max && m != RUN_CONFINE_LATE)
			max = reps[m];
		for (i = 0; i < (reps[m] ? WARMUP : 0) && rc == 0; i++)
			rc = run_true(r, m);
	}
	/* Each repetition starts with the next method: no fixed neighbours. */
	for (i = 0; i < max && rc == 0; i++)
		for (k = 0; k < RUN_NMETHODS && rc == 0; k++) {
			m = (enum run_method)((i + k) % RUN_NMETHODS);
			if (i >= reps[m] || m == RUN_CONFINE_LATE)
				continue;
			rc = timed(o, r, m, &s[m], phased(m) ? ph[m] : NULL);
		}
	/*
	 * Apart: each of its shepherds is a copy of the whole host, and
	 * tearing one down after its job settled would land on whatever
	 * method ran next.
	 */
	for (i = 0; i < reps[RUN_CONFINE_LATE] && rc == 0; i++)
		rc = timed(o, r, RUN_CONFINE_LATE, &s[RUN_CONFINE_LATE], NULL);
	if (rc != 0) {
		fprintf(stderr, "bench: latency from a %ld MiB host with %ld "
		    "threads failed\n", host_mib, threads);
		for (m = 0; m < RUN_NMETHODS; m++) {
			stats_free(&s[m]);
			for (i = 0; i < 3; i++)
				stats_free(&ph[m][i]);
		}
		return -1;
	}
	for (m = 0; m < RUN_NMETHODS; m++)
		stats_summary(&s[m], &sum[m]);
	base = reps[RUN_SPAWN] ? sum[RUN_SPAWN].p50 : 0;
	for (m = 0; m < RUN_NMETHODS; m++) {
		if (reps[m] == 0)
			continue;
		stats_row("latency", run_name(m), "", host_mib, threads, 1, &sum[m],
		    "us");
		stats_line("%-18s %6ld MiB %3ld thr %5zu %10.1f %10.1f %10.1f "
		    "%8.2fx", run_name(m), host_mib, threads, sum[m].n,
		    sum[m].p50, sum[m].p90, sum[m].p99,
		    base > 0 ? sum[m].p50 / base : 0);
		stats_free(&s[m]);
	}
	for (m = 0; m < RUN_NMETHODS; m++)
		if (reps[m] && phased(m))
			phases(m, host_mib, threads, ph[m]);
	return 0;
}

int
bench_latency(const struct bench_opts *o, struct runner *r)
{
	struct confine_options late = { .mode = CONFINE_MODE_FORK };
	size_t h, t;
	int64_t t0;
	int rc = 0;

	stats_title("latency of start + settle of /bin/true, microseconds "
	    "(ratio: p50 over posix_spawn's p50 in the same host)");
	/* Which it is, in the TSV too: back to back (0), or at rest. */
	stats_value("run", "pause-ms", "latency", 0, 0, 0, o->pause_ms, "ms");
	if (o->pause_ms > 0)
		stats_line("each job after %d ms at rest (--pause-ms)",
		    o->pause_ms);
	else
		stats_line("jobs back to back (--pause-ms 0)");
	stats_line("%-18s %10s %7s %5s %10s %10s %10s %9s", "method", "host",
	    "threads", "n", "p50", "p90", "p99", "ratio");
	for (h = 0; h < o->hosts_mib.n && rc == 0; h++) {
		t0 = bench_now();
		if ((rc = run_host_grow((size_t)o->hosts_mib.v[h])) != 0)
			break;
		if (o->hosts_mib.v[h] > 0)
			fprintf(stderr, "bench: host grown to %ld MiB (VmRSS %ld "
			    "MiB) in %.1f s\n", o->hosts_mib.v[h],
			    proc_status_kib(getpid(), "VmRSS") / 1024,
			    (double)(bench_now() - t0) / 1e9);
		for (t = 0; t < o->host_threads.n && rc == 0; t++) {
			/*
			 * A fork-mode helper opened now, from the grown host: it
			 * was a copy of it, whose every shepherd paid what fork
			 * of the host does; today it is the carried helper,
			 * exec'd, and must cost what one opened early costs.
			 * Only while the host has one thread (fork mode's rule).
			 */
			r->late = NULL;
			if (o->hosts_mib.v[h] > 0 && o->host_threads.v[t] == 1 &&
			    run_open(&r->late, &late, o->shepherd) != 0) {
				fprintf(stderr, "bench: late helper: %s\n",
				    confine_error_message());
				r->late = NULL;
			}
			if (r->late != NULL)
				rc = run_path(r, r->late,
				    run_name(RUN_CONFINE_LATE), o->shepherd, NULL);
			if (rc == 0)
				rc = run_park((int)o->host_threads.v[t]);
			if (rc == 0)
				rc = cell(o, r, o->hosts_mib.v[h],
				    o->host_threads.v[t]);
			run_unpark();
			if (r->late != NULL)
				confine_close(r->late);
			r->late = NULL;
		}
	}
	run_host_release();
	return rc;
}
