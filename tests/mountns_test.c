/*
 * mountns_unmake: the mount points a job's view made in its private tmp
 * for trees beneath the host's /tmp, removed by the helper once the job
 * is settled, so that a tmp the job left empty goes without a remover.
 * It removes only empty directories reached beneath the tmp without
 * following a link: what the job (or its user) put in their place stays.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "helper/backend/mountns.h"
#include "tests/testutil.h"

static char *tmp;       /* stands for the job's private tmp */
static int tmpfd;

static int
setup(void **state)
{
	(void)state;
	tmp = tu_mkdtemp("tmp");
	tmpfd = open(tmp, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return tmpfd >= 0 ? 0 : -1;
}

static int
teardown(void **state)
{
	char cmd[4200];

	(void)state;
	close(tmpfd);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
	(void)system(cmd);
	free(tmp);
	return 0;
}

/* mkdir -p of rel beneath dir. */
static void
dirs(const char *dir, const char *rel)
{
	char cmd[4200];

	snprintf(cmd, sizeof(cmd), "mkdir -p '%s/%s'", dir, rel);
	assert_int_equal(system(cmd), 0);
}

static bool
in_tmp(const char *rel)
{
	char *p = tu_join(tmp, rel);
	bool there = tu_exists(p);

	free(p);
	return there;
}

static void
its_mount_points_go_and_the_tmp_with_them(void **state)
{
	(void)state;
	dirs(tmp, "a/b/c");
	dirs(tmp, "a/d");
	/* Two trees share a: the first leaves it to the second. */
	assert_int_equal(mountns_unmake(tmpfd, "/tmp/a/b/c"), -ENOTEMPTY);
	assert_false(in_tmp("a/b"));
	assert_true(in_tmp("a/d"));
	assert_int_equal(mountns_unmake(tmpfd, "/tmp/a/d"), 0);
	assert_false(in_tmp("a"));
	assert_int_equal(rmdir(tmp), 0);
	assert_int_equal(mkdir(tmp, 0700), 0);
}

static void
what_the_job_left_stays(void **state)
{
	char *f = tu_join(tmp, "a/b/left");

	(void)state;
	dirs(tmp, "a/b/c");
	assert_int_equal(close(open(f, O_WRONLY | O_CREAT | O_CLOEXEC, 0644)), 0);
	assert_int_equal(mountns_unmake(tmpfd, "/tmp/a/b/c"), -ENOTEMPTY);
	assert_false(in_tmp("a/b/c"));
	assert_true(tu_exists(f));
	/* One it cannot find (the job removed it): nothing else is touched. */
	assert_int_equal(mountns_unmake(tmpfd, "/tmp/a/b/c"), -ENOENT);
	assert_true(tu_exists(f));
	free(f);
}

/*
 * A link where a mount point was, to an empty tree outside that has the
 * same names: the same chain as directories goes (above), through the
 * link nothing does.
 */
static void
a_link_in_its_place_is_not_followed(void **state)
{
	char *outside = tu_mkdtemp("outside"), *a, *c, *oc;

	(void)state;
	dirs(outside, "b/c");
	a = tu_join(tmp, "a");
	assert_int_equal(symlink(outside, a), 0);
	assert_int_equal(mountns_unmake(tmpfd, "/tmp/a/b/c"), -ENOTDIR);
	oc = tu_join(outside, "b/c");
	assert_true(tu_exists(oc));
	/* And as the last name. */
	assert_int_equal(unlink(a), 0);
	dirs(tmp, "a/b");
	c = tu_join(tmp, "a/b/c");
	assert_int_equal(symlink(oc, c), 0);
	assert_int_equal(mountns_unmake(tmpfd, "/tmp/a/b/c"), -ENOTDIR);
	assert_true(tu_exists(oc));
	assert_true(in_tmp("a/b"));
	free(a);
	free(c);
	free(oc);
	free(outside);
}

static void
only_canonical_paths_beneath_tmp(void **state)
{
	static const char *bad[] = {
		"/etc/a", "/tmp", "/tmp/", "/tmpa/b", "/tmp/a/../b", "/tmp/a/./b",
		"/tmp/a//b", "/tmp/a/b/", "/tmp//a",
	};
	size_t i;

	(void)state;
	dirs(tmp, "a/b");
	dirs(tmp, "b");
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		print_message("%s\n", bad[i]);
		assert_int_equal(mountns_unmake(tmpfd, bad[i]), -EINVAL);
	}
	assert_true(in_tmp("a/b"));
	assert_true(in_tmp("b"));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
		    its_mount_points_go_and_the_tmp_with_them, setup, teardown),
		cmocka_unit_test_setup_teardown(what_the_job_left_stays, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(a_link_in_its_place_is_not_followed,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(only_canonical_paths_beneath_tmp,
		    setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
