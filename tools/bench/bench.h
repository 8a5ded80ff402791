/*
 * The benchmark's shared declarations. Every confine-* method goes through
 * the public API only (<confine/confine.h>), as a host would; the floors
 * (run.c's floor-confined, floor-view, floor-ns, floor-tmp, floor-prepared)
 * run the engine's own plan and setup of a job (//helper/engine:
 * plan_build, child_exec, and an init's step), to measure it without a
 * helper.
 */
#ifndef BENCH_BENCH_H
#define BENCH_BENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include <time.h>

#include <confine/confine.h>

#include "src/core/procstat.h"

#define BENCH_MAX_LIST 16
#define MIB ((size_t)1024 * 1024)

/* Monotonic nanoseconds. */
static inline int64_t
bench_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

struct bench_list {
	long v[BENCH_MAX_LIST];
	size_t n;
};

struct bench_opts {
	const char *preset;              /* "full", "quick" or "smoke" */
	struct bench_list hosts_mib;     /* latency: host sizes */
	struct bench_list host_threads;  /* latency: threads in the host */
	int reps;                        /* latency repetitions per method */
	int pause_ms;                    /* latency: at rest before each job */
	int fork_reps;                   /* fork (and a late-forked helper)
	                                    from a host above 0 MiB */
	struct bench_list tp_threads;    /* throughput: submitting threads */
	double tp_seconds;               /* one throughput phase */
	int tp_rounds;                   /* phases per method and count */
	struct bench_list dl_jobs;       /* deadline: concurrent jobs */
	int dl_single_reps;              /* the 1-job case, one after another */
	int dl_single_ms;                /* its deadline */
	int dl_window_ms;                /* deadlines spread over this */
	bool dl_burst;                   /* also every deadline at once */
	int inflight;                    /* memory: jobs in flight */
	int cpu_jobs;                    /* CPU time per job over this many */
	enum confine_mode mode;          /* the bench helper's mode */
	bool shepherd;                   /* ... and its path: the shepherd's */
	const char *helper_path;         /* for exec mode */
	const char *bwrap;
	const char *out;                 /* TSV */
	const char *plot_dir;            /* PNGs, when set */
	unsigned sections;
	unsigned methods;                /* latency: bit per enum run_method */
};

enum {
	SEC_LATENCY = 1u << 0,
	SEC_THROUGHPUT = 1u << 1,
	SEC_DEADLINE = 1u << 2,
	SEC_MEMORY = 1u << 3,
	SEC_CPU = 1u << 4,
	SEC_ALL = 0x1f,
};

/* ---- run.c: the ways to start and settle /bin/true ---- */

enum run_method {
	RUN_FORK,            /* fork + execve + waitpid, from the host */
	RUN_SPAWN,           /* posix_spawn + waitpid, from the host */
	RUN_CONFINE,         /* confine, Landlock backend */
	RUN_CONFINE_NONE,    /* confine, backend none */
	RUN_BWRAP,           /* posix_spawn of bubblewrap */
	RUN_FLOOR_SERVER,    /* a minimal fork server: posix_spawn on request */
	RUN_FLOOR_SHEPHERD,  /* the same, through a forked shepherd per job */
	RUN_FLOOR_VFORK,     /* vfork + execve + waitpid, from the host */
	RUN_FLOOR_CONFINED,  /* the same, the child set up as the engine sets
	                        up a job with no namespace: Landlock, seccomp,
	                        no capabilities (child.c), as uid 65534 when
	                        root (plan.h's "bare") */
	RUN_FLOOR_VIEW,      /* the same, plus the job's own mount namespace
	                        and read-only view, as a job without an init
	                        makes them */
	RUN_CONFINE_READ,    /* confine, Landlock, reads narrowed to the
	                        system trees (CONFINE_READ_SYSTEM) */
	RUN_CONFINE_LATE,    /* confine through a helper forked (fork mode)
	                        after the host grew: what not to do */
	RUN_CONFINE_SHEP,    /* confine, Landlock, through a second helper
	                        on the shepherd path (CONFINE_SHEPHERD=1) */
	RUN_FLOOR_NS,        /* an init's step first in the same child,
	                        cloned into its PID namespace (its mount,
	                        network with loopback up, IPC and UTS
	                        namespaces, its view with its own /dev and
	                        /proc: shepherd.c), then the job's part under
	                        an init: a job's namespaces, in one process,
	                        with no init process beside it */
	RUN_CONFINE_UNPREP,  /* confine, Landlock, through a third helper that
	                        prepares no init (CONFINE_PREPARED=0): each
	                        made at its request, as before issue 35 */
	RUN_FLOOR_TMP,       /* floor-ns, its /tmp the host's beneath a private
	                        tmp made for it (an overlay), at the request,
	                        and the tmp removed after */
	RUN_FLOOR_PREP,      /* floor-ns with its init's step made before the
	                        request (namespaces, /dev, /proc), by a small
	                        server: only the view and the job's part at
	                        the request, as a helper's prepared init */
	RUN_NMETHODS,
};

struct runner {
	struct confine *c;       /* the bench's helper, opened first */
	struct confine *late;    /* RUN_CONFINE_LATE's, or NULL */
	struct confine *shep;    /* RUN_CONFINE_SHEP's, or NULL */
	struct confine *unprep;  /* RUN_CONFINE_UNPREP's, or NULL */
	size_t idle_kids;        /* c's children when fresh: on the direct
	                            path its guard */
	const char *scratch;
	const char *bwrap;
};

/*
 * Where a confine job's time goes, as the host sees it: confine_spawn
 * (request until the job has exec'd), confine_wait (until the settlement
 * arrived) and the result's wall_us (the job's fork to its exit).
 */
struct run_phases {
	double spawn_us, settle_us, wall_us;
};

const char *run_name(enum run_method m);
/* One start and settlement; 0, or -1 with the reason on stderr. */
int run_true(const struct runner *r, enum run_method m);
/* The same; for confine also its phases, when ph is not NULL. */
int run_true_phases(const struct runner *r, enum run_method m,
    struct run_phases *ph);
/* A confined job of any program; the caller frees it. */
int run_confine_spawn(struct confine *c, const char *scratch, const char *exe,
    const char *const *argv, int64_t deadline_ms, struct confine_job **job);
/*
 * confine_open with CONFINE_SHEPHERD=1 in our environment for the open
 * alone when shepherd, else without it: the path is the caller's choice,
 * not an inherited variable's. The environment as it was after. While
 * the host has one thread only (setenv). 0 or -errno.
 */
int run_open(struct confine **c, const struct confine_options *opt,
    bool shepherd);
/*
 * run_open (not on the shepherd path) with CONFINE_PREPARED=0 for the
 * open alone: a helper that makes each job's init at its request (read
 * only by a build with --config=testing).
 */
int run_open_unprepared(struct confine **c, const struct confine_options *opt);
/* 0 where that helper prepares nothing; else -1, said (a build's switch). */
int run_unprepared_check(struct confine *c);

/* What one /bin/true job through a helper shows of the helper's path. */
struct run_probe {
	pid_t pid, pgid;         /* the same: it leads its session */
	bool direct;             /* the helper's own child: no shepherd */
	char tmp[4096];          /* its private tmp on the host, or "" */
};

int run_probe(struct confine *c, const char *scratch, struct run_probe *out);

/* The host's own memory, pages really touched, and idle threads. */
/*
 * The floors: two tiny servers forked now (while the host is small, as the
 * helper is), each running /bin/true on a one-byte request over a
 * socketpair. What any helper design costs at the least, with and without
 * a process of its own per job. Not confine: a yardstick.
 */
int run_floor_start(void);
void run_floor_stop(void);
/*
 * The confined floors: what confining each job costs by itself, with no
 * helper at all. Each job's plan is made from a spec by the helper's own
 * plan.c, on the machine's environment as a helper probes it (narrowed
 * for floor-confined and floor-view: run.c says which floor does what).
 * The host vforks the job (a child sharing its memory until exec, as
 * posix_spawn's does, without posix_spawn's own work), and the child
 * runs the engine's own setup of a job (child_exec), after its init's
 * step where it has one. 0 or -1; a floor whose plan is refused fails
 * when it runs, saying why. scratch is kept, not copied, until
 * run_floor_confined_fini.
 */
int run_floor_confined_init(const char *scratch);
struct samples;
/*
 * The least a burst of n deadlines can cost: n sleepers started as
 * floor-view starts its job, all SIGKILLed at one instant by their parent
 * and reaped; microseconds from the kill to each reaping, into out. No
 * server, no cgroup, no result to send: a yardstick. Needs
 * run_floor_confined_init.
 */
int run_floor_burst(int n, struct samples *out);
void run_floor_confined_fini(void);

int run_host_grow(size_t mib);
void run_host_release(void);
size_t run_host_mib(void);
int run_park(int threads);       /* the host has this many threads after */
void run_unpark(void);

/*
 * Which path c's jobs take, seen in one /bin/true job: on the direct
 * path the job leads its own group, on the shepherd's it is in the group
 * its shepherd made. One line, and a plain warning when it is not the
 * path expected: the shepherd's when asked for, else the direct one where
 * proc_cgroup_kill(). The probe into out when not NULL. 0, or -1 when the
 * job failed.
 */
int run_path(const struct runner *r, struct confine *c, const char *who,
    bool shepherd, struct run_probe *out);

/* ---- stats.c: samples, rows, the TSV, the printed lines ---- */

struct samples {
	double *v;
	size_t n, cap;
};

struct summary {
	size_t n;
	double p50, p90, p99, min, max, mean;
};

int stats_add(struct samples *s, double x);
void stats_free(struct samples *s);
void stats_summary(struct samples *s, struct summary *out);

/* One line of results; the TSV holds them all, the targets look them up. */
struct row {
	char section[16];
	char method[32];
	char variant[24];
	long host_mib;
	long threads;
	long jobs;
	struct summary s;
	char unit[12];
};

struct row *stats_row(const char *section, const char *method,
    const char *variant, long host_mib, long threads, long jobs,
    const struct summary *s, const char *unit);
struct row *stats_value(const char *section, const char *method,
    const char *variant, long host_mib, long threads, long jobs,
    double value, const char *unit);
/* The first row matching; NULL strings and -1 numbers match anything. */
const struct row *stats_find(const char *section, const char *method,
    const char *variant, long host_mib, long threads, long jobs);
int stats_write_tsv(const char *path);
void stats_reset(void);

/* Printing: a section title, and a table line. */
void stats_title(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void stats_line(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* ---- proc.c: the mounts and the cgroup (a process's figures: procstat.h) ---- */

/* A mount, as /proc/self/mountinfo has it. */
struct proc_mount {
	char point[4096];
	char type[64];
	char opts[256];          /* the mount's own: rw,relatime... */
	char super[1024];        /* its file system's: discard... */
};

/*
 * The mount that holds path (the longest mount point above it, the last
 * mounted of equals); with path NULL, the first of type fstype. 0 or
 * -errno, -ENOENT for none.
 */
int proc_mount(const char *path, const char *fstype, struct proc_mount *out);
/*
 * Whether our cgroup v2 is one we may write in, with cgroup.kill: what a
 * helper needs to start its jobs without a shepherd.
 */
bool proc_cgroup_kill(void);

/* ---- the sections ---- */

int bench_latency(const struct bench_opts *o, struct runner *r);
int bench_throughput(const struct bench_opts *o, struct runner *r);
int bench_deadline(const struct bench_opts *o, struct runner *r);
int bench_memory(const struct bench_opts *o, struct runner *r, long idle_kib);
int bench_cpu(const struct bench_opts *o, struct runner *r);

#endif
