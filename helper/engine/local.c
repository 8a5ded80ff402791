#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif
#include <unistd.h>

#include "helper/engine/local.h"
#include "src/core/clock.h"
#include "src/core/fd.h"
#include "src/core/proc.h"

#ifdef __linux__
/*
 * Whether a job of spec could have the host's /tmp beneath its own (a
 * tmp, a view, reads everywhere: plan.c says the rest).
 */
static bool
overlay_wanted(const struct confine_spec *spec)
{
	return spec == NULL || (!(spec->flags & (CONFINE_NO_TMP |
	    CONFINE_READ_SYSTEM)) && spec->backend != CONFINE_BACKEND_NONE &&
	    (spec->readable == NULL || spec->readable[0] == NULL));
}
#endif

int
local_open(struct local *l, const struct confine_spec *spec)
{
	int rc;

#ifdef __linux__
	/* As a helper is (serve.c): a job whose shepherd died comes to us. */
	(void)prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
#endif
#ifdef __linux__
	/*
	 * Its init prepared while the rest of our start goes on, which also
	 * says whether it can be: the job's, if it has namespaces.
	 */
	memset(&l->pool, 0, sizeof(l->pool));
	/* A job that confines nothing: none of that asked or made. */
	if (spec != NULL && spec->backend == CONFINE_BACKEND_NONE)
		rc = job_env_init_unconfined(&l->env);
	else
		rc = job_env_init_ahead(&l->env, &l->pool.held[0],
		    overlay_wanted(spec));
	if (l->pool.held[0].pid > 0) {
		l->pool.n = 1;
		l->pool.ceiling = 1;
		l->env.pool = &l->pool;
	}
#else
	(void)spec;
	rc = job_env_init(&l->env);
#endif
	l->guard = -1;
	l->guard_pid = -1;
	if (rc == 0)
		l->guard = job_env_guard(&l->env, &l->guard_pid, true);
	return rc;
}

void
local_close(struct local *l)
{
#ifdef __linux__
	/* A prepared init no job took. */
	prepared_drain(&l->pool, true);
#endif
	/* The orphans of our jobs that died after their settlement. */
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
	/*
	 * The jobs settled, the guard's work is done: its cue now, while
	 * the cgroups it would kill are there (and empty), then reaped by
	 * us, not left to outlive us as an orphan (a zombie for good under
	 * a PID 1 that reaps none).
	 */
	if (l->guard >= 0) {
		close(l->guard);
		l->guard = -1;
		if (l->guard_pid > 0)
			proc_reap(l->guard_pid, NULL);
		l->guard_pid = -1;
	}
	job_env_fini(&l->env);
}

int
local_run(const struct job_env *env, struct local_job *lj)
{
	struct pollfd pfd[2];
	struct job j;
	int64_t now;
	int rc, n;

	lj->root = NULL;
	lj->why = NULL;
	lj->op = OP_NONE;
	lj->op_err = 0;
	rc = job_start(&j, lj->spec, env, lj->peer, clock_ns(), &lj->why);
	if (rc != 0) {
		lj->op = j.refused_op;
		lj->op_err = j.refused_err;
		return rc;
	}
	pfd[1].fd = lj->cancel_fd;
	pfd[1].events = POLLIN;
	while (j.phase != JOB_DONE) {
		pfd[0].fd = job_fd(&j);
		pfd[0].events = POLLIN;
		pfd[0].revents = pfd[1].revents = 0;
		n = poll(pfd, lj->cancel_fd >= 0 ? 2 : 1,
		    clock_ms_until(job_timer(&j)));
		now = clock_ns();
		if (n > 0 && pfd[1].revents != 0 && lj->cancel(lj->arg))
			job_cancel(&j, now);
		if (n > 0 && pfd[0].revents != 0)
			job_input(&j, now);
		if (job_timer(&j) <= now)
			job_tick(&j, now);
	}
	/* Without a shepherd (0) the job reaped itself. */
	if (job_shepherd(&j) > 0)
		proc_reap(job_shepherd(&j), NULL);
	if (j.events & JOB_EV_REFUSED) {
		lj->why = j.why;
		lj->op = j.refused_op;
		lj->op_err = j.refused_err;
		rc = j.refused;
	} else {
		lj->result = j.result;
		lj->root = strdup(job_root(&j));
		memcpy(lj->enforced, job_enforced(&j), sizeof(lj->enforced));
	}
	job_release(&j);
	return rc;
}
