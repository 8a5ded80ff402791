/*
 * Descendants that leave the job's process group (setsid, setpgid, the
 * double fork of a daemon) are invisible to kill(-pgid, 0). On Linux the
 * shepherd is their subreaper, or without one (direct) the job's cgroup
 * holds them and we are: they are found, the job is never Completed, and
 * they are killed. Each case also shows the escape itself: the leftover's
 * group is not the job's, so the pgid proof alone would pass. And the
 * converse, where only the pgid check sees what is left.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "tests/jobrun.h"
#include "tests/testutil.h"

#define LL CONFINE_BACKEND_LANDLOCK

/*
 * The leftover of the fixture's "pid pgid sid" line: its pid as we see
 * it, the writer's. Out of the job's group (the ids it printed, as it sees
 * them, say so).
 */
static pid_t
leftover(const struct jr *j)
{
	long pid = 0, pgid = 0, sid = 0;

	assert_non_null(j->out);
	assert_int_equal(sscanf(j->out, "%ld %ld %ld", &pid, &pgid, &sid), 3);
	assert_true(pid > 1);
	assert_int_not_equal(pgid, jr_seen_pgid(j, &jr_env));
	return jr_pid(j, 0);
}

static void
escaped(const char *how, void **state)
{
	struct jr_dirs *d = *state;
	struct jr j;
	pid_t pid;

	jr_init(&j, LL, d->scratch, how, "30000", NULL);
	jr_run(&j);
	assert_outcome(&j, CONFINE_UNCERTAIN, CONFINE_REASON_GROUP_STILL_PRESENT);
	assert_int_equal(j.r.exit_code, 0);
	/* Out of the group: kill(-pgid, 0) could not have seen it. */
	pid = leftover(&j);
	assert_true(tu_reaped(pid));
	/* Swept: afterwards nothing is left, by the subreaper's account. */
	assert_int_equal(j.r.proof, jr_proof());
	jr_free(&j);
}

static void
setsid_sleeper_is_uncertain_and_killed(void **state)
{
	escaped("setsid", state);
}

static void
setpgid_sleeper_is_uncertain_and_killed(void **state)
{
	escaped("setpgid", state);
}

static void
double_forked_daemon_is_uncertain_and_killed(void **state)
{
	escaped("daemon", state);
}

/* The deadline kills the group; the escaped one is swept once orphaned. */
static void
escaped_descendant_under_a_deadline_is_cancelled_and_killed(void **state)
{
	struct jr_dirs *d = *state;
	struct jr j;
	pid_t pid;

	jr_init(&j, LL, d->scratch, "setsid", "30000", "then-sleep", NULL);
	j.spec.deadline_ms = TU_DEADLINE_AFTER_START_MS;
	jr_run(&j);
	assert_outcome(&j, CONFINE_CANCELLED, CONFINE_REASON_DEADLINE);
	pid = leftover(&j);
	assert_true(tu_reaped(pid));
	jr_free(&j);
}

/* A failure selected first stays: the leftover is still killed. */
static void
failed_job_with_a_leftover_stays_failed(void **state)
{
	struct jr_dirs *d = *state;
	struct jr j;

	jr_init(&j, LL, d->scratch, "setsid", "30000", NULL);
	/* Unconfined sh runs the fixture and then fails on its own. */
	j.argv[0] = "fixture";
	j.spec.exe = "/bin/sh";
	j.argv[0] = "sh";
	j.argv[1] = "-c";
	j.argv[2] = "\"$0\" setsid 30000; exit 7";
	j.argv[3] = jr_fixture;
	j.argv[4] = NULL;
	jr_run(&j);
	assert_outcome(&j, CONFINE_FAILED, CONFINE_REASON_EXIT_CODE);
	assert_int_equal(j.r.exit_code, 7);
	assert_true(tu_reaped(jr_pid(&j, 0)));
	jr_free(&j);
}

/* Joins the job's group, or exits with why not: 3 for EPERM. */
static void
join_group(long pid, long pgid)
{
	(void)pid;
	if (setpgid(0, (pid_t)pgid) == 0)
		_exit(5);
	_exit(errno == EPERM ? 3 : 6);
}

/*
 * The other way round: a process that is not the job's descendant tries
 * to join its group, which the subreaper could not see. It may not: the
 * job leads a session of its own, and a group takes only its session's
 * processes, the job's descendants. The job completes, proven.
 */
static void
no_process_outside_can_join_the_group(void **state)
{
	struct jr_dirs *d = *state;
	struct jr j;

	jr_init(&j, LL, d->scratch, "ids", "wait", NULL);
	assert_int_equal(jr_run_intruder(&j, join_group), 103);
	assert_outcome(&j, CONFINE_COMPLETED, CONFINE_REASON_NONE);
	assert_int_equal(j.r.proof, jr_proof());
	jr_free(&j);
}

#define T(name) cmocka_unit_test_setup_teardown(name, jr_dirs_setup, jr_dirs_teardown)

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(jr_on_its_path),
		T(setsid_sleeper_is_uncertain_and_killed),
		T(setpgid_sleeper_is_uncertain_and_killed),
		T(double_forked_daemon_is_uncertain_and_killed),
		T(escaped_descendant_under_a_deadline_is_cancelled_and_killed),
		T(failed_job_with_a_leftover_stays_failed),
		T(no_process_outside_can_join_the_group),
	};

	tu_path_setup();
	jr_setup();
	return cmocka_run_group_tests_name("descendants", tests, NULL, NULL);
}
