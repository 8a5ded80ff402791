/*
 * The one job program of the integration tests: `fixture COMMAND ARGS...`.
 * A probe exits 0 when the operation succeeded and with the errno it got
 * otherwise, so a test reads EACCES or ECONNREFUSED from the exit code.
 * What it learns about its own process it prints on stdout.
 */
#include <arpa/inet.h>
#include <stddef.h>
#include <sys/ioctl.h>
#include <sys/un.h>
#ifdef __linux__
#include <linux/netlink.h>
#include <netpacket/packet.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/shm.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>

#include "tests/probes.h"
#endif
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#ifndef SOCK_CLOEXEC
#define SOCK_CLOEXEC 0
#endif
#ifdef __APPLE__
#define FD_DIR "/dev/fd"
#else
#define FD_DIR "/proc/self/fd"
#endif

extern char **environ;

static int
errno_exit(const char *what)
{
	int err = errno;

	fprintf(stderr, "fixture: %s: %s\n", what, strerror(err));
	return err > 0 && err < 126 ? err : 125;
}

static void
sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

static int
cmd_exit(int argc, char **argv)
{
	return argc > 2 ? atoi(argv[2]) : 0;
}

static int
cmd_signal(int argc, char **argv)
{
	raise(argc > 2 ? atoi(argv[2]) : SIGTERM);
	return 125;
}

static int
cmd_sleep(int argc, char **argv)
{
	sleep_ms(argc > 2 ? atol(argv[2]) : 1000);
	return 0;
}

/* Prints its pid first, so a test can check that it is gone afterwards. */
static int
cmd_pid_sleep(int argc, char **argv)
{
	printf("%ld\n", (long)getpid());
	fflush(stdout);
	return cmd_sleep(argc, argv);
}

/* Ignores SIGTERM, so only SIGKILL ends it. */
static int
cmd_ignore_term(int argc, char **argv)
{
	signal(SIGTERM, SIG_IGN);
	return cmd_pid_sleep(argc, argv);
}

static int
cmd_write(int argc, char **argv)
{
	int fd;

	if (argc < 3)
		return 125;
	fd = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return errno_exit(argv[2]);
	if (write(fd, "confined\n", 9) != 9)
		return errno_exit("write");
	close(fd);
	return 0;
}

/* 0 for success, else the errno (as errno_exit), for a probe's exit. */
static int
result(int rc, const char *what)
{
	return rc < 0 ? errno_exit(what) : 0;
}

/*
 * An address in a family: a loopback port for inet and inet6, a path or
 * @NAME (the abstract namespace) for unix. 0 when it does not fit.
 */
static socklen_t
addr_of(int family, const char *arg, struct sockaddr_storage *ss)
{
	struct sockaddr_in *sin = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;
	struct sockaddr_un *sun = (struct sockaddr_un *)ss;

	memset(ss, 0, sizeof(*ss));
	switch (family) {
	case AF_INET:
		sin->sin_family = AF_INET;
		sin->sin_port = htons((uint16_t)atoi(arg));
		sin->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		return sizeof(*sin);
	case AF_INET6:
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons((uint16_t)atoi(arg));
		sin6->sin6_addr = in6addr_loopback;
		return sizeof(*sin6);
	case AF_UNIX:
		if (strlen(arg) >= sizeof(sun->sun_path))
			return 0;
		sun->sun_family = AF_UNIX;
		strcpy(sun->sun_path, arg);
		if (arg[0] != '@')
			return sizeof(*sun);
		sun->sun_path[0] = '\0';
		return (socklen_t)(offsetof(struct sockaddr_un, sun_path) +
		    strlen(arg));
	default:
		return 0;
	}
}

/*
 * connect, bind, listen, send or sendmsg (one datagram) on fd, to ADDR;
 * sendmsg-peer: one datagram by sendmsg without an address.
 */
static int
sock_op(int fd, int family, const char *op, const char *arg)
{
	struct sockaddr_storage ss;
	socklen_t len = addr_of(family, arg ? arg : "0", &ss);

	if (len == 0)
		return 125;
	if (strcmp(op, "connect") == 0)
		return result(connect(fd, (struct sockaddr *)&ss, len), "connect");
	if (strcmp(op, "bind") == 0)
		return result(bind(fd, (struct sockaddr *)&ss, len), "bind");
	if (strcmp(op, "listen") == 0)
		return result(listen(fd, 1), "listen");
	if (strcmp(op, "send") == 0)
		return result((int)sendto(fd, "x", 1, 0, (struct sockaddr *)&ss,
		    len), "sendto");
	if (strcmp(op, "sendmsg") == 0 || strcmp(op, "sendmsg-peer") == 0) {
		char x = 'x';
		struct iovec iov = { &x, 1 };
		struct msghdr m = { .msg_name = &ss, .msg_namelen = len,
			.msg_iov = &iov, .msg_iovlen = 1 };

		/* -peer: no address, to the peer it is connected to. */
		if (op[7] != '\0') {
			m.msg_name = NULL;
			m.msg_namelen = 0;
		}
		return result((int)sendmsg(fd, &m, 0), "sendmsg");
	}
	return 125;
}

/* connect PORT: TCP over IPv4 to a loopback port. */
static int
cmd_connect(int argc, char **argv)
{
	int fd;

	if (argc < 3)
		return 125;
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return errno_exit("socket");
	return sock_op(fd, AF_INET, "connect", argv[2]);
}

/* Leaves a child behind in the group and exits 0 at once. */
static int
cmd_detach(int argc, char **argv)
{
	pid_t pid = fork();

	if (pid < 0)
		return errno_exit("fork");
	if (pid == 0) {
		sleep_ms(argc > 2 ? atol(argv[2]) : 30000);
		_exit(0);
	}
	printf("%ld\n", (long)pid);
	fflush(stdout);
	return 0;
}

static int
cmd_env(int argc, char **argv)
{
	int n = 0;

	(void)argc;
	(void)argv;
	for (; environ[n] != NULL; n++)
		printf("%s\n", environ[n]);
	return n > 100 ? 100 : n;
}

/* Exits with the number of open descriptors above 2, listing them. */
static int
cmd_fds(int argc, char **argv)
{
	DIR *d = opendir(FD_DIR);
	struct dirent *e;
	int n = 0, fd, self;

	(void)argc;
	(void)argv;
	if (d == NULL)
		return errno_exit(FD_DIR);
	self = dirfd(d);
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		fd = atoi(e->d_name);
		if (fd > 2 && fd != self) {
			printf("%d\n", fd);
			n++;
		}
	}
	closedir(d);
	return n;
}

/*
 * 0 when no signal is ignored and none is blocked. Those are what execve
 * passes on; caught signals are reset by it (and a sanitizer runtime in
 * this program installs handlers of its own).
 */
static int
cmd_sigstate(int argc, char **argv)
{
	struct sigaction sa;
	sigset_t mask;
	int sig, bad = 0;

	(void)argc;
	(void)argv;
	sigprocmask(SIG_SETMASK, NULL, &mask);
	for (sig = 1; sig < NSIG; sig++) {
		if (sigismember(&mask, sig) == 1) {
			printf("blocked %d\n", sig);
			bad = 1;
		}
		if (sigaction(sig, NULL, &sa) == 0 && sa.sa_handler == SIG_IGN) {
			printf("ignored %d\n", sig);
			bad = 1;
		}
	}
	return bad;
}

/*
 * Prints pid, pgid, sid and its parent's pid. With "wait", exits only
 * once stdin is at EOF: a test does something meanwhile.
 */
static int
cmd_ids(int argc, char **argv)
{
	char buf[64];

	printf("%ld %ld %ld %ld\n", (long)getpid(), (long)getpgrp(),
	    (long)getsid(0), (long)getppid());
	fflush(stdout);
	if (argc > 2 && strcmp(argv[2], "wait") == 0)
		while (read(0, buf, sizeof(buf)) > 0)
			;
	return 0;
}

static int
cmd_cwd(int argc, char **argv)
{
	char buf[4096];

	(void)argc;
	(void)argv;
	if (getcwd(buf, sizeof(buf)) == NULL)
		return errno_exit("getcwd");
	printf("%s\n", buf);
	return 0;
}

/* read PATH: opens it and reads a byte. */
static int
cmd_read(int argc, char **argv)
{
	char c;
	int fd;

	if (argc < 3)
		return 125;
	if ((fd = open(argv[2], O_RDONLY | O_CLOEXEC)) < 0)
		return errno_exit(argv[2]);
	if (read(fd, &c, 1) < 0)
		return errno_exit("read");
	close(fd);
	return 0;
}

/* Lists a directory: 0, or the errno of opening it. */
static int
cmd_list(int argc, char **argv)
{
	DIR *d;

	if (argc < 3)
		return 125;
	if ((d = opendir(argv[2])) == NULL)
		return errno_exit(argv[2]);
	while (readdir(d) != NULL)
		;
	closedir(d);
	return 0;
}

/* Maps a file's first page: 0, or the errno of opening or mapping it. */
static int
cmd_map(int argc, char **argv)
{
	void *p;
	int fd;

	if (argc < 3)
		return 125;
	if ((fd = open(argv[2], O_RDONLY | O_CLOEXEC)) < 0)
		return errno_exit(argv[2]);
	p = mmap(NULL, 1, PROT_READ, MAP_PRIVATE, fd, 0);
	if (p == MAP_FAILED)
		return errno_exit("mmap");
	close(fd);
	(void)((volatile char *)p)[0];
	munmap(p, 1);
	return 0;
}

/* stat(2): 0, or its errno. */
static int
cmd_stat(int argc, char **argv)
{
	struct stat st;

	if (argc < 3)
		return 125;
	return stat(argv[2], &st) == 0 ? 0 : errno_exit(argv[2]);
}

/* Runs PROGRAM ARGS...: its exit code, or the errno of execv. */
static int
cmd_run(int argc, char **argv)
{
	int status;
	pid_t pid;

	if (argc < 3)
		return 125;
	if ((pid = fork()) < 0)
		return errno_exit("fork");
	if (pid == 0) {
		execv(argv[2], argv + 2);
		_exit(errno_exit(argv[2]));
	}
	if (waitpid(pid, &status, 0) != pid)
		return errno_exit("waitpid");
	return WIFEXITED(status) ? WEXITSTATUS(status) : 125;
}

/* Copies stdin to stdout and "err" to stderr. */
static int
cmd_cat(int argc, char **argv)
{
	char buf[512];
	ssize_t n;

	(void)argc;
	(void)argv;
	while ((n = read(0, buf, sizeof(buf))) > 0)
		if (write(1, buf, (size_t)n) != n)
			return errno_exit("write");
	if (write(2, "err\n", 4) != 4)
		return errno_exit("write");
	return n < 0 ? errno_exit("read") : 0;
}

/*
 * A child that leaves the job's process group (setsid, or setpgid with
 * "pgid") and sleeps; once it has left, prints "pid pgid sid" of it. With
 * "then-sleep" the job itself goes on sleeping too.
 */
static int
escape(int argc, char **argv, int how, int double_fork)
{
	long ms = argc > 2 ? atol(argv[2]) : 30000;
	int ready[2];
	pid_t pid;
	char c;

	if (pipe(ready) != 0)
		return errno_exit("pipe");
	pid = fork();
	if (pid < 0)
		return errno_exit("fork");
	if (pid == 0) {
		if ((how == 's' ? setsid() : setpgid(0, 0)) < 0)
			_exit(errno_exit("escape"));
		if (double_fork) {
			/* The daemon's way: the intermediate exits at once. */
			pid = fork();
			if (pid != 0)
				_exit(pid < 0 ? 1 : 0);
		}
		printf("%ld %ld %ld\n", (long)getpid(), (long)getpgrp(),
		    (long)getsid(0));
		fflush(stdout);
		if (write(ready[1], "", 1) != 1)
			_exit(1);
		sleep_ms(ms);
		_exit(0);
	}
	close(ready[1]);
	if (read(ready[0], &c, 1) != 1)
		return 125;
	if (double_fork)
		waitpid(pid, NULL, 0);
	if (argc > 3 && strcmp(argv[3], "then-sleep") == 0)
		sleep_ms(ms);
	return 0;
}

static int
cmd_setsid(int argc, char **argv)
{
	return escape(argc, argv, 's', 0);
}

static int
cmd_setpgid(int argc, char **argv)
{
	return escape(argc, argv, 'p', 0);
}

static int
cmd_daemon(int argc, char **argv)
{
	return escape(argc, argv, 's', 1);
}

/* Burns CPU until something stops it. */
static int
cmd_spin(int argc, char **argv)
{
	volatile unsigned long n = 0;

	(void)argc;
	(void)argv;
	for (;;)
		n++;
	return 0;
}

/* Allocates and touches MiB, one at a time; exits with ENOMEM's number. */
static int
cmd_alloc(int argc, char **argv)
{
	long mib = argc > 2 ? atol(argv[2]) : 1024, i;
	char *p;

	for (i = 0; i < mib; i++) {
		p = malloc(1 << 20);
		if (p == NULL) {
			errno = ENOMEM;
			return errno_exit("malloc");
		}
		memset(p, 1, 1 << 20);
	}
	return 0;
}

/* Opens /dev/null N times. */
static int
cmd_open_many(int argc, char **argv)
{
	long n = argc > 2 ? atol(argv[2]) : 1000, i;

	for (i = 0; i < n; i++)
		if (open("/dev/null", O_RDONLY) < 0)
			return errno_exit("open");
	return 0;
}

/* Writes BYTES to PATH. */
static int
cmd_write_big(int argc, char **argv)
{
	char buf[4096];
	long left;
	int fd;

	if (argc < 4)
		return 125;
	left = atol(argv[3]);
	memset(buf, 'x', sizeof(buf));
	fd = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return errno_exit(argv[2]);
	for (; left > 0; left -= (long)sizeof(buf))
		if (write(fd, buf, left < (long)sizeof(buf) ? (size_t)left :
		    sizeof(buf)) < 0)
			return errno_exit("write");
	return 0;
}

/* Forks N children that sleep briefly; waits for them. */
static int
cmd_fork_many(int argc, char **argv)
{
	long n = argc > 2 ? atol(argv[2]) : 100, i;
	pid_t pid;

	for (i = 0; i < n; i++) {
		pid = fork();
		if (pid < 0)
			return errno_exit("fork");
		if (pid == 0) {
			sleep_ms(200);
			_exit(0);
		}
	}
	while (wait(NULL) > 0)
		;
	return 0;
}

/* ---- escape probes: 0 when the operation succeeded, else its errno ---- */

static int
cmd_rename(int argc, char **argv)
{
	return argc < 4 ? 125 : result(rename(argv[2], argv[3]), "rename");
}

static int
cmd_link(int argc, char **argv)
{
	return argc < 4 ? 125 : result(link(argv[2], argv[3]), "link");
}

#ifdef __linux__

static int
cmd_symlink(int argc, char **argv)
{
	return argc < 4 ? 125 : result(symlink(argv[2], argv[3]), "symlink");
}

static int
cmd_open_trunc(int argc, char **argv)
{
	return argc < 3 ? 125 :
	    result(open(argv[2], O_WRONLY | O_TRUNC | O_CLOEXEC), "open");
}

static int
cmd_truncate(int argc, char **argv)
{
	return argc < 3 ? 125 : result(truncate(argv[2], 0), "truncate");
}

static int
cmd_mkdir(int argc, char **argv)
{
	return argc < 3 ? 125 : result(mkdir(argv[2], 0755), "mkdir");
}

static int
cmd_unlink(int argc, char **argv)
{
	return argc < 3 ? 125 : result(unlink(argv[2]), "unlink");
}

/* mknod TYPE PATH: reg, fifo, sock, or chr/blk (1:3, /dev/null's numbers) */
static int
cmd_mknod(int argc, char **argv)
{
	static const struct { const char *name; mode_t mode; } types[] = {
		{ "reg", S_IFREG }, { "fifo", S_IFIFO }, { "sock", S_IFSOCK },
		{ "chr", S_IFCHR }, { "blk", S_IFBLK },
	};
	size_t i;

	if (argc < 4)
		return 125;
	for (i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		if (strcmp(argv[2], types[i].name) == 0)
			return result(mknod(argv[3], types[i].mode | 0600,
			    makedev(1, 3)), "mknod");
	return 125;
}

static int
cmd_chmod(int argc, char **argv)
{
	return argc < 3 ? 125 : result(chmod(argv[2], 0600), "chmod");
}

static int
cmd_chown(int argc, char **argv)
{
	return argc < 3 ? 125 : result(chown(argv[2], getuid(), getgid()), "chown");
}

static int
cmd_utime(int argc, char **argv)
{
	return argc < 3 ? 125 : result(utimensat(AT_FDCWD, argv[2], NULL, 0),
	    "utimensat");
}

static int
cmd_setxattr(int argc, char **argv)
{
	return argc < 3 ? 125 : result(setxattr(argv[2], "user.confine", "x",
	    1, 0), "setxattr");
}

static const struct name_value {
	const char *name;
	int v;
} families[] = {
	{ "inet", AF_INET }, { "inet6", AF_INET6 }, { "unix", AF_UNIX },
	{ "packet", AF_PACKET }, { "netlink", AF_NETLINK },
}, sock_types[] = {
	{ "stream", SOCK_STREAM }, { "dgram", SOCK_DGRAM }, { "raw", SOCK_RAW },
};

static int
lookup(const struct name_value *t, size_t n, const char *name)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (strcmp(name, t[i].name) == 0)
			return t[i].v;
	return -1;
}

#define LOOKUP(t, name) lookup((t), sizeof(t) / sizeof((t)[0]), (name))

/*
 * A socket of the family and type named by argv[2] and argv[3] (a raw
 * inet one is ICMP): the descriptor, -1 with errno, or -2 for a name it
 * does not know.
 */
static int
open_socket(char **argv, int *family)
{
	int f = LOOKUP(families, argv[2]), t = LOOKUP(sock_types, argv[3]);
	int proto = 0;

	if (f < 0 || t < 0)
		return -2;
	if (t == SOCK_RAW && (f == AF_INET || f == AF_INET6))
		proto = f == AF_INET ? IPPROTO_ICMP : IPPROTO_ICMPV6;
	*family = f;
	return socket(f, t | SOCK_CLOEXEC, proto);
}

/* socket FAMILY TYPE: inet|inet6|unix|packet|netlink, stream|dgram|raw */
static int
cmd_socket(int argc, char **argv)
{
	int f, fd;

	if (argc < 4)
		return 125;
	fd = open_socket(argv, &f);
	return fd == -2 ? 125 : result(fd, "socket");
}

/*
 * net FAMILY TYPE OP [ADDR]: a socket of its own, then OP (connect, bind,
 * listen, send) to ADDR (sock_op).
 */
static int
cmd_net(int argc, char **argv)
{
	int f, fd;

	if (argc < 5)
		return 125;
	fd = open_socket(argv, &f);
	if (fd < 0)
		return fd == -2 ? 125 : errno_exit("socket");
	return sock_op(fd, f, argv[4], argc > 5 ? argv[5] : NULL);
}

/*
 * fd0 OP [ADDR]: OP on the socket that is stdin, made by the test, in its
 * family: what Landlock itself decides, seccomp's socket() refusal aside.
 */
static int
cmd_fd0(int argc, char **argv)
{
	socklen_t len = sizeof(int);
	int family;

	if (argc < 3)
		return 125;
	if (getsockopt(0, SOL_SOCKET, SO_DOMAIN, &family, &len) != 0)
		return errno_exit("SO_DOMAIN");
	return sock_op(0, family, argv[2], argc > 3 ? argv[3] : NULL);
}

static int
cmd_socketpair(int argc, char **argv)
{
	int sv[2];

	(void)argc;
	(void)argv;
	return result(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv),
	    "socketpair");
}

/*
 * io-uring setup|enter|register. enter and register on a descriptor that
 * is not open (not -1: register takes that as "no ring"): the kernel says
 * EBADF, so an EPERM can only be the filter's.
 */
static int
cmd_io_uring(int argc, char **argv)
{
	unsigned char params[120];
	const char *op = argc > 2 ? argv[2] : "setup";

	memset(params, 0, sizeof(params));
	if (strcmp(op, "setup") == 0)
		return result((int)syscall(SYS_io_uring_setup, 1, params),
		    "io_uring_setup");
	if (strcmp(op, "enter") == 0)
		return result((int)syscall(SYS_io_uring_enter, 1000, 1, 0, 0,
		    NULL, 0), "io_uring_enter");
	if (strcmp(op, "register") == 0)
		return result((int)syscall(SYS_io_uring_register, 1000, 0, NULL,
		    0), "io_uring_register");
	return 125;
}

#if defined(__x86_64__)
/*
 * int 0x80 faulted: the kernel has no IA-32 entry. Said with an exit code
 * of its own, so that a sanitizer's SIGSEGV handler cannot blur it.
 */
static void
no_ia32_entry(int sig)
{
	(void)sig;
	_exit(FIXTURE_NO_IA32);
}
#endif

/*
 * The 32-bit socket(2) through int 0x80: another architecture's syscall.
 * Exits 0 when it made a socket, FIXTURE_NO_IA32 when the kernel has no
 * such entry; seccomp's kill for a foreign architecture is SIGSYS.
 */
static int
cmd_socket32(int argc, char **argv)
{
#if defined(__x86_64__)
	struct sigaction sa;
	long r;

	(void)argc;
	(void)argv;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = no_ia32_entry;
	if (sigaction(SIGSEGV, &sa, NULL) != 0)
		return errno_exit("sigaction");
	__asm__ volatile("int $0x80" : "=a"(r) : "a"(359L), "b"((long)AF_INET),
	    "c"((long)SOCK_STREAM), "d"(0L) : "memory");
	if (r < 0) {
		errno = (int)-r;
		return errno_exit("int 0x80 socket");
	}
	return 0;
#else
	(void)argc;
	(void)argv;
	return 125;
#endif
}

/* kill PID|parent SIG */
static int
cmd_kill(int argc, char **argv)
{
	pid_t pid;

	if (argc < 4)
		return 125;
	pid = strcmp(argv[2], "parent") == 0 ? getppid() : (pid_t)atol(argv[2]);
	return result(kill(pid, atoi(argv[3])), "kill");
}

/* PTRACE_SEIZE does not stop the tracee; our exit detaches it. */
static int
cmd_ptrace(int argc, char **argv)
{
	return argc < 3 ? 125 : result((int)ptrace(PTRACE_SEIZE,
	    (pid_t)atol(argv[2]), NULL, NULL), "ptrace");
}

/* open /proc/PID/FILE (mem, or fd/N) for reading, or with "rw" for both */
static int
cmd_proc_open(int argc, char **argv)
{
	int mode = argc > 4 && strcmp(argv[4], "rw") == 0 ? O_RDWR : O_RDONLY;
	char path[128];

	if (argc < 4)
		return 125;
	snprintf(path, sizeof(path), "/proc/%s/%s", argv[2], argv[3]);
	return result(open(path, mode | O_CLOEXEC), path);
}

/* Pushes a byte into the terminal on stdin. */
static int
cmd_tiocsti(int argc, char **argv)
{
	char c = '\n';

	(void)argc;
	(void)argv;
	return result(ioctl(0, TIOCSTI, &c), "TIOCSTI");
}

/*
 * lease PATH: a read lease on a file opened read-only, held until stdin
 * ends ("leased" on stdout once it is); its errno if refused.
 */
static int
cmd_lease(int argc, char **argv)
{
	char c;
	int fd;

	if (argc < 3)
		return 125;
	/* The host's open for writing breaks it with SIGIO: not our end. */
	signal(SIGIO, SIG_IGN);
	if ((fd = open(argv[2], O_RDONLY | O_CLOEXEC)) < 0)
		return result(-1, argv[2]);
	if (fcntl(fd, F_SETLEASE, F_RDLCK) != 0)
		return result(-1, "F_SETLEASE");
	printf("leased\n");
	fflush(stdout);
	while (read(0, &c, 1) > 0)
		;
	close(fd);
	return 0;
}

/*
 * tty OP: what a job may do to the terminal on its stdin. setd: the line
 * discipline, to N_NULL; excl: exclusive mode; fg: the foreground group,
 * to its own; ctty: the terminal as its controlling one; winsz and modes:
 * its size and modes, read and set to what they are.
 */
static int
cmd_tty(int argc, char **argv)
{
	struct winsize ws;
	struct termios t;
	int n_null = 27;

	if (argc < 3)
		return 125;
	if (strcmp(argv[2], "setd") == 0)
		return result(ioctl(0, TIOCSETD, &n_null), "TIOCSETD");
	if (strcmp(argv[2], "excl") == 0)
		return result(ioctl(0, TIOCEXCL), "TIOCEXCL");
	if (strcmp(argv[2], "fg") == 0)
		return result(tcsetpgrp(0, getpgrp()), "TIOCSPGRP");
	if (strcmp(argv[2], "ctty") == 0)
		return result(ioctl(0, TIOCSCTTY, 0), "TIOCSCTTY");
	if (strcmp(argv[2], "winsz") == 0)
		return result(ioctl(0, TIOCGWINSZ, &ws) != 0 ? -1 :
		    ioctl(0, TIOCSWINSZ, &ws), "TIOCSWINSZ");
	if (strcmp(argv[2], "modes") == 0)
		return result(tcgetattr(0, &t) != 0 ? -1 :
		    tcsetattr(0, TCSANOW, &t), "tcsetattr");
	return 125;
}

/* Stops itself: only SIGKILL (or SIGCONT) moves it on. */
static int
cmd_stop(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	raise(SIGSTOP);
	return 0;
}

/*
 * A bounded tree of N sleeping processes (fan-out of at most 8 per node),
 * each printing its pid; the job itself sleeps too.
 */
static void
grow(long n)
{
	long per, i, k;
	pid_t pid;

	per = (n + 7) / 8;
	for (i = 0; i < 8 && n > 0; i++) {
		k = n < per ? n : per;
		n -= k;
		pid = fork();
		if (pid < 0)
			_exit(1);
		if (pid == 0) {
			printf("%ld\n", (long)getpid());
			fflush(stdout);
			grow(k - 1);
			sleep_ms(60000);
			_exit(0);
		}
	}
}

static int
cmd_tree(int argc, char **argv)
{
	grow(argc > 2 ? atol(argv[2]) : 100);
	sleep_ms(60000);
	return 0;
}

/*
 * hold KEY PORT NAME MS: a neighbour's objects, held for MS: a SysV
 * segment of KEY (hex), a TCP listener on 127.0.0.1:PORT and a stream
 * listener at the abstract unix NAME; "ready" printed once all three
 * are there.
 */
static int
cmd_hold(int argc, char **argv)
{
	struct sockaddr_storage ss;
	socklen_t len;
	char name[108];
	int t, u, one = 1;

	if (argc < 6 || strlen(argv[4]) + 2 > sizeof(name))
		return 125;
	if (shmget((key_t)strtoul(argv[2], NULL, 16), 4096, IPC_CREAT | 0600) < 0)
		return errno_exit("shmget");
	t = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	len = addr_of(AF_INET, argv[3], &ss);
	if (t < 0 || setsockopt(t, SOL_SOCKET, SO_REUSEADDR, &one,
	    sizeof(one)) != 0 || bind(t, (struct sockaddr *)&ss, len) != 0 ||
	    listen(t, 8) != 0)
		return errno_exit("tcp listener");
	snprintf(name, sizeof(name), "@%s", argv[4]);
	u = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	len = addr_of(AF_UNIX, name, &ss);
	if (u < 0 || bind(u, (struct sockaddr *)&ss, len) != 0 ||
	    listen(u, 8) != 0)
		return errno_exit("abstract listener");
	printf("ready\n");
	fflush(stdout);
	sleep_ms(atol(argv[5]));
	return 0;
}
#endif /* __linux__ */

static const struct {
	const char *name;
	int (*fn)(int, char **);
} commands[] = {
	{ "exit", cmd_exit },
	{ "signal", cmd_signal },
	{ "sleep", cmd_sleep },
	{ "pid-sleep", cmd_pid_sleep },
	{ "ignore-term", cmd_ignore_term },
	{ "write", cmd_write },
	{ "connect", cmd_connect },
	{ "detach", cmd_detach },
	{ "env", cmd_env },
	{ "fds", cmd_fds },
	{ "sigstate", cmd_sigstate },
	{ "ids", cmd_ids },
	{ "cwd", cmd_cwd },
	{ "cat", cmd_cat },
	{ "read", cmd_read },
	{ "list", cmd_list },
	{ "map", cmd_map },
	{ "stat", cmd_stat },
	{ "run", cmd_run },
	{ "setsid", cmd_setsid },
	{ "setpgid", cmd_setpgid },
	{ "daemon", cmd_daemon },
	{ "spin", cmd_spin },
	{ "alloc", cmd_alloc },
	{ "open-many", cmd_open_many },
	{ "write-big", cmd_write_big },
	{ "fork-many", cmd_fork_many },
	{ "rename", cmd_rename },
	{ "link", cmd_link },
#ifdef __linux__
	{ "symlink", cmd_symlink },
	{ "open-trunc", cmd_open_trunc },
	{ "truncate", cmd_truncate },
	{ "mkdir", cmd_mkdir },
	{ "unlink", cmd_unlink },
	{ "mknod", cmd_mknod },
	{ "chmod", cmd_chmod },
	{ "chown", cmd_chown },
	{ "utime", cmd_utime },
	{ "setxattr", cmd_setxattr },
	{ "socket", cmd_socket },
	{ "net", cmd_net },
	{ "fd0", cmd_fd0 },
	{ "socketpair", cmd_socketpair },
	{ "io-uring", cmd_io_uring },
	{ "socket32", cmd_socket32 },
	{ "kill", cmd_kill },
	{ "ptrace", cmd_ptrace },
	{ "proc-open", cmd_proc_open },
	{ "tiocsti", cmd_tiocsti },
	{ "tty", cmd_tty },
	{ "lease", cmd_lease },
	{ "stop", cmd_stop },
	{ "tree", cmd_tree },
	{ "hold", cmd_hold },
	{ "meta", probe_meta },
	{ "setid", probe_setid },
	{ "host", probe_host },
	{ "surface", probe_surface },
	{ "proc", probe_proc },
	{ "pair", probe_pair },
	{ "caps", probe_caps },
	{ "creds", probe_creds },
	{ "ipc", probe_ipc },
	{ "loop", probe_loop },
#endif
};

int
main(int argc, char **argv)
{
	size_t i;

	if (argc < 2) {
		fprintf(stderr, "usage: fixture COMMAND [ARG...]\n");
		return 125;
	}
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (strcmp(argv[1], commands[i].name) == 0)
			return commands[i].fn(argc, argv);
	fprintf(stderr, "fixture: unknown command %s\n", argv[1]);
	return 125;
}
