/*
 * A helper that dies with its shepherds, or without shepherds (where a
 * cgroup v2 settles each job) with or without its guard: what ends its
 * jobs. Unsandboxed
 * (Bazel's sandbox mounts cgroupfs read-only), as root on a writable
 * cgroup v2 hierarchy; fails, never skips, without one. We are the
 * subreaper here, so the orphaned jobs are ours to reap, and each status
 * says who ended the job.
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
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tests/helperutil.h"
#include "tests/testutil.h"

#define HUNDRED 100

static char *scratch;

/* The directory of pid's v2 cgroup's parent: its helper's. */
static char *
helper_cgroup(pid_t pid)
{
	char path[64], *text, *line, *end, *mnt = tu_v2_mount(), *dir;

	assert_non_null(mnt);
	snprintf(path, sizeof(path), "/proc/%ld/cgroup", (long)pid);
	text = tu_slurp(path, NULL);
	assert_non_null(text);
	line = strncmp(text, "0::", 3) == 0 ? text : strstr(text, "\n0::");
	assert_non_null(line);
	line = strstr(line, "::") + 2;
	if ((end = strchr(line, '\n')) != NULL)
		*end = '\0';
	end = strrchr(line, '/');
	assert_non_null(end);
	*end = '\0';
	assert_non_null(strstr(line, "/confine."));
	dir = tu_join(mnt, line + 1);
	free(text);
	free(mnt);
	return dir;
}

/* Waits for pid, once it is our child (an orphan becomes ours when its
 * parent dies), for up to a minute; its status. */
static int
reap_orphan(pid_t pid)
{
	struct timespec ts = { 0, 10 * 1000 * 1000 };
	int i, status;
	pid_t r;

	for (i = 0; i < 6000; i++) {
		r = waitpid(pid, &status, WNOHANG);
		if (r == pid)
			return status;
		assert_true(r == 0 || (r < 0 && errno == ECHILD));
		nanosleep(&ts, NULL);
	}
	fail_msg("pid %ld never ended", (long)pid);
	return -1;
}

struct reaper {
	pid_t pids[HUNDRED];
	int status[HUNDRED];
};

/* Reaps the jobs while the next helper kills them: their cgroups stay
 * busy until reaped, and its start waits for them to go. */
static void *
reap_all(void *arg)
{
	struct reaper *r = arg;
	int i;

	for (i = 0; i < HUNDRED; i++)
		r->status[i] = reap_orphan(r->pids[i]);
	return NULL;
}

/* Every one of the hundred settles Uncertain(helper lost), none Completed. */
static void
all_lost(struct hu_job *j)
{
	int i, lost = 0;

	for (i = 0; i < HUNDRED; i++) {
		assert_int_equal(confine_wait(j[i].job, -1, &j[i].r), 0);
		assert_int_not_equal(j[i].r.outcome, CONFINE_COMPLETED);
		lost += j[i].r.outcome == CONFINE_UNCERTAIN &&
		    j[i].r.reason == CONFINE_REASON_HELPER_LOST;
		hu_free(&j[i]);
	}
	assert_int_equal(lost, HUNDRED);
}

/*
 * Each job died of SIGKILL (where we reaped it), the dead helper's
 * cgroups are gone once they are reaped (by the next helper's sweep or a
 * concurrent one); the end.
 */
static void
all_killed(const struct reaper *rp, char *dead, struct confine *next)
{
	int i;

	for (i = 0; rp != NULL && i < HUNDRED; i++)
		assert_true(WIFSIGNALED(rp->status[i]) &&
		    WTERMSIG(rp->status[i]) == SIGKILL);
	assert_true(tu_path_gone(dead));
	confine_close(next);
	free(dead);
	assert_int_equal(prctl(PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0), 0);
}

/* A hundred sleeping jobs on c, their pids in r; their helper's cgroup. */
static char *
start_hundred(struct confine *c, struct hu_job *j, struct reaper *r)
{
	int i;

	for (i = 0; i < HUNDRED; i++) {
		hu_init(&j[i], scratch, "pid-sleep", "60000", NULL);
		assert_int_equal(hu_spawn(c, &j[i]), 0);
		r->pids[i] = hu_read_pid(j[i].outfd);
		assert_true(r->pids[i] > 1);
	}
	return helper_cgroup(r->pids[0]);
}

/*
 * The helper stopped (so that it cannot act), its hundred shepherds and
 * then the helper killed outright: every result is Uncertain(helper
 * lost), none Completed, and each job dies with its shepherd before any
 * helper could act. Without namespaces (own_ns false) the job is killed
 * by the SIGKILL its parent's death sends it (the shepherd alone signals
 * its group) and, an orphan, is ours to reap; in a PID namespace of its
 * own the kernel kills it with the namespace's init, its shepherd, which
 * reaps it as it dies, so all we can see is that it is gone. The next
 * helper to start beside their cgroups removes them.
 */
static void
shepherds_killed(bool own_ns)
{
	static struct hu_job j[HUNDRED];
	static struct reaper rp;
	pid_t shep[HUNDRED + 1], helper;
	struct confine *c, *next;
	char *dead;
	int i, n, status;

	assert_int_equal(prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0), 0);
	assert_int_equal(setenv("CONFINE_SHEPHERD", "1", 1), 0);
	if (!own_ns)
		assert_int_equal(setenv("CONFINE_NO_NAMESPACES", "1", 1), 0);
	assert_int_equal(hu_open(&c, CONFINE_MODE_EXEC, NULL), 0);
	assert_int_equal(unsetenv("CONFINE_SHEPHERD"), 0);
	assert_int_equal(unsetenv("CONFINE_NO_NAMESPACES"), 0);
	helper = confine_helper_pid(c);
	dead = start_hundred(c, j, &rp);
	assert_int_equal(kill(helper, SIGSTOP), 0);
	n = hu_children_of(helper, shep, HUNDRED + 1);
	assert_int_equal(n, HUNDRED);
	for (i = 0; i < n; i++)
		assert_int_equal(kill(shep[i], SIGKILL), 0);
	assert_int_equal(kill(helper, SIGKILL), 0);
	all_lost(j);
	confine_close(c);
	/* Each shepherd, a zombie once its helper is gone, is ours. */
	for (i = 0; i < n; i++) {
		status = reap_orphan(shep[i]);
		assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	}
	/* Each job died with its shepherd, before any helper could act. */
	if (own_ns) {
		for (i = 0; i < HUNDRED; i++)
			assert_true(tu_gone(rp.pids[i]));
	} else {
		reap_all(&rp);
	}
	assert_true(tu_exists(dead));
	assert_int_equal(hu_open(&next, CONFINE_MODE_EXEC, NULL), 0);
	all_killed(own_ns ? NULL : &rp, dead, next);
}

static void
helper_and_shepherds_killed_their_jobs_die_with_them(void **state)
{
	(void)state;
	shepherds_killed(false);
}

static void
helper_and_namespace_inits_killed_their_jobs_die_with_them(void **state)
{
	(void)state;
	shepherds_killed(true);
}

/* A helper whose jobs are its own children: where no namespace is made
 * (a namespace's init is a shepherd). */
static void
open_without_shepherds(struct confine **c)
{
	assert_int_equal(setenv("CONFINE_NO_NAMESPACES", "1", 1), 0);
	assert_int_equal(hu_open(c, CONFINE_MODE_EXEC, NULL), 0);
	assert_int_equal(unsetenv("CONFINE_NO_NAMESPACES"), 0);
}

/*
 * Without shepherds: a hundred jobs, each the helper's own child (one
 * process a job), and one more child, the guard. The helper is stopped
 * and killed, with its guard too when guard_too; every result is
 * Uncertain(helper lost). Alone, the guard ends the jobs at once; with
 * it dead, the jobs run on until the next helper's start kills them.
 * Each job dies of SIGKILL, and the dead helper's cgroups go.
 */
static void
helper_dies_without_shepherds(bool guard_too)
{
	static struct hu_job j[HUNDRED];
	static struct reaper rp;
	pid_t kids[HUNDRED + 2], helper, guard = 0;
	struct confine *c, *next;
	pthread_t t;
	char *dead;
	int i, k, n;

	assert_int_equal(prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0), 0);
	open_without_shepherds(&c);
	helper = confine_helper_pid(c);
	dead = start_hundred(c, j, &rp);
	assert_int_equal(kill(helper, SIGSTOP), 0);
	n = hu_children_of(helper, kids, HUNDRED + 2);
	assert_int_equal(n, HUNDRED + 1);
	for (k = 0; k < n; k++) {
		for (i = 0; i < HUNDRED && rp.pids[i] != kids[k]; i++)
			;
		if (i == HUNDRED)
			guard = kids[k];
	}
	assert_true(guard > 0);
	if (guard_too)
		assert_int_equal(kill(guard, SIGKILL), 0);
	assert_int_equal(kill(helper, SIGKILL), 0);
	all_lost(j);
	confine_close(c);
	(void)reap_orphan(guard);
	if (guard_too) {
		/* Nothing of the first helper ended them: every job runs on. */
		for (i = 0; i < HUNDRED; i++)
			assert_int_equal(waitpid(rp.pids[i], NULL, WNOHANG), 0);
		assert_int_equal(pthread_create(&t, NULL, reap_all, &rp), 0);
		assert_int_equal(hu_open(&next, CONFINE_MODE_EXEC, NULL), 0);
		assert_int_equal(pthread_join(t, NULL), 0);
	} else {
		/* The guard ended them: no other helper is started first. */
		reap_all(&rp);
		assert_int_equal(hu_open(&next, CONFINE_MODE_EXEC, NULL), 0);
	}
	all_killed(&rp, dead, next);
}

/*
 * A guard that dies before its helper is replaced: the helper killed
 * later still has one to end its hundred jobs at once.
 */
static void
a_dead_guard_is_replaced(void **state)
{
	static struct hu_job j[HUNDRED];
	static struct reaper rp;
	pid_t kids[HUNDRED + 2], helper, guard = 0, next_guard = 0;
	struct timespec ts = { 0, 10 * 1000 * 1000 };
	struct confine *c, *next;
	char *dead;
	int i, k, n, tries;

	(void)state;
	assert_int_equal(prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0), 0);
	open_without_shepherds(&c);
	helper = confine_helper_pid(c);
	dead = start_hundred(c, j, &rp);
	for (tries = 0; tries < 1000 && next_guard == 0; tries++) {
		n = hu_children_of(helper, kids, HUNDRED + 2);
		for (k = 0; k < n; k++) {
			for (i = 0; i < HUNDRED && rp.pids[i] != kids[k]; i++)
				;
			if (i < HUNDRED || kids[k] == guard)
				continue;
			if (guard == 0) {
				guard = kids[k];
				assert_int_equal(kill(guard, SIGKILL), 0);
			} else {
				next_guard = kids[k];
			}
		}
		if (next_guard == 0)
			nanosleep(&ts, NULL);
	}
	assert_true(guard > 0 && next_guard > 0);
	assert_int_equal(kill(helper, SIGKILL), 0);
	all_lost(j);
	confine_close(c);
	(void)reap_orphan(next_guard);
	/* The new guard ended them: no other helper is started first. */
	reap_all(&rp);
	assert_int_equal(hu_open(&next, CONFINE_MODE_EXEC, NULL), 0);
	all_killed(&rp, dead, next);
}

static void
helper_killed_its_guard_ends_its_jobs(void **state)
{
	(void)state;
	helper_dies_without_shepherds(false);
}

static void
helper_and_guard_killed_the_next_helper_ends_their_jobs(void **state)
{
	(void)state;
	helper_dies_without_shepherds(true);
}

/*
 * A hundred deadlines at one instant, without shepherds, each job having
 * left a file in its private tmp: every one is Cancelled(deadline) and
 * its tmp removed, each removal by a process whose socket the loop must
 * watch. (That socket can take the number of the job's pidfd, closed
 * just before; a loop that read the number as the old descriptor never
 * heard the removal. The benchmark's burst of 100 showed it, 99 jobs
 * never settled; this test has not reproduced that numbering.)
 */
static void
a_hundred_deadlines_at_once_settle_and_their_tmps_go(void **state)
{
	static struct hu_job j[HUNDRED];
	struct confine *c;
	int i;

	(void)state;
	open_without_shepherds(&c);
	for (i = 0; i < HUNDRED; i++) {
		hu_init(&j[i], scratch, "ok", NULL);
		j[i].spec.exe = "/bin/sh";
		j[i].argv[0] = "sh";
		j[i].argv[1] = "-c";
		j[i].argv[2] = "echo x > \"$TMPDIR/left\" && exec /bin/sleep 60";
		j[i].argv[3] = NULL;
		j[i].spec.flags |= CONFINE_SET_TMPDIR;
		j[i].spec.deadline_ms = 3000;  /* all spawned well before */
		/* No descriptors: the helper's numbers are then the bench's. */
		assert_int_equal(confine_spawn(c, &j[i].spec, &j[i].job), 0);
	}
	for (i = 0; i < HUNDRED; i++) {
		assert_int_equal(confine_wait(j[i].job, 60000, &j[i].r), 0);
		assert_int_equal(j[i].r.outcome, CONFINE_CANCELLED);
		assert_int_equal(j[i].r.reason, CONFINE_REASON_DEADLINE);
		assert_int_equal(j[i].r.tmp_kept, 0);
		hu_free(&j[i]);
	}
	confine_close(c);
}

/*
 * The cgroups of jobs a burst of deadlines killed are removed after
 * their results are sent, when the helper has time: an idle helper
 * leaves none of them behind. One job that runs on shows where.
 */
static void
an_idle_helper_removes_what_a_burst_left(void **state)
{
	static struct hu_job j[HUNDRED];
	struct timespec ts = { 0, 10 * 1000 * 1000 };
	struct hu_job keep;
	struct confine *c;
	char *dir;
	int i, n;

	(void)state;
	assert_int_equal(hu_open(&c, CONFINE_MODE_EXEC, NULL), 0);
	hu_init(&keep, scratch, "pid-sleep", "60000", NULL);
	assert_int_equal(hu_spawn(c, &keep), 0);
	dir = helper_cgroup(hu_read_pid(keep.outfd));
	for (i = 0; i < HUNDRED; i++) {
		hu_init(&j[i], scratch, "sleep", "60000", NULL);
		j[i].spec.deadline_ms = 3000;  /* all spawned well before */
		assert_int_equal(hu_spawn(c, &j[i]), 0);
	}
	for (i = 0; i < HUNDRED; i++) {
		assert_int_equal(hu_wait(&j[i]), 0);
		assert_int_equal(j[i].r.outcome, CONFINE_CANCELLED);
		hu_free(&j[i]);
	}
	/* Killed, none is kept for reuse: only the running job's is left. */
	for (i = 0; i < 1000 && (n = tu_count_named(dir, "job.")) > 1; i++)
		nanosleep(&ts, NULL);
	assert_int_equal(n, 1);
	assert_int_equal(confine_cancel(keep.job), 0);
	assert_int_equal(hu_wait(&keep), 0);
	hu_free(&keep);
	confine_close(c);
	free(dir);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(
		    helper_and_shepherds_killed_their_jobs_die_with_them),
		cmocka_unit_test(
		    helper_and_namespace_inits_killed_their_jobs_die_with_them),
		cmocka_unit_test(helper_killed_its_guard_ends_its_jobs),
		cmocka_unit_test(a_dead_guard_is_replaced),
		cmocka_unit_test(
		    helper_and_guard_killed_the_next_helper_ends_their_jobs),
		cmocka_unit_test(
		    a_hundred_deadlines_at_once_settle_and_their_tmps_go),
		cmocka_unit_test(an_idle_helper_removes_what_a_burst_left),
	};

	hu_setup();
	tu_own_tmpdir();
	(void)tu_own_cgroup();
	scratch = tu_mkdtemp("scratch");
	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests_name("orphans", tests, NULL, NULL);
}
