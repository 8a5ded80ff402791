/*
 * One job run to its settlement by the calling process itself, as the
 * helper runs each of its jobs (job.h), blocking: for a program that is
 * small, single-threaded and runs one job (confine-run), where starting a
 * helper would cost more than the job, and for the tests that drive the
 * core directly.
 *
 *   local_open -> local_run ... -> local_close
 *
 * The process becomes what a helper is to its jobs: their parent, where
 * jobs go without a shepherd the subreaper of their orphans, and the
 * holder of a guard that kills their cgroups if it dies.
 */
#ifndef CONFINE_LOCAL_H
#define CONFINE_LOCAL_H

#include <stdbool.h>

#include "confine/confine.h"
#include "helper/engine/job.h"

struct local {
	struct job_env env;
	int guard;       /* held open until local_close, or -errno */
	pid_t guard_pid; /* the guard, ours to reap, or -1 */
#ifdef __linux__
	struct prepared_pool pool;  /* the job's init, prepared as we start */
#endif
};

/*
 * Probes the machine as a helper does, and starts the guard, which ends
 * the jobs' cgroups once this process has exited: once a process. 0, or
 * -ENOMEM. spec: the one job's, where it is known (NULL: not), so that
 * what it cannot use (the overlay of /tmp) is not made for it.
 */
int local_open(struct local *l, const struct confine_spec *spec);
/*
 * Reaps what the jobs' orphans left and releases the rest, the guard
 * too: its pipe closed (its cue: a kill of cgroups its settled jobs left
 * empty), it is reaped, so that nothing of ours is left for whoever
 * reaps our own orphans. Before it, the guard's cue is our death.
 */
void local_close(struct local *l);

struct local_job {
	const struct confine_spec *spec;
	const struct ident *peer;    /* whose job: NULL for our own */
	/*
	 * -1, or a descriptor that, readable, asks cancel(arg) whether to
	 * cancel the job (true: cancel it). cancel must make it unreadable.
	 */
	int cancel_fd;
	bool (*cancel)(void *arg);
	void *arg;
	/* Out. */
	struct confine_result result;
	char *root;                  /* its scratch root, once it settled
	                                ("" for none, NULL without memory):
	                                the caller frees it */
	char enforced[JOB_ENFORCED_LEN];  /* what was in force (job.h) */
	const char *why;             /* with a refusal */
	enum op op;                  /* and the call that failed, or OP_NONE */
	int op_err;                  /* its errno */
};

/*
 * Runs lj->spec to its settlement with env (a local's, or one a test made
 * with job_env_init). 0 with lj->result final, or job_start's refusal
 * (-errno, lj->why): then nothing ran.
 */
int local_run(const struct job_env *env, struct local_job *lj);

#endif
