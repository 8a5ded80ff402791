/*
 * One job as the helper sees it: a small state machine driven by its
 * shepherd's reports and by timers. The helper's event loop drives many
 * at once; the tests drive one at a time through the same calls
 * (tests/jobrun.c).
 *
 *   job_start -> [job_input | job_tick | job_cancel]* -> phase JOB_DONE
 *   -> reap the shepherd (job_shepherd()) -> done
 *
 * Events tell the driver what to send: JOB_EV_STARTED (the job exec'd or
 * failed before exec: pid and pgid are known), JOB_EV_SETTLED (result is
 * final), JOB_EV_REFUSED (no job will run: refused holds -errno; it stays
 * set, and is to be told once the job is JOB_DONE, when nothing of it is
 * left, a fresh scratch root included). The driver clears the others.
 */
#ifndef CONFINE_JOB_H
#define CONFINE_JOB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "confine/confine.h"
#include "helper/ident.h"
#include "helper/shepherd.h"
#include "helper/sys.h"
#include "helper/settle.h"
#include "helper/trash.h"
#include "src/spec.h"
#ifdef __linux__
#include "helper/cgroup.h"
#include "helper/prepared.h"
#include "helper/seccomp.h"
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

enum job_phase {
	JOB_STARTING = 1,  /* forked, waiting for the exec result */
	JOB_RUNNING,       /* exec'd, waiting for its exit */
	JOB_DRAINING,      /* exit decided; killing what is left of the group */
	JOB_REMOVING,      /* settled; the shepherd removes the fresh root */
	JOB_DONE,          /* settled or refused; shepherd released */
};

#define JOB_EV_STARTED 1u
#define JOB_EV_REFUSED 2u
#define JOB_EV_SETTLED 4u

#define JOB_ENFORCED_LEN 512

struct job {
	enum job_phase phase;
	unsigned events;
	int refused;                   /* -errno with JOB_EV_REFUSED */
	const char *why;               /* what was refused, in words */
	enum op refused_op;            /* the call that failed, or OP_NONE: */
	int refused_err;               /* its errno */
	struct confine_result result;  /* final with JOB_EV_SETTLED */

	/* Private to job.c. */
	const struct job_sys *sys;
	pid_t shep;                    /* the shepherd (whose pid is the pgid
	                                  where kill(-pgid, 0) is the proof) */
	int ctl;
	unsigned ctl_gen;               /* a new ctl: its number may be an old one's */
	void (*unwatch)(void *arg, int fd);
	void *unwatch_arg;
	struct settle settle;
	struct trash *trash;           /* env's */
	int64_t grace_ns;
	int64_t t_deadline;            /* INT64_MAX: none */
	int64_t t_grace;               /* SIGKILL after SIGTERM */
	int64_t t_retry;               /* resend SIGKILL until the exit arrives */
	int64_t t_poll;                /* next emptiness check while draining */
	int64_t poll_step;
	int64_t t_drain_end;
	bool stopping;                 /* a deadline or cancel fired */
	bool forked;                   /* the group exists, the shepherd is out */
	enum confine_reason pending;   /* a stop that came before that */
	bool sweeping;                 /* the shepherd is killing leftovers */
#ifdef __linux__
	struct cgroup_job cg;          /* the job's cgroups, if any */
#endif
	bool group_only;               /* env's group_proof_only */
	bool init;                     /* its shepherd is its init: pid 1 of
	                                  its PID namespace (ns.h) */
	bool relayed;                  /* a shepherd's job that leads its own
	                                  session: its group is signalled by
	                                  the shepherd (SHEP_CMD_*), never by
	                                  us, and proven empty by it */
	enum confine_reason stop_why;  /* relayed: the stop whose kill's
	                                  answer makes it Cancelled */
	bool direct;                   /* no shepherd: shep is the job itself,
	                                  ctl its pidfd until it is reaped */
	bool reaped;                   /* direct: the leader is reaped, the
	                                  pgid is no longer held for us */
	bool group_gone;               /* direct: kill(-pgid, 0) said ESRCH
	                                  since: never signalled again */
	int64_t t_start;
	pid_t remover;                 /* direct: removing the fresh root */
	int remover_fd;                /* its pidfd, or -1 */
	struct ident *owner;           /* direct: whose tree it removes, or
	                                  NULL for ours */
	const struct ident *self;
	bool fresh;                    /* root was made for this job */
	char *root;                    /* its scratch root, canonical */
	char *tmp;                     /* its private tmp, or NULL */
	char *tmp_upper;               /* where the host's /tmp is beneath its
	                                  own: tmp's upper layer, its files */
	char *spare_tmp;               /* a prepared init's private tmp its
	                                  job did not take, or NULL: removed
	                                  once that init is gone */
	char enforced[JOB_ENFORCED_LEN];  /* what is in force: job_enforced */
	char *made[3];                 /* trees beneath /tmp the job's view
	                                  made mount points for in tmp */
	unsigned char rbuf[SHEP_REC_LEN];
	size_t rlen;
};

/*
 * Checks and prepares the spec (canonical paths, backend, launcher), then
 * forks the shepherd. peer is whose job it is (the connection's peer), or
 * NULL for the helper's own: its paths are checked, its fresh root made,
 * and the job run, with peer's credentials. Nothing is spawned or written
 * when it refuses: -EINVAL (with *why), -ENOTSUP (confinement cannot be
 * applied exactly), -ENOENT/-ENOTDIR/-EACCES (a path the peer cannot
 * reach, or a scratch root it cannot write), -EPERM (this helper cannot
 * run peer's jobs), or the fork's errno.
 */
int job_start(struct job *j, const struct confine_spec *s, const struct job_env *env,
    const struct ident *peer, int64_t now, const char **why);

/* Frees what job_start allocated; after JOB_DONE and the reaping. */
void job_release(struct job *j);
/* The job's scratch root, canonical ("" for none). */
const char *job_root(const struct job *j);
/* Its private temporary directory on the host ("" for none). */
const char *job_tmp(const struct job *j);
/*
 * What is in force for a started job, in words for the host (STARTED;
 * confine_job_enforced): "backend=landlock landlock=7 namespaces=...".
 */
const char *job_enforced(const struct job *j);

/* The shepherd's socket, to poll for input; -1 once released. */
int job_fd(const struct job *j);
/*
 * The shepherd's pid, to reap once the job is JOB_DONE. Without one
 * (j->direct): the job's own pid, which job_exited reaps, and 0 once it
 * has.
 */
pid_t job_shepherd(const struct job *j);
/* Without a shepherd: the job's pid has exited (SIGCHLD said so). */
void job_exited(struct job *j, int64_t now);

void job_input(struct job *j, int64_t now);
/* The next timer (monotonic ns), INT64_MAX for none. */
int64_t job_timer(const struct job *j);
void job_tick(struct job *j, int64_t now);
/* Cancels a job not yet settled; a settled one is left as it is. */
void job_cancel(struct job *j, int64_t now);
/* The shepherd exited before the job was done: what it knew is lost. */
void job_shepherd_lost(struct job *j, int64_t now);

#endif
