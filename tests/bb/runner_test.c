/*
 * The runner without gRPC (bb/runner.c): Run requests as confine jobs
 * through one helper, refusals that touch nothing, cancels, deadlines and
 * the slots of --concurrency. tests/bb/client_test.py drives the same
 * through gRPC.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdbool.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bb/runner.h"
#include "tests/testutil.h"

static char *build;         /* the build directory */

static const char *const env_path[] = { "PATH", NULL };
static const char *const env_path_value[] = { "/usr/bin:/bin", NULL };

/* A path of a request: the test's requests all live to its end. */
static const char *
field(const char *act, const char *name)
{
	static char arena[256][64];
	static size_t next;

	if (next == sizeof(arena) / sizeof(arena[0]))
		fail_msg("more requests than the arena holds");
	snprintf(arena[next], sizeof(arena[next]), "%s/%s", act, name);
	return arena[next++];
}

/* A worker's request in action directory act: root/, tmp/, stdout. */
static struct bbreq
request(const char *act, const char *const *argv)
{
	struct bbreq r;
	size_t n = 0;

	while (argv[n] != NULL)
		n++;
	memset(&r, 0, sizeof(r));
	r.argv = argv;
	r.argc = n;
	r.env_names = env_path;
	r.env_values = env_path_value;
	r.nenv = 1;
	r.working_directory = "";
	r.stdout_path = field(act, "stdout");
	r.stderr_path = field(act, "stderr");
	r.input_root_directory = field(act, "root");
	r.temporary_directory = field(act, "tmp");
	r.server_logs_directory = "";
	return r;
}

/* A fresh action directory with its root/ and tmp/. */
static void
action_dir(const char *act)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", build, act);
	assert_int_equal(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/%s/root", build, act);
	assert_int_equal(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/%s/tmp", build, act);
	assert_int_equal(mkdir(path, 0755), 0);
}

static bool
exists_in(const char *rel)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", build, rel);
	return tu_exists(path);
}

static char *
slurp(const char *act, const char *name)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s/%s", build, act, name);
	return tu_slurp(path, NULL);
}

static struct bbrun *
open_runner(int concurrency)
{
	struct bbrun_config cfg;
	struct bbrun *r;
	char why[512];

	memset(&cfg, 0, sizeof(cfg));
	cfg.build_dir = build;
	cfg.concurrency = concurrency;
	cfg.margin_ms = 500;
	cfg.quiet = 1;
	if (bbrun_open(&r, &cfg, why, sizeof(why)) != 0)
		fail_msg("bbrun_open: %s", why);
	return r;
}

static void
run(struct bbrun *r, const struct bbreq *req, int64_t ms,
    struct bbreply *reply)
{
	struct bbrun_call *call = bbrun_call_new(r);

	assert_non_null(call);
	bbrun_call_run(call, req, ms, reply);
	bbrun_call_free(call);
}

static void
is_ok(const struct bbreply *reply, int64_t exit_code)
{
	if (reply->code != BBREPLY_OK)
		fail_msg("%s: %s", bbreply_code_name(reply->code), reply->message);
	assert_int_equal(reply->exit_code, exit_code);
}

static void
is(const struct bbreply *reply, enum bbreply_code code, const char *has)
{
	if (reply->code != code || strstr(reply->message, has) == NULL)
		fail_msg("%s: %s; expected %s: ...%s...",
		    bbreply_code_name(reply->code), reply->message,
		    bbreply_code_name(code), has);
}

/* ---- the build directory as a listing, to see that nothing changed ---- */

static FILE *listing;

static int
list_one(const char *path, const struct stat *st, int type, struct FTW *f)
{
	(void)type;
	(void)f;
	fprintf(listing, "%s %o %lld %lld.%09ld\n", path, st->st_mode,
	    (long long)st->st_size, (long long)st->st_mtim.tv_sec,
	    st->st_mtim.tv_nsec);
	return 0;
}

static char *
snapshot(void)
{
	char *buf = NULL;
	size_t len = 0;

	listing = open_memstream(&buf, &len);
	assert_non_null(listing);
	assert_int_equal(nftw(build, list_one, 16, FTW_PHYS), 0);
	fclose(listing);
	return buf;
}

/* ---- the cases ---- */

static void
a_request_runs_in_its_action_directory(void **state)
{
	const char *const argv[] = { "sh", "-c",
		"pwd; env | sort; echo out > made; echo oops >&2; exit 3", NULL };
	struct bbrun *r = *state;
	struct bbreq req = request("a1", argv);
	struct bbreply reply;
	char want[PATH_MAX * 4], sub[PATH_MAX], *out, *err, *made;

	action_dir("a1");
	snprintf(sub, sizeof(sub), "%s/a1/root/sub", build);
	assert_int_equal(mkdir(sub, 0755), 0);
	req.working_directory = "sub";
	run(r, &req, -1, &reply);
	is_ok(&reply, 3);
	assert_true(reply.user_us + reply.sys_us > 0);
	assert_true(reply.max_rss_bytes > 0);
	assert_string_equal(reply.signal, "");
	/* Exactly the request's environment, TMPDIR the temporary directory
	 * (and the PWD sh sets itself). */
	snprintf(want, sizeof(want), "%s\nPATH=/usr/bin:/bin\nPWD=%s\n"
	    "TMPDIR=%s/a1/tmp\n", sub, sub, build);
	out = slurp("a1", "stdout");
	err = slurp("a1", "stderr");
	made = slurp("a1", "root/sub/made");
	assert_non_null(out);
	assert_string_equal(out, want);
	assert_string_equal(err, "oops\n");
	assert_string_equal(made, "out\n");
	free(out);
	free(err);
	free(made);
}

static void
a_signal_death_is_minus_one(void **state)
{
	const char *const argv[] = { "sh", "-c", "kill -SEGV $$", NULL };
	struct bbrun *r = *state;
	struct bbreq req = request("a2", argv);
	struct bbreply reply;

	action_dir("a2");
	run(r, &req, -1, &reply);
	is_ok(&reply, -1);
	assert_string_equal(reply.signal, "SEGV");
}

static void
a_relative_program_is_found_from_the_working_directory(void **state)
{
	const char *const argv[] = { "./tool", "x", NULL };
	const char *const bare[] = { "tool", "y", NULL };
	struct bbrun *r = *state;
	struct bbreq req = request("a3", argv);
	struct bbreply reply;
	char path[PATH_MAX], *out;
	FILE *f;

	action_dir("a3");
	snprintf(path, sizeof(path), "%s/a3/root/tool", build);
	assert_non_null(f = fopen(path, "w"));
	fputs("#!/bin/sh\necho \"tool $1\"\n", f);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(chmod(path, 0755), 0);
	run(r, &req, -1, &reply);
	is_ok(&reply, 0);
	assert_non_null(out = slurp("a3", "stdout"));
	assert_string_equal(out, "tool x\n");
	free(out);

	/* A bare name along the request's PATH, "." being the working
	 * directory's. */
	req = request("a3", bare);
	req.stdout_path = "a3/stdout2";
	req.stderr_path = "a3/stderr2";
	req.env_values = (const char *const[]){ "/nonexistent:.", NULL };
	run(r, &req, -1, &reply);
	is_ok(&reply, 0);
	assert_non_null(out = slurp("a3", "stdout2"));
	assert_string_equal(out, "tool y\n");
	free(out);
}

/* Each request is refused with INVALID_ARGUMENT and nothing changes. */
static void
bad_requests_touch_nothing(void **state)
{
	const char *const sh[] = { "sh", "-c", "echo x > made", NULL };
	const char *const none[] = { NULL };
	const char *const missing[] = { "no-such-program", NULL };
	const char *const missing_path[] = { "./no-such-program", NULL };
	const char *const dir[] = { "/usr/bin", NULL };
	const char *const not_exe[] = { "./data", NULL };
	struct bbrun *r = *state;
	struct {
		struct bbreq req;
		const char *why;
	} cases[16];
	struct bbreply reply;
	char path[PATH_MAX], *before, *after;
	size_t i, n = 0;

	action_dir("bad");
	snprintf(path, sizeof(path), "%s/bad/root/data", build);
	assert_int_equal(close(creat(path, 0644)), 0);
	snprintf(path, sizeof(path), "%s/bad/root/up", build);
	assert_int_equal(symlink("/", path), 0);
	snprintf(path, sizeof(path), "%s/evil", build);
	assert_int_equal(symlink("/", path), 0);
	snprintf(path, sizeof(path), "%s/bad/stdout-there", build);
	assert_int_equal(close(creat(path, 0644)), 0);

#define CASE(why_) cases[n].why = (why_), cases[n++].req
	CASE("Insufficient number of command arguments") = request("bad", none);
	cases[n - 1].req.argc = 0;
	CASE("climbs") = request("bad", sh);
	cases[n - 1].req.working_directory = "../..";
	CASE("is absolute") = request("bad", sh);
	cases[n - 1].req.input_root_directory = "/etc";
	CASE("is absolute") = request("bad", sh);
	cases[n - 1].req.stdout_path = "/tmp/bb-runner-test-stdout";
	CASE("climbs") = request("bad", sh);
	cases[n - 1].req.stderr_path = "../stderr";
	CASE("share no directory") = request("bad", sh);
	cases[n - 1].req.temporary_directory = "other/tmp";
	CASE("Cannot find executable \"no-such-program\"") = request("bad", missing);
	CASE("Failed to start process") = request("bad", missing_path);
	CASE("Failed to start process") = request("bad", dir);
	CASE("Failed to start process") = request("bad", not_exe);
	CASE("Failed to resolve working directory") = request("bad", sh);
	cases[n - 1].req.working_directory = "no/such/dir";
	/* Symbolic links out of the build directory. */
	CASE("leaves the build directory through a symbolic link") =
	    request("bad", sh);
	cases[n - 1].req.working_directory = "up";
	CASE("leaves the build directory through a symbolic link") =
	    request("evil", sh);
	cases[n - 1].req.stdout_path = "bad/stdout";
	cases[n - 1].req.stderr_path = "bad/stderr";
	CASE("Failed to open stdout path") = request("bad", sh);
	cases[n - 1].req.stdout_path = "bad/stdout-there";
#undef CASE

	for (i = 0; i < n; i++) {
		before = snapshot();
		run(r, &cases[i].req, -1, &reply);
		is(&reply, BBREPLY_INVALID_ARGUMENT, cases[i].why);
		after = snapshot();
		if (strcmp(before, after) != 0)
			fail_msg("case %zu (%s) changed the build directory:\n%s\n"
			    "---\n%s", i, cases[i].why, before, after);
		free(before);
		free(after);
	}
	assert_false(tu_exists("/tmp/bb-runner-test-stdout"));
}

struct bg {
	pthread_t t;
	struct bbrun_call *call;
	struct bbreq req;
	int64_t ms;
	struct bbreply reply;
};

static void *
bg_run(void *arg)
{
	struct bg *b = arg;

	bbrun_call_run(b->call, &b->req, b->ms, &b->reply);
	return NULL;
}

static void
bg_start(struct bg *b, struct bbrun *r, struct bbreq req, int64_t ms)
{
	b->call = bbrun_call_new(r);
	assert_non_null(b->call);
	b->req = req;
	b->ms = ms;
	assert_int_equal(pthread_create(&b->t, NULL, bg_run, b), 0);
}

static void
bg_join(struct bg *b)
{
	assert_int_equal(pthread_join(b->t, NULL), 0);
	bbrun_call_free(b->call);
}

/*
 * Every script that writes a pid starts so: the pid a job writes is its
 * own as it sees it, in a PID namespace of its own (the library's default
 * here) not ours, so it writes that namespace's link too (ns_in).
 */
#define NS "readlink /proc/self/ns/pid > ns; "

/* The pid the job wrote to FILE in its root, once it has. */
static pid_t
pid_in(const char *act, const char *file)
{
	char rel[PATH_MAX], *s;
	int i;
	pid_t pid = 0;

	snprintf(rel, sizeof(rel), "root/%s", file);
	for (i = 0; i < 6000 && pid <= 0; i++) {
		if ((s = slurp(act, rel)) != NULL && strchr(s, '\n') != NULL)
			pid = (pid_t)atol(s);
		free(s);
		if (pid <= 0)
			usleep(10000);
	}
	if (pid <= 0)
		fail_msg("no pid in %s/%s after a minute", act, rel);
	return pid;
}

/* The PID namespace the job wrote to root/ns (NS), once it has. */
static char *
ns_in(const char *act)
{
	char *s = NULL;
	int i;

	for (i = 0; i < 6000; i++) {
		if ((s = slurp(act, "root/ns")) != NULL && strchr(s, '\n') != NULL)
			break;
		free(s);
		s = NULL;
		usleep(10000);
	}
	if (s == NULL)
		fail_msg("no namespace in %s/root/ns after a minute", act);
	s[strcspn(s, "\n")] = '\0';
	return s;
}

/* Whether what act wrote as its pid in FILE is alive (tu_job_alive). */
static bool
alive_in(const char *act, const char *file)
{
	char *ns = ns_in(act);
	bool alive = tu_job_alive(ns, pid_in(act, file));

	free(ns);
	return alive;
}

static void
a_cancel_settles_the_job_before_the_call_returns(void **state)
{
	const char *const argv[] = { "sh", "-c",
		NS "sleep 600 & echo $! > kid; echo $$ > pid; wait", NULL };
	struct bbrun *r = *state;
	struct bg b;

	action_dir("c1");
	bg_start(&b, r, request("c1", argv), -1);
	assert_true(alive_in("c1", "pid") && alive_in("c1", "kid"));
	bbrun_call_cancel(b.call);
	bg_join(&b);
	is(&b.reply, BBREPLY_CANCELLED, "nothing of it is left");
	/* Settled means gone: no polling. */
	assert_false(alive_in("c1", "pid"));
	assert_false(alive_in("c1", "kid"));
}

static void
a_deadline_kills_what_the_job_left(void **state)
{
	const char *const argv[] = { "sh", "-c",
		NS "sh -c 'sleep 600 & echo $! > grandkid; wait' & wait", NULL };
	struct bbrun *r = *state;
	struct bbreply reply;
	struct bbreq req = request("d1", argv);

	action_dir("d1");
	run(r, &req, 3000, &reply);
	is(&reply, BBREPLY_DEADLINE_EXCEEDED, "nothing of it is left");
	assert_false(alive_in("d1", "grandkid"));
}

/* A call whose deadline has passed starts nothing: not a job without one. */
static void
no_time_left_runs_nothing(void **state)
{
	const char *const argv[] = { "sh", "-c", "echo ran > ran; sleep 600", NULL };
	struct bbrun *r = *state;
	struct bbreq req = request("late", argv);
	struct bbreply reply;

	action_dir("late");
	run(r, &req, 0, &reply);
	is(&reply, BBREPLY_DEADLINE_EXCEEDED, "no time was left to run the action: nothing ran");
	assert_false(exists_in("late/stdout"));
	assert_false(exists_in("late/root/ran"));
}

static void
a_slot_is_waited_for_and_a_waiting_call_starts_nothing(void **state)
{
	const char *const long_job[] = { "sh", "-c",
		NS "echo $$ > pid; exec sleep 600", NULL };
	const char *const short_job[] = { "sh", "-c", "echo ran > ran", NULL };
	struct bbrun *r = open_runner(1);
	struct bbreq req;
	struct bbreply reply;
	struct bg a, b;

	(void)state;
	action_dir("s1");
	action_dir("s2");
	bg_start(&a, r, request("s1", long_job), -1);
	assert_true(alive_in("s1", "pid"));

	/* The one slot is taken: this one's deadline passes in the queue. */
	req = request("s2", short_job);
	run(r, &req, 700, &reply);
	is(&reply, BBREPLY_DEADLINE_EXCEEDED, "waited for a slot (1 at once): nothing ran");
	assert_false(exists_in("s2/stdout"));

	/* And this one is cancelled there. */
	bg_start(&b, r, request("s2", short_job), -1);
	usleep(200000);
	bbrun_call_cancel(b.call);
	bg_join(&b);
	is(&b.reply, BBREPLY_CANCELLED, "nothing ran");
	assert_false(exists_in("s2/stdout"));
	assert_false(exists_in("s2/root/ran"));

	/* Once the slot is free, the next one runs. */
	bbrun_call_cancel(a.call);
	bg_join(&a);
	is(&a.reply, BBREPLY_CANCELLED, "the call was cancelled");
	assert_false(alive_in("s1", "pid"));
	req = request("s2", short_job);
	run(r, &req, 60000, &reply);
	is_ok(&reply, 0);
	assert_true(exists_in("s2/root/ran"));
	bbrun_close(r);
}

static void
check_readiness(void **state)
{
	struct bbrun *r = *state;
	struct bbreply reply;
	char path[PATH_MAX];

	action_dir("ready");
	snprintf(path, sizeof(path), "%s/ready/up", build);
	assert_int_equal(symlink("/etc", path), 0);
	bbrun_check_readiness(r, "ready/root", &reply);
	assert_int_equal(reply.code, BBREPLY_OK);
	bbrun_check_readiness(r, "", &reply);
	assert_int_equal(reply.code, BBREPLY_OK);
	bbrun_check_readiness(r, "ready/missing", &reply);
	is(&reply, BBREPLY_INTERNAL, "Failed to check existence of path");
	bbrun_check_readiness(r, "../etc", &reply);
	is(&reply, BBREPLY_INTERNAL, "Failed to resolve path");
	bbrun_check_readiness(r, "ready/up/passwd", &reply);
	is(&reply, BBREPLY_INTERNAL, "leaves the build directory");
}

static int
setup(void **state)
{
	*state = open_runner(0);
	return 0;
}

static int
teardown(void **state)
{
	bbrun_close(*state);
	return 0;
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(a_request_runs_in_its_action_directory),
		cmocka_unit_test(a_signal_death_is_minus_one),
		cmocka_unit_test(a_relative_program_is_found_from_the_working_directory),
		cmocka_unit_test(bad_requests_touch_nothing),
		cmocka_unit_test(a_cancel_settles_the_job_before_the_call_returns),
		cmocka_unit_test(a_deadline_kills_what_the_job_left),
		cmocka_unit_test(no_time_left_runs_nothing),
		cmocka_unit_test(a_slot_is_waited_for_and_a_waiting_call_starts_nothing),
		cmocka_unit_test(check_readiness),
	};

	tu_own_tmpdir();
	build = tu_mkdtemp("build");
	return cmocka_run_group_tests_name("bb_runner", tests, setup, teardown);
}
