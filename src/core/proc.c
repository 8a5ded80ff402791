#include <errno.h>
#include <poll.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef __linux__
#include <sys/syscall.h>  /* SYS_pidfd_open */
#endif
#include <sys/wait.h>
#include <unistd.h>

#include "src/core/clock.h"
#include "src/core/mountinfo.h"
#include "src/core/proc.h"

void
proc_reap(pid_t pid, int *status)
{
	while (waitpid(pid, status, 0) < 0 && errno == EINTR)
		;
}

void
proc_reap_within(pid_t pid, int timeout_ms)
{
	int64_t until = clock_ns() + (int64_t)timeout_ms * 1000000;
	pid_t got;
#ifdef SYS_pidfd_open
	/* Woken by its exit, not by a clock: no polling for it. */
	int pfd = timeout_ms > 0 ? (int)syscall(SYS_pidfd_open, pid, 0) : -1;
#endif

	for (;;) {
		got = waitpid(pid, NULL, WNOHANG);
		if (got == pid || (got < 0 && errno != EINTR))
			break;
		if (clock_ns() >= until) {
			/* It has had its chance; it must not linger. */
			kill(pid, SIGKILL);
			proc_reap(pid, NULL);
			break;
		}
#ifdef SYS_pidfd_open
		if (pfd >= 0) {
			struct pollfd p = { pfd, POLLIN, 0 };

			(void)poll(&p, 1, clock_ms_until(until));
			continue;
		}
#endif
		usleep(1000);
	}
#ifdef SYS_pidfd_open
	if (pfd >= 0)
		close(pfd);
#endif
}

pid_t
proc_exited_child(void)
{
	siginfo_t si;

	for (;;) {
		memset(&si, 0, sizeof(si));
		if (waitid(P_ALL, 0, &si, WEXITED | WNOHANG | WNOWAIT) == 0)
			return si.si_pid;
		if (errno != EINTR)
			return 0;  /* ECHILD: no children at all */
	}
}

void
proc_signals_default(void)
{
	struct sigaction sa;
	int sig;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_DFL;
	sigemptyset(&sa.sa_mask);
	for (sig = 1; sig < NSIG; sig++)
		(void)sigaction(sig, &sa, NULL);
}

void
proc_helper_signals(void)
{
	static const int dfl[] = { SIGTERM, SIGCHLD };
	static const int ign[] = { SIGINT, SIGQUIT, SIGTSTP, SIGTTIN, SIGTTOU,
		SIGHUP };
	size_t i;

	for (i = 0; i < sizeof(dfl) / sizeof(dfl[0]); i++)
		(void)signal(dfl[i], SIG_DFL);
	for (i = 0; i < sizeof(ign) / sizeof(ign[0]); i++)
		(void)signal(ign[i], SIG_IGN);
}

long
proc_children_each(pid_t pid, pid_t tid, int (*fn)(pid_t, void *), void *arg)
{
	return proc_children_at(AT_FDCWD, pid, tid, fn, arg);
}

long
proc_children_at(int proc, pid_t pid, pid_t tid, int (*fn)(pid_t, void *),
    void *arg)
{
#ifdef __linux__
	char path[64], buf[4096];
	const char *at = proc == AT_FDCWD ? "/proc/" : "";
	long v = 0, given = 0;
	bool digits = false, stop = false;
	ssize_t n, i;
	int fd, err;

	/*
	 * Our own by /proc/self: where /proc is another PID namespace's, our
	 * number there could be another process's, whose list is not ours.
	 */
	if (pid == 0 && tid == 0)
		snprintf(path, sizeof(path), "%sthread-self/children", at);
	else if (pid == 0)
		snprintf(path, sizeof(path), "%sself/task/%ld/children", at,
		    (long)tid);
	else
		snprintf(path, sizeof(path), "%s%ld/task/%ld/children", at,
		    (long)pid, (long)tid);
	if ((fd = openat(proc, path, O_RDONLY | O_CLOEXEC)) < 0)
		return -errno;
	/* Numbers split across reads carry over: none is lost at a seam. */
	while (!stop && (n = read(fd, buf, sizeof(buf))) > 0)
		for (i = 0; i < n && !stop; i++) {
			if (buf[i] >= '0' && buf[i] <= '9') {
				v = v * 10 + (buf[i] - '0');
				digits = true;
				continue;
			}
			if (digits) {
				given++;
				stop = fn((pid_t)v, arg) != 0;
			}
			v = 0;
			digits = false;
		}
	err = n < 0 && !stop ? errno : 0;
	if (digits && !stop) {
		given++;
		(void)fn((pid_t)v, arg);
	}
	close(fd);
	return err != 0 ? -err : given;
#else
	(void)proc;
	(void)pid;
	(void)tid;
	(void)fn;
	(void)arg;
	return -ENOSYS;
#endif
}

int
proc_own_cgroup(const char *controller, char *out, size_t len)
{
	char *line = NULL, *p, *ctls, *path;
	size_t cap = 0;
	FILE *f = fopen("/proc/self/cgroup", "re");
	int rc = -ENOENT;

	if (f == NULL)
		return -errno;
	/* Whole lines, however long: never a path cut short. */
	while (rc == -ENOENT && getline(&line, &cap, f) > 0) {
		/* id:controllers:path, the v2 one with no controllers. */
		p = line;
		(void)strsep(&p, ":");
		ctls = strsep(&p, ":");
		path = p != NULL ? strsep(&p, "\n") : NULL;
		if (ctls == NULL || path == NULL)
			continue;
		if (controller == NULL ? *ctls != '\0' : !mountinfo_lists(ctls, controller))
			continue;
		rc = strlcpy(out, path, len) < len ? 0 : -ENAMETOOLONG;
	}
	free(line);
	fclose(f);
	return rc;
}
