/*
 * The seccomp program helpers load is compiled when they are built
 * (helper/seccomp_gen): it must be what this machine's libseccomp makes of
 * helper/seccomp_rules.c now, and it must be the filter that refuses.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "helper/seccomp.h"
#include "helper/seccomp_rules.h"

static void
the_prebuilt_program_is_what_libseccomp_compiles(void **state)
{
	struct sock_filter *insns;
	struct seccomp_prog prog;
	unsigned short count;

	(void)state;
	assert_int_equal(seccomp_compile(&insns, &count), 0);
	seccomp_program(&prog);
	assert_true(count > 0);
	assert_int_equal(prog.count, count);
	assert_memory_equal(prog.insns, insns, count * sizeof(*insns));
	free(insns);
}

/* socket(AF_INET) in a child: its errno, or 0. */
static int
socket_errno(bool filtered)
{
	struct seccomp_prog prog;
	int status, err;
	pid_t pid;

	seccomp_program(&prog);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		if (filtered && (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
		    seccomp_apply(&prog) != 0))
			_exit(255);
		err = socket(AF_INET, SOCK_STREAM, 0) < 0 ? errno : 0;
		_exit(err);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	return WEXITSTATUS(status);
}

static void
the_prebuilt_program_refuses(void **state)
{
	(void)state;
	assert_int_equal(socket_errno(false), 0);
	assert_int_equal(socket_errno(true), EPERM);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(the_prebuilt_program_is_what_libseccomp_compiles),
		cmocka_unit_test(the_prebuilt_program_refuses),
	};

	return cmocka_run_group_tests_name("seccomp", tests, NULL, NULL);
}
