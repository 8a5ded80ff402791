/*
 * Settlements and refusals as the Runner's answers (bb/reply.c): only a
 * job that ran to its own end is OK; Cancelled and Uncertain never pass
 * for an exit code.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <signal.h>
#include <string.h>

#include "bb/reply.h"

static struct confine_result
result(enum confine_outcome o, enum confine_reason why)
{
	struct confine_result r;

	memset(&r, 0, sizeof(r));
	r.outcome = o;
	r.reason = why;
	r.exit_code = -1;
	r.proof = CONFINE_PROOF_CGROUP;
	r.user_us = 1500001;
	r.sys_us = 250;
	r.max_rss_kib = 2048;
	return r;
}

static void
says(const struct bbreply *reply, enum bbreply_code code, const char *has)
{
	assert_string_equal(bbreply_code_name(reply->code),
	    bbreply_code_name(code));
	if (strstr(reply->message, has) == NULL)
		fail_msg("\"%s\" does not say \"%s\"", reply->message, has);
}

static void
completed_and_failed_by_exit_code_are_ok(void **state)
{
	struct confine_result r = result(CONFINE_COMPLETED, CONFINE_REASON_NONE);
	struct bbreply reply;

	(void)state;
	r.exit_code = 0;
	bbreply_settled(&reply, &r, 0, -1);
	assert_int_equal(reply.code, BBREPLY_OK);
	assert_int_equal(reply.exit_code, 0);
	assert_int_equal(reply.user_us, 1500001);
	assert_int_equal(reply.sys_us, 250);
	assert_int_equal(reply.max_rss_bytes, 2048 * 1024);
	assert_string_equal(reply.signal, "");

	r = result(CONFINE_FAILED, CONFINE_REASON_EXIT_CODE);
	r.exit_code = 3;
	bbreply_settled(&reply, &r, 0, -1);
	assert_int_equal(reply.code, BBREPLY_OK);
	assert_int_equal(reply.exit_code, 3);
}

static void
a_signal_death_is_minus_one_and_the_signals_name(void **state)
{
	struct confine_result r = result(CONFINE_FAILED, CONFINE_REASON_SIGNAL);
	struct bbreply reply;

	(void)state;
	r.signal = SIGSEGV;
	bbreply_settled(&reply, &r, 0, -1);
	assert_int_equal(reply.code, BBREPLY_OK);
	assert_int_equal(reply.exit_code, -1);
	assert_string_equal(reply.signal, "SEGV");
	r.signal = SIGKILL;
	bbreply_settled(&reply, &r, 0, -1);
	assert_string_equal(reply.signal, "KILL");
	r.signal = SIGRTMIN + 1;
	bbreply_settled(&reply, &r, 0, -1);
	assert_int_equal(reply.exit_code, -1);
	assert_true(reply.signal[0] != '\0');
}

static void
cancelled_is_never_ok(void **state)
{
	struct confine_result r = result(CONFINE_CANCELLED, CONFINE_REASON_DEADLINE);
	struct bbreply reply;

	(void)state;
	r.signal = SIGKILL;
	bbreply_settled(&reply, &r, 9000, 10000);
	says(&reply, BBREPLY_DEADLINE_EXCEEDED, "ran out of time (9000 ms, the call's 10000 ms");
	says(&reply, BBREPLY_DEADLINE_EXCEEDED, "nothing of it is left");
	assert_int_equal(reply.exit_code, 0);

	r = result(CONFINE_CANCELLED, CONFINE_REASON_CANCELLED);
	bbreply_settled(&reply, &r, 0, -1);
	says(&reply, BBREPLY_CANCELLED, "the call was cancelled");

	/* Killed, but not shown gone: said so. */
	r.proof = CONFINE_PROOF_NONE;
	bbreply_settled(&reply, &r, 0, -1);
	says(&reply, BBREPLY_CANCELLED, "could not be shown gone");
}

static void
uncertain_is_never_ok(void **state)
{
	struct confine_result r = result(CONFINE_UNCERTAIN,
	    CONFINE_REASON_GROUP_STILL_PRESENT);
	struct bbreply reply;

	(void)state;
	r.exit_code = 0;    /* it exited 0, and left something running */
	bbreply_settled(&reply, &r, 0, -1);
	says(&reply, BBREPLY_INTERNAL, "uncertain: a process of the action outlived it (it exited 0)");
	assert_int_equal(reply.exit_code, 0);

	r = result(CONFINE_UNCERTAIN, CONFINE_REASON_KILL_AMBIGUOUS);
	r.proof = CONFINE_PROOF_NONE;
	bbreply_settled(&reply, &r, 0, -1);
	says(&reply, BBREPLY_INTERNAL, "a kill of the action failed (its exit unknown)");
	says(&reply, BBREPLY_INTERNAL, "not to be trusted");

	r = result(CONFINE_UNCERTAIN, CONFINE_REASON_WAIT_FAILED);
	bbreply_settled(&reply, &r, 0, -1);
	says(&reply, BBREPLY_INTERNAL, "could not be observed");

	r = result(CONFINE_UNCERTAIN, CONFINE_REASON_HELPER_LOST);
	bbreply_settled(&reply, &r, 0, -1);
	says(&reply, BBREPLY_UNAVAILABLE, "helper was lost");

	r = result((enum confine_outcome)77, CONFINE_REASON_NONE);
	bbreply_settled(&reply, &r, 0, -1);
	says(&reply, BBREPLY_INTERNAL, "unknown settlement 77");
}

static void
a_program_that_cannot_start_is_bb_runners_invalid_argument(void **state)
{
	static const int request_faults[] = {
		ENOENT, EACCES, EPERM, EISDIR, ENOTDIR, ENOEXEC,
	};
	struct confine_result r = result(CONFINE_FAILED, CONFINE_REASON_EXEC);
	struct bbreply reply;
	size_t i;

	(void)state;
	r.step = CONFINE_STEP_EXEC;
	for (i = 0; i < sizeof(request_faults) / sizeof(request_faults[0]); i++) {
		r.error = request_faults[i];
		bbreply_settled(&reply, &r, 0, -1);
		says(&reply, BBREPLY_INVALID_ARGUMENT, "Failed to start process: exec: ");
		says(&reply, BBREPLY_INVALID_ARGUMENT, strerror(request_faults[i]));
	}
	r.error = ENOMEM;
	r.step = CONFINE_STEP_CWD;
	bbreply_settled(&reply, &r, 0, -1);
	says(&reply, BBREPLY_INTERNAL, "Failed to start process: cwd: ");
}

static void
refusals_nothing_ran(void **state)
{
	static const struct {
		int err;
		enum bbreply_code code;
	} cases[] = {
		{ -EINVAL, BBREPLY_INVALID_ARGUMENT },
		{ -ENOENT, BBREPLY_INVALID_ARGUMENT },
		{ -ENOTDIR, BBREPLY_INVALID_ARGUMENT },
		{ -EACCES, BBREPLY_INVALID_ARGUMENT },
		{ -EMSGSIZE, BBREPLY_INVALID_ARGUMENT },
		{ -ENOTSUP, BBREPLY_FAILED_PRECONDITION },
		{ -EAGAIN, BBREPLY_RESOURCE_EXHAUSTED },
		{ -ECONNRESET, BBREPLY_UNAVAILABLE },
		{ -ETIMEDOUT, BBREPLY_UNAVAILABLE },
		{ -ESHUTDOWN, BBREPLY_UNAVAILABLE },
		{ -EIO, BBREPLY_INTERNAL },
	};
	struct bbreply reply;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		bbreply_refused(&reply, cases[i].err, NULL);
		says(&reply, cases[i].code, "refused, nothing ran: ");
		says(&reply, cases[i].code, strerror(-cases[i].err));
	}
	bbreply_refused(&reply, -ENOTSUP, "Landlock ABI too old");
	says(&reply, BBREPLY_FAILED_PRECONDITION, "nothing ran: Landlock ABI too old");
}

static void
the_jobs_deadline_is_the_calls_less_a_margin(void **state)
{
	(void)state;
	assert_int_equal(bbreply_job_deadline(-1, 1000), 0);     /* none */
	assert_int_equal(bbreply_job_deadline(60000, 1000), 59000);
	assert_int_equal(bbreply_job_deadline(60000, 0), 60000);
	/* At most half the time left goes to the margin. */
	assert_int_equal(bbreply_job_deadline(1000, 1000), 500);
	assert_int_equal(bbreply_job_deadline(3, 1000), 2);
	/* No time left: nothing may start (0 would mean no deadline). */
	assert_int_equal(bbreply_job_deadline(1, 1000), 1);
	assert_int_equal(bbreply_job_deadline(0, 1000), -1);
	assert_int_equal(bbreply_job_deadline(0, 0), -1);
}

static void
code_names(void **state)
{
	(void)state;
	assert_string_equal(bbreply_code_name(BBREPLY_OK), "OK");
	assert_string_equal(bbreply_code_name(BBREPLY_DEADLINE_EXCEEDED),
	    "DEADLINE_EXCEEDED");
	assert_string_equal(bbreply_code_name((enum bbreply_code)99), "UNKNOWN");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(completed_and_failed_by_exit_code_are_ok),
		cmocka_unit_test(a_signal_death_is_minus_one_and_the_signals_name),
		cmocka_unit_test(cancelled_is_never_ok),
		cmocka_unit_test(uncertain_is_never_ok),
		cmocka_unit_test(a_program_that_cannot_start_is_bb_runners_invalid_argument),
		cmocka_unit_test(refusals_nothing_ran),
		cmocka_unit_test(the_jobs_deadline_is_the_calls_less_a_margin),
		cmocka_unit_test(code_names),
	};

	return cmocka_run_group_tests_name("bb_reply", tests, NULL, NULL);
}
