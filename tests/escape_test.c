/*
 * The escape suite, for real under the Linux backend: every attempt is
 * made twice, with backend none (it succeeds, or reaches the kernel) and
 * confined (it is denied with one specific errno), so that each denial is
 * attributable. Outside the scratch root the job's view is read-only
 * (EROFS), Landlock refuses what a read-only mount does not (EACCES), and
 * seccomp what neither mediates (EPERM). The writes out through a
 * symlink, a rename or a hard link are the contract's (tests/contract.c,
 * run by job_test), what reaches past the job by other ways is
 * reach_test's, and the attempts on the real helper are
 * helper_escape_test's. The last group asserts what is not covered today
 * (docs/linux-contract.md, nonclaims): a change is noticed either way.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "tests/jobrun.h"
#include "tests/probes.h"
#include "tests/testutil.h"

#define LL CONFINE_BACKEND_LANDLOCK
#define NONE CONFINE_BACKEND_NONE
#define SIG(n) JR_SIG(n)

static int
probe_in(enum confine_backend b, const char *scratch, int stdin_fd,
    const char *const *args)
{
	return jr_probe(b, scratch, stdin_fd, NULL, args);
}

#define PROBE JR_PROBE
#define PAIR JR_PAIR

/* ---- the filesystem (the indirect ways out are the contract's) ---- */

static void
truncate_outside_both_ways(void **state)
{
	struct jr_dirs *d = *state;
	char *out = tu_join(d->outside, "f");

	jr_put(out, "orig");
	assert_int_equal(PROBE(NONE, d->scratch, "open-trunc", out), 0);
	jr_put(out, "orig");
	assert_int_equal(PROBE(LL, d->scratch, "open-trunc", out), EROFS);
	jr_assert_text(out, "orig");
	assert_int_equal(PROBE(NONE, d->scratch, "truncate", out), 0);
	jr_put(out, "orig");
	assert_int_equal(PROBE(LL, d->scratch, "truncate", out), EROFS);
	jr_assert_text(out, "orig");
	free(out);
}

static void
create_and_remove_outside(void **state)
{
	struct jr_dirs *d = *state;
	static const char *const nodes[] = { "reg", "fifo", "sock", "chr", "blk" };
	char *dir = tu_join(d->outside, "dir"), *node = tu_join(d->outside, "node");
	char *sym = tu_join(d->outside, "sym"), *victim = tu_join(d->outside, "v");
	size_t i;

	assert_int_equal(PROBE(NONE, d->scratch, "mkdir", dir), 0);
	assert_int_equal(rmdir(dir), 0);
	assert_int_equal(PROBE(LL, d->scratch, "mkdir", dir), EROFS);
	assert_false(tu_exists(dir));
	/*
	 * Device nodes too: unsandboxed root may make them (CAP_MKNOD), and
	 * a job may make none anywhere (seccomp, before the mount's EROFS).
	 */
	assert_int_equal(geteuid(), 0);
	for (i = 0; i < sizeof(nodes) / sizeof(nodes[0]); i++) {
		assert_int_equal(PROBE(NONE, d->scratch, "mknod", nodes[i], node), 0);
		assert_int_equal(unlink(node), 0);
		assert_int_equal(PROBE(LL, d->scratch, "mknod", nodes[i], node),
		    i < 3 ? EROFS : EPERM);
		assert_false(tu_exists(node));
	}
	assert_int_equal(PROBE(NONE, d->scratch, "symlink", "/etc/passwd", sym), 0);
	assert_int_equal(unlink(sym), 0);
	assert_int_equal(PROBE(LL, d->scratch, "symlink", "/etc/passwd", sym), EROFS);
	assert_false(tu_exists(sym));
	jr_put(victim, "x");
	assert_int_equal(PROBE(NONE, d->scratch, "unlink", victim), 0);
	jr_put(victim, "x");
	assert_int_equal(PROBE(LL, d->scratch, "unlink", victim), EROFS);
	assert_true(tu_exists(victim));
	free(dir);
	free(node);
	free(sym);
	free(victim);
}

/* The same operations inside the root: all allowed, confined too. */
static void
everything_is_allowed_inside(void **state)
{
	struct jr_dirs *d = *state;
	char *a = tu_join(d->scratch, "a"), *b = tu_join(d->scratch, "b");
	char *sub = tu_join(d->scratch, "sub"), *fifo = tu_join(d->scratch, "p");
	char *moved = tu_join(sub, "a"), *reg = tu_join(d->scratch, "r");

	jr_put(a, "x");
	assert_int_equal(PROBE(LL, d->scratch, "link", a, b), 0);
	assert_int_equal(PROBE(LL, d->scratch, "truncate", b), 0);
	assert_int_equal(PROBE(LL, d->scratch, "mkdir", sub), 0);
	assert_int_equal(PROBE(LL, d->scratch, "rename", a, moved), 0);
	assert_int_equal(PROBE(LL, d->scratch, "mknod", "fifo", fifo), 0);
	assert_int_equal(PROBE(LL, d->scratch, "mknod", "reg", reg), 0);
	assert_int_equal(PROBE(LL, d->scratch, "unlink", b), 0);
	assert_int_equal(PROBE(LL, d->scratch, "socketpair"), 0);
	free(a);
	free(b);
	free(sub);
	free(fifo);
	free(moved);
	free(reg);
}

/* ---- the network ---- */

static int
closed_port6(int *fd)
{
	struct sockaddr_in6 sin6;
	socklen_t sl = sizeof(sin6);

	*fd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(*fd >= 0);
	memset(&sin6, 0, sizeof(sin6));
	sin6.sin6_family = AF_INET6;
	sin6.sin6_addr = in6addr_loopback;
	assert_int_equal(bind(*fd, (struct sockaddr *)&sin6, sizeof(sin6)), 0);
	assert_int_equal(getsockname(*fd, (struct sockaddr *)&sin6, &sl), 0);
	return ntohs(sin6.sin6_port);
}

/* Closed loopback ports, IPv4 and IPv6: bound, never listening. */
struct ports {
	char p4[16], p6[16];
	int fd4, fd6;
};

static void
ports_open(struct ports *p)
{
	snprintf(p->p4, sizeof(p->p4), "%d", tu_closed_port(&p->fd4));
	snprintf(p->p6, sizeof(p->p6), "%d", closed_port6(&p->fd6));
}

static void
ports_close(struct ports *p)
{
	close(p->fd4);
	close(p->fd6);
}

/* The same ports, listening, and a UDP socket bound on each family. */
struct hosts {
	struct ports tcp;
	char u4[16], u6[16];
	int ufd4, ufd6;
};

static int
udp_port(int family, int *fd)
{
	struct sockaddr_storage ss;
	struct sockaddr_in *in = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;
	socklen_t sl = family == AF_INET ? sizeof(*in) : sizeof(*in6);

	*fd = socket(family, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	assert_true(*fd >= 0);
	memset(&ss, 0, sizeof(ss));
	ss.ss_family = (sa_family_t)family;
	if (family == AF_INET)
		in->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	else
		in6->sin6_addr = in6addr_loopback;
	assert_int_equal(bind(*fd, (struct sockaddr *)&ss, sl), 0);
	assert_int_equal(getsockname(*fd, (struct sockaddr *)&ss, &sl), 0);
	return ntohs(family == AF_INET ? in->sin_port : in6->sin6_port);
}

static void
hosts_open(struct hosts *h)
{
	ports_open(&h->tcp);
	assert_int_equal(listen(h->tcp.fd4, 8), 0);
	assert_int_equal(listen(h->tcp.fd6, 8), 0);
	snprintf(h->u4, sizeof(h->u4), "%d", udp_port(AF_INET, &h->ufd4));
	snprintf(h->u6, sizeof(h->u6), "%d", udp_port(AF_INET6, &h->ufd6));
}

static void
hosts_close(struct hosts *h)
{
	ports_close(&h->tcp);
	close(h->ufd4);
	close(h->ufd6);
}

/* What arrived at a host's socket: connections accepted, datagrams read. */
static int
arrived(int fd, bool stream)
{
	char c;
	int n = 0, a;

	if (!stream) {
		while (recv(fd, &c, 1, MSG_DONTWAIT) == 1)
			n++;
		return n;
	}
	while ((a = tu_accept_now(fd)) >= 0) {
		close(a);
		n++;
	}
	return n;
}

/*
 * The host's TCP listeners and UDP sockets on the loopback: unconfined,
 * the job reaches each (and the host sees it); confined, its own sockets
 * are refused (EPERM) or, in a network namespace of its own, reach its
 * own loopback, where nothing listens (ECONNREFUSED, a datagram lost):
 * the host sees nothing either way. Its own bind and listen: refused, or
 * in its own namespace allowed.
 */
static void
tcp_and_udp_over_ipv4_and_ipv6(void **state)
{
	struct jr_dirs *d = *state;
	int own = JR_NET ? 0 : EPERM;
	struct hosts h;

	hosts_open(&h);
	PAIR(d, 0, JR_NET_ERRNO, "connect", h.tcp.p4);
	PAIR(d, 0, JR_NET_ERRNO, "net", "inet6", "stream", "connect", h.tcp.p6);
	assert_int_equal(arrived(h.tcp.fd4, true), 1);
	assert_int_equal(arrived(h.tcp.fd6, true), 1);
	PAIR(d, 0, own, "net", "inet", "dgram", "send", h.u4);
	PAIR(d, 0, own, "net", "inet6", "dgram", "send", h.u6);
	assert_int_equal(arrived(h.ufd4, false), 1);
	assert_int_equal(arrived(h.ufd6, false), 1);
	PAIR(d, 0, own, "net", "inet", "stream", "bind", "0");
	PAIR(d, 0, own, "net", "inet6", "stream", "bind", "0");
	PAIR(d, 0, own, "net", "inet", "stream", "listen");
	PAIR(d, 0, own, "net", "inet6", "stream", "listen");
	hosts_close(&h);
}

/*
 * `fixture fd0 op addr` with a fresh socket made here as its stdin: no
 * socket() for seccomp to refuse, so what answers is Landlock's own rule.
 */
static int
probe_fd0(enum confine_backend b, const char *scratch, int family,
    const char *op, const char *addr)
{
	int fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0), rc;

	assert_true(fd >= 0);
	rc = probe_in(b, scratch, fd, (const char *const[]){ "fd0", op, addr,
	    NULL });
	close(fd);
	return rc;
}

#define PAIR_FD0(d, unconfined, confined, family, op, addr) do {           \
		assert_int_equal(probe_fd0(NONE, (d)->scratch, (family), (op),  \
		    (addr)), (unconfined));                                    \
		assert_int_equal(probe_fd0(LL, (d)->scratch, (family), (op),    \
		    (addr)), (confined));                                      \
	} while (0)

/*
 * connect() and bind() are seccomp's to refuse first, whatever the socket
 * (Landlock's own TCP rules beneath, EACCES, are layers_test's); in a
 * network namespace of its own, its init's, for a socket of the host's.
 */
static void
tcp_on_an_inherited_socket(void **state)
{
	struct jr_dirs *d = *state;
	struct ports p;

	ports_open(&p);
	PAIR_FD0(d, ECONNREFUSED, EPERM, AF_INET, "connect", p.p4);
	PAIR_FD0(d, ECONNREFUSED, EPERM, AF_INET6, "connect", p.p6);
	PAIR_FD0(d, 0, EPERM, AF_INET, "bind", "0");
	PAIR_FD0(d, 0, EPERM, AF_INET6, "bind", "0");
	ports_close(&p);
}

/*
 * Raw and packet sockets: refused (raw ones by the kernel too, in a
 * namespace of its own: no CAP_NET_RAW). Routing netlink is its own
 * namespace's, where it has one.
 */
static void
raw_packet_and_netlink_sockets(void **state)
{
	struct jr_dirs *d = *state;

	PAIR(d, 0, EPERM, "socket", "inet", "raw");
	PAIR(d, 0, EPERM, "socket", "inet6", "raw");
	PAIR(d, 0, EPERM, "socket", "packet", "raw");
	PAIR(d, 0, JR_NET ? 0 : EPERM, "socket", "netlink", "dgram");
}

/* enter and register on a closed descriptor: the kernel says EBADF. */
static void
io_uring_is_refused(void **state)
{
	struct jr_dirs *d = *state;

	PAIR(d, 0, EPERM, "io-uring", "setup");
	PAIR(d, EBADF, EPERM, "io-uring", "enter");
	PAIR(d, EBADF, EPERM, "io-uring", "register");
}

static int
listen_unix(const char *path, bool abstract)
{
	struct sockaddr_un sun;
	socklen_t len = sizeof(sun);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	strcpy(sun.sun_path, path);
	if (abstract) {
		sun.sun_path[0] = '\0';
		len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) +
		    strlen(path));
	}
	assert_int_equal(bind(fd, (struct sockaddr *)&sun, len), 0);
	assert_int_equal(listen(fd, 8), 0);
	return fd;
}

/*
 * The host's pathname and abstract listeners: in /var/tmp, which the job
 * sees (its /tmp is its own), writable by anyone. Unconfined, the job
 * connects (and the host accepts); confined, a socket of its own is
 * refused (EPERM), or in a network namespace of its own its init finds
 * the pathname one outside the job's trees (EACCES) and the abstract one
 * is not in its namespace (ECONNREFUSED); a socket it is given, EPERM.
 */
static void
pathname_and_abstract_unix_sockets(void **state)
{
	struct jr_dirs *d = *state;
	char *dir = tu_sockdir_in("/var/tmp"), *path = tu_join(dir, "s");
	char name[64];
	int a, b;

	assert_int_equal(chmod(dir, 0777), 0);
	snprintf(name, sizeof(name), "@confine-escape-%ld", (long)getpid());
	a = listen_unix(path, false);
	assert_int_equal(chmod(path, 0777), 0);
	b = listen_unix(name, true);
	PAIR(d, 0, JR_NET ? EACCES : EPERM, "net", "unix", "stream", "connect",
	    path);
	PAIR(d, 0, JR_NET ? ECONNREFUSED : EPERM, "net", "unix", "stream",
	    "connect", name);
	assert_int_equal(arrived(a, true), 1);
	assert_int_equal(arrived(b, true), 1);
	/* With a socket it is given: no connect() at all. */
	PAIR_FD0(d, 0, EPERM, AF_UNIX, "connect", path);
	PAIR_FD0(d, 0, EPERM, AF_UNIX, "connect", name);
	assert_int_equal(arrived(a, true), 1);
	assert_int_equal(arrived(b, true), 1);
	close(a);
	close(b);
	tu_rmsock(dir, path);
}

/* Another architecture's syscall: the filter kills the process. */
static void
a_32_bit_syscall_is_killed(void **state)
{
#if defined(__x86_64__)
	struct jr_dirs *d = *state;
	int unconfined = PROBE(CONFINE_BACKEND_NONE, d->scratch, "socket32");

	if (unconfined == FIXTURE_NO_IA32) {
		/*
		 * A kernel without the IA-32 entry (ia32_emulation off, or not
		 * built) faults int 0x80 before any filter sees it: no 32-bit
		 * call reaches it, confined or not, and that is what is held.
		 * The filter's own rule for a foreign architecture (kill) is
		 * then proven only as seccomp_test proves every rule: the
		 * program equal to what libseccomp compiles.
		 */
		print_message("no IA-32 system call entry on this kernel: int "
		    "0x80 faults unconfined too; the SIGSYS half needs one\n");
		assert_int_equal(PROBE(CONFINE_BACKEND_LANDLOCK, d->scratch,
		    "socket32"), FIXTURE_NO_IA32);
		return;
	}
	assert_int_equal(unconfined, 0);
	assert_int_equal(PROBE(CONFINE_BACKEND_LANDLOCK, d->scratch,
	    "socket32"), SIG(SIGSYS));
#else
	fail_msg("the int 0x80 probe is written for x86-64 only");
#endif
}

/* ---- the helper's side and the host ---- */

static void
signals_to_the_jobs_parent_and_the_host(void **state)
{
	struct jr_dirs *d = *state;
	char host[24];

	snprintf(host, sizeof(host), "%ld", (long)getpid());
	PAIR(d, 0, JR_OUTSIDE(EPERM), "kill", host, "0");
	/*
	 * Its parent, the shepherd, its init or (direct) the host, is
	 * outside its domain.
	 */
	PAIR(d, 0, EPERM, "kill", "parent", "0");
}

static void
ptrace_and_proc_mem_of_the_host(void **state)
{
	struct jr_dirs *d = *state;
	char host[24];

	snprintf(host, sizeof(host), "%ld", (long)getpid());
	PAIR(d, 0, JR_OUTSIDE(EPERM), "ptrace", host);
	PAIR(d, 0, JR_OUTSIDE_PROC(EACCES), "proc-open", host, "mem");
}

static void
descriptors_of_the_host(void **state)
{
	struct jr_dirs *d = *state;
	char host[24], fdname[32];
	int fd = open("/etc/hostname", O_RDONLY | O_CLOEXEC);

	assert_true(fd >= 0);
	snprintf(host, sizeof(host), "%ld", (long)getpid());
	snprintf(fdname, sizeof(fdname), "fd/%d", fd);
	PAIR(d, 0, JR_OUTSIDE_PROC(EACCES), "proc-open", host, fdname);
	close(fd);
}

static void
terminal_input_injection(void **state)
{
	struct jr_dirs *d = *state;
	const char *const args[] = { "tiocsti", NULL };
	int master, slave;

	master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
	assert_true(master >= 0);
	assert_int_equal(grantpt(master), 0);
	assert_int_equal(unlockpt(master), 0);
	slave = open(ptsname(master), O_RDWR | O_NOCTTY | O_CLOEXEC);
	assert_true(slave >= 0);
	assert_int_equal(probe_in(NONE, d->scratch, slave, args), 0);
	assert_int_equal(probe_in(LL, d->scratch, slave, args), EPERM);
	close(slave);
	close(master);
}

/*
 * A socket the job is given serves what it was made for, and no more:
 * it cannot be made to listen (Landlock has no listen right; seccomp
 * refuses listen()), nor to connect anywhere.
 */
static void
an_inherited_socket_neither_listens_nor_connects(void **state)
{
	struct jr_dirs *d = *state;

	PAIR_FD0(d, 0, EPERM, AF_INET, "listen", NULL);
	PAIR_FD0(d, 0, EPERM, AF_INET6, "listen", NULL);
}

/* ---- not covered today: asserted, and listed as nonclaims ---- */

static void
a_file_linked_in_before_the_job_is_writable(void **state)
{
	struct jr_dirs *d = *state;
	char *out = tu_join(d->outside, "f"), *in = tu_join(d->scratch, "f");

	jr_put(out, "orig");
	assert_int_equal(link(out, in), 0);
	assert_int_equal(PROBE(LL, d->scratch, "write", in), 0);
	/* The same inode: the outside name sees the job's write. */
	jr_assert_text(out, "confined\n");
	free(out);
	free(in);
}

#define T(name) cmocka_unit_test_setup_teardown(name, jr_dirs_setup, jr_dirs_teardown)

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(jr_on_its_path),
		T(truncate_outside_both_ways),
		T(create_and_remove_outside),
		T(everything_is_allowed_inside),
		T(tcp_and_udp_over_ipv4_and_ipv6),
		T(tcp_on_an_inherited_socket),
		T(raw_packet_and_netlink_sockets),
		T(io_uring_is_refused),
		T(pathname_and_abstract_unix_sockets),
		T(a_32_bit_syscall_is_killed),
		T(signals_to_the_jobs_parent_and_the_host),
		T(ptrace_and_proc_mem_of_the_host),
		T(descriptors_of_the_host),
		T(terminal_input_injection),
		T(a_file_linked_in_before_the_job_is_writable),
		T(an_inherited_socket_neither_listens_nor_connects),
	};

	tu_path_setup();
	jr_setup();
	return cmocka_run_group_tests_name("escape", tests, NULL, NULL);
}
