/*
 * What the helper learns about the machine once, at its start, and keeps
 * for every job: the job environment (struct job_env). plan.c reads it
 * to make each job's plan; job.c to start and settle each job.
 */
#ifndef CONFINE_ENV_H
#define CONFINE_ENV_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "helper/backend/ident.h"
#include "helper/backend/op.h"
#include "helper/engine/sys.h"
#include "helper/engine/trash.h"
#ifdef __linux__
#include "helper/backend/cgroup.h"
#include "helper/backend/seccomp.h"
#endif

struct prepared;   /* prepared.h, Linux only */

/* What the helper learned about the machine once, at start. */
/*
 * policy_system_reads as this machine has them: canonical, present, no
 * repeats. Resolving them is about a hundred system calls, which only a
 * job with CONFINE_READ_SYSTEM needs: made for the first, then kept.
 */
struct sysreads {
	char **path;                     /* NULL until made: the next job
	                                    tries again */
	size_t n;
};

struct job_env {
	int landlock_abi;                /* < 0: no Landlock (-errno) */
	struct ident self;               /* the helper's own credentials */
	char *tmp_base;                  /* where private tmps are made, or
	                                    NULL: none can be */
	int self_err;                    /* reading them failed: -errno */
#ifdef __linux__
	struct seccomp_prog seccomp;     /* count 0: could not be built */
	struct seccomp_prog seccomp_own; /* for a job in namespaces of its own */
	struct seccomp_prog seccomp_own_net;  /* and sockets, its init
	                                         supervising: where sup_ok */
	bool sup_ok;                     /* supervise.h: this kernel can */
	/*
	 * Whether a job in namespaces of its own can have the host's /tmp
	 * beneath its own (an overlay: mountns.h), else -errno (the overlay
	 * file system missing, a kernel that refuses it in a user namespace).
	 */
	bool tmp_overlay_ok;
	int tmp_overlay_err;
	struct cgroup_env cg;            /* the helper's cgroups, if any */
	struct sysreads *sysreads;       /* made at the first job that reads
	                                    them: NULL only without memory */
#endif
	/*
	 * Where settled jobs' empty tmps go, to be removed when the helper
	 * has time (job_env_tidy), or NULL: removed at once. A helper's
	 * (job_env_trash), not one that runs its own job and then exits.
	 */
	struct trash *trash;
	const struct job_sys *sys;       /* NULL: the real calls */
#ifdef __linux__
	/*
	 * Jobs' inits prepared before their requests (prepared.h); NULL:
	 * each is made as its job starts. serve.c's.
	 */
	struct prepared_pool *pool;
#endif
	/*
	 * Settle as the macOS helper does, where neither exists: no
	 * subreaper, no cgroup, kill(-pgid, 0) the one proof (proof: pgid).
	 * Always so off Linux; on Linux for the tests of that path.
	 */
	bool group_proof_only;
	/*
	 * Linux, where each job has a v2 cgroup to settle and kill it: no
	 * shepherd, the job is our child and we (a subreaper) collect its
	 * orphans. Set by job_env_init; a test may clear it.
	 */
	bool direct;
	/*
	 * Linux, where jobs can have namespaces of their own (ns.h): each job
	 * under an init of its own (a shepherd that is pid 1 of the job's
	 * PID namespace), never direct. -errno (ns_err, ns_op) where they
	 * cannot be made. Set by job_env_init; a test may clear it.
	 */
	bool ns;
	int ns_err;
	enum op ns_op;
	/*
	 * Where they cannot: whether a job can still have a mount namespace
	 * (and so its read-only view), or else -errno and the call
	 * (view_err, view_op). Set by job_env_init; a test may clear it.
	 */
	bool view_ok;
	int view_err;
	enum op view_op;
	/* Called with a shepherd's socket just before it is closed. */
	void (*unwatch)(void *arg, int fd);
	void *unwatch_arg;
};

/*
 * Probes the machine, and creates the helper's cgroups where it may. Never
 * fails: a missing feature refuses the jobs that need it, later. Whether
 * jobs can have namespaces, and an overlay of /tmp, is asked of an init
 * prepared as the first job's would be (job_env_init_ahead), then dropped.
 */
/* 0, or -ENOMEM: a helper short of it would refuse narrowed jobs. */
int job_env_init(struct job_env *env);
#ifdef __linux__
/*
 * job_env_init for a process that serves jobs (a helper, confine-run):
 * whether jobs can have namespaces, and an overlay of /tmp, is learnt
 * from the first job's init, prepared ahead (prepared.h), and kept in
 * *first for that job (pid -1: none). The caller drops it if it goes
 * unused. With tmp_ahead, that init has a private tmp with the overlay
 * made (and says whether it could be); without (for confine-run's one
 * job, which cannot have it), none, and no job has the overlay.
 */
int job_env_init_ahead(struct job_env *env, struct prepared *first,
    bool tmp_ahead);
/*
 * job_env_init for a process whose jobs all confine nothing (confine-run
 * --backend none): no init prepared, no namespaces, listener or view
 * probed, as none of its jobs would have them (ns_err, view_err
 * -ENOTSUP). A job of any other backend is then refused as where the
 * machine has none of them.
 */
int job_env_init_unconfined(struct job_env *env);
#endif
void job_env_fini(struct job_env *env);
/* Gives env a trash in its tmp base (trash.h); without one, none. */
void job_env_trash(struct job_env *env);
/*
 * Where jobs go without a shepherd, nothing of theirs outlives the helper
 * to end them: a guard process does (cgroup_guard). Returns the
 * descriptor to hold for the helper's life (the guard's pid in *pid), or
 * -errno having put env's jobs back on shepherds (-ENOTSUP: they had
 * shepherds already). one_job: for a process that runs its own job and
 * exits, a guard that shares its memory (cgroup_guard_shared): the
 * descriptor must then stay open until the process exits.
 */
int job_env_guard(struct job_env *env, pid_t *pid, bool one_job);
/*
 * What settled jobs left for later (their cgroups, their empty tmps):
 * removes up to max of each, returns how much is left. No result waits
 * for it.
 */
size_t job_env_tidy(const struct job_env *env, size_t max);

#ifdef __linux__
/*
 * The system trees of policy_system_reads as this machine has them,
 * made at the first job that asks for them (env->sysreads), then kept.
 * 0, or -ENOMEM: that job is refused, never run short of a tree, and the
 * next one tries again.
 */
int job_env_sysreads(const struct job_env *env);
#endif

#endif
