/* The four outcomes and the sticky selection rule. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <signal.h>
#include <sys/wait.h>

#include "helper/engine/settle.h"

#define SEL(s, o, r, d) settle_select((s), (o), (r), (d), CONFINE_STEP_NONE)

static int
exited(int code)
{
	return (code & 0xff) << 8;
}

static void
nothing_selected_at_first(void **state)
{
	struct settle s;

	(void)state;
	settle_init(&s);
	assert_false(settle_selected(&s));
	assert_false(settle_terminal(&s));
}

/* The contract's first half: cleanup never replaces a selected status. */
static void
first_terminal_status_survives_later_cleanup(void **state)
{
	static const enum confine_outcome later[] = {
		CONFINE_COMPLETED, CONFINE_FAILED, CONFINE_CANCELLED,
		CONFINE_UNCERTAIN,
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(later) / sizeof(later[0]); i++) {
		struct settle s;

		settle_init(&s);
		assert_true(SEL(&s, CONFINE_CANCELLED, CONFINE_REASON_DEADLINE, 0));
		assert_true(settle_terminal(&s));
		assert_false(SEL(&s, later[i], CONFINE_REASON_GROUP_STILL_PRESENT, 7));
		assert_int_equal(s.outcome, CONFINE_CANCELLED);
		assert_int_equal(s.reason, CONFINE_REASON_DEADLINE);
		assert_int_equal(s.detail, 0);
	}
}

/* The second half: a pending Completed is overridden by the proof. */
static void
pending_completed_is_overridden_by_a_later_terminal_status(void **state)
{
	struct settle s;

	(void)state;
	settle_init(&s);
	assert_true(settle_select_status(&s, exited(0)));
	assert_int_equal(s.outcome, CONFINE_COMPLETED);
	assert_false(settle_terminal(&s));
	assert_true(SEL(&s, CONFINE_UNCERTAIN,
	    CONFINE_REASON_GROUP_STILL_PRESENT, 0));
	assert_int_equal(s.outcome, CONFINE_UNCERTAIN);
	assert_int_equal(s.reason, CONFINE_REASON_GROUP_STILL_PRESENT);
	/* And from then on it is terminal like any other. */
	assert_false(SEL(&s, CONFINE_FAILED, CONFINE_REASON_EXIT_CODE, 1));
	assert_int_equal(s.outcome, CONFINE_UNCERTAIN);
}

static void
completed_again_is_a_no_op(void **state)
{
	struct settle s;

	(void)state;
	settle_init(&s);
	assert_true(SEL(&s, CONFINE_COMPLETED, CONFINE_REASON_NONE, 0));
	assert_false(SEL(&s, CONFINE_COMPLETED, CONFINE_REASON_NONE, 0));
	assert_int_equal(s.outcome, CONFINE_COMPLETED);
}

static void
exit_status_selects_failed_exit_code(void **state)
{
	struct settle s;

	(void)state;
	settle_init(&s);
	assert_true(settle_select_status(&s, exited(3)));
	assert_int_equal(s.outcome, CONFINE_FAILED);
	assert_int_equal(s.reason, CONFINE_REASON_EXIT_CODE);
	assert_int_equal(s.detail, 3);
}

static void
signal_status_selects_failed_signal(void **state)
{
	struct settle s;

	(void)state;
	settle_init(&s);
	assert_true(settle_select_status(&s, SIGSEGV));
	assert_int_equal(s.outcome, CONFINE_FAILED);
	assert_int_equal(s.reason, CONFINE_REASON_SIGNAL);
	assert_int_equal(s.detail, SIGSEGV);
}

/* A kill at the deadline shows as SIGKILL: it stays Cancelled. */
static void
deadline_kill_stays_cancelled(void **state)
{
	struct settle s;

	(void)state;
	settle_init(&s);
	assert_true(SEL(&s, CONFINE_CANCELLED, CONFINE_REASON_DEADLINE, 0));
	assert_false(settle_select_status(&s, SIGKILL));
	assert_int_equal(s.outcome, CONFINE_CANCELLED);
}

static void
exec_failure_keeps_its_step(void **state)
{
	struct settle s;

	(void)state;
	settle_init(&s);
	assert_true(settle_select(&s, CONFINE_FAILED, CONFINE_REASON_EXEC, 2,
	    CONFINE_STEP_CWD));
	assert_false(settle_select_status(&s, exited(127)));
	assert_int_equal(s.reason, CONFINE_REASON_EXEC);
	assert_int_equal(s.step, CONFINE_STEP_CWD);
	assert_int_equal(s.detail, 2);
}

static void
stopped_status_selects_nothing(void **state)
{
	struct settle s;

	(void)state;
	settle_init(&s);
	assert_false(settle_select_status(&s, (SIGSTOP << 8) | 0x7f));
	assert_false(settle_selected(&s));
}

static void
names_are_stable(void **state)
{
	(void)state;
	assert_string_equal(confine_outcome_name(CONFINE_COMPLETED), "completed");
	assert_string_equal(confine_outcome_name(CONFINE_UNCERTAIN), "uncertain");
	assert_string_equal(confine_outcome_name(0), "unknown");
	assert_string_equal(confine_reason_name(CONFINE_REASON_GROUP_STILL_PRESENT),
	    "group_still_present");
	assert_string_equal(confine_reason_name(CONFINE_REASON_HELPER_LOST),
	    "helper_lost");
	assert_string_equal(confine_reason_name(99), "unknown");
	assert_string_equal(confine_backend_name(CONFINE_BACKEND_SEATBELT),
	    "seatbelt");
	assert_string_equal(confine_step_name(CONFINE_STEP_CWD), "cwd");
	assert_string_equal(confine_proof_name(CONFINE_PROOF_PGID), "pgid");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(nothing_selected_at_first),
		cmocka_unit_test(first_terminal_status_survives_later_cleanup),
		cmocka_unit_test(pending_completed_is_overridden_by_a_later_terminal_status),
		cmocka_unit_test(completed_again_is_a_no_op),
		cmocka_unit_test(exit_status_selects_failed_exit_code),
		cmocka_unit_test(signal_status_selects_failed_signal),
		cmocka_unit_test(deadline_kill_stays_cancelled),
		cmocka_unit_test(exec_failure_keeps_its_step),
		cmocka_unit_test(stopped_status_selects_nothing),
		cmocka_unit_test(names_are_stable),
	};

	return cmocka_run_group_tests_name("settle", tests, NULL, NULL);
}
