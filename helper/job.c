#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "helper/job.h"
#include "src/clock.h"
#include "src/fd.h"
#include "src/proc.h"
#include "helper/policy.h"
#ifdef __linux__
#include "helper/landlock.h"
#endif

#define MS 1000000LL
#define RETRY_NS (100 * MS)      /* resend SIGKILL while the exit is awaited */
#define DRAIN_NS (15000 * MS)    /* give up proving emptiness; > a sweep */
#define POLL_FIRST_NS (1 * MS)
#define POLL_MAX_NS (64 * MS)

static int
real_kill(pid_t pid, int sig)
{
	return kill(pid, sig);
}

static pid_t
real_wait4(pid_t pid, int *status, int options, struct rusage *ru)
{
	return wait4(pid, status, options, ru);
}

static int
real_waitid(idtype_t type, id_t id, siginfo_t *si, int options)
{
	return waitid(type, id, si, options);
}

const struct job_sys job_sys_real = {
	.kill = real_kill,
	.wait4 = real_wait4,
	.waitid = real_waitid,
	.in_group = NULL,
};

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

int
job_env_init(struct job_env *env)
{
	memset(env, 0, sizeof(*env));
	env->self_err = ident_self(&env->self);
	env->tmp_base = tmp_base();
#ifdef __linux__
	env->landlock_abi = landlock_abi();
	seccomp_program(&env->seccomp);
	cgroup_env_init(&env->cg);
	env->sysreads = calloc(1, sizeof(*env->sysreads));
	if (env->sysreads == NULL)
		return -ENOMEM;
#else
	env->landlock_abi = -ENOSYS;
#endif
	return 0;
}

void
job_env_fini(struct job_env *env)
{
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
	char *keep[2];         /* the cwd and the program's directory, to see
	                          again beneath /tmp, or NULL */
	struct stat keep_st[2];
	char **envp;           /* the environment with what was added, or NULL */
	char *added[2];        /* its "TMPDIR=..." and "HOME=..." */
	bool becomes;          /* the job runs as become, not as the helper */
	struct ident become;
	const char *argv0[2];  /* the argv of a spec that gives none */
};

static char *const empty_env[] = { NULL };

static void
plan_free(struct plan *p)
{
	size_t i;

	free(p->scratch);
	for (i = 0; i < p->ndevices; i++)
		free(p->devices[i]);
	for (i = 0; i < p->nreadable; i++)
		free(p->readable[i]);
	free(p->reads);
	free(p->launcher_argv);
	free(p->tmp);
	free(p->keep[0]);
	free(p->keep[1]);
	free(p->envp);
	free(p->added[0]);
	free(p->added[1]);
}

static enum confine_backend
resolve(enum confine_backend b)
{
	if (b != CONFINE_BACKEND_AUTO)
		return b;
#ifdef __APPLE__
	return CONFINE_BACKEND_SEATBELT;
#else
	return CONFINE_BACKEND_LANDLOCK;
#endif
}

#define REFUSE(err, what) do { *why = (what); return (err); } while (0)

/* path resolved, in *out (the caller frees it), and what it is. */
static int
canonical(const char *path, char **out, struct stat *st)
{
	*out = realpath(path, NULL);
	if (*out == NULL)
		return -errno;
	return stat(*out, st) == 0 ? 0 : -errno;
}

static int
canonical_dir(const char *path, char **out, struct stat *st)
{
	int rc = canonical(path, out, st);

	return rc != 0 ? rc : S_ISDIR(st->st_mode) ? 0 : -ENOTDIR;
}

/* What the job's user may do to path: checked as that user (ident_enter). */
static int
permitted(const char *path, int mode)
{
	return faccessat(AT_FDCWD, path, mode, AT_EACCESS) == 0 ? 0 : -errno;
}

/* Replaces the parent *path with a fresh directory made beneath it. */
static int
make_fresh(char **path, const char *prefix)
{
	size_t n = strlen(*path) + strlen(prefix) + sizeof("/.XXXXXX");
	char *fresh = malloc(n);

	if (fresh == NULL)
		return -ENOMEM;
	snprintf(fresh, n, "%s/%s.XXXXXX", *path, prefix);
	if (mkdtemp(fresh) == NULL) {
		free(fresh);
		return -errno;
	}
	free(*path);
	*path = fresh;
	return 0;
}

/* A tree or file the job's user may read (and, a directory, search). */
static int
canonical_readable(const char *path, char **out)
{
	struct stat st;
	int rc = canonical(path, out, &st);

	return rc != 0 ? rc :
	    permitted(*out, S_ISDIR(st.st_mode) ? R_OK | X_OK : R_OK);
}

static int
canonical_device(const char *path, char **out)
{
	struct stat st;
	int rc = canonical(path, out, &st);

	if (rc != 0)
		return rc;
	if (!S_ISCHR(st.st_mode) && !S_ISBLK(st.st_mode))
		return -EINVAL;
	return permitted(*out, W_OK);
}

/* Whether the backend can confine here; nothing is made yet. */
static int
plan_backend(struct plan *p, const struct confine_spec *s, const struct job_env *env,
    const char **why)
{
	const char *launcher = s->launcher ? s->launcher : SPEC_DEFAULT_LAUNCHER;
	struct stat st;

	switch (p->child.backend) {
	case CONFINE_BACKEND_LANDLOCK:
#ifdef __linux__
		if (env->landlock_abi < 0)
			REFUSE(-ENOTSUP, "Landlock is not available in this kernel");
		if (landlock_plan(env->landlock_abi, &p->landlock) != 0)
			REFUSE(-ENOTSUP, "the kernel's Landlock ABI is too old (6 needed)");
		if (env->seccomp.count == 0)
			REFUSE(-ENOTSUP, "the seccomp filter could not be built");
		p->child.landlock = &p->landlock;
		p->child.seccomp = &env->seccomp;
		return 0;
#else
		(void)env;
		REFUSE(-ENOTSUP, "Landlock exists only on Linux");
#endif
	case CONFINE_BACKEND_SEATBELT:
		if (stat(launcher, &st) != 0 || !S_ISREG(st.st_mode))
			REFUSE(-ENOTSUP, "the Seatbelt launcher is absent or not a regular file");
		p->launcher = launcher;
		return 0;
	case CONFINE_BACKEND_NONE:
		return 0;
	case CONFINE_BACKEND_AUTO:
	default:
		REFUSE(-EINVAL, "unknown backend");
	}
}

/*
 * The paths of the spec, as the job's user would reach them: canonical,
 * the scratch root a directory it may write (or make a fresh root in),
 * each device one it may write.
 */
static int
plan_paths(struct plan *p, const struct confine_spec *s, const char **why)
{
	size_t i;
	int rc;

	if (s->scratch != NULL) {
		rc = canonical_dir(s->scratch, &p->scratch, &p->root_st);
		if (rc != 0)
			REFUSE(rc, "the scratch root must be an existing directory");
		if ((rc = permitted(p->scratch, W_OK | X_OK)) != 0)
			REFUSE(rc, (s->flags & CONFINE_FRESH_SCRATCH) ?
			    "the job's user may not make "
			    "a fresh root in that scratch parent" : "the job's user "
			    "may not write that scratch root");
	}
	for (i = 0; s->devices != NULL && s->devices[i] != NULL; i++) {
		rc = canonical_device(s->devices[i], &p->devices[i]);
		p->ndevices = i + 1;
		if (rc == -EINVAL || rc == -ENOENT)
			REFUSE(rc, "a writable device must be an existing device node");
		if (rc != 0)
			REFUSE(rc, "a writable device must be one the job's user may write");
	}
	for (i = 0; s->readable != NULL && s->readable[i] != NULL; i++) {
		rc = canonical_readable(s->readable[i], &p->readable[i]);
		p->nreadable = i + 1;
		if (rc == -ENOENT || rc == -ENOTDIR)
			REFUSE(rc, "a readable tree must exist");
		if (rc != 0)
			REFUSE(rc, "a readable tree must be one the job's user may read");
	}
	return 0;
}

/*
 * The trees the job may read, when its reads are narrowed: the spec's,
 * and with Landlock the system trees (Seatbelt's are the profile's own).
 */
static int
plan_reads(struct plan *p, const struct confine_spec *s, const struct job_env *env)
{
	size_t i, n = 0, nsys = 0;
	int rc;

	if (!spec_narrow(s))
		return 0;
#ifdef __linux__
	if ((s->flags & CONFINE_READ_SYSTEM) &&
	    p->child.backend == CONFINE_BACKEND_LANDLOCK) {
		if ((rc = sysreads_made(env->sysreads)) != 0)
			return rc;
		nsys = env->sysreads->n;
	}
#else
	(void)rc;
	(void)env;
#endif
	p->reads = calloc(p->nreadable + nsys + 1, sizeof(*p->reads));
	if (p->reads == NULL)
		return -ENOMEM;
	for (i = 0; i < p->nreadable; i++)
		p->reads[n++] = p->readable[i];
#ifdef __linux__
	for (i = 0; i < nsys; i++)
		p->reads[n++] = env->sysreads->path[i];
#endif
	p->policy.read_narrow = true;
	p->policy.read_system = (s->flags & CONFINE_READ_SYSTEM) != 0;
	p->policy.readable = p->reads;
	p->policy.nreadable = n;
	return 0;
}

/* Whose job it is: refused unless this helper can run it as peer. */
static int
plan_ident(struct plan *p, const struct job_env *env, const struct ident *peer,
    const char **why)
{
	int rc;

	if (peer == NULL)
		return 0;
	if (env->self_err != 0)
		REFUSE(-ENOTSUP, "the helper could not read its own credentials");
	if ((rc = ident_admit(&env->self, peer, &p->becomes, why)) != 0)
		return rc;
	if (p->becomes) {
		p->become = *peer;
		p->child.become = &p->become;
		p->child.self = &env->self;
	}
	return 0;
}

/* Every check that can refuse the job; nothing is written by it. */
static int
plan_build(struct plan *p, const struct confine_spec *s, const struct job_env *env,
    const struct ident *peer, const char **why)
{
	int rc, k;

	memset(p, 0, sizeof(*p));
	if ((rc = spec_check(s, why)) != 0)
		return rc;
	if ((rc = plan_ident(p, env, peer, why)) != 0)
		return rc;
	p->child.backend = resolve(s->backend);
	if (p->becomes && (rc = ident_enter(&p->become, &env->self)) != 0)
		REFUSE(rc, "the helper could not take its client's credentials");
	rc = plan_paths(p, s, why);
	if (p->becomes)
		ident_leave(&env->self);
	if (rc != 0)
		return rc;
	p->policy.devices = (const char *const *)p->devices;
	p->policy.ndevices = p->ndevices;
	if ((rc = plan_reads(p, s, env)) != 0)
		REFUSE(rc, "no memory for the job's readable trees");
	p->child.path = s->exe;
	p->child.exe = s->exe;
	p->argv0[0] = s->exe;
	p->child.argv = (char *const *)(uintptr_t)(spec_argv_given(s) ?
	    s->argv : p->argv0);
	p->child.envp = s->envp != NULL ? (char *const *)(uintptr_t)s->envp :
	    empty_env;
	for (k = 0; k < 3; k++)
		p->child.fd[k] = spec_stdio(s, k);
	p->child.policy = &p->policy;
	p->child.limits = &s->limits;
	p->child.cg_procs[0] = p->child.cg_procs[1] = p->child.cg_procs[2] = -1;
	p->child.cg_dir = -1;
	return plan_backend(p, s, env, why);
}

/* Whether path is dir or beneath it (both canonical). */
static bool
within(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	if (strcmp(dir, "/") == 0)
		return true;
	return strncmp(path, dir, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

static bool
env_has(const struct confine_spec *s, const char *name)
{
	size_t i, n = strlen(name);

	for (i = 0; s->envp != NULL && s->envp[i] != NULL; i++)
		if (strncmp(s->envp[i], name, n) == 0 && s->envp[i][n] == '=')
			return true;
	return false;
}

/*
 * The environment given, and what the spec asks be added to it: TMPDIR
 * (the private tmp) and HOME (the scratch root), as the job sees them,
 * each unless the environment has it already.
 */
static int
plan_env(struct plan *p, const struct confine_spec *s)
{
	const char *names[2] = { "TMPDIR", "HOME" };
	const char *values[2] = { NULL, NULL };
	size_t i, k, n, envc = spec_count(s->envp);

	if ((s->flags & CONFINE_SET_TMPDIR) && p->policy.tmp != NULL &&
	    !env_has(s, "TMPDIR"))
		values[0] = p->policy.tmp;
	if ((s->flags & CONFINE_SET_HOME) && p->scratch != NULL &&
	    !env_has(s, "HOME"))
		values[1] = p->scratch;
	if (values[0] == NULL && values[1] == NULL)
		return 0;
	if ((p->envp = calloc(envc + 3, sizeof(*p->envp))) == NULL)
		return -ENOMEM;
	for (i = 0; i < envc; i++)
		p->envp[i] = (char *)(uintptr_t)s->envp[i];
	for (k = 0; k < 2; k++) {
		if (values[k] == NULL)
			continue;
		n = strlen(names[k]) + strlen(values[k]) + 2;
		if ((p->added[k] = malloc(n)) == NULL)
			return -ENOMEM;
		snprintf(p->added[k], n, "%s=%s", names[k], values[k]);
		p->envp[i++] = p->added[k];
	}
	p->child.envp = p->envp;
	return 0;
}

/*
 * A tree beneath the host's /tmp the job must still see: the cwd, or the
 * directory of the program. Not when it is the scratch root's, or the
 * other kept one's, or cannot be found (the job's own step then fails).
 */
static void
plan_keep(struct plan *p, int i, const char *path, bool dir_of)
{
	char *c = path != NULL ? realpath(path, NULL) : NULL, *slash;

	if (c != NULL && dir_of && (slash = strrchr(c, '/')) != NULL)
		*slash = '\0';
	if (c == NULL || !within(c, "/tmp") || strcmp(c, "/tmp") == 0 ||
	    within(c, p->scratch) || (i == 1 && p->keep[0] != NULL &&
	    within(c, p->keep[0])) || stat(c, &p->keep_st[i]) != 0) {
		free(c);
		return;
	}
	p->keep[i] = c;
}

/*
 * The job's private temporary directory, made as its user beneath the
 * helper's tmp base. Where the job has a view of its own (Linux) it is
 * its /tmp too, unless the scratch root is /tmp or holds it; a cwd beneath
 * the host's /tmp, outside the root, is seen again there, read-only.
 */
static int
plan_tmp(struct plan *p, const struct confine_spec *s, const struct job_env *env,
    const char **why)
{
	bool view = p->child.backend == CONFINE_BACKEND_LANDLOCK;
	bool over = view && p->scratch != NULL && !within("/tmp", p->scratch);
	size_t i;
	int rc;

	if (s->flags & CONFINE_NO_TMP)
		return 0;
	/* Its /tmp is the private one: the host's trees there are not seen. */
	for (i = 0; over && i < p->nreadable; i++)
		if (within(p->readable[i], "/tmp") &&
		    !within(p->readable[i], p->scratch))
			REFUSE(-EINVAL, "a readable tree beneath /tmp is out of the "
			    "job's sight, its /tmp being private: use CONFINE_NO_TMP, "
			    "or a tree elsewhere");
	if (env->tmp_base == NULL)
		REFUSE(-ENOTSUP, "no directory to make the job's private tmp in "
		    "(the helper's TMPDIR or /tmp)");
	rc = p->becomes ? ident_enter(&p->become, &env->self) : 0;
	if (rc == 0) {
		rc = (p->tmp = strdup(env->tmp_base)) == NULL ? -ENOMEM :
		    make_fresh(&p->tmp, "confine-tmp");
		if (rc != 0) {
			free(p->tmp);
			p->tmp = NULL;
		} else if (stat(p->tmp, &p->tmp_st) != 0) {
			rc = -errno;
		}
		if (rc == 0 && over) {
			plan_keep(p, 0, s->cwd, false);
			plan_keep(p, 1, s->exe, true);
		}
		if (p->becomes)
			ident_leave(&env->self);
	}
	if (rc != 0)
		REFUSE(rc, "no private tmp could be made for the job");
	p->policy.tmp = over ? "/tmp" : p->tmp;
	p->child.remove_tmp = p->tmp;
#ifdef __linux__
	if (view) {
		p->child.view.tmp.path = p->tmp;
		p->child.view.tmp.dev = p->tmp_st.st_dev;
		p->child.view.tmp.ino = p->tmp_st.st_ino;
		p->child.view.over_tmp = over;
		for (i = 0; i < 2; i++) {
			p->child.view.keep[i].path = p->keep[i];
			p->child.view.keep[i].dev = p->keep_st[i].st_dev;
			p->child.view.keep[i].ino = p->keep_st[i].st_ino;
		}
	}
#endif
	return 0;
}

/*
 * The scratch root and what names it. A fresh root is made here, after
 * every check that could refuse the job: a refused job writes nothing.
 */
static int
plan_root(struct plan *p, const struct confine_spec *s, const struct job_env *env,
    const char **why)
{
	int rc;

	if (s->flags & CONFINE_FRESH_SCRATCH) {
		/* The job's user makes it, so that it is theirs. */
		rc = p->becomes ? ident_enter(&p->become, &env->self) : 0;
		if (rc == 0) {
			rc = make_fresh(&p->scratch, "confine");
			/* Made: job_start removes it if anything fails now. */
			p->fresh_made = rc == 0;
			if (rc == 0 && stat(p->scratch, &p->root_st) != 0)
				rc = -errno;
			if (p->becomes)
				ident_leave(&env->self);
		}
		if (rc != 0)
			REFUSE(rc, "no fresh scratch root could be made there");
	}
	p->policy.scratch = p->scratch;
#ifdef __linux__
	p->child.view.root.path = p->scratch;
	p->child.view.root.dev = p->root_st.st_dev;
	p->child.view.root.ino = p->root_st.st_ino;
#endif
	p->child.cwd = s->cwd ? s->cwd : p->scratch ? p->scratch : "/";
	p->child.remove_root = (s->flags & CONFINE_FRESH_SCRATCH) ?
	    p->scratch : NULL;
	if ((rc = plan_tmp(p, s, env, why)) != 0)
		return rc;
	if ((rc = plan_env(p, s)) != 0)
		REFUSE(rc, "no memory for the job's environment");
	if (p->launcher == NULL)
		return 0;
	rc = policy_sbpl_argv(&p->policy, p->launcher, s->exe,
	    (const char *const *)(uintptr_t)p->child.argv,
	    spec_count((const char *const *)(uintptr_t)p->child.argv),
	    &p->launcher_argv);
	if (rc != 0)
		REFUSE(rc, "no memory for the launcher's arguments");
	p->child.path = p->launcher;
	p->child.argv = p->launcher_argv;
	return 0;
}

/*
 * The job's cgroups and how its process count is bounded: by its pids
 * cgroup when there is one, else by RLIMIT_NPROC, which does not bind root.
 */
static int
plan_limits(struct plan *p, struct job *j, const struct confine_spec *s,
    const struct job_env *env, const char **why)
{
#ifdef __linux__
	/* None for the macOS path: as where there are no cgroups. */
	static const struct cgroup_env none = { -1, false, -1, -1, "" };
	const struct cgroup_env *cg = env->group_proof_only ? &none : &env->cg;
	int rc, i;

	p->child.subreaper = !env->group_proof_only;
	/* Refused before any cgroup is made. */
	if (s->limits.processes > 0 && cg->pids < 0) {
		if (geteuid() == 0)
			REFUSE(-ENOTSUP, "a process bound for root needs a pids "
			    "cgroup, not available here");
		p->child.rlimit_nproc = true;
	}
	rc = cgroup_job_create(cg, &j->cg, s->limits.memory,
	    s->limits.processes, why);
	if (rc != 0) {
		if (*why == NULL)
			*why = "the job's cgroups could not be created";
		return rc == -ENOTSUP ? rc : -ENOTSUP;
	}
	for (i = 0; i < CGROUP_JOINS; i++)
		p->child.cg_procs[i] = j->cg.procs[i];
	p->child.cg_dir = j->cg.dir;
	return 0;
#else
	(void)j;
	(void)env;
	if (s->limits.memory > 0)
		REFUSE(-ENOTSUP, "a memory bound needs a cgroup");
	p->child.rlimit_nproc = true;
	return 0;
#endif
}

static void
release_cgroups(struct job *j)
{
#ifdef __linux__
	cgroup_job_destroy(&j->cg);
#else
	(void)j;
#endif
}

/* SIGKILL to the whole job: its group, and its cgroup if it has one. */
static int
kill_all(struct job *j)
{
	int rc = j->sys->kill(-j->shep, SIGKILL);
	int err = errno;

#ifdef __linux__
	if (j->cg.kill >= 0)
		(void)cgroup_job_kill(&j->cg);
#endif
	errno = err;
	return rc;
}

/* 1 while the job's cgroup has a process, 0 when it has none or no cgroup. */
static int
cgroup_busy(const struct job *j)
{
#ifdef __linux__
	int rc;

	if (j->cg.events < 0)
		return 0;
	rc = cgroup_job_populated(&j->cg);
	return rc == 0 ? 0 : 1;
#else
	(void)j;
	return 0;
#endif
}

static void
result_init(struct confine_result *r, enum confine_backend backend)
{
	memset(r, 0, sizeof(*r));
	r->exit_code = -1;
	r->backend = backend;
}

int
job_start(struct job *j, const struct confine_spec *s, const struct job_env *env,
    const struct ident *peer, int64_t now, const char **why)
{
	struct plan p;
	int sv[2] = { -1, -1 }, rc;
	pid_t pid;

	memset(j, 0, sizeof(*j));
	j->ctl = -1;
	*why = NULL;
#ifdef __linux__
	memset(&j->cg, 0, sizeof(j->cg));
	j->cg.v2 = j->cg.memory = j->cg.pids = j->cg.events = j->cg.kill = -1;
	j->cg.dir = -1;
	j->cg.procs[0] = j->cg.procs[1] = j->cg.procs[2] = -1;
#endif
	rc = plan_build(&p, s, env, peer, why);
	if (rc == 0)
		rc = plan_limits(&p, j, s, env, why);
	if (rc == 0 && (rc = fd_socketpair(sv)) != 0)
		*why = "no socketpair for the shepherd";
	if (rc == 0)
		rc = plan_root(&p, s, env, why);
	if (rc != 0) {
		if (p.fresh_made)
			(void)rmdir(p.scratch);
		if (p.tmp != NULL)
			(void)rmdir(p.tmp);
		plan_free(&p);
		release_cgroups(j);
		fd_closep(&sv[0]);
		fd_closep(&sv[1]);
		return rc;
	}
	j->sys = env->sys ? env->sys : &job_sys_real;
	j->group_only = env->group_proof_only;
	j->unwatch = env->unwatch;
	j->unwatch_arg = env->unwatch_arg;
	pid = fork();
	if (pid == 0) {
		close(sv[0]);
		shepherd_main(&p.child, sv[1], j->sys);
	}
	rc = pid < 0 ? -errno : 0;
	close(sv[1]);
	result_init(&j->result, p.child.backend);
	/*
	 * The root and the tmp the job writes into, for the host: the plan's,
	 * taken (a copy that failed would lose them, and their removal).
	 */
	j->fresh = (s->flags & CONFINE_FRESH_SCRATCH) != 0;
	j->root = p.scratch;
	j->tmp = p.tmp;
	p.scratch = p.tmp = NULL;
	if (rc != 0 && p.fresh_made)
		(void)rmdir(j->root);
	if (rc != 0 && j->tmp != NULL)
		(void)rmdir(j->tmp);
	plan_free(&p);
#ifdef __linux__
	/* The shepherd has them now; ours would keep nothing alive but fds. */
	for (int i = 0; i < CGROUP_JOINS; i++)
		fd_closep(&j->cg.procs[i]);
	fd_closep(&j->cg.dir);
#endif
	if (rc != 0) {
		close(sv[0]);
		release_cgroups(j);
		*why = "fork failed";
		return rc;
	}
	(void)fd_nonblock(sv[0]);
	j->ctl = sv[0];
	j->shep = pid;
	j->result.pgid = pid;
	j->phase = JOB_STARTING;
	settle_init(&j->settle);
	j->grace_ns = s->grace_ms * MS;
	j->t_deadline = s->deadline_ms > 0 ? now + s->deadline_ms * MS : INT64_MAX;
	j->t_grace = j->t_retry = j->t_poll = INT64_MAX;
	return 0;
}

void
job_release(struct job *j)
{
	free(j->root);
	j->root = NULL;
	free(j->tmp);
	j->tmp = NULL;
}

const char *
job_root(const struct job *j)
{
	return j->root ? j->root : "";
}

const char *
job_tmp(const struct job *j)
{
	return j->tmp ? j->tmp : "";
}

int
job_fd(const struct job *j)
{
	return j->ctl;
}

pid_t
job_shepherd(const struct job *j)
{
	return j->shep;
}

int64_t
job_timer(const struct job *j)
{
	int64_t t = j->t_deadline;

	if (j->phase == JOB_DONE)
		return INT64_MAX;
	if (j->t_grace < t)
		t = j->t_grace;
	if (j->t_retry < t)
		t = j->t_retry;
	if (j->t_poll < t)
		t = j->t_poll;
	return t;
}

/* Releases the shepherd and ends the job; the result is what it is. */
static void
complete(struct job *j)
{
	/* A refused job never ran: what was made for it is empty. */
	if (j->events & JOB_EV_REFUSED) {
		if (j->fresh)
			(void)rmdir(j->root);
		if (j->tmp != NULL)
			(void)rmdir(j->tmp);
	}
	/* Releasing the shepherd lets the pgid go: no kill after this. */
	if (j->ctl >= 0 && j->unwatch != NULL)
		j->unwatch(j->unwatch_arg, j->ctl);
	fd_closep(&j->ctl);
	release_cgroups(j);
	j->t_deadline = j->t_grace = j->t_retry = j->t_poll = INT64_MAX;
	j->phase = JOB_DONE;
	if (!(j->events & JOB_EV_REFUSED))
		j->events |= JOB_EV_SETTLED;
}

static void
finish(struct job *j)
{
	struct confine_result *r = &j->result;

	if (!settle_selected(&j->settle))
		settle_select(&j->settle, CONFINE_UNCERTAIN,
		    CONFINE_REASON_WAIT_FAILED, ECHILD, CONFINE_STEP_NONE);
	r->outcome = j->settle.outcome;
	r->reason = j->settle.reason;
	switch (r->reason) {
	case CONFINE_REASON_EXEC:
		r->step = j->settle.step;
		__attribute__((fallthrough));  /* clang reads no comment */
	case CONFINE_REASON_WAIT_FAILED:
	case CONFINE_REASON_KILL_AMBIGUOUS:
		r->error = j->settle.detail;
		break;
	default:
		break;
	}
	if (j->fresh || j->tmp != NULL) {
		bool refused = (j->events & JOB_EV_REFUSED) != 0;
		/* Nothing of the job can still write there (or it never ran). */
		bool idle = refused || (r->outcome != CONFINE_UNCERTAIN &&
		    r->proof != CONFINE_PROOF_NONE);

		r->scratch_kept = j->fresh && !refused;
		r->tmp_kept = j->tmp != NULL && !refused;
		/*
		 * A private tmp the job left empty, and nothing else, goes
		 * here: one rmdir, where the shepherd costs a round trip
		 * (about a fifth of a short job). Only its user or root can
		 * rename it within the helper's own tmp base, so the name is
		 * still ours. Anything in it, and a fresh root, the shepherd
		 * removes as the job's user, off our loop.
		 */
		if (idle && !refused && !j->fresh && rmdir(j->tmp) == 0)
			r->tmp_kept = false;
		else if (idle && j->ctl >= 0 &&
		    write(j->ctl, (char[]){ SHEP_CMD_REMOVE }, 1) == 1) {
			j->phase = JOB_REMOVING;
			j->t_deadline = j->t_grace = j->t_retry = INT64_MAX;
			j->t_poll = INT64_MAX;
			return;
		}
	}
	complete(j);
}

static void
refuse(struct job *j, int err, const char *why)
{
	j->refused = err;
	j->why = why;
	j->events |= JOB_EV_REFUSED;
}

/* Something of the group was left: kill it and watch it empty. */
static void
drain_start(struct job *j, int64_t now)
{
	(void)kill_all(j);
	j->phase = JOB_DRAINING;
	j->t_deadline = j->t_grace = j->t_retry = INT64_MAX;
	j->poll_step = POLL_FIRST_NS;
	j->t_poll = now + j->poll_step;
	j->t_drain_end = now + DRAIN_NS;
}

/* The strongest proof this platform gives once the group is empty. */
static enum confine_proof
proven(const struct job *j)
{
#ifdef __linux__
	if (j->group_only)
		return CONFINE_PROOF_PGID;
	return j->cg.events >= 0 ? CONFINE_PROOF_CGROUP : CONFINE_PROOF_SUBREAPER;
#else
	(void)j;
	return CONFINE_PROOF_PGID;
#endif
}

/* Nothing of the job is left: its group is empty, no leftover is alive. */
static bool
empty(struct job *j)
{
	return !j->sweeping && !cgroup_busy(j) &&
	    j->sys->kill(-j->shep, 0) != 0 && errno == ESRCH;
}

static void
drain_poll(struct job *j, int64_t now)
{
	if (empty(j)) {
		j->result.proof = proven(j);
		finish(j);
		return;
	}
	if (now >= j->t_drain_end) {
		finish(j);  /* proof stays NONE: we could not show it empty */
		return;
	}
	(void)kill_all(j);
	if (j->poll_step < POLL_MAX_NS)
		j->poll_step *= 2;
	j->t_poll = now + j->poll_step;
}

/*
 * The job's own exit is decided: prove the group empty. Only ESRCH proves
 * it; anything else leaves the job Uncertain and the group is killed.
 */
static void
prove(struct job *j, int64_t now)
{
	if (cgroup_busy(j)) {
		/* A process of the job's cgroup outlived it, in its group or not. */
		settle_select(&j->settle, CONFINE_UNCERTAIN,
		    CONFINE_REASON_GROUP_STILL_PRESENT, 0, CONFINE_STEP_NONE);
	} else if (j->sys->kill(-j->shep, 0) == 0) {
		settle_select(&j->settle, CONFINE_UNCERTAIN,
		    CONFINE_REASON_GROUP_STILL_PRESENT, 0, CONFINE_STEP_NONE);
	} else if (errno == ESRCH) {
		if (!j->sweeping) {
			j->result.proof = proven(j);
			finish(j);
			return;
		}
	} else {
		settle_select(&j->settle, CONFINE_UNCERTAIN,
		    CONFINE_REASON_KILL_AMBIGUOUS, errno, CONFINE_STEP_NONE);
	}
	drain_start(j, now);
}

static void
on_exited(struct job *j, const struct shep_rec *r, int64_t now)
{
	struct confine_result *res = &j->result;
	int status = r->status;  /* a copy: macOS's W* macros cast away const */

	res->wall_us = r->wall_us;
	res->user_us = r->user_us;
	res->sys_us = r->sys_us;
	res->max_rss_kib = r->max_rss_kib;
	if (WIFEXITED(status))
		res->exit_code = WEXITSTATUS(status);
	else if (WIFSIGNALED(status))
		res->signal = WTERMSIG(status);
	settle_select_status(&j->settle, r->status);
	/*
	 * Something of the job outlived it, in its group or not (setsid,
	 * double fork): the shepherd, its subreaper, is sweeping it away.
	 */
	if (r->leftovers) {
		settle_select(&j->settle, CONFINE_UNCERTAIN,
		    CONFINE_REASON_GROUP_STILL_PRESENT, 0, CONFINE_STEP_NONE);
		j->sweeping = true;
	}
	prove(j, now);
}

static void stop(struct job *j, enum confine_reason why, int64_t now);

static void
on_record(struct job *j, const struct shep_rec *r, int64_t now)
{
	switch (r->type) {
	case SHEP_FORKED:
		if (j->phase != JOB_STARTING || j->forked)
			break;
		j->forked = true;
		j->result.pid = r->pid;
		if (j->pending != CONFINE_REASON_NONE)
			stop(j, j->pending, now);
		break;
	case SHEP_EXEC_OK:
	case SHEP_EXEC_FAILED:
		if (j->phase != JOB_STARTING)
			break;
		j->result.pid = r->pid;
		j->phase = JOB_RUNNING;
		if (r->type == SHEP_EXEC_OK) {
			j->events |= JOB_EV_STARTED;
		} else if (r->step == CONFINE_STEP_IDENTITY) {
			/* Never as the helper, never where its user may not. */
			refuse(j, r->err > 0 ? -r->err : -EPERM,
			    r->err == EACCES || r->err == EROFS ?
			    "the job's user may not write its scratch root" :
			    "the job could not take its client's uid, gid and groups");
			j->result.error = r->err;
		} else if (r->step == CONFINE_STEP_CONFINE ||
		    r->step == CONFINE_STEP_LIMITS) {
			/* Never run unconfined or unbounded: refused. */
			refuse(j, -ENOTSUP, r->step == CONFINE_STEP_CONFINE ?
			    "the confinement could not be applied" :
			    "a resource bound or cgroup could not be applied");
			j->result.error = r->err;
		} else {
			j->events |= JOB_EV_STARTED;
			settle_select(&j->settle, CONFINE_FAILED,
			    CONFINE_REASON_EXEC, r->err, r->step);
		}
		break;
	case SHEP_EXITED:
		if (j->phase == JOB_RUNNING)
			on_exited(j, r, now);
		break;
	case SHEP_WAIT_FAILED:
		if (j->phase != JOB_RUNNING)
			break;
		settle_select(&j->settle, CONFINE_UNCERTAIN,
		    CONFINE_REASON_WAIT_FAILED, r->err, CONFINE_STEP_NONE);
		drain_start(j, now);
		break;
	case SHEP_SWEPT:
		j->sweeping = false;
		if (j->phase != JOB_DRAINING)
			break;
		/*
		 * Still something alive after the sweep: never proven, even
		 * if the group and the cgroup look empty (it left them).
		 */
		if (r->leftovers)
			finish(j);
		else
			drain_poll(j, now);
		break;
	case SHEP_REMOVED:
		if (j->phase == JOB_REMOVING) {
			if (!(j->events & JOB_EV_REFUSED)) {
				j->result.scratch_kept = j->fresh && r->err != 0;
				j->result.tmp_kept = j->tmp != NULL &&
				    r->status != 0;
			}
			complete(j);
		}
		break;
	case SHEP_SETUP_FAILED:
		if (j->phase == JOB_STARTING) {
			refuse(j, -r->err, "the shepherd could not start the job");
			finish(j);
		}
		break;
	}
}

void
job_input(struct job *j, int64_t now)
{
	struct shep_rec r;
	ssize_t n;

	while (j->ctl >= 0) {
		n = read(j->ctl, j->rbuf + j->rlen, sizeof(j->rbuf) - j->rlen);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		if (n <= 0) {
			job_shepherd_lost(j, now);
			return;
		}
		j->rlen += (size_t)n;
		if (j->rlen < sizeof(j->rbuf))
			continue;
		j->rlen = 0;
		if (shep_rec_decode(j->rbuf, &r) == 0)
			on_record(j, &r, now);
	}
}

void
job_shepherd_lost(struct job *j, int64_t now)
{
	(void)now;
	if (j->phase == JOB_DONE)
		return;
	if (j->phase == JOB_REMOVING) {
		/* Settled already; only the removal is in doubt: kept. */
		complete(j);
		return;
	}
	/* Still safe: its zombie holds the pgid until we reap it. */
	(void)kill_all(j);
	if (j->phase == JOB_STARTING)
		refuse(j, -ECHILD, "the shepherd died before the job started");
	else
		settle_select(&j->settle, CONFINE_UNCERTAIN,
		    CONFINE_REASON_HELPER_LOST, 0, CONFINE_STEP_NONE);
	finish(j);
}

/* The deadline or a cancel: Cancelled once a kill reached the group. */
static void
stop(struct job *j, enum confine_reason why, int64_t now)
{
	int sig = j->grace_ns > 0 ? SIGTERM : SIGKILL;

	j->t_deadline = INT64_MAX;
	/*
	 * Until the shepherd has left the job's group, a kill of the group
	 * would kill the shepherd (or, before the group exists, find nothing
	 * and read as "ended by itself"): keep the stop for then.
	 */
	if (!j->forked) {
		if (j->pending == CONFINE_REASON_NONE)
			j->pending = why;
		return;
	}
	j->stopping = true;
	if ((sig == SIGKILL ? kill_all(j) : j->sys->kill(-j->shep, sig)) == 0)
		settle_select(&j->settle, CONFINE_CANCELLED, why, 0,
		    CONFINE_STEP_NONE);
	else if (errno != ESRCH)
		settle_select(&j->settle, CONFINE_UNCERTAIN,
		    CONFINE_REASON_KILL_AMBIGUOUS, errno, CONFINE_STEP_NONE);
	/* ESRCH: it ended by itself and its exit report is on the way. */
	if (sig == SIGTERM)
		j->t_grace = now + j->grace_ns;
	else
		j->t_retry = now + RETRY_NS;
}

void
job_cancel(struct job *j, int64_t now)
{
	if (j->stopping || j->pending != CONFINE_REASON_NONE ||
	    j->phase == JOB_DRAINING || j->phase == JOB_DONE)
		return;
	stop(j, CONFINE_REASON_CANCELLED, now);
}

void
job_tick(struct job *j, int64_t now)
{
	if (j->phase == JOB_DONE)
		return;
	if (now >= j->t_poll) {
		drain_poll(j, now);
		return;
	}
	if (now >= j->t_deadline)
		stop(j, CONFINE_REASON_DEADLINE, now);
	if (now >= j->t_grace || now >= j->t_retry) {
		j->t_grace = INT64_MAX;
		if (kill_all(j) != 0 && errno != ESRCH)
			settle_select(&j->settle, CONFINE_UNCERTAIN,
			    CONFINE_REASON_KILL_AMBIGUOUS, errno,
			    CONFINE_STEP_NONE);
		j->t_retry = now + RETRY_NS;
	}
}

static int
poll_timeout(int64_t t, int64_t now)
{
	int64_t ms;

	if (t == INT64_MAX)
		return -1;
	if (t <= now)
		return 0;
	ms = (t - now + MS - 1) / MS;  /* round up: never wake early */
	return ms > INT_MAX ? INT_MAX : (int)ms;
}

int
job_run(const struct confine_spec *s, const struct job_env *env,
    const struct ident *peer, struct confine_result *r, const char **why)
{
	struct pollfd pfd;
	struct job j;
	int64_t now;
	int rc, n;

	rc = job_start(&j, s, env, peer, clock_ns(), why);
	if (rc != 0)
		return rc;
	while (j.phase != JOB_DONE) {
		now = clock_ns();
		pfd.fd = j.ctl;
		pfd.events = POLLIN;
		n = poll(&pfd, 1, poll_timeout(job_timer(&j), now));
		now = clock_ns();
		if (n > 0)
			job_input(&j, now);
		if (job_timer(&j) <= now)
			job_tick(&j, now);
	}
	proc_reap(j.shep, NULL);
	job_release(&j);
	if (j.events & JOB_EV_REFUSED) {
		*why = j.why;
		return j.refused;
	}
	*r = j.result;
	return 0;
}
