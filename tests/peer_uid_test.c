/*
 * Connect mode serves only the uids it is told to. Needs a real second
 * uid, which Bazel's sandbox (a user namespace mapping only root) cannot
 * give: this target runs unsandboxed (tags = ["no-sandbox"]).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/helperutil.h"
#include "tests/testutil.h"

#define NOBODY 65534

static int
open_as(uid_t uid, const char *sock)
{
	struct confine *c;
	pid_t pid = fork();
	int status;

	assert_true(pid >= 0);
	if (pid == 0) {
		if (setgid(uid) != 0 || setuid(uid) != 0) {
			fprintf(stderr, "open_as: cannot become uid %ld: %s\n",
			    (long)uid, strerror(errno));
			_exit(100);
		}
		switch (hu_open(&c, CONFINE_MODE_CONNECT, sock)) {
		case 0:
			confine_close(c);
			_exit(0);
		case -EACCES:
			_exit(13);
		default:
			_exit(101);
		}
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	return WEXITSTATUS(status);
}

/* The test must be able to tell "refused" from "could not try". */
static void
this_process_can_become_another_uid(void **state)
{
	pid_t pid = fork();
	int status;

	(void)state;
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(setgid(NOBODY) == 0 && setuid(NOBODY) == 0 ? 0 : 1);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

static void
another_uid_is_refused_unless_listed(void **state)
{
	char *dir = tu_sockdir(), *sock = tu_join(dir, "h.sock");
	const char *const world[] = { "--mode", "0666", NULL };
	const char *const allow[] = { "--mode", "0666", "--allow-uid", "65534",
		NULL };
	pid_t h;

	(void)state;
	assert_int_equal(chmod(dir, 0755), 0);
	h = hu_listen(sock, world);
	assert_int_equal(open_as(NOBODY, sock), 13);
	assert_int_equal(open_as(0, sock), 0);
	hu_stop(h);
	h = hu_listen(sock, allow);
	assert_int_equal(open_as(NOBODY, sock), 0);
	hu_stop(h);
	tu_rmsock(dir, sock);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(this_process_can_become_another_uid),
		cmocka_unit_test(another_uid_is_refused_unless_listed),
	};

	hu_setup();
	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests_name("peer uid", tests, NULL, NULL);
}
