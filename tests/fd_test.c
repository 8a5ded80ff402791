/*
 * fd_close_except closes every descriptor but those kept, whatever its
 * number: with close_range, and where close_range is missing (before
 * Linux 5.9) or refused, by the list in /proc/self/fd, and where that
 * cannot be read either, up to the hard limit. The highest descriptor
 * the hard limit allows, opened before the soft limit was lowered, is
 * closed too: a fallback bounded by the soft limit (sysconf), or by
 * 65535, would leave it. (Not above 65535 here: raising the hard limit
 * takes CAP_SYS_RESOURCE, which this machine's root lacks.)
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "src/core/fd.h"

#ifndef SYS_close_range
#define SYS_close_range 436
#endif


/* close_range refused with ENOSYS, as a kernel before 5.9 answers. */
static int
no_close_range(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
		    offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_close_range, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { sizeof(f) / sizeof(f[0]), f };

	return prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 &&
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) == 0 ? 0 : -1;
}

/*
 * In a child: descriptors 5, 40 and the highest the hard limit allows
 * open (above the soft limit, lowered after it was opened), 40 kept; then
 * fd_close_except, the way given. Exits 0 when exactly 0, 1, 2 and 40 are
 * left among those.
 */
static int
closes_all_but_kept(int how)
{
	const int keep[] = { 0, 1, 2, 40 };
	struct rlimit rl;
	int status, high;
	pid_t pid;

	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		if (getrlimit(RLIMIT_NOFILE, &rl) != 0 ||
		    rl.rlim_max == RLIM_INFINITY || rl.rlim_max < 2048)
			_exit(99);
		high = (int)rl.rlim_max - 1;
		rl.rlim_cur = rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &rl) != 0 || dup2(2, 5) != 5 ||
		    dup2(2, 40) != 40 || dup2(2, high) != high)
			_exit(100);
		rl.rlim_cur = 1024;
		if (setrlimit(RLIMIT_NOFILE, &rl) != 0)
			_exit(100);
		if (how >= 1 && no_close_range() != 0)
			_exit(101);
		/* No /proc: a mount namespace of its own, /proc unmounted. */
		if (how == 2 && (unshare(CLONE_NEWNS) != 0 ||
		    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0 ||
		    umount2("/proc", MNT_DETACH) != 0))
			_exit(102);
		fd_close_except(keep, 4);
		_exit(fcntl(5, F_GETFD) == -1 && fcntl(high, F_GETFD) == -1 &&
		    fcntl(40, F_GETFD) >= 0 && fcntl(2, F_GETFD) >= 0 ? 0 : 1);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	return WEXITSTATUS(status);
}

static void
with_close_range(void **state)
{
	(void)state;
	assert_int_equal(closes_all_but_kept(0), 0);
}

static void
without_close_range_by_proc(void **state)
{
	(void)state;
	assert_int_equal(closes_all_but_kept(1), 0);
}

static void
without_close_range_or_proc_up_to_the_hard_limit(void **state)
{
	(void)state;
	assert_int_equal(closes_all_but_kept(2), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(with_close_range),
		cmocka_unit_test(without_close_range_by_proc),
		cmocka_unit_test(without_close_range_or_proc_up_to_the_hard_limit),
	};

	return cmocka_run_group_tests_name("fd", tests, NULL, NULL);
}
