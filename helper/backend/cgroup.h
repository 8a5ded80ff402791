/*
 * cgroups for jobs, when the helper may create them (delegated, or root on
 * a writable hierarchy). Each job gets its own cgroup v2 leaf: the proof
 * of settlement is "populated 0" in its cgroup.events, and a deadline
 * writes cgroup.kill, which kills every process in it, even one that left
 * the job's process group before it was orphaned. The shepherd is not in
 * it, so it survives to reap and report.
 *
 * Memory and process-count bounds need controllers. On a hybrid hierarchy
 * (v2 mounted beside v1, as on this project's test machine) the memory and
 * pids controllers are v1's, and a job gets a cgroup in each of those too.
 * On a pure v2 hierarchy with those controllers delegated they are not
 * used yet: the bounds are refused there (docs/linux-contract.md).
 *
 * The helper's directory in each hierarchy is confine.<pid>.<random>, an
 * flock on it held for the helper's life. A helper's
 * start kills what dead helpers' jobs left running beside it and removes
 * their cgroups: those whose flock it can take.
 */
#ifndef CONFINE_CGROUP_H
#define CONFINE_CGROUP_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#define CGROUP_POOL 32

/*
 * What the helper's cgroups keep that changes as jobs come, reached
 * through a const env: the v1 memory and pids levels, made at the first
 * job with a bound that needs them, not at every helper's start (a
 * confine-run of one job without bounds never makes them; -1 when
 * unavailable); and the empty job cgroups kept for reuse.
 */
struct cgroup_kept {
	bool made;       /* the v1 levels tried: made, or found unavailable */
	int memory;      /* directory fd: <v1 memory mount><own>/<name> */
	int pids;        /* the v1 pids controller's, likewise */
	char pool[CGROUP_POOL][24];
	int npool;
	/*
	 * Job cgroups to remove when the helper has time (cgroup_env_tidy):
	 * each rmdir costs what a job's whole settlement in the loop costs
	 * again, and no result waits for it.
	 */
	struct cgroup_dead *dead;
	size_t ndead, dead_cap;
};

/* A settled job's cgroups, empty, not yet removed. */
struct cgroup_dead {
	char name[24];
	bool v2, memory, pids;  /* the hierarchies it has one in */
};

/* The helper's own cgroups, one per hierarchy, each -1 when unavailable. */
struct cgroup_env {
	int v2;          /* directory fd: <v2 mount><own>/<name>, claimed */
	bool v2_kill;    /* cgroup.kill exists (Linux 5.14) */
	struct cgroup_kept *kept; /* NULL: none (out of memory, or no
	                             cgroups: the macOS path) */
	char name[40];   /* confine.<pid>.<16 hex digits>, in every hierarchy */
};

#define CGROUP_JOINS 3   /* v2, memory, pids */

struct cgroup_job {
	char name[24];           /* job.<seq>, the same in every hierarchy */
	int v2, memory, pids;    /* directory fds, or -1 */
	int dir;                 /* the v2 directory, for CLONE_INTO_CGROUP, or -1 */
	int events;              /* v2 cgroup.events, or -1 */
	int kill;                /* v2 cgroup.kill, or -1 */
	bool killed;             /* cgroup.kill was written: never reused */
	int procs[CGROUP_JOINS]; /* cgroup.procs to join, or -1 */
	struct cgroup_kept *kept; /* its env's, to give an empty one back */
};

/* Creates the helper's v2 cgroup where it can; never fails. */
void cgroup_env_init(struct cgroup_env *env);
/* The v1 memory and pids levels, made at the first call: fd or -1. */
int cgroup_env_memory(const struct cgroup_env *env);
int cgroup_env_pids(const struct cgroup_env *env);
/* Removes them (they are empty by then). */
void cgroup_env_fini(struct cgroup_env *env);

/*
 * A job's cgroups, with the bounds written. memory and processes are 0 for
 * none. -ENOTSUP (with *why) when a bound needs a controller this helper
 * does not have; other errnos when the kernel refuses.
 */
int cgroup_job_create(const struct cgroup_env *env, struct cgroup_job *job,
    int64_t memory, int64_t processes, const char **why);
/*
 * Closes the descriptors. An empty v2 cgroup may be kept for the next job
 * (mkdir and rmdir of a cgroup wait on the kernel's RCU grace periods);
 * the others are queued for cgroup_env_tidy, or removed now when the
 * queue cannot grow. One still in use stays (rmdir says EBUSY): the next
 * helper's start removes it.
 */
void cgroup_job_destroy(struct cgroup_job *job);
/*
 * Removes up to max of the queued cgroups; returns how many are left.
 * cgroup_env_fini removes them all.
 */
size_t cgroup_env_tidy(const struct cgroup_env *env, size_t max);
/* 1 populated, 0 empty, -errno (or -ENOENT without a v2 cgroup). */
int cgroup_job_populated(const struct cgroup_job *job);
/* Kills everything in the v2 cgroup. 0 or -errno. */
int cgroup_job_kill(struct cgroup_job *job);

/*
 * Where no shepherd outlives the helper to end its jobs, a guard does:
 * forked at the helper's start (again if it dies), it waits for EOF on a
 * pipe whose write end only the helper holds (close-on-exec, and closed
 * in every job), then writes cgroup.kill in the helper's v2 cgroup, which
 * ends every job beneath it. After a
 * clean stop the jobs and the cgroup are gone already: it finds nothing.
 * Returns that write end, to keep open for the helper's life, or -errno;
 * the guard's pid in *pid; only once the guard has closed the rest of
 * what it was forked with (the helper's sockets among them: while it
 * held them, a host would not see the helper die).
 */
int cgroup_guard(const struct cgroup_env *env, pid_t *pid);
/*
 * The same for a process that runs its own job and then exits: a guard
 * sharing its memory, cheaper to start than a copy of it, which holds
 * what the process had open at the call until it ends. The descriptor
 * returned must stay open until the process exits (its exit is the
 * guard's cue); one such guard a process.
 */
int cgroup_guard_shared(const struct cgroup_env *env, pid_t *pid);

/* In the job's process, before anything else: move into every cgroup. */
int cgroup_join(const int procs[CGROUP_JOINS]);

#endif
