/*
 * The Seatbelt backend's plumbing, on Linux, against a stand-in for
 * /usr/bin/sandbox-exec that records what it was given and runs the job
 * unconfined. These tests prove the arguments, the constant profile, the
 * parameters and the fail-closed checks; they prove nothing about Seatbelt's
 * enforcement, which only a Mac can show (tests/macos/).
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

#include "tests/jobrun.h"
#include "tests/testutil.h"

#define SB CONFINE_BACKEND_SEATBELT

struct ctx {
	char *scratch;
	char *outside;
	char *launcher;
};

static int
setup(void **state)
{
	struct ctx *c = calloc(1, sizeof(*c));
	char *standin = tu_runfile("tests/standin-sandbox-exec.sh");

	c->scratch = tu_mkdtemp("scratch");
	c->outside = tu_mkdtemp("launcher");
	c->launcher = tu_join(c->outside, "sandbox-exec");
	tu_copy_exec(standin, c->launcher);
	free(standin);
	*state = c;
	return 0;
}

static int
teardown(void **state)
{
	struct ctx *c = *state;

	free(c->scratch);
	free(c->outside);
	free(c->launcher);
	free(c);
	return 0;
}

static char *
logged(const struct ctx *c, const char *what, size_t *len)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s.%s", c->launcher, what);
	return tu_slurp(path, len);
}

static void
run_sb(struct ctx *c, struct jr *j)
{
	j->spec.launcher = c->launcher;
	jr_run(j);
}

/* NUL-separated values, as the stand-in records them. */
static void
assert_nul_list(const char *got, size_t len, const char *const *want)
{
	size_t off = 0, i;

	for (i = 0; want[i] != NULL; i++) {
		assert_true(off < len);
		assert_string_equal(got + off, want[i]);
		off += strlen(want[i]) + 1;
	}
	assert_int_equal(off, len);
}

static char *
golden(const char *name)
{
	char rel[128], *path, *text;

	snprintf(rel, sizeof(rel), "tests/data/%s", name);
	path = tu_runfile(rel);
	text = tu_slurp(path, NULL);
	free(path);
	return text;
}

static void
job_runs_through_the_launcher_with_the_constant_profile(void **state)
{
	struct ctx *c = *state;
	char *in = tu_join(c->scratch, "f"), *profile, *want, *params, *argv;
	char param[4096], tmp[4096];
	size_t len;
	struct jr j;

	jr_init(&j, SB, c->scratch, "write", in, NULL);
	j.spec.flags |= CONFINE_NO_TMP;
	run_sb(c, &j);
	assert_outcome(&j, CONFINE_COMPLETED, CONFINE_REASON_NONE);
	assert_int_equal(j.r.backend, SB);
	assert_true(tu_exists(in));
	profile = logged(c, "profile", NULL);
	want = golden("seatbelt-0.sb");
	assert_non_null(profile);
	assert_string_equal(profile, want);
	params = logged(c, "params", &len);
	snprintf(param, sizeof(param), "CONFINE_SCRATCH=%s", c->scratch);
	snprintf(tmp, sizeof(tmp), "CONFINE_TMP=%s", c->scratch);
	assert_nul_list(params, len, (const char *const[]){ param, tmp, NULL });
	/* Under sandbox-exec the job's argv[0] is its path. */
	argv = logged(c, "argv", &len);
	assert_nul_list(argv, len,
	    (const char *const[]){ jr_fixture, "write", in, NULL });
	free(profile);
	free(want);
	free(params);
	free(argv);
	free(in);
	jr_free(&j);
}

static void
metacharacters_travel_as_a_parameter_and_the_profile_is_unchanged(void **state)
{
	struct ctx *c = *state;
	char *weird = tu_join(c->scratch, "we\"ir)d\\\nname");
	char *in = tu_join(weird, "f"), *profile, *want, *params, param[4096];
	char tmp[4096];
	size_t len;
	struct jr j;

	assert_int_equal(mkdir(weird, 0755), 0);
	jr_init(&j, SB, weird, "write", in, NULL);
	j.spec.flags |= CONFINE_NO_TMP;
	run_sb(c, &j);
	assert_outcome(&j, CONFINE_COMPLETED, CONFINE_REASON_NONE);
	assert_true(tu_exists(in));
	profile = logged(c, "profile", NULL);
	want = golden("seatbelt-0.sb");
	assert_string_equal(profile, want);
	params = logged(c, "params", &len);
	snprintf(param, sizeof(param), "CONFINE_SCRATCH=%s", weird);
	snprintf(tmp, sizeof(tmp), "CONFINE_TMP=%s", weird);
	assert_nul_list(params, len, (const char *const[]){ param, tmp, NULL });
	free(profile);
	free(want);
	free(params);
	free(weird);
	free(in);
	jr_free(&j);
}

/* The contract's /var trap: the parameter is the canonical path. */
static void
scratch_through_a_symlink_is_passed_canonical(void **state)
{
	struct ctx *c = *state;
	char *link = tu_join(c->outside, "link"), *params, param[4096];
	char tmp[4096];
	size_t len;
	struct jr j;

	assert_int_equal(symlink(c->scratch, link), 0);
	jr_init(&j, SB, link, "exit", "0", NULL);
	j.spec.flags |= CONFINE_NO_TMP;
	run_sb(c, &j);
	assert_outcome(&j, CONFINE_COMPLETED, CONFINE_REASON_NONE);
	params = logged(c, "params", &len);
	snprintf(param, sizeof(param), "CONFINE_SCRATCH=%s", c->scratch);
	snprintf(tmp, sizeof(tmp), "CONFINE_TMP=%s", c->scratch);
	assert_nul_list(params, len, (const char *const[]){ param, tmp, NULL });
	free(params);
	free(link);
	jr_free(&j);
}

static void
device_nodes_are_parameters_too(void **state)
{
	struct ctx *c = *state;
	const char *devs[] = { "/dev/zero", "/dev/full", NULL };
	char *profile, *want, *params, param[4096], tmp[4096];
	size_t len;
	struct jr j;

	jr_init(&j, SB, c->scratch, "exit", "0", NULL);
	j.spec.devices = devs;
	j.spec.flags |= CONFINE_NO_TMP;
	run_sb(c, &j);
	assert_outcome(&j, CONFINE_COMPLETED, CONFINE_REASON_NONE);
	profile = logged(c, "profile", NULL);
	want = golden("seatbelt-2.sb");
	assert_string_equal(profile, want);
	params = logged(c, "params", &len);
	snprintf(param, sizeof(param), "CONFINE_SCRATCH=%s", c->scratch);
	snprintf(tmp, sizeof(tmp), "CONFINE_TMP=%s", c->scratch);
	assert_nul_list(params, len, (const char *const[]){ param, tmp,
	    "CONFINE_DEVICE_0=/dev/zero", "CONFINE_DEVICE_1=/dev/full", NULL });
	free(profile);
	free(want);
	free(params);
	jr_free(&j);
}

/*
 * Reads narrowed: each readable tree is a parameter after the devices,
 * canonical, with no Linux system tree among them (the profile has the
 * Mac's own); the profile is the narrowed golden one.
 */
static void
readable_trees_are_parameters_too(void **state)
{
	struct ctx *c = *state;
	const char *devs[] = { "/dev/zero", NULL };
	char *link = tu_join(c->outside, "rlink"), *profile, *want, *params;
	const char *reads[] = { "/usr", link, NULL };
	char param[4096], tmp[4096], read1[4096];
	size_t len;
	struct jr j;

	assert_int_equal(symlink(c->outside, link), 0);
	jr_init(&j, SB, c->scratch, "exit", "0", NULL);
	j.spec.devices = devs;
	j.spec.readable = reads;
	j.spec.flags |= CONFINE_READ_SYSTEM | CONFINE_NO_TMP;
	run_sb(c, &j);
	assert_outcome(&j, CONFINE_COMPLETED, CONFINE_REASON_NONE);
	profile = logged(c, "profile", NULL);
	want = golden("seatbelt-read.sb");
	assert_string_equal(profile, want);
	params = logged(c, "params", &len);
	snprintf(param, sizeof(param), "CONFINE_SCRATCH=%s", c->scratch);
	snprintf(tmp, sizeof(tmp), "CONFINE_TMP=%s", c->scratch);
	snprintf(read1, sizeof(read1), "CONFINE_READ_1=%s", c->outside);
	assert_nul_list(params, len, (const char *const[]){ param, tmp,
	    "CONFINE_DEVICE_0=/dev/zero", "CONFINE_READ_0=/usr", read1, NULL });
	free(profile);
	free(want);
	free(params);
	free(link);
	jr_free(&j);
}

/*
 * A job's private tmp is the second writable tree, by parameter too: the
 * helper's tmp base's, made for the job and gone once it settled.
 */
static void
the_private_tmp_is_a_parameter(void **state)
{
	struct ctx *c = *state;
	const char *t = getenv("TMPDIR");
	char *base = realpath(t != NULL && t[0] == '/' ? t : "/tmp", NULL);
	char *params, want[4096];
	const char *tmp;
	size_t len;
	struct jr j;

	assert_non_null(base);
	jr_init(&j, SB, c->scratch, "exit", "0", NULL);
	run_sb(c, &j);
	assert_outcome(&j, CONFINE_COMPLETED, CONFINE_REASON_NONE);
	assert_int_equal(j.r.tmp_kept, 0);
	params = logged(c, "params", &len);
	tmp = params + strlen(params) + 1;
	assert_true(tmp < params + len);
	snprintf(want, sizeof(want), "CONFINE_TMP=%s/confine-tmp.", base);
	assert_int_equal(strncmp(tmp, want, strlen(want)), 0);
	assert_false(tu_exists(tmp + strlen("CONFINE_TMP=")));
	free(params);
	free(base);
	jr_free(&j);
}

/* The contract's fail-closed case: nothing spawned, nothing written. */
static void
absent_launcher_fails_closed_and_scratch_stays_empty(void **state)
{
	struct ctx *c = *state;
	char *in = tu_join(c->scratch, "f"), *missing = tu_join(c->outside, "nope");
	struct jr j;

	jr_init(&j, SB, c->scratch, "write", in, NULL);
	j.spec.launcher = missing;
	jr_run(&j);
	assert_int_equal(j.rc, -ENOTSUP);
	assert_non_null(j.why);
	assert_int_equal(tu_count_entries(c->scratch), 0);
	jr_free(&j);

	/* A directory is not a launcher either. */
	jr_init(&j, SB, c->scratch, "write", in, NULL);
	j.spec.launcher = c->outside;
	jr_run(&j);
	assert_int_equal(j.rc, -ENOTSUP);
	assert_int_equal(tu_count_entries(c->scratch), 0);
	jr_free(&j);
	free(in);
	free(missing);
}

#ifdef __linux__
/*
 * On Linux the default launcher does not exist: refused, never unconfined.
 * A Mac has it: there this case is not compiled at all (tests/macos runs
 * the real one), so `bazel test //...` neither fails nor skips it.
 */
static void
default_launcher_is_absent_here_and_refuses(void **state)
{
	struct ctx *c = *state;
	struct jr j;

	assert_false(tu_exists("/usr/bin/sandbox-exec"));
	jr_init(&j, SB, c->scratch, "exit", "0", NULL);
	jr_run(&j);
	assert_int_equal(j.rc, -ENOTSUP);
	jr_free(&j);
}
#endif

static void
missing_program_is_failed_exec_and_the_launcher_never_runs(void **state)
{
	struct ctx *c = *state;
	char *argv;
	struct jr j;

	jr_init(&j, SB, c->scratch, NULL);
	j.spec.exe = "/nonexistent/program";
	run_sb(c, &j);
	assert_outcome(&j, CONFINE_FAILED, CONFINE_REASON_EXEC);
	assert_int_equal(j.r.error, ENOENT);
	assert_int_equal(j.r.step, CONFINE_STEP_EXEC);
	argv = logged(c, "argv", NULL);
	assert_null(argv);
	jr_free(&j);
}

static void
settlement_is_the_same_through_the_launcher(void **state)
{
	struct ctx *c = *state;
	struct jr j;

	jr_init(&j, SB, c->scratch, "exit", "3", NULL);
	run_sb(c, &j);
	assert_outcome(&j, CONFINE_FAILED, CONFINE_REASON_EXIT_CODE);
	assert_int_equal(j.r.exit_code, 3);
	jr_free(&j);

	jr_init(&j, SB, c->scratch, "detach", "30000", NULL);
	run_sb(c, &j);
	assert_outcome(&j, CONFINE_UNCERTAIN, CONFINE_REASON_GROUP_STILL_PRESENT);
	assert_true(tu_gone(jr_pid(&j, 0)));
	jr_free(&j);

	jr_init(&j, SB, c->scratch, "pid-sleep", "30000", NULL);
	j.spec.deadline_ms = TU_DEADLINE_AFTER_START_MS;
	run_sb(c, &j);
	assert_outcome(&j, CONFINE_CANCELLED, CONFINE_REASON_DEADLINE);
	assert_true(j.elapsed_ms >= TU_DEADLINE_AFTER_START_MS);
	assert_true(tu_gone(jr_pid(&j, 0)));
	jr_free(&j);
}

static void
environment_and_descriptors_stay_exact_through_the_launcher(void **state)
{
	struct ctx *c = *state;
	int leak = open("/dev/null", O_RDONLY);
	struct jr j;

	assert_true(leak >= 0);
	jr_init(&j, SB, c->scratch, "env", NULL);
	run_sb(c, &j);
	assert_outcome(&j, CONFINE_COMPLETED, CONFINE_REASON_NONE);
	assert_string_equal(j.out, "");
	jr_free(&j);

	jr_init(&j, SB, c->scratch, "fds", NULL);
	run_sb(c, &j);
	assert_outcome(&j, CONFINE_COMPLETED, CONFINE_REASON_NONE);
	assert_string_equal(j.out, "");
	jr_free(&j);
	close(leak);
}

#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)

int
main(void)
{
	const struct CMUnitTest tests[] = {
		T(job_runs_through_the_launcher_with_the_constant_profile),
		T(metacharacters_travel_as_a_parameter_and_the_profile_is_unchanged),
		T(scratch_through_a_symlink_is_passed_canonical),
		T(device_nodes_are_parameters_too),
		T(readable_trees_are_parameters_too),
		T(the_private_tmp_is_a_parameter),
		T(absent_launcher_fails_closed_and_scratch_stays_empty),
#ifdef __linux__
		T(default_launcher_is_absent_here_and_refuses),
#endif
		T(missing_program_is_failed_exec_and_the_launcher_never_runs),
		T(settlement_is_the_same_through_the_launcher),
		T(environment_and_descriptors_stay_exact_through_the_launcher),
	};

	jr_setup();
	return cmocka_run_group_tests_name("seatbelt-plumbing", tests, NULL, NULL);
}
