#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include "helper/child.h"
#include "src/endian.h"
#include "src/fd.h"
#ifdef __linux__
#include "helper/landlock.h"
#include "helper/seccomp.h"
#endif

static _Noreturn void
fail(int errfd, enum confine_step step, int err)
{
	unsigned char rec[CHILD_ERR_LEN];

	be32enc(rec, (uint32_t)step);
	be32enc(rec + 4, (uint32_t)err);
	if (write(errfd, rec, sizeof(rec)) != (ssize_t)sizeof(rec)) {
		/* Nothing left to tell it with: the exit status stands alone. */
	}
	_exit(127);
}

enum confine_step
child_err_decode(const unsigned char rec[CHILD_ERR_LEN], int *err)
{
	uint32_t step = be32dec(rec);

	*err = (int)be32dec(rec + 4);
	return step <= CONFINE_STEP_EXEC ? (enum confine_step)step :
	    CONFINE_STEP_EXEC;
}

/* A copy of fd at 3 or above, close-on-exec; -1 opens /dev/null. */
static int
lift(int fd)
{
	int lifted;

	if (fd >= 0)
		return fcntl(fd, F_DUPFD_CLOEXEC, 3);
	fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (fd < 0 || fd >= 3)
		return fd;
	/* It took a free slot below 3: move it up before stdio is placed. */
	lifted = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	close(fd);
	return lifted;
}

static int
place_stdio(const int want[3], int *errfd)
{
	int src[3], keep[4], i, moved;

	if (*errfd < 3) {
		if ((moved = fcntl(*errfd, F_DUPFD_CLOEXEC, 3)) < 0)
			return -errno;
		*errfd = moved;
	}
	for (i = 0; i < 3; i++)
		if ((src[i] = lift(want[i])) < 0)
			return -errno;
	for (i = 0; i < 3; i++)
		if (dup2(src[i], i) < 0)
			return -errno;
	keep[0] = 0;
	keep[1] = 1;
	keep[2] = 2;
	keep[3] = *errfd;
	fd_close_except(keep, 4);
	return 0;
}

static int
reset_signals(void)
{
	struct sigaction sa;
	sigset_t none;
	int sig;

	sa.sa_handler = SIG_DFL;
	sa.sa_flags = 0;
	sigemptyset(&sa.sa_mask);
	/* SIGKILL, SIGSTOP and the C library's own signals refuse: fine. */
	for (sig = 1; sig < NSIG; sig++)
		(void)sigaction(sig, &sa, NULL);
	sigemptyset(&none);
	return sigprocmask(SIG_SETMASK, &none, NULL) == 0 ? 0 : -errno;
}

static int
confine(const struct child_plan *p)
{
	int rc = 0;

	switch (p->backend) {
	case CONFINE_BACKEND_LANDLOCK:
#ifdef __linux__
		rc = landlock_apply(p->landlock, p->policy);
		if (rc == 0)
			rc = seccomp_apply(p->seccomp);
#else
		rc = -ENOTSUP;
#endif
		break;
	case CONFINE_BACKEND_SEATBELT:
		/* The launcher confines; nothing to do in this process. */
		break;
	case CONFINE_BACKEND_NONE:
		break;
	case CONFINE_BACKEND_AUTO:
	default:
		rc = -ENOTSUP;
		break;
	}
	return rc;
}

/*
 * Under a launcher, exec succeeds whatever the job's program is, and the
 * launcher's own failure is only an exit status. Check the program here,
 * unconfined, so that a missing one reads as an exec error everywhere.
 */
static int
check_program(const char *exe)
{
	struct stat st;

	if (stat(exe, &st) != 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EACCES;
	return access(exe, X_OK) == 0 ? 0 : -errno;
}

void
child_exec(const struct child_plan *p, int errfd)
{
	int rc;

	if ((rc = reset_signals()) != 0)
		fail(errfd, CONFINE_STEP_SIGNALS, -rc);
	if ((rc = place_stdio(p->fd, &errfd)) != 0)
		fail(errfd, CONFINE_STEP_STDIO, -rc);
	if (chdir(p->cwd) != 0)
		fail(errfd, CONFINE_STEP_CWD, errno);
	if ((rc = confine(p)) != 0)
		fail(errfd, CONFINE_STEP_CONFINE, -rc);
	if (p->path != p->exe && (rc = check_program(p->exe)) != 0)
		fail(errfd, CONFINE_STEP_EXEC, -rc);
	execve(p->path, p->argv, p->envp);
	fail(errfd, CONFINE_STEP_EXEC, errno);
}
