/* The Seatbelt profile compiler and the spec checks. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "helper/backend/policy.h"
#include "src/core/spec.h"
#include "tests/testutil.h"

static char *
golden(const char *name)
{
	char rel[128], *path, *text;

	snprintf(rel, sizeof(rel), "tests/data/%s", name);
	path = tu_runfile(rel);
	text = tu_slurp(path, NULL);
	free(path);
	assert_non_null(text);
	return text;
}

/* A policy of n devices (and r readable trees, narrowed when r >= 0). */
static struct policy
counts(size_t n, int r, bool system)
{
	struct policy p = { .scratch = "/s", .ndevices = n };

	if (r >= 0) {
		p.read_narrow = true;
		p.nreadable = (size_t)r;
		p.read_system = system;
	}
	return p;
}

static int
profile(size_t n, int r, bool system, char *buf, size_t size)
{
	struct policy p = counts(n, r, system);

	return policy_sbpl_profile(&p, buf, size);
}

static void
profile_matches_the_golden_text(void **state)
{
	static const struct { const char *file; size_t n; int r; bool sys; } g[] = {
		{ "seatbelt-0.sb", 0, -1, false },
		{ "seatbelt-2.sb", 2, -1, false },
		{ "seatbelt-read.sb", 1, 2, true },
	};
	char buf[16384], *want;
	size_t i;
	int n;

	(void)state;
	for (i = 0; i < sizeof(g) / sizeof(g[0]); i++) {
		want = golden(g[i].file);
		n = profile(g[i].n, g[i].r, g[i].sys, buf, sizeof(buf));
		assert_int_equal(n, (int)strlen(want));
		assert_string_equal(buf, want);
		free(want);
	}
}

/* Narrowed: no read and no exec but per tree; metadata everywhere. */
static void
a_narrowed_profile_grants_reads_per_tree(void **state)
{
	char buf[16384];

	(void)state;
	assert_true(profile(0, 1, false, buf, sizeof(buf)) > 0);
	assert_null(strstr(buf, "(allow file-read*)\n"));
	assert_null(strstr(buf, "(allow process-exec)\n"));
	assert_non_null(strstr(buf, "(allow file-read-metadata)\n"));
	assert_non_null(strstr(buf, "(allow file-read* process-exec (subpath "
	    "(param \"CONFINE_READ_0\")))\n"));
	assert_null(strstr(buf, "CONFINE_READ_1"));
	assert_null(strstr(buf, "\"/System\""));
	assert_true(profile(0, 0, true, buf, sizeof(buf)) > 0);
	assert_non_null(strstr(buf, "(subpath \"/System\")"));
	/* The most the spec allows still fits. */
	assert_true(profile(SPEC_MAX_DEVICES, SPEC_MAX_READABLE, true, buf,
	    sizeof(buf)) > 0);
	assert_int_equal(profile(0, SPEC_MAX_READABLE + 1, true, buf,
	    sizeof(buf)), -ENOSPC);
}

static void
profile_keeps_the_contract_rules(void **state)
{
	static const char *const rules[] = {
		"(version 1)\n", "(deny default)\n", "(allow process-exec)\n",
		"(allow process-fork)\n", "(allow file-read*)\n",
		"(allow sysctl-read)\n", "(allow mach-lookup)\n",
		"(allow file-write* (subpath (param \"CONFINE_SCRATCH\")))\n",
	};
	char buf[4096];
	size_t i;

	(void)state;
	assert_true(profile(0, -1, false, buf, sizeof(buf)) > 0);
	for (i = 0; i < sizeof(rules) / sizeof(rules[0]); i++)
		assert_non_null(strstr(buf, rules[i]));
	/* Nothing grants the network. */
	assert_null(strstr(buf, "network"));
}

static void
profile_refuses_a_small_buffer(void **state)
{
	char buf[64];

	(void)state;
	assert_int_equal(profile(0, -1, false, buf, sizeof(buf)), -ENOSPC);
	assert_int_equal(profile(SPEC_MAX_DEVICES + 1, -1, false, buf,
	    sizeof(buf)), -ENOSPC);
}

/* A hostile scratch root travels as a parameter; the text never changes. */
static void
argv_carries_paths_as_parameters_only(void **state)
{
	static const char evil[] = "/tmp/a\"))(allow network*)(x \"\\\nb";
	const char *devs[] = { "/dev/tty\"x", NULL };
	struct policy p = { .scratch = evil, .devices = devs, .ndevices = 1 };
	const char *argv[] = { "name", "one", "two", NULL };
	char **v, want[4096];

	(void)state;
	assert_int_equal(policy_sbpl_argv(&p, "/usr/bin/sandbox-exec",
	    "/bin/job", argv, 3, &v), 0);
	assert_true(policy_sbpl_profile(&p, want, sizeof(want)) > 0);
	assert_string_equal(v[0], "/usr/bin/sandbox-exec");
	assert_string_equal(v[1], "-p");
	assert_string_equal(v[2], want);
	assert_null(strstr(v[2], "/tmp"));
	assert_string_equal(v[3], "-D");
	assert_string_equal(v[4], "CONFINE_SCRATCH=/tmp/a\"))(allow network*)(x \"\\\nb");
	/* No private tmp: the scratch root again, so the text is the same. */
	assert_string_equal(v[5], "-D");
	assert_string_equal(v[6], "CONFINE_TMP=/tmp/a\"))(allow network*)(x \"\\\nb");
	assert_string_equal(v[7], "-D");
	assert_string_equal(v[8], "CONFINE_DEVICE_0=/dev/tty\"x");
	assert_string_equal(v[9], "--");
	assert_string_equal(v[10], "/bin/job");
	assert_string_equal(v[11], "one");
	assert_string_equal(v[12], "two");
	assert_null(v[13]);
	free(v);
}

static void
spec_base(struct confine_spec *s)
{
	static const char *const argv[] = { "job", NULL };

	memset(s, 0, sizeof(*s));
	s->exe = "/bin/true";
	s->argv = argv;
	s->scratch = "/tmp";
	s->backend = CONFINE_BACKEND_LANDLOCK;
	s->stdin_fd = s->stdout_fd = s->stderr_fd = -1;
}

static void
spec_accepts_a_plain_job(void **state)
{
	const char *why;
	struct confine_spec s;

	(void)state;
	spec_base(&s);
	assert_int_equal(spec_check(&s, &why), 0);
	assert_null(why);
	assert_false(spec_narrow(&s));
	/* No argv is { exe }; an empty one is the same. */
	s.argv = NULL;
	assert_int_equal(spec_check(&s, &why), 0);
	/* Without a scratch root only the none backend runs. */
	s.scratch = NULL;
	s.backend = CONFINE_BACKEND_NONE;
	assert_int_equal(spec_check(&s, &why), 0);
}

#define REFUSED(field_change) do {                         \
		struct confine_spec s;                             \
		const char *why;                           \
		spec_base(&s);                             \
		field_change;                              \
		assert_int_equal(spec_check(&s, &why), -EINVAL); \
		assert_non_null(why);                      \
	} while (0)

static void
spec_refuses_bad_fields(void **state)
{
	static const char *const env_bad[] = { "NOEQUALS", NULL };
	static const char *const env_noname[] = { "=x", NULL };
	static const char *const devs[] = { "dev/null", NULL };
	static const char *const rel[] = { "usr", NULL };
	static const char *const abs[] = { "/usr", NULL };
	const char *many[SPEC_MAX_READABLE + 2];
	char longpath[PATH_MAX + 8];
	size_t i;

	(void)state;
	for (i = 0; i < SPEC_MAX_READABLE + 1; i++)
		many[i] = "/dev/null";
	many[i] = NULL;
	memset(longpath, 'a', sizeof(longpath) - 1);
	longpath[0] = '/';
	longpath[sizeof(longpath) - 1] = '\0';
	REFUSED(s.exe = "bin/true");
	REFUSED(s.exe = NULL);
	REFUSED(s.exe = longpath);
	REFUSED(s.scratch = "tmp");
	REFUSED(s.scratch = "");
	REFUSED(s.scratch = NULL);
	REFUSED(s.cwd = "relative");
	REFUSED(s.envp = env_bad);
	REFUSED(s.envp = env_noname);
	REFUSED(s.devices = devs);
	REFUSED(s.devices = many + SPEC_MAX_READABLE - SPEC_MAX_DEVICES);
	REFUSED(s.launcher = "sandbox-exec");
	REFUSED(s.deadline_ms = -1);
	REFUSED(s.deadline_ms = SPEC_MAX_MS + 1);
	REFUSED(s.grace_ms = -5);
	REFUSED(s.backend = (enum confine_backend)7);
	REFUSED(s.stdout_fd = -2);
	REFUSED(s.readable = rel);
	REFUSED(s.readable = many);
	REFUSED(s.flags = 0x100);
	/* Backend none narrows nothing, by a list or the system trees. */
	REFUSED((s.backend = CONFINE_BACKEND_NONE, s.readable = abs));
	REFUSED((s.backend = CONFINE_BACKEND_NONE,
	    s.flags = CONFINE_READ_SYSTEM));
}

static void
spec_accepts_narrowed_reads(void **state)
{
	static const char *const abs[] = { "/usr", "/etc/passwd", NULL };
	const char *why;
	struct confine_spec s;

	static const char *const none[] = { NULL };

	(void)state;
	spec_base(&s);
	s.readable = none;
	assert_true(spec_narrow(&s));
	assert_int_equal(spec_check(&s, &why), 0);
	s.readable = abs;
	s.flags = CONFINE_READ_SYSTEM;
	assert_int_equal(spec_check(&s, &why), 0);
	s.readable = NULL;
	assert_true(spec_narrow(&s));
	assert_int_equal(spec_check(&s, &why), 0);
}

/* Readable trees travel as parameters too, after the devices. */
static void
argv_carries_readable_trees_as_parameters(void **state)
{
	static const char evil[] = "/r\"))(allow file-write*)(x \"";
	const char *reads[] = { "/usr", evil, NULL };
	struct policy p = { .scratch = "/s", .read_narrow = true,
		.readable = reads, .nreadable = 2 };
	const char *argv[] = { "name", NULL };
	char **v, want[16384];

	(void)state;
	assert_int_equal(policy_sbpl_argv(&p, "/l", "/bin/job", argv, 1, &v), 0);
	assert_true(policy_sbpl_profile(&p, want, sizeof(want)) > 0);
	assert_string_equal(v[2], want);
	assert_null(strstr(v[2], "/r"));
	assert_string_equal(v[7], "-D");
	assert_string_equal(v[8], "CONFINE_READ_0=/usr");
	assert_string_equal(v[9], "-D");
	assert_string_equal(v[10], "CONFINE_READ_1=/r\"))(allow file-write*)(x \"");
	assert_string_equal(v[11], "--");
	assert_string_equal(v[12], "/bin/job");
	assert_null(v[13]);
	free(v);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(profile_matches_the_golden_text),
		cmocka_unit_test(profile_keeps_the_contract_rules),
		cmocka_unit_test(profile_refuses_a_small_buffer),
		cmocka_unit_test(argv_carries_paths_as_parameters_only),
		cmocka_unit_test(spec_accepts_a_plain_job),
		cmocka_unit_test(spec_refuses_bad_fields),
		cmocka_unit_test(spec_accepts_narrowed_reads),
		cmocka_unit_test(argv_carries_readable_trees_as_parameters),
		cmocka_unit_test(a_narrowed_profile_grants_reads_per_tree),
	};

	return cmocka_run_group_tests_name("policy", tests, NULL, NULL);
}
