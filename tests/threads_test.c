/*
 * Many host threads on one helper: 16 threads, 200 jobs each, in batches
 * waited for out of order. Every result must reach its own job exactly
 * once: the exit code each job was told to use, unique among the jobs in
 * flight together, and no pid twice. Then the helper is killed under
 * them: no spawn fails, and no job of the dead helper is anything but
 * lost.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "tests/helperutil.h"
#include "tests/testutil.h"

#define THREADS 16
#define PER_THREAD 200
#define BATCH 10
/* Exit codes are the identity of a job among those in flight. */
_Static_assert(THREADS * BATCH <= 256, "exit codes would repeat");

static struct confine *c;
static char *scratch;
static pid_t pids[THREADS * PER_THREAD];
static int wrong[THREADS];

static int
code_of(int t, int k)
{
	return t * BATCH + k;
}

static void *
worker(void *arg)
{
	int t = (int)(intptr_t)arg, i, k, base;
	struct confine_job *jobs[BATCH];
	struct confine_spec spec;
	struct confine_result r;
	char codes[BATCH][8];
	const char *argv[BATCH][4];

	for (base = 0; base < PER_THREAD; base += BATCH) {
		for (k = 0; k < BATCH; k++) {
			/* A thread has one batch in flight: codes never meet. */
			snprintf(codes[k], sizeof(codes[k]), "%d", code_of(t, k));
			argv[k][0] = "fixture";
			argv[k][1] = "exit";
			argv[k][2] = codes[k];
			argv[k][3] = NULL;
			confine_spec_init(&spec);
			spec.exe = hu_fixture;
			spec.argv = argv[k];
			spec.scratch = scratch;
			if (confine_spawn(c, &spec, &jobs[k]) != 0) {
				wrong[t]++;
				jobs[k] = NULL;
			}
		}
		for (k = BATCH - 1; k >= 0; k--) {
			if (jobs[k] == NULL)
				continue;
			i = t * PER_THREAD + base + k;
			if (confine_wait(jobs[k], -1, &r) != 0 ||
			    r.exit_code != code_of(t, k) ||
			    r.outcome != (code_of(t, k) ? CONFINE_FAILED :
			    CONFINE_COMPLETED))
				wrong[t]++;
			pids[i] = r.pid;
			confine_job_free(jobs[k]);
		}
	}
	return NULL;
}

static int
cmp_pid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return (x > y) - (x < y);
}

static long
pid_max(void)
{
	char *s = tu_slurp("/proc/sys/kernel/pid_max", NULL);
	long v = s ? atol(s) : 0;

	free(s);
	return v;
}

static void
sixteen_threads_two_hundred_jobs_each(void **state)
{
	pthread_t th[THREADS];
	int t, i, bad = 0;

	(void)state;
	scratch = tu_mkdtemp("scratch");
	assert_int_equal(hu_open(&c, CONFINE_MODE_EXEC, NULL), 0);
	for (t = 0; t < THREADS; t++)
		assert_int_equal(pthread_create(&th[t], NULL, worker,
		    (void *)(intptr_t)t), 0);
	for (t = 0; t < THREADS; t++) {
		pthread_join(th[t], NULL);
		bad += wrong[t];
	}
	confine_close(c);
	assert_int_equal(bad, 0);
	qsort(pids, THREADS * PER_THREAD, sizeof(pids[0]), cmp_pid);
	for (i = 0; i < THREADS * PER_THREAD; i++)
		assert_true(pids[i] > 0);
	/* Bazel runs the test in a fresh pid namespace: 6,400 processes
	 * cannot wrap it, so a pid seen twice is a result delivered twice. */
	assert_true(pid_max() > 4 * THREADS * PER_THREAD);
	for (i = 1; i < THREADS * PER_THREAD; i++)
		assert_int_not_equal(pids[i], pids[i - 1]);
	free(scratch);
}

static pthread_barrier_t killing, killed;
static atomic_int bad_jobs;

/* A job through c, returned unwaited; NULL (and counted) if refused. */
static struct confine_job *
spawn(const char *cmd, const char *arg)
{
	const char *argv[] = { "fixture", cmd, arg, NULL };
	struct confine_spec spec;
	struct confine_job *job;

	confine_spec_init(&spec);
	spec.exe = hu_fixture;
	spec.argv = argv;
	spec.scratch = scratch;
	if (confine_spawn(c, &spec, &job) == 0)
		return job;
	atomic_fetch_add(&bad_jobs, 1);
	return NULL;
}

/* Settles job as outcome (and reason), then frees it. */
static void
expect(struct confine_job *job, enum confine_outcome outcome,
    enum confine_reason reason)
{
	struct confine_result r;

	if (job == NULL)
		return;
	if (confine_wait(job, -1, &r) != 0 || r.outcome != outcome ||
	    r.reason != reason || r.pid <= 0)
		atomic_fetch_add(&bad_jobs, 1);
	confine_job_free(job);
}

static void *
spawn_across_the_loss(void *arg)
{
	struct confine_job *before, *after;

	before = spawn("sleep", "60000");
	pthread_barrier_wait(&killing);
	pthread_barrier_wait(&killed);
	after = spawn("exit", "0");
	expect(after, CONFINE_COMPLETED, CONFINE_REASON_NONE);
	expect(before, CONFINE_UNCERTAIN, CONFINE_REASON_HELPER_LOST);
	return arg;
}

/*
 * The helper killed while no thread reads its socket, each with a job in
 * flight: then all spawn at once, and every request fails to go out. One
 * of them settles the jobs in flight as lost and starts a replacement;
 * every spawn goes through on it, and every job of the dead helper is
 * Uncertain(helper lost).
 */
static void
helper_killed_then_threads_spawn_at_once(void **state)
{
	pthread_t th[THREADS];
	pid_t helper;
	int t;

	(void)state;
	scratch = tu_mkdtemp("scratch");
	assert_int_equal(hu_open(&c, CONFINE_MODE_EXEC, NULL), 0);
	helper = confine_helper_pid(c);
	assert_int_equal(pthread_barrier_init(&killing, NULL, THREADS + 1), 0);
	assert_int_equal(pthread_barrier_init(&killed, NULL, THREADS + 1), 0);
	for (t = 0; t < THREADS; t++)
		assert_int_equal(pthread_create(&th[t], NULL, spawn_across_the_loss,
		    NULL), 0);
	pthread_barrier_wait(&killing);
	assert_int_equal(kill(helper, SIGKILL), 0);
	hu_await_exit(helper);
	pthread_barrier_wait(&killed);
	for (t = 0; t < THREADS; t++)
		pthread_join(th[t], NULL);
	assert_int_equal(atomic_load(&bad_jobs), 0);
	assert_true(confine_helper_pid(c) > 0);
	assert_int_not_equal(confine_helper_pid(c), helper);
	pthread_barrier_destroy(&killing);
	pthread_barrier_destroy(&killed);
	confine_close(c);
	free(scratch);
}

/*
 * The replacement of a lost helper held at a gate: a script that, once the
 * gate exists, notes its run and waits to be let through before it execs
 * the helper. While one thread's spawn waits there, another thread's
 * dispatch, wait, cancel and helper_pid must all return: progress, not a
 * clock, is what is asserted. A second spawn meanwhile waits for the same
 * replacement instead of starting one of its own.
 */
static char *gate, *runs;
static atomic_int probed, through;
static struct confine_job *old_job;

static void *
spawn_through_the_gate(void *arg)
{
	expect(spawn("exit", "0"), CONFINE_COMPLETED, CONFINE_REASON_NONE);
	atomic_fetch_add(&through, 1);
	return arg;
}

static void *
probe_while_replacing(void *arg)
{
	struct confine_result r;
	pid_t *dead = arg;

	if (confine_dispatch(c) != -ECONNRESET)
		atomic_fetch_add(&bad_jobs, 1);
	if (confine_wait(old_job, 0, &r) != 0 ||
	    r.reason != CONFINE_REASON_HELPER_LOST)
		atomic_fetch_add(&bad_jobs, 1);
	if (confine_cancel(old_job) != -EALREADY)
		atomic_fetch_add(&bad_jobs, 1);
	if (confine_helper_pid(c) != *dead)
		atomic_fetch_add(&bad_jobs, 1);
	atomic_store(&probed, 1);
	return arg;
}

static void
await_path(const char *path)
{
	struct timespec ms = { 0, 10000000 };
	int i;

	for (i = 0; i < 6000 && !tu_exists(path); i++)
		nanosleep(&ms, NULL);
	assert_true(tu_exists(path));
}

static void
a_replacement_stalls_no_other_thread(void **state)
{
	struct confine_options o = { .mode = CONFINE_MODE_EXEC };
	struct timespec ms = { 0, 10000000 };
	struct confine_result r;
	pthread_t a, b, probe;
	char *dir = tu_mkdtemp("gate"), *script, *log;
	pid_t helper;
	FILE *f;
	int i, fd;

	(void)state;
	atomic_store(&bad_jobs, 0);
	scratch = tu_mkdtemp("scratch");
	gate = tu_join(dir, "gate");
	runs = tu_join(dir, "runs");
	script = tu_join(dir, "helper.sh");
	assert_non_null(f = fopen(script, "w"));
	fprintf(f, "#!/bin/sh\nif [ -p '%s' ]; then echo run >> '%s'; "
	    "read x < '%s'; fi\nexec '%s' \"$@\"\n", gate, runs, gate, hu_helper);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(chmod(script, 0755), 0);
	o.helper_path = script;
	assert_int_equal(confine_open(&c, &o), 0);
	old_job = spawn("sleep", "60000");
	assert_non_null(old_job);
	helper = confine_helper_pid(c);
	assert_int_equal(mkfifo(gate, 0600), 0);
	assert_int_equal(kill(helper, SIGKILL), 0);
	hu_await_exit(helper);
	/* The loss seen, by a wait: old_job is settled before anyone spawns. */
	assert_int_equal(confine_wait(old_job, -1, &r), 0);
	assert_int_equal(r.reason, CONFINE_REASON_HELPER_LOST);
	assert_int_equal(pthread_create(&a, NULL, spawn_through_the_gate, NULL), 0);
	await_path(runs);
	assert_int_equal(pthread_create(&b, NULL, spawn_through_the_gate, NULL), 0);
	assert_int_equal(pthread_create(&probe, NULL, probe_while_replacing,
	    &helper), 0);
	/*
	 * The probe must be done while both spawns are still held: a stall
	 * would last until the replacement gave up on its handshake.
	 */
	for (i = 0; i < 6000 && !atomic_load(&probed); i++)
		nanosleep(&ms, NULL);
	i = atomic_load(&probed) && atomic_load(&through) == 0;
	/* Not blocking: with no one at the gate, there is no one to release. */
	if ((fd = open(gate, O_WRONLY | O_NONBLOCK)) >= 0) {
		assert_int_equal(write(fd, "go\n", 3), 3);
		close(fd);
	}
	pthread_join(probe, NULL);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	assert_int_equal(i, 1);
	assert_int_equal(atomic_load(&bad_jobs), 0);
	assert_int_not_equal(confine_helper_pid(c), helper);
	/* One replacement for both spawns. */
	log = tu_slurp(runs, NULL);
	assert_string_equal(log, "run\n");
	free(log);
	confine_job_free(old_job);
	confine_close(c);
	free(script);
	free(gate);
	free(runs);
	free(dir);
	free(scratch);
}

/*
 * Two threads wait on a job, a third frees it meanwhile. The free cancels
 * it; each wait returns its settlement, Cancelled, and the job's memory
 * outlives the waits (ASan in tools/test would see a use after free). The
 * free is made only once both waiters are blocked inside confine_wait, as
 * /proc says of their threads: in poll, or in a futex behind the reader.
 */
struct freed_wait {
	struct confine_job *job;
	struct confine_result r;
	atomic_int tid;
	int rc;
};

static void *
wait_on_it(void *arg)
{
	struct freed_wait *w = arg;

	atomic_store(&w->tid, (int)gettid());
	w->rc = confine_wait(w->job, -1, &w->r);
	return arg;
}

/* True once thread tid of ours sleeps in poll, ppoll or futex. */
static bool
blocked(int tid)
{
	char path[64], buf[64];
	long nr = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%d/syscall", tid);
	if ((f = fopen(path, "r")) == NULL)
		return false;
	if (fgets(buf, sizeof(buf), f) != NULL)
		nr = strtol(buf, NULL, 10);
	fclose(f);
	return nr == SYS_poll || nr == SYS_ppoll || nr == SYS_futex;
}

static void
a_job_freed_while_other_threads_wait(void **state)
{
	struct timespec ms = { 0, 1000000 };
	struct confine_job *job;
	struct freed_wait w[2];
	pthread_t th[2];
	int i, k, tid;

	(void)state;
	scratch = tu_mkdtemp("scratch");
	assert_int_equal(hu_open(&c, CONFINE_MODE_EXEC, NULL), 0);
	job = spawn("sleep", "60000");
	assert_non_null(job);
	/* One waiter reads the socket, the other waits behind it. */
	for (k = 0; k < 2; k++) {
		memset(&w[k], 0, sizeof(w[k]));
		w[k].job = job;
		assert_int_equal(pthread_create(&th[k], NULL, wait_on_it, &w[k]),
		    0);
	}
	for (k = 0; k < 2; k++)
		for (i = 0; i < 60000; i++) {
			tid = atomic_load(&w[k].tid);
			if (tid != 0 && blocked(tid))
				break;
			nanosleep(&ms, NULL);
		}
	confine_job_free(job);
	for (k = 0; k < 2; k++) {
		pthread_join(th[k], NULL);
		assert_int_equal(w[k].rc, 0);
		assert_int_equal(w[k].r.outcome, CONFINE_CANCELLED);
		assert_int_equal(w[k].r.reason, CONFINE_REASON_CANCELLED);
	}
	confine_close(c);
	free(scratch);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sixteen_threads_two_hundred_jobs_each),
		cmocka_unit_test(helper_killed_then_threads_spawn_at_once),
		cmocka_unit_test(a_replacement_stalls_no_other_thread),
		cmocka_unit_test(a_job_freed_while_other_threads_wait),
	};

	hu_setup();
	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests_name("threads", tests, NULL, NULL);
}
