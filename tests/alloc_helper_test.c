/*
 * Every allocation of the helper made to fail, one at a time: the helper
 * is //tests:alloc_helper, confine-helper linked with tests/alloc_fail.c,
 * which fails the n-th allocation its environment names (in the helper
 * or whichever of its children reaches it first) and makes a file. For
 * n = 1, 2, ... it listens, and clients connect one after another, each
 * running two jobs that exit 3 (the second with its reads narrowed). The
 * helper either stops at start-up, saying why (exit status 1), or
 * serves: a client that the failure reaches gets 0 or -ENOMEM from each
 * call (or -ECONNRESET, once a reply the helper could not queue ended
 * the connection), or a job result that is not a success (the failure
 * may strike a shepherd or a job before its exec); every client after
 * the failure gets exactly its jobs' results. It ends at the first n
 * that no allocation of three clients reaches.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tests/helperutil.h"
#include "tests/testutil.h"

extern char **environ;

static char *helper, *scratch, *dir, *sock, *mark, *errlog;
static long at;  /* the allocation that fails, for the messages */

static bool
connectable(void)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0), rc;

	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", sock);
	rc = connect(fd, (struct sockaddr *)&sun, sizeof(sun));
	close(fd);
	return rc == 0;
}

/* True when the helper's stderr has what. */
static bool
said(const char *what)
{
	char *text = tu_slurp(errlog, NULL);
	bool yes = text != NULL && strstr(text, what) != NULL;

	free(text);
	return yes;
}

/* Starts the helper failing its n-th allocation; 0 if it stopped first. */
static pid_t
start(long n, int *status)
{
	const char *argv[] = { "confine-helper", "--listen", sock, NULL };
	char fail_at[48], marks[4200];
	char *env[256];
	posix_spawn_file_actions_t fa;
	struct timespec ms = { 0, 2000000 };
	size_t k = 0;
	pid_t pid;
	int i;

	snprintf(fail_at, sizeof(fail_at), "CONFINE_TEST_ALLOC_FAIL=%ld", n);
	snprintf(marks, sizeof(marks), "CONFINE_TEST_ALLOC_MARK=%s", mark);
	env[k++] = fail_at;
	env[k++] = marks;
	for (i = 0; environ[i] != NULL && k < 255; i++)
		env[k++] = environ[i];
	env[k] = NULL;
	unlink(mark);
	unlink(sock);
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 2, errlog,
	    O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_int_equal(posix_spawn(&pid, helper, &fa, NULL,
	    (char *const *)(uintptr_t)argv, env), 0);
	posix_spawn_file_actions_destroy(&fa);
	/* Started: it listens, and has said so (its set-up is done). */
	for (i = 0; i < 30000; i++) {
		if (waitpid(pid, status, WNOHANG) == pid)
			return 0;
		if (connectable() && said("started as"))
			return pid;
		nanosleep(&ms, NULL);
	}
	fail_msg("helper %ld neither listens nor stops", n);
	return 0;
}

/* A helper that stopped at start-up says that it ran out of memory. */
static void
said_why(long n)
{
	char *text = tu_slurp(errlog, NULL);

	if (text == NULL || strstr(text, "memory") == NULL)
		fail_msg("helper %ld stopped, saying: %s", n, text ? text : "");
	free(text);
}

static void job(struct confine *c, const char **argv, bool strict);

/*
 * One client, two jobs that exit 3: the fixture, and sh with its reads
 * narrowed to the system trees (which the helper resolves at the first
 * such job). Strict: only the exact results.
 */
static void
client(bool strict)
{
	static const char *sh[] = { "sh", "-c", "exit 3", NULL };
	struct confine *c;
	int rc, k;

	rc = hu_open(&c, CONFINE_MODE_CONNECT, sock);
	if (rc != 0) {
		if (strict || (rc != -ENOMEM && rc != -ECONNRESET))
			fail_msg("n=%ld strict=%d open: %d %s", at, strict, rc,
			    confine_error_message());
		return;
	}
	for (k = 0; k < 2; k++)
		job(c, k == 1 ? sh : NULL, strict);
	confine_close(c);
}

/* A job through c: the fixture, or argv (/bin/sh) with reads narrowed. */
static void
job(struct confine *c, const char **argv, bool strict)
{
	struct hu_job j;
	int rc;

	hu_init(&j, scratch, "exit", "3", NULL);
	if (argv != NULL) {
		j.spec.exe = "/bin/sh";
		j.spec.argv = argv;
		j.spec.flags |= CONFINE_READ_SYSTEM;
	}
	rc = hu_run(c, &j);
	if (rc == 0 && (j.r.outcome != CONFINE_FAILED ||
	    j.r.reason != CONFINE_REASON_EXIT_CODE || j.r.exit_code != 3)) {
		/* Not its result: only where the failure struck, never a success. */
		if (strict || j.r.outcome == CONFINE_COMPLETED)
			fail_msg("n=%ld strict=%d result %s %s %d error %d", at, strict,
			    confine_outcome_name(j.r.outcome),
			    confine_reason_name(j.r.reason), j.r.exit_code,
			    j.r.error);
	} else if (rc != 0 && (strict || (rc != -ENOMEM && rc != -ECONNRESET))) {
		/* ECONNRESET: a reply it could not queue ended the connection. */
		fail_msg("n=%ld strict=%d spawn: %d %s", at, strict, rc,
		    confine_error_message());
	}
	hu_free(&j);
}

static void
every_allocation_of_the_helper_fails_once(void **state)
{
	long n;
	int status, k, startups = 0, served = 0;
	pid_t pid;

	(void)state;
	for (n = 1; n < 5000; n++) {
		at = n;
		pid = start(n, &status);
		if (pid == 0) {
			/* It stopped, and said so: only for the failure. */
			assert_true(tu_exists(mark));
			assert_true(WIFEXITED(status) && WEXITSTATUS(status) != 0);
			said_why(n);
			startups++;
			continue;
		}
		for (k = 0; k < 3 && !tu_exists(mark); k++)
			client(false);
		if (!tu_exists(mark)) {
			hu_stop(pid);
			break;
		}
		/* After the failure, it serves as if nothing had happened. */
		client(true);
		client(true);
		assert_int_equal(kill(pid, 0), 0);
		hu_stop(pid);
		served++;
	}
	assert_true(n < 5000);
	assert_true(startups > 0 && served > 0);
	printf("%ld allocations: %d stop the start, %d while serving\n", n - 1,
	    startups, served);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(every_allocation_of_the_helper_fails_once),
	};
	int rc;

	hu_setup();
	signal(SIGPIPE, SIG_IGN);
	helper = tu_runfile("tests/alloc_helper");
	scratch = tu_mkdtemp("scratch");
	dir = tu_sockdir();
	sock = tu_join(dir, "h.sock");
	mark = tu_join(scratch, "../alloc-marks");
	errlog = tu_join(scratch, "../alloc-stderr");
	rc = cmocka_run_group_tests_name("alloc_helper", tests, NULL, NULL);
	tu_rmsock(dir, sock);
	free(helper);
	free(scratch);
	free(mark);
	free(errlog);
	return rc;
}
