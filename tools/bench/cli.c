/*
 * confine-run as a whole process, as shells, Makefiles and test runners
 * call it: the wall time of one run of /bin/true through it, beside the
 * same under bubblewrap, timeout(1), systemd-run --scope where it works,
 * and /bin/true itself, spawned the way a shell does, interleaved.
 *
 *   bazel run -c opt //tools/bench:cli -- [REPS]
 *
 * confine-run as it runs by default (its own job's helper), through a
 * helper left running (CONFINE_SOCKET), and taken apart: its own start
 * alone (--version: the exec, the loader, the options), and its job
 * unconfined and without a private tmp (--backend none --no-tmp: what
 * starting, watching and settling a job costs it, without the
 * confinement's own cost).
 */
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

struct method {
	const char *name;
	const char *argv[24];
	char *const *envp;
	double *t;
	int ok;
};

static double
now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int
run(const struct method *m, double *us)
{
	posix_spawn_file_actions_t fa;
	double t0 = now_us();
	int status, rc;
	pid_t pid;

	/* Every method's stdout is /dev/null (--version's line among them). */
	if (posix_spawn_file_actions_init(&fa) != 0)
		return -1;
	rc = posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	if (rc == 0)
		rc = posix_spawn(&pid, m->argv[0], &fa, NULL,
		    (char *const *)(uintptr_t)m->argv, m->envp);
	posix_spawn_file_actions_destroy(&fa);
	if (rc != 0)
		return -1;
	if (waitpid(pid, &status, 0) != pid)
		return -1;
	*us = now_us() - t0;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

static int
cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* A file of the runfiles, beside argv[0] under bazel run. */
static char *
runfile(const char *argv0, const char *rel)
{
	const char *dir = getenv("RUNFILES_DIR");
	static char buf[4][4096];
	static int k;
	char *p = buf[k++ % 4];

	if (dir != NULL)
		snprintf(p, sizeof(buf[0]), "%s/confine/%s", dir, rel);
	else
		snprintf(p, sizeof(buf[0]), "%s.runfiles/confine/%s", argv0, rel);
	return p;
}

int
main(int argc, char **argv)
{
	int reps = argc > 1 ? atoi(argv[1]) : 200, i, k, n = 0, bw = -1, tr = -1;
	char scratch[] = "/var/tmp/confine-cli-bench.XXXXXX", sock[4200];
	char *run_path = runfile(argv[0], "tools/confine-run");
	char *helper = runfile(argv[0], "helper/confine-helper");
	char envsock[4300], *sockenv[] = { envsock, NULL };
	struct method m[8];
	double p50;
	pid_t h;

	if (reps < 3 || mkdtemp(scratch) == NULL)
		return 2;
	snprintf(sock, sizeof(sock), "%s.sock", scratch);
	snprintf(envsock, sizeof(envsock), "CONFINE_SOCKET=%s", sock);
	{
		const char *hargv[] = { helper, "--listen", sock, "--quiet", NULL };
		struct stat st;

		if (posix_spawn(&h, helper, NULL, NULL,
		    (char *const *)(uintptr_t)hargv, environ) != 0)
			return 2;
		for (i = 0; i < 2000 && stat(sock, &st) != 0; i++)
			usleep(1000);
	}
	memset(m, 0, sizeof(m));
	m[n++] = (struct method){ "/bin/true", { "/bin/true", NULL }, environ, NULL, 0 };
	tr = 0;
	m[n++] = (struct method){ "confine-run", { run_path, "-s", scratch, "--",
		"/bin/true", NULL }, environ, NULL, 0 };
	m[n++] = (struct method){ "confine-run, CONFINE_SOCKET", { run_path, "-s",
		scratch, "--", "/bin/true", NULL }, sockenv, NULL, 0 };
	m[n++] = (struct method){ "confine-run --version (its own start)", {
		run_path, "--version", NULL }, environ, NULL, 0 };
	m[n++] = (struct method){ "confine-run --backend none --no-tmp", {
		run_path, "-s", scratch, "--backend", "none", "--no-tmp", "--",
		"/bin/true", NULL }, environ, NULL, 0 };
	if (access("/usr/bin/bwrap", X_OK) == 0) {
		bw = n;
		m[n++] = (struct method){ "bwrap", { "/usr/bin/bwrap", "--ro-bind",
			"/", "/", "--tmpfs", "/tmp", "--bind", scratch, scratch,
			"--dev", "/dev", "--proc", "/proc", "--unshare-net",
			"--die-with-parent", "/bin/true", NULL }, environ, NULL, 0 };
	}
	m[n++] = (struct method){ "timeout 10", { "/usr/bin/timeout", "10",
		"/bin/true", NULL }, environ, NULL, 0 };
	if (access("/usr/bin/systemd-run", X_OK) == 0)
		m[n++] = (struct method){ "systemd-run --scope", {
			"/usr/bin/systemd-run", "--scope", "--quiet", "/bin/true",
			NULL }, environ, NULL, 0 };
	for (k = 0; k < n; k++) {
		m[k].t = calloc((size_t)reps, sizeof(double));
		m[k].ok = m[k].t != NULL;
	}
	/* Interleaved: each round runs every method once, in turn. */
	for (i = 0; i < reps; i++)
		for (k = 0; k < n; k++)
			if (m[k].ok && run(&m[k], &m[k].t[i]) != 0)
				m[k].ok = 0;
	kill(h, SIGTERM);
	waitpid(h, NULL, 0);
	for (k = 0; k < n; k++)
		if (m[k].ok)
			qsort(m[k].t, (size_t)reps, sizeof(double), cmp);
	printf("| command (%d interleaved runs each) | p50 us | p90 us | / bwrap | / /bin/true |\n"
	    "| --- | --- | --- | --- | --- |\n", reps);
	for (k = 0; k < n; k++) {
		if (!m[k].ok) {
			printf("| %s | failed or absent | | | |\n", m[k].name);
			continue;
		}
		p50 = m[k].t[reps / 2];
		printf("| %s | %.0f | %.0f | ", m[k].name, p50,
		    m[k].t[reps * 9 / 10]);
		if (bw >= 0 && m[bw].ok)
			printf("%.2fx", p50 / m[bw].t[reps / 2]);
		printf(" | %.2fx |\n", p50 / m[tr].t[reps / 2]);
	}
	rmdir(scratch);
	return 0;
}
