/*
 * The contract's cases from process group 0: a driver in a PID namespace
 * whose process group and session are outside it (as under `unshare
 * --pid --fork`, `bwrap --unshare-pid` without --new-session, a bare
 * init, and so CI's containers), where getpgrp() and getsid(0) read 0.
 * A shepherd that went back to "its own group" there went back to 0,
 * which setpgid reads as its own pid: it stayed the job's group's leader,
 * and every job settled Uncertain. Run on both paths.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <stdio.h>
#include <unistd.h>

#include "tests/contract.h"
#include "tests/jobrun.h"
#include "tests/testutil.h"

int
main(void)
{
	struct contract_errnos landlock = { EROFS, EXDEV, 0 };
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(jr_on_its_path),
	};
	int failed;

	tu_path_setup();
	tu_own_pids();
	if (getpgrp() != 0 || getsid(0) != 0) {
		fprintf(stderr, "test setup: process group %ld, session %ld in "
		    "the test's pid namespace, not 0\n", (long)getpgrp(),
		    (long)getsid(0));
		return 1;
	}
	jr_setup();
	failed = cmocka_run_group_tests_name("process group 0", tests, NULL,
	    NULL);
	landlock.net = JR_NET_ERRNO;
	return failed + contract_run(CONFINE_BACKEND_LANDLOCK, &landlock,
	    jr_proof());
}
