/*
 * The helper's loop as clients meet it, run twice: on epoll, as Linux
 * helpers run, and on poll(2) (`confine-helper --poll`), the loop of
 * systems without epoll. Several clients at once, jobs settling in any
 * order, deadlines and cancels from the timer heap, a client that breaks
 * the framing and one that vanishes with a job in flight.
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

#define JOBS 40

struct loop {
	const char *const *extra;
	char *dir, *sock, *scratch;
	pid_t helper;
};

static const char *const use_poll[] = { "--poll", NULL };

static int
setup(void **state, const char *const *extra)
{
	static struct loop l[2];
	struct loop *x = &l[extra != NULL];

	x->extra = extra;
	x->dir = tu_sockdir();
	x->sock = tu_join(x->dir, "s");
	x->scratch = tu_mkdtemp("loop");
	x->helper = hu_listen(x->sock, extra);
	*state = x;
	return 0;
}

static int setup_epoll(void **state) { return setup(state, NULL); }
static int setup_poll(void **state) { return setup(state, use_poll); }

static int
teardown(void **state)
{
	struct loop *x = *state;
	int status;

	kill(x->helper, SIGTERM);
	assert_int_equal(waitpid(x->helper, &status, 0), x->helper);
	/* Stopped as asked, not crashed: the loop's own exit status. */
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	tu_rmsock(x->dir, x->sock);
	free(x->scratch);
	return 0;
}

static struct confine *
client(struct loop *x)
{
	struct confine *c;

	assert_int_equal(hu_open(&c, CONFINE_MODE_CONNECT, x->sock), 0);
	return c;
}

/* A job that must complete: the helper still serves this client. */
static void
completes(struct confine *c, const char *scratch)
{
	struct hu_job j;

	hu_init(&j, scratch, "exit", "0", NULL);
	assert_int_equal(hu_run(c, &j), 0);
	assert_int_equal(j.r.outcome, CONFINE_COMPLETED);
	hu_free(&j);
}

static void
two_clients_each_get_their_own_results(void **state)
{
	struct loop *x = *state;
	static struct hu_job j[2][JOBS];
	struct confine *c[2] = { client(x), client(x) };
	char code[16];
	int k, i;

	/* All in flight at once, on both connections, then waited in turn. */
	for (k = 0; k < 2; k++)
		for (i = 0; i < JOBS; i++) {
			snprintf(code, sizeof(code), "%d", k * JOBS + i);
			hu_init(&j[k][i], x->scratch, "exit", code, NULL);
			j[k][i].spec.backend = CONFINE_BACKEND_NONE;
			assert_int_equal(hu_spawn(c[k], &j[k][i]), 0);
		}
	for (k = 0; k < 2; k++)
		for (i = 0; i < JOBS; i++) {
			assert_int_equal(hu_wait(&j[k][i]), 0);
			assert_int_equal(j[k][i].r.exit_code, k * JOBS + i);
			assert_int_equal(j[k][i].r.outcome,
			    k == 0 && i == 0 ? CONFINE_COMPLETED : CONFINE_FAILED);
			hu_free(&j[k][i]);
		}
	confine_close(c[0]);
	confine_close(c[1]);
}

static void
deadline_and_cancel_come_from_the_loop(void **state)
{
	struct loop *x = *state;
	struct confine *c = client(x);
	struct hu_job d, k;

	hu_init(&d, x->scratch, "sleep", "60", NULL);
	d.spec.deadline_ms = 50;
	hu_init(&k, x->scratch, "sleep", "60", NULL);
	assert_int_equal(hu_spawn(c, &d), 0);
	assert_int_equal(hu_spawn(c, &k), 0);
	assert_int_equal(confine_cancel(k.job), 0);
	completes(c, x->scratch);
	assert_int_equal(hu_wait(&d), 0);
	assert_int_equal(d.r.outcome, CONFINE_CANCELLED);
	assert_int_equal(d.r.reason, CONFINE_REASON_DEADLINE);
	assert_int_equal(hu_wait(&k), 0);
	assert_int_equal(k.r.outcome, CONFINE_CANCELLED);
	assert_int_equal(k.r.reason, CONFINE_REASON_CANCELLED);
	hu_free(&d);
	hu_free(&k);
	confine_close(c);
}

static void
a_broken_client_leaves_the_others_served(void **state)
{
	struct loop *x = *state;
	unsigned char junk[256];
	struct confine *c = client(x);
	char buf[512];
	int raw;

	memset(junk, 0xff, sizeof(junk));
	raw = hu_raw_connect(x->sock);
	assert_true(raw >= 0);
	assert_int_equal(write(raw, junk, sizeof(junk)), (ssize_t)sizeof(junk));
	/* It is answered (an error, then end of file), never left hanging. */
	while (read(raw, buf, sizeof(buf)) > 0)
		;
	close(raw);
	completes(c, x->scratch);
	confine_close(c);
}

static void
a_vanished_client_takes_its_jobs_with_it(void **state)
{
	struct loop *x = *state;
	struct confine *c;
	struct hu_job j;
	int p[2], go[2], status;
	char b;
	pid_t host, job;

	tu_cred_pair(p);  /* the job's pid as the kernel gives it */
	assert_int_equal(pipe(go), 0);
	host = fork();
	assert_true(host >= 0);
	if (host == 0) {
		close(p[0]);
		close(go[1]);
		if (hu_open(&c, CONFINE_MODE_CONNECT, x->sock) != 0)
			_exit(1);
		hu_init(&j, x->scratch, "pid-sleep", "600", NULL);
		j.spec.stdout_fd = p[1];
		if (confine_spawn(c, &j.spec, &j.job) != 0)
			_exit(2);
		/* Once it runs, gone without a word: no cancel, no close. */
		close(p[1]);
		if (read(go[0], &b, 1) != 0)
			_exit(3);
		_exit(0);
	}
	close(p[1]);
	close(go[0]);
	job = hu_read_pid(p[0]);
	close(p[0]);
	close(go[1]);
	assert_int_equal(waitpid(host, &status, 0), host);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_true(job > 1);
	assert_true(tu_gone(job));
	/* And the helper still serves. */
	c = client(x);
	completes(c, x->scratch);
	confine_close(c);
}

#define BOTH(t) \
	{ "epoll: " #t, t, setup_epoll, teardown, NULL }, \
	{ "poll: " #t, t, setup_poll, teardown, NULL }

int
main(void)
{
	const struct CMUnitTest tests[] = {
		BOTH(two_clients_each_get_their_own_results),
		BOTH(deadline_and_cancel_come_from_the_loop),
		BOTH(a_broken_client_leaves_the_others_served),
		BOTH(a_vanished_client_takes_its_jobs_with_it),
	};

	hu_setup();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
