/*
 * CONFINE_FRESH_SCRATCH: a fresh root per job, removed once the job is
 * proven settled, kept when it is Uncertain. Removal never follows a link
 * out of the root.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/helperutil.h"
#include "tests/testutil.h"

static struct confine *c;

static int
setup(void **state)
{
	(void)state;
	return hu_open(&c, CONFINE_MODE_EXEC, NULL);
}

static int
teardown(void **state)
{
	(void)state;
	confine_close(c);
	return 0;
}

/* A shell job in a fresh root beneath parent. */
static void
sh_job(struct hu_job *j, const char *parent, const char *script)
{
	hu_init(j, parent, NULL);
	j->argv[0] = "sh";
	j->argv[1] = "-c";
	j->argv[2] = script;
	j->argv[3] = NULL;
	j->spec.exe = "/bin/sh";
	j->spec.flags = CONFINE_FRESH_SCRATCH;
}

static void
fresh_root_is_removed_after_completed_without_following_links(void **state)
{
	char *parent = tu_mkdtemp("parent"), *outside = tu_mkdtemp("outside");
	char *target = tu_join(outside, "target"), script[1024], *root;
	struct hu_job j;

	(void)state;
	tu_copy_exec("/bin/true", target);
	snprintf(script, sizeof(script),
	    "pwd; mkdir -p a/b && echo x > a/b/c && ln -s %s link && "
	    "ln -s %s dirlink && chmod 000 a/b", target, outside);
	sh_job(&j, parent, script);
	assert_int_equal(hu_run(c, &j), 0);
	assert_int_equal(j.r.outcome, CONFINE_COMPLETED);
	root = strdup(confine_job_scratch(j.job));
	/* The job ran in it, beneath the parent. */
	assert_int_equal(strncmp(root, parent, strlen(parent)), 0);
	assert_true(strlen(root) > strlen(parent));
	assert_int_equal(strncmp(j.out, root, strlen(root)), 0);
	assert_int_equal(j.r.scratch_kept, 0);
	assert_false(tu_exists(root));
	assert_int_equal(tu_count_entries(parent), 0);
	/* What the links pointed to is untouched. */
	assert_true(tu_exists(target));
	assert_int_equal(tu_count_entries(outside), 1);
	hu_free(&j);
	free(root);
	free(target);
	free(parent);
	free(outside);
}

static void
fresh_root_is_kept_after_uncertain(void **state)
{
	char *parent = tu_mkdtemp("parent"), *root;
	struct hu_job j;

	(void)state;
	hu_init(&j, parent, "detach", "30000", NULL);
	j.spec.flags = CONFINE_FRESH_SCRATCH;
	assert_int_equal(hu_run(c, &j), 0);
	assert_int_equal(j.r.outcome, CONFINE_UNCERTAIN);
	assert_int_equal(j.r.scratch_kept, 1);
	root = strdup(confine_job_scratch(j.job));
	assert_true(tu_exists(root));
	assert_true(tu_gone(hu_pid(&j, 0)));
	hu_free(&j);
	assert_int_equal(rmdir(root), 0);
	free(root);
	free(parent);
}

/* Failed and Cancelled are settled too, once proven: removed. */
static void
fresh_root_is_removed_after_failed_and_cancelled(void **state)
{
	char *parent = tu_mkdtemp("parent");
	struct hu_job j;

	(void)state;
	sh_job(&j, parent, "echo x > f; exit 3");
	assert_int_equal(hu_run(c, &j), 0);
	assert_int_equal(j.r.exit_code, 3);
	assert_int_equal(j.r.scratch_kept, 0);
	hu_free(&j);
	sh_job(&j, parent, "echo x > f; exec sleep 30");
	j.spec.deadline_ms = 150;
	assert_int_equal(hu_run(c, &j), 0);
	assert_int_equal(j.r.outcome, CONFINE_CANCELLED);
	assert_int_equal(j.r.scratch_kept, 0);
	hu_free(&j);
	assert_int_equal(tu_count_entries(parent), 0);
	free(parent);
}

/*
 * The parent's mtime, set far in the past: an entry made in it moves it,
 * even one removed at once, so an unchanged mtime shows none ever was.
 */
static void
age(const char *dir)
{
	const struct timespec old[2] = { { 1, 0 }, { 1, 0 } };

	assert_int_equal(utimensat(AT_FDCWD, dir, old, 0), 0);
}

static void
assert_untouched(const char *dir)
{
	struct stat st;

	assert_int_equal(stat(dir, &st), 0);
	assert_int_equal(st.st_mtim.tv_sec, 1);
	assert_int_equal(st.st_mtim.tv_nsec, 0);
	assert_int_equal(tu_count_entries(dir), 0);
}

/* A fresh-root job refused before its start: the parent never changes. */
static void
refused_job_never_makes_a_fresh_root(void **state)
{
	const char *const not_a_device[] = { "/etc/passwd", NULL };
	char *parent = tu_mkdtemp("parent");
	struct hu_job j;

	(void)state;
	age(parent);
	hu_init(&j, parent, "exit", "0", NULL);
	j.spec.flags = CONFINE_FRESH_SCRATCH;
	j.spec.backend = CONFINE_BACKEND_SEATBELT;
	j.spec.launcher = "/nonexistent/sandbox-exec";
	assert_int_equal(hu_run(c, &j), -ENOTSUP);
	hu_free(&j);
	assert_untouched(parent);
	/* No memory cgroup in Bazel's sandbox (limits_test asserts it). */
	hu_init(&j, parent, "exit", "0", NULL);
	j.spec.flags = CONFINE_FRESH_SCRATCH;
	j.spec.limits.memory = INT64_C(64) << 20;
	assert_int_equal(hu_run(c, &j), -ENOTSUP);
	hu_free(&j);
	assert_untouched(parent);
	hu_init(&j, parent, "exit", "0", NULL);
	j.spec.flags = CONFINE_FRESH_SCRATCH;
	j.spec.devices = not_a_device;
	assert_int_equal(hu_run(c, &j), -EINVAL);
	hu_free(&j);
	assert_untouched(parent);
	hu_init(&j, parent, "exit", "0", NULL);
	j.spec.flags = 0x100;
	assert_int_equal(hu_run(c, &j), -EINVAL);
	hu_free(&j);
	assert_untouched(parent);
	free(parent);
}

/*
 * Refused in the job's own process (a bound the kernel will not set): the
 * root was made for it, and is gone before the refusal is told.
 */
static void
refused_job_leaves_no_fresh_root(void **state)
{
	char *parent = tu_mkdtemp("parent");
	struct hu_job j;

	(void)state;
	hu_init(&j, parent, "exit", "0", NULL);
	j.spec.flags = CONFINE_FRESH_SCRATCH;
	j.spec.limits.open_files = INT64_C(1) << 40;
	assert_int_equal(hu_run(c, &j), -ENOTSUP);
	hu_free(&j);
	assert_int_equal(tu_count_entries(parent), 0);
	free(parent);
}

/* Without the flag the root is the caller's: reported, never removed. */
static void
given_root_is_reported_and_left_alone(void **state)
{
	char *root = tu_mkdtemp("given"), *f = tu_join(root, "f");
	struct hu_job j;

	(void)state;
	hu_init(&j, root, "write", f, NULL);
	assert_int_equal(hu_run(c, &j), 0);
	assert_int_equal(j.r.outcome, CONFINE_COMPLETED);
	assert_string_equal(confine_job_scratch(j.job), root);
	assert_int_equal(j.r.scratch_kept, 0);
	assert_true(tu_exists(f));
	hu_free(&j);
	free(f);
	free(root);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(fresh_root_is_removed_after_completed_without_following_links),
		cmocka_unit_test(fresh_root_is_kept_after_uncertain),
		cmocka_unit_test(fresh_root_is_removed_after_failed_and_cancelled),
		cmocka_unit_test(refused_job_never_makes_a_fresh_root),
		cmocka_unit_test(refused_job_leaves_no_fresh_root),
		cmocka_unit_test(given_root_is_reported_and_left_alone),
	};

	hu_setup();
	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests_name("scratch", tests, setup, teardown);
}
