/*
 * The job's process between fork and exec. In this order, failing closed:
 * default signal dispositions and an empty mask; the job's stdio in place
 * and every other descriptor closed; cwd; confinement; exec with exactly
 * the given environment. (The process group was made by the shepherd.)
 * Around them: the job's cgroups are joined right after the signals
 * (before it could fork), a launcher's program is checked after
 * confinement, and its rlimits are set last (so that a low RLIMIT_NOFILE
 * cannot starve the setup). A failure is written to errfd as {step, errno}; EOF on its read
 * end means exec happened.
 */
#ifndef CONFINE_CHILD_H
#define CONFINE_CHILD_H

#include <stdbool.h>

#include "confine/confine.h"
#include "src/policy.h"

#define CHILD_ERR_LEN 8

struct landlock_plan;
struct seccomp_prog;

struct child_plan {
	const char *path;         /* what execve runs: the exe or the launcher */
	char *const *argv;
	char *const *envp;
	const char *exe;          /* the job's program, checked under a launcher */
	const char *cwd;
	int fd[3];                /* -1: /dev/null */
	enum confine_backend backend;  /* resolved: never AUTO */
	const struct policy *policy;
	const struct landlock_plan *landlock;
	const struct seccomp_prog *seccomp;
	const struct confine_limits *limits;
	bool rlimit_nproc;        /* processes bound by RLIMIT_NPROC, not a cgroup */
	const char *remove_root;  /* a fresh root the shepherd removes on request */
	int cg_procs[3];          /* cgroup.procs to join first, or -1 */
	int cg_dir;               /* the v2 cgroup to be born in, or -1 */
};

_Noreturn void child_exec(const struct child_plan *p, int errfd);

/* Decodes an error record; returns the step, fills *err. */
enum confine_step child_err_decode(const unsigned char rec[CHILD_ERR_LEN],
    int *err);

#endif
