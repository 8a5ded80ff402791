#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#ifdef __linux__
#include <sys/syscall.h>
#endif
#include <unistd.h>

#include "src/core/fd.h"

int
fd_cloexec(int fd)
{
	int flags = fcntl(fd, F_GETFD);

	if (flags < 0 || fcntl(fd, F_SETFD, flags | FD_CLOEXEC) < 0)
		return -errno;
	return 0;
}

int
fd_nonblock(int fd)
{
	int flags = fcntl(fd, F_GETFL);

	if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0)
		return -errno;
	return 0;
}

#if !defined(__linux__) || !defined(SOCK_CLOEXEC)
static int
cloexec_both(int fds[2])
{
	int rc;

	if ((rc = fd_cloexec(fds[0])) != 0 || (rc = fd_cloexec(fds[1])) != 0) {
		close(fds[0]);
		close(fds[1]);
		fds[0] = fds[1] = -1;
	}
	return rc;
}
#endif

int
fd_pipe(int fds[2])
{
#ifdef __linux__
	return pipe2(fds, O_CLOEXEC) == 0 ? 0 : -errno;
#else
	/* Not atomic: callers in threaded processes use posix_spawn anyway. */
	if (pipe(fds) != 0)
		return -errno;
	return cloexec_both(fds);
#endif
}

/* Where there is no MSG_NOSIGNAL, the socket itself says it (macOS). */
static int
nosigpipe(int fd)
{
#ifdef SO_NOSIGPIPE
	int one = 1;

	if (setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &one, sizeof(one)) != 0)
		return -errno;
#else
	(void)fd;
#endif
	return 0;
}

int
fd_socketpair(int fds[2])
{
	int rc;

#ifdef SOCK_CLOEXEC
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0)
		return -errno;
#else
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, fds) != 0)
		return -errno;
	if ((rc = cloexec_both(fds)) != 0)
		return rc;
#endif
	if ((rc = nosigpipe(fds[0])) != 0 || (rc = nosigpipe(fds[1])) != 0) {
		close(fds[0]);
		close(fds[1]);
		fds[0] = fds[1] = -1;
	}
	return rc;
}

int
fd_socket(int domain, int type)
{
	int fd, rc;

#ifdef SOCK_CLOEXEC
	if ((fd = socket(domain, type | SOCK_CLOEXEC, 0)) < 0)
		return -errno;
#else
	if ((fd = socket(domain, type, 0)) < 0)
		return -errno;
	if ((rc = fd_cloexec(fd)) != 0) {
		close(fd);
		return rc;
	}
#endif
	if ((rc = nosigpipe(fd)) != 0) {
		close(fd);
		return rc;
	}
	return fd;
}

#ifdef __linux__
struct dirent64_ {
	uint64_t ino;
	int64_t off;
	unsigned short reclen;
	unsigned char type;
	char name[];
};

/*
 * Without close_range (before Linux 5.9, or refused): the descriptors
 * /proc/self/fd lists, read with getdents64 into a buffer of the stack
 * (no allocation: after fork). Returns 0, or -1 where /proc cannot be
 * read. Closing while listing is safe there: an entry's offset is its
 * number.
 */
static int
close_listed(int lo, int hi)
{
	char buf[1024];
	long n, i, fd;
	int dir;

	dir = open("/proc/self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dir < 0)
		return -1;
	while ((n = syscall(SYS_getdents64, dir, buf, sizeof(buf))) > 0) {
		for (i = 0; i < n; ) {
			const struct dirent64_ *e = (const void *)(buf + i);
			const char *c = e->name;

			i += e->reclen;
			for (fd = 0; *c >= '0' && *c <= '9' && fd <= INT_MAX; c++)
				fd = fd * 10 + (*c - '0');
			if (*c != '\0' || c == e->name || fd == dir || fd < lo ||
			    (hi >= 0 && fd > hi))
				continue;
			close((int)fd);
		}
	}
	close(dir);
	return n == 0 ? 0 : -1;
}
#endif

#define FD_BOUND (1L << 20)

static void
close_range_from(int lo, int hi)
{
	struct rlimit rl;
	long max;

#ifdef __linux__
	if (close_range((unsigned)lo, (unsigned)hi, 0) == 0)
		return;
	if (close_listed(lo, hi) == 0)
		return;
#endif
	/*
	 * Every number a descriptor can have: below the hard limit (one
	 * opened before the soft limit was lowered is above the soft one);
	 * where that is unbounded, below the soft limit; at most Linux's own
	 * bound on any process's (fs.nr_open's default).
	 */
	if (hi < 0) {
		max = -1;
		if (getrlimit(RLIMIT_NOFILE, &rl) == 0 &&
		    rl.rlim_max != RLIM_INFINITY && rl.rlim_max <= FD_BOUND)
			max = (long)rl.rlim_max;
		if (max <= 0)
			max = sysconf(_SC_OPEN_MAX);
		if (max <= 0 || max > FD_BOUND)
			max = FD_BOUND;
		hi = (int)(max - 1);
	}
	for (; lo <= hi; lo++)
		close(lo);
}

void
fd_close_except(const int *keep, size_t n)
{
	int lo = 0, next;
	size_t i;

	/* Walk the kept descriptors in ascending order without sorting. */
	for (;;) {
		next = -1;
		for (i = 0; i < n; i++)
			if (keep[i] >= lo && (next < 0 || keep[i] < next))
				next = keep[i];
		if (next < 0)
			break;
		if (next > lo)
			close_range_from(lo, next - 1);
		lo = next + 1;
	}
	close_range_from(lo, -1);
}

int
fd_read_full(int fd, void *buf, size_t len)
{
	char *p = buf;
	ssize_t n;

	while (len > 0) {
		n = read(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -EPIPE;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

ssize_t
fd_read_small(int dir, const char *path, char *buf, size_t size)
{
	ssize_t n;
	int fd, err;

	if (size == 0 || (fd = openat(dir, path, O_RDONLY | O_CLOEXEC)) < 0)
		return -1;
	do
		n = read(fd, buf, size - 1);
	while (n < 0 && errno == EINTR);
	err = n < 0 ? errno : EIO;
	close(fd);
	if (n <= 0) {
		errno = err;
		return -1;
	}
	buf[n] = '\0';
	return n;
}

int
fd_write_full(int fd, const void *buf, size_t len)
{
	const char *p = buf;
	ssize_t n;

	while (len > 0) {
		n = write(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

void
fd_closep(int *fd)
{
	int saved = errno;

	if (*fd >= 0)
		close(*fd);
	*fd = -1;
	errno = saved;
}

#ifndef MSG_NOSIGNAL
#define MSG_NOSIGNAL 0
#endif
#ifndef MSG_CMSG_CLOEXEC
#define MSG_CMSG_CLOEXEC 0
#endif
#define FD_MAX_PASS 16

ssize_t
fd_send_with(int fd, const void *buf, size_t len, const int *fds, size_t nfds)
{
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int) * FD_MAX_PASS)];
	} ctl;
	struct iovec iov = { (void *)(uintptr_t)buf, len };
	struct msghdr msg;
	struct cmsghdr *cm;
	ssize_t n;

	if (nfds > FD_MAX_PASS)
		return -EINVAL;
	memset(&msg, 0, sizeof(msg));
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	if (nfds > 0) {
		memset(&ctl, 0, sizeof(ctl));
		msg.msg_control = ctl.buf;
		msg.msg_controllen = CMSG_SPACE(sizeof(int) * nfds);
		cm = CMSG_FIRSTHDR(&msg);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
		memcpy(CMSG_DATA(cm), fds, sizeof(int) * nfds);
	}
	do
		n = sendmsg(fd, &msg, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	return n < 0 ? -errno : n;
}

ssize_t
fd_recv_with(int fd, void *buf, size_t len, int flags, int *fds,
    size_t maxfds, size_t *nfds, int *excess)
{
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int) * FD_MAX_PASS)];
	} ctl;
	struct iovec iov = { buf, len };
	struct msghdr msg;
	struct cmsghdr *cm;
	size_t i, k;
	ssize_t n;
	int *got;

	*nfds = 0;
	*excess = 0;
	memset(&msg, 0, sizeof(msg));
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	msg.msg_control = ctl.buf;
	/* Room for one more than wanted, so that too many is noticed. */
	msg.msg_controllen = CMSG_SPACE(sizeof(int) *
	    (maxfds < FD_MAX_PASS ? maxfds + 1 : FD_MAX_PASS));
	do
		n = recvmsg(fd, &msg, flags | MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	for (cm = CMSG_FIRSTHDR(&msg); cm != NULL; cm = CMSG_NXTHDR(&msg, cm)) {
		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
			continue;
		got = (int *)(void *)CMSG_DATA(cm);
		k = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (i = 0; i < k; i++) {
			if (*nfds < maxfds) {
				fds[(*nfds)++] = got[i];
			} else {
				close(got[i]);
				*excess = 1;
			}
		}
	}
	if (msg.msg_flags & MSG_CTRUNC)
		*excess = 1;
	return n;
}
