#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <dirent.h>
#include <errno.h>
#include <grp.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "src/core/fd.h"
#include "src/core/proc.h"
#include "tests/helperutil.h"
#include "tests/testutil.h"

extern char **environ;

char *hu_fixture;
char *hu_helper;

void
hu_setup(void)
{
	tu_own_tmpdir();
	hu_fixture = tu_runfile("tests/fixture");
	hu_helper = tu_runfile("helper/confine-helper");
}

void
hu_on_its_path(void **state)
{
	char *scratch = tu_mkdtemp("path");
	struct confine *c;
	const char *why;
	struct hu_job j;

	(void)state;
	assert_int_equal(hu_open(&c, CONFINE_MODE_EXEC, NULL), 0);
	hu_init(&j, scratch, "ids", NULL);
	assert_int_equal(hu_run(c, &j), 0);
	assert_int_equal(j.r.outcome, CONFINE_COMPLETED);
	why = tu_path_ids(j.out, hu_pid(&j, 0), j.r.pid, j.r.pgid,
	    confine_helper_pid(c));
	if (why != NULL)
		fail_msg("%s: %s", why, j.out);
	hu_free(&j);
	confine_close(c);
	free(scratch);
}

enum confine_proof
hu_proof(void)
{
	return tu_in_own_cgroup() ? CONFINE_PROOF_CGROUP :
	    CONFINE_PROOF_SUBREAPER;
}

static bool
can_connect(const char *path)
{
	struct sockaddr_un sun;
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	bool ok;

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	strncpy(sun.sun_path, path, sizeof(sun.sun_path) - 1);
	ok = fd >= 0 && connect(fd, (struct sockaddr *)&sun, sizeof(sun)) == 0;
	if (fd >= 0)
		close(fd);
	return ok;
}

pid_t
hu_listen(const char *path, const char *const *extra)
{
	const char *argv[24] = { "confine-helper", "--listen", path };
	struct timespec ts = { 0, 5 * 1000 * 1000 };
	size_t n = 3;
	pid_t pid;
	int i;

	while (extra && *extra && n < 22)
		argv[n++] = *extra++;
	argv[n] = NULL;
	assert_int_equal(posix_spawn(&pid, hu_helper, NULL, NULL,
	    (char *const *)(uintptr_t)argv, environ), 0);
	/* Listening, not merely bound: a connect must succeed. */
	for (i = 0; i < 1000 && !can_connect(path); i++)
		nanosleep(&ts, NULL);
	assert_true(i < 1000);
	return pid;
}

pid_t
hu_listen_as(uid_t user, const char *helper, const char *sock,
    const char *dir, long nproc, const char *const *env)
{
	struct timespec ts = { 0, 10 * 1000 * 1000 };
	pid_t pid = fork();
	int tries;

	assert_true(pid >= 0);
	if (pid == 0) {
		struct rlimit rl = { (rlim_t)nproc, (rlim_t)nproc };

		if (setgroups(0, NULL) != 0 || setgid(user) != 0 ||
		    setuid(user) != 0 ||
		    (nproc > 0 && setrlimit(RLIMIT_NPROC, &rl) != 0))
			_exit(100);
		/* Its jobs' private tmps: in its own directory. */
		setenv("TMPDIR", dir, 1);
		for (; env != NULL && *env != NULL; env++)
			if (putenv((char *)(uintptr_t)*env) != 0)
				_exit(100);
		execl(helper, "confine-helper", "--listen", sock, "--quiet",
		    (char *)NULL);
		_exit(101);
	}
	for (tries = 0; tries < 500 && !tu_exists(sock); tries++)
		nanosleep(&ts, NULL);
	return pid;
}

void
hu_stage_as(struct hu_stage *st, uid_t user)
{
	snprintf(st->dir, sizeof(st->dir), "/tmp/confine-as.XXXXXX");
	assert_non_null(mkdtemp(st->dir));
	assert_int_equal(chmod(st->dir, 0755), 0);
	st->user = user;
	st->helper = tu_join(st->dir, "confine-helper");
	st->scratch = tu_join(st->dir, "scratch");
	st->sock = tu_join(st->dir, "h.sock");
	tu_copy_exec(hu_helper, st->helper);
	assert_int_equal(mkdir(st->scratch, 0755), 0);
	assert_int_equal(chown(st->scratch, user, user), 0);
	assert_int_equal(chown(st->dir, user, user), 0);
}

void
hu_unstage(struct hu_stage *st, pid_t pid)
{
	kill(pid, SIGTERM);
	assert_int_equal(waitpid(pid, NULL, 0), pid);
	unlink(st->helper);
	rmdir(st->scratch);
	unlink(st->sock);
	rmdir(st->dir);
	free(st->helper);
	free(st->scratch);
	free(st->sock);
}

int
hu_open_as(struct confine **c, uid_t user, const char *sock)
{
	struct timespec ts = { 0, 10 * 1000 * 1000 };
	int tries, rc = -1;

	for (tries = 0; tries < 500; tries++) {
		assert_int_equal(setegid(user), 0);
		assert_int_equal(seteuid(user), 0);
		rc = hu_open(c, CONFINE_MODE_CONNECT, sock);
		assert_int_equal(seteuid(0), 0);
		assert_int_equal(setegid(0), 0);
		if (rc == 0)
			break;
		nanosleep(&ts, NULL);
	}
	return rc;
}

void
hu_stop(pid_t pid)
{
	kill(pid, SIGTERM);
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
}

int
hu_open(struct confine **c, enum confine_mode mode, const char *socket)
{
	struct confine_options o = { .mode = mode,
	    .helper_path = hu_helper, .socket_path = socket };

	return confine_open(c, &o);
}

void
hu_init(struct hu_job *j, const char *scratch, ...)
{
	va_list ap;

	memset(j, 0, sizeof(*j));
	confine_spec_init(&j->spec);
	va_start(ap, scratch);
	(void)tu_fixture_argv(j->argv, sizeof(j->argv) / sizeof(j->argv[0]), ap);
	va_end(ap);
	j->spec.exe = hu_fixture;
	j->spec.argv = j->argv;
	j->spec.scratch = scratch;
	j->outfd = -1;
}

int
hu_spawn(struct confine *c, struct hu_job *j)
{
	int p[2];

	if (j->spec.stdout_fd == -1) {
		tu_cred_pair(p);
		j->spec.stdout_fd = p[1];
		j->outfd = p[0];
	}
	j->rc = confine_spawn(c, &j->spec, &j->job);
	if (j->outfd >= 0) {
		/* The helper has its copy: ours must go, or EOF never comes. */
		close(j->spec.stdout_fd);
		j->spec.stdout_fd = -1;
	}
	return j->rc;
}

int
hu_wait(struct hu_job *j)
{
	int rc = confine_wait(j->job, -1, &j->r);

	if (j->outfd >= 0) {
		j->out = tu_drain_cred(j->outfd, &j->out_pids, &j->out_lines);
		j->outfd = -1;
	}
	return rc;
}

pid_t
hu_pid(const struct hu_job *j, size_t n)
{
	if (n >= j->out_lines || j->out_pids[n] <= 1)
		fail_msg("no writer of line %zu of the job's stdout [%s]", n,
		    j->out ? j->out : "");
	return j->out_pids[n];
}

int
hu_run(struct confine *c, struct hu_job *j)
{
	if (hu_spawn(c, j) != 0) {
		if (j->outfd >= 0) {
			close(j->outfd);
			j->outfd = -1;
		}
		return j->rc;
	}
	return hu_wait(j);
}

void
hu_assert_outcome(const struct confine_result *r, enum confine_outcome outcome,
    enum confine_reason reason)
{
	if (r->outcome == outcome && r->reason == reason)
		return;
	fail_msg("outcome %d reason %d wanted; got outcome %d reason %d "
	    "exit_code %d signal %d error %d step %d pid %ld proof %d "
	    "wall_us %lld", (int)outcome, (int)reason, (int)r->outcome,
	    (int)r->reason, r->exit_code, r->signal, r->error, (int)r->step,
	    (long)r->pid, (int)r->proof, (long long)r->wall_us);
}

void
hu_free(struct hu_job *j)
{
	confine_job_free(j->job);
	j->job = NULL;
	if (j->outfd >= 0)
		close(j->outfd);
	free(j->out);
	j->out = NULL;
	free(j->out_pids);
	j->out_pids = NULL;
	j->out_lines = 0;
}

pid_t
hu_read_pid(int fd)
{
	char buf[32];
	pid_t pid = tu_read_line_pid(fd, buf, sizeof(buf));

	/* It printed a pid: its own, as it sees it. */
	assert_true(atol(buf) > 1);
	assert_true(pid > 1);
	return pid;
}

pid_t
hu_host(const char *mode, const char *scratch, int n, pid_t *pids)
{
	char *host = tu_runfile("tests/host"), count[16];
	const char *argv[] = { "host", mode, hu_helper, hu_fixture, scratch,
		count, NULL };
	posix_spawn_file_actions_t fa;
	int p[2], i;
	pid_t pid;
	FILE *f;

	snprintf(count, sizeof(count), "%d", n);
	assert_int_equal(fd_pipe(p), 0);
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, p[1], 1);
	assert_int_equal(posix_spawn(&pid, host, &fa, NULL,
	    (char *const *)(uintptr_t)argv, environ), 0);
	posix_spawn_file_actions_destroy(&fa);
	close(p[1]);
	f = fdopen(p[0], "r");
	for (i = 0; i <= n; i++) {
		long v;

		assert_int_equal(fscanf(f, "%ld", &v), 1);
		pids[i] = (pid_t)v;
	}
	fclose(f);
	free(host);
	return pid;
}

void
hu_spec(struct confine_spec *s, const char *const *argv, const char *scratch)
{
	memset(s, 0, sizeof(*s));
	s->exe = hu_fixture;
	s->argv = argv;
	s->scratch = scratch;
	s->stdin_fd = s->stdout_fd = s->stderr_fd = -1;
}

int
hu_raw_connect(const char *path)
{
	struct sockaddr_un sun;
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	strncpy(sun.sun_path, path, sizeof(sun.sun_path) - 1);
	assert_int_equal(connect(fd, (struct sockaddr *)&sun, sizeof(sun)), 0);
	return fd;
}

void
hu_await_exit(pid_t pid)
{
	siginfo_t si;
	int rc;

	/* The library reaps its helpers; it may have done so already. */
	do
		rc = waitid(P_PID, (id_t)pid, &si, WEXITED | WNOWAIT);
	while (rc != 0 && errno == EINTR);
	assert_true(rc == 0 || errno == ECHILD);
}

/* Where /proc/PID/NAME points, or "" when unreadable. */
static void
proc_link(char *out, size_t cap, pid_t pid, const char *name)
{
	char link[340];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/%ld/%s", (long)pid, name);
	n = readlink(link, out, cap - 1);
	out[n > 0 ? n : 0] = '\0';
}

bool
hu_runs(pid_t pid, const char *path)
{
	char want[PATH_MAX], exe[PATH_MAX];

	assert_non_null(realpath(path, want));
	proc_link(exe, sizeof(exe), pid, "exe");
	return strcmp(exe, want) == 0;
}

bool
hu_has_open(pid_t pid, const char *path)
{
	char dir[64], name[300], want[PATH_MAX], got[PATH_MAX];
	struct dirent *e;
	bool found = false;
	DIR *d;

	assert_non_null(realpath(path, want));
	snprintf(dir, sizeof(dir), "/proc/%ld/fd", (long)pid);
	d = opendir(dir);
	assert_non_null(d);
	while (!found && (e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(name, sizeof(name), "fd/%s", e->d_name);
		proc_link(got, sizeof(got), pid, name);
		found = strcmp(got, want) == 0;
	}
	closedir(d);
	return found;
}

bool
hu_gone(pid_t who)
{
	struct timespec ts = { 0, 10 * 1000 * 1000 };
	int i;

	/* 0, 1 and -1 would ask about ourselves or everyone: a mistake. */
	assert_true(who > 1 || who < -1);
	for (i = 0; i < 6000; i++) {
		if (kill(who, 0) != 0 && errno == ESRCH)
			return true;
		nanosleep(&ts, NULL);
	}
	return false;
}

/* Whether pid is a helper's init prepared ahead, waiting (prepared.h). */
static bool
is_prepared(pid_t pid)
{
	char path[64], *s;
	bool yes;

	snprintf(path, sizeof(path), "/proc/%ld/comm", (long)pid);
	s = tu_slurp(path, NULL);
	yes = s != NULL && strcmp(s, "confine-prep\n") == 0;
	free(s);
	return yes;
}

struct kids {
	pid_t *out;
	int cap, n;
	bool prepared;
};

static int
one_kid(pid_t child, void *arg)
{
	struct kids *k = arg;

	if (k->n < k->cap && is_prepared(child) == k->prepared)
		k->out[k->n++] = child;
	return k->n == k->cap;
}

static int
children(pid_t pid, pid_t *out, int cap, bool prepared)
{
	struct kids k = { out, cap, 0, prepared };

	assert_true(proc_children_each(pid, pid, one_kid, &k) >= 0);
	return k.n;
}

int
hu_children_of(pid_t pid, pid_t *out, int cap)
{
	return children(pid, out, cap, false);
}

int
hu_prepared_of(pid_t pid, pid_t *out, int cap)
{
	return children(pid, out, cap, true);
}

pid_t
hu_parent_of(pid_t pid)
{
	char path[64], *s, *p;
	long ppid = 0;

	snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
	s = tu_slurp(path, NULL);
	assert_non_null(s);
	p = strrchr(s, ')');
	assert_non_null(p);
	assert_int_equal(sscanf(p + 1, " %*c %ld", &ppid), 1);
	free(s);
	return (pid_t)ppid;
}

void
hu_kill_host(const char *mode, const char *scratch, int n, bool helper_too)
{
	pid_t *pids = calloc((size_t)n + 1, sizeof(pid_t));
	pid_t *pgids = calloc((size_t)n, sizeof(pid_t));
	pid_t *kids = calloc((size_t)n + 1, sizeof(pid_t));
	const char *why;
	pid_t host;
	int i, nkids;

	assert_non_null(pids);
	assert_non_null(pgids);
	assert_non_null(kids);
	host = hu_host(mode, scratch, n, pids);
	/* A shepherd (or init) a job; or the jobs themselves, and the guard. */
	nkids = hu_children_of(pids[0], kids, n + 1);
	assert_int_equal(nkids, tu_path_direct() ? n + 1 : n);
	for (i = 0; i < n; i++) {
		pid_t parent = hu_parent_of(pids[i + 1]);
		int k = 0;

		/* The job's group is its own (its session's): not ours. */
		pgids[i] = getpgid(pids[i + 1]);
		assert_true(pgids[i] > 1);
		assert_int_not_equal(pgids[i], getpgrp());
		why = tu_path_seen(pids[i + 1], pgids[i], parent, pids[0]);
		if (why != NULL)
			fail_msg("job %ld: %s", (long)pids[i + 1], why);
		while (parent != pids[0] && k < nkids && kids[k] != parent)
			k++;
		assert_true(k < nkids);
	}
	/*
	 * At once: the helper stopped first, so that it cannot see the host
	 * die and end the jobs itself (and be gone, reaped by init, before
	 * its own kill) in between.
	 */
	if (helper_too)
		assert_int_equal(kill(pids[0], SIGSTOP), 0);
	assert_int_equal(kill(host, SIGKILL), 0);
	if (helper_too)
		assert_int_equal(kill(pids[0], SIGKILL), 0);
	assert_int_equal(waitpid(host, NULL, 0), host);
	assert_true(hu_gone(pids[0]));
	for (i = 0; i < n; i++) {
		assert_true(hu_gone(pids[i + 1]));
		assert_true(hu_gone(-pgids[i]));
	}
	for (i = 0; i < nkids; i++)
		assert_true(hu_gone(kids[i]));
	free(pids);
	free(pgids);
	free(kids);
}
