/*
 * The plan of one job, built before anything runs: whose job it is, its
 * paths as that user reaches them, the backend's availability, cgroups,
 * the fresh root and the private tmp, the environment to add, the
 * Seatbelt argv. Everything that can refuse a job refuses it here, before
 * the shepherd is forked. The plans are made from what the helper
 * learned of the machine once (struct job_env: env.h).
 */
#ifndef CONFINE_PLAN_H
#define CONFINE_PLAN_H

#include <stdbool.h>
#include <sys/stat.h>

#include "helper/engine/child.h"
#include "helper/backend/ident.h"
#include "helper/engine/job.h"
#include "helper/backend/policy.h"
#ifdef __linux__
#include "helper/backend/landlock.h"
#endif

/* Whom a root job runs as where no namespace can be made (plan->bare). */
#define BARE_UID 65534

/* Everything the shepherd and the child need, built before the fork. */
struct plan {
	struct child_plan child;
	struct policy policy;
#ifdef __linux__
	struct landlock_plan landlock;
#endif
	char *scratch;
	char *devices[SPEC_MAX_DEVICES];
	size_t ndevices;
	char *readable[SPEC_MAX_READABLE];  /* the spec's, canonical */
	size_t nreadable;
	const char **reads;    /* those and the system trees: the policy's */
	const char *launcher;  /* seatbelt: checked, its argv built last */
	char **launcher_argv;
	bool fresh_made;       /* scratch is a directory we made */
	struct stat root_st;   /* the scratch root as checked */
	char *tmp;             /* the private tmp, made, or NULL */
	struct stat tmp_st;
	bool tmp_overlay;      /* its /tmp: the host's beneath the private */
	bool tmp_ahead;        /* tmp is the oldest prepared init's, with
	                          that overlay made (prepared.h): not ours
	                          to remove if the job is refused here */
	char *keep[2];         /* the cwd and the program's directory, to see
	                          again beneath /tmp, or NULL */
	struct stat keep_st[2];
	char **envp;           /* the environment with what was added, or NULL */
	char *added[2];        /* its "TMPDIR=..." and "HOME=..." */
	bool becomes;          /* the job runs as become, not as the helper */
	bool bare;             /* Linux, no namespace at all: no view, the
	                          metadata waived (CONFINE_WAIVE_METADATA) */
	struct ident become;
	const char *argv0[2];  /* the argv of a spec that gives none */
	enum op op;            /* refused: the call that could not be made */
	int op_err;            /* and its errno */
};

/*
 * Whether the job has namespaces of its own, under an init that makes
 * them (ns.h): where the helper can make them, for a Landlock job. What
 * the plan checks is checked for that, and job.c starts it so then.
 */
bool plan_own_namespaces(const struct plan *p, const struct job_env *env);

/*
 * Every check that can refuse the job; nothing is written by it. Returns
 * 0, or -errno with *why (see job_start). Then p->child is the job's
 * process as it will be set up, whoever starts it (job.c; the
 * benchmark's floors), with its session, and its init where it has
 * namespaces of its own (in_init), once plan_root (and, for a helper's
 * job, plan_limits) has added what they make.
 */
int plan_build(struct plan *p, const struct confine_spec *s,
    const struct job_env *env, const struct ident *peer, const char **why);

/* The job's cgroups, made in j, and how its process count is bounded. */
int plan_limits(struct plan *p, struct job *j, const struct confine_spec *s,
    const struct job_env *env, const char **why);

/*
 * What is made for the job, as its user, once nothing else can refuse
 * it: the fresh root, the private tmp; then its environment and the
 * launcher's argv. On failure what was made is the caller's to remove
 * (fresh_made, tmp).
 */
int plan_root(struct plan *p, const struct confine_spec *s,
    const struct job_env *env, const char **why);

void plan_free(struct plan *p);

#endif
