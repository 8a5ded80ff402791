#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/syscall.h>
#endif

#include "helper/engine/job.h"
#include "helper/engine/plan.h"
#ifdef __linux__
#include "helper/backend/ns.h"
#endif
#include "src/core/clock.h"
#include "src/core/fd.h"
#include "src/core/proc.h"
#include "src/core/sigpipe.h"

#define MS 1000000LL
#define RETRY_NS (100 * MS)      /* resend SIGKILL while the exit is awaited */
#define DRAIN_NS (15000 * MS)    /* give up proving emptiness; > a sweep */
#define POLL_FIRST_NS (1 * MS)
#define POLL_MAX_NS (64 * MS)

/*
 * How a job is watched and acted on, apart from what its state machine
 * decides (issue 34's seam): through its shepherd or init, which sends
 * reports over its socket, is asked to remove the job's trees, and, where
 * the job leads its own session, signals its group for us (relayed); or,
 * with no shepherd (direct), by the helper itself: the job's pidfd, its
 * group signalled here, a remover forked. way() picks one, from
 * job_start's direct and relayed, for each of these acts. What the
 * machine decides still reads them where the way changes the answer: a
 * relayed stop is Cancelled on the shepherd's word, a direct job's
 * group is reaped before it is looked at.
 */
struct job_way {
	/*
	 * Starts the job from its plan: 0, with j->child our child (its
	 * shepherd or init, or the job itself) and j->fd its descriptor,
	 * and in *known what is known of it already (type 0: nothing yet);
	 * or -errno, *failed saying what failed, with nothing left running.
	 */
	int (*start)(struct job *j, struct plan *p, const struct job_env *env,
	    struct job_report *known, const char **failed);
	/* A signal to the job's group (0: is there one?): 0, or -1 and errno. */
	int (*signal)(struct job *j, int sig);
	/*
	 * Whether its group is gone, once the job has exited: 1 proven gone,
	 * 0 still there, or -1 with errno where the answer proves neither.
	 */
	int (*group_gone)(struct job *j);
	/* Its descriptor (job_fd) is readable: what it says, reported. */
	void (*input)(struct job *j, int64_t now);
	/* Its trees removed as its user, off our loop: 0, REMOVED to come. */
	int (*remove)(struct job *j);
	/*
	 * Our child (j->child) has exited, unreaped: true, the caller reaps
	 * it and frees the job; false, the way reaped it and the job goes on.
	 */
	bool (*child_exited)(struct job *j, int64_t now);
};

static const struct job_way way_relayed, way_held, way_direct;

/* The way, from job_start's direct and relayed. */
static const struct job_way *
way(const struct job *j)
{
	return j->direct ? &way_direct : j->relayed ? &way_relayed : &way_held;
}

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

static void
release_cgroups(struct job *j)
{
#ifdef __linux__
	cgroup_job_destroy(&j->cg);
#else
	(void)j;
#endif
}

/* Asks the shepherd to signal the job's group: the answer is a report. */
static int
relay(struct job *j, int sig)
{
	char cmd = sig == SIGTERM ? SHEP_CMD_TERM : SHEP_CMD_KILL;

	/*
	 * Only a stop is relayed: whether the group is there is the
	 * shepherd's account (gone_by_account), never a probe, which the
	 * shepherd would take for a kill.
	 */
	if (sig != SIGTERM && sig != SIGKILL) {
		errno = EINVAL;
		return -1;
	}

#ifdef MSG_NOSIGNAL
	if (j->fd >= 0 && send(j->fd, &cmd, 1, MSG_NOSIGNAL) == 1)
		return 0;
#else
	if (j->fd >= 0 && write(j->fd, &cmd, 1) == 1)
		return 0;
#endif
	/* A shepherd gone: its loss is on the way, and says so. */
	errno = ESRCH;
	return -1;
}

/*
 * A signal to the job's process group (0: is there one?). Relayed (the
 * job leads its own session under a shepherd), the shepherd signals it
 * and answers with a report: 0 here means asked, and 0 is never asked
 * for (relay, above). Else the shepherd's pid is the pgid, held for us
 * until we reap the shepherd (signal_held); or, without a shepherd, the
 * job's zombie holds it until we reap the job; after that the group is
 * signalled only just after kill(-pgid, 0) saw it (its members hold the
 * id then, and only we reap ours), and never once it was gone
 * (signal_direct).
 */
static int
signal_held(struct job *j, int sig)
{
	return j->sys->kill(-j->child, sig);
}

static int
signal_direct(struct job *j, int sig)
{
	if (j->reaped) {
		if (j->group_gone) {
			errno = ESRCH;
			return -1;
		}
		if (j->sys->kill(-j->child, 0) != 0) {
			if (errno == ESRCH)
				j->group_gone = true;
			return -1;
		}
		if (sig == 0)
			return 0;
	}
	return j->sys->kill(-j->child, sig);
}

static int
group_kill(struct job *j, int sig)
{
	return way(j)->signal(j, sig);
}

/* Only ESRCH proves the group gone; any other error proves nothing. */
static int
gone_by_kill(struct job *j)
{
	if (group_kill(j, 0) == 0)
		return 0;
	return errno == ESRCH ? 1 : -1;
}

/*
 * Relayed, the shepherd's account is the proof: it reports a sweep while
 * it has a child left (j->sweeping), and only the job's descendants can
 * be in its group; its group is gone when it has none.
 */
static int
gone_by_account(struct job *j)
{
	(void)j;
	return 1;
}

/* SIGKILL to the whole job: its group, and its cgroup if it has one. */
static int
kill_all(struct job *j)
{
	int rc = group_kill(j, SIGKILL);
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

static void on_exec(struct job *j, const struct job_report *r, int64_t now);

/* No shepherd: where the job's v2 cgroup can prove it settled, and kill it. */
static bool
goes_direct(const struct job *j, const struct job_env *env)
{
#ifdef __linux__
	return env->direct && !env->group_proof_only && j->cg.dir >= 0 &&
	    j->cg.events >= 0 && j->cg.kill >= 0;
#else
	(void)j;
	(void)env;
	return false;
#endif
}

#ifdef __linux__
static int
pidfd_of(pid_t pid)
{
	return (int)syscall(SYS_pidfd_open, pid, 0);
}
#endif

/*
 * The job as our own child, born in its cgroup, leading its own group, as
 * posix_spawn starts one. child_start returns once it has exec'd or
 * failed, so its exec result is read here, without waiting. No signal
 * handler of ours may run in it before it resets them: all are blocked
 * around the start. fd becomes its pidfd, readable once it exits.
 */
static int
start_direct(struct job *j, struct plan *p, const struct job_env *env,
    struct job_report *rep, const char **failed)
{
#ifdef __linux__
	unsigned char buf[CHILD_ERR_LEN];
	sigset_t all, old;
	int errp[2], rc;
	pid_t pid;
	ssize_t n;

	(void)env;
	*failed = "the job could not be started";
	if ((rc = fd_pipe(errp)) != 0)
		return rc;
	sigfillset(&all);
	sigprocmask(SIG_SETMASK, &all, &old);
	pid = child_start(&p->child, errp[1]);
	rc = pid < 0 ? -errno : 0;
	sigprocmask(SIG_SETMASK, &old, NULL);
	close(errp[1]);
	if (rc != 0) {
		close(errp[0]);
		return rc;
	}
	/* Unreaped, so the pid is still this child's. */
	j->fd = pidfd_of(pid);
	j->fd_gen++;
	do
		n = read(errp[0], buf, sizeof(buf));
	while (n < 0 && errno == EINTR);
	close(errp[0]);
	if (j->fd < 0) {
		/* Not to be watched: not to be run. */
		rc = -errno;
		(void)kill(-pid, SIGKILL);
		(void)cgroup_job_kill(&j->cg);
		proc_reap(pid, NULL);
		return rc;
	}
	memset(rep, 0, sizeof(*rep));
	rep->type = REP_EXEC_OK;
	rep->pid = pid;
	if (n == (ssize_t)sizeof(buf)) {
		rep->type = REP_EXEC_FAILED;
		rep->step = child_err_decode(buf, &rep->op, &rep->err);
	}
	j->child = pid;
	*failed = NULL;
	return 0;
#else
	(void)j;
	(void)p;
	(void)env;
	(void)rep;
	*failed = "the job could not be started";
	return -ENOTSUP;
#endif
}

/* A private tmp that holds nothing of the job's, removed (mountns.h). */
static int
tmp_rmdir(const char *tmp)
{
#ifdef __linux__
	return mountns_tmp_rmdir(tmp);
#else
	return rmdir(tmp);
#endif
}

/*
 * The trees the job's view will see again beneath its private /tmp, each
 * by a mount point made there: tmp_gone removes those. One not kept
 * (no memory) is left to the remover.
 */
static void
keep_made(struct job *j, const struct plan *p)
{
#ifdef __linux__
	const struct mountns_view *v = &p->child.view;
	const char *path[] = { v->root.path, v->keep[0].path, v->keep[1].path };
	size_t i, n = 0;

	/*
	 * Over the host's /tmp the trees are there already (and the job's
	 * writes are in the upper layer): what the private tmp holds when the
	 * job left nothing is its layers (tmp_layers).
	 */
	if (p->tmp_overlay) {
		j->made[0] = strdup("/tmp/u");
		j->made[1] = strdup("/tmp/w");
		return;
	}
	for (i = 0; v->over_tmp && p->tmp != NULL && i < 3; i++)
		if (path[i] != NULL && strncmp(path[i], "/tmp/", 5) == 0)
			j->made[n++] = strdup(path[i]);
#else
	(void)j;
	(void)p;
#endif
}

/*
 * A private tmp the job left empty but for those mount points goes here,
 * in the loop: into the helper's trash, one rename (trash.h); else one
 * rmdir, or a few calls more, where a remover costs a fork and the
 * shepherd a round trip (about a fifth of a short job). Only its user
 * or root can rename it within the helper's own tmp base, so the name is
 * still ours; beneath it nothing is resolved through a link
 * (mountns_unmake), and it is done as the job's user.
 */
static bool
tmp_gone(struct job *j)
{
	size_t n = 0;
	bool gone;

	while (n < sizeof(j->made) / sizeof(j->made[0]) && j->made[n] != NULL)
		n++;
#ifdef __linux__
	int fd;
	size_t i;

	/*
	 * Over the host's /tmp: what the overlay left in its work layer
	 * (never the job's: the job's own user, the helper's, made it), so
	 * that an upper layer left empty is all there is.
	 */
	if (j->tmp_upper != NULL && (fd = open(j->tmp, O_RDONLY |
	    O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) >= 0) {
		(void)mountns_work_remove(fd);
		close(fd);
	}
#endif
	if (j->trash != NULL && trash_put(j->trash, j->tmp, j->made, n) == 0)
		return true;
	gone = rmdir(j->tmp) == 0;
#ifdef __linux__

	if (gone || errno != ENOTEMPTY || j->made[0] == NULL ||
	    (j->owner != NULL && ident_enter(j->owner, j->self) != 0))
		return gone;
	fd = open(j->tmp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	for (i = 0; fd >= 0 && i < 3 && j->made[i] != NULL; i++)
		(void)mountns_unmake(fd, j->made[i]);
	if (fd >= 0)
		close(fd);
	gone = rmdir(j->tmp) == 0;
	if (j->owner != NULL)
		ident_leave(j->self);
#endif
	return gone;
}

/* One more " NAME=VALUE" word of the job's enforcement line. */
static void
say(struct job *j, const char *name, const char *value)
{
	size_t n = strlen(j->enforced);

	(void)snprintf(j->enforced + n, sizeof(j->enforced) - n, "%s%s=%s",
	    n > 0 ? " " : "", name, value);
}

/*
 * What will be in force, from the plan as the job starts: the backend,
 * Landlock's ABI, the namespaces, the network, the filter, the view, the
 * identity and the reads (docs/api.md, confine_job_enforced).
 */
static void
describe(struct job *j, const struct plan *p, const struct job_env *env)
{
	const struct ident *id = p->becomes ? &p->become : &env->self;
	char num[32];

	j->enforced[0] = '\0';
	say(j, "backend", p->child.backend == CONFINE_BACKEND_LANDLOCK ?
	    "landlock" : p->child.backend == CONFINE_BACKEND_SEATBELT ?
	    "seatbelt" : "none");
#ifdef __linux__
	if (p->child.backend == CONFINE_BACKEND_LANDLOCK) {
		bool userns = env->self.uid != 0;

		if (p->child.landlock != NULL)
			snprintf(num, sizeof(num), "%d", p->child.landlock->abi);
		say(j, "landlock", p->child.landlock != NULL ? num : "off");
		if (p->child.landlock != NULL) {
			char rights[96];

			landlock_rights(p->child.landlock, p->policy.read_narrow,
			    rights, sizeof(rights));
			say(j, "landlock-rights", rights);
		}
		say(j, "namespaces", j->init ? (userns ?
		    "pid,mount,net,ipc,uts,user" : "pid,mount,net,ipc,uts") :
		    p->bare ? "none" : userns ? "mount,user" : "mount");
		say(j, "sockets", !j->init ? "refused" :
		    p->child.seccomp->listener ? "supervised" : "refused");
		say(j, "seccomp", p->child.seccomp == &env->seccomp ? "shared" :
		    p->child.seccomp->listener ? "own-net" : "own");
		say(j, "view", j->init ? "ro,nodev,proc,dev" : p->bare ? "none" :
		    "ro");
		if (p->tmp != NULL && p->child.view.over_tmp)
			say(j, "tmp", p->tmp_overlay ? "over-hosts" : "private");
		if (p->bare)
			say(j, "waived", "metadata");
	}
#else
	(void)env;
#endif
	snprintf(num, sizeof(num), "%ld", (long)id->uid);
	say(j, "uid", num);
	snprintf(num, sizeof(num), "%ld", (long)id->gid);
	say(j, "gid", num);
	say(j, "reads", p->policy.read_narrow ? "narrowed" : "everywhere");
}

#ifdef __linux__
/*
 * A prepared init given the plan: its pid, with sv[0] its socket, or -1
 * (none ready, or it could not be given the plan: made now instead). Its
 * private tmp, if the plan did not take it (plan.c's tmp_ahead), is the
 * job's to remove once that init is gone.
 */
static pid_t
from_pool(struct job *j, struct prepared_pool *pool, const struct plan *p,
    int64_t now, int sv[2])
{
	struct prepared pi;
	pid_t pid;

	if (!prepared_take(pool, &pi, now))
		return -1;
	if (pi.tmp != NULL && p->tmp_ahead && strcmp(pi.tmp, p->tmp) == 0)
		free(pi.tmp);
	else
		j->spare_tmp = pi.tmp;
	pi.tmp = NULL;
	/*
	 * Not given: killed, and one made now, which makes the overlay of a
	 * tmp the plan took (its layers free once this one is gone; the
	 * kernel warns of them in use before then).
	 */
	if (prepared_go(&pi, &p->child) != 0) {
		prepared_drop(&pi, true);
		return -1;
	}
	pid = pi.pid;
	sv[0] = pi.ctl;
	pi.ctl = -1;
	prepared_drop(&pi, false);
	return pid;
}
#endif

/*
 * The job under a shepherd: its init, taken from the pool where one is
 * ready, else made now; or a shepherd forked, where the job has no
 * namespaces of its own. It reports everything, so nothing is known yet.
 */
static int
start_shepherd(struct job *j, struct plan *p, const struct job_env *env,
    struct job_report *known, const char **failed)
{
	int sv[2] = { -1, -1 }, rc = 0;
	pid_t pid = -1;

	(void)known;
	*failed = NULL;
#ifdef __linux__
	/* Its init made already, where one is ready; else now. */
	if (j->init && env->pool != NULL)
		pid = from_pool(j, env->pool, p, j->t_start, sv);
#else
	(void)env;
#endif
	if (pid < 0 && (rc = fd_socketpair(sv)) != 0) {
		*failed = "no socketpair for the shepherd";
		return rc;
	}
	if (pid < 0) {
#ifdef __linux__
		pid = j->init ? ns_clone_init(p->child.init_userns) :
		    sigpipe_fork();
#else
		pid = sigpipe_fork();
#endif
	}
	if (pid == 0) {
		close(sv[0]);
		shepherd_main(&p->child, sv[1], j->sys, NULL);
	}
	rc = pid < 0 ? -errno : 0;
	fd_closep(&sv[1]);
	if (rc != 0) {
		fd_closep(&sv[0]);
		*failed = "fork failed";
		if (j->init) {
			j->refused_op = OP_CLONE_INIT;
			j->refused_err = -rc;
		}
		return rc;
	}
	(void)fd_nonblock(sv[0]);
	j->fd = sv[0];
	j->child = pid;
	return 0;
}

int
job_start(struct job *j, const struct confine_spec *s, const struct job_env *env,
    const struct ident *peer, int64_t now, const char **why)
{
	struct job_report known;
	struct plan p;
	const char *failed = NULL;  /* the start's own */
	int rc;

	memset(j, 0, sizeof(*j));
	j->fd = j->remover_fd = -1;
	j->remover = -1;
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
	j->direct = rc == 0 && goes_direct(j, env);
	/* A tree to remove as its owner, later: whose, kept. */
	if (rc == 0 && p.becomes &&
	    (j->owner = malloc(sizeof(*j->owner))) == NULL) {
		rc = -ENOMEM;
		*why = "no memory for the job";
	}
	if (j->owner != NULL)
		*j->owner = p.become;
	if (rc == 0)
		rc = plan_root(&p, s, env, why);
	/* With namespaces, the shepherd is the job's init (plan.c, ns.h). */
#ifdef __linux__
	j->init = rc == 0 && p.child.in_init;
#endif
	j->relayed = !j->direct && p.child.own_session;
	if (rc == 0)
		describe(j, &p, env);
	if (rc != 0) {
		j->refused_op = p.op;
		j->refused_err = p.op_err;
		if (p.fresh_made)
			(void)rmdir(p.scratch);
		/* A prepared init's stays with it, for another job. */
		if (p.tmp != NULL && !p.tmp_ahead)
			(void)tmp_rmdir(p.tmp);
		plan_free(&p);
		release_cgroups(j);
		free(j->owner);
		j->owner = NULL;
		return rc;
	}
	j->sys = env->sys ? env->sys : &job_sys_real;
	j->group_only = env->group_proof_only;
	j->unwatch = env->unwatch;
	j->unwatch_arg = env->unwatch_arg;
	j->self = &env->self;
	j->trash = env->trash;
	j->t_start = clock_ns();
	memset(&known, 0, sizeof(known));
	rc = way(j)->start(j, &p, env, &known, &failed);
	result_init(&j->result, p.child.backend);
	/*
	 * The root and the tmp the job writes into, for the host: the plan's,
	 * taken (a copy that failed would lose them, and their removal).
	 */
	j->fresh = (s->flags & CONFINE_FRESH_SCRATCH) != 0;
	keep_made(j, &p);
	j->root = p.scratch;
	j->tmp = p.tmp;
	if (p.tmp_overlay && asprintf(&j->tmp_upper, "%s/u", p.tmp) < 0)
		j->tmp_upper = NULL;
	p.scratch = p.tmp = NULL;
	if (rc != 0 && p.fresh_made)
		(void)rmdir(j->root);
	if (rc != 0 && j->tmp != NULL)
		(void)tmp_rmdir(j->tmp);
	plan_free(&p);
#ifdef __linux__
	/* The shepherd has them now; ours would keep nothing alive but fds. */
	for (int i = 0; i < CGROUP_JOINS; i++)
		fd_closep(&j->cg.procs[i]);
	fd_closep(&j->cg.dir);
#endif
	if (rc != 0) {
		release_cgroups(j);
		job_release(j);
		*why = failed != NULL ? failed : "the job could not be started";
		return rc;
	}
	j->result.pgid = j->child;
	j->phase = JOB_STARTING;
	settle_init(&j->settle);
	j->grace_ns = s->grace_ms * MS;
	j->t_deadline = s->deadline_ms > 0 ? now + s->deadline_ms * MS : INT64_MAX;
	j->t_grace = j->t_retry = j->t_poll = INT64_MAX;
	if (known.type != 0) {
		/*
		 * Started as our own child (direct): in its group already, its
		 * exec result known. Nothing to wait for before a stop.
		 */
		j->forked = true;
		j->result.pid = j->child;
		on_exec(j, &known, now);
	}
	return 0;
}

void
job_release(struct job *j)
{
	free(j->owner);
	j->owner = NULL;
	free(j->root);
	j->root = NULL;
	free(j->tmp);
	j->tmp = NULL;
	free(j->tmp_upper);
	j->tmp_upper = NULL;
	if (j->spare_tmp != NULL)
		(void)tmp_rmdir(j->spare_tmp);
	free(j->spare_tmp);
	j->spare_tmp = NULL;
	for (size_t i = 0; i < sizeof(j->made) / sizeof(j->made[0]); i++) {
		free(j->made[i]);
		j->made[i] = NULL;
	}
}

const char *
job_root(const struct job *j)
{
	return j->root ? j->root : "";
}

const char *
job_tmp(const struct job *j)
{
	/* Where the job's own files are, which the host may look at. */
	return j->tmp_upper ? j->tmp_upper : j->tmp ? j->tmp : "";
}

const char *
job_enforced(const struct job *j)
{
	return j->enforced;
}


int
job_fd(const struct job *j)
{
	return j->fd;
}

unsigned
job_fd_gen(const struct job *j)
{
	return j->fd_gen;
}

bool
job_child_exited(struct job *j, int64_t now)
{
	return way(j)->child_exited(j, now);
}

bool
job_is_relayed(const struct job *j, pid_t pid)
{
	return j->relayed && j->result.pid == pid && j->phase != JOB_DONE;
}

pid_t
job_shepherd(const struct job *j)
{
	return j->reaped ? 0 : j->child;  /* only the direct way reaps */
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

/*
 * Without a shepherd, a tree to remove as the job's user is removed by a
 * process forked for it, off our loop, reporting as the shepherd would.
 */
static int
start_remover(struct job *j)
{
#ifdef __linux__
	int sv[2], rc;
	pid_t pid;

	if ((rc = fd_socketpair(sv)) != 0)
		return rc;
	pid = sigpipe_fork();
	if (pid == 0) {
		/* Our handlers and descriptors are the loop's, not its. */
		proc_helper_signals();
		fd_close_except(&sv[1], 1);
		shepherd_remove(sv[1], j->owner, j->self, AT_FDCWD,
		    j->fresh ? j->root : NULL, j->tmp);
		_exit(0);
	}
	rc = pid < 0 ? -errno : 0;
	close(sv[1]);
	if (rc == 0 && (j->remover_fd = pidfd_of(pid)) < 0) {
		rc = -errno;
		(void)kill(pid, SIGKILL);
		proc_reap(pid, NULL);
	}
	if (rc != 0) {
		close(sv[0]);
		return rc;
	}
	j->remover = pid;
	(void)fd_nonblock(sv[0]);
	j->fd = sv[0];
	j->fd_gen++;
	return 0;
#else
	(void)j;
	return -ENOTSUP;
#endif
}

/* Reaps the remover, through its pidfd: if the loop took it first, ECHILD. */
static void
end_remover(struct job *j)
{
#ifdef __linux__
	siginfo_t si;

	if (j->remover_fd < 0)
		return;
	while (waitid((idtype_t)P_PIDFD, (id_t)j->remover_fd, &si, WEXITED) != 0 &&
	    errno == EINTR)
		;
	fd_closep(&j->remover_fd);
	j->remover = -1;
#else
	(void)j;
#endif
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
			(void)tmp_rmdir(j->tmp);
	}
	/*
	 * Its init closed the overlay made ahead on it as it made the job's
	 * view (or it died): its layers are free.
	 */
	if (j->spare_tmp != NULL) {
		(void)tmp_rmdir(j->spare_tmp);
		free(j->spare_tmp);
		j->spare_tmp = NULL;
	}
	/* Releasing the shepherd lets the pgid go: no kill after this. */
	if (j->fd >= 0 && j->unwatch != NULL)
		j->unwatch(j->unwatch_arg, j->fd);
	fd_closep(&j->fd);
	end_remover(j);
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
		 * A private tmp the job left empty goes here (tmp_gone).
		 * Anything else in it, and a fresh root, the shepherd or a
		 * remover removes as the job's user, off our loop.
		 */
		if (idle && !refused && !j->fresh && tmp_gone(j))
			r->tmp_kept = false;
		else if (idle && way(j)->remove(j) == 0) {
			j->phase = JOB_REMOVING;
			j->t_deadline = j->t_grace = j->t_retry = INT64_MAX;
			j->t_poll = INT64_MAX;
			return;
		}
	}
	complete(j);
}

static void
refuse(struct job *j, int err, const char *why, enum op op, int op_err)
{
	j->refused = err;
	j->why = why;
	j->refused_op = op;
	j->refused_err = op_err;
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

/*
 * Without a shepherd the job's orphans come back to us, its subreaper:
 * its group's zombies are reaped before the group is looked at, or they
 * would read as still present. Only while the group is there (its members
 * hold the pgid): then every child of ours in it is the job's.
 */
static void
reap_group(struct job *j)
{
	siginfo_t si;

	if (!j->direct || j->group_gone)
		return;
	for (;;) {
		memset(&si, 0, sizeof(si));
		if (waitid(P_PGID, (id_t)j->child, &si, WEXITED | WNOHANG) != 0) {
			if (errno == EINTR)
				continue;
			return;
		}
		if (si.si_pid == 0)
			return;
	}
}

/*
 * Nothing of the job is left: its group is empty, no leftover is alive.
 * Relayed, the shepherd's account is the proof: it has no child left (a
 * sweep reports it), and only the job's descendants can be in its group.
 */
static bool
empty(struct job *j)
{
	reap_group(j);
	return !j->sweeping && !cgroup_busy(j) && way(j)->group_gone(j) == 1;
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
	int gone;

	if (cgroup_busy(j)) {
		/* A process of the job's cgroup outlived it, in its group or not. */
		settle_select(&j->settle, CONFINE_UNCERTAIN,
		    CONFINE_REASON_GROUP_STILL_PRESENT, 0, CONFINE_STEP_NONE);
	} else if ((gone = way(j)->group_gone(j)) == 0) {
		settle_select(&j->settle, CONFINE_UNCERTAIN,
		    CONFINE_REASON_GROUP_STILL_PRESENT, 0, CONFINE_STEP_NONE);
	} else if (gone == 1) {
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
on_exited(struct job *j, const struct job_report *r, int64_t now)
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
#ifdef __linux__
	/*
	 * A relayed stop that killed the cgroup too: a SIGKILL now is ours,
	 * whatever the shepherd answers (ESRCH, if our cgroup.kill landed
	 * first and it reaped the job before it read our word). Cancelled.
	 */
	if (j->relayed && j->stopping && j->cg.killed && WIFSIGNALED(status) &&
	    WTERMSIG(status) == SIGKILL)
		settle_select(&j->settle, CONFINE_CANCELLED, j->stop_why, 0,
		    CONFINE_STEP_NONE);
#endif
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
on_forked(struct job *j, const struct job_report *r, int64_t now)
{
	if (j->forked)
		return;
	j->forked = true;
	j->result.pid = r->pid;
	if (j->relayed)
		j->result.pgid = r->pid;  /* it leads its session and group */
	if (j->pending != CONFINE_REASON_NONE)
		stop(j, j->pending, now);
}

/*
 * What a job refused because its confinement could not be applied says:
 * a resource the helper ran out of (descriptors, memory, processes) as
 * itself, the job worth retrying later; anything else -ENOTSUP. The
 * seccomp listener passed at the descriptor limit can meet
 * ETOOMANYREFS (more descriptors in flight for the user than the limit):
 * out of descriptors too.
 */
static int
not_applied(int err)
{
	switch (err) {
	case ETOOMANYREFS:
		return -EMFILE;
	case EMFILE:
	case ENFILE:
	case ENOMEM:
	case EAGAIN:
		return -err;
	default:
		return -ENOTSUP;
	}
}

static void
on_exec(struct job *j, const struct job_report *r, int64_t now)
{
	(void)now;
	j->result.pid = r->pid;
	j->phase = JOB_RUNNING;
	if (r->type == REP_EXEC_OK) {
		j->events |= JOB_EV_STARTED;
	} else if (r->step == CONFINE_STEP_IDENTITY) {
		/* Never as the helper, never where its user may not. */
		refuse(j, r->err > 0 ? -r->err : -EPERM,
		    r->err == EACCES || r->err == EROFS ?
		    "the job's user may not write its scratch root" :
		    "the job could not take its client's uid, gid and groups",
		    r->op, r->err);
		j->result.error = r->err;
	} else if (r->step == CONFINE_STEP_CONFINE ||
	    r->step == CONFINE_STEP_LIMITS) {
		/* Never run unconfined or unbounded: refused. */
		refuse(j, not_applied(r->err), r->step == CONFINE_STEP_CONFINE ?
		    "the confinement could not be applied" :
		    "a resource bound or cgroup could not be applied", r->op,
		    r->err);
		j->result.error = r->err;
	} else {
		j->events |= JOB_EV_STARTED;
		settle_select(&j->settle, CONFINE_FAILED,
		    CONFINE_REASON_EXEC, r->err, r->step);
	}
}

static void
on_wait_failed(struct job *j, const struct job_report *r, int64_t now)
{
	settle_select(&j->settle, CONFINE_UNCERTAIN,
	    CONFINE_REASON_WAIT_FAILED, r->err, CONFINE_STEP_NONE);
	drain_start(j, now);
}

static void
on_swept(struct job *j, const struct job_report *r, int64_t now)
{
	j->sweeping = false;
	if (j->phase != JOB_DRAINING)
		return;
	/*
	 * Still something alive after the sweep: never proven, even if the
	 * group and the cgroup look empty (it left them).
	 */
	if (r->leftovers)
		finish(j);
	else
		drain_poll(j, now);
}

/*
 * The shepherd's answer to a relayed signal: the stop it was for is
 * Cancelled once it reached the job's group; ESRCH, the job was reaped
 * before it, and its exit decides; any other error is ambiguous.
 */
static void
on_signalled(struct job *j, const struct job_report *r, int64_t now)
{
	(void)now;
	if (r->err == 0 && j->stopping && j->stop_why != CONFINE_REASON_NONE)
		settle_select(&j->settle, CONFINE_CANCELLED, j->stop_why, 0,
		    CONFINE_STEP_NONE);
	else if (r->err != 0 && r->err != ESRCH)
		settle_select(&j->settle, CONFINE_UNCERTAIN,
		    CONFINE_REASON_KILL_AMBIGUOUS, r->err, CONFINE_STEP_NONE);
}

static void
on_removed(struct job *j, const struct job_report *r, int64_t now)
{
	(void)now;
	if (!(j->events & JOB_EV_REFUSED)) {
		j->result.scratch_kept = j->fresh && r->err != 0;
		j->result.tmp_kept = j->tmp != NULL && r->status != 0;
	}
	complete(j);
}

static void
on_setup_failed(struct job *j, const struct job_report *r, int64_t now)
{
	(void)now;
	if (r->op != OP_NONE)
		/* Its namespaces or its view: never run without them. */
		refuse(j, not_applied(r->err), "the confinement could not be applied",
		    r->op, r->err);
	else
		refuse(j, -r->err, "the shepherd could not start the job",
		    OP_NONE, 0);
	finish(j);
}

#define IN(phase) (1u << (phase))
#define ANY_PHASE (~0u)

/*
 * What may be reported of a job (report.h), and in which phases it is
 * heard; a report in any other phase (a late one, or one a confused
 * shepherd sends) is dropped: only these rows move a job.
 */
static const struct transition {
	enum report_type type;
	unsigned phases;
	void (*fn)(struct job *, const struct job_report *, int64_t);
} transitions[] = {
	{ REP_FORKED, IN(JOB_STARTING), on_forked },
	{ REP_EXEC_OK, IN(JOB_STARTING), on_exec },
	{ REP_EXEC_FAILED, IN(JOB_STARTING), on_exec },
	{ REP_SETUP_FAILED, IN(JOB_STARTING), on_setup_failed },
	{ REP_EXITED, IN(JOB_RUNNING), on_exited },
	{ REP_WAIT_FAILED, IN(JOB_RUNNING), on_wait_failed },
	/* A sweep ends in any phase; it is acted on while draining. */
	{ REP_SWEPT, ANY_PHASE, on_swept },
	/* Kills are asked for once the job is forked, until it is settled. */
	{ REP_SIGNALLED, IN(JOB_STARTING) | IN(JOB_RUNNING) | IN(JOB_DRAINING),
	    on_signalled },
	{ REP_REMOVED, IN(JOB_REMOVING), on_removed },
};

static void
on_report(struct job *j, const struct job_report *r, int64_t now)
{
	size_t i;

	for (i = 0; i < sizeof(transitions) / sizeof(transitions[0]); i++)
		if (transitions[i].type == r->type) {
			if (transitions[i].phases & IN(j->phase))
				transitions[i].fn(j, r, now);
			return;
		}
}

/* The direct way's child is the job itself: reaped here, reported. */
static void
exited_direct(struct job *j, int64_t now)
{
	struct job_report r = { .type = REP_EXITED, .pid = j->child };
	struct rusage ru;
	int status = 0;
	pid_t got;

	if (j->reaped)
		return;
	memset(&ru, 0, sizeof(ru));
	do
		got = j->sys->wait4(j->child, &status, WNOHANG, &ru);
	while (got < 0 && errno == EINTR);
	if (got == 0)
		return;  /* not yet: a wake-up early */
	if (got != j->child) {
		r.type = REP_WAIT_FAILED;
		r.err = got < 0 ? errno : ECHILD;
		proc_reap(j->child, NULL);
	} else {
		report_exited(&r, status, &ru, (clock_ns() - j->t_start) / 1000);
	}
	j->reaped = true;
	if (j->fd >= 0 && j->unwatch != NULL)
		j->unwatch(j->unwatch_arg, j->fd);
	fd_closep(&j->fd);
	/* Its group's zombies, while its pgid cannot be anyone else's. */
	reap_group(j);
	on_report(j, &r, now);
}

/* Reports off a shepherd's (or a remover's) socket, whole records. */
static void
read_reports(struct job *j, int64_t now)
{
	struct job_report r;
	ssize_t n;

	while (j->fd >= 0) {
		n = read(j->fd, j->rbuf + j->rlen, sizeof(j->rbuf) - j->rlen);
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
			on_report(j, &r, now);
	}
}

/* The job's pidfd until it is reaped; then its remover's socket. */
static void
input_direct(struct job *j, int64_t now)
{
	if (!j->reaped)
		exited_direct(j, now);
	else
		read_reports(j, now);
}

/* The direct way: the job itself exited; it goes on to its settlement. */
static bool
child_exited_direct(struct job *j, int64_t now)
{
	exited_direct(j, now);
	return false;
}

/*
 * A shepherd's or init's way: it died. What it said before is read, then
 * the job settles without it (job_shepherd_lost); the caller frees it.
 */
static bool
child_exited_shepherd(struct job *j, int64_t now)
{
	if (j->phase != JOB_DONE) {
		read_reports(j, now);
		job_shepherd_lost(j, now);
	}
	return true;
}

void
job_input(struct job *j, int64_t now)
{
	way(j)->input(j, now);
}

/* The shepherd removes the job's trees when asked, and reports it. */
static int
remove_asked(struct job *j)
{
	if (j->fd >= 0 && write(j->fd, (char[]){ SHEP_CMD_REMOVE }, 1) == 1)
		return 0;
	return -1;
}

static const struct job_way way_relayed = {
	.start = start_shepherd,
	.signal = relay,
	.group_gone = gone_by_account,
	.input = read_reports,
	.remove = remove_asked,
	.child_exited = child_exited_shepherd,
};

static const struct job_way way_held = {
	.start = start_shepherd,
	.signal = signal_held,
	.group_gone = gone_by_kill,
	.input = read_reports,
	.remove = remove_asked,
	.child_exited = child_exited_shepherd,
};

static const struct job_way way_direct = {
	.start = start_direct,
	.signal = signal_direct,
	.group_gone = gone_by_kill,
	.input = input_direct,
	.remove = start_remover,
	.child_exited = child_exited_direct,
};

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
	/*
	 * Still safe: the shepherd's zombie holds the pgid until we reap it.
	 * Relayed, nothing signals the job's group now: the job died with its
	 * shepherd (die_with_parent), and came back to us, a subreaper, whose
	 * reaping of it waits for this (serve.c); its group goes with it.
	 */
	if (j->relayed && j->result.pid > 0)
		(void)j->sys->kill(-j->result.pid, SIGKILL);
	(void)kill_all(j);
	if (j->phase == JOB_STARTING)
		refuse(j, -ECHILD, "the shepherd died before the job started",
		    OP_NONE, 0);
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
	j->stop_why = why;
	/*
	 * Relayed, the cgroup's kill may land before the shepherd reads ours,
	 * and the shepherd reap the job first and answer ESRCH: a SIGKILL
	 * after our cgroup.kill is ours all the same (on_exited).
	 */
	if ((sig == SIGKILL ? kill_all(j) : group_kill(j, sig)) == 0) {
		/* Relayed, the shepherd's answer decides (on_signalled). */
		if (!j->relayed)
			settle_select(&j->settle, CONFINE_CANCELLED, why, 0,
			    CONFINE_STEP_NONE);
	} else if (errno != ESRCH)
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
	    j->phase == JOB_DRAINING || j->phase == JOB_REMOVING ||
	    j->phase == JOB_DONE)
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
