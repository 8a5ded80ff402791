/*
 * confine's benchmark: start + settle latency against fork, posix_spawn
 * and bubblewrap from small and large hosts, throughput from many threads,
 * deadline precision, the helper's memory and CPU time, and issue 14's
 * targets, met or missed. Through the public API only.
 *
 *   bazel run //tools/bench -- [--quick | --smoke] [--out FILE] [--plot DIR]
 *
 * The tables go to stdout, every figure to a TSV (--out) that
 * tools/bench/plot turns into PNGs.
 */
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tools/bench/bench.h"

#define DEFAULT_OUT "/tmp/confine-bench.tsv"

static void
usage(void)
{
	fprintf(stderr,
"usage: bench [--quick | --smoke] [options]\n"
"  --hosts MIB,...        host sizes for latency (full: 0,1024,8192)\n"
"  --host-threads N,...   threads in the host (1,64)\n"
"  --reps N               latency repetitions per method (1000)\n"
"  --fork-reps N          the same for fork from a host above 0 MiB (40)\n"
"  --pause-ms MS          latency: at rest this long before each job (0)\n"
"  --tp-threads N,...     throughput submitting threads (1,2,16,64)\n"
"  --tp-seconds S         one throughput phase (1.5)\n"
"  --tp-rounds N          phases per method and thread count (3)\n"
"  --deadline-jobs N,...  concurrent deadline jobs (1,100,1000)\n"
"  --deadline-reps N      the 1-job case's repetitions (100)\n"
"  --deadline-ms MS       the 1-job case's deadline (20)\n"
"  --window-ms MS         deadlines spread over this (1000)\n"
"  --no-burst             skip every deadline firing at one instant\n"
"  --inflight N           jobs in flight for the memory figures (1000)\n"
"  --cpu-jobs N           jobs for the CPU time per job (1000)\n"
"  --sections LIST        latency,throughput,deadline,memory,cpu (all)\n"
"  --methods LIST         latency: fork+exec,posix_spawn,confine-landlock,\n"
"                         confine-none,bwrap,floor-server,floor-shepherd,\n"
"                         floor-vfork,floor-confined,floor-view,\n"
"                         confine-read,confine-late-fork,\n"
"                         confine-shepherd,floor-ns,\n"
"                         confine-unprepared,floor-tmp,\n"
"                         floor-prepared (all)\n"
"  --helper-mode MODE     auto (the carried helper), fork (the same)\n"
"                         or exec (the helper binary) (auto)\n"
"  --shepherd             the helper on the shepherd path, as without a\n"
"                         writable cgroup v2 (CONFINE_SHEPHERD=1, read only\n"
"                         by a build with --config=testing); else on the\n"
"                         direct path where there is one\n"
"  --helper PATH          the helper binary for exec mode (runfiles)\n"
"  --bwrap PATH           bubblewrap (/usr/bin/bwrap)\n"
"  --out FILE             the TSV (" DEFAULT_OUT ")\n"
"  --plot DIR             then draw the PNGs into DIR with tools/bench/plot\n");
	exit(2);
}

static long
number(const char *s, long min, long max, const char *what)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || v < min || v > max) {
		fprintf(stderr, "bench: %s: %s is not a number in %ld..%ld\n",
		    what, s, min, max);
		exit(2);
	}
	return v;
}

static double
seconds(const char *s, const char *what)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno != 0 || end == s || *end != '\0' || !(v > 0 && v <= 600)) {
		fprintf(stderr, "bench: %s: %s is not seconds in (0, 600]\n",
		    what, s);
		exit(2);
	}
	return v;
}

static void
list(struct bench_list *l, const char *s, long min, long max, const char *what)
{
	char buf[256], *p = buf, *tok;

	snprintf(buf, sizeof(buf), "%s", s);
	l->n = 0;
	while ((tok = strsep(&p, ",")) != NULL) {
		if (l->n == BENCH_MAX_LIST) {
			fprintf(stderr, "bench: %s: at most %d values\n", what,
			    BENCH_MAX_LIST);
			exit(2);
		}
		l->v[l->n++] = number(tok, min, max, what);
	}
}

/* The presets: --smoke for the test suite, --quick, and the full run. */
struct preset {
	const char *name;
	const char *hosts, *host_threads, *tp_threads, *dl_jobs;
	int reps, fork_reps, tp_rounds, dl_single_reps, dl_window_ms;
	int inflight, cpu_jobs;
	double tp_seconds;
};

static const struct preset presets[] = {
	{ "full", "0,1024,8192", "1,64", "1,2,16,64", "1,100,1000",
	  1000, 40, 3, 100, 1000, 1000, 1000, 1.5 },
	{ "quick", "0,1024,8192", "1,64", "1,2,16,64", "1,100,1000",
	  40, 4, 1, 10, 500, 1000, 200, 0.4 },
	/* Seconds, for the test suite: every section, tiny. */
	{ "smoke", "0", "1", "1,2", "1,4",
	  3, 2, 1, 2, 40, 4, 10, 0.1 },
};

static void
preset(struct bench_opts *o, const char *name)
{
	const struct preset *p = presets;

	while (strcmp(p->name, name) != 0)
		p++;
	o->preset = p->name;
	list(&o->hosts_mib, p->hosts, 0, LONG_MAX, "preset");
	list(&o->host_threads, p->host_threads, 0, LONG_MAX, "preset");
	list(&o->tp_threads, p->tp_threads, 0, LONG_MAX, "preset");
	list(&o->dl_jobs, p->dl_jobs, 0, LONG_MAX, "preset");
	o->reps = p->reps;
	o->fork_reps = p->fork_reps;
	o->tp_seconds = p->tp_seconds;
	o->tp_rounds = p->tp_rounds;
	o->dl_single_reps = p->dl_single_reps;
	o->dl_single_ms = 20;
	o->dl_window_ms = p->dl_window_ms;
	o->dl_burst = true;
	o->inflight = p->inflight;
	o->cpu_jobs = p->cpu_jobs;
}

/* A comma-separated list of names as a bit per name. */
static unsigned
bits(const char *s, const char *const *names, int n, const char *what)
{
	char buf[256], *p = buf, *tok;
	unsigned out = 0;
	int i;

	snprintf(buf, sizeof(buf), "%s", s);
	while ((tok = strsep(&p, ",")) != NULL) {
		for (i = 0; i < n && strcmp(tok, names[i]) != 0; i++)
			;
		if (i == n) {
			fprintf(stderr, "bench: unknown %s %s\n", what, tok);
			exit(2);
		}
		out |= 1u << i;
	}
	return out;
}

static unsigned
methods(const char *s)
{
	const char *names[RUN_NMETHODS];
	int m;

	for (m = 0; m < RUN_NMETHODS; m++)
		names[m] = run_name((enum run_method)m);
	return bits(s, names, RUN_NMETHODS, "method");
}

static unsigned
sections(const char *s)
{
	static const char *const names[] = { "latency", "throughput",
		"deadline", "memory", "cpu" };

	return bits(s, names, 5, "section");
}

/* `bazel run` starts us in the runfiles: paths given are the caller's. */
static char *
callers_path(const char *path)
{
	const char *wd = getenv("BUILD_WORKING_DIRECTORY");
	char *out;

	if (path[0] == '/' || wd == NULL || *wd == '\0')
		return strdup(path);
	if (asprintf(&out, "%s/%s", wd, path) < 0)
		return NULL;
	return out;
}

/* A file of this workspace, under `bazel run`, `bazel test` or by hand. */
static char *
runfile(const char *argv0, const char *rel)
{
	const char *dirs[3] = { getenv("RUNFILES_DIR"), getenv("TEST_SRCDIR"),
		NULL };
	char buf[PATH_MAX];
	int i;

	for (i = 0; i < 2; i++) {
		if (dirs[i] == NULL)
			continue;
		snprintf(buf, sizeof(buf), "%s/confine/%s", dirs[i], rel);
		if (access(buf, R_OK) == 0)
			return realpath(buf, NULL);
	}
	snprintf(buf, sizeof(buf), "%s.runfiles/confine/%s", argv0, rel);
	if (access(buf, R_OK) == 0)
		return realpath(buf, NULL);
	if (access(rel, R_OK) == 0)
		return realpath(rel, NULL);
	return NULL;
}

/* The options that take a number, a list of numbers, or a string. */
struct num_opt {
	const char *name;
	size_t off;
	long min, max;
};

#define NUM(name, field, min, max) { name, offsetof(struct bench_opts, field), min, max }

static const struct num_opt ints[] = {
	NUM("reps", reps, 1, 1000000),
	NUM("fork-reps", fork_reps, 1, 1000000),
	NUM("pause-ms", pause_ms, 0, 10000),
	NUM("tp-rounds", tp_rounds, 1, 1000),
	NUM("deadline-reps", dl_single_reps, 1, 100000),
	NUM("deadline-ms", dl_single_ms, 1, 60000),
	NUM("window-ms", dl_window_ms, 0, 600000),
	NUM("inflight", inflight, 0, 4000),
	NUM("cpu-jobs", cpu_jobs, 0, 1000000),
};

static const struct num_opt lists[] = {
	NUM("hosts", hosts_mib, 0, 16384),
	NUM("host-threads", host_threads, 1, 1024),
	NUM("tp-threads", tp_threads, 1, 1024),
	NUM("deadline-jobs", dl_jobs, 1, 4000),
};

static const struct num_opt strings[] = {
	NUM("helper", helper_path, 0, 0),
	NUM("bwrap", bwrap, 0, 0),
	NUM("out", out, 0, 0),
	NUM("plot", plot_dir, 0, 0),
};

#define NOPTS(a) (sizeof(a) / sizeof((a)[0]))

static const struct num_opt *
lookup(const struct num_opt *t, size_t n, const char *name)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (strcmp(t[i].name, name) == 0)
			return &t[i];
	return NULL;
}

static enum confine_mode
mode(const char *s)
{
	if (strcmp(s, "auto") == 0)
		return CONFINE_MODE_AUTO;
	if (strcmp(s, "fork") == 0)
		return CONFINE_MODE_FORK;
	if (strcmp(s, "exec") == 0)
		return CONFINE_MODE_EXEC;
	usage();
	return CONFINE_MODE_AUTO;
}

/* --name VALUE or --name=VALUE; the preset first, the rest override it. */
static void
parse(struct bench_opts *o, int argc, char **argv)
{
	const struct num_opt *t;
	char name[64], *eq, *arg, *base = (char *)o;
	int i;

	preset(o, "full");
	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--quick") == 0)
			preset(o, "quick");
		else if (strcmp(argv[i], "--smoke") == 0)
			preset(o, "smoke");
	}
	o->sections = SEC_ALL;
	o->methods = (1u << RUN_NMETHODS) - 1;
	o->mode = CONFINE_MODE_AUTO;
	o->bwrap = "/usr/bin/bwrap";
	o->out = DEFAULT_OUT;
	for (i = 1; i < argc; i++) {
		if (strncmp(argv[i], "--", 2) != 0 || strlen(argv[i]) >= sizeof(name))
			usage();
		snprintf(name, sizeof(name), "%s", argv[i] + 2);
		if (strcmp(name, "quick") == 0 || strcmp(name, "smoke") == 0)
			continue;
		if (strcmp(name, "no-burst") == 0) {
			o->dl_burst = false;
			continue;
		}
		if (strcmp(name, "shepherd") == 0) {
			o->shepherd = true;
			continue;
		}
		if ((eq = strchr(name, '=')) != NULL) {
			*eq = '\0';
			arg = strchr(argv[i], '=') + 1;
		} else if (i + 1 < argc) {
			arg = argv[++i];
		} else {
			usage();
		}
		if ((t = lookup(ints, NOPTS(ints), name)) != NULL)
			*(int *)(void *)(base + t->off) = (int)number(arg, t->min,
			    t->max, argv[i]);
		else if ((t = lookup(lists, NOPTS(lists), name)) != NULL)
			list((struct bench_list *)(void *)(base + t->off), arg,
			    t->min, t->max, name);
		else if ((t = lookup(strings, NOPTS(strings), name)) != NULL)
			*(const char **)(void *)(base + t->off) = arg;
		else if (strcmp(name, "tp-seconds") == 0)
			o->tp_seconds = seconds(arg, name);
		else if (strcmp(name, "sections") == 0)
			o->sections = sections(arg);
		else if (strcmp(name, "methods") == 0)
			o->methods = methods(arg);
		else if (strcmp(name, "helper-mode") == 0)
			o->mode = mode(arg);
		else
			usage();
	}
}

/* ---- the targets of issue 14, and issue 5's for the helper's memory ---- */

static int missed;

static void
target(const char *name, const char *how, double value, double limit,
    bool at_most, bool known)
{
	const char *verdict = !known ? "n/a" :
	    (at_most ? value <= limit : value >= limit) ? "met" : "MISSED";

	if (known && strcmp(verdict, "MISSED") == 0)
		missed++;
	stats_value("target", name, known ? (verdict[0] == 'M' ? "missed" :
	    "met") : "n/a", 0, 0, 0, known ? value : 0, "");
	if (known)
		stats_line("%-6s %-66s %9.2f %s %g", verdict, how, value,
		    at_most ? "<=" : ">=", limit);
	else
		stats_line("%-6s %-66s (not measured in this run)", verdict, how);
}

static double
p50(const char *section, const char *method, const char *variant, long host,
    long threads, long jobs)
{
	const struct row *r = stats_find(section, method, variant, host,
	    threads, jobs);

	return r != NULL && r->s.n > 0 ? r->s.p50 : -1;
}

static long
list_max(const struct bench_list *l)
{
	long m = -1;
	size_t i;

	for (i = 0; i < l->n; i++)
		if (l->v[i] > m)
			m = l->v[i];
	return m;
}

/* A ratio of two figures, as target() wants it: known when both are. */
static void
ratio(const char *name, const char *how, double a, double b, double limit,
    bool at_most)
{
	target(name, how, b > 0 ? a / b : 0, limit, at_most, a > 0 && b > 0);
}

/* Lateness p99 of n deadlines (one instant, or spread), ms; -1 for none. */
static double
lateness(const char *variant, long n)
{
	const struct row *r = stats_find("deadline", "host-observed", variant,
	    -1, -1, n);

	return r != NULL && r->s.n > 0 ? r->s.p99 / 1000 : -1;
}

static void
targets(const struct bench_opts *o)
{
	long big = list_max(&o->hosts_mib), t;
	double c, s, worst = -1, v;
	size_t h, k;
	char how[96];
	const struct row *r;

	stats_title("issue 14 targets (and issue 5's for the helper's memory)");
	/* Every cell's ratio must hold; the worst one is the figure. */
	for (h = 0; h < o->hosts_mib.n; h++)
		for (k = 0; k < o->host_threads.n; k++) {
			t = o->host_threads.v[k];
			c = p50("latency", run_name(RUN_CONFINE), NULL,
			    o->hosts_mib.v[h], t, -1);
			s = p50("latency", run_name(RUN_SPAWN), NULL,
			    o->hosts_mib.v[h], t, -1);
			if (c > 0 && s > 0 && c / s > worst)
				worst = c / s;
		}
	target("latency-vs-posix_spawn", "confine-landlock p50 / posix_spawn "
	    "p50, worst host and thread count", worst, 1.25, true, worst > 0);
	ratio("throughput-16", "throughput at 16 threads, confine / posix_spawn",
	    p50("throughput", run_name(RUN_CONFINE), NULL, 0, 16, -1),
	    p50("throughput", run_name(RUN_SPAWN), NULL, 0, 16, -1), 0.85, false);
	if (big > 0)
		snprintf(how, sizeof(how), "late-fork p50 at %ld MiB / "
		    "confine-landlock p50 at 0 MiB, 1 thread", big);
	else
		snprintf(how, sizeof(how), "late-fork p50 at the largest host / "
		    "confine-landlock at 0 MiB");
	ratio("late-fork-big-host", how, big > 0 ? p50("latency",
	    run_name(RUN_CONFINE_LATE), NULL, big, 1, -1) : -1,
	    p50("latency", run_name(RUN_CONFINE), NULL, 0, 1, -1), 1.1, true);
	v = lateness("burst", 1000);
	target("deadline-burst-1000", "1,000 deadlines at one instant: "
	    "Cancelled lateness p99, ms", v, 50, true, v >= 0);
	/* Over 1 s, as the target says: another window is another case. */
	v = o->dl_window_ms == 1000 ? lateness("spread", 1000) : -1;
	target("deadline-spread-1000", "1,000 deadlines spread over 1 s: "
	    "Cancelled lateness p99, ms", v, 2, true, v >= 0);
	ratio("cpu-per-job", "CPU per job, confine in all / posix_spawn in all",
	    p50("cpu", "confine", "in-all", -1, -1, -1),
	    p50("cpu", "posix_spawn", "in-all", -1, -1, -1), 1.3, true);
	r = stats_find("memory", "processes", "per-job", -1, -1, -1);
	target("processes-per-job", "processes per job in flight (below the "
	    "helper)", r != NULL ? r->s.p50 : 0, 1, true, r != NULL && r->jobs > 0);
	v = p50("memory", "helper", "idle-fresh", -1, -1, -1);
	target("helper-rss-idle", "helper VmRSS idle, MiB", v / 1024, 4, true,
	    v > 0);
	r = stats_find("memory", "helper", "per-job", -1, -1, -1);
	target("helper-rss-per-job", "helper VmRSS more per job in flight, KiB",
	    r != NULL ? r->s.p50 : 0, 4, true, r != NULL && r->jobs > 0);

	/* The same figures against issue 35's targets, its isolation in force. */
	stats_title("issue 35 targets (confine-run from cold: //tools/bench:cli)");
	target("35-latency-vs-posix_spawn", "confine-landlock p50 / posix_spawn "
	    "p50, worst host and thread count", worst, 1.1, true, worst > 0);
	ratio("35-throughput-16", "throughput at 16 threads, confine / "
	    "posix_spawn", p50("throughput", run_name(RUN_CONFINE), NULL, 0,
	    16, -1), p50("throughput", run_name(RUN_SPAWN), NULL, 0, 16, -1),
	    0.5, false);
	v = lateness("burst", 1000);
	target("35-deadline-burst-1000", "1,000 deadlines at one instant: "
	    "Cancelled lateness p99, ms", v, 50, true, v >= 0);
	v = p50("cpu", "confine", "in-all", -1, -1, -1);
	if (v > 0)
		stats_line("%-6s %-66s %9.1f", "said", "CPU per job, confine in "
		    "all, us (posix_spawn in all: the section above)", v);
	else
		stats_line("%-6s %-66s (not measured in this run)", "n/a",
		    "CPU per job, confine in all, us");
}

static void
machine(void)
{
	struct utsname u;
	char line[256], model[256] = "?";
	long mem;
	FILE *f;

	if ((f = fopen("/proc/cpuinfo", "re")) != NULL) {
		while (fgets(line, sizeof(line), f) != NULL)
			if (strncmp(line, "model name", 10) == 0) {
				snprintf(model, sizeof(model), "%s",
				    strchr(line, ':') ? strchr(line, ':') + 2 : line);
				model[strcspn(model, "\n")] = '\0';
				break;
			}
		fclose(f);
	}
	mem = (long)((long long)sysconf(_SC_PHYS_PAGES) *
	    sysconf(_SC_PAGESIZE) / MIB);
	uname(&u);
	stats_line("machine: %s, %ld CPUs, %ld MiB RAM, %s %s", model,
	    sysconf(_SC_NPROCESSORS_ONLN), mem, u.sysname, u.release);
	if ((f = fopen("/proc/loadavg", "re")) != NULL) {
		if (fgets(line, sizeof(line), f) != NULL)
			stats_line("load average at start: %.*s",
			    (int)strcspn(line, "\n"), line);
		fclose(f);
	}
}

/*
 * Where the helper makes each job's private tmp (its TMPDIR, else /tmp),
 * as the probe's showed, and how that is mounted: a mkdir and rmdir per
 * job there are part of every confine figure.
 */
static void
tmp_mount(const struct run_probe *p)
{
	const char *dir = getenv("TMPDIR");
	char buf[sizeof(p->tmp)];
	struct proc_mount m;

	if (p->tmp[0] == '/') {
		snprintf(buf, sizeof(buf), "%s", p->tmp);
		dir = dirname(buf);
	} else if (dir == NULL || dir[0] != '/') {
		dir = "/tmp";
	}
	if (proc_mount(dir, NULL, &m) != 0) {
		stats_line("jobs' tmp: in %s, its mount not found", dir);
		return;
	}
	stats_line("jobs' tmp: in %s, mounted at %s: %s, options %s, super "
	    "options %s", dir, m.point, m.type, m.opts, m.super);
	if (strstr(m.opts, "discard") != NULL || strstr(m.super, "discard") != NULL)
		stats_line("      mounted with discard: each job's tmp made and "
		    "removed costs more here than on tmpfs");
}

/* One bwrap run before anything is timed: missing or broken says so. */
static int
check_bwrap(const struct runner *r)
{
	struct stat st;

	if (stat(r->bwrap, &st) != 0 || !(st.st_mode & S_IXUSR)) {
		fprintf(stderr, "bench: bubblewrap is required and %s is not there "
		    "(run tools/setup, which installs the bubblewrap package, or "
		    "give --bwrap PATH)\n", r->bwrap);
		return -1;
	}
	if (run_true(r, RUN_BWRAP) != 0) {
		fprintf(stderr, "bench: %s cannot run /bin/true here: see above\n",
		    r->bwrap);
		return -1;
	}
	return 0;
}

static int
plot(const char *argv0, const char *tsv, const char *dir)
{
	char *script = runfile(argv0, "tools/bench/plot"), *cmd;
	int rc;

	if (script == NULL) {
		fprintf(stderr, "bench: tools/bench/plot not found\n");
		return -1;
	}
	if (asprintf(&cmd, "sh '%s' '%s' '%s'", script, tsv, dir) < 0) {
		free(script);
		return -1;
	}
	rc = system(cmd);
	free(cmd);
	free(script);
	return rc == 0 ? 0 : -1;
}

int
main(int argc, char **argv)
{
	struct bench_opts o;
	struct confine_options copt;
	struct runner r;
	struct run_probe probe;
	char scratch[] = "/tmp/confine-bench.XXXXXX", *helper = NULL;
	char *out = NULL, *plot_dir = NULL;
	long fresh = -1;
	int rc = 1;

	memset(&o, 0, sizeof(o));
	memset(&r, 0, sizeof(r));
	parse(&o, argc, argv);
	setvbuf(stdout, NULL, _IOLBF, 0);
	out = callers_path(o.out);
	plot_dir = o.plot_dir ? callers_path(o.plot_dir) : NULL;
	if (o.helper_path == NULL && getenv("CONFINE_HELPER") == NULL)
		o.helper_path = helper = runfile(argv[0], "helper/confine-helper");
	if (mkdtemp(scratch) == NULL) {
		perror("bench: mkdtemp");
		scratch[0] = '\0';
		goto done;
	}
	r.scratch = scratch;
	r.bwrap = o.bwrap;

	/* The yardsticks first: the helper need not inherit their sockets. */
	if (run_floor_start() != 0) {
		perror("bench: the floor servers");
		goto done;
	}
	if (run_floor_confined_init(scratch) != 0)
		goto done;
	/*
	 * The helpers start first, while the host is small and has one
	 * thread, as a host should start them: in fork mode each is a copy
	 * of the host as it is now.
	 */
	memset(&copt, 0, sizeof(copt));
	copt.mode = o.mode;
	copt.helper_path = o.helper_path;
	if (run_open(&r.c, &copt, o.shepherd) != 0) {
		fprintf(stderr, "bench: confine_open: %s\n",
		    confine_error_message());
		goto done;
	}
	fresh = proc_status_kib(confine_helper_pid(r.c), "VmRSS");
	r.idle_kids = proc_children(confine_helper_pid(r.c), NULL, 0);
	if ((o.sections & SEC_LATENCY) && (o.methods & (1u << RUN_CONFINE_SHEP)) &&
	    run_open(&r.shep, &copt, true) != 0) {
		fprintf(stderr, "bench: confine_open, shepherd path: %s\n",
		    confine_error_message());
		goto done;
	}
	if ((o.sections & SEC_LATENCY) &&
	    (o.methods & (1u << RUN_CONFINE_UNPREP)) &&
	    run_open_unprepared(&r.unprep, &copt) != 0) {
		fprintf(stderr, "bench: confine_open, nothing prepared: %s\n",
		    confine_error_message());
		goto done;
	}

	stats_title("confine benchmark (%s preset), confine %s", o.preset,
	    CONFINE_VERSION);
	machine();
#ifdef __OPTIMIZE__
	stats_line("build: optimized (-c opt), as installed");
#else
	/* The helper of fork mode is this binary's own code. */
	stats_line("build: NOT optimized: confine's side runs -O0 code; "
	    "figures to compare want bazel run -c opt //tools/bench");
#endif
	stats_line("helper: pid %ld, %s mode%s; scratch %s; bwrap %s",
	    (long)confine_helper_pid(r.c), o.mode == CONFINE_MODE_EXEC ? "exec" :
	    o.mode == CONFINE_MODE_FORK ? "fork (carried)" : "auto (carried)",
	    o.shepherd ? ", the shepherd path (--shepherd)" : "", scratch,
	    o.bwrap);
	/* Checked, not assumed: one job through each helper. */
	rc = run_path(&r, r.c, "helper", o.shepherd, &probe) == 0 &&
	    (r.shep == NULL || run_path(&r, r.shep, run_name(RUN_CONFINE_SHEP),
	    true, NULL) == 0) && (r.unprep == NULL || (run_path(&r, r.unprep,
	    run_name(RUN_CONFINE_UNPREP), false, NULL) == 0 &&
	    run_unprepared_check(r.unprep) == 0)) ? 0 : 1;
	if (rc == 0)
		tmp_mount(&probe);
	if (rc == 0 && (o.methods & (1u << RUN_BWRAP)) && check_bwrap(&r) != 0)
		rc = 1;
	/* Memory first: what a job adds shows only on a helper still fresh. */
	if (rc == 0 && (o.sections & SEC_MEMORY))
		rc = bench_memory(&o, &r, fresh);
	if (rc == 0 && (o.sections & SEC_LATENCY))
		rc = bench_latency(&o, &r);
	if (rc == 0 && (o.sections & SEC_THROUGHPUT))
		rc = bench_throughput(&o, &r);
	if (rc == 0 && (o.sections & SEC_DEADLINE))
		rc = bench_deadline(&o, &r);
	if (rc == 0 && (o.sections & SEC_CPU))
		rc = bench_cpu(&o, &r);
	if (rc == 0)
		targets(&o);
done:
	run_floor_stop();
	run_floor_confined_fini();
	confine_close(r.shep);
	confine_close(r.unprep);
	confine_close(r.c);
	if (scratch[0] != '\0')
		rmdir(scratch);
	if (rc == 0 && stats_write_tsv(out) == 0) {
		stats_line("\nresults: %s", out);
		if (plot_dir != NULL && plot(argv[0], out, plot_dir) != 0)
			rc = 1;
	} else {
		rc = 1;
	}
	if (rc == 0 && missed)
		stats_line("%d target(s) missed: see docs/benchmarks.md", missed);
	stats_reset();
	free(out);
	free(plot_dir);
	free(helper);
	return rc;
}
