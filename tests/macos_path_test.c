/*
 * The settlement a Mac has, run here: no subreaper, no cgroup, only
 * kill(-pgid, 0) (job_env.group_proof_only, what the helper always does
 * off Linux). The seed's regressions under it, through the contract's
 * cases (Landlock confines them here, so the denials are Linux's; the
 * proof each must report is pgid): a descendant left in the group reads
 * Uncertain(group still present) and is killed, a deadline Cancelled, an
 * exit 3 Failed, a healthy job Completed. Beside them: selection stays
 * sticky when a failed job leaves something; the Seatbelt launcher absent
 * fails closed, nothing written; and what this path does not see, a
 * descendant that left the group, asserted as the nonclaim it is.
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
#include <sys/wait.h>
#include <unistd.h>

#include "tests/contract.h"
#include "tests/jobrun.h"
#include "tests/testutil.h"

#define LL CONFINE_BACKEND_LANDLOCK

/* Failed first, a leftover after: Failed it stays, and the leftover dies. */
static void
a_failed_job_that_leaves_one_stays_failed(void **state)
{
	struct jr_dirs *d = *state;
	struct jr j;
	pid_t pid;

	jr_init(&j, LL, d->scratch, "/bin/sh", NULL);
	j.spec.exe = "/bin/sh";
	j.argv[0] = "sh";
	j.argv[1] = "-c";
	j.argv[2] = "sleep 30 & echo $!; exit 3";
	j.argv[3] = NULL;
	jr_run(&j);
	assert_outcome(&j, CONFINE_FAILED, CONFINE_REASON_EXIT_CODE);
	assert_int_equal(j.r.exit_code, 3);
	pid = jr_pid(&j, 0);
	assert_true(pid > 1);
	assert_true(tu_gone(pid));
	assert_int_equal(j.r.proof, CONFINE_PROOF_PGID);
	jr_free(&j);
}

static void
an_absent_launcher_fails_closed(void **state)
{
	struct jr_dirs *d = *state;
	char *missing = tu_join(d->outside, "sandbox-exec"), *in = tu_join(d->scratch, "f");
	struct jr j;

	jr_init(&j, CONFINE_BACKEND_SEATBELT, d->scratch, "write", in, NULL);
	j.spec.launcher = missing;
	jr_run(&j);
	assert_int_equal(j.rc, -ENOTSUP);
	assert_int_equal(tu_count_entries(d->scratch), 0);
	jr_free(&j);
	free(missing);
	free(in);
}

/*
 * Not seen on this path: a descendant that left the group with setsid()
 * outlives a job that reads Completed. (On Linux proper the subreaper
 * finds it: descendants_test.) Killed here by the test.
 */
static void
a_descendant_that_left_the_group_is_not_seen(void **state)
{
	struct jr_dirs *d = *state;
	long pid, pgid, sid;
	int out[2];
	struct jr j;
	FILE *f;

	/* Its stdout ours: the escaped one holds it, so no read to EOF. */
	assert_int_equal(pipe(out), 0);
	jr_init(&j, LL, d->scratch, "setsid", "30000", NULL);
	j.spec.stdout_fd = out[1];
	jr_run(&j);
	close(out[1]);
	assert_outcome(&j, CONFINE_COMPLETED, CONFINE_REASON_NONE);
	assert_int_equal(j.r.proof, CONFINE_PROOF_PGID);
	f = fdopen(out[0], "r");
	assert_non_null(f);
	assert_int_equal(fscanf(f, "%ld %ld %ld", &pid, &pgid, &sid), 3);
	assert_int_equal(kill((pid_t)pid, 0), 0);
	assert_int_equal(kill((pid_t)pid, SIGKILL), 0);
	assert_true(tu_gone((pid_t)pid));
	fclose(f);
	jr_free(&j);
}

#define T(name) cmocka_unit_test_setup_teardown(name, jr_dirs_setup, jr_dirs_teardown)

int
main(void)
{
	struct contract_errnos landlock = { EROFS, EXDEV, 0 };
	const struct CMUnitTest tests[] = {
		T(a_failed_job_that_leaves_one_stays_failed),
		T(an_absent_launcher_fails_closed),
		T(a_descendant_that_left_the_group_is_not_seen),
	};

	jr_setup();
	jr_env.group_proof_only = true;
	landlock.net = JR_NET_ERRNO;
	return contract_run(CONFINE_BACKEND_LANDLOCK, &landlock,
	    CONFINE_PROOF_PGID) +
	    cmocka_run_group_tests_name("macos path", tests, NULL, NULL);
}
