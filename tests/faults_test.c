/*
 * Faults: the helper or the host dying with a hundred jobs in flight, the
 * helper out of descriptors, process trees, stopped jobs, and a client
 * that never reads. Every job is accounted for and nothing is left.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "src/core/fd.h"
#include "src/core/wire.h"
#include "tests/helperutil.h"
#include "tests/testutil.h"

extern char **environ;

#define HUNDRED 100

static char *scratch;

static int
setup(void **state)
{
	(void)state;
	scratch = tu_mkdtemp("scratch");
	return 0;
}

static int
teardown(void **state)
{
	(void)state;
	free(scratch);
	return 0;
}

/* One job that exits 0 through c: it must complete. */
static void
completes(struct confine *c)
{
	struct hu_job j;

	hu_init(&j, scratch, "exit", "0", NULL);
	assert_int_equal(hu_run(c, &j), 0);
	assert_int_equal(j.r.outcome, CONFINE_COMPLETED);
	hu_free(&j);
}

static void
helper_killed_with_a_hundred_jobs_in_flight(void **state)
{
	static struct hu_job j[HUNDRED];
	pid_t pids[HUNDRED], helper;
	struct confine *c;
	int i, lost = 0;

	(void)state;
	assert_int_equal(hu_open(&c, CONFINE_MODE_EXEC, NULL), 0);
	helper = confine_helper_pid(c);
	for (i = 0; i < HUNDRED; i++) {
		hu_init(&j[i], scratch, "pid-sleep", "60000", NULL);
		assert_int_equal(hu_spawn(c, &j[i]), 0);
		pids[i] = hu_read_pid(j[i].outfd);
	}
	assert_int_equal(kill(helper, SIGKILL), 0);
	for (i = 0; i < HUNDRED; i++) {
		/* None lost: each has its result; none Completed. */
		assert_int_equal(confine_wait(j[i].job, -1, &j[i].r), 0);
		assert_int_not_equal(j[i].r.outcome, CONFINE_COMPLETED);
		if (j[i].r.outcome == CONFINE_UNCERTAIN &&
		    j[i].r.reason == CONFINE_REASON_HELPER_LOST)
			lost++;
		hu_free(&j[i]);
	}
	assert_int_equal(lost, HUNDRED);
	for (i = 0; i < HUNDRED; i++)
		assert_true(tu_gone(pids[i]));
	confine_close(c);
}

/* Nothing left: the helper, the shepherds, the jobs and their groups. */
static void
host_killed_with_a_hundred_jobs_in_flight(void **state)
{
	(void)state;
	hu_kill_host("exec", scratch, HUNDRED, false);
}

/*
 * The host and its helper killed at once: the shepherds, seeing the
 * helper's end of their sockets close, kill their groups. Nothing left.
 */
static void
host_and_helper_killed_at_once_with_a_hundred_jobs(void **state)
{
	(void)state;
	hu_kill_host("exec", scratch, HUNDRED, true);
}

/*
 * Out of descriptors, a spawn is refused, EMFILE, wherever the descriptors
 * ran out (the helper's, or the job's as it was being confined: at so low
 * a limit the first job may meet it already, when the user has more
 * descriptors in flight than that, another suite's beside this one); the
 * helper goes on serving, its limit given back.
 */
static void
helper_out_of_descriptors_refuses_and_recovers(void **state)
{
	static struct hu_job j[64];
	struct rlimit rl = { 24, 24 }, was;
	struct confine *c;
	int i, n, rc = 0;

	(void)state;
	assert_int_equal(hu_open(&c, CONFINE_MODE_EXEC, NULL), 0);
	assert_int_equal(prlimit(confine_helper_pid(c), RLIMIT_NOFILE, NULL,
	    &was), 0);
	rl.rlim_max = was.rlim_max;  /* the soft limit: it can be given back */
	assert_int_equal(prlimit(confine_helper_pid(c), RLIMIT_NOFILE, &rl,
	    NULL), 0);
	for (n = 0; n < 64; n++) {
		hu_init(&j[n], scratch, "sleep", "60000", NULL);
		rc = hu_spawn(c, &j[n]);
		if (rc != 0)
			break;
	}
	if (rc != -EMFILE)
		print_message("refused otherwise: %s\n", confine_error_message());
	assert_int_equal(rc, -EMFILE);
	assert_true(n < 64);
	hu_free(&j[n]);
	for (i = 0; i < n; i++) {
		assert_int_equal(confine_cancel(j[i].job), 0);
		assert_int_equal(hu_wait(&j[i]), 0);
		assert_int_equal(j[i].r.outcome, CONFINE_CANCELLED);
		hu_free(&j[i]);
	}
	assert_int_equal(prlimit(confine_helper_pid(c), RLIMIT_NOFILE, &was,
	    NULL), 0);
	completes(c);
	confine_close(c);
}

/* A few hundred processes under a deadline: Cancelled, every one gone. */
static void
bounded_tree_under_a_deadline_is_cancelled_and_gone(void **state)
{
	struct confine *c;
	struct hu_job j;
	pid_t pids[400];
	size_t n = 0, i;

	(void)state;
	assert_int_equal(hu_open(&c, CONFINE_MODE_EXEC, NULL), 0);
	hu_init(&j, scratch, "tree", "300", NULL);
	/* Long enough for a tree to grow under a sanitizer on a slow host. */
	j.spec.deadline_ms = 4000;
	assert_int_equal(hu_run(c, &j), 0);
	assert_int_equal(j.r.outcome, CONFINE_CANCELLED);
	assert_int_equal(j.r.reason, CONFINE_REASON_DEADLINE);
	/* Each printed its pid, as it saw it: the one we see is its line's. */
	for (n = 0; n < j.out_lines && n < 400; n++)
		pids[n] = hu_pid(&j, n);
	/* The tree had time to grow: a good part printed before the kill. */
	assert_true(n >= 50);
	for (i = 0; i < n; i++)
		assert_true(tu_gone(pids[i]));
	hu_free(&j);
	confine_close(c);
}

static void
stopped_job_under_a_deadline_is_cancelled(void **state)
{
	struct confine *c;
	struct hu_job j;

	(void)state;
	assert_int_equal(hu_open(&c, CONFINE_MODE_EXEC, NULL), 0);
	hu_init(&j, scratch, "stop", NULL);
	j.spec.deadline_ms = 200;
	assert_int_equal(hu_run(c, &j), 0);
	assert_int_equal(j.r.outcome, CONFINE_CANCELLED);
	assert_int_equal(j.r.reason, CONFINE_REASON_DEADLINE);
	assert_int_equal(j.r.signal, SIGKILL);
	hu_free(&j);
	/*
	 * With a grace period: SIGTERM is held while stopped, SIGKILL is not
	 * (a SIGTERM before it stopped itself would end it: time to stop).
	 */
	hu_init(&j, scratch, "stop", NULL);
	j.spec.deadline_ms = TU_DEADLINE_AFTER_START_MS;
	j.spec.grace_ms = 200;
	assert_int_equal(hu_run(c, &j), 0);
	assert_int_equal(j.r.outcome, CONFINE_CANCELLED);
	assert_int_equal(j.r.reason, CONFINE_REASON_DEADLINE);
	assert_int_equal(j.r.signal, SIGKILL);
	hu_free(&j);
	confine_close(c);
}

/*
 * A client that sends spawn after spawn and never reads a reply must not
 * hold up anyone else: the helper stops reading it, not serving others.
 */
static void
client_that_never_reads_does_not_block_others(void **state)
{
	const char *argv[] = { "fixture", "exit", "0", NULL };
	struct wire_hello hi = { .version_min = WIRE_VERSION,
		.version_max = WIRE_VERSION };
	char *dir = tu_sockdir(), *sock = tu_join(dir, "h.sock");
	struct wire_buf b = { 0 };
	struct confine *good;
	struct confine_spec s;
	pid_t listener;
	uint32_t id;
	size_t off;
	ssize_t n;
	int fd, sent = 0;

	(void)state;
	listener = hu_listen(sock, NULL);
	fd = hu_raw_connect(sock);
	assert_int_equal(wire_put_hello(&b, &hi, 0), 0);
	hu_spec(&s, argv, scratch);
	for (id = 1; id <= 4000; id++)
		assert_int_equal(wire_put_spawn(&b, id, &s), 0);
	assert_int_equal(fd_nonblock(fd), 0);
	/* As much as the helper takes before it stops reading us. */
	for (off = 0; off < b.len; off += (size_t)n) {
		n = send(fd, b.p + off, b.len - off, MSG_NOSIGNAL);
		if (n <= 0) {
			struct pollfd pfd = { fd, POLLOUT, 0 };

			assert_true(n < 0 && errno == EAGAIN);
			if (poll(&pfd, 1, 3000) == 0)
				break;  /* it stopped reading: as it should */
			n = 0;
		}
		sent = 1;
	}
	assert_true(sent);
	assert_int_equal(hu_open(&good, CONFINE_MODE_CONNECT, sock), 0);
	completes(good);
	close(fd);
	/* Its jobs go with it; the helper is still there for the others. */
	completes(good);
	assert_int_equal(kill(listener, 0), 0);
	confine_close(good);
	hu_stop(listener);
	wire_buf_free(&b);
	tu_rmsock(dir, sock);
}

/*
 * Opens a helper in mode (for CONNECT, the one listening at sock) with a
 * bound on how long a spawn waits for it, runs one sleeping job and stops
 * the helper (SIGSTOP). The next spawn must come back -ETIMEDOUT, and the
 * job in flight settle Uncertain(helper lost). Returns the helper's pid;
 * *job_pid is the sleeping job's.
 */
static pid_t
stop_under_a_spawn(struct confine **c, enum confine_mode mode,
    const char *sock, pid_t *job_pid)
{
	struct confine_options o = { .mode = mode, .helper_path = hu_helper,
		.socket_path = sock, .spawn_timeout_ms = 500 };
	struct hu_job before, stuck;
	pid_t helper;

	assert_int_equal(confine_open(c, &o), 0);
	helper = confine_helper_pid(*c);
	hu_init(&before, scratch, "pid-sleep", "60000", NULL);
	assert_int_equal(hu_spawn(*c, &before), 0);
	*job_pid = hu_read_pid(before.outfd);
	assert_int_equal(kill(helper, SIGSTOP), 0);
	hu_init(&stuck, scratch, "exit", "0", NULL);
	assert_int_equal(hu_spawn(*c, &stuck), -ETIMEDOUT);
	assert_non_null(strstr(confine_error_message(), "did not answer"));
	hu_free(&stuck);
	assert_int_equal(confine_wait(before.job, 0, &before.r), 0);
	assert_int_equal(before.r.outcome, CONFINE_UNCERTAIN);
	assert_int_equal(before.r.reason, CONFINE_REASON_HELPER_LOST);
	hu_free(&before);
	return helper;
}

/*
 * A stopped helper that this library started: the spawn times out, the
 * helper is killed with its job, and the next spawn runs on a new one.
 */
static void
stopped_helper_times_a_spawn_out(void **state)
{
	struct confine *c;
	pid_t helper, job;

	(void)state;
	helper = stop_under_a_spawn(&c, CONFINE_MODE_EXEC, NULL, &job);
	assert_true(hu_gone(job));
	completes(c);
	assert_int_not_equal(confine_helper_pid(c), helper);
	assert_true(hu_gone(helper));
	confine_close(c);
}

/*
 * A shared helper, stopped: the spawn times out and the connection is
 * given up; the helper is not ours to kill, but once it runs again it
 * finds the client gone and ends its jobs, and serves others.
 */
static void
stopped_shared_helper_times_a_spawn_out(void **state)
{
	char *dir = tu_sockdir(), *sock = tu_join(dir, "h.sock");
	struct confine *c, *other;
	struct hu_job next;
	pid_t listener, job;

	(void)state;
	listener = hu_listen(sock, NULL);
	assert_int_equal(stop_under_a_spawn(&c, CONFINE_MODE_CONNECT, sock,
	    &job), listener);
	assert_int_equal(kill(listener, SIGCONT), 0);
	assert_true(hu_gone(job));
	hu_init(&next, scratch, "exit", "0", NULL);
	assert_int_equal(hu_spawn(c, &next), -ECONNRESET);
	hu_free(&next);
	confine_close(c);
	assert_int_equal(hu_open(&other, CONFINE_MODE_CONNECT, sock), 0);
	completes(other);
	confine_close(other);
	hu_stop(listener);
	tu_rmsock(dir, sock);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(hu_on_its_path),
		cmocka_unit_test(helper_killed_with_a_hundred_jobs_in_flight),
		cmocka_unit_test(host_killed_with_a_hundred_jobs_in_flight),
		cmocka_unit_test(host_and_helper_killed_at_once_with_a_hundred_jobs),
		cmocka_unit_test(helper_out_of_descriptors_refuses_and_recovers),
		cmocka_unit_test(bounded_tree_under_a_deadline_is_cancelled_and_gone),
		cmocka_unit_test(stopped_job_under_a_deadline_is_cancelled),
		cmocka_unit_test(client_that_never_reads_does_not_block_others),
		cmocka_unit_test(stopped_helper_times_a_spawn_out),
		cmocka_unit_test(stopped_shared_helper_times_a_spawn_out),
	};

	tu_path_setup();
	hu_setup();
	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests_name("faults", tests, setup, teardown);
}
