/*
 * What the helper costs: its resident memory idle and with jobs in flight,
 * its shepherds' (one process per job, forked from it), and the CPU time
 * per job of the helper, its shepherds and the host's library, all read
 * from /proc and getrusage from outside.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "tools/bench/bench.h"

/*
 * Until the helper has no child left but those it had fresh (its guard,
 * on the direct path): shepherds or removers of earlier jobs still
 * exiting would land in the figures of the next ones.
 */
static void
quiesce(const struct runner *r)
{
	pid_t helper = confine_helper_pid(r->c);
	int i;

	for (i = 0; i < 500 && proc_children(helper, NULL, 0) > r->idle_kids;
	    i++)
		usleep(10 * 1000);
}

/*
 * The helper's children that have children of their own: its shepherds,
 * each over its job (a job started without one, the guard and a remover
 * have none while the jobs sleep). Fills out, up to max; how many.
 */
static size_t
shepherds(pid_t helper, pid_t *out, size_t max)
{
	size_t n = proc_children(helper, out, max), i, k = 0;

	for (i = 0; i < n && i < max; i++)
		if (proc_children(out[i], NULL, 0) > 0)
			out[k++] = out[i];
	return k;
}

static void
settle_all(struct confine_job **jobs, int n)
{
	struct confine_result res;
	int i;

	for (i = 0; i < n; i++)
		if (jobs[i] != NULL)
			(void)confine_cancel(jobs[i]);
	for (i = 0; i < n; i++)
		if (jobs[i] != NULL) {
			(void)confine_wait(jobs[i], -1, &res);
			confine_job_free(jobs[i]);
		}
}

/* The mean of one field over the shepherds, KiB. */
static double
mean_over(const pid_t *pids, size_t n, long (*get)(pid_t, const char *),
    const char *field)
{
	double sum = 0;
	size_t i, got = 0;
	long v;

	for (i = 0; i < n; i++)
		if ((v = get(pids[i], field)) >= 0) {
			sum += (double)v;
			got++;
		}
	return got ? sum / (double)got : -1;
}

static double
private_kib(const pid_t *pids, size_t n)
{
	double clean = mean_over(pids, n, proc_rollup_kib, "Private_Clean");
	double dirty = mean_over(pids, n, proc_rollup_kib, "Private_Dirty");

	return clean < 0 || dirty < 0 ? -1 : clean + dirty;
}

static long
alternate_idle(const struct bench_opts *o, enum confine_mode *mode)
{
	struct confine_options opt = { .helper_path = o->helper_path };
	struct confine *c;
	long kib;

	*mode = o->mode == CONFINE_MODE_EXEC ? CONFINE_MODE_FORK :
	    CONFINE_MODE_EXEC;
	opt.mode = *mode;
	if (run_open(&c, &opt, o->shepherd) != 0) {
		fprintf(stderr, "bench: a %s-mode helper for comparison: %s\n",
		    *mode == CONFINE_MODE_EXEC ? "exec" : "fork",
		    confine_error_message());
		return -1;
	}
	kib = proc_status_kib(confine_helper_pid(c), "VmRSS");
	confine_close(c);
	return kib;
}

int
bench_memory(const struct bench_opts *o, struct runner *r, long fresh_kib)
{
	static const char *const argv[] = { "sleep", "3600", NULL };
	pid_t helper = confine_helper_pid(r->c), *sheps;
	struct confine_job **jobs;
	enum confine_mode alt;
	long idle, busy, after, alt_kib, pte, fds_idle, fds_busy, procs_idle;
	long procs_busy;
	double per_job, procs;
	size_t nsheps = 0;
	int i, n = o->inflight, rc = 0;

	stats_title("helper memory, KiB (VmRSS of pid %ld), and the processes "
	    "below it", (long)helper);
	/* A few jobs first: what one job costs once, not per job in flight. */
	for (i = 0; i < 10 && rc == 0; i++)
		rc = run_true(r, RUN_CONFINE);
	quiesce(r);
	idle = proc_status_kib(helper, "VmRSS");
	fds_idle = proc_fd_count(helper);
	procs_idle = proc_descendants(helper);
	jobs = calloc((size_t)n, sizeof(*jobs));
	sheps = calloc((size_t)n + 16, sizeof(*sheps));
	if (rc != 0 || jobs == NULL || sheps == NULL || idle < 0 ||
	    fresh_kib < 0) {
		free(jobs);
		free(sheps);
		fprintf(stderr, "bench: cannot read the helper's memory\n");
		return -1;
	}
	for (i = 0; i < n && rc == 0; i++)
		rc = run_confine_spawn(r->c, r->scratch, "/bin/sleep", argv, 0,
		    &jobs[i]);
	busy = proc_status_kib(helper, "VmRSS");
	pte = proc_status_kib(helper, "VmPTE");
	fds_busy = proc_fd_count(helper);
	procs_busy = proc_descendants(helper);
	if (rc == 0)
		nsheps = shepherds(helper, sheps, (size_t)n + 16);
	per_job = n > 0 ? (double)(busy - idle) / n : 0;
	procs = n > 0 ? (double)(procs_busy - procs_idle) / n : 0;
	stats_value("memory", "helper", "idle-fresh", 0, 1, 0, (double)fresh_kib,
	    "KiB");
	stats_value("memory", "helper", "idle", 0, 1, 0, (double)idle, "KiB");
	stats_value("memory", "helper", "inflight", 0, 1, n, (double)busy, "KiB");
	stats_value("memory", "helper", "per-job", 0, 1, n, per_job, "KiB");
	stats_value("memory", "helper", "pagetables", 0, 1, n, (double)pte, "KiB");
	stats_value("memory", "helper", "fds-idle", 0, 1, 0, (double)fds_idle, "");
	stats_value("memory", "helper", "fds-inflight", 0, 1, n, (double)fds_busy,
	    "");
	stats_value("memory", "processes", "idle", 0, 1, 0, (double)procs_idle,
	    "");
	stats_value("memory", "processes", "inflight", 0, 1, n,
	    (double)procs_busy, "");
	stats_value("memory", "processes", "per-job", 0, 1, n, procs, "");
	stats_value("memory", "shepherd", "count", 0, 1, n, (double)nsheps, "");
	if (nsheps > 0) {
		stats_value("memory", "shepherd", "rss", 0, 1, n,
		    mean_over(sheps, nsheps, proc_status_kib, "VmRSS"), "KiB");
		stats_value("memory", "shepherd", "pss", 0, 1, n,
		    mean_over(sheps, nsheps, proc_rollup_kib, "Pss"), "KiB");
		stats_value("memory", "shepherd", "private", 0, 1, n,
		    private_kib(sheps, nsheps), "KiB");
		stats_value("memory", "shepherd", "pagetables", 0, 1, n,
		    mean_over(sheps, nsheps, proc_status_kib, "VmPTE"), "KiB");
	}
	settle_all(jobs, n);
	quiesce(r);  /* the shepherds go once released */
	after = proc_status_kib(helper, "VmRSS");
	stats_value("memory", "helper", "after", 0, 1, n, (double)after, "KiB");
	alt_kib = alternate_idle(o, &alt);
	if (alt_kib >= 0)
		stats_value("memory", alt == CONFINE_MODE_EXEC ?
		    "helper-exec-mode" : "helper-fork-mode", "idle-fresh", 0, 1, 0,
		    (double)alt_kib, "KiB");

	stats_line("helper idle, fresh                   %8ld", fresh_kib);
	stats_line("helper idle, after its first jobs     %8ld", idle);
	stats_line("helper with %5d jobs in flight      %8ld  (+%.2f KiB a job)",
	    n, busy, per_job);
	stats_line("helper page tables then              %8ld", pte);
	stats_line("helper descriptors idle, then        %4ld, %ld (each job's "
	    "process, or its shepherd, starts with them all)", fds_idle,
	    fds_busy);
	stats_line("processes below the helper idle, then %3ld, %ld: %.2f a job "
	    "in flight", procs_idle, procs_busy, procs);
	stats_line("helper once they settled             %8ld", after);
	if (alt_kib >= 0)
		stats_line("a fresh %s-mode helper, idle         %8ld",
		    alt == CONFINE_MODE_EXEC ? "exec" : "fork", alt_kib);
	if (nsheps > 0)
		stats_line("shepherds found: %zu; each, mean: RSS %.0f, PSS %.0f, "
		    "private %.0f, page tables %.0f", nsheps,
		    stats_find("memory", "shepherd", "rss", -1, -1, -1)->s.p50,
		    stats_find("memory", "shepherd", "pss", -1, -1, -1)->s.p50,
		    stats_find("memory", "shepherd", "private", -1, -1, -1)->s.p50,
		    stats_find("memory", "shepherd", "pagetables", -1, -1,
		    -1)->s.p50);
	else
		stats_line("shepherds found: none");
	free(jobs);
	free(sheps);
	return rc;
}

static int64_t
ru_us(int who)
{
	struct rusage ru;

	if (getrusage(who, &ru) != 0)
		return 0;
	return (int64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000 +
	    ru.ru_utime.tv_usec + ru.ru_stime.tv_usec;
}

int
bench_cpu(const struct bench_opts *o, struct runner *r)
{
	static const char *const argv[] = { "true", NULL };
	pid_t helper = confine_helper_pid(r->c);
	int64_t a[4], b[4], on0, on1, self0, self1, kids0, kids1, jobs_us = 0;
	int64_t sys0, sys1;
	struct confine_result res;
	struct confine_job *job;
	int i, n = o->cpu_jobs;
	double k, helper_self, helper_kids, own, host, sp_self, sp_kids, sys_c;
	double sys_s, all_c, all_s;

	if (n <= 0)
		return 0;
	stats_title("CPU time per job of /bin/true, microseconds (%d jobs, one "
	    "after another)", n);
	quiesce(r);
	if (proc_cpu_us(helper, a) != 0 || (on0 = proc_oncpu_ns(helper)) < 0) {
		fprintf(stderr, "bench: cannot read the helper's CPU time\n");
		return -1;
	}
	self0 = ru_us(RUSAGE_SELF);
	sys0 = proc_busy_us();
	for (i = 0; i < n; i++) {
		if (run_confine_spawn(r->c, r->scratch, "/bin/true", argv, 0,
		    &job) != 0)
			return -1;
		if (confine_wait(job, -1, &res) != 0 ||
		    res.outcome != CONFINE_COMPLETED) {
			confine_job_free(job);
			fprintf(stderr, "bench: a CPU-time job did not complete\n");
			return -1;
		}
		jobs_us += res.user_us + res.sys_us;
		confine_job_free(job);
	}
	self1 = ru_us(RUSAGE_SELF);
	quiesce(r);  /* the last shepherds reaped: in cutime */
	sys1 = proc_busy_us();
	on1 = proc_oncpu_ns(helper);
	if (proc_cpu_us(helper, b) != 0)
		return -1;
	k = (double)n;
	helper_self = (double)(on1 - on0) / 1000.0 / k;
	helper_kids = (double)(b[2] + b[3] - a[2] - a[3]) / k;
	own = (double)jobs_us / k;
	host = (double)(self1 - self0) / k;

	/* The same from the host with posix_spawn, for scale. */
	/* Busy time of the whole machine, kernel threads too (and others'). */
	sys_c = (double)(sys1 - sys0) / k;
	self0 = ru_us(RUSAGE_SELF);
	kids0 = ru_us(RUSAGE_CHILDREN);
	sys0 = proc_busy_us();
	for (i = 0; i < n; i++)
		if (run_true(r, RUN_SPAWN) != 0)
			return -1;
	self1 = ru_us(RUSAGE_SELF);
	kids1 = ru_us(RUSAGE_CHILDREN);
	usleep(200 * 1000);
	sys1 = proc_busy_us();
	sys_s = (double)(sys1 - sys0) / k;
	sp_self = (double)(self1 - self0) / k;
	sp_kids = (double)(kids1 - kids0) / k;

	stats_value("cpu", "helper", "self", 0, 1, n, helper_self, "us/job");
	stats_value("cpu", "helper", "children", 0, 1, n, helper_kids, "us/job");
	stats_value("cpu", "job", "own", 0, 1, n, own, "us/job");
	stats_value("cpu", "shepherd", "estimate", 0, 1, n, helper_kids - own,
	    "us/job");
	stats_value("cpu", "confine-host", "self", 0, 1, n, host, "us/job");
	stats_value("cpu", "posix_spawn-host", "self", 0, 1, n, sp_self,
	    "us/job");
	stats_value("cpu", "posix_spawn-child", "own", 0, 1, n, sp_kids,
	    "us/job");
	stats_value("cpu", "confine-machine", "busy", 0, 1, n, sys_c, "us/job");
	stats_value("cpu", "posix_spawn-machine", "busy", 0, 1, n, sys_s,
	    "us/job");
	/* What a job costs in all, each way: issue 14's target compares them. */
	all_c = stats_value("cpu", "confine", "in-all", 0, 1, n,
	    helper_self + helper_kids + host, "us/job")->s.p50;
	all_s = stats_value("cpu", "posix_spawn", "in-all", 0, 1, n,
	    sp_self + sp_kids, "us/job")->s.p50;
	stats_line("helper itself (schedstat)                 %8.1f", helper_self);
	stats_line("helper's children: jobs (and shepherds)   %8.1f  "
	    "(clock ticks: +-%.0f)", helper_kids, 1e6 / (double)sysconf(_SC_CLK_TCK) / k);
	stats_line("  of which the jobs' own (result rusage)  %8.1f", own);
	stats_line("  so the shepherds and removers, about    %8.1f", helper_kids - own);
	stats_line("host: the client library                  %8.1f", host);
	stats_line("posix_spawn: host %.1f, the child %.1f", sp_self, sp_kids);
	stats_line("confine in all %.1f, posix_spawn in all %.1f", all_c, all_s);
	stats_line("the whole machine busy (/proc/stat, kernel threads and "
	    "any other load too): confine %.1f, posix_spawn %.1f", sys_c, sys_s);
	return 0;
}
