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
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "src/clock.h"
#include "src/fd.h"
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
	assert_int_equal(j.r.proof, CONFINE_PROOF_SUBREAPER);
	assert_int_equal(j.r.backend, CONFINE_BACKEND_LANDLOCK);
	assert_true(tu_exists(in));
	assert_true(j.r.pid > 0 && j.r.pgid > 0);
	hu_free(&j);
	hu_init(&j, scratch, "write", out, NULL);
	assert_int_equal(hu_run(C(state), &j), 0);
	assert_int_equal(j.r.outcome, CONFINE_FAILED);
	assert_int_equal(j.r.reason, CONFINE_REASON_EXIT_CODE);
	assert_int_equal(j.r.exit_code, EACCES);
	assert_false(tu_exists(out));
	hu_free(&j);
	free(in);
	free(out);
	free(scratch);
	free(outside);
}

static void
network_is_refused(void **state)
{
	char *scratch = tu_mkdtemp("scratch"), port[16];
	struct hu_job j;
	int fd;

	snprintf(port, sizeof(port), "%d", tu_closed_port(&fd));
	hu_init(&j, scratch, "connect", port, NULL);
	j.spec.backend = CONFINE_BACKEND_NONE;
	assert_int_equal(hu_run(C(state), &j), 0);
	assert_int_equal(j.r.exit_code, ECONNREFUSED);
	hu_free(&j);
	hu_init(&j, scratch, "connect", port, NULL);
	assert_int_equal(hu_run(C(state), &j), 0);
	assert_int_equal(j.r.exit_code, EPERM);
	hu_free(&j);
	close(fd);
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
	j.spec.deadline_ms = 150;
	t0 = clock_ns();
	assert_int_equal(hu_run(C(state), &j), 0);
	/* Never before the deadline (counted from the spawn request). */
	assert_true(clock_ns() - t0 >= 150 * 1000000LL);
	assert_int_equal(j.r.outcome, CONFINE_CANCELLED);
	assert_int_equal(j.r.reason, CONFINE_REASON_DEADLINE);
	assert_true(j.r.wall_us > 0);
	assert_true(tu_gone((pid_t)atol(j.out)));
	hu_free(&j);

	hu_init(&j, scratch, "detach", "30000", NULL);
	assert_int_equal(hu_run(C(state), &j), 0);
	assert_int_equal(j.r.outcome, CONFINE_UNCERTAIN);
	assert_int_equal(j.r.reason, CONFINE_REASON_GROUP_STILL_PRESENT);
	assert_true(tu_gone((pid_t)atol(j.out)));
	hu_free(&j);

	/* Out of the group by setsid: found all the same, and killed. */
	hu_init(&j, scratch, "setsid", "30000", NULL);
	assert_int_equal(hu_run(C(state), &j), 0);
	assert_int_equal(j.r.outcome, CONFINE_UNCERTAIN);
	assert_int_equal(j.r.reason, CONFINE_REASON_GROUP_STILL_PRESENT);
	assert_true(tu_gone((pid_t)atol(j.out)));
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
	long pid, pgid, sid;
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

	/* Exits 0 only when not a group leader: the group is the shepherd's. */
	hu_init(&j, scratch, "ids", NULL);
	assert_int_equal(hu_run(C(state), &j), 0);
	assert_int_equal(j.r.outcome, CONFINE_COMPLETED);
	assert_int_equal(sscanf(j.out, "%ld %ld %ld", &pid, &pgid, &sid), 3);
	assert_int_equal(pid, j.r.pid);
	assert_int_equal(pgid, j.r.pgid);
	assert_int_not_equal(pgid, getpgrp());
	assert_int_not_equal(pgid, getpgid(confine_helper_pid(C(state))));
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
	assert_int_equal(j.r.outcome, CONFINE_CANCELLED);
	assert_int_equal(j.r.reason, CONFINE_REASON_CANCELLED);
	assert_true(tu_gone(pid));
	/* Settled is settled: a late cancel moves nothing. */
	assert_int_equal(confine_cancel(j.job), 0);
	assert_int_equal(confine_wait(j.job, 0, &r), 0);
	assert_int_equal(r.outcome, CONFINE_CANCELLED);
	assert_int_equal(r.reason, CONFINE_REASON_CANCELLED);
	hu_free(&j);

	hu_init(&j, scratch, "exit", "0", NULL);
	assert_int_equal(hu_run(C(state), &j), 0);
	assert_int_equal(confine_cancel(j.job), 0);
	assert_int_equal(confine_wait(j.job, 0, &r), 0);
	assert_int_equal(r.outcome, CONFINE_COMPLETED);
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

/* Every job in flight is Uncertain(helper lost); no job outlives it. */
static void
helper_killed_midflight(enum confine_mode mode)
{
	char *scratch = tu_mkdtemp("scratch"), *dir = NULL, *sock = NULL;
	struct hu_job j[LOSE], next;
	pid_t pids[LOSE], helper, listener = 0;
	struct confine *c;
	int i;

	if (mode == CONFINE_MODE_CONNECT) {
		dir = tu_sockdir();
		sock = tu_join(dir, "h.sock");
		listener = hu_listen(sock, NULL);
	}
	assert_int_equal(hu_open(&c, mode, sock), 0);
	helper = confine_helper_pid(c);
	spawn_sleepers(c, scratch, j, pids);
	assert_int_equal(kill(helper, SIGKILL), 0);
	for (i = 0; i < LOSE; i++) {
		assert_int_equal(confine_wait(j[i].job, -1, &j[i].r), 0);
		assert_int_equal(j[i].r.outcome, CONFINE_UNCERTAIN);
		assert_int_equal(j[i].r.reason, CONFINE_REASON_HELPER_LOST);
		assert_int_equal(j[i].r.pid, pids[i]);
		hu_free(&j[i]);
	}
	for (i = 0; i < LOSE; i++)
		assert_true(tu_gone(pids[i]));
	hu_init(&next, scratch, "exit", "0", NULL);
	if (mode == CONFINE_MODE_CONNECT) {
		/* Nobody to replace a shared helper: a clear error. */
		assert_int_equal(hu_run(c, &next), -ECONNRESET);
		assert_non_null(strstr(confine_error_message(), "gone"));
		waitpid(listener, NULL, 0);
	} else {
		assert_int_equal(hu_run(c, &next), 0);
		assert_int_equal(next.r.outcome, CONFINE_COMPLETED);
		assert_int_not_equal(confine_helper_pid(c), helper);
	}
	hu_free(&next);
	confine_close(c);
	free(scratch);
	tu_rmsock(dir, sock);
}

static void
helper_killed_midflight_exec(void **state)
{
	helper_killed_midflight(CONFINE_MODE_EXEC);
}

static void
helper_killed_midflight_fork(void **state)
{
	helper_killed_midflight(CONFINE_MODE_FORK);
}

static void
helper_killed_midflight_connect(void **state)
{
	helper_killed_midflight(CONFINE_MODE_CONNECT);
}

/* The host dies with jobs in flight: their groups and the helper go too. */
static void
host_killed_midflight(const char *mode)
{
	char *scratch = tu_mkdtemp("scratch");

	hu_kill_host(mode, scratch, LOSE);
	free(scratch);
}

static void
host_killed_midflight_exec(void **state)
{
	host_killed_midflight("exec");
}

static void
host_killed_midflight_fork(void **state)
{
	host_killed_midflight("fork");
}

/* ---- connect mode ---- */

static void
socket_is_private_by_default(void **state)
{
	char *dir = tu_sockdir(), *sock = tu_join(dir, "h.sock");
	struct stat st;
	pid_t h;

	h = hu_listen(sock, NULL);
	assert_int_equal(stat(sock, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	hu_stop(h);
	assert_false(tu_exists(sock));
	tu_rmsock(dir, sock);
}

/* Fork mode refuses a threaded host; exec mode is fine there. */
static void *
idle(void *arg)
{
	pause();
	return arg;
}

static void
fork_mode_is_refused_once_threaded(void **state)
{
	pid_t pid = fork();
	int status;

	assert_true(pid >= 0);
	if (pid == 0) {
		struct confine *c;
		pthread_t t;

		if (pthread_create(&t, NULL, idle, NULL) != 0)
			_exit(100);
		if (hu_open(&c, CONFINE_MODE_FORK, NULL) != -EDEADLK)
			_exit(1);
		if (strstr(confine_error_message(), "thread") == NULL)
			_exit(2);
		if (hu_open(&c, CONFINE_MODE_EXEC, NULL) != 0)
			_exit(3);
		confine_close(c);
		if (hu_open(&c, CONFINE_MODE_AUTO, NULL) != 0)
			_exit(4);
		confine_close(c);
		_exit(0);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

static void
missing_helper_binary_is_a_clear_error(void **state)
{
	struct confine_options o = { CONFINE_MODE_EXEC, "/nonexistent/helper", NULL };
	struct confine *c;

	assert_int_equal(confine_open(&c, &o), -ENOENT);
	assert_non_null(strstr(confine_error_message(), "/nonexistent/helper"));
	o.mode = CONFINE_MODE_CONNECT;
	o.socket_path = "/nonexistent/socket";
	assert_int_equal(confine_open(&c, &o), -ENOENT);
}

#define PER_MODE(name) cmocka_unit_test(name)

int
main(void)
{
	const struct CMUnitTest per_mode[] = {
		PER_MODE(completed_writes_inside_and_is_denied_outside),
		PER_MODE(network_is_refused),
		PER_MODE(exit_codes_signals_and_exec_errors),
		PER_MODE(deadline_cancels_and_descendants_are_uncertain),
		PER_MODE(bad_requests_are_refused_with_a_message),
		PER_MODE(job_inherits_nothing_from_the_host),
		PER_MODE(job_starts_clean_in_its_own_group),
		PER_MODE(stdio_travels_as_descriptors),
		PER_MODE(cancel_while_running_and_after_settlement),
		PER_MODE(hundreds_in_flight),
		PER_MODE(event_loop_dispatch),
	};
	const struct CMUnitTest lifecycle[] = {
		cmocka_unit_test(helper_killed_midflight_exec),
		cmocka_unit_test(helper_killed_midflight_fork),
		cmocka_unit_test(helper_killed_midflight_connect),
		cmocka_unit_test(host_killed_midflight_exec),
		cmocka_unit_test(host_killed_midflight_fork),
		cmocka_unit_test(socket_is_private_by_default),
		cmocka_unit_test(fork_mode_is_refused_once_threaded),
		cmocka_unit_test(missing_helper_binary_is_a_clear_error),
	};
	int failed = 0;

	hu_setup();
	/* A peer that vanishes must not kill the test with SIGPIPE. */
	signal(SIGPIPE, SIG_IGN);
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
