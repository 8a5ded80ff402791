/*
 * A client of a shared helper gets no more power than it has: a root
 * helper runs each client's jobs as that client, checks the client's
 * paths as the client, and refuses what the client could not do itself,
 * before anything is made; a helper that is not root serves only its own
 * uid. Two users no process has, A and B, connect to a root helper that
 * serves both; the attack of the issue (a root-only directory as scratch)
 * and its variants are each refused with a clear error and leave nothing.
 *
 * Unsandboxed: Bazel's sandbox maps only root. Everything a user's job
 * runs or meets is in a directory of /tmp (the runfiles are beneath /root).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "src/core/fd.h"
#include "tests/helperutil.h"
#include "tests/testutil.h"

extern char **environ;

static struct {
	char base[64];       /* /tmp/confine-clients.XXXXXX, root's, 0755 */
	char *fixture;       /* a copy anyone may run */
	char *helper_exe;    /* the same */
	char *home_a, *home_b; /* 0700, each its user's */
	char *scratch_a;     /* A's */
	char *root_only;     /* 0700, root's */
	char *link_a;        /* A's symlink to root_only */
	char *node;          /* a character device, root's, 0600 */
	char *log;           /* the root helper's stderr */
	char *tmp;           /* the helpers' TMPDIR, 1777 */
	char *sock;
	uid_t a, b;
	pid_t helper;
} w;

/* The helper as given, its stderr into path: `confine-helper --listen`. */
static pid_t
listen_logged(const char *sock, const char *log, uid_t as,
    const char *const *extra)
{
	const char *argv[16] = { "confine-helper", "--listen", sock };
	struct timespec ts = { 0, 5 * 1000 * 1000 };
	size_t n = 3;
	pid_t pid;
	int fd, i;

	while (*extra != NULL && n < 15)
		argv[n++] = *extra++;
	argv[n] = NULL;
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (fd < 0 || dup2(fd, 2) < 0)
			_exit(100);
		if (as != 0 && (setgroups(0, NULL) != 0 || setgid(as) != 0 ||
		    setuid(as) != 0))
			_exit(101);
		execve(w.helper_exe, (char *const *)(uintptr_t)argv, environ);
		_exit(102);
	}
	for (i = 0; i < 1000 && !tu_exists(sock); i++)
		nanosleep(&ts, NULL);
	assert_true(i < 1000);
	return pid;
}

/*
 * Connects as uid (its gid the same, no supplementary group): a peer's
 * credentials are those it had when it connected.
 */
static struct confine *
open_as(uid_t uid, const char *sock)
{
	struct timespec ts = { 0, 5 * 1000 * 1000 };
	struct confine *c = NULL;
	gid_t groups[64];
	int n = getgroups(64, groups), rc = -1, i;

	assert_true(n >= 0);
	for (i = 0; i < 1000 && rc != 0; i++) {
		assert_int_equal(setgroups(0, NULL), 0);
		assert_int_equal(setegid(uid), 0);
		assert_int_equal(seteuid(uid), 0);
		rc = hu_open(&c, CONFINE_MODE_CONNECT, sock);
		assert_int_equal(seteuid(0), 0);
		assert_int_equal(setegid(0), 0);
		assert_int_equal(setgroups((size_t)n, groups), 0);
		if (rc != 0)
			nanosleep(&ts, NULL);
	}
	assert_int_equal(rc, 0);
	return c;
}

static void
job_init(struct hu_job *j, const char *scratch, const char *cmd,
    const char *arg)
{
	hu_init(j, scratch, cmd, arg, NULL);
	j->spec.exe = w.fixture;
}

static char *
mkdir_owned(const char *name, uid_t uid, mode_t mode)
{
	char *path = tu_join(w.base, name);

	assert_int_equal(mkdir(path, mode), 0);
	assert_int_equal(chown(path, uid, uid), 0);
	assert_int_equal(chmod(path, mode), 0);
	return path;
}

static int
setup(void **state)
{
	char ua[24], ub[24];

	strcpy(w.base, "/tmp/confine-clients.XXXXXX");
	assert_non_null(mkdtemp(w.base));
	assert_int_equal(chmod(w.base, 0755), 0);
	w.a = tu_unused_uid();
	w.b = tu_unused_uid();
	assert_true(w.a != w.b);
	w.fixture = tu_join(w.base, "fixture");
	tu_copy_exec(hu_fixture, w.fixture);
	w.helper_exe = tu_join(w.base, "confine-helper");
	tu_copy_exec(hu_helper, w.helper_exe);
	w.home_a = mkdir_owned("a", w.a, 0700);
	w.home_b = mkdir_owned("b", w.b, 0700);
	w.scratch_a = tu_join(w.home_a, "scratch");
	assert_int_equal(mkdir(w.scratch_a, 0755), 0);
	assert_int_equal(chown(w.scratch_a, w.a, w.a), 0);
	w.root_only = mkdir_owned("root-only", 0, 0700);
	w.link_a = tu_join(w.home_a, "link");
	assert_int_equal(symlink(w.root_only, w.link_a), 0);
	assert_int_equal(lchown(w.link_a, w.a, w.a), 0);
	w.node = tu_join(w.base, "node");
	assert_int_equal(mknod(w.node, S_IFCHR | 0600, makedev(1, 3)), 0);
	w.log = tu_join(w.base, "helper.log");
	/* The clients' private tmps: somewhere each may make one. */
	w.tmp = tu_join(w.base, "tmp");
	assert_int_equal(mkdir(w.tmp, 01777), 0);
	assert_int_equal(chmod(w.tmp, 01777), 0);
	setenv("TMPDIR", w.tmp, 1);
	w.sock = tu_join(w.base, "h.sock");
	snprintf(ua, sizeof(ua), "%ld", (long)w.a);
	snprintf(ub, sizeof(ub), "%ld", (long)w.b);
	w.helper = listen_logged(w.sock, w.log, 0, (const char *const[]){
	    "--mode", "0666", "--allow-uid", ua, "--allow-uid", ub, NULL });
	(void)state;
	return 0;
}

static int
teardown(void **state)
{
	char cmd[128];

	hu_stop(w.helper);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", w.base);
	assert_int_equal(system(cmd), 0);
	(void)state;
	return 0;
}

/* uid euid gid egid ngroups, as the fixture's creds prints them. */
static void
assert_creds(const char *out, uid_t uid)
{
	char want[128];

	snprintf(want, sizeof(want), "%ld %ld %ld %ld 0\n", (long)uid,
	    (long)uid, (long)uid, (long)uid);
	assert_string_equal(out, want);
}

/* The attack's own job, as A: it runs as A, with A's rights only. */
static void
a_clients_job_runs_as_the_client(void **state)
{
	struct confine *c = open_as(w.a, w.sock), *root = open_as(0, w.sock);
	char *made = tu_join(w.scratch_a, "made");
	struct hu_job j;
	struct stat st;

	(void)state;
	job_init(&j, w.scratch_a, "creds", NULL);
	assert_int_equal(hu_run(c, &j), 0);
	assert_int_equal(j.r.outcome, CONFINE_COMPLETED);
	assert_creds(j.out, w.a);
	hu_free(&j);
	/* Unconfined too: whose job it is does not depend on the backend. */
	job_init(&j, w.scratch_a, "creds", NULL);
	j.spec.backend = CONFINE_BACKEND_NONE;
	assert_int_equal(hu_run(c, &j), 0);
	assert_creds(j.out, w.a);
	hu_free(&j);
	job_init(&j, w.scratch_a, "write", made);
	assert_int_equal(hu_run(c, &j), 0);
	assert_int_equal(j.r.outcome, CONFINE_COMPLETED);
	assert_int_equal(stat(made, &st), 0);
	assert_int_equal(st.st_uid, w.a);
	assert_int_equal(st.st_gid, w.a);
	hu_free(&j);
	/*
	 * Root's secrets: root's own job reads them, A's does not. (Root's
	 * job, without capabilities, may not write into A's root: its own.)
	 */
	job_init(&j, w.root_only, "read", "/etc/shadow");
	assert_int_equal(hu_run(root, &j), 0);
	assert_int_equal(j.r.outcome, CONFINE_COMPLETED);
	hu_free(&j);
	job_init(&j, w.scratch_a, "read", "/etc/shadow");
	assert_int_equal(hu_run(c, &j), 0);
	assert_int_equal(j.r.outcome, CONFINE_FAILED);
	assert_int_equal(j.r.exit_code, EACCES);
	hu_free(&j);
	confine_close(c);
	confine_close(root);
	free(made);
}

/* A refused spawn: its errno, a reason in words, and nothing made. */
static void
assert_refused(struct confine *c, const char *scratch, unsigned flags,
    int err, const char *words)
{
	struct stat before, after;
	struct hu_job j;
	int n = tu_count_entries(scratch);

	assert_int_equal(stat(scratch, &before), 0);
	job_init(&j, scratch, "write", "f");
	j.spec.flags = flags;
	assert_int_equal(hu_spawn(c, &j), err);
	if (strstr(confine_error_message(), words) == NULL)
		fail_msg("refusal said \"%s\", not \"%s\"",
		    confine_error_message(), words);
	hu_free(&j);
	assert_int_equal(stat(scratch, &after), 0);
	assert_int_equal(after.st_mtim.tv_sec, before.st_mtim.tv_sec);
	assert_int_equal(after.st_mtim.tv_nsec, before.st_mtim.tv_nsec);
	if (n >= 0)
		assert_int_equal(tu_count_entries(scratch), n);
}

static void
what_the_client_may_not_write_is_refused(void **state)
{
	struct confine *c = open_as(w.a, w.sock);
	const char *const roots[] = { w.root_only, w.home_b, "/etc", w.link_a };
	char *inside_b = tu_join(w.home_b, "sub");
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(roots) / sizeof(roots[0]); i++) {
		assert_refused(c, roots[i], 0, -EACCES, "may not write");
		assert_refused(c, roots[i], CONFINE_FRESH_SCRATCH, -EACCES,
		    "may not make a fresh root");
	}
	/* Beneath a directory it may not enter: not even found. */
	assert_int_equal(mkdir(inside_b, 0777), 0);
	assert_refused(c, inside_b, 0, -EACCES, "existing directory");
	confine_close(c);
	free(inside_b);
}

static void
a_device_the_client_may_not_write_is_refused(void **state)
{
	struct confine *c = open_as(w.a, w.sock);
	const char *devs[] = { w.node, NULL };
	struct hu_job j;

	(void)state;
	job_init(&j, w.scratch_a, "write", w.node);
	j.spec.devices = devs;
	assert_int_equal(hu_spawn(c, &j), -EACCES);
	assert_non_null(strstr(confine_error_message(), "may write"));
	hu_free(&j);
	confine_close(c);
}

/* A tree it may not read is no readable tree of its job's: refused. */
static void
a_tree_the_client_may_not_read_is_refused(void **state)
{
	struct confine *c = open_as(w.a, w.sock);
	const char *trees[] = { w.root_only, NULL };
	struct hu_job j;

	(void)state;
	job_init(&j, w.scratch_a, "exit", "0");
	j.spec.readable = trees;
	j.spec.flags |= CONFINE_READ_SYSTEM;
	assert_int_equal(hu_spawn(c, &j), -EACCES);
	assert_non_null(strstr(confine_error_message(), "may read"));
	hu_free(&j);
	/* Another user's home, the same. */
	trees[0] = w.home_b;
	job_init(&j, w.scratch_a, "exit", "0");
	j.spec.readable = trees;
	assert_int_equal(hu_spawn(c, &j), -EACCES);
	hu_free(&j);
	confine_close(c);
}

/* Another user's job may not write into A's root, nor A's into B's. */
static void
one_client_cannot_reach_another(void **state)
{
	struct confine *b = open_as(w.b, w.sock);

	(void)state;
	assert_refused(b, w.scratch_a, 0, -EACCES, "existing directory");
	confine_close(b);
}

/* The cwd is the job's to enter, as the client: else its cwd step fails. */
static void
a_cwd_the_client_may_not_enter_fails_the_cwd_step(void **state)
{
	struct confine *c = open_as(w.a, w.sock);
	struct hu_job j;

	(void)state;
	job_init(&j, w.scratch_a, "cwd", NULL);
	j.spec.cwd = w.root_only;
	assert_int_equal(hu_run(c, &j), 0);
	assert_int_equal(j.r.outcome, CONFINE_FAILED);
	assert_int_equal(j.r.reason, CONFINE_REASON_EXEC);
	assert_int_equal(j.r.step, CONFINE_STEP_CWD);
	assert_int_equal(j.r.error, EACCES);
	hu_free(&j);
	confine_close(c);
}

/* A fresh root is the client's: made by it, and removed as it. */
static void
a_fresh_root_is_the_clients(void **state)
{
	struct confine *c = open_as(w.a, w.sock);
	struct hu_job j;
	struct stat st;
	char *root;
	int gate[2];

	(void)state;
	/* The job waits on the gate: the root is there until we open it. */
	assert_int_equal(fd_pipe(gate), 0);
	job_init(&j, w.scratch_a, "cat", NULL);
	j.spec.flags = CONFINE_FRESH_SCRATCH;
	j.spec.stdin_fd = gate[0];
	assert_int_equal(hu_spawn(c, &j), 0);
	close(gate[0]);
	root = strdup(confine_job_scratch(j.job));
	assert_int_equal(stat(root, &st), 0);
	assert_int_equal(st.st_uid, w.a);
	close(gate[1]);
	assert_int_equal(hu_wait(&j), 0);
	assert_int_equal(j.r.outcome, CONFINE_COMPLETED);
	assert_false(tu_exists(root));
	hu_free(&j);
	confine_close(c);
	free(root);
}

/*
 * What the client's job locked or made read-only in its fresh root (000,
 * and 0555 as Go's module cache leaves its trees) is removed with it, as
 * the client: made its owner's to change again first (src/core/tree.c).
 */
static void
a_clients_locked_tree_goes_with_its_root(void **state)
{
	static const char *const argv[] = { "sh", "-c",
		"mkdir -p ro/x lk/y && echo a > ro/x/f && echo b > lk/y/g && "
		"chmod 555 ro/x ro && chmod 000 lk/y && "
		"[ \"$(stat -c %u ro/x)\" = \"$(id -u)\" ]", NULL };
	struct confine *c = open_as(w.a, w.sock);
	struct hu_job j;
	char *root;

	(void)state;
	job_init(&j, w.scratch_a, "exit", "0");
	j.spec.exe = "/bin/sh";
	j.spec.argv = argv;
	j.spec.flags = CONFINE_FRESH_SCRATCH;
	assert_int_equal(hu_run(c, &j), 0);
	assert_int_equal(j.r.outcome, CONFINE_COMPLETED);
	assert_int_equal(j.r.exit_code, 0);
	root = strdup(confine_job_scratch(j.job));
	assert_int_equal(j.r.scratch_kept, 0);
	assert_false(tu_exists(root));
	hu_free(&j);
	confine_close(c);
	free(root);
}

/*
 * A root helper's init makes a client's job's socket sends, so the
 * credentials the kernel takes are the init's: root's. A datagram that
 * names root's (pid 1, the init's own number there) is refused, as the
 * kernel refuses it to the client's own process (unconfined: EPERM too);
 * and nothing is sent by sendmsg on a socket the job was lent, whose
 * peer, the host's, would see root as the sender. Unconfined, that one
 * arrives, as the client's.
 */
static void
a_clients_job_sends_as_no_one_but_the_client(void **state)
{
	struct confine *c = open_as(w.a, w.sock);
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	char name[64], byte;
	struct hu_job j;
	int i, peer, lent;

	(void)state;
	snprintf(name, sizeof(name), "@confine-clients-creds-%ld",
	    (long)getpid());
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s.lent", name);
	sun.sun_path[0] = '\0';
	peer = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	lent = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	assert_true(peer >= 0 && lent >= 0);
	assert_int_equal(bind(peer, (struct sockaddr *)&sun, sizeof(sun)), 0);
	assert_int_equal(connect(lent, (struct sockaddr *)&sun, sizeof(sun)),
	    0);
	for (i = 0; i < 2; i++) {
		hu_init(&j, w.scratch_a, "loop", "creds-root", name, NULL);
		j.spec.exe = w.fixture;
		j.spec.backend = i == 0 ? CONFINE_BACKEND_NONE : j.spec.backend;
		assert_int_equal(hu_run(c, &j), 0);
		assert_int_equal(j.r.outcome, CONFINE_FAILED);
		assert_int_equal(j.r.exit_code, EPERM);
		hu_free(&j);
		hu_init(&j, w.scratch_a, "fd0", "sendmsg-peer", "-", NULL);
		j.spec.exe = w.fixture;
		j.spec.backend = i == 0 ? CONFINE_BACKEND_NONE : j.spec.backend;
		j.spec.stdin_fd = lent;
		assert_int_equal(hu_run(c, &j), 0);
		assert_int_equal(j.r.exit_code, i == 0 ? 0 : EPERM);
		assert_int_equal(recv(peer, &byte, 1, MSG_DONTWAIT),
		    i == 0 ? 1 : -1);
		hu_free(&j);
	}
	close(peer);
	close(lent);
	confine_close(c);
}

/* Not root: only its own uid's jobs, whoever it lets connect. */
static void
a_helper_that_is_not_root_serves_only_its_own_uid(void **state)
{
	char *sock = tu_join(w.base, "a.sock"), *log = tu_join(w.base, "a.log");
	char ub[24];
	struct confine *c;
	struct hu_job j;
	pid_t h;

	(void)state;
	snprintf(ub, sizeof(ub), "%ld", (long)w.b);
	assert_int_equal(chmod(w.base, 0777), 0);
	h = listen_logged(sock, log, w.a, (const char *const[]){ "--mode",
	    "0666", "--allow-uid", ub, NULL });
	c = open_as(w.b, sock);
	job_init(&j, w.scratch_a, "creds", NULL);
	assert_int_equal(hu_spawn(c, &j), -EPERM);
	assert_non_null(strstr(confine_error_message(), "not root"));
	hu_free(&j);
	confine_close(c);
	c = open_as(w.a, sock);
	job_init(&j, w.scratch_a, "creds", NULL);
	assert_int_equal(hu_run(c, &j), 0);
	assert_creds(j.out, w.a);
	hu_free(&j);
	confine_close(c);
	hu_stop(h);
	assert_int_equal(chmod(w.base, 0755), 0);
	free(sock);
	free(log);
}

static void
assert_logged(const char *log, const char *line)
{
	if (strstr(log, line) == NULL)
		fail_msg("the helper's log has no \"%s\":\n%s", line, log);
}

/* One line each: start, peers admitted and refused, refusals, stop. */
static void
the_helper_logs_whom_it_serves_and_what_it_refuses(void **state)
{
	struct confine *c = open_as(w.a, w.sock);
	uid_t stranger = tu_unused_uid();
	char line[160], *log;
	struct hu_job j;

	(void)state;
	job_init(&j, w.root_only, "write", "f");
	assert_int_equal(hu_spawn(c, &j), -EACCES);
	hu_free(&j);
	confine_close(c);
	assert_int_equal(setegid(stranger), 0);
	assert_int_equal(seteuid(stranger), 0);
	assert_int_equal(hu_open(&c, CONFINE_MODE_CONNECT, w.sock), -EACCES);
	assert_int_equal(seteuid(0), 0);
	assert_int_equal(setegid(0), 0);
	hu_stop(w.helper);
	log = tu_slurp(w.log, NULL);
	assert_non_null(log);
	snprintf(line, sizeof(line), "started as uid 0 gid 0, listening on %s, "
	    "mode 0666, serving uid 0 and %ld and %ld", w.sock, (long)w.a,
	    (long)w.b);
	assert_logged(log, line);
	snprintf(line, sizeof(line), "uid %ld gid %ld: admitted", (long)w.a,
	    (long)w.a);
	assert_logged(log, line);
	snprintf(line, sizeof(line), "uid %ld: request 1 refused: the job's "
	    "user may not write that scratch root (Permission denied)",
	    (long)w.a);
	assert_logged(log, line);
	snprintf(line, sizeof(line), "uid %ld: connection 0 refused: this "
	    "helper does not serve your uid", (long)stranger);
	assert_logged(log, line);
	assert_logged(log, "SIGTERM: stopping, 0 jobs to cancel");
	assert_logged(log, "]: stopped\n");
	free(log);
	/* For teardown to stop. */
	w.helper = listen_logged(w.sock, w.log, 0, (const char *const[]){ NULL });
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(a_clients_job_runs_as_the_client),
		cmocka_unit_test(what_the_client_may_not_write_is_refused),
		cmocka_unit_test(a_device_the_client_may_not_write_is_refused),
		cmocka_unit_test(a_tree_the_client_may_not_read_is_refused),
		cmocka_unit_test(one_client_cannot_reach_another),
		cmocka_unit_test(a_cwd_the_client_may_not_enter_fails_the_cwd_step),
		cmocka_unit_test(a_fresh_root_is_the_clients),
		cmocka_unit_test(a_clients_locked_tree_goes_with_its_root),
		cmocka_unit_test(a_clients_job_sends_as_no_one_but_the_client),
		cmocka_unit_test(a_helper_that_is_not_root_serves_only_its_own_uid),
		cmocka_unit_test(the_helper_logs_whom_it_serves_and_what_it_refuses),
	};

	hu_setup();
	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests_name("clients", tests, setup, teardown);
}
