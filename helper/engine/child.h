/*
 * The job's process between fork and exec. In this order, failing closed:
 * default signal dispositions and an empty mask; the job's cgroups joined
 * (before it could fork); its stdio in place and every other descriptor
 * closed; its client's identity taken (a root helper's job for another
 * user); on Linux, its own read-only view of the file system and no
 * capability left; cwd; Landlock and seccomp; a launcher's program
 * checked; rlimits, last (so that a low RLIMIT_NOFILE cannot starve the
 * setup); exec with exactly the given environment. (The process group is
 * the shepherd's, or with own_session the job's own session and group,
 * made first of all.) A failure is written to errfd as {step, the call
 * (helper/backend/op.h), errno}; EOF on its read end means exec happened.
 */
#ifndef CONFINE_CHILD_H
#define CONFINE_CHILD_H

#include <stdbool.h>
#include <sys/types.h>

#include "confine/confine.h"
#include "helper/backend/ident.h"
#include "helper/backend/op.h"
#include "helper/backend/policy.h"
#ifdef __linux__
#include "helper/backend/mountns.h"
#endif

#define CHILD_ERR_LEN 12

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
	const struct ident *become;   /* the client's, when not the helper's */
	const struct ident *self;     /* the helper's, with become */
#ifdef __linux__
	struct mountns_view view;     /* Landlock: the job's file system */
#endif
	const struct landlock_plan *landlock;
	const struct seccomp_prog *seccomp;
	const struct confine_limits *limits;
	bool rlimit_nproc;        /* processes bound by RLIMIT_NPROC, not a cgroup */
	bool subreaper;           /* the shepherd collects the job's orphans */
	bool own_session;         /* the job leads a session (and group) of its
	                             own, made first of all: a terminal it is
	                             lent is another session's, never its
	                             controlling one */
	bool bare;                /* no namespace could be made: no view
	                             (plan.h), Landlock and seccomp only */
	bool in_init;             /* started by its init (ns.h), which made
	                             its namespaces and its view, as its
	                             client where it has one: only the rest
	                             is the job's own to do */
	bool init_userns;         /* its init in a user namespace of its own,
	                             mapping the helper's ids, which are: */
	uid_t init_uid;
	gid_t init_gid;
	bool die_with_parent;     /* SIGKILL when its parent dies: */
	pid_t parent;             /* the shepherd, which alone signals it */
	const char *remove_root;  /* a fresh root the shepherd removes on request */
	const char *remove_tmp;   /* the private tmp it removes with it */
	int cg_procs[3];          /* cgroup.procs to join first, or -1 */
	int cg_dir;               /* the v2 cgroup to be born in, or -1 */
	bool files_shared;        /* child_start's: the job shares its
	                             starter's descriptor table until it
	                             places its stdio, and names its filter's
	                             listener there ('S'), not handed over
	                             ('L') */
};

_Noreturn void child_exec(const struct child_plan *p, int errfd);

/*
 * Starts a process that runs child_exec(p, errfd): born in p->cg_dir where
 * the kernel can, and (clone3 with CLONE_VFORK) returning only once it has
 * exec'd or failed. The pid, or -1 with errno.
 */
pid_t child_start(const struct child_plan *p, int errfd);

/* Decodes an error record; returns the step, fills *op and *err. */
enum confine_step child_err_decode(const unsigned char rec[CHILD_ERR_LEN],
    enum op *op, int *err);

#endif
