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
#include <sys/syscall.h>
#endif

#include "helper/engine/plan.h"
#ifdef __linux__
#include "helper/backend/mountns.h"
#include "helper/backend/ns.h"
#include "helper/backend/supervise.h"
#endif
#include "src/core/spec.h"

static char *const empty_env[] = { NULL };

void
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
/* The same, naming the call whose errno says why. */
#define REFUSE_OP(err, what, o, e) do {                                    \
		p->op = (o);                                                    \
		p->op_err = (e);                                                \
		REFUSE(err, what);                                              \
	} while (0)

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

bool
plan_own_namespaces(const struct plan *p, const struct job_env *env)
{
	return env->ns && !env->group_proof_only &&
	    p->child.backend == CONFINE_BACKEND_LANDLOCK;
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
		if (env->seccomp.count == 0)
			REFUSE(-ENOTSUP, "the seccomp filter could not be built");
		p->child.seccomp = &env->seccomp;
		/*
		 * In namespaces of its own the job needs of Landlock only what
		 * they and its view do not give (docs/linux-contract.md, *On
		 * every kernel*): its PID and network namespaces scope its
		 * signals and abstract sockets (ABI 6), the network's TCP
		 * (ABI 4); its /dev of its own and a nodev view its devices
		 * (ABI 5); the read-only view every write, truncation and
		 * metadata change outside. Landlock is then the second wall,
		 * with the rights its ABI has, and needed only to narrow
		 * reads. Without namespaces, nothing else scopes signals:
		 * ABI 6 or the job is refused.
		 */
		if (!plan_own_namespaces(p, env)) {
			if (s->flags & CONFINE_REQUIRE_NAMESPACES)
				REFUSE_OP(-ENOTSUP, "namespaces of its own were "
				    "required, and none can be made here",
				    env->ns_op != OP_NONE ? env->ns_op :
				    OP_CLONE_INIT, env->ns_err < 0 ? -env->ns_err :
				    ENOTSUP);
			if (env->landlock_abi < 0)
				REFUSE_OP(-ENOTSUP, "Landlock is not available in "
				    "this kernel", OP_LANDLOCK_ABI, -env->landlock_abi);
			if (landlock_plan(env->landlock_abi, &p->landlock) != 0)
				REFUSE(-ENOTSUP, "the kernel's Landlock ABI is too "
				    "old (6 needed without namespaces)");
			p->child.landlock = &p->landlock;
			return 0;
		}
		if (env->landlock_abi < 0 && spec_narrow(s))
			REFUSE_OP(-ENOTSUP, "narrowed reads need Landlock, which "
			    "is not available in this kernel", OP_LANDLOCK_ABI,
			    -env->landlock_abi);
		if (env->landlock_abi == 1 && spec_narrow(s))
			REFUSE(-ENOTSUP, "narrowed reads need Landlock ABI 2: "
			    "ABI 1 would refuse every rename across directories");
		if (env->landlock_abi >= 2) {
			(void)landlock_plan(env->landlock_abi, &p->landlock);
			p->child.landlock = &p->landlock;
		}
		if ((s->flags & CONFINE_REQUIRE_LANDLOCK) && p->child.landlock == NULL)
			REFUSE(-ENOTSUP, env->landlock_abi < 0 ? "Landlock was "
			    "required, and this kernel has none" : "Landlock was "
			    "required, and this kernel's ABI 1 would refuse every "
			    "rename across directories");
		return 0;
#else
		(void)env;
		REFUSE(-ENOTSUP, "Landlock exists only on Linux");
#endif
	case CONFINE_BACKEND_SEATBELT:
		if (s->flags & (CONFINE_REQUIRE_NAMESPACES | CONFINE_REQUIRE_LANDLOCK))
			REFUSE(-ENOTSUP, "namespaces and Landlock are Linux's, "
			    "not Seatbelt's: a requirement of them cannot be met");
		if (stat(launcher, &st) != 0 || !S_ISREG(st.st_mode))
			REFUSE(-ENOTSUP, "the Seatbelt launcher is absent or not a regular file");
		p->launcher = launcher;
		return 0;
	case CONFINE_BACKEND_NONE:
		if (s->flags & (CONFINE_REQUIRE_NAMESPACES | CONFINE_REQUIRE_LANDLOCK))
			REFUSE(-ENOTSUP, "backend none confines nothing: a "
			    "requirement of namespaces or Landlock cannot be met");
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
		if ((rc = job_env_sysreads(env)) != 0)
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

/*
 * Where no namespace at all can be made (a container's seccomp profile,
 * user namespaces disabled): no read-only view, and so no wall but
 * Landlock's, which does not mediate metadata. Refused unless the spec
 * waives that by name; then a root job runs as BARE_UID, which owns
 * nothing of the host's, rather than as the owner of everything.
 */
static int
plan_bare(struct plan *p, const struct confine_spec *s,
    const struct job_env *env, const char **why)
{
#ifdef __linux__
	static const struct ident nobody = { 0, BARE_UID, BARE_UID, 0, { 0 } };

	if (p->child.backend != CONFINE_BACKEND_LANDLOCK || env->ns ||
	    env->view_ok || (s->flags & CONFINE_REQUIRE_NAMESPACES))
		return 0;  /* a requirement of namespaces: plan_backend's */
	if (!(s->flags & CONFINE_WAIVE_METADATA))
		REFUSE_OP(-ENOTSUP, "no namespace can be made here, so no "
		    "read-only view, and Landlock does not keep the metadata "
		    "of files outside the scratch root (mode, owner, times, "
		    "extended attributes) from changing: run with "
		    "CONFINE_WAIVE_METADATA (confine-run --waive metadata) to "
		    "accept that", env->view_op, env->view_err < 0 ?
		    -env->view_err : ENOTSUP);
	p->bare = true;
	p->child.bare = true;
	if ((p->becomes ? p->become.uid : env->self.uid) == 0) {
		p->become = nobody;
		p->becomes = true;
		p->child.become = &p->become;
		p->child.self = &env->self;
	}
#else
	(void)p;
	(void)s;
	(void)env;
	(void)why;
#endif
	return 0;
}

/*
 * With namespaces of its own, the job's shepherd is its init: pid 1 of
 * its PID namespace, which makes them and the view (ns.h), so that only
 * the rest is the job's own to do.
 */
static void
plan_init(struct plan *p, const struct job_env *env)
{
#ifdef __linux__
	if (!plan_own_namespaces(p, env))
		return;
	p->child.in_init = true;
	p->child.init_userns = env->self.uid != 0;
	p->child.init_uid = env->self.uid;
	p->child.init_gid = env->self.gid;
	/*
	 * Its IPC objects its own, and its sockets where its init can
	 * supervise them: the filter for that.
	 */
	p->child.seccomp = env->sup_ok ? &env->seccomp_own_net :
	    &env->seccomp_own;
	/* Its /proc and /dev its own too. */
	p->child.view.own_proc = true;
	p->child.view.own_dev = true;
	p->child.view.devices = (const char *const *)p->devices;
	p->child.view.ndevices = p->ndevices;
	p->policy.own_dev = true;
#else
	(void)p;
	(void)env;
#endif
}

/* Every check that can refuse the job; nothing is written by it. */
int
plan_build(struct plan *p, const struct confine_spec *s, const struct job_env *env,
    const struct ident *peer, const char **why)
{
	int rc, k;

	memset(p, 0, sizeof(*p));
	/*
	 * On Linux the job leads its own session; under a shepherd, which
	 * then signals it. Where kill(-pgid, 0) is the one proof (macOS) the
	 * group is the shepherd's.
	 */
	p->child.own_session = !env->group_proof_only;
	if ((rc = spec_check(s, why)) != 0)
		return rc;
	if ((rc = plan_ident(p, env, peer, why)) != 0)
		return rc;
	p->child.backend = resolve(s->backend);
	if ((rc = plan_bare(p, s, env, why)) != 0)
		return rc;
	if (p->becomes && (rc = ident_enter(&p->become, &env->self)) != 0)
		REFUSE(rc, "the helper could not take its client's credentials");
	rc = plan_paths(p, s, why);
	if (p->becomes)
		ident_leave(&env->self);
	if (rc == -EACCES && p->bare && p->become.uid == BARE_UID)
		REFUSE(rc, "where no namespace can be made a root job runs as "
		    "uid and gid 65534, which may not write its scratch root: "
		    "chown 65534:65534 it, or use a root of theirs");
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
	if ((rc = plan_backend(p, s, env, why)) != 0)
		return rc;
	plan_init(p, env);
	return 0;
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

/* A private tmp beneath base, and its stat, in p: 0 or -errno. */
static int
plain_tmp(struct plan *p, const char *base)
{
	int rc = (p->tmp = strdup(base)) == NULL ? -ENOMEM :
	    make_fresh(&p->tmp, "confine-tmp");

	if (rc != 0) {
		free(p->tmp);
		p->tmp = NULL;
	} else if (stat(p->tmp, &p->tmp_st) != 0) {
		rc = -errno;
	}
	return rc;
}

static int tmp_view(struct plan *p, bool view, bool over);

#ifdef __linux__
/*
 * The private tmp a prepared init has, with the overlay made (prepared.h),
 * as the job's: still the directory made for it. 0, or a refusal.
 */
static int
tmp_ahead(struct plan *p, const struct prepared *pi,
    const struct confine_spec *s, bool over, const char **why)
{
	if ((p->tmp = strdup(pi->tmp)) == NULL)
		REFUSE(-ENOMEM, "no memory for the job");
	/* The init's still, whatever happens: never removed by the plan. */
	p->tmp_ahead = true;
	if (stat(p->tmp, &p->tmp_st) != 0 ||
	    p->tmp_st.st_dev != pi->tmp_st.st_dev ||
	    p->tmp_st.st_ino != pi->tmp_st.st_ino)
		REFUSE(-ESTALE, "the private tmp made for the job was moved or "
		    "replaced");
	plan_keep(p, 0, s->cwd, false);
	plan_keep(p, 1, s->exe, true);
	return tmp_view(p, true, over);
}
#endif

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
	bool view = p->child.backend == CONFINE_BACKEND_LANDLOCK && !p->bare;
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
#ifdef __linux__
	/*
	 * The host's /tmp beneath its own, where reads are everywhere
	 * (narrowed, the host's /tmp stays out of sight) and its init can
	 * make the overlay. Not for a client's job of a root helper: the
	 * overlay would be made, and would work on its layers, with the
	 * init's credentials, not the job's. The oldest prepared init, the
	 * one the job will have, has a private tmp with the overlay made
	 * already: the job takes that one (made by us, as the job's own
	 * would be: the job is our user).
	 */
	p->tmp_overlay = over && env->tmp_overlay_ok &&
	    !p->policy.read_narrow && plan_own_namespaces(p, env) &&
	    !p->becomes;
	if (p->tmp_overlay && env->pool != NULL && env->pool->n > 0 &&
	    env->pool->held[0].tmp != NULL)
		return tmp_ahead(p, &env->pool->held[0], s, over, why);
#endif
	rc = p->becomes ? ident_enter(&p->become, &env->self) : 0;
	if (rc == 0) {
#ifdef __linux__
		/* With the overlay's two layers, as a prepared init's is. */
		if (p->tmp_overlay)
			rc = mountns_tmp_make(env->tmp_base, &p->tmp,
			    &p->tmp_st);
		else
#endif
			rc = plain_tmp(p, env->tmp_base);
		if (rc == 0 && over) {
			plan_keep(p, 0, s->cwd, false);
			plan_keep(p, 1, s->exe, true);
		}
		if (p->becomes)
			ident_leave(&env->self);
	}
	if (rc != 0)
		REFUSE(rc, "no private tmp could be made for the job");
	return tmp_view(p, view, over);
}

/* The plan's view and policy of the private tmp it has: 0. */
static int
tmp_view(struct plan *p, bool view, bool over)
{
	p->policy.tmp = over ? "/tmp" : p->tmp;
	p->child.remove_tmp = p->tmp;
#ifdef __linux__
	size_t i;

	if (view) {
		p->child.view.tmp.path = p->tmp;
		p->child.view.tmp.dev = p->tmp_st.st_dev;
		p->child.view.tmp.ino = p->tmp_st.st_ino;
		p->child.view.over_tmp = over;
		p->child.view.tmp_overlay = p->tmp_overlay;
		p->child.view.tmp_ahead = p->tmp_ahead;
		for (i = 0; i < 2; i++) {
			p->child.view.keep[i].path = p->keep[i];
			p->child.view.keep[i].dev = p->keep_st[i].st_dev;
			p->child.view.keep[i].ino = p->keep_st[i].st_ino;
		}
	}
#else
	(void)view;
#endif
	return 0;
}

/*
 * The scratch root and what names it. A fresh root is made here, after
 * every check that could refuse the job: a refused job writes nothing.
 */
int
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
int
plan_limits(struct plan *p, struct job *j, const struct confine_spec *s,
    const struct job_env *env, const char **why)
{
#ifdef __linux__
	/* None for the macOS path: as where there are no cgroups. */
	static const struct cgroup_env none = { -1, false, NULL, "" };
	const struct cgroup_env *cg = env->group_proof_only ? &none : &env->cg;
	int rc, i;

	p->child.subreaper = !env->group_proof_only;
	/* Refused before any cgroup is made. */
	if (s->limits.processes > 0 && cgroup_env_pids(cg) < 0) {
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
		/* Out of descriptors or memory is that, not a missing feature. */
		return rc == -EMFILE || rc == -ENFILE || rc == -ENOMEM ? rc :
		    -ENOTSUP;
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

