/*
 * The ways to start and settle /bin/true that the benchmark compares, the
 * host's resident memory and the idle threads it holds.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
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

#include "helper/backend/mountns.h"
#include "helper/backend/op.h"
#include "helper/engine/child.h"
#include "helper/engine/env.h"
#include "helper/engine/plan.h"
#include "helper/engine/prepared.h"
#include "helper/engine/shepherd.h"
#include "src/core/fd.h"
#include "src/core/procstat.h"
#include "tools/bench/bench.h"

#define TRUE_PATH "/bin/true"
#define PAGE 4096
#define FLOOR_STACK (256 * 1024)   /* as child.c's child_start has */
/*
 * A floor's child shares our memory until it has exec'd, as vfork's does;
 * not under the sanitizers, which cannot follow a child running in our
 * memory (as child.c): a copy then, waited for.
 */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define FLOOR_CLONE_VM 0
#else
#define FLOOR_CLONE_VM (CLONE_VM | CLONE_VFORK)
#endif

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
	[RUN_FLOOR_PREP] = "floor-prepared",
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

/*
 * A floor's job, confined by the engine's own code: its plan made from a
 * spec by plan.c, as a helper makes a job's; then its child's setup
 * (helper/engine/child.c), which is where the order of confinement is
 * written, and for floor-ns and floor-tmp its init's step before it
 * (shepherd.c). The floors differ in what the machine is said to allow
 * (the helper's environment, probed once, then narrowed for each):
 *   floor-confined  no namespace at all (plan.h's "bare"), as where none
 *                   can be made: Landlock, seccomp, no capabilities; a
 *                   root job as uid 65534, its bounding set dropped;
 *   floor-view      no namespaces but a mount one: the job makes its own
 *                   view, then all of the above;
 *   floor-ns        namespaces of its own: its init's namespaces and view
 *                   (its own /dev and /proc) made first, here in the same
 *                   process, pid 1 of its PID namespace, then the job's
 *                   part under an init;
 *   floor-tmp       floor-ns with a private tmp over the host's /tmp.
 * Each is its own session, stdio /dev/null, in the scratch root, as a job
 * is; no cgroup, no shepherd, no helper, and no supervisor of its sockets
 * (there is no init process to answer one): the filter of a kernel that
 * cannot supervise them.
 */
enum floor_kind { FLOOR_CONFINED, FLOOR_VIEW, FLOOR_NS, FLOOR_KINDS };

/* A floor's job: its spec, and the plan made of it, which points into it. */
struct floor_job {
	struct confine_spec spec;
	struct plan plan;
	bool made;
	char refused[256];   /* not made: why, said */
};

static struct job_env floor_probed;      /* the machine, as a helper sees it */
static struct job_env floor_env[FLOOR_KINDS];
static bool floor_ready;
static const char *floor_root;           /* the bench's scratch root */
static char *floor_bare_root;            /* floor-confined's, its user's */
/*
 * The plans that make nothing (each floor's /bin/true but floor-tmp's, and
 * floor-burst's sleeper), made once, before the sections run: a bare plan
 * takes its job's user's credentials to check its paths, for the whole
 * process, which the throughput section's threads must not see.
 */
static struct floor_job floor_made[FLOOR_KINDS], floor_sleep;
/* floor-prepared's server, on floor-ns's plan (below). */
static int prep_start(void);
static void prep_stop(void);

/* A floor's plan let go: its private tmp, if it has one, removed. */
static void
floor_plan_free(struct floor_job *fj)
{
	if (!fj->made)
		return;
	if (fj->plan.tmp != NULL)
		(void)mountns_tmp_rmdir(fj->plan.tmp);
	plan_free(&fj->plan);
	fj->made = false;
}

/*
 * The plan of a floor's job, made by plan.c from a spec as a helper's
 * is (its private tmp, with tmp, made now); 0, or -1 with fj->refused
 * saying why.
 */
static int
floor_plan(struct floor_job *fj, enum floor_kind k, bool tmp,
    const char *exe, const char *const *argv)
{
	struct plan *p = &fj->plan;
	const char *why = NULL;
	int rc;

	fj->made = false;
	confine_spec_init(&fj->spec);
	fj->spec.backend = CONFINE_BACKEND_LANDLOCK;
	fj->spec.exe = exe;
	fj->spec.argv = argv;
	fj->spec.scratch = k == FLOOR_CONFINED ? floor_bare_root : floor_root;
	fj->spec.flags = tmp ? 0 : CONFINE_NO_TMP;
	if (k == FLOOR_CONFINED)
		fj->spec.flags |= CONFINE_WAIVE_METADATA;
	else if (k == FLOOR_NS)
		fj->spec.flags |= CONFINE_REQUIRE_NAMESPACES;
	rc = plan_build(p, &fj->spec, &floor_env[k], NULL, &why);
	if (rc == 0)
		rc = plan_root(p, &fj->spec, &floor_env[k], &why);
	fj->made = true;
	if (rc == 0)
		return 0;
	if (p->op != OP_NONE)
		snprintf(fj->refused, sizeof(fj->refused), "refused: %s: %s: %s",
		    why != NULL ? why : "?", op_call(p->op),
		    strerror(p->op_err));
	else
		snprintf(fj->refused, sizeof(fj->refused), "refused: %s: %s",
		    why != NULL ? why : "?", strerror(-rc));
	floor_plan_free(fj);
	return -1;
}

int
run_floor_confined_init(const char *scratch)
{
	static const char *const sleep_argv[] = { "sleep", "3600", NULL };
	int k;

	if (job_env_init(&floor_probed) != 0) {
		fprintf(stderr, "bench: the floors: no memory for the machine's "
		    "environment\n");
		return -1;
	}
	floor_ready = true;
	for (k = 0; k < FLOOR_KINDS; k++) {
		floor_env[k] = floor_probed;
		floor_env[k].sup_ok = false;
	}
	floor_env[FLOOR_CONFINED].ns = floor_env[FLOOR_VIEW].ns = false;
	floor_env[FLOOR_CONFINED].view_ok = false;
	floor_root = scratch;
	if (asprintf(&floor_bare_root, "%s/bare", scratch) < 0) {
		floor_bare_root = NULL;
		perror("bench: the floors");
		return -1;
	}
	/* One refused is said when its floor runs, as a failure of it. */
	for (k = 0; k < FLOOR_KINDS; k++) {
		/*
		 * A bare root job runs as BARE_UID, which must reach and write
		 * its root: a directory of its own in the scratch root, which
		 * it may pass. (A user namespace that maps no such uid has
		 * none to give it: that floor fails, as such a job would.)
		 */
		if (k == FLOOR_CONFINED && (mkdir(floor_bare_root, 0700) != 0 ||
		    (geteuid() == 0 && (chown(floor_bare_root, BARE_UID,
		    BARE_UID) != 0 || chmod(scratch, 0711) != 0)))) {
			snprintf(floor_made[k].refused,
			    sizeof(floor_made[k].refused), "its root %s, for "
			    "uid %d: %s", floor_bare_root, BARE_UID,
			    strerror(errno));
			continue;
		}
		(void)floor_plan(&floor_made[k], (enum floor_kind)k, false,
		    TRUE_PATH, true_argv);
	}
	(void)floor_plan(&floor_sleep, FLOOR_VIEW, false, "/bin/sleep",
	    sleep_argv);
	(void)prep_start();
	return 0;
}

void
run_floor_confined_fini(void)
{
	int k;

	prep_stop();
	for (k = 0; k < FLOOR_KINDS; k++)
		floor_plan_free(&floor_made[k]);
	floor_plan_free(&floor_sleep);
	if (floor_bare_root != NULL)
		(void)rmdir(floor_bare_root);
	free(floor_bare_root);
	floor_bare_root = NULL;
	floor_root = NULL;
	if (floor_ready)
		job_env_fini(&floor_probed);
	floor_ready = false;
}

/*
 * What a floor's init step failed at, and its errno: written by the
 * child, which shares our memory (or, a copy, a shared page: floor_start),
 * read once it has exec'd or exited. One per start: the throughput
 * section starts floors from many threads.
 */
struct floor_said {
	volatile int err;
	volatile enum op op;
};

/*
 * In the floor's child: the init's step where the floor has one, then the
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
		shepherd_prepare(&pr, p->init_userns, p->init_uid,
		    p->init_gid);
		if ((rc = shepherd_view(p, &pr, &op)) != 0) {
			said->op = op;
			said->err = -rc;
			_exit(125);
		}
	}
	child_exec(p, errfd);
}

/*
 * floor_start's other half: the child has exec'd or failed (errfd's read end
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

/* What floor_child is given, through clone. */
struct floor_arg {
	const struct child_plan *p;
	int errfd;
	struct floor_said *said;
};

static int
floor_entry(void *arg)
{
	struct floor_arg *a = arg;

	floor_child(a->p, a->errfd, a->said);
}

/*
 * A floor's job started: its pid, the child's error channel in *errfd.
 * One under an init is cloned into a PID namespace of its own (and a user
 * namespace where its init has one), as a job's init is (ns.c's
 * ns_clone_init): pid 1 there, it takes the init's step and is the job.
 */
static pid_t
floor_start(const struct child_plan *p, int *errfd, struct floor_said *said)
{
	struct floor_arg a = { p, -1, said };
	void *stack;
	int ep[2], err;
	pid_t pid;

	if (pipe2(ep, O_CLOEXEC | O_NONBLOCK) != 0) {
		fprintf(stderr, "bench: pipe: %s\n", strerror(errno));
		return -1;
	}
	said->err = 0;
	said->op = OP_NONE;
	if (p->in_init) {
		a.errfd = ep[1];
		stack = mmap(NULL, FLOOR_STACK, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
		/* A copy's word on its init's step: in memory we share. */
		if (!FLOOR_CLONE_VM && stack != MAP_FAILED && (a.said = mmap(NULL,
		    sizeof(*said), PROT_READ | PROT_WRITE, MAP_SHARED |
		    MAP_ANONYMOUS, -1, 0)) == MAP_FAILED) {
			munmap(stack, FLOOR_STACK);
			stack = MAP_FAILED;
		}
		pid = stack == MAP_FAILED ? -1 : clone(floor_entry,
		    (char *)stack + FLOOR_STACK, FLOOR_CLONE_VM |
		    CLONE_NEWPID | (p->init_userns ? CLONE_NEWUSER : 0) |
		    SIGCHLD, &a);
		err = errno;
		if (stack != MAP_FAILED)
			munmap(stack, FLOOR_STACK);
		if (a.said != said && a.said != MAP_FAILED) {
			/* Exec'd or failed: its end of errfd closed. */
			struct pollfd w = { ep[0], POLLIN, 0 };

			close(ep[1]);
			ep[1] = -1;
			while (pid > 0 && poll(&w, 1, -1) < 0 && errno == EINTR)
				;
			*said = *a.said;
			munmap(a.said, sizeof(*said));
		}
	} else if ((pid = vfork()) == 0) {
		floor_child(p, ep[1], said);
	} else {
		err = errno;
	}
	if (ep[1] >= 0)
		close(ep[1]);
	if (pid < 0) {
		fprintf(stderr, "bench: %s: %s\n", p->in_init ? "clone" :
		    "vfork", strerror(err));
		close(ep[0]);
		return -1;
	}
	*errfd = ep[0];
	return pid;
}

/*
 * floor-vfork: vfork and exec, nothing else, as posix_spawn's own child.
 * The others: floor_plan's, made at the request, as a helper's; floor-tmp's
 * private tmp (in $TMPDIR, else /tmp, as a helper's tmp base) removed
 * after.
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
	struct floor_job fj, *job;
	struct floor_said said;
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
	if (m == RUN_FLOOR_TMP) {
		/* Its private tmp made at the request, as a helper's job's. */
		job = &fj;
		if (!floor_ready)
			return -1;
		(void)floor_plan(&fj, FLOOR_NS, true, TRUE_PATH, true_argv);
	} else {
		job = &floor_made[m == RUN_FLOOR_CONFINED ? FLOOR_CONFINED :
		    m == RUN_FLOOR_VIEW ? FLOOR_VIEW : FLOOR_NS];
	}
	if (!job->made) {
		fprintf(stderr, "bench: %s: %s\n", what[m], floor_ready ?
		    job->refused : "not set up");
		return -1;
	}
	rc = -1;
	if ((pid = floor_start(&job->plan.child, &errfd, &said)) > 0) {
		rc = floor_wait(pid, errfd, &said, what[m]);
		if (rc == 0)
			rc = wait_ok(pid, what[m]);
		close(errfd);
	}
	if (job == &fj)
		floor_plan_free(&fj);
	return rc;
}

/*
 * floor-prepared: floor-ns with its init's step made before the request,
 * as a helper's prepared init has it (prepared.c). A small server, forked
 * while the host is small, keeps one process ready: cloned into its PID
 * namespace (and a user namespace where the init has one), its mount,
 * network, IPC and UTS namespaces made, its /dev and /proc made
 * (shepherd_prepare, shepherd_prepare_view), waiting. On a request it is
 * told to go: the view (shepherd_view), then the job's setup and exec
 * (child_exec), as floor-ns does after its own step; the server reaps
 * it, answers, and only then prepares the next, off the request's path.
 */
static int prep_fd = -1;
static pid_t prep_server = -1;

struct prep {
	pid_t pid;
	int go;    /* ours to write: its request */
	int said;  /* ours to read: its setup's failure, or EOF once exec'd */
	struct floor_said *step;  /* its init step's failure: a shared page */
};

/* The prepared process; never returns. */
static _Noreturn void
prep_main(const struct child_plan *p, int go, int said,
    struct floor_said *step)
{
	struct init_prep pr;
	enum op op;
	int rc;
	char c;

	shepherd_prepare(&pr, p->init_userns, p->init_uid, p->init_gid);
	shepherd_prepare_view(&pr);
	if (read(go, &c, 1) != 1)
		_exit(0);  /* not needed after all */
	if ((rc = shepherd_view(p, &pr, &op)) != 0) {
		step->op = op;
		step->err = -rc;
		_exit(125);
	}
	child_exec(p, said);
}

static void
prep_free(struct prep *n)
{
	if (n->go >= 0)
		close(n->go);
	close(n->said);
	munmap(n->step, sizeof(*n->step));
}

static int
prep_make(const struct child_plan *p, struct prep *n)
{
	int g[2], e[2];

	n->step = mmap(NULL, sizeof(*n->step), PROT_READ | PROT_WRITE,
	    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (n->step == MAP_FAILED)
		return -1;
	n->step->err = 0;
	n->step->op = OP_NONE;
	if (pipe2(g, O_CLOEXEC) != 0) {
		munmap(n->step, sizeof(*n->step));
		return -1;
	}
	if (pipe2(e, O_CLOEXEC) != 0) {
		close(g[0]);
		close(g[1]);
		munmap(n->step, sizeof(*n->step));
		return -1;
	}
	/* Our one thread: a copy of us as fork's, pid 1 of its namespace. */
	n->pid = (pid_t)syscall(SYS_clone, CLONE_NEWPID | (p->init_userns ?
	    CLONE_NEWUSER : 0) | SIGCHLD, 0, NULL, NULL, 0);
	if (n->pid == 0) {
		close(g[1]);
		close(e[0]);
		prep_main(p, g[0], e[1], n->step);
	}
	close(g[0]);
	close(e[1]);
	n->go = g[1];
	n->said = e[0];
	if (n->pid < 0) {
		fprintf(stderr, "bench: floor-prepared: clone: %s\n",
		    strerror(errno));
		prep_free(n);
		return -1;
	}
	return 0;
}

/* The request: 0, or -1 having said what failed (floor_wait's words). */
static int
prep_go(struct prep *n)
{
	int rc = write(n->go, "g", 1) == 1 ? 0 : -1;

	close(n->go);
	n->go = -1;
	/* Its end of said closes as it execs, or exits having failed. */
	if (floor_wait(n->pid, n->said, n->step, "floor-prepared") != 0)
		rc = -1;
	else if (wait_ok(n->pid, "floor-prepared") != 0)
		rc = -1;
	prep_free(n);
	return rc;
}

static _Noreturn void
prep_serve(int fd, const struct child_plan *p)
{
	struct prep n;
	bool ready = prep_make(p, &n) == 0;
	char c;

	while (read(fd, &c, 1) == 1) {
		c = ready && prep_go(&n) == 0 ? 0 : 1;
		if (write(fd, &c, 1) != 1)
			break;
		ready = prep_make(p, &n) == 0;
	}
	if (ready) {
		prep_free(&n);
		while (waitpid(n.pid, NULL, 0) < 0 && errno == EINTR)
			;
	}
	_exit(0);
}

/* Its server started on floor-ns's plan: 0, or -1 (said when it runs). */
static int
prep_start(void)
{
	int sv[2];

	if (!floor_made[FLOOR_NS].made ||
	    socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
		return -1;
	if ((prep_server = fork()) == 0) {
		/*
		 * Nothing of ours but stdio, where it says what failed: the
		 * floor servers wait for their EOF.
		 */
		int keep[] = { 0, 1, 2, sv[1] };

		fd_close_except(keep, sizeof(keep) / sizeof(keep[0]));
		prep_serve(sv[1], &floor_made[FLOOR_NS].plan.child);
	}
	close(sv[1]);
	if (prep_server < 0) {
		close(sv[0]);
		return -1;
	}
	prep_fd = sv[0];
	return 0;
}

static void
prep_stop(void)
{
	if (prep_fd < 0)
		return;
	close(prep_fd);
	prep_fd = -1;
	while (waitpid(prep_server, NULL, 0) < 0 && errno == EINTR)
		;
}

static int
run_floor_prepared(void)
{
	char c = 1;

	if (prep_fd < 0) {
		fprintf(stderr, "bench: floor-prepared: %s\n", !floor_ready ?
		    "not set up" : !floor_made[FLOOR_NS].made ?
		    floor_made[FLOOR_NS].refused : "its server did not start");
		return -1;
	}
	if (write(prep_fd, &c, 1) != 1 || read(prep_fd, &c, 1) != 1 || c != 0) {
		fprintf(stderr, "bench: floor-prepared failed\n");
		return -1;
	}
	return 0;
}

/* One floor-burst sleeper, confined as floor-view; its pid (*pidfd its
 * pidfd), or -1. */
static pid_t
floor_sleeper(int *pidfd)
{
	struct floor_said said;
	pid_t pid;
	int errfd;

	*pidfd = -1;
	if (!floor_sleep.made) {
		fprintf(stderr, "bench: floor-burst: %s\n", floor_ready ?
		    floor_sleep.refused : "not set up");
		return -1;
	}
	if ((pid = floor_start(&floor_sleep.plan.child, &errfd, &said)) < 0)
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

	if (pid == NULL || p == NULL || !floor_ready) {
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
	case RUN_FLOOR_PREP:
		return run_floor_prepared();
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

/* How many of pid's children are prepared inits (prepared.h's name). */
static int
prepared_kids(pid_t pid)
{
	pid_t kid[64];
	char path[64], comm[32];
	size_t n = proc_children(pid, kid, 64), i;
	int found = 0;
	ssize_t k;

	/* n counts them all: only the first 64 were kept. */
	for (i = 0; i < n && i < 64; i++) {
		snprintf(path, sizeof(path), "/proc/%ld/comm", (long)kid[i]);
		k = fd_read_small(AT_FDCWD, path, comm, sizeof(comm));
		found += k > 0 && strncmp(comm, PREPARED_NAME "\n",
		    sizeof(PREPARED_NAME)) == 0;
	}
	return found;
}

/*
 * Whether a helper opened with CONFINE_PREPARED=0 prepares nothing, as a
 * build for the tests (--config=testing) reads it; another build ignores
 * it, and its rows would be a prepared helper's under the name of one
 * that is not. 0, or -1 having said so. A prepared init is made within a
 * turn of a job's reply: looked for over 200 ms.
 */
int
run_unprepared_check(struct confine *c)
{
	int k;

	for (k = 0; k < 20; k++) {
		if (prepared_kids(confine_helper_pid(c)) > 0) {
			fprintf(stderr, "bench: %s: its helper prepares inits all "
			    "the same: this build ignores CONFINE_PREPARED=0, "
			    "which a build for the tests reads (bazel run -c opt "
			    "--config=testing //tools/bench)\n",
			    run_name(RUN_CONFINE_UNPREP));
			return -1;
		}
		usleep(10000);
	}
	return 0;
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
