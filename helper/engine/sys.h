/*
 * The calls whose failure changes a job's settlement, behind one seam so
 * that tests can make them fail (EPERM, EINTR, ECHILD) and see the
 * Uncertain outcomes they must lead to.
 */
#ifndef CONFINE_SYS_H
#define CONFINE_SYS_H

#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>

struct job_sys {
	int (*kill)(pid_t pid, int sig);
	pid_t (*wait4)(pid_t pid, int *status, int options, struct rusage *ru);
	/* The shepherd's "any child left?" (WNOWAIT): only ECHILD is none. */
	int (*waitid)(idtype_t type, id_t id, siginfo_t *si, int options);
	/* Tests: run in the shepherd while it is still in the job's group,
	 * to widen that window; NULL otherwise. */
	void (*in_group)(void);
};

extern const struct job_sys job_sys_real;

#endif
