/*
 * Every job's private temporary directory: made by the helper beneath its
 * own TMPDIR (else /tmp), the job's /tmp in its view, in TMPDIR when asked
 * (CONFINE_SET_TMPDIR), removed once the job is proven settled, kept when
 * it is Uncertain; none with CONFINE_NO_TMP. Through the real helper.
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
#include <time.h>
#include <unistd.h>

#include "tests/helperutil.h"
#include "tests/testutil.h"

static struct confine *c;
static char *base;      /* where the helper makes them */

static int
setup(void **state)
{
	const char *t = getenv("TMPDIR");

	(void)state;
	base = realpath(t != NULL && t[0] == '/' ? t : "/tmp", NULL);
	assert_non_null(base);
	return hu_open(&c, CONFINE_MODE_EXEC, NULL);
}

static int
teardown(void **state)
{
	(void)state;
	confine_close(c);
	free(base);
	return 0;
}

static void
sh_job(struct hu_job *j, const char *scratch, const char *script)
{
	hu_init(j, scratch, NULL);
	j->argv[0] = "sh";
	j->argv[1] = "-c";
	j->argv[2] = script;
	j->argv[3] = NULL;
	j->spec.exe = "/bin/sh";
}

/* The helper's private tmps that exist now. */
static int
tmps_in_base(void)
{
	int n = tu_count_named(base, "confine-tmp.");

	assert_true(n >= 0);
	return n;
}

static void
assert_beneath_base(const char *tmp)
{
	char want[4096];

	snprintf(want, sizeof(want), "%s/confine-tmp.", base);
	assert_int_equal(strncmp(tmp, want, strlen(want)), 0);
}

/*
 * Its /tmp is its own: written, seen, and the host's not. Where its init
 * lays the host's /tmp beneath (reads everywhere, on this kernel: the
 * "tmp=over-hosts" of what was enforced), the host's file is seen there
 * too; its own stays off the host either way.
 */
static void
a_job_has_a_tmp_of_its_own(void **state)
{
	char *scratch = tu_mkdtemp("scratch"), marker[64], script[512], *tmp;
	struct hu_job j;

	(void)state;
	snprintf(marker, sizeof(marker), "/tmp/confine-tmp-test-%ld",
	    (long)getpid());
	assert_int_equal(close(open(marker, O_WRONLY | O_CREAT | O_CLOEXEC,
	    0644)), 0);
	snprintf(script, sizeof(script), "echo \"$TMPDIR\"; echo x > /tmp/mine "
	    "&& ls -A /tmp/mine; test -e %s && echo host; true", marker);
	sh_job(&j, scratch, script);
	j.spec.flags = CONFINE_SET_TMPDIR;
	assert_int_equal(hu_spawn(c, &j), 0);
	tmp = strdup(confine_job_tmp(j.job));
	assert_beneath_base(tmp);
	assert_int_equal(hu_wait(&j), 0);
	assert_int_equal(j.r.outcome, CONFINE_COMPLETED);
	assert_string_equal(j.out, strstr(confine_job_enforced(j.job),
	    " tmp=over-hosts ") != NULL ? "/tmp\n/tmp/mine\nhost\n" :
	    "/tmp\n/tmp/mine\n");
	assert_int_equal(j.r.tmp_kept, 0);
	assert_false(tu_exists(tmp));
	assert_false(tu_exists("/tmp/mine"));
	/* Nor anything of the helper's probe at its start (plan.c). */
	assert_int_equal(tu_count_named(base, "confine-probe."), 0);
	hu_free(&j);
	unlink(marker);
	free(tmp);
	free(scratch);
}

/* Left empty, it goes as surely as when full (the helper's own rmdir). */
static void
an_empty_tmp_goes_too(void **state)
{
	char *scratch = tu_mkdtemp("scratch"), *tmp;
	struct hu_job j;
	int before = tmps_in_base();

	(void)state;
	sh_job(&j, scratch, "test -d /tmp && test -w /tmp");
	assert_int_equal(hu_spawn(c, &j), 0);
	tmp = strdup(confine_job_tmp(j.job));
	assert_beneath_base(tmp);  /* it may be gone already: no exists */
	assert_int_equal(hu_wait(&j), 0);
	assert_int_equal(j.r.outcome, CONFINE_COMPLETED);
	assert_int_equal(j.r.tmp_kept, 0);
	assert_false(tu_exists(tmp));
	assert_int_equal(tmps_in_base(), before);
	hu_free(&j);
	free(tmp);
	free(scratch);
}

/*
 * A helper of the case's own beside the suite's: *theirs names the
 * suite's trash, made at its start; returns the path of the new one's.
 */
static char *
own_helper(struct confine **own, char **theirs)
{
	char *name, *trash;

	*theirs = tu_find_named(base, "confine-trash.", NULL);
	assert_non_null(*theirs);
	assert_int_equal(hu_open(own, CONFINE_MODE_EXEC, NULL), 0);
	name = tu_find_named(base, "confine-trash.", *theirs);
	assert_non_null(name);
	trash = tu_join(base, name);
	free(name);
	return trash;
}

/*
 * A settled job's empty tmp (here with the view's directory for a
 * scratch root beneath /tmp in it) goes into the helper's trash in one
 * rename: gone when the result arrives. The trash is emptied when the
 * helper has time, and goes with the helper.
 */
static void
empty_tmps_go_through_the_trash(void **state)
{
	char dir[] = "/tmp/confine-trashtest.XXXXXX", *trash;
	struct timespec ts = { 0, 10 * 1000 * 1000 };
	struct confine *own;
	struct hu_job j;
	char *tmp, *theirs;
	int i;

	(void)state;
	assert_non_null(mkdtemp(dir));
	trash = own_helper(&own, &theirs);
	sh_job(&j, dir, "true");
	assert_int_equal(hu_spawn(own, &j), 0);
	tmp = strdup(confine_job_tmp(j.job));
	assert_int_equal(hu_wait(&j), 0);
	assert_int_equal(j.r.outcome, CONFINE_COMPLETED);
	assert_int_equal(j.r.tmp_kept, 0);
	assert_false(tu_exists(tmp));
	hu_free(&j);
	for (i = 0; i < 1000 && tu_count_entries(trash) > 0; i++)
		nanosleep(&ts, NULL);
	assert_int_equal(tu_count_entries(trash), 0);
	confine_close(own);
	assert_true(tu_path_gone(trash));
	assert_int_equal(rmdir(dir), 0);
	free(trash);
	free(theirs);
	free(tmp);
}

/*
 * A helper killed leaves its trash, unlocked: the next helper to start
 * in the same TMPDIR takes in what it holds and removes it.
 */
static void
a_killed_helpers_trash_goes_with_the_next(void **state)
{
	struct confine *own, *next;
	char *theirs, *trash, *live;
	pid_t helper;

	(void)state;
	trash = own_helper(&own, &theirs);
	helper = confine_helper_pid(own);
	assert_true(helper > 0);
	assert_int_equal(kill(helper, SIGKILL), 0);
	confine_close(own);  /* which reaps it */
	assert_true(tu_gone(helper));
	/* Nothing removed it: the helper died at once. */
	assert_true(tu_exists(trash));
	assert_int_equal(hu_open(&next, CONFINE_MODE_EXEC, NULL), 0);
	assert_true(tu_path_gone(trash));
	/* And the living helper's trash is still its own. */
	live = tu_join(base, theirs);
	assert_true(tu_exists(live));
	confine_close(next);
	free(live);
	free(trash);
	free(theirs);
}

/* Something of it may still write there: kept, and said so. */
static void
it_is_kept_when_the_job_is_uncertain(void **state)
{
	char *scratch = tu_mkdtemp("scratch"), *tmp, *f, cmd[4200];
	struct hu_job j;

	(void)state;
	sh_job(&j, scratch, "echo x > /tmp/f; sleep 30 & exit 0");
	assert_int_equal(hu_run(c, &j), 0);
	assert_int_equal(j.r.outcome, CONFINE_UNCERTAIN);
	assert_int_equal(j.r.tmp_kept, 1);
	tmp = strdup(confine_job_tmp(j.job));
	f = tu_join(tmp, "f");
	assert_true(tu_exists(f));
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
	assert_int_equal(system(cmd), 0);
	hu_free(&j);
	free(f);
	free(tmp);
	free(scratch);
}

/*
 * Beneath the host's /tmp, the scratch root (read-write), the cwd and the
 * program's directory (read-only) are seen where they are; nothing else
 * of it is.
 */
static void
what_the_job_names_beneath_tmp_stays_in_sight(void **state)
{
	char dir[] = "/tmp/confine-tmptest.XXXXXX", *scratch, *src, *bin, *sh;
	char *other, *in, *out, cmd[256];
	struct hu_job j;

	(void)state;
	assert_non_null(mkdtemp(dir));
	scratch = tu_join(dir, "scratch");
	src = tu_join(dir, "src");
	bin = tu_join(dir, "bin");
	other = tu_join(dir, "other");
	assert_int_equal(mkdir(scratch, 0755), 0);
	assert_int_equal(mkdir(src, 0755), 0);
	assert_int_equal(mkdir(bin, 0755), 0);
	assert_int_equal(mkdir(other, 0755), 0);
	sh = tu_join(bin, "sh");
	tu_copy_exec("/bin/sh", sh);
	in = tu_join(src, "input");
	assert_int_equal(close(open(in, O_WRONLY | O_CREAT | O_CLOEXEC, 0644)), 0);
	out = tu_join(scratch, "out");
	snprintf(cmd, sizeof(cmd), "cat input > %s && test ! -e %s && "
	    "touch here", out, other);
	sh_job(&j, scratch, cmd);
	j.spec.exe = sh;
	j.spec.cwd = src;
	assert_int_equal(hu_run(c, &j), 0);
	/* Read-only: touch fails, after the rest held. */
	assert_int_equal(j.r.outcome, CONFINE_FAILED);
	assert_int_equal(j.r.exit_code, 1);
	assert_true(tu_exists(out));
	hu_free(&j);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
	free(scratch);
	free(src);
	free(bin);
	free(sh);
	free(other);
	free(in);
	free(out);
}

/* CONFINE_NO_TMP: none made; /tmp is the host's, read-only. */
static void
no_tmp_means_the_hosts_read_only_tmp(void **state)
{
	char *scratch = tu_mkdtemp("scratch");
	struct hu_job j;
	int before = tmps_in_base();

	(void)state;
	sh_job(&j, scratch, "(echo x > /tmp/confine-no-tmp-test) 2>&1");
	j.spec.flags = CONFINE_NO_TMP;
	assert_int_equal(hu_spawn(c, &j), 0);
	assert_string_equal(confine_job_tmp(j.job), "");
	assert_int_equal(hu_wait(&j), 0);
	assert_int_equal(j.r.outcome, CONFINE_FAILED);
	assert_non_null(strstr(j.out, "Read-only file system"));
	assert_int_equal(tmps_in_base(), before);
	hu_free(&j);
	free(scratch);
}

/* Unconfined there is no view: TMPDIR names it where the host has it. */
static void
unconfined_it_is_in_tmpdir(void **state)
{
	char *scratch = tu_mkdtemp("scratch"), *tmp, *f;
	struct hu_job j;

	(void)state;
	sh_job(&j, scratch, "echo x > \"$TMPDIR/f\" && echo \"$TMPDIR\"");
	j.spec.backend = CONFINE_BACKEND_NONE;
	j.spec.flags = CONFINE_SET_TMPDIR;
	assert_int_equal(hu_spawn(c, &j), 0);
	tmp = strdup(confine_job_tmp(j.job));
	assert_int_equal(hu_wait(&j), 0);
	assert_int_equal(j.r.outcome, CONFINE_COMPLETED);
	f = tu_join(tmp, "");
	f[strlen(f) - 1] = '\n';
	assert_string_equal(j.out, f);
	assert_false(tu_exists(tmp));
	hu_free(&j);
	free(f);
	free(tmp);
	free(scratch);
}

/* A TMPDIR the spec gives is the job's to keep. */
static void
a_given_tmpdir_wins(void **state)
{
	const char *env[] = { "TMPDIR=/elsewhere", NULL };
	char *scratch = tu_mkdtemp("scratch");
	struct hu_job j;

	(void)state;
	sh_job(&j, scratch, "echo \"$TMPDIR\"");
	j.spec.envp = env;
	j.spec.flags = CONFINE_SET_TMPDIR;
	assert_int_equal(hu_run(c, &j), 0);
	assert_string_equal(j.out, "/elsewhere\n");
	hu_free(&j);
	free(scratch);
}

/* Refused by its own process (its limits step): its tmp goes too. */
static void
a_refused_job_leaves_no_tmp(void **state)
{
	char *scratch = tu_mkdtemp("scratch");
	struct hu_job j;
	int before = tmps_in_base();

	(void)state;
	sh_job(&j, scratch, "true");
	j.spec.limits.open_files = INT64_C(1) << 40;  /* over any hard limit */
	assert_int_equal(hu_spawn(c, &j), -ENOTSUP);
	assert_int_equal(tmps_in_base(), before);
	hu_free(&j);
	free(scratch);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(a_job_has_a_tmp_of_its_own),
		cmocka_unit_test(an_empty_tmp_goes_too),
		cmocka_unit_test(empty_tmps_go_through_the_trash),
		cmocka_unit_test(a_killed_helpers_trash_goes_with_the_next),
		cmocka_unit_test(it_is_kept_when_the_job_is_uncertain),
		cmocka_unit_test(what_the_job_names_beneath_tmp_stays_in_sight),
		cmocka_unit_test(no_tmp_means_the_hosts_read_only_tmp),
		cmocka_unit_test(unconfined_it_is_in_tmpdir),
		cmocka_unit_test(a_given_tmpdir_wins),
		cmocka_unit_test(a_refused_job_leaves_no_tmp),
	};

	hu_setup();
	return cmocka_run_group_tests_name("tmp", tests, setup, teardown);
}
