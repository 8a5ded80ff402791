/*
 * Jobs' inits prepared before their requests (helper/engine/prepared.h, issue
 * 35): a helper keeps inits already in their PID, mount, network, IPC and
 * UTS namespaces, made after a turn's replies; a job's request goes to
 * one of them. Checked from the host, by the namespaces' identities: the
 * job is in the prepared init's, which were nobody else's; one serves one
 * job; their number follows demand up to the ceiling; an idle helper,
 * and a dead one, holds none. As root, reading /proc of the helper's
 * children.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tests/helperutil.h"
#include "tests/testutil.h"

#define SOME 6

static char *scratch;

static const char *const show_ns[] = { "/bin/sh", "-c",
	"readlink /proc/self/ns/pid /proc/self/ns/mnt /proc/self/ns/net "
	"/proc/self/ns/ipc /proc/self/ns/uts", NULL };
static const char *const ns_names[] = { "pid", "mnt", "net", "ipc", "uts" };
/* The same, then held until its stdin is closed (job_held). */
static const char *const show_ns_held[] = { "/bin/sh", "-c",
	"readlink /proc/self/ns/pid /proc/self/ns/mnt /proc/self/ns/net "
	"/proc/self/ns/ipc /proc/self/ns/uts; read x; true", NULL };

/* A helper whose prepared inits are dropped after idle_ms without a job. */
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
 * Waits (up to a minute) until helper has exactly n prepared inits
 * waiting, filling out (cap SOME); false if it never does.
 */
static bool
prepared_become(pid_t helper, int n, pid_t *out)
{
	struct timespec ts = { 0, 5 * 1000 * 1000 };
	int i;

	for (i = 0; i < 12000; i++) {
		if (hu_prepared_of(helper, out, SOME) == n)
			return true;
		nanosleep(&ts, NULL);
	}
	return false;
}

/* "pid:[N]\nmnt:[N]\n..." of pid, as the job's own readlink says it. */
static char *
namespaces_of(pid_t pid)
{
	char path[64], link[64], *all = calloc(1, 512);
	ssize_t n;
	size_t i;

	assert_non_null(all);
	for (i = 0; i < sizeof(ns_names) / sizeof(ns_names[0]); i++) {
		snprintf(path, sizeof(path), "/proc/%ld/ns/%s", (long)pid,
		    ns_names[i]);
		n = readlink(path, link, sizeof(link) - 1);
		assert_true(n > 0);
		link[n] = '\0';
		strcat(strcat(all, link), "\n");
	}
	return all;
}

/* Whether each line of a differs from the same line of b. */
static bool
lines_all_differ(const char *a, const char *b)
{
	const char *ea, *eb;

	for (;;) {
		ea = strchr(a, '\n');
		eb = strchr(b, '\n');
		if (ea == NULL || eb == NULL)
			return ea == eb;
		if (ea - a == eb - b && memcmp(a, b, (size_t)(ea - a)) == 0)
			return false;
		a = ea + 1;
		b = eb + 1;
	}
}

/* A job of argv (and devices), run to the end: what it printed. */
static char *
job_output(struct confine *c, const char *in, const char *const *argv,
    const char **devices)
{
	struct hu_job j;
	char *out;

	hu_init(&j, in, NULL);
	j.spec.exe = argv[0];
	j.spec.argv = argv;
	j.spec.devices = devices;
	assert_int_equal(hu_run(c, &j), 0);
	assert_int_equal(j.r.outcome, CONFINE_COMPLETED);
	assert_int_equal(j.r.exit_code, 0);
	assert_non_null(j.out);
	out = strdup(j.out);
	hu_free(&j);
	return out;
}

/* A job that shows its namespaces: what it printed. */
static char *
job_namespaces(struct confine *c, const char *in)
{
	return job_output(c, in, show_ns, NULL);
}

/*
 * A job that shows its namespaces and stays until *hold is closed
 * (job_released): while it runs, its namespaces are alive, and so no
 * namespace made meanwhile can have their numbers. The kernel gives a
 * freed namespace's number to the next one made: two sets of numbers
 * are two sets of namespaces only if both were alive at once.
 */
static void
job_held(struct confine *c, struct hu_job *j, const char *in, int *hold)
{
	int p[2];

	assert_int_equal(pipe(p), 0);
	hu_init(j, in, NULL);
	j->spec.exe = show_ns_held[0];
	j->spec.argv = show_ns_held;
	j->spec.stdin_fd = p[0];
	assert_int_equal(hu_spawn(c, j), 0);
	close(p[0]);  /* the helper has its copy */
	*hold = p[1];
}

/* The held job let go and run to its end: what it printed. */
static char *
job_released(struct hu_job *j, int hold)
{
	char *out;

	close(hold);
	assert_int_equal(hu_wait(j), 0);
	assert_int_equal(j->r.outcome, CONFINE_COMPLETED);
	assert_int_equal(j->r.exit_code, 0);
	assert_non_null(j->out);
	out = strdup(j->out);
	hu_free(j);
	return out;
}

/*
 * Once one is prepared, its namespaces (made in it, not the host's):
 * what it shows once its own differ from the host's in each of them.
 */
static char *
prepared_namespaces(pid_t pid, const char *host)
{
	struct timespec ts = { 0, 5 * 1000 * 1000 };
	char *now = NULL;
	int i;

	for (i = 0; i < 12000; i++) {
		free(now);
		now = namespaces_of(pid);
		if (lines_all_differ(now, host))
			return now;
		nanosleep(&ts, NULL);
	}
	fail_msg("init %ld never had namespaces of its own", (long)pid);
	return NULL;
}

/*
 * The second job is given what was prepared while the first ran: its
 * namespaces, every one, are the prepared init's, which are not the
 * host's; it is gone after (one job each), and the next one's are new.
 */
static void
a_job_runs_in_an_init_prepared_before_it(void **state)
{
	char *host, *held, *seen, *first, *next, *probe;
	pid_t helper, h[SOME], h2[SOME], h0[SOME];
	struct confine *c;
	struct hu_job j;
	int hold;

	(void)state;
	helper = open_helper(&c, "60000");
	host = namespaces_of(getpid());
	/*
	 * Its start made one, which said namespaces can be made (in place
	 * of a probe): the first job's.
	 */
	assert_true(prepared_become(helper, 1, h0));
	probe = prepared_namespaces(h0[0], host);
	/* Its successor is made while the first job runs (job_held). */
	job_held(c, &j, scratch, &hold);
	assert_true(prepared_become(helper, 1, h));
	held = prepared_namespaces(h[0], host);
	first = job_released(&j, hold);
	assert_string_equal(first, probe);
	assert_true(hu_gone(h0[0]));
	/* Nothing of the first job is the prepared one's. */
	assert_true(lines_all_differ(held, first));

	job_held(c, &j, scratch, &hold);
	/* Its successor, made while it runs: nobody's yet. */
	assert_true(prepared_become(helper, 1, h2));
	assert_int_not_equal(h2[0], h[0]);
	next = prepared_namespaces(h2[0], host);
	seen = job_released(&j, hold);
	assert_string_equal(seen, held);
	assert_true(hu_gone(h[0]));
	assert_true(lines_all_differ(next, held));
	/* Closed, the helper takes its prepared inits with it. */
	confine_close(c);
	assert_true(hu_gone(h2[0]));
	free(host);
	free(held);
	free(seen);
	free(first);
	free(next);
	free(probe);
}

/*
 * The job's /dev, /proc and /tmp mounts (mount point, its flags, type, the
 * file system's options) and /dev's entries (mode, owner, type, device),
 * each line sorted: what the view made, less what differs between any two
 * (ids, times, the descriptors that named the overlay's layers).
 */
static const char *const show_view[] = { "/bin/sh", "-c",
	"{ awk '{ for (i = 7; $i != \"-\"; i++) ; print $5, $6, $(i + 1), "
	"$(i + 3) }' /proc/self/mountinfo | grep -E '^/(dev|proc|tmp)' | "
	"sed 's|/proc/self/fd/[0-9]*|fd|g'; "
	"stat -c '%n %a %u %g %F %t:%T' /dev /dev/* /dev/pts/*; } | sort",
	NULL };

#define TEST_NODE "/dev/confine-prepared-test"

static char *
job_view(struct confine *c)
{
	/* One of the nodes every /dev has, and one it has not. */
	const char *devs[] = { "/dev/zero", TEST_NODE, NULL };

	return job_output(c, scratch, show_view, devs);
}

/*
 * A prepared init makes the job's /dev and /proc, and the overlay of its
 * /tmp, before the request and attaches them after the request's trees:
 * the job sees the same view, mount for mount and node for node, as one
 * whose init made them at its request (CONFINE_PREPARED=0), the spec's
 * devices among them.
 */
static void
a_prepared_view_is_the_one_made_at_the_request(void **state)
{
	struct confine *c;
	char *ahead, *then;
	pid_t helper, h[SOME];

	(void)state;
	(void)unlink(TEST_NODE);
	assert_int_equal(mknod(TEST_NODE, S_IFCHR | 0600, makedev(1, 3)), 0);
	helper = open_helper(&c, "60000");
	/* Not the start's, which makes them at the request (prepared.c). */
	free(job_view(c));
	assert_true(prepared_become(helper, 1, h));
	ahead = job_view(c);
	assert_true(hu_gone(h[0]));
	confine_close(c);

	assert_int_equal(setenv("CONFINE_PREPARED", "0", 1), 0);
	helper = open_helper(&c, "60000");
	assert_int_equal(unsetenv("CONFINE_PREPARED"), 0);
	then = job_view(c);
	/* None made but the start's, dropped: that job's init was its own. */
	assert_true(prepared_become(helper, 0, h));
	confine_close(c);
	assert_int_equal(unlink(TEST_NODE), 0);

	/* Not two empty answers: each has what a job's /dev is. */
	assert_non_null(strstr(then, "/dev/pts "));
	assert_non_null(strstr(then, "/dev/shm "));
	assert_non_null(strstr(then, "/proc ro,"));
	assert_non_null(strstr(then, TEST_NODE " 600 0 0 character special"));
	assert_non_null(strstr(then, "/dev/zero "));
	assert_non_null(strstr(then, "/tmp rw,nosuid,nodev,relatime overlay "
	    "rw,lowerdir=/tmp,upperdir=fd,workdir=fd,"));
	assert_string_equal(ahead, then);
	free(ahead);
	free(then);
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
 * many are wanted, up to the ceiling (4 by default), never more; idle,
 * none at all. One host's spawns come one at a time, each served by the
 * one made after the last.
 */
static void
prepared_follow_demand_and_go_when_idle(void **state)
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
	assert_true(prepared_become(helper, 4, h));
	nanosleep(&ts, NULL);
	assert_int_equal(hu_prepared_of(helper, h, SOME), 4);
	for (i = 0; i < SOME; i++) {
		assert_int_equal(confine_cancel(j[i].job), 0);
		assert_int_equal(hu_wait(&j[i]), 0);
		assert_int_equal(j[i].r.outcome, CONFINE_CANCELLED);
		hu_free(&j[i]);
	}
	/* Three seconds after the last job asked: none, and no child. */
	assert_true(prepared_become(helper, 0, none));
	for (i = 0; i < 4; i++)
		assert_true(hu_gone(h[i]));
	assert_int_equal(hu_children_of(helper, none, SOME), 0);
	for (i = 0; i < SOME; i++)
		confine_close(c[i]);
	hu_stop(helper);
	tu_rmsock(dir, sock);
}

/* Killed, the helper's prepared inits die with it (PR_SET_PDEATHSIG). */
static void
prepared_inits_die_with_a_killed_helper(void **state)
{
	struct confine *c;
	pid_t helper, h[SOME];
	char *out;

	(void)state;
	helper = open_helper(&c, "60000");
	out = job_namespaces(c, scratch);
	assert_true(prepared_become(helper, 1, h));
	assert_int_equal(kill(helper, SIGKILL), 0);
	hu_await_exit(helper);
	assert_true(hu_gone(h[0]));
	confine_close(c);
	free(out);
}

/*
 * A helper that is not root prepares its jobs' inits too, each in a user
 * namespace of its own (mapping the helper's uid alone), and the job runs
 * in every namespace of it. The helper runs as a uid no process has, its
 * binary copied where that user can run it.
 */
static void
an_unprivileged_helper_prepares_them_too(void **state)
{
	static const char *const prepared_env[] = {
		"CONFINE_PREPARED_IDLE_MS=60000", NULL };
	char *host, *held, *seen;
	struct confine *c = NULL;
	struct hu_stage st;
	struct hu_job j;
	pid_t pid, h[SOME];

	(void)state;
	hu_stage_as(&st, tu_unused_uid());
	pid = hu_listen_as(st.user, st.helper, st.sock, st.dir, 0,
	    prepared_env);
	assert_int_equal(hu_open_as(&c, st.user, st.sock), 0);
	hu_init(&j, st.scratch, NULL);
	j.spec.exe = show_ns[0];
	j.spec.argv = (const char *const *)show_ns;
	assert_int_equal(hu_run(c, &j), 0);
	assert_int_equal(j.r.outcome, CONFINE_COMPLETED);
	hu_free(&j);
	assert_true(prepared_become(pid, 1, h));
	host = namespaces_of(getpid());
	held = prepared_namespaces(h[0], host);
	{
		char path[64], mine[64], theirs[64];
		ssize_t n;

		/* Its user namespace, not the host's. */
		snprintf(path, sizeof(path), "/proc/%ld/ns/user", (long)h[0]);
		n = readlink(path, theirs, sizeof(theirs) - 1);
		assert_true(n > 0);
		theirs[n] = '\0';
		n = readlink("/proc/self/ns/user", mine, sizeof(mine) - 1);
		assert_true(n > 0);
		mine[n] = '\0';
		assert_string_not_equal(theirs, mine);
	}
	seen = job_namespaces(c, st.scratch);
	assert_string_equal(seen, held);
	assert_true(hu_gone(h[0]));
	confine_close(c);
	hu_unstage(&st, pid);
	free(host);
	free(held);
	free(seen);
}

/* The one private tmp a helper made in base, while there is one alone. */
static char *
tmp_in(const char *base, int *n)
{
	DIR *d = opendir(base);
	struct dirent *e;
	char *one = NULL;

	assert_non_null(d);
	*n = 0;
	while ((e = readdir(d)) != NULL)
		if (strncmp(e->d_name, "confine-tmp.", 12) == 0 && ++*n == 1)
			one = tu_join(base, e->d_name);
	closedir(d);
	if (*n != 1) {
		free(one);
		one = NULL;
	}
	return one;
}

/* Waits (up to a minute) until base holds n private tmps: true. */
static bool
tmps_become(const char *base, int n)
{
	struct timespec ts = { 0, 5 * 1000 * 1000 };
	int i, now;

	for (i = 0; i < 12000; i++) {
		free(tmp_in(base, &now));
		if (now == n)
			return true;
		nanosleep(&ts, NULL);
	}
	return false;
}

/* Waits (up to a minute) until path is gone: true. */
static bool
path_gone(const char *path)
{
	struct timespec ts = { 0, 5 * 1000 * 1000 };
	int i;

	for (i = 0; i < 12000; i++) {
		if (access(path, F_OK) != 0 && errno == ENOENT)
			return true;
		nanosleep(&ts, NULL);
	}
	return false;
}

#define HOST_FILE "/tmp/confine-prepared-host"
#define JOB_FILE "/tmp/confine-prepared-job"

/*
 * Each prepared init has a private tmp in the helper's tmp base, with the
 * host's /tmp beneath it made ahead (helper/engine/prepared.h). A job that may
 * have that (reads everywhere) gets it: its /tmp is that tmp (confine_job_tmp
 * names its upper layer), the host's file reads there, and what it writes
 * there the host's /tmp never sees. A job that may not (reads narrowed)
 * gets a tmp of its own; the prepared one is removed. Dropped when idle,
 * and at the helper's stop, none is left behind.
 */
static void
prepared_tmps_are_their_jobs_or_removed(void **state)
{
	static const char *const read_write[] = { "/bin/sh", "-c",
		"cat " HOST_FILE " && echo job > " JOB_FILE, NULL };
	char *base = tu_mkdtemp("prepared-base"), *t0, *t1, *upper;
	const char *old = getenv("TMPDIR");
	char *saved = old != NULL ? strdup(old) : NULL;
	struct confine *c;
	struct hu_job j;
	pid_t helper, h[SOME];
	int n, fd;

	(void)state;
	(void)unlink(JOB_FILE);
	fd = open(HOST_FILE, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "host\n", 5), 5);
	close(fd);
	assert_int_equal(setenv("TMPDIR", base, 1), 0);
	helper = open_helper(&c, "1500");
	if (saved != NULL)
		assert_int_equal(setenv("TMPDIR", saved, 1), 0);
	else
		assert_int_equal(unsetenv("TMPDIR"), 0);

	/* The start's init, with its tmp: the first job's. */
	assert_true(prepared_become(helper, 1, h));
	t0 = tmp_in(base, &n);
	assert_int_equal(n, 1);
	hu_init(&j, scratch, NULL);
	j.spec.exe = read_write[0];
	j.spec.argv = read_write;
	assert_int_equal(hu_spawn(c, &j), 0);
	upper = tu_join(t0, "u");
	assert_string_equal(confine_job_tmp(j.job), upper);
	assert_non_null(strstr(confine_job_enforced(j.job),
	    " tmp=over-hosts "));
	assert_int_equal(hu_wait(&j), 0);
	assert_int_equal(j.r.outcome, CONFINE_COMPLETED);
	assert_int_equal(j.r.exit_code, 0);
	assert_string_equal(j.out, "host\n");
	assert_int_equal(access(JOB_FILE, F_OK), -1);
	assert_int_equal(errno, ENOENT);
	hu_free(&j);
	assert_true(path_gone(t0));

	/* Reads narrowed: not for it; the prepared one goes with its init. */
	assert_true(prepared_become(helper, 1, h));
	assert_true(tmps_become(base, 1));
	t1 = tmp_in(base, &n);
	assert_non_null(t1);
	hu_init(&j, scratch, NULL);
	j.spec.exe = read_write[0];
	j.spec.argv = read_write;
	j.spec.flags |= CONFINE_READ_SYSTEM;
	assert_int_equal(hu_spawn(c, &j), 0);
	assert_int_not_equal(strncmp(confine_job_tmp(j.job), t1, strlen(t1)),
	    0);
	assert_non_null(strstr(confine_job_enforced(j.job), " tmp=private "));
	assert_int_equal(hu_wait(&j), 0);
	/* Its /tmp is its own alone: the host's file is out of sight. */
	assert_int_equal(j.r.outcome, CONFINE_FAILED);
	assert_int_equal(j.r.exit_code, 1);
	assert_int_equal(access(JOB_FILE, F_OK), -1);
	hu_free(&j);
	assert_true(path_gone(t1));

	/* Idle: the inits dropped, and their tmps removed. */
	assert_true(prepared_become(helper, 0, h));
	assert_true(tmps_become(base, 0));
	/* Stopped with one held: its tmp goes too. */
	free(job_namespaces(c, scratch));
	assert_true(prepared_become(helper, 1, h));
	assert_true(tmps_become(base, 1));
	confine_close(c);
	assert_true(hu_gone(h[0]));
	assert_true(tmps_become(base, 0));

	assert_int_equal(unlink(HOST_FILE), 0);
	free(t0);
	free(t1);
	free(upper);
	free(saved);
	/* Nothing else either: the helper's trash went with it. */
	assert_int_equal(rmdir(base), 0);
	free(base);
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
		cmocka_unit_test(a_job_runs_in_an_init_prepared_before_it),
		cmocka_unit_test(a_prepared_view_is_the_one_made_at_the_request),
		cmocka_unit_test(prepared_follow_demand_and_go_when_idle),
		cmocka_unit_test(prepared_inits_die_with_a_killed_helper),
		cmocka_unit_test(an_unprivileged_helper_prepares_them_too),
		cmocka_unit_test(prepared_tmps_are_their_jobs_or_removed),
	};

	hu_setup();
	return cmocka_run_group_tests(tests, setup, teardown);
}
