/* confine-run's pure parts: durations, exit statuses, summaries, JSON. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/cli.h"

static struct confine_result
result(enum confine_outcome o, enum confine_reason why)
{
	struct confine_result r;

	memset(&r, 0, sizeof(r));
	r.outcome = o;
	r.reason = why;
	r.exit_code = -1;
	r.pid = 4242;
	r.pgid = 4241;
	r.backend = CONFINE_BACKEND_LANDLOCK;
	return r;
}

static struct confine_result
exited(int code)
{
	struct confine_result r = result(
	    code ? CONFINE_FAILED : CONFINE_COMPLETED,
	    code ? CONFINE_REASON_EXIT_CODE : CONFINE_REASON_NONE);

	r.exit_code = code;
	return r;
}

static struct confine_result
exec_failed(int err, enum confine_step step)
{
	struct confine_result r = result(CONFINE_FAILED, CONFINE_REASON_EXEC);

	r.error = err;
	r.step = step;
	return r;
}

/* What f wrote, as a string the caller frees. */
static char *
captured(void (*fn)(FILE *, const void *), const void *arg)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	fn(f, arg);
	assert_int_equal(fclose(f), 0);
	return buf;
}

static void
write_json(FILE *f, const void *r)
{
	assert_int_equal(cli_json(f, r, NULL, NULL), 0);
}

static void
write_string(FILE *f, const void *s)
{
	cli_json_string(f, s);
}

static void
durations_in_each_unit(void **state)
{
	static const struct {
		const char *s;
		int64_t ms;
	} ok[] = {
		{ "250ms", 250 }, { "10s", 10000 }, { "2m", 120000 },
		{ "1h", 3600000 }, { "0s", 0 }, { "007ms", 7 },
		{ "9223372036854775807ms", INT64_MAX },
	};
	const char *why;
	int64_t ms;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		ms = -1;
		assert_int_equal(cli_duration(ok[i].s, &ms, &why), 0);
		assert_int_equal(ms, ok[i].ms);
		assert_null(why);
	}
}

static void
bad_durations_say_why(void **state)
{
	static const struct {
		const char *s;
		int rc;
		const char *why;
	} bad[] = {
		{ "", -EINVAL, "empty" },
		{ "10", -EINVAL, "no unit" },
		{ "10x", -EINVAL, "unknown unit" },
		{ "10sec", -EINVAL, "unknown unit" },
		{ "5 s", -EINVAL, "unknown unit" },
		{ "1.5s", -EINVAL, "not a whole number" },
		{ "-5s", -EINVAL, "not a whole number with a unit" },
		{ " 5s", -EINVAL, "not a whole number with a unit" },
		{ "s", -EINVAL, "not a whole number with a unit" },
		{ "9223372036854775808ms", -ERANGE, "too large" },
		{ "9223372036854775807s", -ERANGE, "too large" },
		{ "153722867280912931m", -ERANGE, "too large" },
	};
	const char *why;
	int64_t ms;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ms = 17;
		assert_int_equal(cli_duration(bad[i].s, &ms, &why), bad[i].rc);
		assert_non_null(why);
		assert_non_null(strstr(why, bad[i].why));
		assert_int_equal(ms, 17);
	}
}

/* A result by the fields that matter here; row() fills in the rest. */
struct row {
	enum confine_outcome outcome;
	enum confine_reason reason;
	int exit_code, signal, error;
	enum confine_step step;
};

#define ROW(o, why, code, sig, err, step) { CONFINE_##o, CONFINE_REASON_##why, \
	(code), (sig), (err), CONFINE_STEP_##step }

static struct confine_result
row(const struct row *w)
{
	struct confine_result r = result(w->outcome, w->reason);

	r.exit_code = w->exit_code;
	r.signal = w->signal;
	r.error = w->error;
	r.step = w->step;
	return r;
}

static void
sizes_and_counts(void **state)
{
	static const struct {
		const char *s;
		int64_t v;
	} ok[] = {
		{ "4096", 4096 }, { "512K", 512 << 10 }, { "64M", 64 << 20 },
		{ "2G", INT64_C(2) << 30 }, { "1T", INT64_C(1) << 40 },
		{ "9223372036854775807", INT64_MAX },
	};
	static const struct {
		const char *s;
		int rc;
		const char *why;
	} bad[] = {
		{ "", -EINVAL, "empty" },
		{ "0", -EINVAL, "zero" },
		{ "0M", -EINVAL, "zero" },
		{ "-5", -EINVAL, "not a whole number" },
		{ "1.5M", -EINVAL, "unknown unit" },
		{ "10X", -EINVAL, "unknown unit" },
		{ "10MB", -EINVAL, "unknown unit" },
		{ "9223372036854775808", -ERANGE, "too large" },
		{ "8388608T", -ERANGE, "too large" },
	};
	const char *why;
	int64_t v;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		assert_int_equal(cli_size(ok[i].s, &v, &why), 0);
		assert_int_equal(v, ok[i].v);
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(cli_size(bad[i].s, &v, &why), bad[i].rc);
		assert_non_null(strstr(why, bad[i].why));
	}
	assert_int_equal(cli_count("64", &v, &why), 0);
	assert_int_equal(v, 64);
	assert_int_equal(cli_count("64K", &v, &why), -EINVAL);
	assert_int_equal(cli_count("0", &v, &why), -EINVAL);
}

/* The bounds' options, each into its own field, shared with the runner. */
static void
bounds_by_option_name(void **state)
{
	struct confine_limits l;
	const char *why;

	(void)state;
	memset(&l, 0, sizeof(l));
	assert_int_equal(cli_bound("cpu", "2m", &l, &why), 0);
	assert_int_equal(cli_bound("memory", "64M", &l, &why), 0);
	assert_int_equal(cli_bound("address-space", "1G", &l, &why), 0);
	assert_int_equal(cli_bound("file-size", "4096", &l, &why), 0);
	assert_int_equal(cli_bound("open-files", "64", &l, &why), 0);
	assert_int_equal(cli_bound("processes", "8", &l, &why), 0);
	assert_int_equal(l.cpu_seconds, 120);
	assert_int_equal(l.memory, 64 << 20);
	assert_int_equal(l.address_space, 1 << 30);
	assert_int_equal(l.file_size, 4096);
	assert_int_equal(l.open_files, 64);
	assert_int_equal(l.processes, 8);
	assert_int_equal(cli_bound("cpu", "1500ms", &l, &why), -EINVAL);
	assert_string_equal(why, "not a whole number of seconds");
	assert_int_equal(cli_bound("cpu", "0s", &l, &why), -EINVAL);
	assert_int_equal(cli_bound("open-files", "1K", &l, &why), -EINVAL);
	assert_int_equal(cli_bound("memory", "lots", &l, &why), -EINVAL);
	assert_int_equal(cli_bound("deadline", "1s", &l, &why), -ENOENT);
}

static void
exit_statuses_for_every_outcome(void **state)
{
	/* The statuses as the manual gives them, not as cli.h names them. */
	static const struct {
		int status;
		struct row r;
	} cases[] = {
		{ 0, ROW(COMPLETED, NONE, 0, 0, 0, NONE) },
		{ 3, ROW(FAILED, EXIT_CODE, 3, 0, 0, NONE) },
		{ 255, ROW(FAILED, EXIT_CODE, 255, 0, 0, NONE) },
		{ 128 + SIGKILL, ROW(FAILED, SIGNAL, -1, SIGKILL, 0, NONE) },
		{ 128 + SIGTERM, ROW(FAILED, SIGNAL, -1, SIGTERM, 0, NONE) },
		/* 127 only for a program that is not there. */
		{ 127, ROW(FAILED, EXEC, -1, 0, ENOENT, EXEC) },
		{ 126, ROW(FAILED, EXEC, -1, 0, EACCES, EXEC) },
		{ 126, ROW(FAILED, EXEC, -1, 0, ENOENT, CWD) },
		{ 126, ROW(FAILED, EXEC, -1, 0, ENOTSUP, CONFINE) },
		{ 124, ROW(CANCELLED, DEADLINE, -1, 0, 0, NONE) },
		{ 124, ROW(CANCELLED, CANCELLED, -1, 0, 0, NONE) },
		{ 123, ROW(UNCERTAIN, WAIT_FAILED, -1, 0, EINTR, NONE) },
		/* It exited 0, but did not settle. */
		{ 123, ROW(UNCERTAIN, GROUP_STILL_PRESENT, 0, 0, 0, NONE) },
		{ 123, ROW(UNCERTAIN, KILL_AMBIGUOUS, -1, 0, EPERM, NONE) },
		{ 123, ROW(UNCERTAIN, HELPER_LOST, -1, 0, 0, NONE) },
		/* What it cannot explain is never success, nor the job's own. */
		{ 125, { 0, CONFINE_REASON_NONE, 0, 0, 0, 0 } },
		{ 125, { 99, CONFINE_REASON_NONE, 0, 0, 0, 0 } },
		{ 125, ROW(FAILED, EXIT_CODE, 0, 0, 0, NONE) },
		{ 125, ROW(FAILED, SIGNAL, -1, 0, 0, NONE) },
		{ 125, ROW(FAILED, DEADLINE, -1, 0, 0, NONE) },
	};
	struct confine_result r;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		r = row(&cases[i].r);
		assert_int_equal(cli_exit_status(&r), cases[i].status);
	}
}

static void
summary_says_what_happened(void **state)
{
	static const struct cli_context full = { .exe = "/bin/x",
	    .cwd = "/s/sub", .deadline = "500ms", .signal = SIGINT };
	static const struct cli_context none = { 0 };
	static const struct cli_context unfound = { .exe = "cc", .unfound = 1 };
	static const struct cli_context exists = { .exe = "/s/run.sh",
	    .exists = 1 };
	static const struct cli_context relative = { .exe = "/w/bin/x",
	    .given = "bin/x" };
	static const struct {
		const struct cli_context *ctx;
		struct row r;
		const char *want;    /* for a signal, the start: strsignal's */
	} cases[] = {
		{ &full, ROW(COMPLETED, NONE, 0, 0, 0, NONE), "completed" },
		{ &full, ROW(FAILED, EXIT_CODE, 3, 0, 0, NONE),
		    "failed: exit code 3" },
		{ &full, ROW(FAILED, SIGNAL, -1, SIGKILL, 0, NONE),
		    "failed: killed by signal 9 (" },
		{ &full, ROW(FAILED, EXEC, -1, 0, ENOENT, EXEC),
		    "failed: cannot run /bin/x: exec: No such file or directory" },
		/* A name looked for along PATH and found nowhere. */
		{ &unfound, ROW(FAILED, EXEC, -1, 0, ENOENT, EXEC),
		    "failed: cannot run cc: exec: not found in PATH; give its "
		    "absolute path, or put its directory in confine-run's PATH" },
		{ &unfound, ROW(FAILED, EXEC, -1, 0, EACCES, EXEC),
		    "failed: cannot run cc: exec: Permission denied; the job's "
		    "user may not execute it: chmod +x it, run it through its "
		    "interpreter, or check the directories above it" },
		/* It is there: what it needs is not. */
		{ &exists, ROW(FAILED, EXEC, -1, 0, ENOENT, EXEC),
		    "failed: cannot run /s/run.sh: exec: No such file or "
		    "directory; it exists, so what it needs does not: a "
		    "script's #! interpreter, or a program's loader or "
		    "libraries" },
		{ &relative, ROW(FAILED, EXEC, -1, 0, ENOENT, EXEC),
		    "failed: cannot run /w/bin/x: exec: No such file or "
		    "directory; a relative path is taken from confine-run's "
		    "working directory, not the job's" },
		{ &exists, ROW(FAILED, EXEC, -1, 0, ENOEXEC, EXEC),
		    "failed: cannot run /s/run.sh: exec: Exec format error; not "
		    "a program the kernel runs: a script needs a #! line" },
		{ &full, ROW(FAILED, EXEC, -1, 0, ENOENT, CWD),
		    "failed: cannot run /bin/x: cwd /s/sub: No such file or "
		    "directory; -C must name a directory the job's user may "
		    "enter" },
		{ &full, ROW(FAILED, EXEC, -1, 0, EBADF, STDIO),
		    "failed: cannot run /bin/x: stdio: Bad file descriptor" },
		{ &full, ROW(FAILED, EXEC, -1, 0, EPERM, CONFINE),
		    "failed: cannot run /bin/x: confine: Operation not "
		    "permitted" },
		{ &full, ROW(CANCELLED, DEADLINE, -1, 0, 0, NONE),
		    "cancelled: the deadline of 500ms passed" },
		{ &full, ROW(CANCELLED, CANCELLED, -1, 0, 0, NONE),
		    "cancelled: confine-run got SIGINT" },
		{ &full, ROW(UNCERTAIN, GROUP_STILL_PRESENT, 0, 0, 0, NONE),
		    "uncertain: something the job started outlived it, "
		    "and was killed" },
		{ &full, ROW(UNCERTAIN, KILL_AMBIGUOUS, -1, 0, EPERM, NONE),
		    "uncertain: killing its process group failed "
		    "(Operation not permitted)" },
		{ &full, ROW(UNCERTAIN, WAIT_FAILED, -1, 0, EINTR, NONE),
		    "uncertain: the job could not be observed "
		    "(Interrupted system call)" },
		{ &full, ROW(UNCERTAIN, HELPER_LOST, -1, 0, 0, NONE),
		    "uncertain: the helper died" },
		{ &full, { CONFINE_UNCERTAIN, 99, -1, 0, 0, CONFINE_STEP_NONE },
		    "uncertain (unknown)" },
		/* Without what confine-run knows, it still reads. */
		{ &none, ROW(CANCELLED, DEADLINE, -1, 0, 0, NONE),
		    "cancelled: the deadline passed" },
		{ &none, ROW(CANCELLED, CANCELLED, -1, 0, 0, NONE),
		    "cancelled" },
		{ &none, ROW(FAILED, EXEC, -1, 0, ENOENT, EXEC),
		    "failed: cannot start: No such file or directory "
		    "(step exec)" },
	};
	struct confine_result r;
	char buf[512];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		r = row(&cases[i].r);
		cli_summary(buf, sizeof(buf), &r, cases[i].ctx, 0);
		if (cases[i].r.reason == CONFINE_REASON_SIGNAL)
			buf[strlen(cases[i].want)] = '\0';
		assert_string_equal(buf, cases[i].want);
	}
	/* Truncated, never overrun. */
	r = exited(0);
	cli_summary(buf, 5, &r, &none, 1);
	assert_string_equal(buf, "comp");
}

static void
verbose_summary_adds_ids_times_and_memory(void **state)
{
	struct cli_context ctx = { 0 };
	struct confine_result r = exited(0);
	char buf[512];

	(void)state;
	r.wall_us = 1234567;
	r.user_us = 5;
	r.sys_us = 1000;
	r.max_rss_kib = 2048;
	cli_summary(buf, sizeof(buf), &r, &ctx, 1);
	assert_string_equal(buf, "completed; pid 4242, pgid 4241, landlock, "
	    "wall 1234.567 ms, user 0.005 ms, sys 1.000 ms, max rss 2048 KiB; "
	    "reads everywhere");
}

static void
json_has_every_field_in_order(void **state)
{
	struct confine_result r = exited(0);
	char *s;

	(void)state;
	r.proof = CONFINE_PROOF_PGID;
	r.wall_us = 2500;
	r.user_us = 1001;
	r.sys_us = 0;
	r.max_rss_kib = 1536;
	s = captured(write_json, &r);
	assert_string_equal(s, "{\"outcome\":\"completed\",\"reason\":null,"
	    "\"exit_code\":0,\"signal\":0,\"errno\":0,\"step\":null,"
	    "\"pid\":4242,\"pgid\":4241,\"backend\":\"landlock\","
	    "\"proof\":\"pgid\",\"scratch_kept\":false,\"tmp_kept\":false,"
	    "\"wall_ms\":2.500,"
	    "\"user_ms\":1.001,\"sys_ms\":0.000,\"max_rss_kib\":1536,\"reads\":\"everywhere\"}\n");
	free(s);
}

static const char *const read_trees[] = { "/src", "/a\"b", NULL };
static const struct cli_reads narrowed_reads = { 1, 1, read_trees };

static void
write_json_narrowed(FILE *f, const void *r)
{
	assert_int_equal(cli_json(f, r, &narrowed_reads, NULL), 0);
}

/* The read policy that ran, last: the system trees, then each, escaped. */
static void
json_says_which_reads_ran(void **state)
{
	static const struct cli_reads own = { 1, 0, NULL };
	struct confine_result r = exited(0);
	struct cli_context ctx = { .reads = &narrowed_reads };
	char *s, buf[512];

	(void)state;
	s = captured(write_json_narrowed, &r);
	assert_non_null(strstr(s, ",\"reads\":[\"system\",\"/src\","
	    "\"/a\\\"b\"]}\n"));
	free(s);
	cli_summary(buf, sizeof(buf), &r, &ctx, 1);
	assert_non_null(strstr(buf, "KiB; reads its own trees, system, /src, "
	    "/a\"b"));
	ctx.reads = &own;
	cli_summary(buf, sizeof(buf), &r, &ctx, 1);
	assert_non_null(strstr(buf, "KiB; reads its own trees"));
	assert_null(strstr(buf, "system"));
	/* Not verbose: not a word of it. */
	cli_summary(buf, sizeof(buf), &r, &ctx, 0);
	assert_string_equal(buf, "completed");
}

static void
json_of_a_failed_start(void **state)
{
	struct confine_result r = exec_failed(ENOENT, CONFINE_STEP_EXEC);
	char *s;

	(void)state;
	r.backend = CONFINE_BACKEND_NONE;
	r.scratch_kept = 1;
	r.tmp_kept = 1;
	r.wall_us = -1500;
	s = captured(write_json, &r);
	/* backend none is a backend: only fields that do not apply are null. */
	assert_string_equal(s, "{\"outcome\":\"failed\",\"reason\":\"exec\","
	    "\"exit_code\":-1,\"signal\":0,\"errno\":2,\"step\":\"exec\","
	    "\"pid\":4242,\"pgid\":4241,\"backend\":\"none\",\"proof\":null,"
	    "\"scratch_kept\":true,\"tmp_kept\":true,\"wall_ms\":-1.500,"
	    "\"user_ms\":0.000,"
	    "\"sys_ms\":0.000,\"max_rss_kib\":0,\"reads\":\"everywhere\"}\n");
	free(s);
}

static void
json_names_every_reason(void **state)
{
	static const char *const names[] = {
		NULL, "exit_code", "signal", "exec", "deadline", "cancelled",
		"wait_failed", "group_still_present", "kill_ambiguous",
		"helper_lost",
	};
	struct confine_result r;
	char want[64], *s;
	size_t i;

	(void)state;
	for (i = 1; i < sizeof(names) / sizeof(names[0]); i++) {
		r = result(CONFINE_UNCERTAIN, (enum confine_reason)i);
		s = captured(write_json, &r);
		snprintf(want, sizeof(want), ",\"reason\":\"%s\",", names[i]);
		assert_non_null(strstr(s, want));
		free(s);
	}
}

static void
json_strings_are_escaped(void **state)
{
	char *s;

	(void)state;
	s = captured(write_string, "a\"b\\c\nd\re\tf\001g\037h\177i/\xc3\xa9");
	assert_string_equal(s,
	    "\"a\\\"b\\\\c\\nd\\re\\tf\\u0001g\\u001fh\\u007fi/\xc3\xa9\"");
	free(s);
	s = captured(write_string, "");
	assert_string_equal(s, "\"\"");
	free(s);
}

static void
json_reports_a_failed_write(void **state)
{
	struct confine_result r = exited(0);
	FILE *f = fopen("/dev/null", "r");

	(void)state;
	assert_non_null(f);
	assert_int_equal(cli_json(f, &r, NULL, NULL), -EIO);
	fclose(f);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(durations_in_each_unit),
		cmocka_unit_test(bad_durations_say_why),
		cmocka_unit_test(sizes_and_counts),
		cmocka_unit_test(bounds_by_option_name),
		cmocka_unit_test(exit_statuses_for_every_outcome),
		cmocka_unit_test(summary_says_what_happened),
		cmocka_unit_test(verbose_summary_adds_ids_times_and_memory),
		cmocka_unit_test(json_has_every_field_in_order),
		cmocka_unit_test(json_of_a_failed_start),
		cmocka_unit_test(json_says_which_reads_ran),
		cmocka_unit_test(json_names_every_reason),
		cmocka_unit_test(json_strings_are_escaped),
		cmocka_unit_test(json_reports_a_failed_write),
	};

	return cmocka_run_group_tests_name("cli", tests, NULL, NULL);
}
