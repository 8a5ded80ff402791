#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <linux/sockios.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "helper/backend/supervise.h"
#include "src/core/clock.h"
#include "src/core/fd.h"
#include "src/core/sigpipe.h"

/* call()'s, beside 0, -errno and a count of bytes: */
#define PENDING (-100001)   /* answered later */
#define GONE (-100002)      /* the caller is gone: no answer */
#define RETRY_FIRST_NS (1000 * 1000)
#define RETRY_MAX_NS (50 * 1000 * 1000)
#define NOTIF_MAX 512       /* the kernel's notification, at most */
#define RESP_MAX 256        /* and its answer */
#define MSG_IOV_MAX 1024    /* a message's iovecs, sendmmsg's messages
                               (the kernel's UIO_MAXIOV) */

static int
pidfd_open(pid_t pid)
{
	return (int)syscall(SYS_pidfd_open, pid, 0);
}

int
sup_probe(void)
{
	struct sock_filter allow = BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	struct seccomp_notif_sizes sizes;
	int status;
	pid_t pid;

	pid = sigpipe_fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		struct sock_fprog prog = { 1, &allow };

		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
		    syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
		    SECCOMP_FILTER_FLAG_NEW_LISTENER |
		    SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV, &prog) < 0)
			_exit(errno & 0xff);
		/* pidfd_getfd exists: a bad pidfd, EBADF; else ENOSYS. */
		if (syscall(SYS_pidfd_getfd, -1, 0, 0) == 0 || errno != EBADF)
			_exit(errno == 0 ? EIO : errno & 0xff);
		if (syscall(SYS_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &sizes) != 0)
			_exit(errno & 0xff);
		_exit(sizes.seccomp_notif > NOTIF_MAX ||
		    sizes.seccomp_notif_resp > RESP_MAX ? E2BIG : 0);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	if (!WIFEXITED(status))
		return -EIO;
	return WEXITSTATUS(status) == 0 ? 0 : -WEXITSTATUS(status);
}

/* The effective set: the permitted one (on), or nothing. */
static int
effective(bool on)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3,
		.pid = 0,
	};
	struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3];
	size_t i;

	if (syscall(SYS_capget, &hdr, d) != 0)
		return -errno;
	for (i = 0; i < _LINUX_CAPABILITY_U32S_3; i++)
		d[i].effective = on ? d[i].permitted : 0;
	return syscall(SYS_capset, &hdr, d) == 0 ? 0 : -errno;
}

/*
 * The job's user for the calls that follow: its groups, its file-system
 * ids, no capability. Nothing changed when it fails.
 */
static int
as_job(const struct sup *s)
{
	int rc;

	if (s->job.set_groups && syscall(SYS_setgroups, s->job.ngroups,
	    s->job.groups) != 0)
		return -errno;
	(void)syscall(SYS_setfsgid, s->job.gid);
	(void)syscall(SYS_setfsuid, s->job.uid);
	if ((rc = effective(false)) != 0) {
		(void)syscall(SYS_setfsuid, s->self_uid);
		(void)syscall(SYS_setfsgid, s->self_gid);
		if (s->job.set_groups)
			(void)syscall(SYS_setgroups, 0, NULL);
	}
	return rc;
}

/* Ours again. The init needs no group of its own: it had none. */
static void
as_self(const struct sup *s)
{
	(void)effective(true);
	(void)syscall(SYS_setfsuid, s->self_uid);
	(void)syscall(SYS_setfsgid, s->self_gid);
	if (s->job.set_groups)
		(void)syscall(SYS_setgroups, 0, NULL);
}

int
sup_init(struct sup *s, int listener, const struct sup_creds *job)
{
	struct stat st;

	memset(s, 0, sizeof(*s));
	s->listener = listener;
	if (stat("/proc/self/ns/net", &st) != 0)
		return -errno;
	s->netns = st.st_ino;
	s->self_uid = geteuid();
	s->self_gid = getegid();
	s->job = *job;
	s->other_ids = job->uid != getuid() || job->gid != getgid();
	/* With the job's groups to take, ours must be none to go back to. */
	if (job->set_groups && syscall(SYS_setgroups, 0, NULL) != 0)
		return -errno;
	return 0;
}

static bool
valid(const struct sup *s, uint64_t id)
{
	return ioctl(s->listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) == 0;
}

static void
answer_val(const struct sup *s, uint64_t id, int err, int64_t val)
{
	union {
		struct seccomp_notif_resp r;
		char buf[RESP_MAX];
	} u;

	memset(&u, 0, sizeof(u));
	u.r.id = id;
	u.r.error = err;
	u.r.val = err == 0 ? val : 0;
	/* ENOENT: the caller is gone (killed) since. */
	(void)ioctl(s->listener, SECCOMP_IOCTL_NOTIF_SEND, &u.r);
}

static void
answer(const struct sup *s, uint64_t id, int err)
{
	answer_val(s, id, err, 0);
}

/* A number from a line "Name:\t..." of /proc/TID/status, in base. */
static long
status_field(pid_t tid, const char *name, int base)
{
	char path[64], buf[2048], *p;

	snprintf(path, sizeof(path), "/proc/%ld/status", (long)tid);
	if (fd_read_small(AT_FDCWD, path, buf, sizeof(buf)) < 0 ||
	    (p = strstr(buf, name)) == NULL)
		return -1;
	return strtol(p + strlen(name), NULL, base);
}

/*
 * The calling process's pidfd: -EPERM, or GONE when the caller is no more
 * (and its pid may be another's).
 */
static int
job_pidfd(const struct sup *s, const struct seccomp_notif *req)
{
	int pidfd;
	long tgid;

	/*
	 * A thread's id names no pidfd (EINVAL before Linux 6.9, ENOENT
	 * since, without PIDFD_THREAD): its process's, which shares its
	 * descriptors.
	 */
	pidfd = pidfd_open(req->pid);
	if (pidfd < 0 && (errno == EINVAL || errno == ENOENT) &&
	    (tgid = status_field(req->pid, "\nTgid:", 10)) > 0)
		pidfd = pidfd_open((pid_t)tgid);
	if (pidfd < 0)
		return valid(s, req->id) ? -EPERM : GONE;
	/* Still waiting: so the pid was the caller's when opened. */
	if (!valid(s, req->id)) {
		close(pidfd);
		return GONE;
	}
	return pidfd;
}

/* The job's descriptor fd, as ours: -EBADF, or -EPERM. */
static int
job_fd(int pidfd, int fd)
{
	int ours = (int)syscall(SYS_pidfd_getfd, pidfd, fd, 0);

	if (ours < 0)
		return errno == EBADF ? -EBADF : -EPERM;
	return ours;
}

/* The job's descriptor fd, a socket, as ours: -errno. */
static int
socket_of(int pidfd, int fd)
{
	struct stat st;
	int sock = job_fd(pidfd, fd);

	if (sock >= 0 && (fstat(sock, &st) != 0 || !S_ISSOCK(st.st_mode))) {
		close(sock);
		return -ENOTSOCK;
	}
	return sock;
}

/* The job's socket fd, as ours: -errno, or GONE. */
static int
job_socket(const struct sup *s, const struct seccomp_notif *req, int fd)
{
	int pidfd = job_pidfd(s, req), sock;

	if (pidfd < 0)
		return pidfd;
	sock = socket_of(pidfd, fd);
	close(pidfd);
	return sock;
}

/* Whether a socket is of the job's network namespace (not one lent). */
static bool
ours(const struct sup *s, int sock)
{
	struct stat st;
	int ns = ioctl(sock, SIOCGSKNS);
	bool same;

	/* EPERM: a namespace the init has no say in, so not the job's. */
	if (ns < 0)
		return false;
	same = fstat(ns, &st) == 0 && (uint64_t)st.st_ino == s->netns;
	close(ns);
	return same;
}

/* The calling thread's cwd, for a relative path: a descriptor, or -errno. */
static int
thread_cwd(pid_t tid)
{
	char path[64];
	int fd;

	snprintf(path, sizeof(path), "/proc/%ld/cwd", (long)tid);
	fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	return fd >= 0 ? fd : -errno;
}

static struct sup_wait *
wait_add(struct sup *s, enum sup_wait_kind kind, uint64_t id, int sock,
    int path, const struct sockaddr *addr, socklen_t len)
{
	struct sup_wait *w = &s->wait[s->nwait++];

	memset(w, 0, sizeof(*w));
	w->kind = kind;
	w->id = id;
	w->sock = sock;
	w->path = path;
	if (len > 0)
		memcpy(&w->addr, addr, len);
	w->len = len;
	w->delay_ns = RETRY_FIRST_NS;
	w->at_ns = clock_ns() + w->delay_ns;
	return w;
}

static void
wait_drop(struct sup *s, size_t i)
{
	close(s->wait[i].sock);
	if (s->wait[i].path >= 0)
		close(s->wait[i].path);
	s->wait[i] = s->wait[--s->nwait];
}

/* A blocking socket, non-blocking for one call: its flags, or -1. */
static int
nonblocking(int sock)
{
	int flags = fcntl(sock, F_GETFL);

	if (flags < 0 || (flags & O_NONBLOCK))
		return -1;
	return fcntl(sock, F_SETFL, flags | O_NONBLOCK) == 0 ? flags : -1;
}

static void
restore(int sock, int flags)
{
	if (flags >= 0)
		(void)fcntl(sock, F_SETFL, flags);
}

/*
 * connect, never blocking us: a blocking socket is made non-blocking for
 * the call, and what would have blocked (a handshake, a full backlog) is
 * answered later. 0 or -errno now, or PENDING (then sock and path are
 * the wait's).
 */
static int
connect_now(struct sup *s, const struct seccomp_notif *req, int sock,
    int path, const struct sockaddr *addr, socklen_t len)
{
	int flags = nonblocking(sock), rc, err;

	if ((rc = as_job(s)) == 0) {
		rc = connect(sock, addr, len);
		err = errno;
		as_self(s);
		rc = rc == 0 ? 0 : -err;
	}
	restore(sock, flags);
	if (flags >= 0 && req != NULL && (rc == -EINPROGRESS ||
	    (rc == -EAGAIN && addr->sa_family == AF_UNIX))) {
		if (s->nwait == SUP_PENDING)
			return -EAGAIN;
		(void)wait_add(s, rc == -EAGAIN ? SUP_CONNECT_AGAIN :
		    SUP_HANDSHAKE, req->id, sock, path, addr, len);
		return PENDING;
	}
	return rc;
}

/* size bytes of thread tid's memory at at, read now: 0 or -EFAULT. */
static int
read_mem(pid_t tid, uint64_t at, size_t size, void *into)
{
	struct iovec local = { into, size };
	struct iovec remote = { (void *)(uintptr_t)at, size };

	if (size == 0)
		return 0;
	return syscall(SYS_process_vm_readv, tid, &local, 1UL, &remote, 1UL,
	    0UL) == (long)size ? 0 : -EFAULT;
}

/* And written: sendmmsg's count of each message's bytes. */
static int
write_mem(pid_t tid, uint64_t at, const void *from, size_t size)
{
	struct iovec local = { (void *)(uintptr_t)from, size };
	struct iovec remote = { (void *)(uintptr_t)at, size };

	return syscall(SYS_process_vm_writev, tid, &local, 1UL, &remote, 1UL,
	    0UL) == (long)size ? 0 : -EFAULT;
}

/* The bytes of one send, read at once: a sendto's, or a sendmsg's. */
static char bytes[SUP_SEND_MAX];

/*
 * sendto, never blocking us, nor raising SIGPIPE in us: the bytes sent,
 * or -errno now, or PENDING (sock is the wait's then).
 */
static int64_t
send_now(struct sup *s, struct sup_wait *again, const struct seccomp_notif *req,
    int sock, int path, const struct sockaddr *addr, socklen_t len,
    uint64_t buf, size_t size, int flags)
{
	pid_t tid = again != NULL ? again->tid : (pid_t)req->pid;
	int type = 0, fl, err;
	socklen_t tl = sizeof(type);
	int64_t rc;

	(void)getsockopt(sock, SOL_SOCKET, SO_TYPE, &type, &tl);
	if (size > SUP_SEND_MAX) {
		/* A stream takes what it can, as its writes may; no datagram is
		 * cut short. */
		if (type != SOCK_STREAM)
			return -EMSGSIZE;
		size = SUP_SEND_MAX;
	}
	if ((rc = read_mem(tid, buf, size, bytes)) < 0)
		return rc;
	fl = (flags & MSG_DONTWAIT) ? -1 : nonblocking(sock);
	if ((rc = as_job(s)) == 0) {
		rc = sendto(sock, bytes, size, flags | MSG_NOSIGNAL, addr, len);
		err = errno;
		as_self(s);
		rc = rc >= 0 ? rc : -err;
	}
	restore(sock, fl);
	if (fl >= 0 && rc == -EAGAIN && again == NULL) {
		struct sup_wait *w;

		if (s->nwait == SUP_PENDING)
			return -EAGAIN;
		w = wait_add(s, SUP_SEND_AGAIN, req->id, sock, path, addr, len);
		w->tid = (pid_t)req->pid;
		w->buf = buf;
		w->size = size;
		w->flags = flags;
		return PENDING;
	}
	return rc;
}

/* The inode a pathname connect reaches, as the job's user resolves it. */
static int
open_target(const struct sup *s, pid_t tid, const char *path)
{
	struct statvfs vfs;
	struct stat st;
	int base = AT_FDCWD, fd, rc, err;

	if (path[0] != '/' && (base = thread_cwd(tid)) < 0)
		return base;
	if ((rc = as_job(s)) != 0) {
		if (base >= 0)
			close(base);
		return rc;
	}
	fd = openat(base, path, O_PATH | O_CLOEXEC);
	err = errno;
	as_self(s);
	if (base >= 0)
		close(base);
	if (fd < 0)
		return -err;
	/*
	 * A socket the job could have made: on a mount it may write. The
	 * rest of the file system is the host's, read-only in its view.
	 */
	if (fstat(fd, &st) != 0 || !S_ISSOCK(st.st_mode))
		rc = -ECONNREFUSED;
	else if (fstatvfs(fd, &vfs) != 0 || (vfs.f_flag & ST_RDONLY))
		rc = -EACCES;
	if (rc != 0) {
		close(fd);
		return rc;
	}
	return fd;
}

/* bind to a pathname, from the thread's cwd with its umask. */
static int
bind_path(const struct sup *s, pid_t tid, int sock, const struct sockaddr *addr,
    socklen_t len, const char *path)
{
	int home = -1, cwd = -1, rc = 0, err;
	long mask = status_field(tid, "\nUmask:", 8);
	mode_t old;

	if (mask < 0)
		return -ESRCH;
	if (path[0] != '/') {
		if ((cwd = thread_cwd(tid)) < 0)
			return cwd;
		if ((home = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0 ||
		    fchdir(cwd) != 0)
			rc = -errno;
	}
	old = umask((mode_t)mask & 0777);
	if (rc == 0 && (rc = as_job(s)) == 0) {
		rc = bind(sock, addr, len);
		err = errno;
		as_self(s);
		rc = rc == 0 ? 0 : -err;
	}
	umask(old);
	/* Back where the init was; never so far seen to fail, but said. */
	if (home >= 0) {
		if (fchdir(home) != 0 && rc == 0)
			rc = -errno;
		close(home);
	}
	if (cwd >= 0)
		close(cwd);
	return rc;
}

union addr {
	struct sockaddr sa;
	struct sockaddr_un un;
	struct sockaddr_storage ss;
};

/*
 * Where a connect or a send goes, its address read: a unix pathname one
 * becomes the inode it names, opened as the job's user (*target, O_PATH),
 * as /proc/self/fd/N. 0 or -errno.
 */
static int
destination(const struct sup *s, pid_t tid, int sock, union addr *addr,
    socklen_t *len, int *target)
{
	size_t off = offsetof(struct sockaddr_un, sun_path);
	char path[sizeof(addr->un.sun_path) + 1];
	socklen_t olen = sizeof(int);
	int domain = 0;

	*target = -1;
	(void)getsockopt(sock, SOL_SOCKET, SO_DOMAIN, &domain, &olen);
	if (domain != AF_UNIX || addr->sa.sa_family != AF_UNIX)
		return 0;
	/* The kernel's own answer to a unix address longer than one. */
	if (*len > sizeof(struct sockaddr_un))
		return -EINVAL;
	if (*len <= off || addr->un.sun_path[0] == '\0')
		return 0;
	memcpy(path, addr->un.sun_path, *len - off);
	path[*len - off] = '\0';
	if ((*target = open_target(s, tid, path)) < 0)
		return *target;
	memset(addr, 0, sizeof(*addr));
	addr->un.sun_family = AF_UNIX;
	snprintf(addr->un.sun_path, sizeof(addr->un.sun_path),
	    "/proc/self/fd/%d", *target);
	*len = sizeof(addr->un);
	return 0;
}

/*
 * Its descriptors (SCM_RIGHTS), ours in their place: their count in *n
 * (to close after), or -errno as the kernel would answer. The kernel
 * takes SCM_MAX_FD at most. Whether it names credentials, in *creds.
 */
static int
rights_of(int pidfd, struct msghdr *m, int *fds, size_t *n, bool *creds)
{
	struct cmsghdr *c;
	size_t i, k, at;
	int fd;

	for (c = CMSG_FIRSTHDR(m); c != NULL; c = CMSG_NXTHDR(m, c)) {
		at = (size_t)((char *)c - (char *)m->msg_control);
		if (c->cmsg_len < CMSG_LEN(0) ||
		    c->cmsg_len > m->msg_controllen - at)
			return -EINVAL;
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_CREDENTIALS)
			*creds = true;
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (i = 0; i < k; i++) {
			if (*n == SUP_FDS_MAX)
				return -EINVAL;
			memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
			if ((fd = job_fd(pidfd, fd)) < 0)
				return fd;
			fds[(*n)++] = fd;
			memcpy(CMSG_DATA(c) + i * sizeof(int), &fd, sizeof(int));
		}
	}
	return 0;
}

/*
 * One message of a sendmsg, its struct msghdr at at in thread tid's
 * memory: read once, its address checked as a sendto's, its descriptors
 * taken, and sent as read. The bytes sent, -errno, or GONE.
 */
static int64_t
msg_send(struct sup *s, uint64_t id, pid_t tid, int pidfd, int sock,
    uint64_t at, int flags)
{
	static struct iovec iov[MSG_IOV_MAX];
	static union {
		struct cmsghdr align;
		char buf[SUP_CONTROL_MAX];
	} control;
	int fds[SUP_FDS_MAX], type = 0, target = -1, err;
	bool creds = false;
	struct iovec local;
	union addr addr;
	struct msghdr m;
	socklen_t tl = sizeof(type);
	size_t total = 0, nfds = 0, i;
	int64_t rc;

	if (read_mem(tid, at, sizeof(m), &m) != 0)
		return -EFAULT;
	if (m.msg_name == NULL)
		m.msg_namelen = 0;
	if (m.msg_namelen > sizeof(addr))
		m.msg_namelen = sizeof(addr);
	if (m.msg_iovlen > MSG_IOV_MAX)
		return -EMSGSIZE;
	if (m.msg_controllen > sizeof(control))
		return -ENOBUFS;
	memset(&addr, 0, sizeof(addr));
	if (read_mem(tid, (uint64_t)(uintptr_t)m.msg_name, m.msg_namelen,
	    &addr) != 0 || read_mem(tid, (uint64_t)(uintptr_t)m.msg_iov,
	    m.msg_iovlen * sizeof(*iov), iov) != 0 ||
	    read_mem(tid, (uint64_t)(uintptr_t)m.msg_control, m.msg_controllen,
	    control.buf) != 0)
		return -EFAULT;
	/* At most SUP_SEND_MAX: a stream's send is then short, as its writes
	 * may be; no datagram is cut short. */
	(void)getsockopt(sock, SOL_SOCKET, SO_TYPE, &type, &tl);
	for (i = 0; i < m.msg_iovlen; i++) {
		if ((ssize_t)iov[i].iov_len < 0)
			return -EINVAL;
		if (iov[i].iov_len > SUP_SEND_MAX - total) {
			if (type != SOCK_STREAM)
				return -EMSGSIZE;
			iov[i].iov_len = SUP_SEND_MAX - total;
			m.msg_iovlen = i + 1;
		}
		total += iov[i].iov_len;
	}
	local.iov_base = bytes;
	local.iov_len = total;
	if (total > 0 && syscall(SYS_process_vm_readv, tid, &local, 1UL, iov,
	    (unsigned long)m.msg_iovlen, 0UL) != (long)total)
		return -EFAULT;
	if (!valid(s, id))
		return GONE;
	m.msg_iov = &local;
	m.msg_iovlen = 1;
	m.msg_name = m.msg_namelen > 0 ? &addr : NULL;
	m.msg_control = m.msg_controllen > 0 ? control.buf : NULL;
	m.msg_flags = 0;
	rc = rights_of(pidfd, &m, fds, &nfds, &creds);
	/*
	 * The kernel takes the sender's credentials, ours, as the job's: for
	 * a receiver that asks for them (SO_PASSCRED), and to check a
	 * SCM_CREDENTIALS the job names. Where ours are not the job's (a
	 * root helper's, running a client's job), the job names none, and
	 * sends nothing on a socket it was lent, whose peer is the host's.
	 */
	if (rc == 0 && s->other_ids && (creds || !ours(s, sock)))
		rc = -EPERM;
	/* An address only on a socket of its own network (none lent). */
	if (rc == 0 && m.msg_namelen > 0)
		rc = !ours(s, sock) ? -EPERM :
		    destination(s, tid, sock, &addr, &m.msg_namelen, &target);
	if (rc == 0 && (rc = as_job(s)) == 0) {
		rc = sendmsg(sock, &m, flags | MSG_NOSIGNAL);
		err = errno;
		as_self(s);
		rc = rc >= 0 ? rc : -err;
	}
	for (i = 0; i < nfds; i++)
		close(fds[i]);
	if (target >= 0)
		close(target);
	return rc;
}

/*
 * sendmsg, or sendmmsg's vlen messages, never blocking us: the bytes or
 * the messages sent, or -errno now, or PENDING (sock and pidfd are the
 * wait's then), or GONE. A blocking socket whose first message would
 * block is tried again later, all of it read again; a later one that
 * would block ends the count, as a signal would.
 */
static int64_t
msgs_now(struct sup *s, struct sup_wait *again,
    const struct seccomp_notif *req, int sock, int pidfd, bool many,
    uint64_t at, unsigned vlen, int flags)
{
	uint64_t id = again != NULL ? again->id : req->id;
	pid_t tid = again != NULL ? again->tid : (pid_t)req->pid;
	int fl = (flags & MSG_DONTWAIT) ? -1 : nonblocking(sock);
	uint64_t m;
	unsigned i, len;
	int64_t rc = 0, n;

	if (!many)
		rc = msg_send(s, id, tid, pidfd, sock, at, flags);
	for (i = 0; many && i < (vlen > MSG_IOV_MAX ? MSG_IOV_MAX : vlen); i++) {
		m = at + i * sizeof(struct mmsghdr);
		n = msg_send(s, id, tid, pidfd, sock,
		    m + offsetof(struct mmsghdr, msg_hdr), flags);
		len = (unsigned)n;
		if (n >= 0 && write_mem(tid, m + offsetof(struct mmsghdr,
		    msg_len), &len, sizeof(len)) != 0)
			n = -EFAULT;
		if (n < 0) {
			rc = i > 0 && n != GONE ? (int64_t)i : n;
			break;
		}
		rc = i + 1;
	}
	restore(sock, fl);
	if (fl >= 0 && rc == -EAGAIN && again == NULL) {
		struct sup_wait *w;

		if (s->nwait == SUP_PENDING)
			return -EAGAIN;
		w = wait_add(s, SUP_MSG_AGAIN, req->id, sock, pidfd, NULL, 0);
		w->tid = tid;
		w->buf = at;
		w->size = vlen;
		w->flags = flags;
		w->many = many;
		return PENDING;
	}
	return rc;
}

/*
 * The call, made: 0 or -errno to answer, PENDING, or GONE; a send's count
 * of bytes (or of messages) sent in *val.
 */
static int
call(struct sup *s, const struct seccomp_notif *req, int64_t *val)
{
	const __u64 *a = req->data.args;
	int nr = req->data.nr;
	bool is_send = nr == SYS_sendto, many = nr == SYS_sendmmsg;
	uint64_t where = is_send ? a[4] : a[1];
	socklen_t len = (socklen_t)(is_send ? a[5] : a[2]), olen = sizeof(int);
	size_t off = offsetof(struct sockaddr_un, sun_path);
	char path[sizeof(((struct sockaddr_un *)0)->sun_path) + 1];
	int sock, pidfd, domain = 0, target = -1;
	union addr addr;
	int64_t rc;

	if (nr == SYS_sendmsg || many) {
		if ((pidfd = job_pidfd(s, req)) < 0)
			return pidfd;
		if ((sock = socket_of(pidfd, (int)a[0])) < 0) {
			close(pidfd);
			return sock;
		}
		rc = msgs_now(s, NULL, req, sock, pidfd, many, a[1],
		    (unsigned)a[2], (int)(many ? a[3] : a[2]));
		if (rc == PENDING)
			return PENDING;
		close(sock);
		close(pidfd);
		if (rc < 0)
			return (int)rc;
		*val = rc;
		return 0;
	}
	if (nr != SYS_connect && nr != SYS_bind && nr != SYS_listen && !is_send)
		return -ENOSYS;
	sock = job_socket(s, req, (int)a[0]);
	if (sock < 0)
		return sock;
	if (!ours(s, sock)) {
		close(sock);
		return -EPERM;
	}
	if (nr == SYS_listen) {
		rc = listen(sock, (int)a[1]) == 0 ? 0 : -errno;
		close(sock);
		return (int)rc;
	}
	/* Read once: what is made is what was read, whatever comes after. */
	memset(&addr, 0, sizeof(addr));
	if (len > sizeof(addr)) {
		close(sock);
		return -EINVAL;
	}
	if (read_mem(req->pid, where, len, &addr) != 0) {
		close(sock);
		return valid(s, req->id) ? -EFAULT : GONE;
	}
	if (!valid(s, req->id)) {
		close(sock);
		return GONE;
	}
	(void)getsockopt(sock, SOL_SOCKET, SO_DOMAIN, &domain, &olen);
	if (nr == SYS_bind && domain == AF_UNIX && len > off &&
	    len <= sizeof(struct sockaddr_un) && addr.un.sun_path[0] != '\0') {
		memcpy(path, addr.un.sun_path, len - off);
		path[len - off] = '\0';
		rc = bind_path(s, req->pid, sock, &addr.sa, len, path);
	} else if (nr == SYS_bind) {
		if (domain == AF_UNIX && len > sizeof(struct sockaddr_un))
			rc = -EINVAL;
		else if ((rc = as_job(s)) == 0) {
			rc = bind(sock, &addr.sa, len) == 0 ? 0 : -errno;
			as_self(s);
		}
	} else if ((rc = destination(s, req->pid, sock, &addr, &len,
	    &target)) != 0) {
		/* refused */
	} else if (is_send) {
		rc = send_now(s, NULL, req, sock, target, &addr.sa, len, a[1],
		    (size_t)a[2], (int)a[3]);
	} else {
		rc = connect_now(s, req, sock, target, &addr.sa, len);
	}
	if (rc == PENDING)
		return PENDING;
	close(sock);
	if (target >= 0)
		close(target);
	if (is_send && rc >= 0) {
		*val = rc;
		return 0;
	}
	return (int)rc;
}

static void
notified(struct sup *s)
{
	union {
		struct seccomp_notif n;
		char buf[NOTIF_MAX];
	} u;
	int rc;

	int64_t val = 0;

	/* sup_probe checked that the kernel's fits. */
	memset(&u, 0, sizeof(u));
	if (ioctl(s->listener, SECCOMP_IOCTL_NOTIF_RECV, &u.n) != 0)
		return;  /* ENOENT: the caller was killed meanwhile */
	rc = call(s, &u.n, &val);
	if (rc != PENDING && rc != GONE)
		answer_val(s, u.n.id, rc, val);
}

size_t
sup_poll(const struct sup *s, struct pollfd *pfd, int *timeout)
{
	int64_t soonest = INT64_MAX;
	size_t n = 0, i;
	int ms;

	if (s->listener < 0)
		return 0;
	pfd[n].fd = s->listener;
	pfd[n++].events = POLLIN;
	for (i = 0; i < s->nwait; i++) {
		if (s->wait[i].kind != SUP_HANDSHAKE) {
			if (s->wait[i].at_ns < soonest)
				soonest = s->wait[i].at_ns;
			continue;
		}
		pfd[n].fd = s->wait[i].sock;
		pfd[n++].events = POLLOUT;
	}
	ms = clock_ms_until(soonest);
	if (ms >= 0 && (*timeout < 0 || ms < *timeout))
		*timeout = ms;
	return n;
}

/*
 * A handshake done: its result. A backlog or a send buffer full again:
 * try again later.
 */
static void
finish(struct sup *s, size_t i)
{
	struct sup_wait *w = &s->wait[i];
	socklen_t len = sizeof(int);
	int err = 0;
	int64_t rc;

	if (!valid(s, w->id)) {
		wait_drop(s, i);
		return;
	}
	if (w->kind == SUP_HANDSHAKE) {
		if (getsockopt(w->sock, SOL_SOCKET, SO_ERROR, &err, &len) != 0)
			err = errno;
		answer(s, w->id, -err);
		wait_drop(s, i);
		return;
	}
	if (w->kind == SUP_CONNECT_AGAIN)
		rc = connect_now(s, NULL, w->sock, w->path,
		    (struct sockaddr *)&w->addr, w->len);
	else if (w->kind == SUP_MSG_AGAIN)
		rc = msgs_now(s, w, NULL, w->sock, w->path, w->many, w->buf,
		    (unsigned)w->size, w->flags);
	else
		rc = send_now(s, w, NULL, w->sock, -1,
		    (struct sockaddr *)&w->addr, w->len, w->buf, w->size,
		    w->flags);
	if (rc == -EAGAIN) {
		w->delay_ns = w->delay_ns * 2 > RETRY_MAX_NS ? RETRY_MAX_NS :
		    w->delay_ns * 2;
		w->at_ns = clock_ns() + w->delay_ns;
		return;
	}
	if (rc == GONE)
		;  /* no one to answer */
	else if (w->kind != SUP_CONNECT_AGAIN && rc >= 0)
		answer_val(s, w->id, 0, rc);
	else
		answer(s, w->id, (int)rc);
	wait_drop(s, i);
}

void
sup_run(struct sup *s, const struct pollfd *pfd, size_t n)
{
	int64_t now = clock_ns();
	size_t i, k;

	if (n == 0 || s->listener < 0)
		return;
	/* The waits first: a new one may take a slot that is freed. */
	for (k = 1; k < n; k++) {
		if (pfd[k].revents == 0)
			continue;
		for (i = 0; i < s->nwait; i++)
			if (s->wait[i].kind == SUP_HANDSHAKE &&
			    s->wait[i].sock == pfd[k].fd) {
				finish(s, i);
				break;
			}
	}
	for (i = s->nwait; i-- > 0;)
		if (s->wait[i].kind != SUP_HANDSHAKE && s->wait[i].at_ns <= now)
			finish(s, i);
	if (pfd[0].revents & POLLIN)
		notified(s);
	else if (pfd[0].revents & (POLLHUP | POLLERR | POLLNVAL)) {
		/* No process of the job is left to call: nothing more comes. */
		close(s->listener);
		s->listener = -1;
	}
}

void
sup_fini(struct sup *s)
{
	while (s->nwait > 0)
		wait_drop(s, 0);
	if (s->listener >= 0)
		close(s->listener);
	s->listener = -1;
}
