/*
 * The helper's trash (helper/engine/trash.h): a settled job's tmp goes in only
 * when it holds nothing but empty directories its view made, and only
 * empty directories ever leave it, never through a link.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "helper/engine/trash.h"
#include "tests/testutil.h"

static char base[256];  /* each case's own, made by setup */

static char *
at(const char *rel)
{
	static char buf[4][768];
	static int k;
	char *p = buf[k++ % 4];

	snprintf(p, sizeof(buf[0]), "%s/%s", base, rel);
	return p;
}

static void
mk(const char *rel)
{
	assert_int_equal(mkdir(at(rel), 0700), 0);
}

static void
touch(const char *rel)
{
	int fd = open(at(rel), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);

	assert_true(fd >= 0);
	close(fd);
}

static bool
there(const char *rel)
{
	struct stat st;

	return lstat(at(rel), &st) == 0;
}

/* The one confine-trash.* beneath base. */
static char *
trash_name(void)
{
	static char name[64];
	char *found;

	assert_int_equal(tu_count_named(base, "confine-trash."), 1);
	found = tu_find_named(base, "confine-trash.", NULL);
	assert_non_null(found);
	snprintf(name, sizeof(name), "%s", found);
	free(found);
	return name;
}

static int
setup(void **state)
{
	const char *tmp = getenv("TEST_TMPDIR");

	(void)state;
	snprintf(base, sizeof(base), "%s/trash-test.XXXXXX",
	    tmp != NULL && *tmp != '\0' ? tmp : "/tmp");
	return mkdtemp(base) != NULL ? 0 : -1;
}

static int
teardown(void **state)
{
	char cmd[600];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", base);
	return system(cmd) == 0 ? 0 : -1;
}

/* Empty, and holding just the view's directories: in, then gone. */
static void
empty_and_made_tmps_go_in_and_are_removed(void **state)
{
	char ab[] = "/tmp/a/b", ac[] = "/tmp/a/c", d[] = "/tmp/d";
	char *made[] = { ab, ac, d };
	struct trash *t = trash_open(base);
	char name[64];

	(void)state;
	assert_non_null(t);
	snprintf(name, sizeof(name), "%s", trash_name());
	mk("t1");
	mk("t2");
	mk("t2/a");
	mk("t2/a/b");
	mk("t2/a/c");
	mk("t2/d");
	assert_int_equal(trash_put(t, at("t1"), NULL, 0), 0);
	assert_int_equal(trash_put(t, at("t2"), made, 3), 0);
	assert_false(there("t1"));
	assert_false(there("t2"));
	assert_true(there(name));
	/* Each entry a tree of rmdirs: one removed, one left. */
	assert_int_equal(trash_tidy(t, 1), 1);
	assert_int_equal(trash_tidy(t, 1), 0);
	trash_close(t);
	assert_false(there(name));
}

/*
 * Anything else in it (a file, a directory the view did not make, a link
 * where one of its directories was) keeps the tmp out, where it is.
 */
static void
anything_else_keeps_it_out(void **state)
{
	char ab[] = "/tmp/a/b", va[] = "/var/a";
	char *made[] = { ab }, *elsewhere[] = { va };
	struct trash *t = trash_open(base);
	int rc;

	(void)state;
	assert_non_null(t);
	mk("f");
	touch("f/file");
	mk("g");
	mk("g/other");
	mk("h");
	mk("h/a");
	mk("h/a/b");
	touch("h/a/b/file");
	mk("i");
	mk("target");
	mk("target/b");
	assert_int_equal(symlink(at("target"), at("i/a")), 0);
	mk("j");
	mk("j/a");
	touch("j/a/c");
	assert_int_equal(trash_put(t, at("f"), NULL, 0), -ENOTEMPTY);
	assert_int_equal(trash_put(t, at("g"), NULL, 0), -ENOTEMPTY);
	assert_int_equal(trash_put(t, at("h"), made, 1), -ENOTEMPTY);
	assert_int_equal(trash_put(t, at("i"), made, 1), -ENOTEMPTY);
	assert_int_equal(trash_put(t, at("j"), made, 1), -ENOTEMPTY);
	assert_true(there("f/file") && there("g/other") &&
	    there("h/a/b/file") && there("i/a") && there("j/a/c"));
	/* Not a tmp of ours: a path not beneath /tmp, a link. */
	assert_int_equal(trash_put(t, at("j"), elsewhere, 1), -EINVAL);
	assert_int_equal(symlink(at("target"), at("k")), 0);
	rc = trash_put(t, at("k"), NULL, 0);
	assert_true(rc == -ENOTDIR || rc == -ELOOP);
	assert_true(there("k") && there("target/b"));
	trash_close(t);
}

/*
 * Something put in a tmp after it went in (by its user, who may still
 * reach it) stays, and the trash with it: only empty directories go.
 */
static void
what_came_later_stays(void **state)
{
	struct trash *t = trash_open(base);
	char name[64], rel[128];

	(void)state;
	assert_non_null(t);
	snprintf(name, sizeof(name), "%s", trash_name());
	mk("late");
	assert_int_equal(trash_put(t, at("late"), NULL, 0), 0);
	snprintf(rel, sizeof(rel), "%s/late/file", name);
	touch(rel);
	assert_int_equal(trash_tidy(t, 1), 0);
	trash_close(t);
	assert_true(there(rel));
}

/*
 * A helper killed leaves its trash unlocked: the next helper's trash
 * takes in what it holds (each entry renamed), removes it, and then the
 * entries as its own: empty directories go, what is in them stays.
 */
static void
a_dead_helpers_trash_is_taken_in(void **state)
{
	struct trash *t;
	char name[64], rel[160];

	(void)state;
	mk("confine-trash.dead01");
	mk("confine-trash.dead01/tA");
	mk("confine-trash.dead01/tA/a");
	mk("confine-trash.dead01/tB");
	touch("confine-trash.dead01/tB/file");
	t = trash_open(base);
	assert_non_null(t);
	assert_false(there("confine-trash.dead01"));
	snprintf(name, sizeof(name), "%s", trash_name());
	snprintf(rel, sizeof(rel), "%s/tA/a", name);
	assert_true(there(rel));
	assert_int_equal(trash_tidy(t, 0), 2);
	assert_int_equal(trash_tidy(t, 2), 0);
	assert_false(there(rel));
	snprintf(rel, sizeof(rel), "%s/tB/file", name);
	assert_true(there(rel));
	trash_close(t);
	assert_true(there(rel));
}

/*
 * A live helper's trash is locked: a second one beside it takes nothing
 * of it, and the first still removes its own.
 */
static void
a_live_helpers_trash_is_left(void **state)
{
	struct trash *t1, *t2;
	char *name1, *name2, rel[160];

	(void)state;
	t1 = trash_open(base);
	assert_non_null(t1);
	name1 = tu_find_named(base, "confine-trash.", NULL);
	assert_non_null(name1);
	mk("busy");
	mk("busy/a");
	assert_int_equal(trash_put(t1, at("busy"), NULL, 0), -ENOTEMPTY);
	assert_int_equal(rmdir(at("busy/a")), 0);
	assert_int_equal(trash_put(t1, at("busy"), NULL, 0), 0);
	t2 = trash_open(base);
	assert_non_null(t2);
	assert_int_equal(tu_count_named(base, "confine-trash."), 2);
	name2 = tu_find_named(base, "confine-trash.", name1);
	assert_non_null(name2);
	snprintf(rel, sizeof(rel), "%s/busy", name1);
	assert_true(there(rel));
	assert_int_equal(trash_tidy(t2, 8), 0);
	trash_close(t2);
	assert_true(there(rel));
	assert_false(there(name2));
	assert_int_equal(trash_tidy(t1, 8), 0);
	assert_false(there(rel));
	trash_close(t1);
	assert_false(there(name1));
	free(name1);
	free(name2);
}

/*
 * Unlocked, but another user's, or a link to a directory: not taken in,
 * and nothing in it or behind it touched.
 */
static void
another_users_trash_and_a_link_are_left(void **state)
{
	struct trash *t;

	(void)state;
	mk("confine-trash.other");
	mk("confine-trash.other/e");
	/* Root here: the suite runs as root, and this case needs it. */
	assert_int_equal(chown(at("confine-trash.other"), 65534, 65534), 0);
	mk("target");
	mk("target/e");
	assert_int_equal(symlink(at("target"), at("confine-trash.link")), 0);
	t = trash_open(base);
	assert_non_null(t);
	assert_int_equal(trash_tidy(t, 0), 0);
	assert_true(there("confine-trash.other/e"));
	assert_true(there("confine-trash.link") && there("target/e"));
	trash_close(t);
	assert_true(there("confine-trash.other/e") && there("target/e"));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
		    empty_and_made_tmps_go_in_and_are_removed, setup, teardown),
		cmocka_unit_test_setup_teardown(anything_else_keeps_it_out,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(what_came_later_stays, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(a_dead_helpers_trash_is_taken_in,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(a_live_helpers_trash_is_left,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(
		    another_users_trash_and_a_link_are_left, setup, teardown),
	};

	return cmocka_run_group_tests_name("trash", tests, NULL, NULL);
}
