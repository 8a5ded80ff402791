#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>

#include "src/proc.h"

void
proc_reap(pid_t pid, int *status)
{
	while (waitpid(pid, status, 0) < 0 && errno == EINTR)
		;
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
