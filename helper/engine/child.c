#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#ifdef __linux__
#include <linux/close_range.h>
#include <linux/sched.h>
#include <sys/socket.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#endif

#include "helper/engine/child.h"
#include "src/core/wire.h"
#include "src/core/fd.h"
#include "src/core/proc.h"
#ifdef __linux__
#include "helper/backend/caps.h"
#include "helper/backend/cgroup.h"
#include "helper/backend/landlock.h"
#include "helper/backend/mountns.h"
#include "helper/backend/seccomp.h"
#endif

static _Noreturn void
fail(int errfd, enum confine_step step, enum op op, int err)
{
	unsigned char rec[CHILD_ERR_LEN];
	struct wire_buf b = WIRE_BUF_FIXED(rec);

	wire_put_u32(&b, (uint32_t)step);
	wire_put_u32(&b, (uint32_t)op);
	wire_put_u32(&b, (uint32_t)err);
	if (write(errfd, rec, sizeof(rec)) != (ssize_t)sizeof(rec)) {
		/* Nothing left to tell it with: the exit status stands alone. */
	}
	_exit(127);
}

enum confine_step
child_err_decode(const unsigned char rec[CHILD_ERR_LEN], enum op *op,
    int *err)
{
	struct wire_rd r = WIRE_RD(rec, CHILD_ERR_LEN);
	enum confine_step step = wire_get_step(&r);
	uint32_t o = wire_get_u32(&r);

	*op = o <= OP_LAST ? (enum op)o : OP_NONE;
	*err = (int)wire_get_u32(&r);
	return step;
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
place_stdio(const int want[3], int *errfd, bool unshare)
{
	int src[3], keep[4], i, moved;

#ifdef __linux__
	/* Our own table first, a copy of the one we shared (child_start). */
	if (unshare && syscall(SYS_close_range, ~0u, ~0u,
	    CLOSE_RANGE_UNSHARE) != 0)
		return -errno;
#else
	(void)unshare;
#endif
	/*
	 * Nothing else is kept: closed first, it leaves room for the copies
	 * below. Without a shepherd this table is the helper's, which may be
	 * at its descriptor limit, and a spare slot is not to be had.
	 */
	for (i = 0; i < 3; i++)
		keep[i] = want[i];
	keep[3] = *errfd;
	fd_close_except(keep, 4);
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
	sigset_t none;

	proc_signals_default();
	sigemptyset(&none);
	return sigprocmask(SIG_SETMASK, &none, NULL) == 0 ? 0 : -errno;
}

/*
 * The Linux backend's first half, while the process may still change its
 * mounts: its own read-only view of the file system, and a bounding set
 * that exec cannot refill.
 */
static int
confine_view(const struct child_plan *p, enum op *op)
{
#ifdef __linux__
	int rc;

	if (p->backend != CONFINE_BACKEND_LANDLOCK)
		return 0;
	/*
	 * No namespace can be made: no view. The bounding set dropped where
	 * the helper may (root in a container, with CAP_SETPCAP); where it
	 * may not, no_new_privs, set with Landlock, keeps exec from gaining
	 * a capability all the same.
	 */
	if (p->bare) {
		*op = OP_CAPBSET_DROP;
		rc = geteuid() == 0 ? caps_drop_bounding() : 0;
		return rc == -EPERM ? 0 : rc;
	}
	if ((rc = mountns_unshare(op)) != 0 ||
	    (rc = mountns_apply(&p->view, NULL, op)) != 0)
		return rc;
	*op = OP_CAPBSET_DROP;
	return caps_drop_bounding();
#else
	(void)p;
	(void)op;
	return 0;
#endif
}

/* Then, once the job has its own uid: no capability at all. */
static int
confine_caps(const struct child_plan *p)
{
#ifdef __linux__
	if (p->backend == CONFINE_BACKEND_LANDLOCK)
		return caps_clear();
#endif
	(void)p;
	return 0;
}

#ifdef __linux__
/*
 * The filter's listener to the job's init, on errfd (a seqpacket socket
 * then). Not by SCM_RIGHTS: sendmsg is one of the calls the filter now
 * sends to that very listener, which no one would answer. Made in the
 * table we share with the init (shared, child_start), it is the init's
 * already: named ('S'), and left to place_stdio to close in our copy of
 * it. Else its number, for the init to take (pidfd_getfd, 'L'), then we
 * wait for its word, and ours is closed.
 */
static int
send_listener(int errfd, int listener, bool shared)
{
	unsigned char msg[1 + sizeof(int)] = { shared ? 'S' : 'L' };
	ssize_t n;
	char word;

	/*
	 * Ours to take: this copy of the init's memory came with the init's
	 * "not dumpable", which an init without capabilities (a user
	 * namespace's, as another uid) could not get past. An exec would make
	 * us dumpable as well; our memory is no longer the init's.
	 */
	if (!shared && prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) != 0) {
		close(listener);
		return -errno;
	}
	memcpy(msg + 1, &listener, sizeof(int));
	n = write(errfd, msg, sizeof(msg));
	if (shared)
		return n == (ssize_t)sizeof(msg) ? 0 : n < 0 ? -errno : -EIO;
	if (n == (ssize_t)sizeof(msg))
		do
			n = read(errfd, &word, 1);
		while (n < 0 && errno == EINTR);
	close(listener);
	return n == 1 ? 0 : n < 0 ? -errno : -EIO;
}
#endif

/* The rest: Landlock and seccomp. */
static int
confine(const struct child_plan *p, int errfd, enum op *op)
{
	int rc = 0;
#ifdef __linux__
	int listener = -1;
#endif

	switch (p->backend) {
	case CONFINE_BACKEND_LANDLOCK:
#ifdef __linux__
		/*
		 * Without Landlock (a kernel without it, or ABI 1 where it
		 * would refuse every rename across directories) its namespaces
		 * and view hold instead (plan.c): no_new_privs all the same.
		 */
		if (p->landlock != NULL) {
			rc = landlock_apply(p->landlock, p->policy, op);
		} else {
			*op = OP_NO_NEW_PRIVS;
			rc = prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 ? 0 : -errno;
		}
		if (rc == 0) {
			*op = p->seccomp->listener ? OP_SECCOMP_LISTENER :
			    OP_SECCOMP;
			rc = seccomp_apply(p->seccomp, &listener);
		}
		if (rc == 0 && listener >= 0)
			rc = send_listener(errfd, listener, p->files_shared);
#else
		(void)errfd;
		(void)op;
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

static int
set_limit(int resource, int64_t soft, int64_t hard)
{
	struct rlimit rl;

	rl.rlim_cur = (rlim_t)soft;
	rl.rlim_max = (rlim_t)hard;
	return setrlimit(resource, &rl) == 0 ? 0 : -errno;
}

/* Soft and hard alike, so the job cannot raise them again. */
static int
apply_limits(const struct child_plan *p)
{
	const struct confine_limits *l = p->limits;
	int rc = 0;

	if (l == NULL)
		return 0;
	/* One more second of hard limit: SIGXCPU first, not a bare SIGKILL. */
	if (rc == 0 && l->cpu_seconds > 0)
		rc = set_limit(RLIMIT_CPU, l->cpu_seconds, l->cpu_seconds + 1);
	if (rc == 0 && l->address_space > 0)
		rc = set_limit(RLIMIT_AS, l->address_space, l->address_space);
	if (rc == 0 && l->open_files > 0)
		rc = set_limit(RLIMIT_NOFILE, l->open_files, l->open_files);
	if (rc == 0 && l->file_size > 0)
		rc = set_limit(RLIMIT_FSIZE, l->file_size, l->file_size);
#ifdef RLIMIT_NPROC
	if (rc == 0 && l->processes > 0 && p->rlimit_nproc)
		rc = set_limit(RLIMIT_NPROC, l->processes, l->processes);
#endif
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
	enum op op = OP_NONE;
	int rc;

	/*
	 * Its own session, and so its own group: on Linux always, where the
	 * job leads both; the group is the shepherd's only where kill(-pgid)
	 * is the one proof (macOS), and made there before.
	 */
	if (p->own_session && setsid() < 0)
		fail(errfd, CONFINE_STEP_SIGNALS, OP_SETSID, errno);
	if ((rc = reset_signals()) != 0)
		fail(errfd, CONFINE_STEP_SIGNALS, OP_SIGMASK, -rc);
#ifdef __linux__
	if ((rc = cgroup_join(p->cg_procs)) != 0)
		fail(errfd, CONFINE_STEP_LIMITS, OP_CGROUP_JOIN, -rc);
#endif
	/*
	 * Sharing the init's table, our stdio is placed once the filter's
	 * listener is made there, in our own copy of it (below).
	 */
	if (!p->files_shared && (rc = place_stdio(p->fd, &errfd, false)) != 0)
		fail(errfd, CONFINE_STEP_STDIO, OP_STDIO, -rc);
	/*
	 * A client's job: its groups and gid now, and its uid for the paths
	 * the view resolves; the uid itself once the view is made (setting it
	 * takes the capabilities the view needs).
	 */
	if (p->become != NULL && (rc = ident_start(p->become, &op)) != 0)
		fail(errfd, CONFINE_STEP_IDENTITY, op, -rc);
	/* Under an init of its own, it made the view: the namespaces are its. */
	if (!p->in_init && (rc = confine_view(p, &op)) != 0)
		fail(errfd, CONFINE_STEP_CONFINE, op, -rc);
	if (p->become != NULL && (rc = ident_finish(p->become, &op)) != 0)
		fail(errfd, CONFINE_STEP_IDENTITY, op, -rc);
	if ((rc = confine_caps(p)) != 0)
		fail(errfd, CONFINE_STEP_CONFINE, OP_CAPSET, -rc);
	/*
	 * The scratch root must be the job's to write, as it now is (a root
	 * job without capabilities is any user): refused here, rather than
	 * every write failing later.
	 */
	if (p->policy->scratch != NULL && faccessat(AT_FDCWD,
	    p->policy->scratch, W_OK | X_OK, AT_EACCESS) != 0)
		fail(errfd, CONFINE_STEP_IDENTITY, OP_SCRATCH_ACCESS, errno);
	/* In the view, as the job's own user: the writable root's copy. */
	if (chdir(p->cwd) != 0)
		fail(errfd, CONFINE_STEP_CWD, OP_CHDIR, errno);
	if ((rc = confine(p, errfd, &op)) != 0)
		fail(errfd, CONFINE_STEP_CONFINE, op, -rc);
	if (p->files_shared && (rc = place_stdio(p->fd, &errfd, true)) != 0)
		fail(errfd, CONFINE_STEP_STDIO, OP_STDIO, -rc);
	if (p->path != p->exe && (rc = check_program(p->exe)) != 0)
		fail(errfd, CONFINE_STEP_EXEC, OP_PROGRAM, -rc);
	if ((rc = apply_limits(p)) != 0)
		fail(errfd, CONFINE_STEP_LIMITS, OP_SETRLIMIT, -rc);
#ifdef __linux__
	/*
	 * A shepherd that dies takes its job with it: it alone signals the
	 * job's group. Last, as a change of credentials clears it; a parent
	 * gone already would not send it, so that is checked after.
	 */
	if (p->die_with_parent) {
		if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0)
			fail(errfd, CONFINE_STEP_SIGNALS, OP_PDEATHSIG, errno);
		if (getppid() != p->parent)
			fail(errfd, CONFINE_STEP_SIGNALS, OP_PDEATHSIG, ESRCH);
	}
#endif
	execve(p->path, p->argv, p->envp);
	fail(errfd, CONFINE_STEP_EXEC, OP_EXECVE, errno);
}

/*
 * Starting the job. Like posix_spawn's child it shares our memory until
 * it execs (CLONE_VM | CLONE_VFORK), on a stack of its own: no copy of
 * the address space to make, fault in and tear down at exec; and, as with
 * every clone3 start here (CLONE_VFORK), the exec's result is on errfd's
 * pipe when this returns, so the caller can read it without waiting. It is
 * born in its v2 cgroup where the kernel can (CLONE_INTO_CGROUP, Linux
 * 5.7): no migration write, whose RCU wait made the tail of a start. The
 * child runs only the child's setup, which needs nothing of what fork()
 * fixes up in libc and only what it may share with its suspended parent.
 * The one exception: a child that hands its init its filter's listener
 * waits for the init's word, so it is a plain copy, not held for.
 *
 * The CLONE_VM start is x86-64 only (a CLONE_VM child cannot return into
 * libc from clone3, so it takes a trampoline), and not under sanitizers,
 * whose runtimes cannot follow such a child: those fork, still into the
 * cgroup where they can, else joining it by cgroup.procs.
 */
#if defined(__linux__) && defined(CLONE_INTO_CGROUP)
#define HAVE_CLONE3 1
#if defined(__x86_64__) && !defined(__SANITIZE_ADDRESS__) && \
    !defined(__SANITIZE_THREAD__)
#define HAVE_CLONE_VM 1
#endif
#endif

#ifdef HAVE_CLONE_VM
struct start {
	const struct child_plan *plan;
	int errfd;
};

#define CHILD_STACK (256 * 1024)

static _Noreturn void
child_entry(void *arg)
{
	struct start *st = arg;

	child_exec(st->plan, st->errfd);
}

/* clone3 whose child calls fn(arg) on the new stack and never returns. */
static long
clone3_call(struct clone_args *ca, void (*fn)(void *), void *arg)
{
	register long r12 __asm__("r12") = (long)fn;
	register long r13 __asm__("r13") = (long)arg;
	long ret;

	__asm__ volatile(
	    "syscall\n\t"
	    "test %%rax, %%rax\n\t"
	    "jnz 1f\n\t"
	    "xor %%ebp, %%ebp\n\t"
	    "mov %%r13, %%rdi\n\t"
	    "and $-16, %%rsp\n\t"
	    "call *%%r12\n\t"
	    "hlt\n"
	    "1:"
	    : "=a"(ret)
	    : "0"((long)SYS_clone3), "D"(ca), "S"(sizeof(*ca)), "r"(r12), "r"(r13)
	    : "rcx", "r11", "memory");
	return ret;
}
#endif

#ifdef HAVE_CLONE_VM
/*
 * Whether a job may share our descriptor table until it places its stdio
 * (which unshares it: CLOSE_RANGE_UNSHARE, Linux 5.9). Asked by unsharing
 * our own, which nothing shares.
 */
static bool
shares_files(void)
{
	static int unshares = -1;

	if (unshares < 0)
		unshares = syscall(SYS_close_range, ~0u, ~0u,
		    CLOSE_RANGE_UNSHARE) == 0;
	return unshares == 1;
}
#endif

pid_t
child_start(const struct child_plan *plan, int errfd)
{
	struct child_plan mine = *plan;
#ifdef HAVE_CLONE3
	struct clone_args ca;
	long pid;
#endif
#ifdef HAVE_CLONE_VM
	struct start st = { &mine, errfd };
	void *stack;
#endif

	mine.files_shared = false;
#ifdef HAVE_CLONE3
	/*
	 * A child that hands its filter's listener to us waits for our word
	 * before it execs (send_listener): it must neither hold us back
	 * (CLONE_VFORK) nor share our memory meanwhile. Unless it shares our
	 * descriptor table, where its listener is ours as it is made.
	 */
	bool listens = plan->backend == CONFINE_BACKEND_LANDLOCK &&
	    plan->seccomp != NULL && plan->seccomp->listener;

#ifdef HAVE_CLONE_VM
	mine.files_shared = listens && shares_files();
#endif
	memset(&ca, 0, sizeof(ca));
	ca.exit_signal = SIGCHLD;
	if (plan->cg_dir >= 0) {
		ca.flags |= CLONE_INTO_CGROUP;
		ca.cgroup = (uint64_t)plan->cg_dir;
		/* Born in its v2 cgroup: nothing to join there. */
		mine.cg_procs[0] = -1;
	}
#ifdef HAVE_CLONE_VM
	stack = listens && !mine.files_shared ? MAP_FAILED :
	    mmap(NULL, CHILD_STACK, PROT_READ | PROT_WRITE, MAP_PRIVATE |
	    MAP_ANONYMOUS | MAP_STACK, -1, 0);
	if (stack != MAP_FAILED) {
		ca.flags |= CLONE_VM | CLONE_VFORK |
		    (mine.files_shared ? CLONE_FILES : 0);
		ca.stack = (uint64_t)(uintptr_t)stack;
		ca.stack_size = CHILD_STACK;
		/* Back here once the job has exec'd or exited. */
		pid = clone3_call(&ca, child_entry, &st);
		munmap(stack, CHILD_STACK);
		if (pid >= 0)
			return (pid_t)pid;
		ca.flags &= ~(uint64_t)(CLONE_VM | CLONE_VFORK | CLONE_FILES);
		ca.stack = 0;
		ca.stack_size = 0;
		if (pid != -ENOSYS && pid != -E2BIG && pid != -EINVAL) {
			errno = (int)-pid;
			return -1;
		}
	}
#endif
	/* A copy of us: a listener it makes is handed over (send_listener). */
	mine.files_shared = false;
	if (!listens)
		ca.flags |= CLONE_VFORK;
	pid = syscall(SYS_clone3, &ca, sizeof(ca));
	if (pid == 0)
		child_exec(&mine, errfd);
	if (pid > 0)
		return (pid_t)pid;
	/* An older kernel: fork, and join by cgroup.procs. */
	if (errno != ENOSYS && errno != E2BIG && errno != EINVAL)
		return -1;
	mine.cg_procs[0] = plan->cg_procs[0];
#endif
	pid_t child = fork();

	if (child == 0)
		child_exec(&mine, errfd);
	return child;
}
