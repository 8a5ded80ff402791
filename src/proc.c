#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#ifdef __linux__
#include <sys/syscall.h>  /* SYS_pidfd_open */
#endif
#include <sys/wait.h>
#include <unistd.h>

#include "src/clock.h"
#include "src/proc.h"

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
