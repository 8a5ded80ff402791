/*
 * The ways to start and settle /bin/true that the benchmark compares, the
 * host's resident memory and the idle threads it holds.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "helper/backend/landlock.h"
#include "helper/backend/mountns.h"
#include "helper/backend/op.h"
#include "helper/backend/seccomp.h"
#include "helper/engine/child.h"
#include "helper/engine/shepherd.h"
#include "tools/bench/bench.h"

#define TRUE_PATH "/bin/true"
#define PAGE 4096

/* Every method's job gets the same empty environment confine gives. */
static char *const no_env[] = { NULL };
static const char *const true_argv[] = { "true", NULL };

static const char *const names[RUN_NMETHODS] = {
	[RUN_FORK] = "fork+exec",
	[RUN_SPAWN] = "posix_spawn",
	[RUN_CONFINE] = "confine-landlock",
	[RUN_CONFINE_NONE] = "confine-none",
	[RUN_BWRAP] = "bwrap",
	[RUN_FLOOR_SERVER] = "floor-server",
	[RUN_FLOOR_SHEPHERD] = "floor-shepherd",
	[RUN_FLOOR_VFORK] = "floor-vfork",
	[RUN_FLOOR_CONFINED] = "floor-confined",
	[RUN_FLOOR_VIEW] = "floor-view",
	[RUN_CONFINE_READ] = "confine-read",
	[RUN_CONFINE_LATE] = "confine-late-fork",
	[RUN_CONFINE_SHEP] = "confine-shepherd",
	[RUN_FLOOR_NS] = "floor-ns",
	[RUN_CONFINE_UNPREP] = "confine-unprepared",
	[RUN_FLOOR_TMP] = "floor-tmp",
};

const char *
run_name(enum run_method m)
{
	return m < RUN_NMETHODS ? names[m] : "?";
}

static int
wait_ok(pid_t pid, const char *what)
{
	int status;

	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR) {
			fprintf(stderr, "bench: waitpid %s: %s\n", what,
			    strerror(errno));
			return -1;
		}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fprintf(stderr, "bench: %s: status 0x%x\n", what, status);
		return -1;
	}
	return 0;
}

static int
run_fork(void)
{
	pid_t pid = fork();

	if (pid < 0) {
		fprintf(stderr, "bench: fork: %s\n", strerror(errno));
		return -1;
	}
	if (pid == 0) {
		execve(TRUE_PATH, (char *const *)(uintptr_t)true_argv, no_env);
		_exit(127);
	}
	return wait_ok(pid, "fork+exec");
}

static int
run_spawn(const char *path, const char *const *argv, const char *what)
{
	pid_t pid;
	int rc;

	rc = posix_spawn(&pid, path, NULL, NULL, (char *const *)(uintptr_t)argv,
	    no_env);
	if (rc != 0) {
		fprintf(stderr, "bench: posix_spawn %s: %s\n", path, strerror(rc));
		return -1;
	}
	return wait_ok(pid, what);
}

static int
run_bwrap(const struct runner *r)
{
	const char *argv[] = { "bwrap", "--ro-bind", "/", "/", "--bind",
		r->scratch, r->scratch, "--unshare-net", "--die-with-parent",
		TRUE_PATH, NULL };

	return run_spawn(r->bwrap, argv, "bwrap");
}

static int
spawn_flags(struct confine *c, const char *scratch, const char *exe,
    const char *const *argv, int64_t deadline_ms, enum confine_backend backend,
    unsigned flags, struct confine_job **job)
{
	struct confine_spec spec;
	int rc;

	confine_spec_init(&spec);
	spec.flags = flags;
	spec.exe = exe;
	spec.argv = argv;
	spec.scratch = scratch;
	spec.deadline_ms = deadline_ms;
	spec.backend = backend;
	rc = confine_spawn(c, &spec, job);
	if (rc != 0)
		fprintf(stderr, "bench: confine_spawn: %s\n",
		    confine_error_message());
	return rc;
}

static int
spawn_backend(struct confine *c, const char *scratch, const char *exe,
    const char *const *argv, int64_t deadline_ms, enum confine_backend backend,
    struct confine_job **job)
{
	return spawn_flags(c, scratch, exe, argv, deadline_ms, backend, 0, job);
}

int
run_confine_spawn(struct confine *c, const char *scratch, const char *exe,
    const char *const *argv, int64_t deadline_ms, struct confine_job **job)
{
	return spawn_backend(c, scratch, exe, argv, deadline_ms,
	    CONFINE_BACKEND_LANDLOCK, job);
}

static int
run_confine(struct confine *c, const char *scratch, enum confine_backend b,
    unsigned flags, struct run_phases *ph, struct run_probe *probe)
{
	struct confine_result res;
	struct confine_job *job;
	int64_t t0 = bench_now(), t1;
	int rc;

	if (c == NULL)
		return -1;
	if (spawn_flags(c, scratch, TRUE_PATH, true_argv, 0, b, flags, &job) != 0)
		return -1;
	t1 = bench_now();
	rc = confine_wait(job, -1, &res);
	if (rc == 0 && probe != NULL) {
		probe->pid = res.pid;
		probe->pgid = res.pgid;
		snprintf(probe->tmp, sizeof(probe->tmp), "%s",
		    confine_job_tmp(job));
	}
	confine_job_free(job);
	if (ph != NULL) {
		ph->spawn_us = (double)(t1 - t0) / 1000.0;
		ph->settle_us = (double)(bench_now() - t1) / 1000.0;
		ph->wall_us = (double)res.wall_us;
	}
	if (rc != 0 || res.outcome != CONFINE_COMPLETED) {
		fprintf(stderr, "bench: confine job: %s (%s)\n",
		    rc ? confine_error_message() : confine_outcome_name(res.outcome),
		    rc ? "" : confine_reason_name(res.reason));
		return -1;
	}
	return 0;
}

/*
 * The environment's name set to value (NULL: unset), what it was kept in
 * *was (NULL: unset) for env_restore. 0 or -errno.
 */
static int
env_swap(const char *name, const char *value, char **was)
{
	const char *v = getenv(name);

	*was = v != NULL ? strdup(v) : NULL;
	if (v != NULL && *was == NULL)
		return -ENOMEM;
	if ((value != NULL ? setenv(name, value, 1) : unsetenv(name)) == 0)
		return 0;
	free(*was);
	*was = NULL;
	return -errno;
}

static void
env_restore(const char *name, char *was)
{
	if (was != NULL)
		(void)setenv(name, was, 1);
	else
		(void)unsetenv(name);
	free(was);
}

int
run_open(struct confine **c, const struct confine_options *opt,
    bool shepherd)
{
	char *was;
	int rc;

	if ((rc = env_swap("CONFINE_SHEPHERD", shepherd ? "1" : NULL, &was)) != 0)
		return rc;
	rc = confine_open(c, opt);
	env_restore("CONFINE_SHEPHERD", was);
	return rc;
}

int
run_open_unprepared(struct confine **c, const struct confine_options *opt)
{
	char *was;
	int rc;

	if ((rc = env_swap("CONFINE_PREPARED", "0", &was)) != 0)
		return rc;
	rc = run_open(c, opt, false);
	env_restore("CONFINE_PREPARED", was);
	return rc;
}

/* A job that prints its parent's pid: the helper's, without a shepherd. */
static int
probe_parent(struct confine *c, const char *scratch, pid_t *ppid)
{
	static const char *const argv[] = { "sh", "-c", "echo $PPID", NULL };
	struct confine_result res;
	struct confine_spec spec;
	struct confine_job *job;
	char buf[32];
	ssize_t n;
	int p[2], rc;

	if (pipe(p) != 0)
		return -1;
	confine_spec_init(&spec);
	spec.exe = "/bin/sh";
	spec.argv = argv;
	spec.scratch = scratch;
	spec.stdout_fd = p[1];
	rc = confine_spawn(c, &spec, &job);
	close(p[1]);
	if (rc == 0) {
		rc = confine_wait(job, -1, &res);
		confine_job_free(job);
	}
	n = rc == 0 ? read(p[0], buf, sizeof(buf) - 1) : -1;
	close(p[0]);
	if (n <= 0 || res.outcome != CONFINE_COMPLETED)
		return -1;
	buf[n] = '\0';
	*ppid = (pid_t)atol(buf);
	return 0;
}

int
run_probe(struct confine *c, const char *scratch, struct run_probe *out)
{
	pid_t ppid;

	memset(out, 0, sizeof(*out));
	if (run_confine(c, scratch, CONFINE_BACKEND_LANDLOCK, 0, NULL, out) != 0 ||
	    probe_parent(c, scratch, &ppid) != 0)
		return -1;
	out->direct = ppid == confine_helper_pid(c);
	return 0;
}

/* ---- the floors ---- */

static int floor_fd[2] = { -1, -1 };
static pid_t floor_pid[2];

/* posix_spawn + waitpid; in the shepherd variant from a forked child. */
static int
floor_one(bool shepherd)
{
	pid_t pid;

	if (!shepherd)
		return run_spawn(TRUE_PATH, true_argv, "floor-server");
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0)
		_exit(run_spawn(TRUE_PATH, true_argv, "floor-shepherd") ? 1 : 0);
	return wait_ok(pid, "floor shepherd");
}

static _Noreturn void
floor_serve(int fd, bool shepherd)
{
	char c;

	while (read(fd, &c, 1) == 1) {
		c = floor_one(shepherd) == 0 ? 0 : 1;
		if (write(fd, &c, 1) != 1)
			break;
	}
	_exit(0);
}

int
run_floor_start(void)
{
	int sv[2], k;

	for (k = 0; k < 2; k++) {
		if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
			return -1;
		floor_pid[k] = fork();
		if (floor_pid[k] < 0)
			return -1;
		if (floor_pid[k] == 0) {
			close(sv[0]);
			if (k == 1)
				close(floor_fd[0]);
			floor_serve(sv[1], k == 1);
		}
		close(sv[1]);
		floor_fd[k] = sv[0];
	}
	return 0;
}

void
run_floor_stop(void)
{
	int k;

	for (k = 0; k < 2; k++) {
		if (floor_fd[k] < 0)
			continue;
		close(floor_fd[k]);
		floor_fd[k] = -1;
		while (waitpid(floor_pid[k], NULL, 0) < 0 && errno == EINTR)
			;
	}
}

static struct landlock_plan floor_ll;
static struct seccomp_prog floor_sc;
static struct policy floor_policy;
static struct mountns_view floor_view;
static char *floor_root;

int
run_floor_confined_init(const char *scratch)
{
	int abi = landlock_abi();
	struct stat st;

	if (abi < 0 || landlock_plan(abi, &floor_ll) != 0) {
		fprintf(stderr, "bench: floor-confined: Landlock ABI %d is too "
		    "old or absent\n", abi);
		return -1;
	}
	seccomp_program(SECCOMP_SHARED, &floor_sc);
	if ((floor_root = realpath(scratch, NULL)) == NULL) {
		perror("bench: floor-confined: realpath");
		return -1;
	}
	floor_policy.scratch = floor_root;
	if (stat(floor_root, &st) != 0) {
		perror("bench: floor-view: stat");
		run_floor_confined_fini();
		return -1;
	}
	floor_view.root.path = floor_root;
	floor_view.root.dev = st.st_dev;
	floor_view.root.ino = st.st_ino;
	return 0;
}

void
run_floor_confined_fini(void)
{
	free(floor_root);
	floor_root = NULL;
}

/*
 * A floor's job, confined by the engine's own code: its child's setup
 * (helper/engine/child.c), which is where the order of confinement is
 * written, and for floor-ns and floor-tmp its init's step before it
 * (shepherd.c). Only what a floor leaves out is said here:
 *   floor-confined  a job with no namespace (plan.h's "bare"): Landlock,
 *                   seccomp, no capabilities and, as root, the bounding
 *                   set dropped;
 *   floor-view      a job that makes its own view, as one without an init
 *                   does: its mount namespace, then all of the above;
 *   floor-ns        an init's namespaces and view made first (here in the
 *                   same process), then the job's part under an init;
 *   floor-tmp       floor-ns with a private tmp over the host's /tmp.
 * Each is its own session, stdio /dev/null, in the scratch root, as a
 * job is; no cgroup, no shepherd, no helper.
 */
enum floor_kind { FLOOR_CONFINED, FLOOR_VIEW, FLOOR_NS };

static void
floor_plan(struct child_plan *p, enum floor_kind k,
    const struct mountns_view *v, const char *path, const char *const *argv)
{
	memset(p, 0, sizeof(*p));
	p->path = p->exe = path;
	p->argv = (char *const *)(uintptr_t)argv;
	p->envp = no_env;
	p->cwd = floor_root;
	p->fd[0] = p->fd[1] = p->fd[2] = -1;
	p->cg_procs[0] = p->cg_procs[1] = p->cg_procs[2] = -1;
	p->cg_dir = -1;
	p->backend = CONFINE_BACKEND_LANDLOCK;
	p->policy = &floor_policy;
	p->view = *v;
	p->landlock = &floor_ll;
	p->seccomp = &floor_sc;
	p->own_session = true;
	p->bare = k == FLOOR_CONFINED;
	p->in_init = k == FLOOR_NS;
}

/*
 * What a floor's init step failed at, and its errno: written by the
 * vforked child, which shares our memory, read once it has exited. One
 * per start: the throughput section starts floors from many threads.
 */
struct floor_said {
	volatile int err;
	volatile enum op op;
};

/*
 * In a vforked child: the init's step where the floor has one, then the
 * job's setup and exec. Never returns. A failure of the job's setup is
 * on errfd, as child.c reports it; one of the init's step in said.
 */
static _Noreturn void
floor_child(const struct child_plan *p, int errfd, struct floor_said *said)
{
	struct init_prep pr;
	enum op op;
	int rc;

	if (p->in_init) {
		shepherd_prepare(&pr, false, 0, 0);
		if ((rc = shepherd_view(p, &pr, &op)) != 0) {
			said->op = op;
			said->err = -rc;
			_exit(125);
		}
	}
	child_exec(p, errfd);
}

/*
 * vfork's parent's half: the child has exec'd or failed (errfd's read end
 * has its record then). 0, or -1 having said what failed.
 */
static int
floor_wait(pid_t pid, int errfd, const struct floor_said *said,
    const char *what)
{
	unsigned char rec[CHILD_ERR_LEN];
	enum confine_step step;
	enum op op;
	int err;

	if (read(errfd, rec, sizeof(rec)) == (ssize_t)sizeof(rec)) {
		step = child_err_decode(rec, &op, &err);
		fprintf(stderr, "bench: %s: the job's setup failed at %s: %s: %s\n",
		    what, confine_step_name(step), op_call(op), strerror(err));
		while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
			;
		return -1;
	}
	if (said->err != 0) {
		fprintf(stderr, "bench: %s: the init's step failed: %s: %s\n",
		    what, op_call(said->op), strerror(said->err));
		while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
			;
		return -1;
	}
	return 0;
}

/* A floor's job started: its pid, the child's error channel in *errfd. */
static pid_t
floor_start(const struct child_plan *p, int *errfd, struct floor_said *said)
{
	int ep[2];
	pid_t pid;

	if (pipe2(ep, O_CLOEXEC | O_NONBLOCK) != 0) {
		fprintf(stderr, "bench: pipe: %s\n", strerror(errno));
		return -1;
	}
	said->err = 0;
	said->op = OP_NONE;
	pid = vfork();
	if (pid == 0)
		floor_child(p, ep[1], said);
	close(ep[1]);
	if (pid < 0) {
		fprintf(stderr, "bench: vfork: %s\n", strerror(errno));
		close(ep[0]);
		return -1;
	}
	*errfd = ep[0];
	return pid;
}

/*
 * floor-vfork: vfork and exec, nothing else, as posix_spawn's own child.
 * The others: floor_plan's. With tmp, the view has a /tmp as a job with
 * reads everywhere has it: a private tmp made for it (in $TMPDIR, else
 * /tmp, as a helper's tmp base) with the host's /tmp beneath, made at the
 * request, and removed after.
 */
static int
run_floor_vfork(enum run_method m)
{
	static const char *const what[RUN_NMETHODS] = {
		[RUN_FLOOR_CONFINED] = "floor-confined",
		[RUN_FLOOR_VIEW] = "floor-view",
		[RUN_FLOOR_NS] = "floor-ns",
		[RUN_FLOOR_TMP] = "floor-tmp",
	};
	struct mountns_view v = floor_view;
	struct child_plan plan;
	struct floor_said said;
	const char *base = getenv("TMPDIR");
	char *dir = NULL;
	struct stat st;
	pid_t pid;
	int rc, errfd;

	if (m == RUN_FLOOR_VFORK) {
		if ((pid = vfork()) == 0) {
			execve(TRUE_PATH, (char *const *)(uintptr_t)true_argv,
			    no_env);
			_exit(127);
		}
		if (pid < 0) {
			fprintf(stderr, "bench: vfork: %s\n", strerror(errno));
			return -1;
		}
		return wait_ok(pid, "floor-vfork");
	}
	if (floor_root == NULL)
		return -1;
	if (m == RUN_FLOOR_TMP && (rc = mountns_tmp_make(base != NULL ? base :
	    "/tmp", &dir, &st)) != 0) {
		fprintf(stderr, "bench: floor-tmp: %s\n", strerror(-rc));
		return -1;
	}
	if (dir != NULL) {
		v.tmp.path = dir;
		v.tmp.dev = st.st_dev;
		v.tmp.ino = st.st_ino;
		v.over_tmp = v.tmp_overlay = true;
	}
	floor_plan(&plan, m == RUN_FLOOR_CONFINED ? FLOOR_CONFINED :
	    m == RUN_FLOOR_VIEW ? FLOOR_VIEW : FLOOR_NS, &v, TRUE_PATH,
	    true_argv);
	rc = -1;
	if ((pid = floor_start(&plan, &errfd, &said)) > 0) {
		rc = floor_wait(pid, errfd, &said, what[m]);
		if (rc == 0)
			rc = wait_ok(pid, what[m]);
		close(errfd);
	}
	if (dir != NULL)
		(void)mountns_tmp_rmdir(dir);
	free(dir);
	return rc;
}

/* One floor-burst sleeper, confined as floor-view; its pid (*pidfd its
 * pidfd), or -1. */
static pid_t
floor_sleeper(int *pidfd)
{
	static const char *const argv[] = { "sleep", "3600", NULL };
	struct child_plan plan;
	struct floor_said said;
	pid_t pid;
	int errfd;

	*pidfd = -1;
	floor_plan(&plan, FLOOR_VIEW, &floor_view, "/bin/sleep", argv);
	if ((pid = floor_start(&plan, &errfd, &said)) < 0)
		return -1;
	if (floor_wait(pid, errfd, &said, "floor-burst") != 0) {
		close(errfd);
		return -1;  /* reaped: said */
	}
	close(errfd);
	/* Unreaped, so the pid is still the sleeper's. */
	if ((*pidfd = (int)syscall(SYS_pidfd_open, pid, 0)) < 0)
		fprintf(stderr, "bench: floor-burst: pidfd_open: %s\n",
		    strerror(errno));
	return pid;
}

/* How the sleeper of pidfd ended, said; it is left to be reaped. */
static void
floor_said_end(pid_t pid, int pidfd, const char *when)
{
	siginfo_t si;

	memset(&si, 0, sizeof(si));
	if (waitid(P_PIDFD, (id_t)pidfd, &si, WEXITED | WNOHANG |
	    WNOWAIT) != 0)
		fprintf(stderr, "bench: floor-burst: sleeper %ld: waitid: %s\n",
		    (long)pid, strerror(errno));
	else if (si.si_pid == 0)
		fprintf(stderr, "bench: floor-burst: sleeper %ld not ended %s\n",
		    (long)pid, when);
	else
		fprintf(stderr, "bench: floor-burst: sleeper %ld %s %s %d "
		    "(code %d)\n", (long)pid, when, si.si_code == CLD_EXITED ?
		    "exited" : "died of signal", si.si_status, si.si_code);
}

/*
 * Wait, up to about 60 s on a loaded machine, for the sleeper to sleep
 * in sleep's nanosleep; 0, or -1 having said what it did instead: its
 * end is read from its pidfd, which says it exactly, whatever the /proc
 * mounted here shows.
 */
static int
floor_asleep(pid_t pid, int pidfd)
{
	struct pollfd p = { pidfd, POLLIN, 0 };
	char st = 0;
	int k;

	for (k = 0; k < 60000; k++) {
		if (poll(&p, 1, 0) == 1) {
			floor_said_end(pid, pidfd, "before the kill:");
			return -1;
		}
		if ((st = proc_state(pid)) == 'S')
			return 0;
		usleep(1000);
	}
	fprintf(stderr, "bench: floor-burst: sleeper %ld never slept (state "
	    "%c)\n", (long)pid, st != 0 ? st : '-');
	return -1;
}

int
run_floor_burst(int n, struct samples *out)
{
	pid_t *pid = calloc((size_t)n, sizeof(*pid));
	struct pollfd *p = calloc((size_t)n, sizeof(*p));
	int64_t t0;
	siginfo_t si;
	int i, k, left, rc = 0;

	if (pid == NULL || p == NULL || floor_root == NULL) {
		free(pid);
		free(p);
		return -1;
	}
	for (i = 0; i < n; i++) {
		p[i].fd = -1;
		p[i].events = POLLIN;
		if ((pid[i] = floor_sleeper(&p[i].fd)) < 0)
			break;
		if (p[i].fd < 0) {
			i++;  /* it is ours: killed and reaped below */
			break;
		}
	}
	if (i < n)
		rc = -1;
	n = i;
	/* Every one asleep in sleep's nanosleep before the kill. */
	for (i = 0; i < n && rc == 0; i++)
		rc = floor_asleep(pid[i], p[i].fd);
	t0 = bench_now();
	for (i = left = 0; i < n; i++) {
		(void)kill(pid[i], SIGKILL);
		left += p[i].fd >= 0;
	}
	/* Each reaped as it ends, in the order they end. */
	while (left > 0) {
		k = poll(p, (nfds_t)n, 60000);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			fprintf(stderr, "bench: floor-burst: poll: %s\n", k == 0 ?
			    "60 s and a sleeper not ended" : strerror(errno));
			rc = -1;
			break;
		}
		for (i = 0; i < n; i++) {
			if (p[i].fd < 0 || p[i].revents == 0)
				continue;
			memset(&si, 0, sizeof(si));
			if (waitid(P_PIDFD, (id_t)p[i].fd, &si,
			    WEXITED) != 0) {
				if (errno == EINTR)
					continue;
				fprintf(stderr, "bench: floor-burst: sleeper %ld: "
				    "waitid: %s\n", (long)pid[i],
				    strerror(errno));
				rc = -1;
			} else if (si.si_code != CLD_KILLED ||
			    si.si_status != SIGKILL) {
				fprintf(stderr, "bench: floor-burst: sleeper %ld %s "
				    "%d, not killed by SIGKILL\n", (long)pid[i],
				    si.si_code == CLD_EXITED ? "exited" :
				    "died of signal", si.si_status);
				rc = -1;
			} else {
				(void)stats_add(out, (double)(bench_now() - t0) /
				    1000.0);
			}
			close(p[i].fd);
			p[i].fd = -1;  /* poll passes over it from now on */
			pid[i] = 0;
			left--;
		}
	}
	/* Any not reaped above: one without a pidfd, or after a failure. */
	for (i = 0; i < n; i++) {
		if (p[i].fd >= 0)
			close(p[i].fd);
		if (pid[i] > 0)
			(void)waitpid(pid[i], NULL, p[i].fd >= 0 ? WNOHANG : 0);
	}
	if (n == 0)
		rc = -1;
	if (rc != 0)
		fprintf(stderr, "bench: floor-burst: a sleeper did not start or "
		    "did not die of the kill\n");
	free(pid);
	free(p);
	return rc;
}

static int
run_floor(bool shepherd)
{
	int fd = floor_fd[shepherd ? 1 : 0];
	char c = 1;

	if (fd < 0 || write(fd, &c, 1) != 1 || read(fd, &c, 1) != 1 || c != 0) {
		fprintf(stderr, "bench: the floor server failed\n");
		return -1;
	}
	return 0;
}

int
run_true(const struct runner *r, enum run_method m)
{
	return run_true_phases(r, m, NULL);
}

int
run_true_phases(const struct runner *r, enum run_method m,
    struct run_phases *ph)
{
	switch (m) {
	case RUN_FORK:
		return run_fork();
	case RUN_SPAWN:
		return run_spawn(TRUE_PATH, true_argv, "posix_spawn");
	case RUN_CONFINE:
		return run_confine(r->c, r->scratch, CONFINE_BACKEND_LANDLOCK,
		    0, ph, NULL);
	case RUN_CONFINE_NONE:
		return run_confine(r->c, r->scratch, CONFINE_BACKEND_NONE, 0, ph,
		    NULL);
	case RUN_CONFINE_READ:
		return run_confine(r->c, r->scratch, CONFINE_BACKEND_LANDLOCK,
		    CONFINE_READ_SYSTEM, ph, NULL);
	case RUN_BWRAP:
		return run_bwrap(r);
	case RUN_FLOOR_SERVER:
	case RUN_FLOOR_SHEPHERD:
		return run_floor(m == RUN_FLOOR_SHEPHERD);
	case RUN_FLOOR_VFORK:
	case RUN_FLOOR_CONFINED:
	case RUN_FLOOR_VIEW:
	case RUN_FLOOR_NS:
	case RUN_FLOOR_TMP:
		return run_floor_vfork(m);
	case RUN_CONFINE_LATE:
	case RUN_CONFINE_SHEP:
	case RUN_CONFINE_UNPREP:
		return run_confine(m == RUN_CONFINE_LATE ? r->late :
		    m == RUN_CONFINE_SHEP ? r->shep : r->unprep, r->scratch,
		    CONFINE_BACKEND_LANDLOCK, 0, ph, NULL);
	case RUN_NMETHODS:
	default:
		return -1;
	}
}

/* ---- the host's memory ---- */

struct region {
	void *p;
	size_t len;
};

static struct region regions[BENCH_MAX_LIST];
static size_t nregions;
static size_t host_bytes;

struct toucher {
	pthread_t t;
	unsigned char *p;
	size_t len;
};

/* Faults one slice in and writes every page of it. */
static void *
touch_main(void *arg)
{
	struct toucher *t = arg;
	size_t i;

#ifdef MADV_POPULATE_WRITE
	/* Faulted in by the kernel in one call: far fewer exits on a VM. */
	(void)madvise(t->p, t->len, MADV_POPULATE_WRITE);
#endif
	for (i = 0; i < t->len; i += PAGE)
		t->p[i] = (unsigned char)(i / PAGE | 1);
	return NULL;
}

/*
 * Grows the host to mib MiB of its own anonymous memory, every page
 * written with a distinct value: resident, private, nothing the kernel
 * can share or leave unmapped. Small pages, as a long-lived heap mostly
 * is; fork's cost is in copying their page tables.
 */
int
run_host_grow(size_t mib)
{
	size_t want = mib * (size_t)MIB, len, i, slice;
	struct toucher t[8];
	bool started[8];
	unsigned char *p;
	long k, n;

	if (want <= host_bytes)
		return 0;
	if (nregions == BENCH_MAX_LIST)
		return -1;
	len = want - host_bytes;
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
	    -1, 0);
	if (p == MAP_FAILED) {
		fprintf(stderr, "bench: mmap %zu MiB: %s\n", len / MIB,
		    strerror(errno));
		return -1;
	}
#ifdef MADV_NOHUGEPAGE
	(void)madvise(p, len, MADV_NOHUGEPAGE);
#endif
	/* Slices on every CPU: zeroing gigabytes is the slow part. */
	n = sysconf(_SC_NPROCESSORS_ONLN);
	n = n < 1 ? 1 : n > 8 ? 8 : n;
	slice = (len / (size_t)n + PAGE - 1) / PAGE * PAGE;
	for (i = 0, k = 0; k < n; k++, i += slice) {
		t[k].p = p + i;
		t[k].len = i >= len ? 0 : len - i < slice ? len - i : slice;
		started[k] = pthread_create(&t[k].t, NULL, touch_main, &t[k]) == 0;
		if (!started[k])
			(void)touch_main(&t[k]);
	}
	for (k = 0; k < n; k++)
		if (started[k])
			pthread_join(t[k].t, NULL);
	regions[nregions].p = p;
	regions[nregions].len = len;
	nregions++;
	host_bytes = want;
	return 0;
}

void
run_host_release(void)
{
	while (nregions > 0) {
		nregions--;
		munmap(regions[nregions].p, regions[nregions].len);
	}
	host_bytes = 0;
}

size_t
run_host_mib(void)
{
	return host_bytes / MIB;
}

/* ---- idle threads ---- */

static pthread_mutex_t park_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t park_cv = PTHREAD_COND_INITIALIZER;
static pthread_t *parked;
static size_t nparked;
static bool park_stop;

static void *
park_main(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&park_mu);
	while (!park_stop)
		pthread_cond_wait(&park_cv, &park_mu);
	pthread_mutex_unlock(&park_mu);
	return NULL;
}

int
run_park(int threads)
{
	size_t want = threads > 1 ? (size_t)threads - 1 : 0;
	int rc;

	run_unpark();
	park_stop = false;
	parked = calloc(want ? want : 1, sizeof(*parked));
	if (parked == NULL)
		return -1;
	for (nparked = 0; nparked < want; nparked++) {
		rc = pthread_create(&parked[nparked], NULL, park_main, NULL);
		if (rc != 0) {
			fprintf(stderr, "bench: pthread_create: %s\n", strerror(rc));
			run_unpark();
			return -1;
		}
	}
	return 0;
}

void
run_unpark(void)
{
	pthread_mutex_lock(&park_mu);
	park_stop = true;
	pthread_cond_broadcast(&park_cv);
	pthread_mutex_unlock(&park_mu);
	while (nparked > 0)
		pthread_join(parked[--nparked], NULL);
	free(parked);
	parked = NULL;
}

int
run_path(const struct runner *r, struct confine *c, const char *who,
    bool shepherd, struct run_probe *out)
{
	struct run_probe p;
	bool direct, can = proc_cgroup_kill();

	if (run_probe(c, r->scratch, &p) != 0) {
		fprintf(stderr, "bench: %s's helper could not run a job\n", who);
		return -1;
	}
	direct = p.direct;
	/* 1 where it is the path expected. */
	stats_value("path", who, direct ? "direct" : "shepherd", (long)
	    run_host_mib(), 0, 0, direct == (!shepherd && can) ? 1 : 0, "");
	if (direct)
		stats_line("path: %-17s (pid %ld) direct: a job (pid %ld) is its "
		    "child", who, (long)confine_helper_pid(c), (long)p.pid);
	else
		stats_line("path: %-17s (pid %ld) shepherd: a job (pid %ld) is "
		    "a shepherd's child", who, (long)confine_helper_pid(c),
		    (long)p.pid);
	if (shepherd && direct)
		stats_line("      NOT the shepherd path CONFINE_SHEPHERD=1 asks for: "
		    "these figures are the direct path's");
	else if (!shepherd && !direct && can)
		stats_line("      NOT the direct path, though this machine has a "
		    "writable cgroup v2 with cgroup.kill: these figures are the "
		    "shepherd path's");
	else if (!shepherd && !direct)
		stats_line("      (no writable cgroup v2 with cgroup.kill here: no "
		    "direct path)");
	if (out != NULL)
		*out = p;
	return 0;
}
