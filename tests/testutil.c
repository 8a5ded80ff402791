#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "src/core/mountinfo.h"
#include "src/core/proc.h"
#include "tests/testutil.h"

#ifdef __linux__
#include <sched.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#endif

#ifndef SOCK_CLOEXEC
#define SOCK_CLOEXEC 0
#endif

/* In a pid namespace of the test's own (tu_own_pids), its waiter's pid. */
static pid_t outer_pid;

/*
 * Our pid, or our waiter's: what names the test's own cgroups and picks
 * its unused uids apart from other tests', whose pids are the machine's.
 */
static long
test_id(void)
{
	return (long)(outer_pid > 0 ? outer_pid : getpid());
}

static _Noreturn void
die(const char *what, const char *arg)
{
	fprintf(stderr, "test setup: %s %s: %s\n", what, arg ? arg : "",
	    strerror(errno));
	abort();
}

size_t
tu_fixture_argv(const char **argv, size_t max, va_list ap)
{
	const char *a;
	size_t n = 0;

	argv[n++] = "fixture";
	while ((a = va_arg(ap, const char *)) != NULL && n < max - 1)
		argv[n++] = a;
	argv[n] = NULL;
	return n;
}

void
tu_own_tmpdir(void)
{
	const char *t = getenv("TEST_TMPDIR");

	if (t != NULL && t[0] == '/')
		setenv("TMPDIR", t, 1);
}

char *
tu_runfile(const char *rel)
{
	const char *root = getenv("TEST_SRCDIR"), *ws = getenv("TEST_WORKSPACE");
	char buf[PATH_MAX], *abs;

	if (root == NULL || ws == NULL)
		die("TEST_SRCDIR/TEST_WORKSPACE unset: run under bazel test", NULL);
	snprintf(buf, sizeof(buf), "%s/%s/%s", root, ws, rel);
	abs = realpath(buf, NULL);
	if (abs == NULL)
		die("no runfile", buf);
	return abs;
}

char *
tu_mkdtemp(const char *prefix)
{
	const char *tmp = getenv("TEST_TMPDIR");
	char buf[PATH_MAX], *abs;

	snprintf(buf, sizeof(buf), "%s/%s.XXXXXX", tmp ? tmp : "/tmp", prefix);
	if (mkdtemp(buf) == NULL)
		die("mkdtemp", buf);
	abs = realpath(buf, NULL);
	if (abs == NULL)
		die("realpath", buf);
	return abs;
}

char *
tu_sockdir_in(const char *parent)
{
	char buf[64];

	/* A unix socket's path must fit in 108 bytes: TEST_TMPDIR may not. */
	snprintf(buf, sizeof(buf), "%s/confine-sock.XXXXXX", parent);
	if (mkdtemp(buf) == NULL)
		die("mkdtemp", buf);
	return strdup(buf);
}

char *
tu_sockdir(void)
{
	return tu_sockdir_in("/tmp");
}

void
tu_rmsock(char *dir, char *sock)
{
	if (sock != NULL)
		(void)unlink(sock);
	if (dir != NULL)
		(void)rmdir(dir);
	free(sock);
	free(dir);
}

char *
tu_join(const char *dir, const char *name)
{
	size_t n = strlen(dir) + strlen(name) + 2;
	char *p = malloc(n);

	if (p == NULL)
		die("malloc", NULL);
	snprintf(p, n, "%s/%s", dir, name);
	return p;
}

bool
tu_exists(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0;
}

static char *
slurp_fd(int fd, size_t *len)
{
	size_t cap = 4096, n = 0;
	char *buf = malloc(cap);
	ssize_t got;

	if (buf == NULL)
		die("malloc", NULL);
	for (;;) {
		if (cap - n < 2 && (buf = realloc(buf, cap *= 2)) == NULL)
			die("realloc", NULL);
		got = read(fd, buf + n, cap - n - 1);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			break;
		n += (size_t)got;
	}
	buf[n] = '\0';
	if (len)
		*len = n;
	return buf;
}

char *
tu_slurp(const char *path, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	char *s;

	if (fd < 0)
		return NULL;
	s = slurp_fd(fd, len);
	close(fd);
	return s;
}

char *
tu_drain(int fd)
{
	char *s = slurp_fd(fd, NULL);

	close(fd);
	return s;
}

void
tu_cred_pair(int sv[2])
{
#ifdef __linux__
	int one = 1;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0 ||
	    setsockopt(sv[0], SOL_SOCKET, SO_PASSCRED, &one, sizeof(one)) != 0)
		die("socketpair", "SO_PASSCRED");
#else
	/* No credentials by message, and no PID namespaces to need them. */
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0 ||
	    fcntl(sv[0], F_SETFD, FD_CLOEXEC) != 0 ||
	    fcntl(sv[1], F_SETFD, FD_CLOEXEC) != 0)
		die("socketpair", NULL);
#endif
}

/*
 * One chunk from a socket of tu_cred_pair's, and the pid of the process
 * that wrote it (in our pid namespace; 0 where it has none there). The
 * kernel never joins two writers' bytes into one chunk.
 */
static ssize_t
recv_cred(int fd, char *buf, size_t len, pid_t *pid)
{
#ifdef __linux__
	char cbuf[CMSG_SPACE(sizeof(struct ucred))];
	struct iovec iov = { buf, len };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cbuf, .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *c;
	struct ucred uc;
	ssize_t n;

	do
		n = recvmsg(fd, &m, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	*pid = 0;
	for (c = CMSG_FIRSTHDR(&m); n > 0 && c != NULL; c = CMSG_NXTHDR(&m, c))
		if (c->cmsg_level == SOL_SOCKET &&
		    c->cmsg_type == SCM_CREDENTIALS) {
			memcpy(&uc, CMSG_DATA(c), sizeof(uc));
			*pid = uc.pid;
		}
	return n;
#else
	ssize_t n;

	do
		n = read(fd, buf, len);
	while (n < 0 && errno == EINTR);
	*pid = 0;  /* what the line says: there is no other pid to see */
	return n;
#endif
}

char *
tu_drain_cred(int fd, pid_t **line_pids, size_t *nlines)
{
	size_t cap = 4096, n = 0, lines = 0, lcap = 16, i;
	char *buf = malloc(cap);
	pid_t *pids = malloc(lcap * sizeof(*pids)), pid;
	bool at_start = true;
	ssize_t got;

	if (buf == NULL || pids == NULL)
		die("malloc", NULL);
	for (;;) {
		if (cap - n < 2 && (buf = realloc(buf, cap *= 2)) == NULL)
			die("realloc", NULL);
		got = recv_cred(fd, buf + n, cap - n - 1, &pid);
		if (got <= 0)
			break;
		/* Each line is its first byte's writer's. */
		for (i = 0; i < (size_t)got; i++) {
			if (at_start) {
				if (lines == lcap && (pids = realloc(pids,
				    (lcap *= 2) * sizeof(*pids))) == NULL)
					die("realloc", NULL);
				pids[lines++] = pid;
			}
			at_start = buf[n + i] == '\n';
		}
		n += (size_t)got;
	}
	buf[n] = '\0';
	close(fd);
#ifndef __linux__
	/* A job's pid as it sees it is ours (no PID namespaces): as printed. */
	{
		char *at = buf;

		for (i = 0; i < lines && at != NULL; i++) {
			pids[i] = (pid_t)atol(at);
			if ((at = strchr(at, '\n')) != NULL)
				at++;
		}
	}
#endif
	*line_pids = pids;
	*nlines = lines;
	return buf;
}

pid_t
tu_read_line_pid(int fd, char *line, size_t len)
{
	pid_t pid, first = 0;
	size_t k = 0;
	char c;

	while (k + 1 < len && recv_cred(fd, &c, 1, &pid) == 1) {
		if (k == 0)
			first = pid;
		if (c == '\n')
			break;
		line[k++] = c;
	}
	line[k] = '\0';
#ifndef __linux__
	first = (pid_t)atol(line);  /* as in tu_drain_cred */
#endif
	return first;
}

int
tu_count_entries(const char *dir)
{
	return tu_count_named(dir, "");
}

int
tu_count_named(const char *dir, const char *prefix)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	if (d == NULL)
		return -1;
	while ((e = readdir(d)) != NULL)
		if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0 &&
		    strncmp(e->d_name, prefix, strlen(prefix)) == 0)
			n++;
	closedir(d);
	return n;
}

char *
tu_find_named(const char *dir, const char *prefix, const char *skip)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char *found = NULL;

	if (d == NULL)
		return NULL;
	while (found == NULL && (e = readdir(d)) != NULL)
		if (strncmp(e->d_name, prefix, strlen(prefix)) == 0 &&
		    (skip == NULL || strcmp(e->d_name, skip) != 0))
			found = strdup(e->d_name);
	closedir(d);
	return found;
}

void
tu_copy_exec(const char *from, const char *to)
{
	size_t len;
	char *s = tu_slurp(from, &len);
	int fd;

	if (s == NULL)
		die("read", from);
	fd = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
	if (fd < 0 || write(fd, s, len) != (ssize_t)len || close(fd) != 0)
		die("write", to);
	free(s);
}

int
tu_closed_port(int *fd)
{
	struct sockaddr_in sin;
	socklen_t sl = sizeof(sin);

	*fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (*fd < 0)
		die("socket", NULL);
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(*fd, (struct sockaddr *)&sin, sizeof(sin)) != 0 ||
	    getsockname(*fd, (struct sockaddr *)&sin, &sl) != 0)
		die("bind", NULL);
	return ntohs(sin.sin_port);
}

bool
tu_kernel_at_least(int major, int minor)
{
	struct utsname u;
	int ma = 0, mi = 0;

	if (uname(&u) != 0 || sscanf(u.release, "%d.%d", &ma, &mi) != 2)
		die("uname", NULL);
	return ma > major || (ma == major && mi >= minor);
}

int
tu_listening_port(int *fd)
{
	int port = tu_closed_port(fd);

	if (listen(*fd, 16) != 0)
		die("listen", NULL);
	return port;
}

int
tu_accept_now(int fd)
{
	struct pollfd p = { fd, POLLIN, 0 };

	/* A connection the job made is queued before its result is ours. */
	if (poll(&p, 1, 0) != 1)
		return -1;
	return accept(fd, NULL, NULL);
}

/*
 * The mount point of a cgroup hierarchy, from mountinfo: cgroup2 when
 * controller is NULL, else the v1 one whose super options list it.
 */
struct hierarchy {
	const char *controller;
	char *found;
};

static int
is_hierarchy(const struct mountinfo_entry *e, void *arg)
{
	struct hierarchy *h = arg;

	if (h->controller == NULL ? strcmp(e->type, "cgroup2") != 0 :
	    strcmp(e->type, "cgroup") != 0 ||
	    strstr(e->super, h->controller) == NULL)
		return 0;
	h->found = strdup(e->point);
	return 1;
}

static char *
cgroup_mount(const char *controller)
{
	struct hierarchy h = { controller, NULL };

	(void)mountinfo_each(is_hierarchy, &h);
	return h.found;
}

char *
tu_v2_mount(void)
{
	return cgroup_mount(NULL);
}

#define OWN_HIERARCHIES 3   /* v2, v1 memory, v1 pids */

static char *own_parent[OWN_HIERARCHIES], *own_dir[OWN_HIERARCHIES];
static pid_t own_pid;     /* who moved: not a child that exits */

/* text, written to dir/name at once. */
static bool
write_file(const char *dir, const char *name, const char *text)
{
	char path[1200];
	size_t n = strlen(text);
	bool ok;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if ((fd = open(path, O_WRONLY | O_CLOEXEC)) < 0)
		return false;
	ok = write(fd, text, n) == (ssize_t)n;
	close(fd);
	return ok;
}

static bool
write_pid(const char *dir)
{
	char pid[24];

	snprintf(pid, sizeof(pid), "%ld", (long)getpid());
	return write_file(dir, "cgroup.procs", pid);
}

/*
 * The cgroup at path and each one beneath it that is empty: what a helper
 * killed on purpose left (the next helper's start would sweep it), and a
 * delegated child's.
 */
static void
remove_tree(const char *path)
{
	char sub[PATH_MAX];
	struct dirent *e;
	DIR *d = opendir(path);

	if (d == NULL)
		return;
	while ((e = readdir(d)) != NULL)
		if (e->d_type == DT_DIR && strcmp(e->d_name, ".") != 0 &&
		    strcmp(e->d_name, "..") != 0) {
			snprintf(sub, sizeof(sub), "%s/%s", path, e->d_name);
			remove_tree(sub);
		}
	closedir(d);
	(void)rmdir(path);
}

static void
leave_cgroups(void)
{
	struct timespec ts = { 0, 10 * 1000 * 1000 };
	int i, tries;

	if (getpid() != own_pid)
		return;
	for (i = 0; i < OWN_HIERARCHIES; i++) {
		if (own_dir[i] == NULL || !write_pid(own_parent[i]))
			continue;
		/*
		 * What the test left running (a failed case's helper) ends
		 * with it, as in the sandbox's pid namespace; what dies, and
		 * a killed helper's guard on its way out, takes a moment.
		 */
		if (i == 0)
			(void)write_file(own_dir[0], "cgroup.kill", "1");
		for (tries = 0; tries < 200 && tu_exists(own_dir[i]); tries++) {
			remove_tree(own_dir[i]);
			if (tu_exists(own_dir[i]))
				nanosleep(&ts, NULL);
		}
	}
}

/*
 * This process's cgroup in a hierarchy (controller NULL: v2), from
 * /proc/self/cgroup: "0::/path" or "N:a,b:/path"; allocated, or NULL.
 */
static char *
own_path(const char *controller)
{
	char path[PATH_MAX];

	return proc_own_cgroup(controller, path, sizeof(path)) == 0 ?
	    strdup(path) : NULL;
}

/* Into a fresh test.<pid> beside our cgroup of one hierarchy. */
/*
 * A cgroup directory and those beneath it, deepest first: each goes only
 * if nothing is in it (rmdir refuses a cgroup with processes).
 */
static void
cgroup_rmtree(const char *dir)
{
	char sub[1400];
	struct dirent *e;
	DIR *d = opendir(dir);

	while (d != NULL && (e = readdir(d)) != NULL) {
		if (e->d_type != DT_DIR || strcmp(e->d_name, ".") == 0 ||
		    strcmp(e->d_name, "..") == 0)
			continue;
		snprintf(sub, sizeof(sub), "%s/%s", dir, e->d_name);
		cgroup_rmtree(sub);
	}
	if (d != NULL)
		closedir(d);
	(void)rmdir(dir);
}

static bool
own_in(int i, const char *controller)
{
	char *mnt = cgroup_mount(controller), *own = own_path(controller);
	char dir[1100], parent[1024];
	bool ok = false;

	if (mnt != NULL && own != NULL) {
		snprintf(parent, sizeof(parent), "%s%s", mnt,
		    strcmp(own, "/") == 0 ? "" : own);
		snprintf(dir, sizeof(dir), "%s/test.%ld", parent, test_id());
		/*
		 * One of a run that was killed, whose pid this is again:
		 * removed where it is empty, rather than this run failing.
		 */
		if (mkdir(dir, 0755) != 0 && errno == EEXIST) {
			cgroup_rmtree(dir);
			(void)mkdir(dir, 0755);
		}
		if (access(dir, F_OK) == 0 && write_pid(dir)) {
			own_parent[i] = strdup(parent);
			own_dir[i] = strdup(dir);
			ok = own_parent[i] != NULL && own_dir[i] != NULL;
		} else {
			(void)rmdir(dir);
		}
	}
	free(mnt);
	free(own);
	return ok;
}

bool
tu_own_cgroup(void)
{
	static const char *const v1[] = { "memory", "pids" };
	bool ok = own_in(0, NULL);
	size_t i;

	own_pid = getpid();

	/* The v1 ones where this machine has them (a hybrid hierarchy). */
	for (i = 0; ok && i < 2; i++) {
		char *mnt = cgroup_mount(v1[i]);

		if (mnt != NULL)
			ok = own_in((int)i + 1, v1[i]);
		free(mnt);
	}
	return atexit(leave_cgroups) == 0 && ok;
}

bool
tu_in_own_cgroup(void)
{
	return own_dir[0] != NULL;
}

bool
tu_cgroup_for(uid_t uid)
{
	static const char *const delegated[] = { "", "/cgroup.procs",
		"/cgroup.threads", "/cgroup.subtree_control" };
	char dir[1200], path[1300];
	size_t i;

	if (own_dir[0] == NULL)
		return false;
	snprintf(dir, sizeof(dir), "%s/uid.%lu", own_dir[0], (unsigned long)uid);
	if (mkdir(dir, 0755) != 0)
		return false;
	for (i = 0; i < sizeof(delegated) / sizeof(delegated[0]); i++) {
		snprintf(path, sizeof(path), "%s%s", dir, delegated[i]);
		if (chown(path, uid, (gid_t)-1) != 0)
			return false;
	}
	return write_pid(dir);
}

#ifdef __linux__
static void
aborted(int sig)
{
	_exit(128 + sig);
}
#endif

void
tu_own_pids(void)
{
#ifdef __linux__
	int status;
	pid_t pid;

	outer_pid = getpid();
	if (unshare(CLONE_NEWPID | CLONE_NEWNS) != 0)
		die("unshare", "CLONE_NEWPID | CLONE_NEWNS");
	fflush(NULL);
	if ((pid = fork()) < 0)
		die("fork", NULL);
	if (pid == 0) {
		/* Ends with its waiter: a timeout's kill reaches it too. */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 ||
		    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0 ||
		    mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV |
		    MS_NOEXEC, NULL) != 0)
			die("mount", "/proc");
		/*
		 * The first process of a pid namespace ignores a signal it
		 * sends itself with no handler: abort() (a sanitizer's
		 * abort_on_error, a failed assert) would spin in its last
		 * steps until the test's timeout, not end the test.
		 */
		if (signal(SIGABRT, aborted) == SIG_ERR)
			die("signal", "SIGABRT");
		return;
	}
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	/*
	 * The test's cgroups, where tu_own_cgroup made them before the fork,
	 * are this process's to leave (their atexit handler does nothing in
	 * the test's): left now, or they stay on the host for good. Then
	 * _exit, not exit: the rest of what exit runs (a sanitizer's leak
	 * check of this copy) is the test's own, in its namespace.
	 */
	leave_cgroups();
	_exit(WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
#else
	errno = ENOSYS;
	die("no pid namespaces", NULL);
#endif
}

/* The path of tu_path_setup: 0 shepherd, 1 direct, 2 init; -1 unread. */
static int test_path = -1;

void
tu_path_setup(void)
{
	const char *p = getenv("CONFINE_TEST_PATH");

	if (p == NULL || (strcmp(p, "direct") != 0 &&
	    strcmp(p, "shepherd") != 0 && strcmp(p, "init") != 0)) {
		fprintf(stderr, "test setup: CONFINE_TEST_PATH is \"%s\", not "
		    "init, direct or shepherd: run a target of both_paths "
		    "(tests/defs.bzl)\n", p ? p : "(unset)");
		exit(1);
	}
	test_path = strcmp(p, "init") == 0 ? 2 : strcmp(p, "direct") == 0;
	if (!tu_own_cgroup() && test_path >= 1) {
		char *mnt = tu_v2_mount();

		fprintf(stderr, "test setup: the %s path needs a writable "
		    "cgroup v2 hierarchy, and this test could make no cgroup "
		    "in one (cgroup2 mounted at %s): it must run unsandboxed "
		    "(Bazel's sandbox mounts cgroupfs read-only: tags "
		    "no-sandbox), as root\n", p, mnt ? mnt : "no place");
		free(mnt);
		exit(1);
	}
}

bool
tu_path_direct(void)
{
	return test_path == 1;
}

bool
tu_path_init(void)
{
	return test_path == 2;
}

const char *
tu_path_is(long pid, long pgid, long ppid, long driver, bool own_ns)
{
	if (test_path < 0)
		return "tu_path_setup was not called";
	/* Either way the job leads its own session, and so its group. */
	if (pgid != pid)
		return "the job does not lead its group: it did not make its "
		    "own session";
	if (test_path == 2)
		return own_ns && ppid == 1 && pid == 2 ? NULL : "wanted the "
		    "init's path, and the job is not pid 2 of a PID namespace "
		    "of its own, its init's child (no namespaces could be made, "
		    "or CONFINE_NO_NAMESPACES=1 reached the helper)";
	if (own_ns)
		return "wanted a path without namespaces, and the job is in a "
		    "PID namespace of its own (CONFINE_NO_NAMESPACES=1 did not "
		    "reach the helper)";
	if (test_path == 1 && ppid != driver)
		return "wanted the direct path, and the job is not its driver's "
		    "child: it ran under a shepherd (no cgroup v2 with "
		    "cgroup.kill for the helper, or CONFINE_SHEPHERD=1 reached it)";
	if (test_path == 0 && ppid == driver)
		return "wanted the shepherd's path, and the job is its driver's "
		    "child: it ran directly (CONFINE_SHEPHERD=1 did not reach "
		    "the helper)";
	return NULL;
}

/* Whether pid's PID namespace is not ours. */
static bool
other_pid_ns(long pid)
{
	char link[64], theirs[64], ours[64];
	ssize_t a, b;

	snprintf(link, sizeof(link), "/proc/%ld/ns/pid", pid);
	a = readlink(link, theirs, sizeof(theirs) - 1);
	b = readlink("/proc/self/ns/pid", ours, sizeof(ours) - 1);
	return a > 0 && b > 0 && (a != b || memcmp(theirs, ours, (size_t)a) != 0);
}

const char *
tu_path_seen(long pid, long pgid, long ppid, long driver)
{
	if (test_path < 0)
		return "tu_path_setup was not called";
	if (pgid != pid)
		return "the job does not lead its group";
	if (test_path == 2)
		return other_pid_ns(pid) && ppid != driver ? NULL : "wanted the "
		    "init's path, and the job is not in a PID namespace of its "
		    "own beneath an init";
	if (other_pid_ns(pid))
		return "wanted a path without namespaces, and the job is in a "
		    "PID namespace of its own";
	if (test_path == 1 && ppid != driver)
		return "wanted the direct path, and the job is not its driver's "
		    "child";
	if (test_path == 0 && ppid == driver)
		return "wanted the shepherd's path, and the job is its driver's "
		    "child";
	return NULL;
}

const char *
tu_path_ids(const char *out, long writer, long pid, long pgid, long driver)
{
	long p, g, sid, ppid;

	if (out == NULL || sscanf(out, "%ld %ld %ld %ld", &p, &g, &sid,
	    &ppid) != 4)
		return "the job did not print its ids";
	if (writer != pid || pgid != pid)
		return "the job's ids, as we see them, are not its result's";
	if (sid != p)
		return "the job does not lead a session of its own";
	/* In a PID namespace not ours, it sees itself by another pid. */
	return tu_path_is(p, g, ppid, driver, p != writer);
}

bool
tu_path_gone(const char *path)
{
	struct timespec ts = { 0, 10 * 1000 * 1000 };
	int i;

	for (i = 0; i < 1000; i++) {
		if (!tu_exists(path))
			return true;
		nanosleep(&ts, NULL);
	}
	return false;
}

static bool
gone(pid_t pid, bool reap)
{
	struct timespec ts = { 0, 10 * 1000 * 1000 };
	int i;

	/* 0 or -1 would ask about whole groups: a test's mistake. */
	if (pid <= 1) {
		fprintf(stderr, "tu_gone: no pid (%ld)\n", (long)pid);
		return false;
	}
	/* Ten seconds: a loaded machine (CI's, 24 runnable) is slow to reap. */
	for (i = 0; i < 1000; i++) {
		if (reap && waitpid(pid, NULL, WNOHANG) == pid)
			return true;
		if (kill(pid, 0) != 0 && errno == ESRCH)
			return true;
		nanosleep(&ts, NULL);
	}
	return false;
}

/* A process's pid in its own PID namespace; 0 once gone. */
static pid_t
pid_there(const char *name)
{
	char path[PATH_MAX], *text, *line;
	pid_t pid = 0;

	snprintf(path, sizeof(path), "/proc/%s/status", name);
	if ((text = tu_slurp(path, NULL)) == NULL)
		return 0;
	if ((line = strstr(text, "\nNSpid:")) != NULL) {
		line += 7;
		line[strcspn(line, "\n")] = '\0';
		if ((line = strrchr(line, '\t')) != NULL)
			pid = (pid_t)atol(line + 1);
	}
	free(text);
	return pid;
}

bool
tu_job_alive(const char *ns, pid_t pid)
{
	char ours[64], link[64], path[PATH_MAX];
	struct dirent *e;
	bool alive = false;
	ssize_t n;
	pid_t p;
	DIR *d;

	n = readlink("/proc/self/ns/pid", ours, sizeof(ours) - 1);
	if (n <= 0)
		die("readlink", "/proc/self/ns/pid");
	ours[n] = '\0';
	if (strcmp(ns, ours) == 0)
		return kill(pid, 0) == 0 || errno != ESRCH;
	if ((d = opendir("/proc")) == NULL)
		die("opendir", "/proc");
	while (!alive && (e = readdir(d)) != NULL) {
		if (e->d_name[0] < '1' || e->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/ns/pid", e->d_name);
		n = readlink(path, link, sizeof(link) - 1);
		if (n <= 0)
			continue;
		link[n] = '\0';
		if (strcmp(link, ns) != 0)
			continue;
		p = pid_there(e->d_name);
		alive = p > 1;
	}
	closedir(d);
	return alive;
}

bool
tu_gone(pid_t pid)
{
	return gone(pid, false);
}

bool
tu_reaped(pid_t pid)
{
	return gone(pid, true);
}

/* Whether a task has uid as its real, effective, saved or filesystem uid. */
static bool
uid_in_use(uid_t uid)
{
	char path[600], line[256];
	unsigned long id[4];
	struct dirent *p, *t;
	bool used = false;
	DIR *procs, *tasks;
	FILE *f;
	int i;

	if ((procs = opendir("/proc")) == NULL)
		die("opendir", "/proc");
	while (!used && (p = readdir(procs)) != NULL) {
		if (p->d_name[0] < '1' || p->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/task", p->d_name);
		if ((tasks = opendir(path)) == NULL)
			continue;    /* gone since */
		while (!used && (t = readdir(tasks)) != NULL) {
			snprintf(path, sizeof(path), "/proc/%s/task/%s/status",
			    p->d_name, t->d_name);
			if (t->d_name[0] == '.' || (f = fopen(path, "r")) == NULL)
				continue;
			while (fgets(line, sizeof(line), f) != NULL)
				if (sscanf(line, "Uid: %lu %lu %lu %lu", &id[0],
				    &id[1], &id[2], &id[3]) == 4) {
					for (i = 0; i < 4; i++)
						used = used || id[i] == uid;
					break;
				}
			fclose(f);
		}
		closedir(tasks);
	}
	closedir(procs);
	return used;
}

/*
 * A uid of no user and no process. High, and from a start of this run's
 * own, so that runs from other checkouts at the same time pick apart.
 */
uid_t
tu_unused_uid(void)
{
	static uid_t last;
	uid_t uid = 2000000000u + (uid_t)(test_id() % 100000) * 100;
	int i;

	/* Each call its own: a test may need two users. */
	if (last >= uid)
		uid = last + 1;

	/* The scan sees at least ourselves, or it sees nothing. */
	if (!uid_in_use(getuid()))
		die("cannot read the uids of", "/proc");
	for (i = 0; i < 1000; i++, uid++)
		if (getpwuid(uid) == NULL && !uid_in_use(uid)) {
			fprintf(stderr, "test setup: uid %lu, of nobody\n",
			    (unsigned long)uid);
			last = uid;
			return uid;
		}
	errno = EAGAIN;
	die("no unused uid near", "2000000000");
}
