/*
 * A helper run as an unprivileged user (root is exempt from RLIMIT_NPROC)
 * with a low process limit: when its fork fails the spawn is refused with
 * EAGAIN, and once jobs end it serves again. Unsandboxed: Bazel's sandbox
 * maps only root. Everything the helper runs is copied to /tmp, where the
 * unprivileged user can reach it.
 *
 * RLIMIT_NPROC counts every process of the user, machine-wide: the user is
 * a uid no process has (nobody may well have some), checked in /proc.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/helperutil.h"
#include "tests/testutil.h"

#define MAX 16

static void
fork_failing_in_the_helper_refuses_the_spawn_and_recovers(void **state)
{
	char *fixture, *plain = tu_runfile("tests/plain_fixture");
	static struct hu_job j[MAX];
	struct hu_job next;
	struct hu_stage st;
	struct confine *c;
	int i, n, rc = 0;
	pid_t pid;

	(void)state;
	hu_stage_as(&st, tu_unused_uid());
	fixture = tu_join(st.dir, "fixture");
	tu_copy_exec(plain, fixture);
	/* The helper, its shepherds and jobs: nine processes at most. */
	pid = hu_listen_as(st.user, st.helper, st.sock, st.dir, 9, NULL);
	/*
	 * Connected as the user: a helper that is not root runs only its own
	 * uid's jobs.
	 */
	assert_int_equal(hu_open_as(&c, st.user, st.sock), 0);
	for (n = 0; n < MAX; n++) {
		hu_init(&j[n], st.scratch, "sleep", "60000", NULL);
		j[n].spec.exe = fixture;
		j[n].spec.stdout_fd = -1;
		rc = confine_spawn(c, &j[n].spec, &j[n].job);
		if (rc != 0)
			break;
	}
	assert_int_equal(rc, -EAGAIN);
	assert_true(n >= 1 && n < MAX);
	for (i = 0; i < n; i++) {
		assert_int_equal(confine_cancel(j[i].job), 0);
		assert_int_equal(confine_wait(j[i].job, -1, &j[i].r), 0);
		assert_int_equal(j[i].r.outcome, CONFINE_CANCELLED);
		confine_job_free(j[i].job);
	}
	/* Room again: the helper kept serving. */
	hu_init(&next, st.scratch, "exit", "0", NULL);
	next.spec.exe = fixture;
	assert_int_equal(hu_run(c, &next), 0);
	assert_int_equal(next.r.outcome, CONFINE_COMPLETED);
	hu_free(&next);
	confine_close(c);
	unlink(fixture);
	hu_unstage(&st, pid);
	free(fixture);
	free(plain);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(fork_failing_in_the_helper_refuses_the_spawn_and_recovers),
	};

	hu_setup();
	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests_name("unprivileged", tests, NULL, NULL);
}
