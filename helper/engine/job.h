/*
 * One job as the helper sees it: a small state machine driven by what
 * is reported of it (report.h: by its shepherd, or by the helper itself
 * where it has none) and by timers. The helper's event loop drives many
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
#include "helper/backend/ident.h"
#include "helper/engine/shepherd.h"
#include "helper/engine/sys.h"
#include "helper/engine/env.h"
#include "helper/engine/settle.h"
#include "helper/engine/trash.h"
#include "src/core/spec.h"
#ifdef __linux__
#include "helper/backend/cgroup.h"
#include "helper/engine/prepared.h"
#include "helper/backend/seccomp.h"
#endif

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
	/*
	 * What each way (job.c) has one of. child: ours, to reap: the job's
	 * shepherd or init, or on the direct way the job itself; its pid is
	 * the group's id where the way holds the group (not relayed). fd:
	 * what the loop watches for the job: the shepherd's socket, or on
	 * the direct way the job's pidfd, then its remover's socket.
	 */
	pid_t child;
	int fd;
	unsigned fd_gen;               /* a new fd: its number may be an old one's */
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
	/* Which way it has (job.c's way()): relayed, direct, or held. */
	bool relayed;                  /* a shepherd's job that leads its own
	                                  session: its group is signalled by
	                                  the shepherd (SHEP_CMD_*), never by
	                                  us, and proven empty by it */
	bool direct;                   /* no shepherd: child is the job itself,
	                                  fd its pidfd until it is reaped */
	int64_t t_start;
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
	/* The relayed way's own. */
	enum confine_reason stop_why;  /* relayed: the stop whose kill's
	                                  answer makes it Cancelled */
	/* The direct way's own. */
	bool reaped;                   /* direct: the leader is reaped, the
	                                  pgid is no longer held for us */
	bool group_gone;               /* direct: kill(-pgid, 0) said ESRCH
	                                  since: never signalled again */
	pid_t remover;                 /* direct: removing the fresh root */
	int remover_fd;                /* its pidfd, or -1 */
	struct ident *owner;           /* direct: whose tree it removes, or
	                                  NULL for ours */
	/* A report being read off fd: a shepherd's, an init's or a remover's. */
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
 * Which descriptor job_fd is: changed whenever it is a new one, whose
 * number may be an old one's (a job's pidfd closed, its remover's socket
 * made next): a caller watching it watches the new one again.
 */
unsigned job_fd_gen(const struct job *j);
/*
 * Whether pid is this job's own process, unsettled, and its shepherd's
 * job (one that leads its own session and dies with its shepherd): an
 * orphan of it that came back to the caller, a subreaper, whose group is
 * to be killed with it.
 */
bool job_is_relayed(const struct job *j, pid_t pid);
/*
 * The caller's child of this job: its shepherd or init, to reap once the
 * job is JOB_DONE; or, without one (the direct way), the job itself,
 * which the job reaps (job_child_exited), and 0 once it has.
 */
pid_t job_shepherd(const struct job *j);
/*
 * job_shepherd's pid has exited (SIGCHLD said so), not yet reaped. true:
 * the caller reaps it and frees the job (a shepherd or init died: what it
 * said before is read, and the job settles without it). false: the job
 * reaped it itself and goes on (the direct way: it was the job).
 */
bool job_child_exited(struct job *j, int64_t now);

void job_input(struct job *j, int64_t now);
/* The next timer (monotonic ns), INT64_MAX for none. */
int64_t job_timer(const struct job *j);
void job_tick(struct job *j, int64_t now);
/* Cancels a job not yet settled; a settled one is left as it is. */
void job_cancel(struct job *j, int64_t now);
/* The shepherd exited before the job was done: what it knew is lost. */
void job_shepherd_lost(struct job *j, int64_t now);

#endif
