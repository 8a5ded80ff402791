#include <errno.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/syscall.h>
#endif

#include "src/core/fd.h"
#include "src/core/sigpipe.h"

static volatile sig_atomic_t write_end = -1;

static void
on_signal(int sig)
{
	unsigned char b = (unsigned char)sig;
	int saved = errno;

	if (write(write_end, &b, 1) < 0) {
		/* Full: a wake-up is pending already. Closed: no one asks. */
	}
	errno = saved;
}

int
sigpipe_open(const int *sigs, size_t n, int sa_flags)
{
	struct sigaction sa;
	int p[2], rc;
	size_t i;

	if ((rc = fd_pipe(p)) != 0)
		return rc;
	if ((rc = fd_nonblock(p[0])) != 0 || (rc = fd_nonblock(p[1])) != 0) {
		close(p[0]);
		close(p[1]);
		return rc;
	}
	write_end = p[1];
	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = SIG_IGN;
	(void)sigaction(SIGPIPE, &sa, NULL);
	sa.sa_handler = on_signal;
	sa.sa_flags = sa_flags;
	for (i = 0; i < n; i++)
		(void)sigaction(sigs[i], &sa, NULL);
	return p[0];
}

void
sigpipe_drain(int fd, void (*fn)(int sig, void *arg), void *arg)
{
	unsigned char buf[64];
	ssize_t n, i;

	while ((n = read(fd, buf, sizeof(buf))) > 0 ||
	    (n < 0 && errno == EINTR))
		for (i = 0; fn != NULL && i < n; i++)
			fn(buf[i], arg);
}

void
sigpipe_close(int fd)
{
	int w = write_end;

	write_end = -1;
	if (w >= 0)
		close(w);
	if (fd >= 0)
		close(fd);
}

void
sigpipe_hold(sigset_t *old)
{
	sigset_t all;

	sigfillset(&all);
	(void)sigprocmask(SIG_SETMASK, &all, old);
}

void
sigpipe_release(bool child, const sigset_t *old)
{
	if (child)
		write_end = -1;
	(void)sigprocmask(SIG_SETMASK, old, NULL);
}

/* After a fork or clone between the two: pid, and the call's errno kept. */
static pid_t
released(pid_t pid, const sigset_t *old)
{
	int err = errno;

	sigpipe_release(pid == 0, old);
	errno = err;
	return pid;
}

pid_t
sigpipe_fork(void)
{
	sigset_t old;

	sigpipe_hold(&old);
	return released(fork(), &old);
}

#ifdef __linux__
pid_t
sigpipe_clone(unsigned long flags)
{
	sigset_t old;

	sigpipe_hold(&old);
	return released((pid_t)syscall(SYS_clone, flags | SIGCHLD, 0, NULL,
	    NULL, 0), &old);
}
#endif
