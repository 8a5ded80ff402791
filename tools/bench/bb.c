/*
 * confine-bb-runner's cost per action: trivial Runs (/bin/true), one at a
 * time, timed from a gRPC client, through confine-bb-runner and through a
 * plain gRPC runner of the bench's own that runs each action as bb_runner
 * does (posix_spawn, wait4, nothing confined); and posix_spawn of
 * /bin/true itself, without gRPC. The methods take turns, round by round,
 * so that the machine's other load falls on each alike.
 *
 *   bazel run -c opt //tools/bench:bb -- [--runs N] [--rounds R] [--dir DIR]
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "src/core/tree.h"
#include "tools/bench/bb_grpc.h"
#include "tools/bench/bench.h"

extern char **environ;

enum { M_SPAWN, M_PLAIN, M_CONFINE, M_CONFINE_NO_TMP, M_N };

static const char *const names[M_N] = {
	"posix_spawn /bin/true",
	"plain gRPC runner",
	"confine-bb-runner",
	"confine-bb-runner --no-tmp",
};

struct method {
	pid_t server;              /* the runner's process, or 0 */
	char dir[PATH_MAX];        /* its build directory */
	char sock[PATH_MAX];
	struct bbg_client *client;
	struct samples us;
	int next;                  /* the next run's number */
};

static _Noreturn void
die(const char *what)
{
	fprintf(stderr, "bb bench: %s\n", what);
	exit(1);
}

/* A file of the runfiles, beside argv[0] under bazel run. */
static char *
runfile(const char *argv0, const char *rel)
{
	const char *dir = getenv("RUNFILES_DIR");
	static char buf[PATH_MAX];

	if (dir != NULL)
		snprintf(buf, sizeof(buf), "%s/confine/%s", dir, rel);
	else
		snprintf(buf, sizeof(buf), "%s.runfiles/confine/%s", argv0, rel);
	return buf;
}

static void
mkdirs(const char *dir)
{
	char p[PATH_MAX];

	snprintf(p, sizeof(p), "%s/a", dir);
	if (mkdir(p, 0755) != 0)
		die("mkdir");
	snprintf(p, sizeof(p), "%s/a/root", dir);
	if (mkdir(p, 0755) != 0)
		die("mkdir");
	snprintf(p, sizeof(p), "%s/a/tmp", dir);
	if (mkdir(p, 0755) != 0)
		die("mkdir");
}

/*
 * The method's runner started on a socket of its own, and connected to:
 * the plain one (this program) when exe is NULL, else confine-bb-runner
 * with option (or NULL).
 */
static void
start(struct method *m, const char *base, const char *socks, const char *tag,
    const char *exe, const char *option)
{
	const char *argv[10];
	int n = 0;

	snprintf(m->dir, sizeof(m->dir), "%s/%s", base, tag);
	if (mkdir(m->dir, 0755) != 0)
		die("mkdir");
	mkdirs(m->dir);
	snprintf(m->sock, sizeof(m->sock), "%s/%s", socks, tag);
	if (exe == NULL) {
		argv[n++] = "/proc/self/exe";
		argv[n++] = "--plain-runner";
		argv[n++] = m->sock;
		argv[n++] = m->dir;
	} else {
		argv[n++] = exe;
		argv[n++] = "--listen";
		argv[n++] = m->sock;
		argv[n++] = "--build-directory";
		argv[n++] = m->dir;
		argv[n++] = "--quiet";
		if (option != NULL)
			argv[n++] = option;
	}
	argv[n] = NULL;
	if (posix_spawn(&m->server, argv[0], NULL, NULL, (char *const *)(uintptr_t)argv,
	    environ) != 0)
		die("cannot start a runner");
	if ((m->client = bbg_connect(m->sock)) == NULL)
		die("a runner did not answer");
}

static void
stop(struct method *m)
{
	int st;

	if (m->client != NULL)
		bbg_close(m->client);
	if (m->server > 0) {
		kill(m->server, SIGTERM);
		waitpid(m->server, &st, 0);
	}
}

/* One /bin/true, timed, in microseconds. */
static double
once(struct method *m, int k)
{
	const char *const argv[] = { "/bin/true", NULL };
	int64_t t0, code;
	char msg[512];
	pid_t pid;
	int st;

	t0 = bench_now();
	if (k == M_SPAWN) {
		if (posix_spawn(&pid, argv[0], NULL, NULL, (char *const *)(uintptr_t)argv,
		    environ) != 0 || waitpid(pid, &st, 0) != pid ||
		    !WIFEXITED(st) || WEXITSTATUS(st) != 0)
			die("posix_spawn /bin/true");
	} else {
		if (bbg_run(m->client, "a", m->next++, argv, &code, msg,
		    sizeof(msg)) != 0 || code != 0) {
			fprintf(stderr, "bb bench: %s: %s\n", names[k], msg);
			exit(1);
		}
	}
	return (double)(bench_now() - t0) / 1000.0;
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "runs", required_argument, NULL, 'n' },
		{ "rounds", required_argument, NULL, 'r' },
		{ "dir", required_argument, NULL, 'd' },
		{ "plain-runner", required_argument, NULL, 'p' },
		{ NULL, 0, NULL, 0 },
	};
	const char *parent = "/var/tmp", *runner;
	struct method m[M_N];
	struct summary s;
	struct utsname u;
	char base[PATH_MAX], socks[] = "/tmp/cbb-bench.XXXXXX";
	int runs = 1000, rounds = 5, ch, r, k, i, rc;

	while ((ch = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (ch) {
		case 'n':
			runs = atoi(optarg);
			break;
		case 'r':
			rounds = atoi(optarg);
			break;
		case 'd':
			parent = optarg;
			break;
		case 'p':
			/* The plain runner, this same program: SOCK DIR. */
			if (optind >= argc)
				die("--plain-runner SOCK DIR");
			return bbg_plain_runner(optarg, argv[optind]);
		default:
			fprintf(stderr, "usage: bb [--runs N] [--rounds R] "
			    "[--dir DIR]\n");
			return 2;
		}
	}
	if (runs < rounds || rounds < 1)
		die("--runs must be at least --rounds, and that at least 1");
	/*
	 * Beneath /var/tmp, not /tmp: a job's private /tmp hides the host's,
	 * and a scratch root beneath it would cost the job a directory more
	 * per level to see it there, which a real build directory need not.
	 */
	snprintf(base, sizeof(base), "%s/confine-bb-bench.XXXXXX", parent);
	/* A unix socket's path has 107 bytes: the sockets in /tmp. */
	if (mkdtemp(base) == NULL || mkdtemp(socks) == NULL)
		die("mkdtemp");
	memset(m, 0, sizeof(m));
	runner = runfile(argv[0], "bb/confine-bb-runner");
	start(&m[M_PLAIN], base, socks, "plain", NULL, NULL);
	start(&m[M_CONFINE], base, socks, "confine", runner, NULL);
	start(&m[M_CONFINE_NO_TMP], base, socks, "notmp", runner, "--no-tmp");

	/* Warm: each runner's helper started, its first jobs done. */
	for (k = 0; k < M_N; k++)
		for (i = 0; i < (runs < 20 ? runs : 20); i++)
			(void)once(&m[k], k);
	for (r = 0; r < rounds; r++)
		for (k = 0; k < M_N; k++)
			for (i = 0; i < runs / rounds; i++)
				if (stats_add(&m[k].us, once(&m[k], k)) != 0)
					die("out of memory");
	for (k = 0; k < M_N; k++)
		stop(&m[k]);
	if ((rc = tree_remove(AT_FDCWD, base, 0, 64)) != 0 ||
	    (rc = tree_remove(AT_FDCWD, socks, 0, 64)) != 0)
		fprintf(stderr, "bb bench: %s or %s not removed: %s\n", base,
		    socks, strerror(-rc));

	uname(&u);
	printf("confine-bb-runner, one action at a time: %d runs of /bin/true "
	    "per method in %d rounds\n(%s %s, %ld CPUs; build directories "
	    "in %s; wall time from the client's call to its answer, us)\n\n",
	    runs / rounds * rounds, rounds, u.sysname, u.release,
	    sysconf(_SC_NPROCESSORS_ONLN), parent);
	printf("%-28s %7s %9s %9s %9s %9s\n", "method", "n", "p50", "p90",
	    "p99", "mean");
	for (k = 0; k < M_N; k++) {
		stats_summary(&m[k].us, &s);
		printf("%-28s %7zu %9.0f %9.0f %9.0f %9.0f\n", names[k], s.n,
		    s.p50, s.p90, s.p99, s.mean);
	}
	{
		struct summary plain, conf;

		stats_summary(&m[M_PLAIN].us, &plain);
		stats_summary(&m[M_CONFINE].us, &conf);
		printf("\nconfine-bb-runner over the plain runner: p50 %+.0f us "
		    "(%.2fx), p99 %+.0f us (%.2fx)\n", conf.p50 - plain.p50,
		    conf.p50 / plain.p50, conf.p99 - plain.p99,
		    conf.p99 / plain.p99);
	}
	for (k = 0; k < M_N; k++)
		stats_free(&m[k].us);
	return 0;
}
