/*
 * The one reader of /proc's children lists, its cgroup file and its
 * mountinfo (src/core/proc.h, src/core/mountinfo.h), which the helper,
 * the tests and the benchmark share: each checked against what the kernel says by
 * another way. And the one self-pipe for signals (src/core/sigpipe.h).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "src/core/mountinfo.h"
#include "src/core/proc.h"
#include "src/core/procstat.h"
#include "src/core/sigpipe.h"

#define KIDS 5

struct seen {
	pid_t got[KIDS + 1];
	int n, stop_at;
};

static int
note(pid_t child, void *arg)
{
	struct seen *s = arg;

	if (s->n < KIDS + 1)
		s->got[s->n] = child;
	s->n++;
	return s->n == s->stop_at;
}

static void
children_are_listed_in_order_and_the_list_stops_when_told(void **state)
{
	pid_t kid[KIDS];
	struct seen s = { .stop_at = 0 };
	int i, procfd;

	(void)state;
	/* None yet (a test runner's own children are not ours). */
	assert_int_equal(proc_children_each(getpid(), getpid(), note, &s), 0);
	for (i = 0; i < KIDS; i++) {
		kid[i] = fork();
		assert_true(kid[i] >= 0);
		if (kid[i] == 0) {
			pause();
			_exit(0);
		}
	}
	assert_int_equal(proc_children_each(getpid(), getpid(), note, &s), KIDS);
	assert_int_equal(s.n, KIDS);
	for (i = 0; i < KIDS; i++)
		assert_int_equal(s.got[i], kid[i]);
	/* fn's nonzero ends it: two given, not five. */
	memset(&s, 0, sizeof(s));
	s.stop_at = 2;
	assert_int_equal(proc_children_each(getpid(), getpid(), note, &s), 2);
	assert_int_equal(s.got[1], kid[1]);
	for (i = 0; i < KIDS; i++) {
		kill(kid[i], SIGKILL);
		proc_reap(kid[i], NULL);
	}
	memset(&s, 0, sizeof(s));
	assert_int_equal(proc_children_each(getpid(), getpid(), note, &s), 0);
	/* Our own by /proc/self: the same list. */
	kid[0] = fork();
	assert_true(kid[0] >= 0);
	if (kid[0] == 0) {
		pause();
		_exit(0);
	}
	memset(&s, 0, sizeof(s));
	assert_int_equal(proc_children_each(0, getpid(), note, &s), 1);
	assert_int_equal(s.got[0], kid[0]);
	/*
	 * Through a descriptor of a /proc (a job's init reads its host's so),
	 * by thread-self and by number: the same list.
	 */
	procfd = open("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC);
	assert_true(procfd >= 0);
	memset(&s, 0, sizeof(s));
	assert_int_equal(proc_children_at(procfd, 0, 0, note, &s), 1);
	assert_int_equal(s.got[0], kid[0]);
	memset(&s, 0, sizeof(s));
	assert_int_equal(proc_children_at(procfd, getpid(), getpid(), note, &s),
	    1);
	assert_int_equal(s.got[0], kid[0]);
	close(procfd);
	kill(kid[0], SIGKILL);
	proc_reap(kid[0], NULL);
	/* No such process: its error, not an empty list. */
	assert_int_equal(proc_children_each(kid[0], kid[0], note, &s), -ENOENT);
}

/*
 * A process's figures (src/core/procstat.h), each against what we did:
 * a descriptor opened is one more, a child asleep is 'S' and listed, its
 * own child a descendant, memory and time are there.
 */
static void
figures_follow_what_the_process_does(void **state)
{
	int64_t cpu[4];
	long fds = proc_fd_count(getpid()), rss = proc_status_kib(getpid(),
	    "VmRSS");
	pid_t kid, grandkid, got[2];
	int p[2], fd, i;

	(void)state;
	assert_true(fds > 0);
	assert_true(rss > 0);
	fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(proc_fd_count(getpid()), fds + 1);
	close(fd);
	assert_int_equal(proc_fd_count(getpid()), fds);
	assert_int_equal(proc_status_kib(getpid(), "NoSuchField"), -1);
	assert_int_equal(proc_cpu_us(getpid(), cpu), 0);
	for (i = 0; i < 4; i++)
		assert_true(cpu[i] >= 0);
	assert_true(proc_busy_us() > 0);
	assert_int_equal(pipe(p), 0);
	/* A child, and its child, both asleep. */
	kid = fork();
	assert_true(kid >= 0);
	if (kid == 0) {
		if ((grandkid = fork()) == 0) {
			pause();
			_exit(0);
		}
		if (write(p[1], &grandkid, sizeof(grandkid)) < 0)
			_exit(1);
		pause();
		_exit(0);
	}
	assert_int_equal(read(p[0], &grandkid, sizeof(grandkid)),
	    (ssize_t)sizeof(grandkid));
	assert_true(grandkid > 0);
	for (i = 0; i < 5000 && proc_state(kid) != 'S'; i++)
		usleep(1000);
	assert_int_equal(proc_state(kid), 'S');
	assert_int_equal(proc_children(getpid(), got, 2), 1);
	assert_int_equal(got[0], kid);
	assert_int_equal(proc_descendants(getpid()), 2);
	assert_true(proc_oncpu_ns(kid) >= 0);
	kill(grandkid, SIGKILL);
	kill(kid, SIGKILL);
	proc_reap(kid, NULL);
	/* Gone: no state, no children of ours. */
	assert_int_equal(proc_state(kid), 0);
	assert_int_equal(proc_children(getpid(), got, 2), 0);
	close(p[0]);
	close(p[1]);
}

static void
own_cgroup_is_the_line_the_kernel_gives(void **state)
{
	char want[4096] = "", got[4096], tiny[2];
	FILE *f = fopen("/proc/self/cgroup", "re");
	int rc;

	(void)state;
	assert_non_null(f);
	while (fgets(want, sizeof(want), f) != NULL &&
	    strncmp(want, "0::", 3) != 0)
		want[0] = '\0';
	fclose(f);
	want[strcspn(want, "\n")] = '\0';
	/* This machine has a v2 hierarchy (hybrid or unified): its line. */
	assert_true(strncmp(want, "0::/", 4) == 0);
	assert_int_equal(proc_own_cgroup(NULL, got, sizeof(got)), 0);
	assert_string_equal(got, want + 3);
	rc = proc_own_cgroup(NULL, tiny, sizeof(tiny));
	assert_int_equal(rc, strlen(want + 3) < sizeof(tiny) ? 0 : -ENAMETOOLONG);
	/* A controller is named whole: no hierarchy lists "emor". */
	assert_int_equal(proc_own_cgroup("emor", got, sizeof(got)), -ENOENT);
}

struct find {
	const char *point;
	dev_t dev;
	bool found;
	int lines;
};

static int
find_point(const struct mountinfo_entry *e, void *arg)
{
	struct find *fd = arg;

	fd->lines++;
	assert_non_null(e->root);
	assert_non_null(e->opts);
	assert_non_null(e->type);
	assert_non_null(e->source);
	assert_non_null(e->super);
	if (strcmp(e->point, fd->point) == 0 && strcmp(e->type, "proc") == 0)
		fd->found = true;
	return 0;
}

static int
stop_at_third(const struct mountinfo_entry *e, void *arg)
{
	int *n = arg;

	(void)e;
	return ++*n == 3 ? 42 : 0;
}

static void
mountinfo_lists_each_mount_and_stops_when_told(void **state)
{
	struct find fd = { "/proc", 0, false, 0 };
	int n = 0;

	(void)state;
	assert_int_equal(mountinfo_each(find_point, &fd), 0);
	assert_true(fd.found);
	assert_true(fd.lines >= 2);
	if (fd.lines >= 3) {
		assert_int_equal(mountinfo_each(stop_at_third, &n), 42);
		assert_int_equal(n, 3);
	}
}

static void
mountinfo_paths_are_unescaped(void **state)
{
	char s[] = "/var/tmp/a\\040b\\011c\\134d";

	(void)state;
	mountinfo_unescape(s);
	assert_string_equal(s, "/var/tmp/a b\tc\\d");
	assert_int_equal(mountinfo_covers("/", "/x"), 1);
	assert_int_equal(mountinfo_covers("/var", "/var/tmp"), 4);
	assert_int_equal(mountinfo_covers("/var", "/variable"), 0);
	assert_true(mountinfo_lists("rw,memory", "memory"));
	assert_true(mountinfo_lists("memory", "memory"));
	assert_true(mountinfo_lists("cpu,cpuacct", "cpu"));
	assert_false(mountinfo_lists("cpu,cpuacct", "cpuac"));
	assert_false(mountinfo_lists("rw,memory_recursiveprot", "memory"));
	assert_false(mountinfo_lists("", "memory"));
}

static void
add_sig(int sig, void *arg)
{
	sigset_t *got = arg;

	sigaddset(got, sig);
}

static void
signals_arrive_through_the_pipe_and_nothing_after_it_is_closed(void **state)
{
	static const int sigs[] = { SIGUSR1, SIGUSR2 };
	struct sigaction sa;
	sigset_t got;
	int fd, q[2];
	char c;

	(void)state;
	fd = sigpipe_open(sigs, 2, 0);
	assert_true(fd >= 0);
	assert_true(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	assert_true(fcntl(fd, F_GETFL) & O_NONBLOCK);
	/* Nothing yet: the drain returns at once. */
	sigemptyset(&got);
	sigpipe_drain(fd, add_sig, &got);
	assert_false(sigismember(&got, SIGUSR1));
	assert_int_equal(raise(SIGUSR1), 0);
	assert_int_equal(raise(SIGUSR2), 0);
	assert_int_equal(raise(SIGUSR1), 0);
	sigpipe_drain(fd, add_sig, &got);
	assert_true(sigismember(&got, SIGUSR1));
	assert_true(sigismember(&got, SIGUSR2));
	assert_false(sigismember(&got, SIGTERM));
	/* SIGPIPE is ignored with them. */
	assert_int_equal(sigaction(SIGPIPE, NULL, &sa), 0);
	assert_true(sa.sa_handler == SIG_IGN);
	/*
	 * Closed, a signal writes nowhere: not into the pipe made next,
	 * which takes the numbers the closed one had.
	 */
	sigpipe_close(fd);
	assert_int_equal(pipe(q), 0);
	assert_int_equal(fcntl(q[0], F_SETFL, O_NONBLOCK), 0);
	assert_int_equal(raise(SIGUSR2), 0);
	assert_int_equal(read(q[0], &c, 1), -1);
	assert_int_equal(errno, EAGAIN);
	close(q[0]);
	close(q[1]);
	/* Made again, the new pipe is the one written. */
	fd = sigpipe_open(sigs, 2, 0);
	assert_true(fd >= 0);
	sigemptyset(&got);
	assert_int_equal(raise(SIGUSR2), 0);
	sigpipe_drain(fd, add_sig, &got);
	assert_true(sigismember(&got, SIGUSR2));
	sigpipe_close(fd);
}

enum make { BY_FORK, BY_SIGPIPE_FORK, BY_SIGPIPE_CLONE };

/* A child's SIGUSR1, raised right after the fork, as the parent sees it. */
static bool
childs_signal_reaches_parent(enum make how)
{
	static const int sigs[] = { SIGUSR1 };
	sigset_t got;
	int fd, status;
	pid_t pid;

	fd = sigpipe_open(sigs, 1, 0);
	assert_true(fd >= 0);
	pid = how == BY_SIGPIPE_FORK ? sigpipe_fork() :
	    how == BY_SIGPIPE_CLONE ? sigpipe_clone(0) : fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		(void)raise(SIGUSR1);
		_exit(0);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	sigemptyset(&got);
	sigpipe_drain(fd, add_sig, &got);
	sigpipe_close(fd);
	return sigismember(&got, SIGUSR1);
}

static void
a_forked_childs_signals_are_not_its_parents(void **state)
{
	(void)state;
	/* The hazard: the child's handler is the parent's, its pipe too. */
	assert_true(childs_signal_reaches_parent(BY_FORK));
	assert_false(childs_signal_reaches_parent(BY_SIGPIPE_FORK));
	assert_false(childs_signal_reaches_parent(BY_SIGPIPE_CLONE));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(children_are_listed_in_order_and_the_list_stops_when_told),
		cmocka_unit_test(figures_follow_what_the_process_does),
		cmocka_unit_test(own_cgroup_is_the_line_the_kernel_gives),
		cmocka_unit_test(mountinfo_lists_each_mount_and_stops_when_told),
		cmocka_unit_test(mountinfo_paths_are_unescaped),
		cmocka_unit_test(signals_arrive_through_the_pipe_and_nothing_after_it_is_closed),
		cmocka_unit_test(a_forked_childs_signals_are_not_its_parents),
	};

	return cmocka_run_group_tests_name("proc", tests, NULL, NULL);
}
