/*
 * The one job program of the integration tests: `fixture COMMAND ARGS...`.
 * A probe exits 0 when the operation succeeded and with the errno it got
 * otherwise, so a test reads EACCES or ECONNREFUSED from the exit code.
 * What it learns about its own process it prints on stdout.
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
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

static int
cmd_connect(int argc, char **argv)
{
	struct sockaddr_in sin;
	int fd;

	if (argc < 3)
		return 125;
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return errno_exit("socket");
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_port = htons((uint16_t)atoi(argv[2]));
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (connect(fd, (struct sockaddr *)&sin, sizeof(sin)) != 0)
		return errno_exit("connect");
	return 0;
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

/* Prints pid, pgid and sid; exits 0 when it is not a group leader. */
static int
cmd_ids(int argc, char **argv)
{
	printf("%ld %ld %ld\n", (long)getpid(), (long)getpgrp(), (long)getsid(0));
	return getpgrp() == getpid();
}

static int
cmd_cwd(int argc, char **argv)
{
	char buf[4096];

	if (getcwd(buf, sizeof(buf)) == NULL)
		return errno_exit("getcwd");
	printf("%s\n", buf);
	return 0;
}

/* Copies stdin to stdout and "err" to stderr. */
static int
cmd_cat(int argc, char **argv)
{
	char buf[512];
	ssize_t n;

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
	{ "setsid", cmd_setsid },
	{ "setpgid", cmd_setpgid },
	{ "daemon", cmd_daemon },
	{ "spin", cmd_spin },
	{ "alloc", cmd_alloc },
	{ "open-many", cmd_open_many },
	{ "write-big", cmd_write_big },
	{ "fork-many", cmd_fork_many },
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
