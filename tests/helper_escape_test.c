/*
 * Escapes aimed at the real helper (//helper:confine-helper, exec mode,
 * through the public API) and at its host, this test. Each attempt is made
 * unconfined (backend none: it reaches its target) and confined (Landlock:
 * the specific errno), so that each denial is attributable.
 *
 * Unconfined halves must not harm the helper that runs the jobs: they aim
 * signal 0 or SIGPIPE (which it ignores) at it; SIGKILL and ptrace go to a
 * victim, a second helper of this test that runs nothing.
 */
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
#include <sys/wait.h>
#include <unistd.h>

#include "tests/helperutil.h"
#include "tests/testutil.h"

#define LL CONFINE_BACKEND_LANDLOCK
#define NONE CONFINE_BACKEND_NONE

static struct confine *c;     /* runs every job */
static struct confine *victim;
static char *scratch;

/* `fixture args...` through c: its exit code, 0 or the errno it got. */
static int
probe(enum confine_backend b, const char *const *args)
{
	struct hu_job j;
	size_t n;
	int rc;

	hu_init(&j, scratch, NULL);
	for (n = 1; args[n - 1] != NULL && n < 15; n++)
		j.argv[n] = args[n - 1];
	j.argv[n] = NULL;
	j.spec.backend = b;
	assert_int_equal(hu_run(c, &j), 0);
	assert_int_equal(j.r.backend, b);
	assert_true(j.r.outcome == CONFINE_COMPLETED ||
	    j.r.reason == CONFINE_REASON_EXIT_CODE);
	rc = j.r.exit_code;
	hu_free(&j);
	return rc;
}

#define PROBE(b, ...) probe((b), (const char *const[]){ __VA_ARGS__, NULL })

#define PAIR(unconfined, confined, ...) do {                               \
		assert_int_equal(PROBE(NONE, __VA_ARGS__), (unconfined));          \
		assert_int_equal(PROBE(LL, __VA_ARGS__), (confined));              \
	} while (0)

static int
setup(void **state)
{
	(void)state;
	scratch = tu_mkdtemp("scratch");
	if (hu_open(&c, CONFINE_MODE_EXEC, NULL) != 0)
		return -1;
	return hu_open(&victim, CONFINE_MODE_EXEC, NULL);
}

static int
teardown(void **state)
{
	(void)state;
	confine_close(c);
	confine_close(victim);
	free(scratch);
	return 0;
}

static void
pid_arg(char *buf, size_t len, pid_t pid)
{
	snprintf(buf, len, "%ld", (long)pid);
}

/* Alive and not yet exited: the victim is this test's child. */
static bool
alive(pid_t pid)
{
	siginfo_t si;

	memset(&si, 0, sizeof(si));
	assert_int_equal(waitid(P_PID, (id_t)pid, &si,
	    WEXITED | WNOHANG | WNOWAIT), 0);
	return si.si_pid == 0;
}

/*
 * A process outside the job, named by its pid: in a PID namespace of its
 * own (the init's path) there is no such process for the job (ESRCH, and
 * no /proc entry, ENOENT); without one, Landlock's scope refuses it (EPERM,
 * and EACCES for its /proc files).
 */
#define OUTSIDE(e) (tu_path_init() ? ESRCH : (e))
#define OUTSIDE_PROC(e) (tu_path_init() ? ENOENT : (e))

/*
 * Landlock's signal scope, signal 0 included: the helper that runs the
 * job is outside its domain though it is its ancestor (its parent, on the
 * direct path). It still serves.
 */
static void
signals_to_the_jobs_own_helper(void **state)
{
	char helper[24], sigpipe[8];

	(void)state;
	pid_arg(helper, sizeof(helper), confine_helper_pid(c));
	snprintf(sigpipe, sizeof(sigpipe), "%d", SIGPIPE);
	PAIR(0, OUTSIDE(EPERM), "kill", helper, "0");
	PAIR(0, OUTSIDE(EPERM), "kill", helper, sigpipe);
	assert_int_equal(PROBE(LL, "kill", helper, "9"), OUTSIDE(EPERM));
	assert_int_equal(PROBE(LL, "exit", "0"), 0);
}

/* SIGKILL for real: confined it is refused, unconfined it ends a helper. */
static void
sigkill_to_a_helper(void **state)
{
	pid_t v = confine_helper_pid(victim);
	char pid[24];
	siginfo_t si;

	(void)state;
	pid_arg(pid, sizeof(pid), v);
	assert_int_equal(PROBE(LL, "kill", pid, "9"), OUTSIDE(EPERM));
	assert_true(alive(v));
	assert_int_equal(PROBE(NONE, "kill", pid, "9"), 0);
	memset(&si, 0, sizeof(si));
	assert_int_equal(waitid(P_PID, (id_t)v, &si, WEXITED | WNOWAIT), 0);
	assert_int_equal(si.si_code, CLD_KILLED);
	assert_int_equal(si.si_status, SIGKILL);
}

/*
 * ptrace and /proc/<pid>/mem: unconfined against the idle victim (the
 * seize ends with the prober), confined against both helpers.
 */
static void
ptrace_and_memory_of_the_helpers(void **state)
{
	char pid[24], own[24];

	(void)state;
	pid_arg(pid, sizeof(pid), confine_helper_pid(victim));
	pid_arg(own, sizeof(own), confine_helper_pid(c));
	PAIR(0, OUTSIDE(EPERM), "ptrace", pid);
	PAIR(0, OUTSIDE_PROC(EACCES), "proc-open", pid, "mem");
	/* Writable, it is a file on the job's read-only /proc first. */
	PAIR(0, OUTSIDE_PROC(EROFS), "proc-open", pid, "mem", "rw");
	assert_true(alive(confine_helper_pid(victim)));
	assert_int_equal(PROBE(LL, "ptrace", own), OUTSIDE(EPERM));
	assert_int_equal(PROBE(LL, "proc-open", own, "mem"),
	    OUTSIDE_PROC(EACCES));
	assert_int_equal(PROBE(LL, "proc-open", own, "mem", "rw"),
	    OUTSIDE_PROC(EROFS));
}

/* The host: this test, which started the helper. */
static void
signals_ptrace_and_memory_of_the_host(void **state)
{
	char host[24];

	(void)state;
	pid_arg(host, sizeof(host), getpid());
	PAIR(0, OUTSIDE(EPERM), "kill", host, "0");
	PAIR(0, OUTSIDE(EPERM), "ptrace", host);
	PAIR(0, OUTSIDE_PROC(EACCES), "proc-open", host, "mem");
	PAIR(0, OUTSIDE_PROC(EROFS), "proc-open", host, "mem", "rw");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(hu_on_its_path),
		cmocka_unit_test(signals_to_the_jobs_own_helper),
		cmocka_unit_test(ptrace_and_memory_of_the_helpers),
		cmocka_unit_test(signals_ptrace_and_memory_of_the_host),
		/* Last: the victim does not survive it. */
		cmocka_unit_test(sigkill_to_a_helper),
	};

	tu_path_setup();
	hu_setup();
	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests_name("helper-escape", tests, setup,
	    teardown);
}
