/*
 * A job's socket calls that reach an address, made by its init (Linux,
 * namespaces of its own, ns.h). The job has a network namespace
 * of its own, so its IPv4, IPv6, netlink and abstract unix sockets reach
 * only its own; two things would still reach the host's: a pathname unix
 * socket (the file system is the host's, read-only) and a socket the host
 * lent it (created in the host's namespace). seccomp cannot read a
 * connect's address, nor tell whose a descriptor is, so connect, bind,
 * listen, sendto with an address, and every sendmsg and sendmmsg (whose
 * address is in memory) go to the init (SECCOMP_RET_USER_NOTIF). It
 * takes the job's own socket (pidfd_getfd), reads the address once (a
 * sendmsg's bytes, control data and descriptors with it), and makes the
 * call itself with that copy, as the job's user without capabilities:
 *
 *  - a socket of another network namespace than the job's (lent): EPERM,
 *    but for a sendmsg without an address (to its peer);
 *  - connect or send to a pathname: the path is opened (as the job's user, from
 *    the calling thread's cwd) and must be a socket on a mount the job may
 *    write (its scratch root, its tmp, its /dev/shm), else EACCES; the
 *    call names that very inode (/proc/self/fd/N), so that nothing the job
 *    renames or links in its place afterwards is reached;
 *  - bind to a pathname: made from the thread's cwd with its umask; the
 *    view's read-only mounts refuse it anywhere but the job's own trees,
 *    as they would refuse the job;
 *  - anything else (abstract names, IPv4, IPv6, netlink): in the job's
 *    own namespace, as given.
 *
 * Never a CONTINUE: what the kernel would run then is what the job's
 * memory and descriptor table hold by then, not what was checked. A
 * call that would block (a blocking socket: a listener's backlog full, a
 * TCP handshake, a full send buffer) does not block the init: it is made
 * non-blocking and answered when it completes, while the job's thread
 * waits. A send never raises SIGPIPE (the init's, not the job's, would).
 */
#ifndef CONFINE_SUPERVISE_H
#define CONFINE_SUPERVISE_H

#include <poll.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

#define SUP_PENDING 64      /* calls waiting at once; more: EAGAIN */
#define SUP_SEND_MAX (256 * 1024)  /* a send's bytes, read at once */
#define SUP_CONTROL_MAX 8192       /* a sendmsg's control, at most */
#define SUP_FDS_MAX 253            /* and its descriptors (SCM_MAX_FD) */

/* Whose the calls are: the job's user, made as it. */
struct sup_creds {
	uid_t uid;
	gid_t gid;
	const gid_t *groups;  /* set as the job's, unless set_groups is false */
	size_t ngroups;
	bool set_groups;      /* false in a user namespace (setgroups denied) */
};

enum sup_wait_kind {
	SUP_HANDSHAKE,        /* a TCP connect: answered when writable */
	SUP_CONNECT_AGAIN,    /* a unix listener's backlog was full */
	SUP_SEND_AGAIN,       /* a datagram's send buffer was full */
	SUP_MSG_AGAIN,        /* so was a sendmsg's, or a sendmmsg's */
};

struct sup_wait {
	enum sup_wait_kind kind;
	uint64_t id;          /* the notification */
	int sock;             /* the job's socket, ours too */
	int path;             /* the socket it connects or sends to (O_PATH),
	                         a sendmsg's caller (a pidfd), or -1 */
	struct sockaddr_storage addr;  /* where to: the address read, or
	                                  /proc/self/fd/<path> */
	socklen_t len;
	pid_t tid;            /* a send's: its thread, its buffer there (read */
	uint64_t buf;         /* again each time: only the address and the */
	size_t size;          /* socket are checked, and those are ours) */
	int flags;
	bool many;            /* _MSG_AGAIN: sendmmsg, size messages at buf */
	int64_t at_ns;        /* _AGAIN: when to try again */
	int64_t delay_ns;
};

struct sup {
	int listener;         /* -1: none */
	uint64_t netns;       /* the job's network namespace (its inode) */
	uid_t self_uid;       /* ours, to go back to */
	gid_t self_gid;
	struct sup_creds job;
	bool other_ids;       /* the job's uid or gid is not our real one */
	struct sup_wait wait[SUP_PENDING];
	size_t nwait;
	uint64_t calls;       /* answered, for the tests' accounting */
};

/*
 * Whether this kernel supervises: a listener whose callers wait killably
 * (Linux 5.19), pidfd_getfd (5.6), and notifications no larger than ours.
 * 0 or -errno. Forks once.
 */
int sup_probe(void);

/* In the init, once the job's listener is ours: 0 or -errno. */
int sup_init(struct sup *s, int listener, const struct sup_creds *job);

/*
 * The descriptors to poll (at most 1 + SUP_PENDING, from pfd on), and the
 * longest wait (ms) before sup_run must look again, in *timeout (left as
 * it is when there is none sooner).
 */
size_t sup_poll(const struct sup *s, struct pollfd *pfd, int *timeout);

/* After poll: the n descriptors sup_poll gave, answered what is ready. */
void sup_run(struct sup *s, const struct pollfd *pfd, size_t n);

void sup_fini(struct sup *s);

#endif
