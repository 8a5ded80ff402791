/*
 * Every allocation of the client made to fail, one at a time. The test is
 * linked with tests/alloc_fail.c and --wrap for malloc, calloc, realloc,
 * strdup and asprintf, so that each call the library's own code makes can
 * fail; armed with n, the n-th fails with ENOMEM. For n = 1, 2, ... a
 * round of calls (open, a job that exits 3, a job cancelled, close) runs
 * until a round reaches no n-th allocation. Each call must return 0 or
 * -ENOMEM, and a job's result be its own (Failed, exit 3; Cancelled) or,
 * when the failure ended the connection, Uncertain(helper lost); after a
 * failed call the same handle runs a job correctly. Under ASan, a path
 * that leaks on failure fails the test at exit.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "confine/confine.h"
#include "tests/alloc_fail.h"
#include "tests/testutil.h"

static char *helper, *scratch;
static const char *tmpdir;

/* 0 is fine; else it must be -ENOMEM, from the allocation we failed. */
static void
fine_or_enomem(int rc, const char *what)
{
	if (rc == 0)
		return;
	if (rc != -ENOMEM || alloc_fail_hits() == 0)
		fail_msg("%s: %d (%s) with %d allocations failed", what, rc,
		    confine_error_message(), alloc_fail_hits());
}

/* A job: exit 3, or sleep to be cancelled. Returns the spawn's rc. */
static int
job(struct confine *c, bool cancel, struct confine_result *r)
{
	static const char *exit3[] = { "sh", "-c", "exit 3", NULL };
	static const char *sleeps[] = { "sh", "-c", "sleep 60", NULL };
	struct confine_spec spec;
	struct confine_job *j;
	int rc;

	confine_spec_init(&spec);
	spec.exe = "/bin/sh";
	spec.argv = cancel ? sleeps : exit3;
	spec.scratch = scratch;
	if ((rc = confine_spawn(c, &spec, &j)) != 0)
		return rc;
	if (cancel)
		fine_or_enomem(confine_cancel(j) == -EALREADY ? 0 :
		    confine_cancel(j), "confine_cancel");
	assert_int_equal(confine_wait(j, -1, r), 0);
	if (r->outcome == CONFINE_UNCERTAIN) {
		/* The connection ended for want of memory: said so, once. */
		assert_int_equal(r->reason, CONFINE_REASON_HELPER_LOST);
		assert_true(alloc_fail_hits() > 0);
	} else if (cancel) {
		assert_int_equal(r->outcome, CONFINE_CANCELLED);
	} else {
		assert_int_equal(r->outcome, CONFINE_FAILED);
		assert_int_equal(r->exit_code, 3);
		assert_string_not_equal(confine_job_scratch(j), "");
		/* The helper was told where temporary files go. */
		assert_int_equal(strncmp(confine_job_tmp(j), tmpdir,
		    strlen(tmpdir)), 0);
	}
	confine_job_free(j);
	return 0;
}

/* A job that failed to start for memory, then the same handle, healthy. */
static void
job_or_recover(struct confine *c, bool cancel)
{
	struct confine_result r;
	int rc = job(c, cancel, &r);

	fine_or_enomem(rc, "confine_spawn");
	if (rc == 0 && r.outcome != CONFINE_UNCERTAIN)
		return;
	alloc_fail_arm(0);
	assert_int_equal(job(c, false, &r), 0);
	assert_int_equal(r.outcome, CONFINE_FAILED);
}

static void
every_allocation_fails_once(enum confine_mode mode)
{
	struct confine_options o = { .mode = mode, .helper_path = helper };
	struct confine *c;
	long n;
	int rc;

	for (n = 1; n < 10000; n++) {
		alloc_fail_arm(n);
		rc = confine_open(&c, &o);
		fine_or_enomem(rc, "confine_open");
		if (rc == 0) {
			job_or_recover(c, false);
			job_or_recover(c, true);
			confine_close(c);
		}
		alloc_fail_arm(0);
		if (alloc_fail_hits() == 0)
			break;
	}
	/* Not vacuous: the round allocates, and every allocation failed once. */
	assert_true(n > 3);
	assert_true(n < 10000);
	printf("%ld allocations in a round, each failed once\n", n - 1);
}

static void
in_auto_mode(void **state)
{
	(void)state;
	every_allocation_fails_once(CONFINE_MODE_AUTO);
}

static void
in_exec_mode(void **state)
{
	(void)state;
	every_allocation_fails_once(CONFINE_MODE_EXEC);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(in_auto_mode),
		cmocka_unit_test(in_exec_mode),
	};

	tu_own_tmpdir();
	helper = tu_runfile("helper/confine-helper");
	scratch = tu_mkdtemp("scratch");
	tmpdir = getenv("TMPDIR");
	assert_non_null(tmpdir);
	return cmocka_run_group_tests_name("alloc", tests, NULL, NULL);
}
