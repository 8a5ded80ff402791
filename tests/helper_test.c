/*
 * The fork server through the public API: the core's job behaviours again
 * in all three ways of starting the helper (exec, fork, connect), many
 * jobs in flight, cancel, the event-loop calls, and both sides dying.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/shm.h>
#include <sys/stat.h>
#include <sys/wait.h>
#ifdef __linux__
#include <sys/prctl.h>
#include <sys/syscall.h>
#endif
#include <time.h>
#include <unistd.h>

#include "src/core/clock.h"
#include "src/core/fd.h"
#include "tests/helperutil.h"
#include "tests/testutil.h"

extern char **environ;

/* A helper started (or listening, for connect) in one mode, and a handle. */
struct mode {
	enum confine_mode mode;
	char *dir;
	char *sock;
	pid_t listener;
	struct confine *c;
};

static struct mode modes[3] = {
	{ CONFINE_MODE_EXEC, NULL, NULL, 0, NULL },
	{ CONFINE_MODE_FORK, NULL, NULL, 0, NULL },
	{ CONFINE_MODE_CONNECT, NULL, NULL, 0, NULL },
};

static struct mode *current;

/* Open in the host, not close-on-exec, before any helper starts. */
static char *canary;
static int canary_fd = -1;

static void
mode_open(struct mode *m)
{
	if (m->mode == CONFINE_MODE_CONNECT) {
		m->dir = tu_sockdir();
		m->sock = tu_join(m->dir, "helper.sock");
		m->listener = hu_listen(m->sock, NULL);
	}
	assert_int_equal(hu_open(&m->c, m->mode, m->sock), 0);
	assert_true(confine_helper_pid(m->c) > 0);
}

static void
mode_close(struct mode *m)
{
	confine_close(m->c);
	m->c = NULL;
	if (m->listener > 0)
		hu_stop(m->listener);
	m->listener = 0;
	tu_rmsock(m->dir, m->sock);
	m->dir = m->sock = NULL;
}

/*
 * The helper starts from a host at its untidiest: a stray descriptor, a
 * signal blocked, one ignored (SIGPIPE is, for the whole test). Exec mode
 * resets what posix_spawn can; the rest is the helper's and the job's own
 * setup to undo.
 */
static int
group_setup(void **state)
{
	struct sigaction ign = { .sa_handler = SIG_IGN }, hup;
	sigset_t usr1, mask;
	char *dir = tu_mkdtemp("canary");

	*state = current;
	canary = tu_join(dir, "canary");
	canary_fd = open(canary, O_RDWR | O_CREAT, 0600);  /* inherited */
	assert_true(canary_fd > 2);
	free(dir);
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	assert_int_equal(sigprocmask(SIG_BLOCK, &usr1, &mask), 0);
	assert_int_equal(sigaction(SIGHUP, &ign, &hup), 0);
	mode_open(current);
	sigprocmask(SIG_SETMASK, &mask, NULL);
	sigaction(SIGHUP, &hup, NULL);
	return 0;
}

static int
group_teardown(void **state)
{
	mode_close(*state);
	close(canary_fd);
	unlink(canary);
	free(canary);
	return 0;
}

#define C(state) (((struct mode *)*(state))->c)

static void
completed_writes_inside_and_is_denied_outside(void **state)
{
	char *scratch = tu_mkdtemp("scratch"), *outside = tu_mkdtemp("out");
	char *in = tu_join(scratch, "f"), *out = tu_join(outside, "f");
	struct hu_job j;

	hu_init(&j, scratch, "write", in, NULL);
	assert_int_equal(hu_run(C(state), &j), 0);
	assert_int_equal(j.r.outcome, CONFINE_COMPLETED);
	assert_int_equal(j.r.proof, hu_proof());
	assert_int_equal(j.r.backend, CONFINE_BACKEND_LANDLOCK);
	assert_true(tu_exists(in));
	assert_true(j.r.pid > 0 && j.r.pgid > 0);
	hu_free(&j);
	hu_init(&j, scratch, "write", out, NULL);
	assert_int_equal(hu_run(C(state), &j), 0);
	assert_int_equal(j.r.outcome, CONFINE_FAILED);
	assert_int_equal(j.r.reason, CONFINE_REASON_EXIT_CODE);
	assert_int_equal(j.r.exit_code, EROFS);
	assert_false(tu_exists(out));
	hu_free(&j);
	free(in);
	free(out);
	free(scratch);
	free(outside);
}

/*
 * A host's listener on the loopback: reached unconfined (and accepted);
 * confined, not there (its loopback is its own, in namespaces of its own
 * on a kernel whose init supervises its sockets) or refused (EPERM).
 */
static void
network_is_its_own_or_refused(void **state)
{
	char *scratch = tu_mkdtemp("scratch"), port[16];
	struct hu_job j;
	int fd, a;

	snprintf(port, sizeof(port), "%d", tu_listening_port(&fd));
	hu_init(&j, scratch, "connect", port, NULL);
	j.spec.backend = CONFINE_BACKEND_NONE;
	assert_int_equal(hu_run(C(state), &j), 0);
	assert_int_equal(j.r.outcome, CONFINE_COMPLETED);
	hu_free(&j);
	assert_true((a = tu_accept_now(fd)) >= 0);
	close(a);
	hu_init(&j, scratch, "connect", port, NULL);
	assert_int_equal(hu_run(C(state), &j), 0);
	assert_int_equal(j.r.exit_code, tu_path_init() &&
	    tu_kernel_at_least(5, 19) ? ECONNREFUSED : EPERM);
	hu_free(&j);
	assert_int_equal(tu_accept_now(fd), -1);
	close(fd);
	free(scratch);
}

/* One probe of b's, as a job of c's: its exit code (the errno it got). */
static int
neighbour_probe(struct confine *c, const char *scratch, bool none, ...)
{
	struct hu_job j;
	const char *args[8];
	size_t n = 0;
	va_list ap;
	int code;

	va_start(ap, none);
	while (n < 7 && (args[n] = va_arg(ap, const char *)) != NULL)
		n++;
	va_end(ap);
	args[n] = NULL;
	hu_init(&j, scratch, args[0], args[1], args[2], args[3], args[4],
	    args[5], NULL);
	if (none)
		j.spec.backend = CONFINE_BACKEND_NONE;
	assert_int_equal(hu_run(c, &j), 0);
	assert_int_equal(j.r.outcome == CONFINE_UNCERTAIN, 0);
	code = j.r.exit_code;
	hu_free(&j);
	return code;
}

/*
 * Two jobs of one helper at once: the second finds nothing of the
 * first's, its SysV segment, its TCP listener, its abstract unix name or
 * its process, where jobs have namespaces of their own (on the paths
 * without, the first may make none of them: EPERM); with backend none,
 * both in the host's, it finds each of them.
 */
static void
jobs_of_one_helper_are_strangers(void **state)
{
	char *scratch = tu_mkdtemp("scratch"), key[16], port[16], name[48];
	char line[64], host[24], at[56];
	bool ns = tu_path_init(), sockets = ns && tu_kernel_at_least(5, 19);
	struct hu_job a;
	struct timespec now;
	unsigned salt;
	bool none;
	int fd, k;

	/*
	 * Names no other test's jobs use at the same time: under bazel each
	 * test has a PID namespace of its own, so its pid is no name.
	 */
	clock_gettime(CLOCK_REALTIME, &now);
	salt = ((unsigned)getpid() * 2654435761u) ^ (unsigned)now.tv_nsec;
	for (k = 0; k < 2; k++) {
		none = k == 0;
		snprintf(key, sizeof(key), "%x", 0x5c000000u |
		    (salt & 0xffff) << 4 | (unsigned)k);
		snprintf(name, sizeof(name), "confine-neighbour-%x-%d", salt, k);
		snprintf(at, sizeof(at), "@%s", name);
		snprintf(port, sizeof(port), "%d", tu_listening_port(&fd));
		close(fd);
		hu_init(&a, scratch, "hold", key, port, name, "60000", NULL);
		if (none)
			a.spec.backend = CONFINE_BACKEND_NONE;
		if (!none && !ns) {
			/* In the host's namespaces it may make none of them. */
			assert_int_equal(hu_run(C(state), &a), 0);
			assert_int_equal(a.r.exit_code, EPERM);
			hu_free(&a);
			continue;
		}
		assert_int_equal(hu_spawn(C(state), &a), 0);
		snprintf(host, sizeof(host), "%ld",
		    (long)tu_read_line_pid(a.outfd, line, sizeof(line)));
		assert_string_equal(line, "ready");
		assert_int_equal(neighbour_probe(C(state), scratch, none, "ipc",
		    "shm-find", key, NULL), none ? 0 : ns ? ENOENT : EPERM);
		assert_int_equal(neighbour_probe(C(state), scratch, none,
		    "connect", port, NULL), none ? 0 : sockets ? ECONNREFUSED :
		    EPERM);
		assert_int_equal(neighbour_probe(C(state), scratch, none, "net",
		    "unix", "stream", "connect", at, NULL), none ? 0 : sockets ?
		    ECONNREFUSED : EPERM);
		assert_int_equal(neighbour_probe(C(state), scratch, none, "kill",
		    host, "0", NULL), none ? 0 : ns ? ESRCH : EPERM);
		assert_int_equal(confine_cancel(a.job), 0);
		assert_int_equal(hu_wait(&a), 0);
		assert_int_equal(a.r.outcome, CONFINE_CANCELLED);
		hu_free(&a);
		/* Backend none's segment is the host's, to remove; a job's
		 * of its own IPC namespace went with it. */
		if (none)
			assert_int_equal(shmctl(shmget((key_t)strtoul(key, NULL,
			    16), 0, 0), IPC_RMID, NULL), 0);
		else
			assert_int_equal(shmget((key_t)strtoul(key, NULL, 16), 0,
			    0), -1);
	}
	free(scratch);
}

/*
 * What was in force, as the helper said at the start: the backend, and on
 * the path the target is named for its namespaces and Landlock's ABI (the
 * kernel's own); "" before STARTED never reaches a caller here.
 */
static void
the_job_says_what_was_enforced(void **state)
{
	char *scratch = tu_mkdtemp("scratch"), want[64];
	const char *e;
	struct hu_job j;

	hu_init(&j, scratch, "exit", "0", NULL);
	assert_int_equal(hu_spawn(C(state), &j), 0);
	e = confine_job_enforced(j.job);
#ifdef __linux__
	assert_non_null(strstr(e, "backend=landlock "));
	/* landlock_create_ruleset(NULL, 0, VERSION): the kernel's ABI. */
	snprintf(want, sizeof(want), " landlock=%d ", (int)syscall(444, NULL, 0, 1));
	assert_non_null(strstr(e, want));
	assert_non_null(strstr(e, tu_path_init() ?
	    " namespaces=pid,mount,net,ipc,uts" : " namespaces=mount"));
	/* Its /tmp: the host's beneath its own, where its init lays it. */
	assert_non_null(strstr(e, tu_path_init() && tu_kernel_at_least(5, 12) ?
	    " tmp=over-hosts " : " tmp=private "));
#else
	assert_non_null(strstr(e, "backend=seatbelt "));
#endif
	snprintf(want, sizeof(want), " uid=%ld ", (long)geteuid());
	assert_non_null(strstr(e, want));
	assert_int_equal(hu_wait(&j), 0);
	assert_int_equal(j.r.outcome, CONFINE_COMPLETED);
	hu_free(&j);
	hu_init(&j, scratch, "exit", "0", NULL);
	j.spec.backend = CONFINE_BACKEND_NONE;
	assert_int_equal(hu_run(C(state), &j), 0);
	assert_string_equal(confine_job_enforced(j.job),
	    strstr(confine_job_enforced(j.job), "backend=none "));
	hu_free(&j);
	free(scratch);
}

static void
exit_codes_signals_and_exec_errors(void **state)
{
	char *scratch = tu_mkdtemp("scratch"), sig[8];
	struct hu_job j;

	hu_init(&j, scratch, "exit", "3", NULL);
	assert_int_equal(hu_run(C(state), &j), 0);
	assert_int_equal(j.r.outcome, CONFINE_FAILED);
	assert_int_equal(j.r.reason, CONFINE_REASON_EXIT_CODE);
	assert_int_equal(j.r.exit_code, 3);
	hu_free(&j);

	snprintf(sig, sizeof(sig), "%d", SIGUSR2);
	hu_init(&j, scratch, "signal", sig, NULL);
	assert_int_equal(hu_run(C(state), &j), 0);
	assert_int_equal(j.r.reason, CONFINE_REASON_SIGNAL);
	assert_int_equal(j.r.signal, SIGUSR2);
	hu_free(&j);

	hu_init(&j, scratch, NULL);
	j.spec.exe = "/nonexistent/program";
	assert_int_equal(hu_run(C(state), &j), 0);
	assert_int_equal(j.r.outcome, CONFINE_FAILED);
	assert_int_equal(j.r.reason, CONFINE_REASON_EXEC);
	assert_int_equal(j.r.error, ENOENT);
	assert_int_equal(j.r.step, CONFINE_STEP_EXEC);
	hu_free(&j);
	free(scratch);
}

static void
deadline_cancels_and_descendants_are_uncertain(void **state)
{
	char *scratch = tu_mkdtemp("scratch");
	struct hu_job j;
	int64_t t0;

	hu_init(&j, scratch, "pid-sleep", "30000", NULL);
	j.spec.deadline_ms = TU_DEADLINE_AFTER_START_MS;
	t0 = clock_ns();
	assert_int_equal(hu_run(C(state), &j), 0);
	/* Never before the deadline (counted from the spawn request). */
	assert_true(clock_ns() - t0 >= TU_DEADLINE_AFTER_START_MS * 1000000LL);
	assert_int_equal(j.r.outcome, CONFINE_CANCELLED);
	assert_int_equal(j.r.reason, CONFINE_REASON_DEADLINE);
	assert_true(j.r.wall_us > 0);
	assert_true(tu_gone(hu_pid(&j, 0)));
	hu_free(&j);

	hu_init(&j, scratch, "detach", "30000", NULL);
	assert_int_equal(hu_run(C(state), &j), 0);
	assert_int_equal(j.r.outcome, CONFINE_UNCERTAIN);
	assert_int_equal(j.r.reason, CONFINE_REASON_GROUP_STILL_PRESENT);
	assert_true(tu_gone(hu_pid(&j, 0)));
	hu_free(&j);

	/* Out of the group by setsid: found all the same, and killed. */
	hu_init(&j, scratch, "setsid", "30000", NULL);
	assert_int_equal(hu_run(C(state), &j), 0);
	assert_int_equal(j.r.outcome, CONFINE_UNCERTAIN);
	assert_int_equal(j.r.reason, CONFINE_REASON_GROUP_STILL_PRESENT);
	assert_true(tu_gone(hu_pid(&j, 0)));
	hu_free(&j);
	free(scratch);
}

/* Refused with a reason, before anything runs; the helper goes on. */
static void
bad_requests_are_refused_with_a_message(void **state)
{
	char *scratch = tu_mkdtemp("scratch");
	struct hu_job j;

	hu_init(&j, scratch, "exit", "0", NULL);
	j.spec.exe = "fixture";
	assert_int_equal(hu_run(C(state), &j), -EINVAL);
	assert_non_null(strstr(confine_error_message(), "absolute"));
	hu_free(&j);

	hu_init(&j, "/nonexistent/scratch", "exit", "0", NULL);
	assert_int_equal(hu_run(C(state), &j), -ENOENT);
	assert_non_null(strstr(confine_error_message(), "scratch"));
	hu_free(&j);

	hu_init(&j, scratch, "exit", "0", NULL);
	j.spec.backend = CONFINE_BACKEND_SEATBELT;
	j.spec.launcher = "/nonexistent/sandbox-exec";
	assert_int_equal(hu_run(C(state), &j), -ENOTSUP);
	assert_non_null(strstr(confine_error_message(), "launcher"));
	assert_int_equal(tu_count_entries(scratch), 0);
	hu_free(&j);

	hu_init(&j, scratch, "exit", "0", NULL);
	j.spec.stdin_fd = 999;
	assert_int_equal(hu_run(C(state), &j), -EBADF);
	hu_free(&j);

	hu_init(&j, scratch, "exit", "0", NULL);
	assert_int_equal(hu_run(C(state), &j), 0);
	assert_int_equal(j.r.outcome, CONFINE_COMPLETED);
	hu_free(&j);
	free(scratch);
}

/*
 * Nothing of the host leaks into the helper or the job: the descriptor
 * the host had open when the helper started is closed in the helper (it
 * closes every one it does not own) and absent from the job, which gets
 * no environment either.
 */
static void
job_inherits_nothing_from_the_host(void **state)
{
	char *scratch = tu_mkdtemp("scratch");
	struct hu_job j;

	assert_true(hu_has_open(getpid(), canary));
	assert_false(hu_has_open(confine_helper_pid(C(state)), canary));
	assert_int_equal(setenv("CONFINE_HOST_SECRET", "x", 1), 0);
	hu_init(&j, scratch, "env", NULL);
	assert_int_equal(hu_run(C(state), &j), 0);
	assert_int_equal(j.r.outcome, CONFINE_COMPLETED);
	assert_string_equal(j.out, "");
	hu_free(&j);
	hu_init(&j, scratch, "fds", NULL);
	assert_int_equal(hu_run(C(state), &j), 0);
	assert_int_equal(j.r.outcome, CONFINE_COMPLETED);
	assert_string_equal(j.out, "");
	hu_free(&j);
	unsetenv("CONFINE_HOST_SECRET");
	free(scratch);
}

/*
 * The job starts clean whatever the helper was started from (see
 * group_setup): default dispositions and an empty mask, its scratch root
 * for cwd, and a process group of its own.
 */
static void
job_starts_clean_in_its_own_group(void **state)
{
	char *scratch = tu_mkdtemp("scratch"), want[4096];
	struct hu_job j;

	hu_init(&j, scratch, "sigstate", NULL);
	assert_int_equal(hu_run(C(state), &j), 0);
	assert_string_equal(j.out, "");
	assert_int_equal(j.r.outcome, CONFINE_COMPLETED);
	hu_free(&j);

	snprintf(want, sizeof(want), "%s\n", scratch);
	hu_init(&j, scratch, "cwd", NULL);
	assert_int_equal(hu_run(C(state), &j), 0);
	assert_int_equal(j.r.outcome, CONFINE_COMPLETED);
	assert_string_equal(j.out, want);
	hu_free(&j);

	/* The shepherd's group, or (direct) its own, as the helper's child. */
	hu_init(&j, scratch, "ids", NULL);
	assert_int_equal(hu_run(C(state), &j), 0);
	assert_int_equal(j.r.outcome, CONFINE_COMPLETED);
	assert_null(tu_path_ids(j.out, hu_pid(&j, 0), j.r.pid, j.r.pgid,
	    confine_helper_pid(C(state))));
	assert_int_not_equal(j.r.pgid, getpgrp());
	assert_int_not_equal(j.r.pgid, getpgid(confine_helper_pid(C(state))));
	hu_free(&j);
	free(scratch);
}

static void
stdio_travels_as_descriptors(void **state)
{
	char *scratch = tu_mkdtemp("scratch"), *err;
	int in[2], ep[2];
	struct hu_job j;

	assert_int_equal(fd_pipe(in), 0);
	assert_int_equal(fd_pipe(ep), 0);
	assert_int_equal(write(in[1], "through\n", 8), 8);
	close(in[1]);
	hu_init(&j, scratch, "cat", NULL);
	j.spec.stdin_fd = in[0];
	j.spec.stderr_fd = ep[1];
	assert_int_equal(hu_spawn(C(state), &j), 0);
	close(in[0]);
	close(ep[1]);
	assert_int_equal(hu_wait(&j), 0);
	err = tu_drain(ep[0]);
	assert_int_equal(j.r.outcome, CONFINE_COMPLETED);
	assert_string_equal(j.out, "through\n");
	assert_string_equal(err, "err\n");
	free(err);
	hu_free(&j);
	free(scratch);
}

static void
cancel_while_running_and_after_settlement(void **state)
{
	char *scratch = tu_mkdtemp("scratch");
	struct confine_result r;
	struct hu_job j;
	pid_t pid;

	hu_init(&j, scratch, "pid-sleep", "30000", NULL);
	assert_int_equal(hu_spawn(C(state), &j), 0);
	pid = hu_read_pid(j.outfd);
	assert_int_equal(confine_wait(j.job, 0, &r), -ETIMEDOUT);
	assert_int_equal(confine_cancel(j.job), 0);
	assert_int_equal(hu_wait(&j), 0);
	hu_assert_outcome(&j.r, CONFINE_CANCELLED, CONFINE_REASON_CANCELLED);
	assert_true(tu_gone(pid));
	/* Settled is settled: a late cancel moves nothing, and says so. */
	assert_int_equal(confine_cancel(j.job), -EALREADY);
	assert_int_equal(confine_wait(j.job, 0, &r), 0);
	assert_int_equal(r.outcome, CONFINE_CANCELLED);
	assert_int_equal(r.reason, CONFINE_REASON_CANCELLED);
	hu_free(&j);

	hu_init(&j, scratch, "exit", "0", NULL);
	assert_int_equal(hu_run(C(state), &j), 0);
	assert_int_equal(confine_cancel(j.job), -EALREADY);
	assert_int_equal(confine_wait(j.job, 0, &r), 0);
	assert_int_equal(r.outcome, CONFINE_COMPLETED);
	hu_free(&j);
	free(scratch);
}

/*
 * A relayed cancel whose shepherd (or init) is held up: the helper's
 * cgroup.kill kills the job meanwhile (where it has a cgroup), and the
 * shepherd, let go, reaps the job before it reads the kill it was asked
 * for (its loop reaps first) and answers that the job was gone. The kill
 * was still ours: Cancelled, never Failed (signal 9). Without a shepherd
 * nothing is held up: the plain cancel.
 */
static void
a_held_up_shepherds_cancel_is_still_cancelled(void **state)
{
	char *scratch = tu_mkdtemp("scratch");
	struct timespec ts = { 0, 300 * 1000 * 1000 };
	struct hu_job j;
	pid_t pid, parent = 0;

	hu_init(&j, scratch, "pid-sleep", "30000", NULL);
	assert_int_equal(hu_spawn(C(state), &j), 0);
	pid = hu_read_pid(j.outfd);
	if (!tu_path_direct()) {
		parent = hu_parent_of(pid);
		assert_true(parent > 1);
		assert_int_equal(kill(parent, SIGSTOP), 0);
	}
	assert_int_equal(confine_cancel(j.job), 0);
	if (parent > 0) {
		nanosleep(&ts, NULL);
		assert_int_equal(kill(parent, SIGCONT), 0);
	}
	assert_int_equal(hu_wait(&j), 0);
	hu_assert_outcome(&j.r, CONFINE_CANCELLED, CONFINE_REASON_CANCELLED);
	assert_int_equal(j.r.signal, SIGKILL);
	assert_true(tu_gone(pid));
	hu_free(&j);
	free(scratch);
}

#define INFLIGHT 200

/*
 * Hundreds of jobs in flight at once through one helper: each copies a
 * shared stdin pipe, so none can end before the last has started and the
 * pipe is closed; until then, none has settled.
 */
static void
hundreds_in_flight(void **state)
{
	char *scratch = tu_mkdtemp("scratch");
	struct confine_job *jobs[INFLIGHT];
	struct hu_job j;
	struct confine_result r;
	int gate[2], i;

	assert_int_equal(fd_pipe(gate), 0);
	hu_init(&j, scratch, "cat", NULL);
	j.spec.stdin_fd = gate[0];
	for (i = 0; i < INFLIGHT; i++)
		assert_int_equal(confine_spawn(C(state), &j.spec, &jobs[i]), 0);
	close(gate[0]);
	for (i = 0; i < INFLIGHT; i++)
		assert_int_equal(confine_wait(jobs[i], 0, &r), -ETIMEDOUT);
	close(gate[1]);
	for (i = 0; i < INFLIGHT; i++) {
		assert_int_equal(confine_wait(jobs[i], -1, &r), 0);
		assert_int_equal(r.outcome, CONFINE_COMPLETED);
		confine_job_free(jobs[i]);
	}
	free(scratch);
}

/*
 * The event-loop way: poll confine_fd, dispatch, look with timeout 0. The
 * job waits on a pipe, so nothing can come before we let it end; then
 * dispatch must be what delivers its settlement: it handles a message, and
 * leaves nothing on the socket for confine_wait to read for itself.
 */
static void
event_loop_dispatch(void **state)
{
	char *scratch = tu_mkdtemp("scratch");
	struct confine_result r;
	struct pollfd pfd;
	struct hu_job j;
	int n = 0, rounds = 0, gate[2];

	assert_int_equal(fd_pipe(gate), 0);
	hu_init(&j, scratch, "cat", NULL);
	j.spec.stdin_fd = gate[0];
	assert_int_equal(confine_spawn(C(state), &j.spec, &j.job), 0);
	close(gate[0]);
	pfd.fd = confine_fd(C(state));
	pfd.events = POLLIN;
	/* Idle: nothing to read, and dispatch says so without waiting. */
	assert_int_equal(poll(&pfd, 1, 0), 0);
	assert_int_equal(confine_dispatch(C(state)), 0);
	assert_int_equal(confine_wait(j.job, 0, &r), -ETIMEDOUT);
	close(gate[1]);
	while (n == 0) {
		assert_int_equal(poll(&pfd, 1, 60000), 1);
		n = confine_dispatch(C(state));
		assert_true(n >= 0);
		assert_true(++rounds < 1000);  /* readable, yet nothing handled */
	}
	assert_int_equal(n, 1);
	assert_int_equal(poll(&pfd, 1, 0), 0);
	assert_int_equal(confine_wait(j.job, 0, &r), 0);
	assert_int_equal(r.outcome, CONFINE_COMPLETED);
	assert_int_equal(confine_dispatch(C(state)), 0);
	hu_free(&j);
	free(scratch);
}

/* ---- both sides dying ---- */

#define LOSE 10

static void
spawn_sleepers(struct confine *c, const char *scratch, struct hu_job *j,
    pid_t *pids)
{
	int i;

	for (i = 0; i < LOSE; i++) {
		hu_init(&j[i], scratch, "pid-sleep", "30000", NULL);
		assert_int_equal(hu_spawn(c, &j[i]), 0);
		pids[i] = hu_read_pid(j[i].outfd);
	}
}

/* SIGKILL to the helper; returns once it is dead (its socket closed). */
static pid_t
kill_helper(struct mode *m)
{
	pid_t helper = confine_helper_pid(m->c);

	assert_int_equal(kill(helper, SIGKILL), 0);
	if (m->listener > 0) {
		assert_int_equal(waitpid(m->listener, NULL, 0), m->listener);
		m->listener = 0;
	} else {
		hu_await_exit(helper);
	}
	return helper;
}

/*
 * The next spawn after a helper died: a new helper and a Completed job,
 * or in connect mode, nobody to replace a shared helper: a clear error.
 */
static void
next_spawn_after_loss(struct mode *m, pid_t helper, const char *scratch)
{
	struct hu_job next;

	hu_init(&next, scratch, "exit", "0", NULL);
	if (m->mode == CONFINE_MODE_CONNECT) {
		assert_int_equal(hu_run(m->c, &next), -ECONNRESET);
		assert_non_null(strstr(confine_error_message(), "gone"));
		assert_non_null(strstr(confine_error_message(), m->sock));
	} else {
		assert_int_equal(hu_run(m->c, &next), 0);
		assert_int_equal(next.r.outcome, CONFINE_COMPLETED);
		assert_true(confine_helper_pid(m->c) > 0);
		assert_int_not_equal(confine_helper_pid(m->c), helper);
	}
	hu_free(&next);
}

/*
 * Every job in flight is Uncertain(helper lost), each with its own pid;
 * no job outlives the helper. With spawn_first, the loss is found by the
 * next spawn's request failing to go out, before any thread has read the
 * EOF: the jobs must be settled all the same, and stay so.
 */
static void
helper_killed_midflight(enum confine_mode mode, bool spawn_first)
{
	char *scratch = tu_mkdtemp("scratch");
	struct mode m = { mode, NULL, NULL, 0, NULL };
	struct hu_job j[LOSE];
	pid_t pids[LOSE], helper;
	int i;

	mode_open(&m);
	spawn_sleepers(m.c, scratch, j, pids);
	helper = kill_helper(&m);
	if (spawn_first)
		next_spawn_after_loss(&m, helper, scratch);
	for (i = 0; i < LOSE; i++) {
		assert_int_equal(confine_wait(j[i].job, -1, &j[i].r), 0);
		assert_int_equal(j[i].r.outcome, CONFINE_UNCERTAIN);
		assert_int_equal(j[i].r.reason, CONFINE_REASON_HELPER_LOST);
		assert_int_equal(j[i].r.pid, pids[i]);
		hu_free(&j[i]);
	}
	for (i = 0; i < LOSE; i++)
		assert_true(tu_gone(pids[i]));
	if (!spawn_first)
		next_spawn_after_loss(&m, helper, scratch);
	mode_close(&m);
	free(scratch);
}

static void
helper_killed_midflight_exec(void **state)
{
	(void)state;
	helper_killed_midflight(CONFINE_MODE_EXEC, false);
	helper_killed_midflight(CONFINE_MODE_EXEC, true);
}

static void
helper_killed_midflight_fork(void **state)
{
	(void)state;
	helper_killed_midflight(CONFINE_MODE_FORK, false);
	helper_killed_midflight(CONFINE_MODE_FORK, true);
}

static void
helper_killed_midflight_connect(void **state)
{
	(void)state;
	helper_killed_midflight(CONFINE_MODE_CONNECT, false);
	helper_killed_midflight(CONFINE_MODE_CONNECT, true);
}

/*
 * A helper that dies with nothing in flight: nobody reads its EOF, so the
 * next spawn is the first to find out, as its request fails to go out. It
 * must start a new helper and run there (nothing ran on the dead one).
 */
static void
idle_helper_killed(enum confine_mode mode)
{
	char *scratch = tu_mkdtemp("scratch");
	struct mode m = { mode, NULL, NULL, 0, NULL };
	pid_t helper;

	mode_open(&m);
	helper = kill_helper(&m);
	next_spawn_after_loss(&m, helper, scratch);
	if (mode != CONFINE_MODE_CONNECT) {
		/* And the one after, on the same new helper. */
		helper = confine_helper_pid(m.c);
		next_spawn_after_loss(&m, 0, scratch);
		assert_int_equal(confine_helper_pid(m.c), helper);
	}
	mode_close(&m);
	free(scratch);
}

static void
idle_helper_killed_exec(void **state)
{
	(void)state;
	idle_helper_killed(CONFINE_MODE_EXEC);
}

static void
idle_helper_killed_fork(void **state)
{
	(void)state;
	idle_helper_killed(CONFINE_MODE_FORK);
}

static void
idle_helper_killed_connect(void **state)
{
	(void)state;
	idle_helper_killed(CONFINE_MODE_CONNECT);
}

/*
 * An event loop learns of a lost helper from dispatch, every time it asks
 * while the descriptor reads EOF, not just once (a loop told 0 would spin
 * on a descriptor that is always readable). A replacement makes the same
 * descriptor quiet again.
 */
static void
dispatch_reports_a_lost_helper_until_replaced(enum confine_mode mode)
{
	char *scratch = tu_mkdtemp("scratch");
	struct mode m = { mode, NULL, NULL, 0, NULL };
	struct pollfd pfd;
	pid_t helper;
	int i;

	mode_open(&m);
	pfd.fd = confine_fd(m.c);
	pfd.events = POLLIN;
	helper = kill_helper(&m);
	for (i = 0; i < 3; i++) {
		assert_int_equal(poll(&pfd, 1, 60000), 1);
		assert_int_equal(confine_dispatch(m.c), -ECONNRESET);
		assert_non_null(strstr(confine_error_message(), "gone"));
	}
	next_spawn_after_loss(&m, helper, scratch);
	if (mode != CONFINE_MODE_CONNECT) {
		assert_int_equal(confine_fd(m.c), pfd.fd);
		assert_int_equal(poll(&pfd, 1, 0), 0);
		assert_int_equal(confine_dispatch(m.c), 0);
	} else {
		assert_int_equal(confine_dispatch(m.c), -ECONNRESET);
	}
	mode_close(&m);
	free(scratch);
}

static void
dispatch_reports_a_lost_helper_exec(void **state)
{
	(void)state;
	dispatch_reports_a_lost_helper_until_replaced(CONFINE_MODE_EXEC);
}

static void
dispatch_reports_a_lost_helper_fork(void **state)
{
	(void)state;
	dispatch_reports_a_lost_helper_until_replaced(CONFINE_MODE_FORK);
}

static void
dispatch_reports_a_lost_helper_connect(void **state)
{
	(void)state;
	dispatch_reports_a_lost_helper_until_replaced(CONFINE_MODE_CONNECT);
}

/* The host dies with jobs in flight: their groups and the helper go too. */
static void
host_killed_midflight(const char *mode)
{
	char *scratch = tu_mkdtemp("scratch");

	hu_kill_host(mode, scratch, LOSE, false);
	free(scratch);
}

static void
host_killed_midflight_exec(void **state)
{
	(void)state;
	host_killed_midflight("exec");
}

static void
host_killed_midflight_fork(void **state)
{
	(void)state;
	host_killed_midflight("fork");
}

/* ---- connect mode ---- */

static void
socket_is_private_by_default(void **state)
{
	char *dir = tu_sockdir(), *sock = tu_join(dir, "h.sock");
	struct stat st;
	pid_t h;

	(void)state;
	h = hu_listen(sock, NULL);
	assert_int_equal(stat(sock, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	hu_stop(h);
	assert_false(tu_exists(sock));
	tu_rmsock(dir, sock);
}

/* A child's failure: its code, and what the library last said. */
static int
child_failed(int code)
{
	fprintf(stderr, "child failed (%d): %s\n", code, confine_error_message());
	return code;
}

/*
 * Runs a case of children[] in a fresh process, this program run again
 * with its name, for what cannot be undone in this one (threads). Not a
 * fork: a forked child may start out threaded (a sanitizer's runtime
 * restarts its own thread there). It reports by exit status.
 */
static void
in_child(const char *name)
{
	const char *argv[] = { "helper_test", name, NULL };
	int status;
	pid_t pid;

	assert_int_equal(posix_spawn(&pid, "/proc/self/exe", NULL, NULL,
	    (char *const *)(uintptr_t)argv, environ), 0);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

static void *
idle(void *arg)
{
	pause();
	return arg;
}

/* A job through c without cmocka (in a child): 0 when it Completed. */
static int
completes(struct confine *c, const char *scratch)
{
	const char *argv[] = { "fixture", "exit", "0", NULL };
	struct confine_spec spec;
	struct confine_result r;
	struct confine_job *job;
	int rc;

	confine_spec_init(&spec);
	spec.exe = hu_fixture;
	spec.argv = argv;
	spec.scratch = scratch;
	rc = confine_spawn(c, &spec, &job);
	if (rc != 0)
		return rc;
	rc = confine_wait(job, -1, &r);
	if (rc == 0 && r.outcome != CONFINE_COMPLETED)
		rc = 1;
	confine_job_free(job);
	return rc;
}

/* The helper the library carries: exec'd from memory, not this program. */
static bool
runs_from_memory(pid_t pid)
{
	char path[64], exe[256];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%ld/exe", (long)pid);
	n = readlink(path, exe, sizeof(exe) - 1);
	if (n <= 0)
		return false;
	exe[n] = '\0';
	return strncmp(exe, "/memfd:confine-helper", 21) == 0;
}

/*
 * From a threaded host, in fork and auto mode alike: the carried helper,
 * never a fork of the host, and so is its replacement once it is lost.
 * Exec mode is fine there too.
 */
static int
open_threaded(void)
{
	static const enum confine_mode carried[] = { CONFINE_MODE_FORK,
		CONFINE_MODE_AUTO };
	char *scratch = tu_mkdtemp("scratch");
	struct confine *c;
	pthread_t t;
	pid_t old;
	size_t i;

	if (pthread_create(&t, NULL, idle, NULL) != 0)
		return child_failed(100);
	for (i = 0; i < 2; i++) {
		if (hu_open(&c, carried[i], NULL) != 0)
			return child_failed(1);
		old = confine_helper_pid(c);
		if (!runs_from_memory(old) || completes(c, scratch) != 0)
			return child_failed(2);
		if (kill(old, SIGKILL) != 0)
			return child_failed(3);
		hu_await_exit(old);
		if (completes(c, scratch) != 0 || confine_helper_pid(c) == old ||
		    !runs_from_memory(confine_helper_pid(c)))
			return child_failed(4);
		confine_close(c);
	}
	if (hu_open(&c, CONFINE_MODE_EXEC, NULL) != 0 ||
	    !hu_runs(confine_helper_pid(c), hu_helper))
		return child_failed(5);
	confine_close(c);
	free(scratch);
	return 0;
}

/*
 * Nothing of a helper outlives it, its guard included: a host that reaps
 * its orphans (a child subreaper: each orphan of the helper's becomes its
 * child as the helper exits) has no child left once confine_close has
 * reaped the helper. Under a PID 1 that reaps none, one left would be a
 * zombie for good, one for each helper a host opens and closes.
 */
/* One helper of mode m opened, a job run, closed: 0 if nothing is left. */
static int
left_after(enum confine_mode m, const char *scratch)
{
	struct confine *c;
	siginfo_t si;

	if (hu_open(&c, m, NULL) != 0)
		return child_failed(1);
	if (completes(c, scratch) != 0)
		return child_failed(2);
	confine_close(c);
	memset(&si, 0, sizeof(si));
	if (waitid(P_ALL, 0, &si, WEXITED | WNOHANG | WNOWAIT) == 0) {
		fprintf(stderr, "left behind: %s\n", si.si_pid == 0 ?
		    "a child still running" : "a child ended");
		return child_failed(3);
	}
	return errno == ECHILD ? 0 : child_failed(4);
}

static int
left_to_a_reaper(void)
{
	char *scratch = tu_mkdtemp("scratch");
	int rc = 0;

#ifdef __linux__
	if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0)
		return child_failed(100);
#endif
	if ((rc = left_after(CONFINE_MODE_AUTO, scratch)) == 0)
		rc = left_after(CONFINE_MODE_EXEC, scratch);
	free(scratch);
	return rc;
}

static void
nothing_of_a_helper_is_left_to_a_reaper(void **state)
{
	(void)state;
	in_child("left-to-a-reaper");
}

static void
a_threaded_host_gets_the_carried_helper_and_its_replacements(void **state)
{
	(void)state;
	in_child("open-threaded");
}

/*
 * A host that closes a descriptor it does not know of, and opens another
 * file in its place (here: every descriptor of ours that holds the
 * helper's image gets a script that leaves a mark), must still get the
 * library's own helper when it is replaced: no descriptor of the image is
 * kept between starts, and the replacement's is its own.
 */
static void
a_host_reusing_our_descriptors_still_gets_our_helper(void **state)
{
	char *dir = tu_mkdtemp("reuse"), *script = tu_join(dir, "impostor");
	char *mark = tu_join(dir, "ran"), *scratch = tu_join(dir, "s");
	char link[300], target[64], text[256];
	struct confine *c;
	struct dirent *e;
	int fd, n, reused = 0;
	pid_t old;
	DIR *d;

	(void)state;
	assert_int_equal(mkdir(scratch, 0755), 0);
	snprintf(text, sizeof(text), "#!/bin/sh\ntouch '%s'\n", mark);
	fd = open(script, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	assert_int_equal(hu_open(&c, CONFINE_MODE_AUTO, NULL), 0);
	old = confine_helper_pid(c);
	assert_int_equal(completes(c, scratch), 0);
	fd = open(script, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_non_null(d = opendir("/proc/self/fd"));
	while ((e = readdir(d)) != NULL) {
		snprintf(link, sizeof(link), "/proc/self/fd/%s", e->d_name);
		n = (int)readlink(link, target, sizeof(target) - 1);
		if (n <= 0)
			continue;
		target[n] = '\0';
		if (strncmp(target, "/memfd:confine-helper", 21) == 0) {
			assert_true(dup2(fd, atoi(e->d_name)) >= 0);
			reused++;
		}
	}
	closedir(d);
	close(fd);
	assert_int_equal(kill(old, SIGKILL), 0);
	hu_await_exit(old);
	assert_int_equal(completes(c, scratch), 0);
	assert_true(runs_from_memory(confine_helper_pid(c)));
	assert_false(tu_exists(mark));
	assert_int_equal(reused, 0);
	confine_close(c);
	free(script);
	free(mark);
	free(scratch);
	free(dir);
}

/*
 * A refusal through the library names what could not be applied: a helper
 * in a stand-in of a default Docker container (tests/standin/container.c)
 * can make no namespace, and says which layer, the call and its errno;
 * confine_last_refusal() gives them, and the thread's next failure that names
 * none clears them.
 */
static void
a_refusal_names_its_layer_through_the_library(void **state)
{
	char *dir = tu_mkdtemp("refusal"), *script = tu_join(dir, "helper");
	char *scratch = tu_join(dir, "s"), *container = tu_runfile("tests/container");
	struct confine_options o = { .mode = CONFINE_MODE_EXEC };
	const char *argv[] = { "fixture", "exit", "0", NULL };
	struct confine_refusal r;
	struct confine_spec spec;
	struct confine_job *job;
	struct confine *c;
	char text[1024];
	int fd;

	(void)state;
	assert_int_equal(mkdir(scratch, 0755), 0);
	snprintf(text, sizeof(text), "#!/bin/sh\nexec '%s' -- '%s' \"$@\"\n",
	    container, hu_helper);
	fd = open(script, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	o.helper_path = script;
	assert_int_equal(confine_open(&c, &o), 0);
	confine_spec_init(&spec);
	spec.exe = hu_fixture;
	spec.argv = argv;
	spec.scratch = scratch;
	assert_int_equal(confine_spawn(c, &spec, &job), -ENOTSUP);
	assert_non_null(strstr(confine_error_message(),
	    "unshare(CLONE_NEWUSER|CLONE_NEWNS) failed"));
	assert_int_equal(confine_last_refusal(&r), 0);
	assert_string_equal(r.layer, "user namespace");
	assert_string_equal(r.call, "unshare(CLONE_NEWUSER|CLONE_NEWNS)");
	assert_int_equal(r.error, EPERM);
	/* A bad spec names no layer, and clears the last. */
	spec.scratch = "relative";
	assert_int_equal(confine_spawn(c, &spec, &job), -EINVAL);
	assert_int_equal(confine_last_refusal(&r), -ENOENT);
	confine_close(c);
	free(container);
	free(scratch);
	free(script);
	free(dir);
}

/*
 * The helper binary: options->helper_path, else $CONFINE_HELPER, else the
 * install location, each tried only when the one before is not given.
 */
static void
helper_path_options_then_environment_then_default(void **state)
{
	struct confine_options o = { .mode = CONFINE_MODE_EXEC };
	const char *installed = confine_default_helper_path();
	struct confine *c;

	(void)state;
	assert_int_equal(setenv("CONFINE_HELPER", hu_helper, 1), 0);
	assert_int_equal(confine_open(&c, &o), 0);
	assert_true(hu_runs(confine_helper_pid(c), hu_helper));
	confine_close(c);

	assert_int_equal(setenv("CONFINE_HELPER", "/nonexistent/env-helper", 1), 0);
	o.helper_path = hu_helper;
	assert_int_equal(confine_open(&c, &o), 0);
	assert_true(hu_runs(confine_helper_pid(c), hu_helper));
	confine_close(c);

	o.helper_path = NULL;
	assert_int_equal(confine_open(&c, &o), -ENOENT);
	assert_non_null(strstr(confine_error_message(), "/nonexistent/env-helper"));

	assert_int_equal(unsetenv("CONFINE_HELPER"), 0);
	if (access(installed, X_OK) == 0) {
		/* Installed here (tools/install): nothing set finds it. */
		assert_int_equal(confine_open(&c, &o), 0);
		assert_true(hu_runs(confine_helper_pid(c), installed));
		confine_close(c);
	} else {
		assert_int_equal(confine_open(&c, &o), -ENOENT);
		assert_non_null(strstr(confine_error_message(), installed));
	}
}

static void
missing_helper_binary_is_a_clear_error(void **state)
{
	struct confine_options o = { .mode = CONFINE_MODE_EXEC,
	    .helper_path = "/nonexistent/helper" };
	struct confine *c;

	(void)state;
	assert_int_equal(confine_open(&c, &o), -ENOENT);
	assert_non_null(strstr(confine_error_message(), "/nonexistent/helper"));
	o.mode = CONFINE_MODE_CONNECT;
	o.socket_path = "/nonexistent/socket";
	assert_int_equal(confine_open(&c, &o), -ENOENT);
}

#define PER_MODE(name) cmocka_unit_test(name)

/* What in_child can run. */
static const struct {
	const char *name;
	int (*fn)(void);
} children[] = {
	{ "open-threaded", open_threaded },
	{ "left-to-a-reaper", left_to_a_reaper },
};

int
main(int argc, char **argv)
{
	const struct CMUnitTest per_mode[] = {
		PER_MODE(completed_writes_inside_and_is_denied_outside),
		PER_MODE(network_is_its_own_or_refused),
		PER_MODE(jobs_of_one_helper_are_strangers),
		PER_MODE(the_job_says_what_was_enforced),
		PER_MODE(exit_codes_signals_and_exec_errors),
		PER_MODE(deadline_cancels_and_descendants_are_uncertain),
		PER_MODE(bad_requests_are_refused_with_a_message),
		PER_MODE(job_inherits_nothing_from_the_host),
		PER_MODE(job_starts_clean_in_its_own_group),
		PER_MODE(stdio_travels_as_descriptors),
		PER_MODE(cancel_while_running_and_after_settlement),
		PER_MODE(a_held_up_shepherds_cancel_is_still_cancelled),
		PER_MODE(hundreds_in_flight),
		PER_MODE(event_loop_dispatch),
	};
	const struct CMUnitTest lifecycle[] = {
		cmocka_unit_test(hu_on_its_path),
		cmocka_unit_test(helper_killed_midflight_exec),
		cmocka_unit_test(helper_killed_midflight_fork),
		cmocka_unit_test(helper_killed_midflight_connect),
		cmocka_unit_test(idle_helper_killed_exec),
		cmocka_unit_test(idle_helper_killed_fork),
		cmocka_unit_test(idle_helper_killed_connect),
		cmocka_unit_test(dispatch_reports_a_lost_helper_exec),
		cmocka_unit_test(dispatch_reports_a_lost_helper_fork),
		cmocka_unit_test(dispatch_reports_a_lost_helper_connect),
		cmocka_unit_test(host_killed_midflight_exec),
		cmocka_unit_test(host_killed_midflight_fork),
		cmocka_unit_test(socket_is_private_by_default),
		cmocka_unit_test(a_threaded_host_gets_the_carried_helper_and_its_replacements),
		cmocka_unit_test(nothing_of_a_helper_is_left_to_a_reaper),
		cmocka_unit_test(helper_path_options_then_environment_then_default),
		cmocka_unit_test(a_host_reusing_our_descriptors_still_gets_our_helper),
		cmocka_unit_test(a_refusal_names_its_layer_through_the_library),
		cmocka_unit_test(missing_helper_binary_is_a_clear_error),
	};
	int failed = 0;

	hu_setup();
	/* A peer that vanishes must not kill the test with SIGPIPE. */
	signal(SIGPIPE, SIG_IGN);
	if (argc == 2) {
		for (size_t i = 0; i < sizeof(children) / sizeof(children[0]); i++)
			if (strcmp(argv[1], children[i].name) == 0)
				return children[i].fn();
		return child_failed(127);
	}
	tu_path_setup();
	current = &modes[0];
	failed += cmocka_run_group_tests_name("exec mode", per_mode,
	    group_setup, group_teardown);
	current = &modes[1];
	failed += cmocka_run_group_tests_name("fork mode", per_mode,
	    group_setup, group_teardown);
	current = &modes[2];
	failed += cmocka_run_group_tests_name("connect mode", per_mode,
	    group_setup, group_teardown);
	failed += cmocka_run_group_tests_name("lifecycle", lifecycle, NULL, NULL);
	return failed;
}
