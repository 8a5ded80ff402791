/*
 * What could reach past a job besides writing files and opening sockets
 * (escape_test's): an inode's metadata outside the scratch root, the
 * machine's own state, root's capabilities, kernel interfaces, device
 * nodes, datagrams, other processes. Each attempt is paired: backend none
 * succeeds or reaches the kernel, the Linux backend refuses it with the
 * errno asserted. Run as root, then again as a uid no process has, in a
 * child of this process (what an unprivileged user may do unconfined is
 * what its job must not): the unprivileged helper's jobs take the user
 * namespace path of helper/backend/mountns.c. On the direct path that
 * user has a cgroup delegated to it, as a helper needs to start its jobs itself.
 *
 * Unsandboxed: in Bazel's user namespace root is not root (no real
 * CAP_SYS_TIME, no second uid), so the unconfined halves would fail too.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <libgen.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/ipc.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/shm.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <termios.h>
#include <unistd.h>

#include "tests/jobrun.h"
#include "tests/testutil.h"

#define LL CONFINE_BACKEND_LANDLOCK
#define NONE CONFINE_BACKEND_NONE
#define PROBE JR_PROBE
#define PAIR JR_PAIR
#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

/* Made by root for the unprivileged run: see run_unprivileged(). */
static struct {
	char *base;         /* the user's own directory, in /tmp */
	char *node;         /* a character device, /dev/null's numbers */
	char *suid;         /* the fixture, setuid root */
	char *fcaps;        /* the fixture, with CAP_SYS_TIME as a file cap */
	uid_t uid;          /* 0 in the root run */
} un;

/* ---- an inode's metadata outside the scratch root ---- */

static const char *const meta_ops[] = {
	"chmod", "suid", "chown", "utime", "setxattr", "removexattr",
	"fchmod", "fchown", "futimens", "fsetxattr", "path-chown",
	"path-chmod", "proc-chmod",
};

/* A file as the probes find it: mode 0644, an old mtime, one xattr. */
static void
file_reset(const char *path, struct stat *st)
{
	struct timespec old[2] = { { 1000000000, 0 }, { 1000000000, 0 } };

	jr_put(path, "x");
	assert_int_equal(chmod(path, 0644), 0);
	assert_int_equal(setxattr(path, "user.confine", "y", 1, 0), 0);
	assert_int_equal(utimensat(AT_FDCWD, path, old, 0), 0);
	assert_int_equal(stat(path, st), 0);
}

static void
assert_unchanged(const char *path, const struct stat *was)
{
	struct stat st;
	char v[8];

	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode, was->st_mode);
	assert_int_equal(st.st_uid, was->st_uid);
	assert_int_equal(st.st_mtim.tv_sec, was->st_mtim.tv_sec);
	assert_int_equal(st.st_ctim.tv_sec, was->st_ctim.tv_sec);
	assert_int_equal(st.st_ctim.tv_nsec, was->st_ctim.tv_nsec);
	assert_int_equal(getxattr(path, "user.confine", v, sizeof(v)), 1);
}

static void
metadata_outside_is_read_only(void **state)
{
	struct jr_dirs *d = *state;
	char *out = tu_join(d->outside, "f");
	struct stat st;
	size_t i;

	for (i = 0; i < NELEM(meta_ops); i++) {
		file_reset(out, &st);
		assert_int_equal(PROBE(NONE, d->scratch, "meta", meta_ops[i], out), 0);
		file_reset(out, &st);
		/* A setuid bit is seccomp's to refuse, before the view. */
		assert_int_equal(PROBE(LL, d->scratch, "meta", meta_ops[i], out),
		    strcmp(meta_ops[i], "suid") == 0 ? EPERM : EROFS);
		assert_unchanged(out, &st);
	}
	free(out);
}

/* The same calls beneath the scratch root: all allowed, confined too. */
static void
metadata_inside_is_the_jobs(void **state)
{
	struct jr_dirs *d = *state;
	char *in = tu_join(d->scratch, "f");
	struct stat st;
	size_t i;

	for (i = 0; i < NELEM(meta_ops); i++) {
		if (strcmp(meta_ops[i], "suid") == 0)
			continue;  /* no_setid_file_is_left */
		file_reset(in, &st);
		assert_int_equal(PROBE(LL, d->scratch, "meta", meta_ops[i], in), 0);
	}
	free(in);
}

/*
 * ---- setuid and setgid files ----
 *
 * A setuid or setgid file in the scratch root would outlive the job: on
 * the host the root is an ordinary directory, and any local user could run
 * what a root job left there as root. Every call that sets a mode, paired:
 * unconfined the file has the bit, as the host sees it; confined the call
 * is refused and no file with the bit is there.
 */

static const struct {
	const char *op;
	bool exists;       /* the chmod family: on a file made first */
	int confined;      /* the errno confined */
} setid_ops[] = {
	{ "chmod-u", true, EPERM }, { "chmod-g", true, EPERM },
	{ "fchmod", true, EPERM }, { "fchmodat", true, EPERM },
	{ "fchmodat2", true, EPERM }, { "open", false, EPERM },
	{ "openat", false, EPERM }, { "creat", false, EPERM },
	{ "mknod", false, EPERM }, { "mknodat", false, EPERM },
	{ "tmpfile", false, EPERM }, { "openat2", false, ENOSYS },
};

/* The host's view: whether path is there with a setuid or setgid bit. */
static bool
setid_there(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0 && (st.st_mode & (S_ISUID | S_ISGID)) != 0;
}

static void
no_setid_file_is_left(void **state)
{
	struct jr_dirs *d = *state;
	char *in = tu_join(d->scratch, "f");
	struct stat st;
	size_t i;
	int b;

	for (i = 0; i < NELEM(setid_ops); i++) {
		for (b = 0; b < 2; b++) {
			(void)unlink(in);
			if (setid_ops[i].exists)
				file_reset(in, &st);
			assert_int_equal(PROBE(b ? LL : NONE, d->scratch, "setid",
			    setid_ops[i].op, in), b ? setid_ops[i].confined : 0);
			if (setid_there(in) != !b)
				fail_msg("%s %s: the host sees %s setid file",
				    setid_ops[i].op, b ? "confined" : "unconfined",
				    b ? "a" : "no");
		}
	}
	/* mkdir keeps no such bit, confined or not: allowed. */
	(void)unlink(in);
	assert_int_equal(PROBE(LL, d->scratch, "setid", "mkdir", in), 0);
	assert_false(setid_there(in));
	assert_int_equal(rmdir(in), 0);
	free(in);
}

/*
 * ---- the terminal it is lent ----
 *
 * The user's terminal, lent as the job's stdin: a pty whose slave is the
 * controlling terminal of a session of ours (a child's, which leads it and
 * holds the foreground), as a shell's is. What the job may do to it is
 * checked from that session, the user's side.
 */

struct tty_case {
	const char *op;
	int unconfined, confined;
};

static int tty_bad;

#define TTY_CHECK(cond, ...) do {                                          \
		if (!(cond)) {                                                  \
			printf("terminal: " __VA_ARGS__);                       \
			printf("\n");                                           \
			tty_bad++;                                              \
		}                                                               \
	} while (0)

/* The terminal as the user left it: N_TTY, not exclusive, ours in front. */
static void
tty_as_left(int tty, const char *what)
{
	int ldisc = -1, excl = -1;

	TTY_CHECK(ioctl(tty, TIOCGETD, &ldisc) == 0 && ldisc == 0,
	    "%s: its line discipline is %d", what, ldisc);
	TTY_CHECK(ioctl(tty, TIOCGEXCL, &excl) == 0 && excl == 0,
	    "%s: exclusive (%d)", what, excl);
	TTY_CHECK(tcgetpgrp(tty) == getpgrp(), "%s: the foreground is %ld",
	    what, (long)tcgetpgrp(tty));
	TTY_CHECK(tcgetsid(tty) == getsid(0), "%s: its session is %ld", what,
	    (long)tcgetsid(tty));
}

static _Noreturn void
lent_terminal(const char *scratch, int master)
{
	/* What the unconfined job may do, the confined one may not. */
	static const struct tty_case cases[] = {
		{ "setd", 0, EPERM }, { "excl", 0, EPERM },
		/* Neither: the job leads a session of its own. */
		{ "fg", ENOTTY, ENOTTY }, { "ctty", EPERM, EPERM },
		/* What programs need: both. */
		{ "winsz", 0, 0 }, { "modes", 0, 0 },
	};
	int tty, b, rc, n_tty = 0;
	size_t i;

	if (setsid() < 0 ||
	    (tty = open(ptsname(master), O_RDWR | O_CLOEXEC)) < 0 ||
	    tcsetpgrp(tty, getpgrp()) != 0)
		_exit(100);
	/* Without a shepherd the driver is the jobs' subreaper: we are. */
	if (jr_env.direct && prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0)
		_exit(101);
	for (i = 0; i < NELEM(cases); i++)
		for (b = 0; b < 2; b++) {
			rc = jr_probe(b ? LL : NONE, scratch, tty, NULL,
			    (const char *const[]){ "tty", cases[i].op, NULL });
			TTY_CHECK(rc == (b ? cases[i].confined :
			    cases[i].unconfined), "%s %s: %d", cases[i].op,
			    b ? "confined" : "unconfined", rc);
			if (!b && rc == 0 && strcmp(cases[i].op, "setd") == 0) {
				int ldisc = -1;

				/* It took: the user's side sees it, then mends it. */
				TTY_CHECK(ioctl(tty, TIOCGETD, &ldisc) == 0 &&
				    ldisc == 27, "setd took no effect (%d)", ldisc);
				(void)ioctl(tty, TIOCSETD, &n_tty);
			}
			if (!b && rc == 0 && strcmp(cases[i].op, "excl") == 0) {
				int excl = -1;

				TTY_CHECK(ioctl(tty, TIOCGEXCL, &excl) == 0 &&
				    excl == 1, "excl took no effect (%d)", excl);
				(void)ioctl(tty, TIOCNXCL);
			}
			tty_as_left(tty, cases[i].op);
		}
	fflush(stdout);
	_exit(tty_bad > 99 ? 99 : tty_bad);
}

static void
the_lent_terminal_stays_the_users(void **state)
{
	struct jr_dirs *d = *state;
	int master, status;
	pid_t pid;

	master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
	assert_true(master >= 0);
	assert_int_equal(grantpt(master), 0);
	assert_int_equal(unlockpt(master), 0);
	fflush(stdout);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		lent_terminal(d->scratch, master);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	close(master);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

/*
 * ---- leases ----
 *
 * A read lease on a file it may only read would hold back every host
 * process that opens the file for writing, for as long as the job
 * lives. The job takes one (by a file of its user's own outside the
 * scratch root) and waits; the host meanwhile opens the file for
 * writing without blocking: EWOULDBLOCK while a lease is held.
 */
static int
lease_probe(enum confine_backend b, const char *scratch, const char *path,
    bool *held)
{
	int in[2], status = 0, i, fd;
	bool done = false;
	pid_t pid;

	*held = false;
	assert_int_equal(pipe(in), 0);
	fflush(stdout);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(in[1]);
		if (jr_env.direct && prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0))
			_exit(120);
		_exit(jr_probe(b, scratch, in[0], NULL,
		    (const char *const[]){ "lease", path, NULL }));
	}
	close(in[0]);
	/* A minute at the most: a loaded machine is slow to start a job. */
	for (i = 0; i < 6000 && !done; i++) {
		if (waitpid(pid, &status, WNOHANG) == pid) {
			done = true;
			break;
		}
		fd = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
		if (fd >= 0) {
			close(fd);
		} else if (errno == EWOULDBLOCK) {
			*held = true;
			break;
		}
		usleep(10000);
	}
	close(in[1]);
	if (!done)
		assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	return WEXITSTATUS(status);
}

static void
no_lease_on_what_it_may_only_read(void **state)
{
	struct jr_dirs *d = *state;
	char *out = tu_join(d->outside, "leased");
	bool held;

	jr_put(out, "x");
	assert_int_equal(lease_probe(NONE, d->scratch, out, &held), 0);
	assert_true(held);
	assert_int_equal(lease_probe(LL, d->scratch, out, &held), EACCES);
	assert_false(held);
	free(out);
}

/* ---- the machine's own state (root) ---- */

#define REACHED (-1000)  /* any answer but EPERM: the call got past it */

static const struct {
	const char *op;
	int unconfined;
} host_ops[] = {
	{ "sethostname", 0 }, { "setdomainname", 0 }, { "settimeofday", 0 },
	{ "clock_settime", 0 }, { "adjtimex", 0 }, { "clock_adjtime", 0 },
	{ "reboot", EINVAL }, { "swapon", ENOENT }, { "swapoff", ENOENT },
	{ "acct", 0 }, { "mount", ENOENT }, { "umount2", ENOENT },
	{ "pivot_root", ENOENT }, { "fsopen", ENODEV },
	{ "open_tree", ENOENT }, { "open_by_handle_at", EFAULT },
	{ "name_to_handle_at", EOVERFLOW }, { "chroot", 0 }, { "syslog", 0 },
	/* Absent from some kernels' configurations (ENOSYS here). */
	{ "init_module", REACHED }, { "finit_module", REACHED },
	{ "delete_module", REACHED }, { "iopl", REACHED },
	{ "ioperm", REACHED }, { "quotactl", REACHED },
};

static void
host_state_is_refused(void **state)
{
	struct jr_dirs *d = *state;
	size_t i;
	int rc;

	assert_int_equal(geteuid(), 0);
	for (i = 0; i < NELEM(host_ops); i++) {
		rc = PROBE(NONE, d->scratch, "host", host_ops[i].op);
		if (host_ops[i].unconfined == REACHED ? rc == EPERM ||
		    rc == EACCES : rc != host_ops[i].unconfined)
			fail_msg("%s unconfined: %d", host_ops[i].op, rc);
		assert_int_equal(PROBE(LL, d->scratch, "host", host_ops[i].op),
		    EPERM);
	}
}

static char *
caps_of(enum confine_backend b, const char *scratch, const char *exe)
{
	struct jr j;
	char *out;

	jr_init(&j, b, scratch, "caps", NULL);
	if (exe != NULL)
		j.spec.exe = exe;
	jr_run(&j);
	assert_outcome(&j, CONFINE_COMPLETED, CONFINE_REASON_NONE);
	out = j.out;
	j.out = NULL;
	jr_free(&j);
	return out;
}

#define NO_CAPS "0000000000000000 0000000000000000 0000000000000000 " \
	"0000000000000000 0000000000000000\n"

/* Inheritable, permitted, effective, bounding, ambient: all empty. */
static void
a_root_job_holds_no_capability(void **state)
{
	struct jr_dirs *d = *state;
	char *caps;

	caps = caps_of(NONE, d->scratch, NULL);
	assert_string_not_equal(caps, NO_CAPS);
	free(caps);
	caps = caps_of(LL, d->scratch, NULL);
	assert_string_equal(caps, NO_CAPS);
	free(caps);
}

/* ---- kernel interfaces ---- */

static const struct {
	const char *op;
	int unconfined, confined;
} surface_ops[] = {
	{ "add_key", 0, EPERM }, { "request_key", EFAULT, EPERM },
	{ "keyctl", 0, EPERM }, { "bpf", EINVAL, EPERM },
	{ "perf_event_open", 0, EPERM }, { "userfaultfd", 0, EPERM },
	{ "unshare", 0, EPERM }, { "setns", EBADF, EPERM },
	{ "personality", 0, EPERM }, { "process_vm_writev", 0, EPERM },
	{ "process_vm_readv", 0, EPERM }, { "clone-newuser", 0, EPERM },
	{ "modify_ldt", 0, EPERM },
	/* Its flags are out of a filter's sight: libc falls back to clone. */
	{ "clone3", 0, ENOSYS },
	/* What programs need stays. */
	{ "personality-query", 0, 0 }, { "personality-linux", 0, 0 },
	{ "fork", 0, 0 },
};

static void
kernel_surface_is_refused(void **state)
{
	struct jr_dirs *d = *state;
	size_t i;

	for (i = 0; i < NELEM(surface_ops); i++) {
		/* Unprivileged, only what such a user may do unconfined. */
		if (un.uid != 0 && (strcmp(surface_ops[i].op, "bpf") == 0 ||
		    strcmp(surface_ops[i].op, "userfaultfd") == 0 ||
		    strcmp(surface_ops[i].op, "unshare") == 0))
			continue;
		PAIR(d, surface_ops[i].unconfined, surface_ops[i].confined,
		    "surface", surface_ops[i].op);
	}
}

/* ---- device nodes ---- */

/* Made by root in the root run, or moved into place in the other. */
static char *
node_in(const char *dir)
{
	char *node = tu_join(dir, "node");

	if (un.uid == 0) {
		assert_int_equal(mknod(node, S_IFCHR | 0666, makedev(1, 3)), 0);
		assert_int_equal(chmod(node, 0666), 0);
	} else
		assert_int_equal(rename(un.node, node), 0);
	return node;
}

static void
node_done(char *node)
{
	if (un.uid == 0)
		assert_int_equal(unlink(node), 0);
	else
		assert_int_equal(rename(node, un.node), 0);
	free(node);
}

/* A node already in the scratch root does not open: nodev. */
static void
a_device_node_in_the_scratch_root_is_dead(void **state)
{
	struct jr_dirs *d = *state;
	char *node = node_in(d->scratch);

	PAIR(d, 0, EACCES, "write", node);
	node_done(node);
}

/* None is made, not even beneath the scratch root (root only can). */
static void
no_device_node_is_made(void **state)
{
	struct jr_dirs *d = *state;
	char *node = tu_join(d->scratch, "made");

	assert_int_equal(PROBE(NONE, d->scratch, "mknod", "chr", node), 0);
	assert_int_equal(unlink(node), 0);
	assert_int_equal(PROBE(LL, d->scratch, "mknod", "chr", node), EPERM);
	assert_int_equal(PROBE(NONE, d->scratch, "mknod", "blk", node), 0);
	assert_int_equal(unlink(node), 0);
	assert_int_equal(PROBE(LL, d->scratch, "mknod", "blk", node), EPERM);
	assert_false(tu_exists(node));
	free(node);
}

/* ---- datagrams ---- */

struct listener {
	char *dir, *path;
	char name[64];     /* @... for the abstract one */
	int fd, afd;
};

/* A datagram socket bound to path (@ for an abstract name), or -1. */
static int
bound_dgram_try(const char *path)
{
	struct sockaddr_un sun;
	socklen_t len = sizeof(sun);
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

	assert_true(fd >= 0);
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	strcpy(sun.sun_path, path);
	if (path[0] == '@') {
		sun.sun_path[0] = '\0';
		len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) +
		    strlen(path));
	}
	if (bind(fd, (struct sockaddr *)&sun, len) != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

static int
bound_dgram(const char *path)
{
	int fd = bound_dgram_try(path);

	assert_true(fd >= 0);
	return fd;
}

/* In /var/tmp: the confined job sees the host's /var/tmp, not its /tmp. */
static void
listener_open(struct listener *l)
{
	l->dir = tu_sockdir_in("/var/tmp");
	assert_int_equal(chmod(l->dir, 0777), 0);
	l->path = tu_join(l->dir, "d");
	snprintf(l->name, sizeof(l->name), "@confine-reach-%ld", (long)getpid());
	l->fd = bound_dgram(l->path);
	assert_int_equal(chmod(l->path, 0777), 0);
	l->afd = bound_dgram(l->name);
}

static void
listener_close(struct listener *l)
{
	close(l->fd);
	close(l->afd);
	tu_rmsock(l->dir, l->path);
}

/* How many datagrams wait on fd, read and gone. */
static int
drained(int fd)
{
	char buf[16];
	int n = 0;

	while (recv(fd, buf, sizeof(buf), 0) > 0)
		n++;
	return n;
}

/*
 * A datagram to a socket outside, by its name (sendto): it arrives only
 * unconfined. Confined, err: the filter's, or its init's.
 */
static void
pair_datagram(struct jr_dirs *d, const char *to, int fd, int err)
{
	assert_int_equal(PROBE(NONE, d->scratch, "pair", "dgram-send", to), 0);
	assert_int_equal(drained(fd), 1);
	assert_int_equal(PROBE(LL, d->scratch, "pair", "dgram-send", to), err);
	assert_int_equal(drained(fd), 0);
}

/*
 * The same by sendmsg from a SOCK_RAW pair, a descriptor with it: the
 * kernel makes that type a datagram pair, so a filter that refuses
 * datagram pairs refuses every type but those that address nothing
 * (stream, seqpacket).
 */
static void
raw_datagram(struct jr_dirs *d, const char *to, int fd, int err)
{
	assert_int_equal(PROBE(NONE, d->scratch, "pair", "raw-sendmsg", to), 0);
	assert_int_equal(drained(fd), 1);
	assert_int_equal(PROBE(LL, d->scratch, "pair", "raw-sendmsg", to), err);
	assert_int_equal(drained(fd), 0);
}

/*
 * No datagram of its own leaves. Where its init makes every send with an
 * address (sendto, sendmsg, sendmmsg), a datagram pair is its own, and
 * the host's sockets stay out of reach: a pathname one is not on a mount
 * it may write (EACCES), an abstract one is of another network
 * namespace (ECONNREFUSED, its own has no such name). Where none does,
 * no datagram pair at all (EPERM).
 */
static void
no_datagram_of_its_own_leaves(void **state)
{
	struct jr_dirs *d = *state;
	struct listener l;
	int pair = JR_NET ? 0 : EPERM;
	int path = JR_NET ? EACCES : EPERM, name = JR_NET ? ECONNREFUSED : EPERM;

	listener_open(&l);
	PAIR(d, 0, pair, "pair", "dgram");
	PAIR(d, 0, pair, "pair", "raw");
	pair_datagram(d, l.path, l.fd, path);
	pair_datagram(d, l.name, l.afd, name);
	raw_datagram(d, l.path, l.fd, path);
	raw_datagram(d, l.name, l.afd, name);
	listener_close(&l);
}

/* Whether an abstract name is bound on the host: bound again, it is not. */
static bool
abstract_free(const char *name)
{
	int fd = bound_dgram_try(name);

	if (fd < 0)
		return false;
	close(fd);
	return true;
}

/*
 * No name of the host's, abstract or not: an abstract one could be the
 * host's to take (a service's traffic, its own bind EADDRINUSE), a
 * pathname one a file outside. Without a network namespace of its own,
 * no bind at all (EPERM); with one, an abstract name is its namespace's
 * (the host's still free) and a pathname one is made only in its own
 * trees (outside, the view's EROFS).
 */
static void
no_name_is_taken(void **state)
{
	struct jr_dirs *d = *state;
	char name[64], *path = tu_join(d->scratch, "s");
	char *dir = tu_sockdir_in("/var/tmp"), *out = tu_join(dir, "o");
	int own = JR_NET ? 0 : EPERM;

	assert_int_equal(chmod(dir, 0777), 0);
	snprintf(name, sizeof(name), "@confine-reach-bind-%ld", (long)getpid());
	assert_int_equal(PROBE(NONE, d->scratch, "pair", "bind", name), 0);
	assert_int_equal(PROBE(LL, d->scratch, "pair", "bind", name), own);
	assert_true(abstract_free(name));
	/* By a name relative to its cwd, the scratch root: sun_path is short. */
	assert_int_equal(PROBE(NONE, d->scratch, "pair", "bind", "s"), 0);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(PROBE(LL, d->scratch, "pair", "bind", "s"), own);
	assert_int_equal(tu_exists(path), JR_NET);
	(void)unlink(path);
	/* Outside its trees. */
	assert_int_equal(PROBE(NONE, d->scratch, "pair", "bind", out), 0);
	assert_int_equal(unlink(out), 0);
	assert_int_equal(PROBE(LL, d->scratch, "pair", "bind", out),
	    JR_NET ? EROFS : EPERM);
	assert_false(tu_exists(out));
	assert_int_equal(rmdir(dir), 0);
	free(out);
	free(dir);
	free(path);
}

/*
 * A network of its own, where it has one: a server and a client of the
 * job's own over TCP and UDP on IPv4 and IPv6, a pathname unix socket in
 * its tmp and in its scratch root, an abstract one, and a connect that
 * waits for a full backlog (its init answers it later); the connects and
 * sends from another thread than the job's first. Without one, each is
 * refused (EPERM). Unconfined, each works as well.
 */
static void
a_network_of_its_own(void **state)
{
	struct jr_dirs *d = *state;
	static const char *const kinds[][2] = {
		{ "tcp", NULL }, { "tcp6", NULL }, { "udp", NULL },
		{ "udp6", NULL }, { "unix", "u.sock" }, { "abstract", NULL },
		{ "backlog", "b.sock" }, { "dgram", "d.sock" },
	};
	char name[64], tmp[80], *p;
	size_t i;
	int own = JR_NET ? 0 : EPERM;

	/* Supervised wherever the kernel can (Linux 5.19): never quietly off. */
	if (jr_env.ns)
		assert_int_equal(jr_env.sup_ok, tu_kernel_at_least(5, 19));
	snprintf(name, sizeof(name), "confine-reach-loop-%ld", (long)getpid());
	for (i = 0; i < NELEM(kinds); i++) {
		const char *arg = kinds[i][1] != NULL ? kinds[i][1] :
		    kinds[i][0][0] == 'a' ? name : NULL;

		if (kinds[i][1] == NULL) {
			PAIR(d, 0, own, "loop", kinds[i][0], arg);
			continue;
		}
		/* A pathname: left in the scratch root by each, where made. */
		p = tu_join(d->scratch, kinds[i][1]);
		assert_int_equal(PROBE(NONE, d->scratch, "loop", kinds[i][0], arg), 0);
		assert_int_equal(unlink(p), 0);
		assert_int_equal(PROBE(LL, d->scratch, "loop", kinds[i][0], arg), own);
		assert_int_equal(tu_exists(p), JR_NET);
		(void)unlink(p);
		free(p);
	}
	/* Datagrams to an abstract name of its own. */
	snprintf(tmp, sizeof(tmp), "@%s-d", name);
	PAIR(d, 0, own, "loop", "dgram", tmp);
	/* An address longer than any: the kernel's answer, whoever calls. */
	PAIR(d, EINVAL, JR_NET ? EINVAL : EPERM, "pair", "long-connect");
	/* Beneath its /tmp: its own, out of the host's sight. */
	snprintf(tmp, sizeof(tmp), "/tmp/confine-reach-%ld.sock", (long)getpid());
	assert_int_equal(PROBE(LL, d->scratch, "loop", "unix", tmp), own);
	assert_false(tu_exists(tmp));
}

/*
 * The init sends a job's datagrams, so a receiver of its own that asks
 * for the sender's credentials sees the init's pid (ESRCH: not the
 * sender's own), and a datagram that names the job's own pid is refused
 * (EPERM), as one naming another's would be (docs/linux-contract.md,
 * Nonclaims). Unconfined, both are the sender's. Without a network of its
 * own, no datagram socket (EPERM).
 */
static void
a_datagrams_credentials_are_its_inits(void **state)
{
	struct jr_dirs *d = *state;
	char name[64];

	snprintf(name, sizeof(name), "@confine-reach-creds-%ld", (long)getpid());
	PAIR(d, 0, JR_NET ? ESRCH : EPERM, "loop", "creds-seen", name);
	PAIR(d, 0, EPERM, "loop", "creds-sent", name);
}

/*
 * The host's /tmp, where its init lays it beneath the job's own (an
 * overlay): a file there is read at its own path; the job's writes there,
 * over the host's file or new, are its own, the host's file unchanged and
 * nothing new on the host; a host's listener there is not reached (the
 * overlay's own inode: ECONNREFUSED; the host accepts nothing). With reads
 * narrowed, or where no overlay can be made, the host's /tmp is out of
 * sight (ENOENT). Unconfined, each reaches the host's.
 */
static void
the_hosts_tmp_is_read_where_it_lies(void **state)
{
	struct jr_dirs *d = *state;
	char dir[] = "/tmp/confine-reach-tmp.XXXXXX", *f, *made, *s;
	char *fixture = strdup(jr_fixture);
	const char *fixture_dir[] = { dirname(fixture), NULL };
	int over = JR_TMP_OVER, l;
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	struct jr j;

	/* Laid wherever this kernel can: never quietly off. */
	if (jr_env.ns && !jr_env.group_proof_only)
		assert_int_equal(jr_env.tmp_overlay_err, 0);
	assert_non_null(mkdtemp(dir));
	assert_int_equal(chmod(dir, 0755), 0);
	f = tu_join(dir, "f");
	made = tu_join(dir, "made");
	s = tu_join(dir, "s");
	jr_put(f, "host\n");
	PAIR(d, 0, over ? 0 : ENOENT, "read", f);
	/* Ours (root's, or the unprivileged run's user's): each may write. */
	assert_int_equal(PROBE(NONE, d->scratch, "write", f), 0);
	jr_assert_text(f, "confined\n");
	jr_put(f, "host\n");
	assert_int_equal(PROBE(NONE, d->scratch, "write", made), 0);
	assert_int_equal(unlink(made), 0);
	assert_int_equal(PROBE(LL, d->scratch, "write", f), over ? 0 : ENOENT);
	jr_assert_text(f, "host\n");
	assert_int_equal(PROBE(LL, d->scratch, "write", made), over ? 0 : ENOENT);
	assert_false(tu_exists(made));
	/* A listener of the host's, in its /tmp. */
	strcpy(sun.sun_path, s);
	l = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	assert_true(l >= 0);
	assert_int_equal(bind(l, (struct sockaddr *)&sun, sizeof(sun)), 0);
	assert_int_equal(chmod(s, 0777), 0);
	assert_int_equal(listen(l, 4), 0);
	assert_int_equal(PROBE(NONE, d->scratch, "net", "unix", "stream",
	    "connect", s), 0);
	assert_true(accept(l, NULL, NULL) >= 0);
	assert_int_equal(PROBE(LL, d->scratch, "net", "unix", "stream",
	    "connect", s), !JR_NET ? EPERM : over ? ECONNREFUSED : ENOENT);
	assert_true(accept(l, NULL, NULL) < 0 && errno == EAGAIN);
	close(l);
	/* Reads narrowed: its /tmp is private. */
	jr_init_args(&j, LL, d->scratch, (const char *const[]){ "read", f,
	    NULL });
	j.spec.flags |= CONFINE_READ_SYSTEM;
	j.spec.readable = fixture_dir;
	jr_run(&j);
	assert_int_equal(j.rc, 0);
	assert_int_equal(j.r.exit_code, ENOENT);
	jr_free(&j);
	free(fixture);
	assert_int_equal(unlink(s), 0);
	free(s);
	assert_int_equal(unlink(f), 0);
	free(f);
	free(made);
	assert_int_equal(rmdir(dir), 0);
}

/* `fixture args...` confined with env: its exit code, or -1 refused. */
static int
probe_with(const struct job_env *env, const char *scratch,
    const char *const *args)
{
	struct jr j;
	int rc;

	jr_init_args(&j, LL, scratch, args);
	jr_run_env(&j, env);
	rc = j.rc != 0 ? -1 : j.r.reason == CONFINE_REASON_SIGNAL ?
	    JR_SIG(j.r.signal) : j.r.exit_code;
	jr_free(&j);
	return rc;
}

#define WITH(env, d, ...) probe_with((env), (d)->scratch,                   \
	(const char *const[]){ __VA_ARGS__, NULL })

/*
 * Every kernel's Landlock, from none to ABI 5 (the ABI the helper found
 * stood in for, on this kernel: a ruleset with fewer rights): in
 * namespaces of its own the job keeps the promise with the layers that
 * exist (docs/linux-contract.md, *On every kernel*); without them, only
 * ABI 6 scopes its signals, and the job is refused. Each time: a write
 * outside (EROFS, the view), a device node outside /dev (EACCES: the
 * view is nodev), a signal to the host (ESRCH, the PID namespace), the
 * host's listener (ECONNREFUSED, the network namespace; EPERM where its
 * init cannot supervise its sockets), and a rename across directories
 * inside the scratch root (allowed: ABI 1 would refuse it, so it is not
 * used). Narrowed reads need ABI 2.
 */
static void
older_landlock_abis_are_compensated_in_namespaces(void **state)
{
	static const int abis[] = { -EOPNOTSUPP, 1, 2, 3, 4, 5 };
	struct jr_dirs *d = *state;
	struct job_env env;
	char host[24], port[16], *out = tu_join(d->outside, "f");
	char *node = tu_join(d->outside, "null"), *a = tu_join(d->scratch, "a");
	char *sub = tu_join(d->scratch, "sub"), *b = tu_join(sub, "b");
	char *dir = strdup(jr_fixture);
	const char *fixture_dir[] = { dirname(dir), NULL };
	struct jr j;
	size_t i;
	int fd;

	snprintf(host, sizeof(host), "%ld", (long)getpid());
	snprintf(port, sizeof(port), "%d", tu_listening_port(&fd));
	assert_int_equal(mknod(node, S_IFCHR | 0666, makedev(1, 3)), 0);
	assert_int_equal(chmod(node, 0666), 0);
	assert_int_equal(mkdir(sub, 0755), 0);
	/* Each reached unconfined. */
	assert_int_equal(PROBE(NONE, d->scratch, "write", node), 0);
	assert_int_equal(PROBE(NONE, d->scratch, "kill", host, "0"), 0);
	assert_int_equal(PROBE(NONE, d->scratch, "connect", port), 0);
	assert_true(tu_accept_now(fd) >= 0);
	for (i = 0; i < NELEM(abis); i++) {
		env = jr_env;
		env.landlock_abi = abis[i];
		if (!jr_env.ns) {
			assert_int_equal(WITH(&env, d, "write", a), -1);
			continue;
		}
		assert_int_equal(WITH(&env, d, "write", out), EROFS);
		assert_false(tu_exists(out));
		assert_int_equal(WITH(&env, d, "write", node), EACCES);
		assert_int_equal(WITH(&env, d, "kill", host, "0"), ESRCH);
		assert_int_equal(WITH(&env, d, "connect", port), JR_NET_ERRNO);
		assert_int_equal(tu_accept_now(fd), -1);
		jr_put(a, "a");
		assert_int_equal(WITH(&env, d, "rename", a, b), 0);
		assert_true(tu_exists(b));
		assert_int_equal(unlink(b), 0);
		/* Narrowed reads: Landlock's own, from ABI 2. */
		jr_init(&j, LL, d->scratch, "exit", "0", NULL);
		j.spec.flags |= CONFINE_READ_SYSTEM;
		j.spec.readable = fixture_dir;
		jr_run_env(&j, &env);
		if (abis[i] < 2) {
			assert_int_equal(j.rc, -ENOTSUP);
			assert_non_null(strstr(j.why, "narrowed reads"));
		} else {
			assert_int_equal(j.rc, 0);
			assert_outcome(&j, CONFINE_COMPLETED, CONFINE_REASON_NONE);
		}
		jr_free(&j);
	}
	close(fd);
	assert_int_equal(unlink(node), 0);
	assert_int_equal(rmdir(sub), 0);
	free(out);
	free(node);
	free(a);
	free(sub);
	free(b);
	free(dir);
}

/*
 * SysV IPC and POSIX message queues: in namespaces of its own the job's
 * are its own copies, the host's out of its sight (ENOENT) and its own
 * out of the host's; in the host's namespaces they are refused (EPERM).
 * Unconfined, each is found, and what it makes the host sees.
 */
static void
ipc_objects_are_its_own_or_refused(void **state)
{
	struct jr_dirs *d = *state;
	int made = jr_env.ns ? 0 : EPERM, id, q;
	key_t key = (key_t)(0x636f0000 | (getpid() & 0xffff));
	char hex[16], hex2[16], mq[64], mq2[64];

	snprintf(hex, sizeof(hex), "%x", (unsigned)key);
	snprintf(hex2, sizeof(hex2), "%x", (unsigned)key + 1);
	snprintf(mq, sizeof(mq), "/confine-reach-%ld", (long)getpid());
	snprintf(mq2, sizeof(mq2), "/confine-reach-%ld-job", (long)getpid());
	/* A killed run's, of this pid, gone first. */
	if ((id = shmget(key, 0, 0)) >= 0)
		(void)shmctl(id, IPC_RMID, NULL);
	if ((id = shmget(key + 1, 0, 0)) >= 0)
		(void)shmctl(id, IPC_RMID, NULL);
	(void)syscall(SYS_mq_unlink, mq + 1);
	(void)syscall(SYS_mq_unlink, mq2 + 1);
	/* The host's, found unconfined only. */
	id = shmget(key, 4096, IPC_CREAT | IPC_EXCL | 0666);
	assert_true(id >= 0);
	q = (int)syscall(SYS_mq_open, mq + 1, O_RDONLY | O_CREAT | O_EXCL |
	    O_CLOEXEC, 0666, NULL);
	assert_true(q >= 0);
	PAIR(d, 0, jr_env.ns ? ENOENT : EPERM, "ipc", "shm-find", hex);
	PAIR(d, 0, jr_env.ns ? ENOENT : EPERM, "ipc", "mq-find", mq + 1);
	assert_int_equal(shmctl(id, IPC_RMID, NULL), 0);
	close(q);
	assert_int_equal(syscall(SYS_mq_unlink, mq + 1), 0);
	/* The job's, seen by the host unconfined only. */
	assert_int_equal(PROBE(NONE, d->scratch, "ipc", "shm-make", hex2), 0);
	assert_true((id = shmget(key + 1, 0, 0)) >= 0);
	assert_int_equal(shmctl(id, IPC_RMID, NULL), 0);
	assert_int_equal(PROBE(NONE, d->scratch, "ipc", "mq-make", mq2 + 1), 0);
	assert_int_equal(syscall(SYS_mq_unlink, mq2 + 1), 0);
	assert_int_equal(PROBE(LL, d->scratch, "ipc", "shm-make", hex2), made);
	assert_int_equal(shmget(key + 1, 0, 0), -1);
	assert_int_equal(errno, ENOENT);
	assert_int_equal(PROBE(LL, d->scratch, "ipc", "mq-make", mq2 + 1), made);
	assert_int_equal(syscall(SYS_mq_unlink, mq2 + 1), -1);
	assert_int_equal(errno, ENOENT);
}

/*
 * /dev/shm (POSIX shared memory and named semaphores) and ptys: in
 * namespaces of its own, a /dev/shm and a devpts instance of its own, the
 * host's files out of its sight and its own out of the host's; in the
 * host's, /dev/shm is read-only (EROFS) and the host's ptmx not its to
 * open (Landlock: EACCES). Unconfined, the host's is found, and the job's
 * is the host's.
 */
static void
shm_and_ptys_are_its_own_or_refused(void **state)
{
	struct jr_dirs *d = *state;
	char host[64], job[64];

	snprintf(host, sizeof(host), "/dev/shm/confine-reach-%ld", (long)getpid());
	snprintf(job, sizeof(job), "/dev/shm/confine-reach-%ld-job",
	    (long)getpid());
	/* A killed run's, of this pid, gone first. */
	(void)unlink(host);
	(void)unlink(job);
	jr_put(host, "host\n");
	assert_int_equal(chmod(host, 0644), 0);
	PAIR(d, 0, jr_env.ns ? ENOENT : 0, "stat", host);
	assert_int_equal(unlink(host), 0);
	assert_int_equal(PROBE(NONE, d->scratch, "write", job), 0);
	assert_int_equal(unlink(job), 0);
	assert_int_equal(PROBE(LL, d->scratch, "write", job),
	    jr_env.ns ? 0 : EROFS);
	assert_false(tu_exists(job));
	PAIR(d, 0, jr_env.ns ? 0 : EACCES, "ipc", "pty", "-");
}

/* Its own stream and seqpacket pairs address nothing else: they stay. */
static void
pairs_that_address_nothing_stay(void **state)
{
	struct jr_dirs *d = *state;

	PAIR(d, 0, 0, "pair", "stream");
	PAIR(d, 0, 0, "pair", "seqpacket");
	PAIR(d, 0, 0, "pair", "pass");
}

/* `fixture fd0 OP ADDR` on an unbound datagram socket the test gives. */
static int
given_dgram(enum confine_backend b, const char *scratch, const char *op,
    const char *to)
{
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0), rc;

	assert_true(fd >= 0);
	rc = jr_probe(b, scratch, fd, NULL, (const char *const[]){ "fd0", op,
	    to, NULL });
	close(fd);
	return rc;
}

/* sendto with an address, on a socket it is given: refused too. */
static void
a_given_socket_sends_to_no_address(void **state)
{
	struct jr_dirs *d = *state;
	struct listener l;

	listener_open(&l);
	assert_int_equal(given_dgram(NONE, d->scratch, "send", l.path), 0);
	assert_int_equal(drained(l.fd), 1);
	assert_int_equal(given_dgram(LL, d->scratch, "send", l.path), EPERM);
	assert_int_equal(given_dgram(NONE, d->scratch, "send", l.name), 0);
	assert_int_equal(drained(l.afd), 1);
	assert_int_equal(given_dgram(LL, d->scratch, "send", l.name), EPERM);
	/* sendmsg's address is out of a filter's reach: Landlock's scope. */
	assert_int_equal(given_dgram(NONE, d->scratch, "sendmsg", l.name), 0);
	assert_int_equal(drained(l.afd), 1);
	assert_int_equal(given_dgram(LL, d->scratch, "sendmsg", l.name), EPERM);
	assert_int_equal(drained(l.afd), 0);
	listener_close(&l);
}

/*
 * sendmsg to a pathname socket, on a datagram socket the host gives: where
 * its init makes every sendmsg, refused (EPERM: the socket is of the
 * host's network, not the job's); where none does, not covered (seccomp
 * cannot read the address, Landlock scopes abstract sockets only): the
 * host's to lend (docs/linux-contract.md, Nonclaims). Without an address,
 * to the peer the host connected it to, it sends either way.
 */
static void
a_given_datagram_socket_sends_by_name_only_unsupervised(void **state)
{
	struct jr_dirs *d = *state;
	struct sockaddr_un sun;
	struct listener l;
	int fd;

	listener_open(&l);
	assert_int_equal(given_dgram(NONE, d->scratch, "sendmsg", l.path), 0);
	assert_int_equal(drained(l.fd), 1);
	assert_int_equal(given_dgram(LL, d->scratch, "sendmsg", l.path),
	    JR_NET ? EPERM : 0);
	assert_int_equal(drained(l.fd), JR_NET ? 0 : 1);
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	strcpy(sun.sun_path, l.path);
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	assert_true(fd >= 0);
	assert_int_equal(connect(fd, (struct sockaddr *)&sun, sizeof(sun)), 0);
	assert_int_equal(jr_probe(LL, d->scratch, fd, NULL,
	    (const char *const[]){ "fd0", "sendmsg-peer", "-", NULL }), 0);
	close(fd);
	assert_int_equal(drained(l.fd), 1);
	listener_close(&l);
}

/* ---- other processes ---- */

static pid_t
sleeper(void)
{
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		/* As after an exec: the unprivileged run's setuid cleared it. */
		prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
		pause();
		_exit(0);
	}
	return pid;
}

static void
sleeper_end(pid_t pid)
{
	kill(pid, SIGKILL);
	assert_int_equal(waitpid(pid, NULL, 0), pid);
}

static const char *const proc_ops[] = {
	"prlimit", "setpriority", "affinity", "scheduler", "setparam",
	"setattr", "ioprio", "migrate_pages", "move_pages", "kcmp",
};

/* Another process's limits, priority and scheduling stay its own. */
static void
another_process_is_out_of_reach(void **state)
{
	struct jr_dirs *d = *state;
	struct rlimit was, now;
	char pid[24], uid[24];
	pid_t p = sleeper();
	size_t i;
	int nice;

	snprintf(pid, sizeof(pid), "%ld", (long)p);
	assert_int_equal(prlimit(p, RLIMIT_NOFILE, NULL, &was), 0);
	for (i = 0; i < NELEM(proc_ops); i++) {
		assert_int_equal(PROBE(NONE, d->scratch, "proc", proc_ops[i], pid), 0);
		assert_int_equal(prlimit(p, RLIMIT_NOFILE, &was, NULL), 0);
		errno = 0;
		nice = getpriority(PRIO_PROCESS, (id_t)p);
		assert_int_equal(errno, 0);
		/* With its own PID namespace, no such process for the job. */
		assert_int_equal(PROBE(LL, d->scratch, "proc", proc_ops[i], pid),
		    JR_OUTSIDE(EPERM));
		assert_int_equal(prlimit(p, RLIMIT_NOFILE, NULL, &now), 0);
		assert_int_equal(now.rlim_cur, was.rlim_cur);
		assert_int_equal(getpriority(PRIO_PROCESS, (id_t)p), nice);
	}
	/* Reaching its memory needs CAP_SYS_NICE even unconfined. */
	if (un.uid == 0)
		PAIR(d, 0, JR_OUTSIDE(EACCES), "proc", "process_madvise", pid);
	/* Every process of a uid at once (one no process has: ESRCH). */
	snprintf(uid, sizeof(uid), "%ld", (long)tu_unused_uid());
	PAIR(d, ESRCH, EPERM, "proc", "prio-user", "0", uid);
	PAIR(d, ESRCH, EPERM, "proc", "ioprio-user", "0", uid);
	sleeper_end(p);
}

/* Its own: the calls that name the caller (0), and its own children. */
static void
its_own_processes_are_its_own(void **state)
{
	struct jr_dirs *d = *state;
	static const char *const self[] = { "prlimit", "setpriority",
		"affinity", "scheduler", "setparam", "setattr", "ioprio" };
	static const char *const child[] = { "kcmp", "migrate_pages",
		"move_pages" };
	size_t i;

	for (i = 0; i < NELEM(self); i++)
		PAIR(d, 0, 0, "proc", self[i], "self");
	for (i = 0; i < NELEM(child); i++)
		PAIR(d, 0, 0, "proc", child[i], "child");
	/*
	 * By number: in its own PID namespace, a child of its own, each
	 * control; in the host's, not even that (the filter sees only
	 * numbers). Its init, pid 1 there, never: EPERM.
	 */
	for (i = 0; i < NELEM(self); i++) {
		PAIR(d, 0, jr_env.ns ? 0 : EPERM, "proc", self[i], "child");
		assert_int_equal(PROBE(LL, d->scratch, "proc", self[i], "1"),
		    EPERM);
	}
}

/* ---- privilege through exec (the unprivileged run) ---- */

/* `exe creds` as the unprivileged user: its effective uid. */
static long
euid_running(enum confine_backend b, const char *scratch, const char *exe)
{
	struct jr j;
	long uid, euid;

	jr_init(&j, b, scratch, "creds", NULL);
	j.spec.exe = exe;
	jr_run(&j);
	assert_outcome(&j, CONFINE_COMPLETED, CONFINE_REASON_NONE);
	assert_int_equal(sscanf(j.out, "%ld %ld", &uid, &euid), 2);
	jr_free(&j);
	return euid;
}

static void
no_privilege_is_gained_by_exec(void **state)
{
	struct jr_dirs *d = *state;
	char *caps;

	assert_true(un.uid != 0);
	assert_int_equal(euid_running(NONE, d->scratch, un.suid), 0);
	assert_int_equal(euid_running(LL, d->scratch, un.suid), (long)un.uid);
	/* CAP_SYS_TIME (bit 25) as a file capability: not even that. */
	caps = caps_of(NONE, d->scratch, un.fcaps);
	assert_non_null(strstr(caps, "0000000002000000"));
	free(caps);
	caps = caps_of(LL, d->scratch, un.fcaps);
	assert_string_equal(caps, NO_CAPS);
	free(caps);
}

#define T(name) cmocka_unit_test_setup_teardown(name, jr_dirs_setup, jr_dirs_teardown)

static int
run_root(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(jr_on_its_path),
		T(metadata_outside_is_read_only),
		T(metadata_inside_is_the_jobs),
		T(no_setid_file_is_left),
		T(host_state_is_refused),
		T(a_root_job_holds_no_capability),
		T(kernel_surface_is_refused),
		T(a_device_node_in_the_scratch_root_is_dead),
		T(no_device_node_is_made),
		T(no_datagram_of_its_own_leaves),
		T(no_name_is_taken),
		T(the_lent_terminal_stays_the_users),
		T(no_lease_on_what_it_may_only_read),
		T(pairs_that_address_nothing_stay),
		T(a_network_of_its_own),
		T(a_datagrams_credentials_are_its_inits),
		T(the_hosts_tmp_is_read_where_it_lies),
		T(older_landlock_abis_are_compensated_in_namespaces),
		T(ipc_objects_are_its_own_or_refused),
		T(shm_and_ptys_are_its_own_or_refused),
		T(a_given_socket_sends_to_no_address),
		T(a_given_datagram_socket_sends_by_name_only_unsupervised),
		T(another_process_is_out_of_reach),
		T(its_own_processes_are_its_own),
	};

	return cmocka_run_group_tests_name("reach as root", tests, NULL, NULL);
}

static int
run_as_user(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(jr_on_its_path),
		T(metadata_outside_is_read_only),
		T(metadata_inside_is_the_jobs),
		T(no_setid_file_is_left),
		T(kernel_surface_is_refused),
		T(a_device_node_in_the_scratch_root_is_dead),
		T(no_datagram_of_its_own_leaves),
		T(no_name_is_taken),
		T(the_lent_terminal_stays_the_users),
		T(no_lease_on_what_it_may_only_read),
		T(pairs_that_address_nothing_stay),
		T(a_network_of_its_own),
		T(a_datagrams_credentials_are_its_inits),
		T(the_hosts_tmp_is_read_where_it_lies),
		T(ipc_objects_are_its_own_or_refused),
		T(shm_and_ptys_are_its_own_or_refused),
		T(a_given_socket_sends_to_no_address),
		T(a_given_datagram_socket_sends_by_name_only_unsupervised),
		T(another_process_is_out_of_reach),
		T(its_own_processes_are_its_own),
		T(no_privilege_is_gained_by_exec),
	};

	return cmocka_run_group_tests_name("reach as an unprivileged uid", tests,
	    NULL, NULL);
}

/* security.capability, revision 2: CAP_SYS_TIME permitted and effective. */
static void
give_file_cap(const char *path)
{
	uint32_t cap[5] = { 0x02000000u | 0x000001u, 1u << 25, 0, 0, 0 };

	assert_int_equal(setxattr(path, "security.capability", cap, sizeof(cap),
	    0), 0);
}

static char *
copy_in(const char *name)
{
	char *path = tu_join(un.base, name);

	tu_copy_exec(jr_fixture, path);
	return path;
}

/*
 * Everything the user's jobs run or meet is made here, by root, in a
 *  directory of the user's in /var/tmp (the runfiles are beneath /root).
 */
static int
run_unprivileged(void)
{
	/*
	 * Not beneath /tmp: the job's /tmp is its own, the host's out of its
	 * sight, and the fixture copies must be seen where they are.
	 */
	char base[] = "/var/tmp/confine-reach.XXXXXX", *fixture, cmd[64];
	int status, failed;
	pid_t pid;

	assert_non_null(mkdtemp(base));
	un.base = base;
	un.uid = tu_unused_uid();
	assert_int_equal(chmod(base, 0755), 0);
	fixture = copy_in("fixture");
	un.suid = copy_in("suid-fixture");
	assert_int_equal(chmod(un.suid, 04755), 0);
	un.fcaps = copy_in("fcaps-fixture");
	give_file_cap(un.fcaps);
	un.node = tu_join(base, "node");
	assert_int_equal(mknod(un.node, S_IFCHR | 0666, makedev(1, 3)), 0);
	assert_int_equal(chmod(un.node, 0666), 0);
	assert_int_equal(chown(base, un.uid, un.uid), 0);
	fflush(stdout);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		/* The direct path: the user's own cgroup, delegated to it. */
		if ((tu_path_direct() && !tu_cgroup_for(un.uid)) ||
		    setgroups(0, NULL) != 0 || setgid(un.uid) != 0 ||
		    setuid(un.uid) != 0)
			_exit(100);
		setenv("TEST_TMPDIR", base, 1);
		setenv("TMPDIR", base, 1);
		job_env_fini(&jr_env);
		job_env_init(&jr_env);
		jr_fixture = fixture;
		failed = run_as_user();
		fflush(stdout);
		_exit(failed > 99 ? 99 : failed);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) != 100);
	failed = WEXITSTATUS(status);
	/* What the user's jobs left: its scratch and outside directories. */
	assert_int_equal(snprintf(cmd, sizeof(cmd), "rm -rf '%s'", base) <
	    (int)sizeof(cmd), 1);
	assert_int_equal(system(cmd), 0);
	free(fixture);
	free(un.suid);
	free(un.fcaps);
	free(un.node);
	return failed;
}

int
main(void)
{
	int failed;

	tu_path_setup();
	jr_setup();
	failed = run_root();
	return failed + run_unprivileged();
}
