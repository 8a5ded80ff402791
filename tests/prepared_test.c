/*
 * Namespaces made before the request (helper/ns.h, issue 35): a root
 * helper keeps holders, each a process in a network, IPC and UTS
 * namespace of its own, made after a turn's replies; a job's init joins
 * one in place of making its own. Checked from the host, by the
 * namespaces' identities: the job is in the holder's, which were nobody
 * else's; a holder serves one job; their number follows demand up to the
 * ceiling; an idle helper, and a dead one, holds none. As root (only a
 * root helper makes them): fails, never skips, elsewhere.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tests/helperutil.h"
#include "tests/testutil.h"

#define SOME 6

static char *scratch;

static const char *const show_ns[] = { "/bin/sh", "-c",
	"readlink /proc/self/ns/net /proc/self/ns/ipc /proc/self/ns/uts",
	NULL };

/* A helper whose holders are dropped after idle_ms without a job. */
static pid_t
open_helper(struct confine **c, const char *idle_ms)
{
	assert_int_equal(getuid(), 0);
	assert_int_equal(setenv("CONFINE_PREPARED_IDLE_MS", idle_ms, 1), 0);
	assert_int_equal(hu_open(c, CONFINE_MODE_EXEC, NULL), 0);
	assert_int_equal(unsetenv("CONFINE_PREPARED_IDLE_MS"), 0);
	return confine_helper_pid(*c);
}

/*
 * Waits (up to a minute) until helper has exactly n holders, filling out
 * (cap SOME); false if it never does.
 */
static bool
holders_become(pid_t helper, int n, pid_t *out)
{
	struct timespec ts = { 0, 5 * 1000 * 1000 };
	int i;

	for (i = 0; i < 12000; i++) {
		if (hu_holders_of(helper, out, SOME) == n)
			return true;
		nanosleep(&ts, NULL);
	}
	fprintf(stderr, "helper %ld: %d holders, not %d\n", (long)helper,
	    hu_holders_of(helper, out, SOME), n);
	return false;
}

/* "net:[N]\nipc:[N]\nuts:[N]\n" of pid, as the job's own readlink says it. */
static char *
namespaces_of(pid_t pid)
{
	static const char *const names[] = { "net", "ipc", "uts" };
	char path[64], link[64], *all = calloc(1, 256);
	ssize_t n;
	size_t i;

	assert_non_null(all);
	for (i = 0; i < 3; i++) {
		snprintf(path, sizeof(path), "/proc/%ld/ns/%s", (long)pid,
		    names[i]);
		n = readlink(path, link, sizeof(link) - 1);
		assert_true(n > 0);
		link[n] = '\0';
		strcat(strcat(all, link), "\n");
	}
	return all;
}

/* A job that shows its namespaces, run to the end: what it printed. */
static char *
job_namespaces(struct confine *c)
{
	struct hu_job j;
	char *out;

	hu_init(&j, scratch, NULL);
	j.spec.exe = show_ns[0];
	j.spec.argv = (const char *const *)show_ns;
	assert_int_equal(hu_run(c, &j), 0);
	assert_int_equal(j.r.outcome, CONFINE_COMPLETED);
	assert_int_equal(j.r.exit_code, 0);
	assert_non_null(j.out);
	out = strdup(j.out);
	hu_free(&j);
	return out;
}

/*
 * The second job joins what was made while the first ran: its namespaces
 * are the holder's, which are not the host's; the holder is gone after
 * (one job each), and the next one's are new.
 */
static void
a_job_joins_namespaces_made_before_it(void **state)
{
	char *host, *held, *seen, *first, *next;
	pid_t helper, h[SOME], h2[SOME];
	struct confine *c;

	(void)state;
	helper = open_helper(&c, "60000");
	assert_int_equal(hu_holders_of(helper, h, SOME), 0);
	first = job_namespaces(c);
	assert_true(holders_become(helper, 1, h));
	held = namespaces_of(h[0]);
	host = namespaces_of(getpid());
	assert_string_not_equal(held, host);
	/* Nothing of the first job is the holder's. */
	assert_string_not_equal(held, first);

	seen = job_namespaces(c);
	assert_string_equal(seen, held);
	assert_true(hu_gone(h[0]));
	/* Its successor, made while it ran: nobody's yet. */
	assert_true(holders_become(helper, 1, h2));
	assert_int_not_equal(h2[0], h[0]);
	next = namespaces_of(h2[0]);
	assert_string_not_equal(next, held);
	assert_string_not_equal(next, host);
	/* Closed, the helper takes its holders with it. */
	confine_close(c);
	assert_true(hu_gone(h2[0]));
	free(host);
	free(held);
	free(seen);
	free(first);
	free(next);
}

struct spawner {
	struct confine *c;
	struct hu_job *j;
};

static void *
spawn_one(void *arg)
{
	struct spawner *sp = arg;

	(void)hu_spawn(sp->c, sp->j);
	return NULL;
}

/*
 * A burst of jobs that found none, from hosts of their own (their
 * requests read in one turn: the helper was stopped while they came): as
 * many holders are wanted, up to the ceiling (4 by default), never more;
 * idle, none at all. One host's spawns come one at a time, each served
 * by the one made after the last.
 */
static void
holders_follow_demand_and_go_when_idle(void **state)
{
	struct timespec ts = { 0, 300 * 1000 * 1000 };
	char *dir = tu_sockdir(), *sock = tu_join(dir, "helper.sock");
	struct confine *c[SOME];
	struct spawner sp[SOME];
	struct hu_job j[SOME];
	pthread_t t[SOME];
	pid_t helper, h[SOME], none[SOME];
	int i;

	(void)state;
	assert_int_equal(getuid(), 0);
	assert_int_equal(setenv("CONFINE_PREPARED_IDLE_MS", "3000", 1), 0);
	helper = hu_listen(sock, NULL);
	assert_int_equal(unsetenv("CONFINE_PREPARED_IDLE_MS"), 0);
	for (i = 0; i < SOME; i++)
		assert_int_equal(hu_open(&c[i], CONFINE_MODE_CONNECT, sock), 0);
	assert_int_equal(kill(helper, SIGSTOP), 0);
	for (i = 0; i < SOME; i++) {
		hu_init(&j[i], scratch, "sleep", "60000", NULL);
		sp[i].c = c[i];
		sp[i].j = &j[i];
		assert_int_equal(pthread_create(&t[i], NULL, spawn_one, &sp[i]), 0);
	}
	nanosleep(&ts, NULL);
	assert_int_equal(kill(helper, SIGCONT), 0);
	for (i = 0; i < SOME; i++) {
		assert_int_equal(pthread_join(t[i], NULL), 0);
		assert_int_equal(j[i].rc, 0);
	}
	assert_true(holders_become(helper, 4, h));
	nanosleep(&ts, NULL);
	assert_int_equal(hu_holders_of(helper, h, SOME), 4);
	for (i = 0; i < SOME; i++) {
		assert_int_equal(confine_cancel(j[i].job), 0);
		assert_int_equal(hu_wait(&j[i]), 0);
		assert_int_equal(j[i].r.outcome, CONFINE_CANCELLED);
		hu_free(&j[i]);
	}
	/* Three seconds after the last job asked: no holder, no child. */
	assert_true(holders_become(helper, 0, none));
	for (i = 0; i < 4; i++)
		assert_true(hu_gone(h[i]));
	assert_int_equal(hu_children_of(helper, none, SOME), 0);
	for (i = 0; i < SOME; i++)
		confine_close(c[i]);
	hu_stop(helper);
	tu_rmsock(dir, sock);
}

/* Killed, the helper's holders die with it (PR_SET_PDEATHSIG). */
static void
holders_die_with_a_killed_helper(void **state)
{
	struct confine *c;
	pid_t helper, h[SOME];
	char *out;

	(void)state;
	helper = open_helper(&c, "60000");
	out = job_namespaces(c);
	assert_true(holders_become(helper, 1, h));
	assert_int_equal(kill(helper, SIGKILL), 0);
	hu_await_exit(helper);
	assert_true(hu_gone(h[0]));
	confine_close(c);
	free(out);
}

static int
setup(void **state)
{
	(void)state;
	scratch = tu_mkdtemp("prepared");
	return 0;
}

static int
teardown(void **state)
{
	(void)state;
	(void)rmdir(scratch);
	free(scratch);
	return 0;
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(a_job_joins_namespaces_made_before_it),
		cmocka_unit_test(holders_follow_demand_and_go_when_idle),
		cmocka_unit_test(holders_die_with_a_killed_helper),
	};

	hu_setup();
	return cmocka_run_group_tests(tests, setup, teardown);
}
