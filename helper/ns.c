#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "helper/ns.h"
#include "src/fd.h"

#ifndef CLONE_PIDFD
#define CLONE_PIDFD 0x00001000
#endif

/* clone3's arguments, as far as a holder needs them (linux/sched.h's). */
struct holder_args {
	uint64_t flags, pidfd, child_tid, parent_tid, exit_signal;
	uint64_t stack, stack_size, tls;
};

/* Decimal digits of v into buf (no allocation, no locale: after fork). */
static size_t
put_uint(char *buf, unsigned long v)
{
	char tmp[24];
	size_t n = 0, i;

	do
		tmp[n++] = (char)('0' + v % 10);
	while ((v /= 10) != 0);
	for (i = 0; i < n; i++)
		buf[i] = tmp[n - 1 - i];
	return n;
}

static int
write_file(const char *path, const char *text, size_t len)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), rc = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, text, len) != (ssize_t)len)
		rc = -errno;
	close(fd);
	return rc;
}

/* "ID ID 1": the one id, mapped to itself. */
static int
map_one(const char *path, unsigned long id)
{
	char line[64];
	size_t n;

	n = put_uint(line, id);
	line[n++] = ' ';
	n += put_uint(line + n, id);
	memcpy(line + n, " 1", 2);
	return write_file(path, line, n + 2);
}

int
ns_map_self(uid_t uid, gid_t gid, enum op *op)
{
	int rc, dumpable;

	*op = OP_ID_MAP;
	/*
	 * A process that changed its uid without exec since (a host that
	 * dropped root, then forked its helper) is not dumpable, and its
	 * /proc/self is root's, whom the new namespace does not map: dumpable
	 * just for the three writes.
	 */
	dumpable = prctl(PR_GET_DUMPABLE, 0, 0, 0, 0);
	if (dumpable == 0 && prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) != 0)
		return -errno;
	rc = write_file("/proc/self/setgroups", "deny", 4);
	if (rc == 0)
		rc = map_one("/proc/self/uid_map", uid);
	if (rc == 0)
		rc = map_one("/proc/self/gid_map", gid);
	if (dumpable == 0 && prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0 && rc == 0)
		rc = -errno;
	if (rc == 0)
		*op = OP_NONE;
	return rc;
}

pid_t
ns_clone_init(bool userns)
{
	unsigned long flags = CLONE_NEWPID | SIGCHLD;

	if (userns)
		flags |= CLONE_NEWUSER;
	/* fork()'s way: no stack given, the child runs on a copy of ours. */
	return (pid_t)syscall(SYS_clone, flags, 0, NULL, NULL, 0);
}

/* The loopback interface up: the namespace's one network. */
static int
lo_up(void)
{
	struct ifreq ifr;
	int s, rc = 0;

	s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		return -errno;
	memset(&ifr, 0, sizeof(ifr));
	memcpy(ifr.ifr_name, "lo", 3);
	if (ioctl(s, SIOCGIFFLAGS, &ifr) != 0)
		rc = -errno;
	ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
	if (rc == 0 && ioctl(s, SIOCSIFFLAGS, &ifr) != 0)
		rc = -errno;
	close(s);
	return rc;
}

int
ns_enter(enum op *op)
{
	int rc;

	*op = OP_UNSHARE_NS;
	if (unshare(CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS) != 0)
		return -errno;
	*op = OP_LO_UP;
	if ((rc = lo_up()) != 0)
		return rc;
	*op = OP_NONE;
	return 0;
}

/*
 * The holder's life: nothing of ours kept but its pipes, our signals'
 * handlers gone, the loopback up, then it waits for its init's word (or
 * its death, or ours).
 */
static _Noreturn void
holder_main(pid_t parent, int ready, int release)
{
	static const int sigs[] = { SIGTERM, SIGINT, SIGHUP, SIGCHLD, SIGPIPE };
	int keep[2] = { ready, release };
	struct sigaction sa;
	sigset_t none;
	size_t i;
	char c = 1;

	(void)prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
	if (getppid() != parent)
		_exit(1);
	/* What ps(1) shows, and the tests tell holders by. */
	(void)prctl(PR_SET_NAME, NS_HOLDER_NAME, 0, 0, 0);
	fd_close_except(keep, 2);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_DFL;
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		(void)sigaction(sigs[i], &sa, NULL);
	sigemptyset(&none);
	(void)sigprocmask(SIG_SETMASK, &none, NULL);
	if (lo_up() != 0 || write(ready, &c, 1) != 1)
		_exit(1);
	close(ready);
	while (read(release, &c, 1) < 0 && errno == EINTR)
		;
	_exit(0);
}

int
ns_hold(struct ns_held *h)
{
	struct holder_args ca;
	int rd[2] = { -1, -1 }, rel[2] = { -1, -1 }, pidfd = -1, rc;
	pid_t parent = getpid(), pid;

	h->pid = -1;
	h->pidfd = h->ready = h->release = -1;
	if ((rc = fd_pipe(rd)) != 0 || (rc = fd_pipe(rel)) != 0)
		goto fail;
	memset(&ca, 0, sizeof(ca));
	ca.flags = CLONE_PIDFD | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS;
	ca.pidfd = (uint64_t)(uintptr_t)&pidfd;
	ca.exit_signal = SIGCHLD;
	/* fork()'s way, the system call itself, as ns_clone_init. */
	pid = (pid_t)syscall(SYS_clone3, &ca, sizeof(ca));
	if (pid == 0)
		holder_main(parent, rd[1], rel[0]);
	if (pid < 0) {
		rc = -errno;
		goto fail;
	}
	close(rd[1]);
	close(rel[0]);
	h->pid = pid;
	h->pidfd = pidfd;
	h->ready = rd[0];
	h->release = rel[1];
	return 0;
fail:
	fd_closep(&rd[0]);
	fd_closep(&rd[1]);
	fd_closep(&rel[0]);
	fd_closep(&rel[1]);
	return rc;
}

void
ns_held_close(struct ns_held *h, bool kill_it)
{
	if (kill_it && h->pid > 0)
		(void)kill(h->pid, SIGKILL);
	fd_closep(&h->pidfd);
	fd_closep(&h->ready);
	fd_closep(&h->release);
	h->pid = -1;
}

int
ns_join(struct ns_held *h, bool *joined, enum op *op)
{
	ssize_t n;
	char c = 1;
	int rc = 0;

	*joined = false;
	while ((n = read(h->ready, &c, 1)) < 0 && errno == EINTR)
		;
	/*
	 * setns(2) by pidfd, all three at once or none (Linux 5.8): where it
	 * fails, the init makes its own, as it would have without a holder.
	 */
	if (n == 1 && setns(h->pidfd, CLONE_NEWNET | CLONE_NEWIPC |
	    CLONE_NEWUTS) == 0) {
		*joined = true;
		*op = OP_UNSHARE_NS;
		if (unshare(CLONE_NEWNS) != 0)
			rc = -errno;
	}
	/* Joined or not, the holder goes: it exits at our word, or EOF. */
	if (write(h->release, &c, 1) < 0)
		c = 0;
	fd_closep(&h->pidfd);
	fd_closep(&h->ready);
	fd_closep(&h->release);
	if (rc != 0)
		return rc;
	if (!*joined)
		return ns_enter(op);
	*op = OP_NONE;
	return 0;
}

bool
ns_pool_take(struct ns_pool *p, struct ns_held *out, int64_t now)
{
	p->t_asked = now;
	if (p->n == 0) {
		p->missed++;
		return false;
	}
	*out = p->held[0];
	memmove(&p->held[0], &p->held[1], --p->n * sizeof(p->held[0]));
	p->taken++;
	return true;
}

int
ns_probe(enum op *op)
{
	bool userns = geteuid() != 0;
	uid_t uid = geteuid();
	gid_t gid = getegid();
	int p[2], rc, status;
	uint32_t rec[2] = { 0, 0 };
	pid_t pid;

	*op = OP_CLONE_INIT;
	if ((rc = fd_pipe(p)) != 0)
		return rc;
	pid = ns_clone_init(userns);
	if (pid == 0) {
		enum op o = OP_NONE;

		close(p[0]);
		rc = userns ? ns_map_self(uid, gid, &o) : 0;
		if (rc == 0)
			rc = ns_enter(&o);
		rec[0] = (uint32_t)o;
		rec[1] = (uint32_t)-rc;
		if (rc != 0 && write(p[1], rec, sizeof(rec)) != (ssize_t)sizeof(rec))
			_exit(2);
		_exit(rc != 0);
	}
	rc = pid < 0 ? -errno : 0;
	close(p[1]);
	if (rc != 0) {
		close(p[0]);
		return rc;
	}
	if (fd_read_full(p[0], rec, sizeof(rec)) == 0) {
		*op = rec[0] <= OP_LAST ? (enum op)rec[0] : OP_NONE;
		rc = rec[1] > 0 && rec[1] < 4096 ? -(int)rec[1] : -EIO;
	}
	close(p[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (rc == 0 && !(WIFEXITED(status) && WEXITSTATUS(status) == 0))
		rc = -EIO;
	if (rc == 0)
		*op = OP_NONE;
	return rc;
}
