#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include "helper/engine/env.h"
#include "helper/engine/plan.h"
#ifdef __linux__
#include "helper/backend/mountns.h"
#include "helper/backend/ns.h"
#include "helper/backend/supervise.h"
#endif
#include "src/core/sigpipe.h"
#include "src/core/spec.h"

/* The helper's $TMPDIR if it names a directory, else /tmp: canonical. */
static char *
tmp_base(void)
{
	const char *t = getenv("TMPDIR");
	struct stat st;
	char *base;

	base = t != NULL && t[0] == '/' ? realpath(t, NULL) : NULL;
	if (base == NULL || stat(base, &st) != 0 || !S_ISDIR(st.st_mode)) {
		free(base);
		base = realpath("/tmp", NULL);
	}
	return base;
}

#ifdef __linux__
static bool
listed(char *const *v, size_t n, const char *s)
{
	while (n-- > 0)
		if (strcmp(v[n], s) == 0)
			return true;
	return false;
}

/* 0, or -ENOMEM; a path this machine lacks is left out. */
static int
add_sysread(struct sysreads *sr, const char *path, size_t cap)
{
	char *c = realpath(path, NULL);

	if (c == NULL)
		return errno == ENOMEM ? -ENOMEM : 0;
	if (sr->n == cap || listed(sr->path, sr->n, c))
		free(c);
	else
		sr->path[sr->n++] = c;
	return 0;
}

static void
sysreads_clear(struct sysreads *sr)
{
	while (sr->n > 0)
		free(sr->path[--sr->n]);
	free(sr->path);
	sr->path = NULL;
}

/*
 * The system trees, made at the first job that asks for them (a glob per
 * '*'), then kept. Returns 0, or -ENOMEM: that job is refused, never run
 * short of a tree, and the next one tries again.
 */
static int
sysreads_made(struct sysreads *sr)
{
	const size_t cap = 128;
	const char *const *e;
	glob_t g;
	size_t i;
	int rc = 0;

	if (sr == NULL)
		return -ENOMEM;
	if (sr->path != NULL)
		return 0;
	if ((sr->path = calloc(cap, sizeof(*sr->path))) == NULL)
		return -ENOMEM;
	for (e = policy_system_reads; *e != NULL && rc == 0; e++) {
		if (strchr(*e, '*') == NULL) {
			rc = add_sysread(sr, *e, cap);
			continue;
		}
		switch (glob(*e, GLOB_NOSORT, NULL, &g)) {
		case 0:
			for (i = 0; i < g.gl_pathc && rc == 0; i++)
				rc = add_sysread(sr, g.gl_pathv[i], cap);
			globfree(&g);
			break;
		case GLOB_NOSPACE:
			rc = -ENOMEM;
			break;
		default:
			break;  /* none here */
		}
	}
	if (rc != 0)
		sysreads_clear(sr);
	return rc;
}
#endif

#ifdef __linux__
/*
 * Jobs without a shepherd: where a v2 cgroup with cgroup.kill holds each
 * job, and we can be the subreaper that collects its orphans. In a build
 * for the tests only (//:test_switches), not with CONFINE_SHEPHERD=1 in
 * our environment: the shepherd's path, kept for machines without such a
 * cgroup, to be tested where there is one. No host's environment chooses
 * a production helper's path.
 */
static bool
direct_possible(const struct cgroup_env *cg)
{
#ifdef CONFINE_TEST_SWITCHES
	const char *force = getenv("CONFINE_SHEPHERD");

	if (force != NULL && strcmp(force, "1") == 0)
		return false;
#endif
	if (cg->v2 < 0 || !cg->v2_kill)
		return false;
	return prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0;
}
#endif

#ifdef __linux__
/*
 * Whether a job could still have a mount namespace (mountns.h: root's, or
 * one in a user namespace of its own): tried in a child, once.
 */
static bool
view_probe(struct job_env *env)
{
	enum op op = OP_NONE;
	int status, rc;
	pid_t pid;

	env->view_op = OP_UNSHARE_MOUNT;
	/* The child may make a user namespace: one thread (sigpipe.h). */
	pid = sigpipe_clone(0);
	if (pid == 0) {
		/* Its errno, and whether the user namespace's call failed. */
		rc = mountns_unshare(&op);
		_exit(rc == 0 ? 0 : (-rc < 128 ? -rc : EIO) |
		    (op == OP_UNSHARE_USER ? 128 : 0));
	}
	if (pid < 0) {
		env->view_err = -errno;
		return false;
	}
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (!WIFEXITED(status)) {
		env->view_err = -EIO;
		return false;
	}
	env->view_err = -(WEXITSTATUS(status) & 127);
	if (WEXITSTATUS(status) & 128)
		env->view_op = OP_UNSHARE_USER;
	return env->view_err == 0;
}

/*
 * Whether each job can have namespaces of its own. In a build for the
 * tests only (//:test_switches), not with CONFINE_NO_NAMESPACES=1 in our
 * environment: the path of machines that cannot, to be tested where they
 * can.
 */
static bool
ns_switched_off(void)
{
#ifdef CONFINE_TEST_SWITCHES
	const char *off = getenv("CONFINE_NO_NAMESPACES");

	return off != NULL && strcmp(off, "1") == 0;
#else
	return false;
#endif
}

/*
 * The first job's init prepared ahead, to say whether any can be, and
 * whether it can make an overlay of /tmp (for a private tmp of its own in
 * the tmp base, which its job may then have): made at once, so that it
 * prepares while the rest of the helper's start goes on; its errno, or 0.
 */
static int
first_start(const struct job_env *env, struct prepared *first, bool tmp_ahead)
{
	struct prepared_pool pp;

	memset(&pp, 0, sizeof(pp));
	pp.userns = env->self.uid != 0;
	pp.uid = env->self.uid;
	pp.gid = env->self.gid;
	pp.sys = &job_sys_real;
	pp.tmp_base = tmp_ahead ? env->tmp_base : NULL;
	return prepared_make(first, &pp, true);
}

static void
ns_possible(struct job_env *env, struct prepared *first, int first_err)
{
	int sup = 1;  /* not asked */

	env->tmp_overlay_err = -ENOTSUP;
	if (ns_switched_off()) {
		env->ns_err = -ENOTSUP;
		env->view_ok = view_probe(env);
		return;
	}
	/*
	 * Sockets of its own where its init can supervise their calls: asked
	 * while the first init prepares.
	 */
	if (first_err == 0)
		sup = sup_probe();
	if (first_err != 0) {
		env->ns_err = first_err;
		env->ns_op = OP_CLONE_INIT;
	} else {
		env->ns_err = prepared_result(first, &env->ns_op,
		    &env->tmp_overlay_err);
	}
	env->ns = env->ns_err == 0;
	env->sup_ok = env->ns && sup == 0;
	env->view_ok = env->ns || view_probe(env);
	if (!env->ns)
		env->tmp_overlay_err = -ENOTSUP;
	env->tmp_overlay_ok = env->tmp_overlay_err == 0;
}
#endif

/*
 * first NULL: for jobs that confine nothing (job_env_init_unconfined),
 * whose plan reads none of what the first init and the probes would say.
 */
static int
env_init(struct job_env *env, struct prepared *first, bool tmp_ahead)
{
#ifdef __linux__
	int first_err = 0;
#endif

	memset(env, 0, sizeof(*env));
	env->self_err = ident_self(&env->self);
	env->tmp_base = tmp_base();
#ifdef __linux__
	env->landlock_abi = landlock_abi();
	seccomp_program(SECCOMP_SHARED, &env->seccomp);
	seccomp_program(SECCOMP_OWN, &env->seccomp_own);
	seccomp_program(SECCOMP_OWN_NET, &env->seccomp_own_net);
	/* After the programs: the init's copy of our memory must have them. */
	if (first != NULL && !ns_switched_off())
		first_err = first_start(env, first, tmp_ahead);
	cgroup_env_init(&env->cg);
	if (first != NULL) {
		ns_possible(env, first, first_err);
	} else {
		env->ns_err = env->view_err = env->tmp_overlay_err = -ENOTSUP;
		env->ns_op = OP_CLONE_INIT;
		env->view_op = OP_UNSHARE_MOUNT;
	}
	/* A job with namespaces has an init of its own: never direct. */
	env->direct = !env->ns && direct_possible(&env->cg);
	env->sysreads = calloc(1, sizeof(*env->sysreads));
	if (env->sysreads == NULL)
		return -ENOMEM;
#else
	(void)first;
	(void)tmp_ahead;
	env->landlock_abi = -ENOSYS;
#endif
	return 0;
}

int
job_env_init(struct job_env *env)
{
#ifdef __linux__
	struct prepared first;
	int rc = job_env_init_ahead(env, &first, true);

	/* Here the first init only says what can be made. */
	if (first.pid > 0)
		prepared_discard(&first);
	return rc;
#else
	return env_init(env, NULL, false);
#endif
}

#ifdef __linux__
int
job_env_init_ahead(struct job_env *env, struct prepared *first,
    bool tmp_ahead)
{
	first->pid = -1;
	first->ctl = -1;
	first->arena = NULL;
	first->tmp = NULL;
	return env_init(env, first, tmp_ahead);
}

int
job_env_init_unconfined(struct job_env *env)
{
	return env_init(env, NULL, false);
}
#endif

int
job_env_guard(struct job_env *env, pid_t *pid, bool one_job)
{
#ifdef __linux__
	int fd;

	if (!env->direct)
		return -ENOTSUP;
	fd = one_job ? cgroup_guard_shared(&env->cg, pid) :
	    cgroup_guard(&env->cg, pid);
	if (fd < 0)
		env->direct = false;
	return fd;
#else
	(void)env;
	(void)pid;
	(void)one_job;
	return -ENOTSUP;
#endif
}

void
job_env_trash(struct job_env *env)
{
	if (env->trash == NULL)
		env->trash = trash_open(env->tmp_base);
}

size_t
job_env_tidy(const struct job_env *env, size_t max)
{
	size_t left = trash_tidy(env->trash, max);

#ifdef __linux__
	left += cgroup_env_tidy(&env->cg, max);
#endif
	return left;
}

void
job_env_fini(struct job_env *env)
{
	trash_close(env->trash);
	env->trash = NULL;
	free(env->tmp_base);
	env->tmp_base = NULL;
#ifdef __linux__
	cgroup_env_fini(&env->cg);
	if (env->sysreads != NULL)
		sysreads_clear(env->sysreads);
	free(env->sysreads);
	env->sysreads = NULL;
#endif
	(void)env;
}

#ifdef __linux__
int
job_env_sysreads(const struct job_env *env)
{
	return sysreads_made(env->sysreads);
}
#endif
