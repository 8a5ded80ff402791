/* A Run request checked and planned as text (bb/request.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bb/request.h"

static const char *const argv_cc[] = { "cc", "-c", "x.c", NULL };
static const char *const names[] = { "PATH", "LANG", NULL };
static const char *const values[] = { "/usr/bin:/bin", "C", NULL };

/* What bb_worker sends for action 17. */
static struct bbreq
worker_request(void)
{
	struct bbreq r;

	memset(&r, 0, sizeof(r));
	r.argv = argv_cc;
	r.argc = 3;
	r.env_names = names;
	r.env_values = values;
	r.nenv = 2;
	r.working_directory = "";
	r.stdout_path = "17/stdout";
	r.stderr_path = "17/stderr";
	r.input_root_directory = "17/root";
	r.temporary_directory = "17/tmp";
	r.server_logs_directory = "17/server_logs";
	return r;
}

static int
plan(const struct bbreq *r, struct bbreq_plan *p, char *why)
{
	return bbreq_make_plan(r, "/build", p, why, 512);
}

static void
refused(const struct bbreq *r, const char *why_has)
{
	struct bbreq_plan p;
	char why[512];

	assert_int_equal(plan(r, &p, why), -EINVAL);
	if (strstr(why, why_has) == NULL)
		fail_msg("\"%s\" does not say \"%s\"", why, why_has);
}

static void
a_workers_request_is_planned_in_its_action_directory(void **state)
{
	struct bbreq r = worker_request();
	struct bbreq_plan p;
	char why[512];

	(void)state;
	r.working_directory = "pkg/./sub/";
	assert_int_equal(plan(&r, &p, why), 0);
	assert_string_equal(p.input_root, "17/root");
	assert_string_equal(p.cwd, "17/root/pkg/sub");
	assert_string_equal(p.stdout_path, "17/stdout");
	assert_string_equal(p.stderr_path, "17/stderr");
	assert_string_equal(p.tmp, "17/tmp");
	/* Its own directory, never the build directory. */
	assert_string_equal(p.scratch, "17");
	assert_string_equal(p.tmpdir_env, "TMPDIR=/build/17/tmp");
	assert_string_equal(p.path_var, "/usr/bin:/bin");
}

static void
without_a_temporary_directory_the_input_root_is_the_scratch(void **state)
{
	struct bbreq r = worker_request();
	struct bbreq_plan p;
	char why[512];

	(void)state;
	r.temporary_directory = "";
	r.nenv = 1;
	r.env_names = (const char *const[]){ "LANG", NULL };
	assert_int_equal(plan(&r, &p, why), 0);
	assert_string_equal(p.scratch, "17/root");
	assert_string_equal(p.tmpdir_env, "");
	assert_null(p.path_var);
}

static void
empty_argv_is_refused(void **state)
{
	struct bbreq r = worker_request();

	(void)state;
	r.argc = 0;
	r.argv = (const char *const[]){ NULL };
	refused(&r, "Insufficient number of command arguments");
	r.argc = 1;
	r.argv = (const char *const[]){ "", NULL };
	refused(&r, "arguments[0] is empty");
}

static void
paths_leaving_the_build_directory_are_refused(void **state)
{
	static const struct {
		size_t field;
		const char *value, *why;
	} cases[] = {
		{ offsetof(struct bbreq, input_root_directory), "/etc", "input_root_directory \"/etc\" is absolute" },
		{ offsetof(struct bbreq, input_root_directory), "../x/root", "input_root_directory \"../x/root\" climbs" },
		{ offsetof(struct bbreq, input_root_directory), "17/../../root", "climbs" },
		{ offsetof(struct bbreq, working_directory), "/tmp", "working_directory \"/tmp\" is absolute" },
		{ offsetof(struct bbreq, working_directory), "..", "working_directory \"..\" climbs" },
		{ offsetof(struct bbreq, working_directory), "a/../../..", "climbs" },
		{ offsetof(struct bbreq, stdout_path), "/tmp/out", "stdout_path \"/tmp/out\" is absolute" },
		{ offsetof(struct bbreq, stdout_path), "../out", "stdout_path \"../out\" climbs" },
		{ offsetof(struct bbreq, stdout_path), "", "stdout_path \"\" names the build directory" },
		{ offsetof(struct bbreq, stderr_path), "17/..", "stderr_path \"17/..\" names the build directory" },
		{ offsetof(struct bbreq, stderr_path), "/dev/null", "absolute" },
		{ offsetof(struct bbreq, temporary_directory), "/tmp", "temporary_directory \"/tmp\" is absolute" },
		{ offsetof(struct bbreq, temporary_directory), "../tmp", "climbs" },
		{ offsetof(struct bbreq, server_logs_directory), "/var/log", "server_logs_directory \"/var/log\" is absolute" },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct bbreq r = worker_request();

		memcpy((char *)&r + cases[i].field, &cases[i].value,
		    sizeof(const char *));
		refused(&r, cases[i].why);
	}
}

static void
an_action_directory_that_is_the_build_directory_is_refused(void **state)
{
	struct bbreq r = worker_request();

	(void)state;
	/* root and tmp side by side in the build directory itself. */
	r.input_root_directory = "root";
	r.temporary_directory = "tmp";
	refused(&r, "share no directory beneath the build directory");
	r.input_root_directory = "17/root";
	r.temporary_directory = "18/tmp";
	refused(&r, "share no directory");
	r.input_root_directory = "";
	r.temporary_directory = "";
	refused(&r, "share no directory");
}

static void
environment_names_are_checked(void **state)
{
	struct bbreq r = worker_request();

	(void)state;
	r.nenv = 1;
	r.env_values = (const char *const[]){ "v", NULL };
	r.env_names = (const char *const[]){ "", NULL };
	refused(&r, "environment variable name \"\"");
	r.env_names = (const char *const[]){ "A=B", NULL };
	refused(&r, "environment variable name \"A=B\"");
}

static void
the_environment_is_the_requests_and_tmpdir(void **state)
{
	struct bbreq r = worker_request();
	struct bbreq_plan p;
	char why[512], **envp;

	(void)state;
	assert_int_equal(plan(&r, &p, why), 0);
	envp = bbreq_envp(&r, &p);
	assert_non_null(envp);
	assert_string_equal(envp[0], "PATH=/usr/bin:/bin");
	assert_string_equal(envp[1], "LANG=C");
	assert_string_equal(envp[2], "TMPDIR=/build/17/tmp");
	assert_null(envp[3]);
	free(envp);

	/* The request's own TMPDIR wins, as it does in bb_runner. */
	r.nenv = 1;
	r.env_names = (const char *const[]){ "TMPDIR", NULL };
	r.env_values = (const char *const[]){ "/elsewhere", NULL };
	assert_int_equal(plan(&r, &p, why), 0);
	envp = bbreq_envp(&r, &p);
	assert_non_null(envp);
	assert_string_equal(envp[0], "TMPDIR=/elsewhere");
	assert_null(envp[1]);
	free(envp);

	/* Nothing at all, when the request has nothing and no tmp. */
	r.nenv = 0;
	r.temporary_directory = "";
	assert_int_equal(plan(&r, &p, why), 0);
	envp = bbreq_envp(&r, &p);
	assert_non_null(envp);
	assert_null(envp[0]);
	free(envp);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(a_workers_request_is_planned_in_its_action_directory),
		cmocka_unit_test(without_a_temporary_directory_the_input_root_is_the_scratch),
		cmocka_unit_test(empty_argv_is_refused),
		cmocka_unit_test(paths_leaving_the_build_directory_are_refused),
		cmocka_unit_test(an_action_directory_that_is_the_build_directory_is_refused),
		cmocka_unit_test(environment_names_are_checked),
		cmocka_unit_test(the_environment_is_the_requests_and_tmpdir),
	};

	return cmocka_run_group_tests_name("bb_request", tests, NULL, NULL);
}
