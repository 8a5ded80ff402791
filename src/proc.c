#include <errno.h>
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
