#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include "helper/backend/caps.h"
#include "helper/backend/mountns.h"
#include "helper/backend/ns.h"
#include "helper/backend/seccomp.h"
#include "helper/backend/supervise.h"
#endif

#include "helper/engine/shepherd.h"
#include "src/core/clock.h"
#include "src/core/wire.h"
#include "src/core/fd.h"
#include "src/core/proc.h"
#include "src/core/sigpipe.h"
#include "src/core/tree.h"

void
shep_rec_encode(const struct job_report *r, unsigned char buf[SHEP_REC_LEN])
{
	struct wire_buf b = { .p = buf, .cap = SHEP_REC_LEN, .fixed = 1 };

	wire_put_u32(&b, (uint32_t)r->type);
	wire_put_u32(&b, (uint32_t)r->pid);
	wire_put_u32(&b, (uint32_t)r->status);
	wire_put_u32(&b, (uint32_t)r->err);
	wire_put_u32(&b, (uint32_t)r->step);
	wire_put_u32(&b, (uint32_t)r->op);
	wire_put_u32(&b, (uint32_t)r->leftovers);
	wire_put_u64(&b, (uint64_t)r->wall_us);
	wire_put_u64(&b, (uint64_t)r->user_us);
	wire_put_u64(&b, (uint64_t)r->sys_us);
	wire_put_u64(&b, (uint64_t)r->max_rss_kib);
}

int
shep_rec_decode(const unsigned char buf[SHEP_REC_LEN], struct job_report *r)
{
	struct wire_rd rd = WIRE_RD(buf, SHEP_REC_LEN);
	uint32_t op;

	r->type = (enum report_type)wire_get_u32(&rd);
	r->pid = (pid_t)wire_get_u32(&rd);
	r->status = (int)wire_get_u32(&rd);
	r->err = (int)wire_get_u32(&rd);
	r->step = wire_get_step(&rd);
	op = wire_get_u32(&rd);
	r->op = op <= OP_LAST ? (enum op)op : OP_NONE;
	r->leftovers = (int)wire_get_u32(&rd);
	r->wall_us = (int64_t)wire_get_u64(&rd);
	r->user_us = (int64_t)wire_get_u64(&rd);
	r->sys_us = (int64_t)wire_get_u64(&rd);
	r->max_rss_kib = (int64_t)wire_get_u64(&rd);
	if (wire_get_end(&rd) != 0)
		return -EBADMSG;
	return r->type >= REP_EXEC_OK && r->type <= REP_SIGNALLED ? 0 :
	    -EBADMSG;
}

#ifdef __linux__
#define SHEP_SUP_MAX (1 + SUP_PENDING)
#else
#define SHEP_SUP_MAX 0
#endif

struct shep {
	int ctl;
	int errp;          /* read end of the job's exec-error pipe, or -1 */
	int sigfd;        /* the self-pipe: SIGCHLD */
	pid_t group;       /* the job's pgid: its own pid, or ours */
	bool session;      /* the job leads its session: we signal its group */
	bool init;         /* we are pid 1 of the job's PID namespace */
	pid_t job_host;    /* the job's pid as the helper sees it */
	int host_root;     /* the host's / and /proc, from before the job's */
	int host_proc;     /* view was made (init), or -1 */
	int ns_proc;       /* the job's namespace's /proc, in its view, or -1 */
	bool ns_proc_tried;  /* opened at the first kill that needs it */
	pid_t job;
	bool reaped;
	bool sweeping;     /* the job exited, something of it did not */
	int swept;
	int64_t sweep_until;
	int64_t t_fork;
	const struct job_sys *sys;
#ifdef __linux__
	bool supervised;   /* the job's filter sends us its listener */
	int listener;      /* received with the exec result, or -1 */
	int listener_err;  /* -errno: named, but not ours to take */
	struct sup sup;    /* its calls, made (supervise.h) */
#endif
};

static void
report(struct shep *s, const struct job_report *r)
{
	unsigned char buf[SHEP_REC_LEN];

	shep_rec_encode(r, buf);
	/* The helper gone: EOF on ctl tells us soon enough. */
	(void)fd_write_full(s->ctl, buf, sizeof(buf));
}

static _Noreturn void
setup_failed(struct shep *s, enum op op, int err)
{
	struct job_report r = { .type = REP_SETUP_FAILED, .err = err, .op = op };

	report(s, &r);
	_exit(0);
}

#ifdef __linux__
static const struct child_plan *the_plan;

/*
 * The job exec'd with its filter: its listener must be ours, or its
 * socket calls would wait for ever. Without it, the job is killed and
 * refused.
 */
static void
start_supervising(struct shep *s, struct job_report *r)
{
	const struct child_plan *p = the_plan;
	struct sup_creds c = { .uid = p->init_uid, .gid = p->init_gid };
	int rc = s->listener_err != 0 ? s->listener_err : -EPROTO;

	/* A client's job, of a root helper's: its credentials. */
	if (p->become != NULL) {
		c.uid = p->become->uid;
		c.gid = p->become->gid;
		c.groups = p->become->groups;
		c.ngroups = p->become->ngroups;
		c.set_groups = true;
	}
	if (s->listener >= 0 && (rc = sup_init(&s->sup, s->listener, &c)) == 0) {
		s->listener = -1;
		return;
	}
	kill(-1, SIGKILL);
	r->type = REP_EXEC_FAILED;
	r->step = CONFINE_STEP_CONFINE;
	r->op = OP_SUPERVISE;
	r->err = -rc;
}
#endif

/*
 * One message of the exec-error channel: a pipe's bytes, or where the job
 * names its filter's listener first, a seqpacket socket's message. That
 * one is taken from the job (pidfd_getfd), and the job told to go on;
 * or, made in our own table ('S'), simply kept.
 */
static ssize_t
read_errp(struct shep *s, unsigned char *buf, size_t len)
{
#ifdef __linux__
	ssize_t n = read(s->errp, buf, len);
	int num, pidfd = -1, fd = -1;
	bool shared;

	if (!s->supervised || n != 1 + (ssize_t)sizeof(int) ||
	    (buf[0] != 'L' && buf[0] != 'S'))
		return n;
	shared = buf[0] == 'S';
	memcpy(&num, buf + 1, sizeof(int));
	/* 'S': made in the table the job shared with us (child_start). */
	if (shared && num < 0)
		errno = EBADF;
	else if (shared)
		fd = num;
	else if ((pidfd = (int)syscall(SYS_pidfd_open, s->job, 0)) >= 0)
		fd = (int)syscall(SYS_pidfd_getfd, pidfd, num, 0);
	if (fd < 0) {
		s->listener_err = -errno;
	} else {
		if (s->listener >= 0)
			close(s->listener);
		s->listener = fd;
	}
	if (pidfd >= 0)
		close(pidfd);
	/* Gone meanwhile: its EOF, or its record, comes next all the same. */
	if (!shared && write(s->errp, "", 1) != 1)
		s->listener_err = s->listener_err != 0 ? s->listener_err : -EPIPE;
	return 1;
#else
	return read(s->errp, buf, len);
#endif
}

#ifdef __linux__
/*
 * The child's first message, where it is its listener's name: taken now,
 * so that the child goes on at once. Anything else (a record of a step
 * that failed, or EOF) stays for read_exec_result.
 */
static void
take_listener(struct shep *s)
{
	unsigned char buf[CHILD_ERR_LEN + 1 + sizeof(int)];
	ssize_t n;

	do
		n = recv(s->errp, buf, sizeof(buf), MSG_PEEK);
	while (n < 0 && errno == EINTR);
	if (n == 1 + (ssize_t)sizeof(int) && (buf[0] == 'L' || buf[0] == 'S'))
		(void)read_errp(s, buf, sizeof(buf));
}
#endif

/* The exec-error pipe: a record means a step failed, EOF means exec. */
static void
read_exec_result(struct shep *s)
{
	unsigned char rec[CHILD_ERR_LEN];
	struct job_report r = { .type = REP_EXEC_OK, .pid = s->job_host };
	ssize_t n;

	do
		n = read_errp(s, rec, sizeof(rec));
	while ((n < 0 && errno == EINTR) ||
	    (n == 1 && (rec[0] == 'L' || rec[0] == 'S')));
	if (n == (ssize_t)sizeof(rec)) {
		r.type = REP_EXEC_FAILED;
		r.step = child_err_decode(rec, &r.op, &r.err);
	}
	fd_closep(&s->errp);
#ifdef __linux__
	if (s->supervised && r.type == REP_EXEC_OK)
		start_supervising(s, &r);
#endif
	report(s, &r);
}

static void
reap_job(struct shep *s, struct job_report *r)
{
	struct rusage ru;
	pid_t got;
	int status;

	/* The job is dead, so its exec result is ready and must come first. */
	if (s->errp >= 0)
		read_exec_result(s);
	memset(&ru, 0, sizeof(ru));
	r->type = REP_EXITED;
	r->pid = s->job_host;
	do
		got = s->sys->wait4(s->job, &status, 0, &ru);
	while (got < 0 && errno == EINTR);
	if (got != s->job) {
		r->type = REP_WAIT_FAILED;
		r->err = got < 0 ? errno : ECHILD;
		/* Reap it anyway, or it would be reported to us for ever. */
		proc_reap(s->job, &status);
	} else {
		report_exited(r, status, &ru, (clock_ns() - s->t_fork) / 1000);
	}
	s->reaped = true;
}

/*
 * Children not yet exited (after reap() took the exited ones). Only
 * ECHILD proves there are none: any other error counts as children left,
 * so that it can make a job Uncertain, never Completed.
 */
static bool
has_children(const struct shep *s)
{
	siginfo_t si;
	int rc;

	do {
		memset(&si, 0, sizeof(si));
		rc = s->sys->waitid(P_ALL, 0, &si, WEXITED | WNOHANG | WNOWAIT);
	} while (rc != 0 && errno == EINTR);
	return rc == 0 || errno != ECHILD;
}

#define SWEEP_NS (10000 * 1000000LL)
#define SWEEP_POLL_MS 10
#define REAP_POLL_MS 1000

#ifdef __linux__
/*
 * The /proc of our view: ours only if it is our namespace's, where we
 * are pid 1 ("self" is 1). -1 where it is not.
 */
static int
ns_proc_open(void)
{
	char self[8];
	int fd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd >= 0 && (readlinkat(fd, "self", self, sizeof(self)) != 1 ||
	    self[0] != '1')) {
		close(fd);
		fd = -1;
	}
	return fd;
}
#endif

/*
 * kill(-1, sig) as pid 1 of the job's namespace has it: every other
 * process there, as the namespace's own /proc lists them. kill(-1)
 * itself walks every process of the machine (kill_something_info), at a
 * cost that grows with the host's load, once a job. 0 when one was
 * signalled, else -1 and errno as kill(-1) would say (ESRCH: none). One
 * forked as we read may be missed: its parent's SIGKILL stops any more,
 * and once that parent is gone it is our child, for the sweep. Without
 * that /proc, or where it cannot be read, kill(-1).
 */
static int
ns_kill(struct shep *s, int sig)
{
	struct dirent *e;
	DIR *d;
	char *end;
	long pid;
	int fd, err = ESRCH, hit = 0;

#ifdef __linux__
	/* Not on the way to a job's start: at the first kill, in the view. */
	if (!s->ns_proc_tried) {
		s->ns_proc_tried = true;
		s->ns_proc = ns_proc_open();
	}
#endif
	if (s->ns_proc < 0 || (fd = openat(s->ns_proc, ".", O_RDONLY |
	    O_DIRECTORY | O_CLOEXEC)) < 0)
		return s->sys->kill(-1, sig);
	if ((d = fdopendir(fd)) == NULL) {
		close(fd);
		return s->sys->kill(-1, sig);
	}
	while ((e = readdir(d)) != NULL) {
		pid = strtol(e->d_name, &end, 10);
		if (*end != '\0' || end == e->d_name || pid <= 1)
			continue;
		if (s->sys->kill((pid_t)pid, sig) == 0)
			hit = 1;
		else if (errno != ESRCH)
			err = errno;
	}
	closedir(d);
	if (hit)
		return 0;
	errno = err;
	return -1;
}

#ifdef __linux__
static int
kill_child(pid_t child, void *arg)
{
	struct shep *s = arg;

	if (kill(child, SIGKILL) == 0)
		s->swept++;
	return 0;
}
#endif

/*
 * SIGKILL to every child. They are ours and unreaped, so no pid here can
 * belong to anyone else. Their own children come back to us next round.
 */
static void
kill_children(struct shep *s)
{
#ifdef __linux__
	/* pid 1 of the job's namespace: every process in it but us. */
	if (s->init) {
		if (ns_kill(s, SIGKILL) == 0)
			s->swept++;
		return;
	}
	/* By /proc/self, as ever: this /proc may be another namespace's. */
	(void)proc_children_each(0, getpid(), kill_child, s);
#else
	(void)s;  /* no subreaper: orphans are not ours to find */
#endif
}

static void
sweep(struct shep *s)
{
	struct job_report r = { .type = REP_SWEPT };

	if (has_children(s) && clock_ns() < s->sweep_until) {
		kill_children(s);
		return;
	}
	s->sweeping = false;
	r.status = s->swept;
	r.leftovers = has_children(s);
	report(s, &r);
}

/*
 * Reap whatever has exited: the job, and orphans that came back to us.
 * The job's report waits until the zombies reparented with it are reaped,
 * so that what is left really is alive.
 */
static void
reap(struct shep *s)
{
	struct job_report r = { 0 };
	bool job_now = false;
	pid_t pid;

	while ((pid = proc_exited_child()) > 0) {
		if (pid == s->job && !s->reaped) {
			reap_job(s, &r);
			job_now = true;
		} else {
			proc_reap(pid, NULL);
		}
	}
	if (job_now) {
#ifdef __linux__
		r.leftovers = has_children(s);
#endif
		report(s, &r);
		if (r.leftovers) {
			s->sweeping = true;
			s->sweep_until = clock_ns() + SWEEP_NS;
			kill_children(s);
		}
	} else if (s->sweeping) {
		sweep(s);
	}
}

/*
 * The helper's stop or cleanup: the job's group signalled while the job,
 * alive or a zombie not yet reaped, holds its id; with SIGKILL our
 * children too, those of the job that left its group. Once the job is
 * reaped its group id is anyone's: ESRCH, and what is left of it is our
 * children, which a sweep kills.
 */
static void
signal_job(struct shep *s, int sig)
{
	struct job_report r = { .type = REP_SIGNALLED, .status = sig };

	/*
	 * As pid 1 of the job's namespace, every process of the job, in its
	 * group or not, and never one outside it, reaped or not.
	 */
	if (s->init) {
		if (ns_kill(s, sig) != 0)
			r.err = errno;
	} else if (s->reaped) {
		r.err = ESRCH;
	} else if (s->sys->kill(-s->group, sig) != 0) {
		r.err = errno;
	}
	/* Our children too, where the group did not reach them all. */
	if (sig == SIGKILL && !s->init)
		kill_children(s);
	report(s, &r);
}

#define REMOVE_DEPTH 256

/* path, absolute, beneath at (the host's /, or AT_FDCWD for ours). */
static const char *
beneath(int at, const char *path)
{
	return at == AT_FDCWD ? path : path + strspn(path, "/");
}

/* As the job's user: it removes what that user could, and no more. */
void
shepherd_remove(int ctl, const struct ident *become, const struct ident *self,
    int at, const char *root, const char *tmp)
{
	struct job_report r = { .type = REP_REMOVED };
	unsigned char buf[SHEP_REC_LEN];
	int rc = become != NULL ? ident_enter(become, self) : 0;

	/* err: the fresh root's removal; status: the private tmp's. */
	if (root != NULL)
		r.err = -(rc != 0 ? rc : tree_remove(at, beneath(at, root),
		    TREE_CHMOD, REMOVE_DEPTH));
	if (tmp != NULL)
		r.status = -(rc != 0 ? rc : tree_remove(at, beneath(at, tmp),
		    TREE_CHMOD, REMOVE_DEPTH));
	shep_rec_encode(&r, buf);
	(void)fd_write_full(ctl, buf, sizeof(buf));
}

static void
set_signals(sigset_t *chld)
{
	struct sigaction sa;

	sigemptyset(chld);
	sigaddset(chld, SIGCHLD);
	sigprocmask(SIG_BLOCK, chld, NULL);
	/* The helper's handlers refer to its state: none of them apply here. */
	proc_signals_default();
	proc_helper_signals();
	/* A report to a helper gone is an error to read, not our death. */
	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &sa, NULL);
	/* SIGCHLD's own, with the self-pipe: shepherd_main, still blocked. */
}

/* The job is in its group, and a kill of the group cannot reach us. */
static void
report_forked(struct shep *s)
{
	struct job_report r = { .type = REP_FORKED, .pid = s->job_host };

	report(s, &r);
}

#ifdef __linux__
/* The first child listed, and how many are. */
struct one_child {
	pid_t pid;
	long n;
};

static int
note_child(pid_t pid, void *arg)
{
	struct one_child *c = arg;

	if (c->n++ == 0)
		c->pid = pid;
	return 0;
}

/*
 * The one child of this thread, in the host's /proc: where a pidfd's
 * fdinfo is closed to us (Linux before 5.14 lets only a dumpable process
 * read its own, and one that took a user namespace is not). -1 unless
 * exactly one is listed; the job is the only child the init has made.
 */
static pid_t
host_child(const struct shep *s)
{
	struct one_child c = { -1, 0 };

	if (proc_children_at(s->host_proc, 0, 0, note_child, &c) != 1)
		return -1;
	return c.pid > 0 ? c.pid : -1;
}

/*
 * The job's pid as the helper sees it, from the host's /proc (read before
 * the job's view covered ours): the Pid of a pidfd's fdinfo is in the pid
 * namespace of the /proc it is read through. -1 when it cannot be read.
 */
static pid_t
host_pid(const struct shep *s, pid_t pid)
{
	char path[64], buf[512], *p;
	ssize_t n;
	long v = -1;
	int pidfd, err;

	pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (pidfd < 0)
		return -1;
	snprintf(path, sizeof(path), "self/fdinfo/%d", pidfd);
	n = fd_read_small(s->host_proc, path, buf, sizeof(buf));
	err = n < 0 ? errno : 0;
	close(pidfd);
	if (err == EACCES)
		return host_child(s);
	if (n < 0)
		return -1;
	if ((p = strstr(buf, "\nPid:")) != NULL)
		v = strtol(p + 6, NULL, 10);
	return v > 0 ? (pid_t)v : -1;
}

void
shepherd_prepare(struct init_prep *pr, bool userns, uid_t uid, gid_t gid)
{
	enum op op = OP_NONE;
	int rc = 0;

	pr->host_root = pr->host_proc = pr->dev = pr->proc = pr->tmp = -1;
	if (userns)
		rc = ns_map_self(uid, gid, &op);
	if (rc == 0 && ((pr->host_root = open("/", O_PATH | O_DIRECTORY |
	    O_CLOEXEC)) < 0 || (pr->host_proc = open("/proc", O_PATH |
	    O_DIRECTORY | O_CLOEXEC)) < 0)) {
		op = OP_MOUNT_PROC;
		rc = -errno;
	}
	if (rc == 0)
		rc = ns_enter(&op);
	/*
	 * The bounding set the job will inherit, the same for every job:
	 * dropped here, ahead of a prepared init's request. (It bounds what
	 * an exec may gain; our own capabilities, which the view needs, stay.)
	 */
	if (rc == 0) {
		op = OP_CAPBSET_DROP;
		rc = caps_drop_bounding();
	}
	pr->err = -rc;
	pr->op = op;
}

void
shepherd_prepare_view(struct init_prep *pr)
{
	struct mountns_ready ready;

	if (pr->err != 0)
		return;
	mountns_ready_make(&ready);
	pr->dev = ready.dev;
	pr->proc = ready.proc;
}

/*
 * As pid 1 of the job's PID namespace, before the job, once what no
 * request changes is done (pr: its namespaces, the bounding set the job
 * will inherit): its view (as its client, where it has one). 0, or -errno
 * with *op the call that failed. (The benchmark's floors take the same
 * step, so that the order of confinement is written here and in child.c
 * only.)
 */
int
shepherd_view(const struct child_plan *plan, const struct init_prep *pr,
    enum op *op)
{
	struct mountns_ready ready = { pr->dev, pr->proc, pr->tmp };
	int rc = -pr->err;

	*op = pr->op;
	/*
	 * The view as the client sees the paths, where the job is another
	 * user's; then ours again: its cgroup is joined as we are, and the
	 * job takes its client's credentials itself.
	 */
	if (rc == 0 && plan->become != NULL)
		rc = ident_start(plan->become, op);
	if (rc == 0)
		rc = mountns_apply(&plan->view, &ready, op);
	mountns_ready_close(&ready);
	if (rc == 0 && plan->become != NULL && (rc = ident_revert(plan->self)) != 0)
		*op = OP_SETFSUID;
	/*
	 * Nothing of the job may read or trace us. (Here, not ahead: a
	 * change of fsuid above resets it.)
	 */
	if (rc == 0 && prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0) {
		*op = OP_NONE;
		rc = -errno;
	}
	return rc;
}

/*
 * The init's own setup: we keep the host's / and /proc for what the
 * helper sees (the job's pid, the trees to remove).
 */
static void
init_setup(struct shep *s, const struct child_plan *plan,
    const struct init_prep *pr)
{
	enum op op;
	int rc;

	s->host_root = pr->host_root;
	s->host_proc = pr->host_proc;
	if ((rc = shepherd_view(plan, pr, &op)) != 0)
		setup_failed(s, op, -rc);
}
#endif

/*
 * The job's exec-error channel: a pipe, or where its filter's listener
 * comes through it too, a seqpacket socket pair (a message each).
 */
static int
errp_make(const struct shep *s, int p[2])
{
#ifdef __linux__
	if (s->supervised)
		return socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, p) ==
		    0 ? 0 : -errno;
#else
	(void)s;
#endif
	return fd_pipe(p);
}

void
shepherd_main(const struct child_plan *plan, int ctl, const struct job_sys *sys,
    const struct init_prep *pr)
{
	struct shep s = { .ctl = ctl, .errp = -1, .sigfd = -1, .sys = sys,
		.session = plan->own_session, .init = plan->in_init,
		.host_root = -1, .host_proc = -1, .ns_proc = -1,
#ifdef __linux__
		.listener = -1, .sup = { .listener = -1 },
		.supervised = plan->in_init && plan->seccomp != NULL &&
		    plan->seccomp->listener,
#endif
	};
	int keep[] = { ctl, plan->fd[0], plan->fd[1], plan->fd[2],
		plan->cg_procs[0], plan->cg_procs[1], plan->cg_procs[2],
		plan->cg_dir, pr != NULL ? pr->host_root : -1,
		pr != NULL ? pr->host_proc : -1, pr != NULL ? pr->dev : -1,
		pr != NULL ? pr->proc : -1, pr != NULL ? pr->tmp : -1 };
	struct child_plan mine = *plan;
#ifdef __linux__
	struct init_prep here;
#endif
	int errp[2], rc, i;
	pid_t home = getpgrp();
	struct pollfd pfd[3 + SHEP_SUP_MAX];
	int timeout;
	size_t sn = 0;
	sigset_t chld;
	nfds_t n;

	set_signals(&chld);
	fd_close_except(keep, sizeof(keep) / sizeof(keep[0]));
#ifdef __linux__
	the_plan = plan;
#endif
#ifdef __linux__
	if (s.init && pr == NULL) {
		shepherd_prepare(&here, plan->init_userns, plan->init_uid,
		    plan->init_gid);
		pr = &here;
	}
	if (s.init)
		init_setup(&s, plan, pr);
#else
	(void)pr;
#endif
	/*
	 * Where kill(-pgid, 0) is the proof, the group is ours. Else the job
	 * makes its own session, and dies with us: we alone signal it.
	 */
	if (!s.session) {
		s.group = getpid();
		if (setpgid(0, 0) != 0)
			setup_failed(&s, OP_NONE, errno);
	} else {
		mine.die_with_parent = true;
		mine.parent = getpid();
	}
#ifdef __linux__
	if (plan->subreaper && prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0)
		setup_failed(&s, OP_NONE, errno);
#endif
	{
		static const int sigs[] = { SIGCHLD };

		if ((s.sigfd = sigpipe_open(sigs, 1, SA_NOCLDSTOP)) < 0)
			setup_failed(&s, OP_NONE, -s.sigfd);
	}
	if ((rc = errp_make(&s, errp)) != 0)
		setup_failed(&s, OP_NONE, -rc);
	s.t_fork = clock_ns();
	/* errp[0] is close-on-exec and closed with the rest in the child. */
	s.job = child_start(&mine, errp[1]);
	if (s.job < 0)
		setup_failed(&s, OP_NONE, errno);
	close(errp[1]);
	s.errp = errp[0];
#ifdef __linux__
	/*
	 * Its listener before anything: a copy of us waits for our word
	 * meanwhile; one that shared our table made it there, and is gone on.
	 */
	if (s.supervised)
		take_listener(&s);
#endif
	s.job_host = s.job;
#ifdef __linux__
	if (s.init && (s.job_host = host_pid(&s, s.job)) < 0) {
		rc = errno;
		kill(-1, SIGKILL);
		proc_reap(s.job, NULL);
		setup_failed(&s, OP_MOUNT_PROC, rc ? rc : EIO);
	}
#endif
	/* The job has its copies; the shepherd must not hold its pipes. */
	for (i = 0; i < 3; i++) {
		if (plan->fd[i] >= 0 && plan->fd[i] != ctl)
			close(plan->fd[i]);
		if (plan->cg_procs[i] >= 0)
			close(plan->cg_procs[i]);
	}
	if (plan->cg_dir >= 0)
		close(plan->cg_dir);
	if (s.session) {
		/*
		 * Its session and group exist once its exec result is in: at
		 * once after a vfork-like start, else when it exec'd or failed.
		 */
		s.group = s.job;
		report_forked(&s);
		read_exec_result(&s);
	} else {
		if (s.sys->in_group != NULL)
			s.sys->in_group();
		/* Leave the group: its id stays ours, its members the job's. */
		if (setpgid(0, home) != 0) {
			rc = errno;
			kill(-s.group, SIGKILL);
			proc_reap(s.job, NULL);
			setup_failed(&s, OP_NONE, rc);
		}
		report_forked(&s);
	}
	sigprocmask(SIG_UNBLOCK, &chld, NULL);

	for (;;) {
		nfds_t ei = 0, si;

		n = 0;
		pfd[n].fd = s.ctl;
		pfd[n++].events = POLLIN;
		pfd[n].fd = s.sigfd;
		pfd[n++].events = POLLIN;
		if (s.errp >= 0) {
			ei = n;
			pfd[n].fd = s.errp;
			pfd[n++].events = POLLIN;
		}
		/*
		 * Sweeping, look again soon even if no child died; else once a
		 * second all the same: an exit whose SIGCHLD did not wake us
		 * (seen once under ThreadSanitizer, which defers handlers) is
		 * then late by a second, never missed until the next one.
		 */
		timeout = s.sweeping ? SWEEP_POLL_MS : REAP_POLL_MS;
		si = n;
#ifdef __linux__
		/* And the job's socket calls, while anything of it may call. */
		sn = sup_poll(&s.sup, pfd + n, &timeout);
		n += (nfds_t)sn;
#endif
		rc = poll(pfd, n, timeout);
		if (rc < 0)
			continue;  /* EINTR: the self-pipe has the news */
		if (ei > 0 && pfd[ei].revents != 0)
			read_exec_result(&s);
#ifdef __linux__
		sup_run(&s.sup, pfd + si, sn);
#else
		(void)si;
		(void)sn;
#endif
		if (pfd[1].revents != 0) {
			sigpipe_drain(s.sigfd, NULL, NULL);
			reap(&s);
		} else if (rc == 0 && s.sweeping) {
			sweep(&s);
		} else if (rc == 0 && !s.reaped) {
			reap(&s);
		}
		/* A command, or EOF: the helper released us or is gone. */
		if (pfd[0].revents != 0) {
			char cmd;

			if (read(s.ctl, &cmd, 1) != 1)
				break;
			if (cmd == SHEP_CMD_REMOVE && s.reaped && !s.sweeping) {
#ifdef __linux__
				/*
				 * The view's mount of the fresh root would keep
				 * the host's directory busy: ours alone now.
				 */
				if (s.init && plan->remove_root != NULL)
					(void)umount2(plan->remove_root, MNT_DETACH);
#endif
				shepherd_remove(s.ctl, plan->become, plan->self,
				    s.init ? s.host_root : AT_FDCWD,
				    plan->remove_root, plan->remove_tmp);
				continue;
			}
			if (s.session && (cmd == SHEP_CMD_TERM ||
			    cmd == SHEP_CMD_KILL)) {
				signal_job(&s, cmd == SHEP_CMD_TERM ? SIGTERM :
				    SIGKILL);
				continue;
			}
			break;
		}
	}
	if (!s.reaped) {
		/* Released early or the helper died: the job must not outlive us. */
		if (!s.init)
			kill(-s.group, SIGKILL);
		kill_children(&s);
		proc_reap(s.job, NULL);
	}
	_exit(0);
}
