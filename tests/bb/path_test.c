/* A Run request's paths as text (bb/path.c): canonical, refused, joined. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <limits.h>
#include <string.h>

#include "bb/path.h"

static void
clean_is(const char *in, const char *want)
{
	char out[PATH_MAX];
	const char *why;

	assert_int_equal(bbpath_clean(in, out, sizeof(out), &why), 0);
	assert_string_equal(out, want);
}

static void
clean_refuses(const char *in, int err, const char *why_has)
{
	char out[PATH_MAX];
	const char *why = NULL;

	assert_int_equal(bbpath_clean(in, out, sizeof(out), &why), -err);
	assert_non_null(why);
	assert_non_null(strstr(why, why_has));
}

static void
relative_paths_are_made_canonical(void **state)
{
	(void)state;
	clean_is("", "");
	clean_is(".", "");
	clean_is("./", "");
	clean_is("a", "a");
	clean_is("a/", "a");
	clean_is("a//b/./c", "a/b/c");
	clean_is("a/b/../c", "a/c");
	clean_is("a/..", "");
	clean_is("a/b/../../c/./d/..", "c");
	clean_is("...", "...");     /* a name, not a climb */
	clean_is("..a/b..", "..a/b..");
}

static void
absolute_and_climbing_paths_are_refused(void **state)
{
	(void)state;
	clean_refuses("/", EINVAL, "absolute");
	clean_refuses("/etc/passwd", EINVAL, "absolute");
	clean_refuses("..", EINVAL, "climbs");
	clean_refuses("../x", EINVAL, "climbs");
	clean_refuses("a/../..", EINVAL, "climbs");
	clean_refuses("a/b/../../../etc", EINVAL, "climbs");
	clean_refuses("./..", EINVAL, "climbs");
}

static void
too_long_is_refused(void **state)
{
	char small[4];
	const char *why;

	(void)state;
	assert_int_equal(bbpath_clean("abc", small, sizeof(small), &why), 0);
	assert_int_equal(bbpath_clean("abcd", small, sizeof(small), &why),
	    -ENAMETOOLONG);
	assert_int_equal(bbpath_clean("a/bc", small, sizeof(small), &why),
	    -ENAMETOOLONG);
	assert_int_equal(bbpath_clean("", small, 0, &why), -ENAMETOOLONG);
}

static void
absolute_paths_stay_at_the_root(void **state)
{
	char out[PATH_MAX];

	(void)state;
	assert_int_equal(bbpath_clean_abs("/", out, sizeof(out)), 0);
	assert_string_equal(out, "/");
	assert_int_equal(bbpath_clean_abs("/../..", out, sizeof(out)), 0);
	assert_string_equal(out, "/");
	assert_int_equal(bbpath_clean_abs("/usr/./bin/../lib//", out,
	    sizeof(out)), 0);
	assert_string_equal(out, "/usr/lib");
	assert_int_equal(bbpath_clean_abs("usr", out, sizeof(out)), -EINVAL);
	assert_int_equal(bbpath_clean_abs("/usr", out, 4), -ENAMETOOLONG);
}

static void
join_and_common_and_within(void **state)
{
	char out[PATH_MAX];

	(void)state;
	assert_int_equal(bbpath_join("/b", "", out, sizeof(out)), 0);
	assert_string_equal(out, "/b");
	assert_int_equal(bbpath_join("/b", "x/y", out, sizeof(out)), 0);
	assert_string_equal(out, "/b/x/y");
	assert_int_equal(bbpath_join("/", "x", out, sizeof(out)), 0);
	assert_string_equal(out, "/x");
	assert_int_equal(bbpath_join("/b", "x", out, 4), -ENAMETOOLONG);

	bbpath_common("17/root", "17/tmp", out, sizeof(out));
	assert_string_equal(out, "17");
	bbpath_common("17/root", NULL, out, sizeof(out));
	assert_string_equal(out, "17/root");
	bbpath_common("17/root", "17/root/t", out, sizeof(out));
	assert_string_equal(out, "17/root");
	bbpath_common("17/root/t", "17/root", out, sizeof(out));
	assert_string_equal(out, "17/root");
	bbpath_common("17/root", "170/tmp", out, sizeof(out));
	assert_string_equal(out, "");
	bbpath_common("root", "tmp", out, sizeof(out));
	assert_string_equal(out, "");
	bbpath_common("a/b/c", "a/b/d", out, sizeof(out));
	assert_string_equal(out, "a/b");
	bbpath_common("ab", "a", out, sizeof(out));
	assert_string_equal(out, "");

	assert_true(bbpath_within("a/b", ""));
	assert_true(bbpath_within("a/b", "a"));
	assert_true(bbpath_within("a", "a"));
	assert_false(bbpath_within("ab", "a"));
	assert_false(bbpath_within("a", "a/b"));
}

struct programs {
	const char *const *paths;
};

/* is_exe for lookup: exactly the paths listed in arg are programs. */
static int
listed(const char *candidate, void *arg)
{
	const struct programs *l = arg;
	const char *const *p;

	for (p = l->paths; *p != NULL; p++)
		if (strcmp(*p, candidate) == 0)
			return 1;
	return 0;
}

static int
lookup(const char *path_var, const char *argv0, const char *const *exes,
    char *out)
{
	struct programs l = { exes };

	return bbpath_lookup("/b/17/root/wd", path_var, argv0, listed, &l,
	    out, PATH_MAX);
}

static void
argv0_with_a_slash_is_a_path_from_the_working_directory(void **state)
{
	const char *const none[] = { NULL };
	char out[PATH_MAX];

	(void)state;
	/* Not looked for along PATH, nor checked: exec will say. */
	assert_int_equal(lookup("/usr/bin", "./hello", none, out), 0);
	assert_string_equal(out, "/b/17/root/wd/hello");
	assert_int_equal(lookup(NULL, "bin/cc", none, out), 0);
	assert_string_equal(out, "/b/17/root/wd/bin/cc");
	assert_int_equal(lookup(NULL, "../tools/x", none, out), 0);
	assert_string_equal(out, "/b/17/root/tools/x");
	assert_int_equal(lookup(NULL, "/usr/bin/../bin/cc", none, out), 0);
	assert_string_equal(out, "/usr/bin/cc");
}

static void
a_bare_name_is_found_along_the_requests_path(void **state)
{
	const char *const exes[] = {
		"/usr/bin/cc", "/bin/cc", "/b/17/root/wd/cc",
		"/b/17/root/wd/tools/cc", "/b/17/root/cc", NULL,
	};
	const char *const late[] = { "/bin/cc", NULL };
	char out[PATH_MAX];

	(void)state;
	assert_int_equal(lookup("/usr/bin:/bin", "cc", exes, out), 0);
	assert_string_equal(out, "/usr/bin/cc");
	assert_int_equal(lookup("/nowhere:/usr/bin:/bin", "cc", late, out), 0);
	assert_string_equal(out, "/bin/cc");
	/* Relative entries, and an empty one, from the working directory. */
	assert_int_equal(lookup("tools:/usr/bin", "cc", exes, out), 0);
	assert_string_equal(out, "/b/17/root/wd/tools/cc");
	assert_int_equal(lookup("/nowhere::/usr/bin", "cc", exes, out), 0);
	assert_string_equal(out, "/b/17/root/wd/cc");
	assert_int_equal(lookup("/nowhere:", "cc", exes, out), 0);
	assert_string_equal(out, "/b/17/root/wd/cc");
	assert_int_equal(lookup("..", "cc", exes, out), 0);
	assert_string_equal(out, "/b/17/root/cc");
}

static void
a_bare_name_found_nowhere_is_enoent(void **state)
{
	const char *const exes[] = { "/usr/bin/cc", NULL };
	char out[PATH_MAX];

	(void)state;
	assert_int_equal(lookup("/usr/bin", "gcc", exes, out), -ENOENT);
	/* No PATH, or an empty one, has no entry at all (Go's SplitList). */
	assert_int_equal(lookup(NULL, "cc", exes, out), -ENOENT);
	assert_int_equal(lookup("", "cc", exes, out), -ENOENT);
	assert_int_equal(lookup("/usr/bin", "", exes, out), -ENOENT);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(relative_paths_are_made_canonical),
		cmocka_unit_test(absolute_and_climbing_paths_are_refused),
		cmocka_unit_test(too_long_is_refused),
		cmocka_unit_test(absolute_paths_stay_at_the_root),
		cmocka_unit_test(join_and_common_and_within),
		cmocka_unit_test(argv0_with_a_slash_is_a_path_from_the_working_directory),
		cmocka_unit_test(a_bare_name_is_found_along_the_requests_path),
		cmocka_unit_test(a_bare_name_found_nowhere_is_enoent),
	};

	return cmocka_run_group_tests_name("bb_path", tests, NULL, NULL);
}
