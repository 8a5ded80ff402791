/* The Landlock rights per ABI, and the minimum the policy needs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>

#include "helper/backend/landlock.h"
#include "helper/backend/landlock_uapi.h"

#define WRITE_V1 (LL_FS_WRITE_FILE | LL_FS_REMOVE_DIR | LL_FS_REMOVE_FILE | \
	LL_FS_MAKE_CHAR | LL_FS_MAKE_DIR | LL_FS_MAKE_REG | LL_FS_MAKE_SOCK | \
	LL_FS_MAKE_FIFO | LL_FS_MAKE_BLOCK | LL_FS_MAKE_SYM)

static void
abi_7_handles_every_write_right(void **state)
{
	struct landlock_plan p;

	(void)state;
	assert_int_equal(landlock_plan(7, &p), 0);
	assert_int_equal(p.fs_handled, WRITE_V1 | LL_FS_REFER |
	    LL_FS_TRUNCATE | LL_FS_IOCTL_DEV);
	/* Reads and exec stay unhandled: allowed everywhere, as on macOS. */
	assert_int_equal(p.fs_handled & (LL_FS_READ_FILE | LL_FS_READ_DIR |
	    LL_FS_EXECUTE), 0);
	assert_int_equal(p.fs_file, LL_FS_WRITE_FILE | LL_FS_TRUNCATE |
	    LL_FS_IOCTL_DEV);
	/* Beneath the scratch root: everything but making and using devices. */
	assert_int_equal(p.fs_scratch, p.fs_handled & ~(LL_FS_MAKE_CHAR |
	    LL_FS_MAKE_BLOCK | LL_FS_IOCTL_DEV));
	assert_int_equal(p.net_handled, LL_NET_BIND_TCP | LL_NET_CONNECT_TCP);
	assert_int_equal(p.scoped, LL_SCOPE_ABSTRACT_UNIX_SOCKET |
	    LL_SCOPE_SIGNAL);
}

static void
newer_abis_are_treated_as_the_newest_known(void **state)
{
	struct landlock_plan p7, p9;

	(void)state;
	assert_int_equal(landlock_plan(7, &p7), 0);
	assert_int_equal(landlock_plan(9, &p9), 0);
	assert_int_equal(p9.fs_handled, p7.fs_handled);
	assert_int_equal(p9.net_handled, p7.net_handled);
	assert_int_equal(p9.scoped, p7.scoped);
}

static void
abi_6_is_enough(void **state)
{
	struct landlock_plan p;

	(void)state;
	assert_int_equal(landlock_plan(LANDLOCK_MIN_ABI, &p), 0);
	assert_int_equal(LANDLOCK_MIN_ABI, 6);
	assert_true(p.scoped & LL_SCOPE_SIGNAL);
}

/* Each older ABI lacks a right the policy needs: refused, never weakened. */
static void
older_abis_are_refused_and_lack_what_they_lack(void **state)
{
	struct landlock_plan p;

	(void)state;
	assert_int_equal(landlock_plan(5, &p), -ENOTSUP);
	assert_int_equal(p.scoped, 0);
	assert_true(p.fs_handled & LL_FS_IOCTL_DEV);
	assert_int_equal(landlock_plan(4, &p), -ENOTSUP);
	assert_false(p.fs_handled & LL_FS_IOCTL_DEV);
	assert_true(p.net_handled != 0);
	assert_int_equal(landlock_plan(3, &p), -ENOTSUP);
	assert_int_equal(p.net_handled, 0);
	assert_true(p.fs_handled & LL_FS_TRUNCATE);
	assert_int_equal(landlock_plan(2, &p), -ENOTSUP);
	assert_false(p.fs_handled & LL_FS_TRUNCATE);
	assert_true(p.fs_handled & LL_FS_REFER);
	assert_int_equal(landlock_plan(1, &p), -ENOTSUP);
	assert_int_equal(p.fs_handled, WRITE_V1);
	assert_int_equal(landlock_plan(0, &p), -ENOTSUP);
	assert_int_equal(landlock_plan(-ENOSYS, &p), -ENOTSUP);
}

/* This machine is meant to have it: a missing Landlock fails, not skips. */
static void
running_kernel_has_landlock_6_or_newer(void **state)
{
	int abi = landlock_abi();

	(void)state;
	assert_true(abi >= LANDLOCK_MIN_ABI);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(abi_7_handles_every_write_right),
		cmocka_unit_test(newer_abis_are_treated_as_the_newest_known),
		cmocka_unit_test(abi_6_is_enough),
		cmocka_unit_test(older_abis_are_refused_and_lack_what_they_lack),
		cmocka_unit_test(running_kernel_has_landlock_6_or_newer),
	};

	return cmocka_run_group_tests_name("landlock", tests, NULL, NULL);
}
