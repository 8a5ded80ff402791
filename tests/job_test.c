/*
 * Running one job, for real, with the Landlock backend (and `none` for the
 * unconfined half of each pair): settlement, the child's setup, write and
 * network confinement, fail-closed refusals, and the injected failures of
 * the seam.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/filter.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "src/core/fd.h"
#include "tests/contract.h"
#include "tests/jobrun.h"
#include "tests/testutil.h"

#define LL CONFINE_BACKEND_LANDLOCK
#define NONE CONFINE_BACKEND_NONE

static void
dev_null_stays_writable(void **state)
{
	struct jr_dirs *d = *state;
	struct jr j;

	jr_init(&j, LL, d->scratch, "write", "/dev/null", NULL);
	jr_run(&j);
	assert_outcome(&j, CONFINE_COMPLETED, CONFINE_REASON_NONE);
	jr_free(&j);
}

static void
named_device_is_writable_and_others_are_not(void **state)
{
	struct jr_dirs *d = *state;
	const char *devs[] = { "/dev/zero", NULL };
	struct jr j;

	jr_init(&j, LL, d->scratch, "write", "/dev/full", NULL);
	jr_run(&j);
	assert_outcome(&j, CONFINE_FAILED, CONFINE_REASON_EXIT_CODE);
	assert_int_equal(j.r.exit_code, EACCES);
	jr_free(&j);
	jr_init(&j, LL, d->scratch, "write", "/dev/zero", NULL);
	j.spec.devices = devs;
	jr_run(&j);
	assert_outcome(&j, CONFINE_COMPLETED, CONFINE_REASON_NONE);
	jr_free(&j);
	/* A device that is not a device node is refused before anything. */
	devs[0] = d->scratch;
	jr_init(&j, LL, d->scratch, "exit", "0", NULL);
	j.spec.devices = devs;
	jr_run(&j);
	assert_int_equal(j.rc, -EINVAL);
	jr_free(&j);
}

static void
a_signal_is_failed_signal(void **state)
{
	struct jr_dirs *d = *state;
	char sig[8];
	struct jr j;

	snprintf(sig, sizeof(sig), "%d", SIGUSR1);
	jr_init(&j, LL, d->scratch, "signal", sig, NULL);
	jr_run(&j);
	assert_outcome(&j, CONFINE_FAILED, CONFINE_REASON_SIGNAL);
	assert_int_equal(j.r.signal, SIGUSR1);
	assert_int_equal(j.r.exit_code, -1);
	jr_free(&j);
}

static void
grace_sends_sigterm_first(void **state)
{
	struct jr_dirs *d = *state;
	struct jr j;

	jr_init(&j, LL, d->scratch, "sleep", "30000", NULL);
	j.spec.deadline_ms = 100;
	j.spec.grace_ms = 5000;
	jr_run(&j);
	assert_outcome(&j, CONFINE_CANCELLED, CONFINE_REASON_DEADLINE);
	assert_int_equal(j.r.signal, SIGTERM);
	jr_free(&j);
}

static void
sigterm_ignored_is_killed_after_grace(void **state)
{
	struct jr_dirs *d = *state;
	struct jr j;

	jr_init(&j, LL, d->scratch, "ignore-term", "30000", NULL);
	/* Only once it ignores SIGTERM (and has said its pid) is this a test. */
	j.spec.deadline_ms = TU_DEADLINE_AFTER_START_MS;
	j.spec.grace_ms = 100;
	jr_run(&j);
	assert_outcome(&j, CONFINE_CANCELLED, CONFINE_REASON_DEADLINE);
	assert_int_equal(j.r.signal, SIGKILL);
	assert_true(j.elapsed_ms >= TU_DEADLINE_AFTER_START_MS + 100);
	assert_true(tu_gone(jr_pid(&j, 0)));
	jr_free(&j);
}

static void
a_job_faster_than_its_deadline_completes(void **state)
{
	struct jr_dirs *d = *state;
	struct jr j;

	jr_init(&j, LL, d->scratch, "exit", "0", NULL);
	j.spec.deadline_ms = 60000;
	jr_run(&j);
	assert_outcome(&j, CONFINE_COMPLETED, CONFINE_REASON_NONE);
	jr_free(&j);
}

static void
missing_program_is_failed_exec_enoent(void **state)
{
	struct jr_dirs *d = *state;
	struct jr j;

	jr_init(&j, LL, d->scratch, NULL);
	j.spec.exe = "/nonexistent/program";
	jr_run(&j);
	assert_outcome(&j, CONFINE_FAILED, CONFINE_REASON_EXEC);
	assert_int_equal(j.r.error, ENOENT);
	assert_int_equal(j.r.step, CONFINE_STEP_EXEC);
	assert_true(j.r.pid > 0);
	jr_free(&j);
}

static void
program_without_exec_permission_is_failed_exec_eacces(void **state)
{
	struct jr_dirs *d = *state;
	char *path = tu_join(d->scratch, "plain");
	struct jr j;
	int fd;

	fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	assert_true(fd >= 0);
	close(fd);
	jr_init(&j, LL, d->scratch, NULL);
	j.spec.exe = path;
	jr_run(&j);
	assert_outcome(&j, CONFINE_FAILED, CONFINE_REASON_EXEC);
	assert_int_equal(j.r.error, EACCES);
	assert_int_equal(j.r.step, CONFINE_STEP_EXEC);
	jr_free(&j);
	free(path);
}

static void
missing_cwd_is_failed_exec_at_the_cwd_step(void **state)
{
	struct jr_dirs *d = *state;
	struct jr j;

	jr_init(&j, LL, d->scratch, "exit", "0", NULL);
	j.spec.cwd = "/nonexistent/dir";
	jr_run(&j);
	assert_outcome(&j, CONFINE_FAILED, CONFINE_REASON_EXEC);
	assert_int_equal(j.r.error, ENOENT);
	assert_int_equal(j.r.step, CONFINE_STEP_CWD);
	jr_free(&j);
}

/* A descriptor that is not open: the stdio step fails with EBADF. */
static void
closed_stdio_descriptor_is_failed_exec_at_the_stdio_step(void **state)
{
	struct jr_dirs *d = *state;
	const int closed = 1000;  /* above anything the shepherd opens */
	struct jr j;

	assert_int_equal(fcntl(closed, F_GETFD), -1);
	assert_int_equal(errno, EBADF);
	jr_init(&j, LL, d->scratch, "exit", "0", NULL);
	j.spec.stdin_fd = closed;
	jr_run(&j);
	assert_outcome(&j, CONFINE_FAILED, CONFINE_REASON_EXEC);
	assert_int_equal(j.r.error, EBADF);
	assert_int_equal(j.r.step, CONFINE_STEP_STDIO);
	jr_free(&j);
}

/* Refused before anything is spawned: the marker is never written. */
static void
bad_input_is_invalid_before_any_spawn(void **state)
{
	struct jr_dirs *d = *state;
	char *marker = tu_join(d->outside, "marker"), *file;
	struct jr j;

	jr_init(&j, NONE, d->scratch, "write", marker, NULL);
	j.spec.exe = "tests/fixture";
	jr_run(&j);
	assert_int_equal(j.rc, -EINVAL);
	assert_non_null(j.why);
	jr_free(&j);

	jr_init(&j, LL, "relative/scratch", "write", marker, NULL);
	jr_run(&j);
	assert_int_equal(j.rc, -EINVAL);
	jr_free(&j);

	jr_init(&j, LL, NULL, "write", marker, NULL);
	jr_run(&j);
	assert_int_equal(j.rc, -EINVAL);
	jr_free(&j);

	jr_init(&j, LL, "/nonexistent/scratch", "write", marker, NULL);
	jr_run(&j);
	assert_int_equal(j.rc, -ENOENT);
	jr_free(&j);

	file = tu_join(d->outside, "file");
	assert_int_equal(close(open(file, O_WRONLY | O_CREAT | O_CLOEXEC, 0644)), 0);
	jr_init(&j, LL, file, "write", marker, NULL);
	jr_run(&j);
	assert_int_equal(j.rc, -ENOTDIR);
	jr_free(&j);

	assert_false(tu_exists(marker));
	free(marker);
	free(file);
}

static void
environment_is_empty_unless_given(void **state)
{
	struct jr_dirs *d = *state;
	struct jr j;

	assert_int_equal(setenv("CONFINE_TEST_SECRET", "leak", 1), 0);
	jr_init(&j, LL, d->scratch, "env", NULL);
	jr_run(&j);
	assert_outcome(&j, CONFINE_COMPLETED, CONFINE_REASON_NONE);
	assert_string_equal(j.out, "");
	jr_free(&j);

	jr_init(&j, LL, d->scratch, "env", NULL);
	j.envp[0] = "A=1";
	j.envp[1] = "B=two words";
	j.spec.envp = j.envp;
	jr_run(&j);
	assert_outcome(&j, CONFINE_FAILED, CONFINE_REASON_EXIT_CODE);
	assert_int_equal(j.r.exit_code, 2);
	assert_string_equal(j.out, "A=1\nB=two words\n");
	jr_free(&j);
}

/* Descriptors the host left open, even without close-on-exec, stay home. */
static void
only_stdio_is_inherited(void **state)
{
	struct jr_dirs *d = *state;
	int leak1 = open("/dev/null", O_RDONLY), leak2 = dup(leak1);
	struct jr j;

	assert_true(leak1 >= 0 && leak2 >= 0);
	jr_init(&j, LL, d->scratch, "fds", NULL);
	jr_run(&j);
	assert_outcome(&j, CONFINE_COMPLETED, CONFINE_REASON_NONE);
	assert_string_equal(j.out, "");
	jr_free(&j);
	close(leak1);
	close(leak2);
}

static void
stdio_goes_where_it_is_told(void **state)
{
	struct jr_dirs *d = *state;
	int in[2], err[2];
	char *errtext;
	struct jr j;

	assert_int_equal(fd_pipe(in), 0);
	assert_int_equal(fd_pipe(err), 0);
	assert_int_equal(write(in[1], "hello\n", 6), 6);
	close(in[1]);
	jr_init(&j, LL, d->scratch, "cat", NULL);
	j.spec.stdin_fd = in[0];
	j.spec.stderr_fd = err[1];
	jr_run(&j);
	close(in[0]);
	close(err[1]);
	errtext = tu_drain(err[0]);
	assert_outcome(&j, CONFINE_COMPLETED, CONFINE_REASON_NONE);
	assert_string_equal(j.out, "hello\n");
	assert_string_equal(errtext, "err\n");
	free(errtext);
	jr_free(&j);

	/* -1 everywhere: /dev/null, so stdin is empty at once. */
	jr_init(&j, LL, d->scratch, "cat", NULL);
	j.spec.stdout_fd = -1;
	jr_run(&j);
	assert_outcome(&j, CONFINE_COMPLETED, CONFINE_REASON_NONE);
	assert_string_equal(j.out, "");
	jr_free(&j);
}

static void
signals_are_default_and_unblocked(void **state)
{
	struct jr_dirs *d = *state;
	struct sigaction ign = { .sa_handler = SIG_IGN };
	sigset_t set, old;
	struct jr j;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigaddset(&set, SIGTERM);
	sigprocmask(SIG_BLOCK, &set, &old);
	sigaction(SIGINT, &ign, NULL);
	sigaction(SIGHUP, &ign, NULL);
	jr_init(&j, LL, d->scratch, "sigstate", NULL);
	jr_run(&j);
	sigprocmask(SIG_SETMASK, &old, NULL);
	ign.sa_handler = SIG_DFL;
	sigaction(SIGINT, &ign, NULL);
	sigaction(SIGHUP, &ign, NULL);
	assert_outcome(&j, CONFINE_COMPLETED, CONFINE_REASON_NONE);
	assert_string_equal(j.out, "");
	jr_free(&j);
}

/*
 * Its own session, and so its own group, which it leads: not ours (with
 * namespaces of its own, pid 2 of its own PID namespace). Where
 * kill(-pgid, 0) is the one proof (macOS's path) the group is the
 * shepherd's, whose pid is not the job's, in our session.
 */
static void
job_runs_in_its_own_process_group(void **state)
{
	struct jr_dirs *d = *state;
	struct job_env env = jr_env;
	long pid, pgid, sid;
	struct jr j;
	int macos;

	for (macos = 0; macos < 2; macos++) {
		env.group_proof_only = macos;
		jr_init(&j, LL, d->scratch, "ids", NULL);
		jr_run_env(&j, &env);
		assert_outcome(&j, CONFINE_COMPLETED, CONFINE_REASON_NONE);
		assert_int_equal(sscanf(j.out, "%ld %ld %ld", &pid, &pgid,
		    &sid), 3);
		/* We see it as its result says; it, in its namespace, as 2. */
		assert_int_equal(jr_pid(&j, 0), j.r.pid);
		if (env.ns && !macos) {
			assert_int_equal(j.r.pgid, j.r.pid);
			assert_int_equal(pid, 2);
			assert_int_equal(pgid, 2);
			assert_int_equal(sid, 2);
			jr_free(&j);
			continue;
		}
		assert_int_equal(pid, j.r.pid);
		assert_int_equal(pgid, j.r.pgid);
		assert_int_not_equal(pgid, getpgrp());
		if (macos) {
			assert_int_not_equal(pgid, pid);
			assert_int_equal(sid, getsid(0));
		} else {
			assert_int_equal(pgid, pid);
			assert_int_equal(sid, pid);
		}
		jr_free(&j);
	}
}

static void
cwd_defaults_to_the_scratch_root(void **state)
{
	struct jr_dirs *d = *state;
	char want[4096];
	struct jr j;

	jr_init(&j, LL, d->scratch, "cwd", NULL);
	jr_run(&j);
	assert_outcome(&j, CONFINE_COMPLETED, CONFINE_REASON_NONE);
	snprintf(want, sizeof(want), "%s\n", d->scratch);
	assert_string_equal(j.out, want);
	jr_free(&j);

	jr_init(&j, LL, d->scratch, "cwd", NULL);
	j.spec.cwd = d->outside;
	jr_run(&j);
	snprintf(want, sizeof(want), "%s\n", d->outside);
	assert_string_equal(j.out, want);
	jr_free(&j);
}

static void
rusage_and_wall_time_are_reported(void **state)
{
	struct jr_dirs *d = *state;
	struct jr j;

	jr_init(&j, LL, d->scratch, "sleep", "50", NULL);
	jr_run(&j);
	assert_outcome(&j, CONFINE_COMPLETED, CONFINE_REASON_NONE);
	assert_true(j.r.wall_us >= 50000);
	assert_true(j.r.max_rss_kib > 0);
	assert_true(j.r.user_us >= 0 && j.r.sys_us >= 0);
	jr_free(&j);
}

/* Fail closed: an ABI too old for the policy refuses, nothing runs. */
static void
landlock_abi_too_old_is_unsupported(void **state)
{
	struct jr_dirs *d = *state;
	char *marker = tu_join(d->scratch, "marker");
	struct job_env old = jr_env;
	struct jr j;

	/* Without namespaces: with them, older ABIs are compensated
	 * (reach_test's older_landlock_abis_are_compensated_in_namespaces). */
	old.ns = false;
	old.landlock_abi = 5;
	jr_init(&j, LL, d->scratch, "write", marker, NULL);
	jr_run_env(&j, &old);
	assert_int_equal(j.rc, -ENOTSUP);
	assert_non_null(strstr(j.why, "ABI"));
	assert_false(tu_exists(marker));
	jr_free(&j);

	old.landlock_abi = -ENOSYS;
	jr_init(&j, CONFINE_BACKEND_AUTO, d->scratch, "write", marker, NULL);
	jr_run_env(&j, &old);
	assert_int_equal(j.rc, -ENOTSUP);
	assert_false(tu_exists(marker));
	jr_free(&j);
	free(marker);
}

/* A job under env, requiring flag, refused saying why; nothing ran. */
static void
refused_for(const struct jr_dirs *d, const struct job_env *env,
    enum confine_backend b, unsigned flag, const char *why, const char *marker)
{
	struct jr j;

	jr_init(&j, b, d->scratch, "write", marker, NULL);
	j.spec.flags |= flag;
	jr_run_env(&j, env);
	assert_int_equal(j.rc, -ENOTSUP);
	assert_non_null(strstr(j.why, why));
	assert_false(tu_exists(marker));
	jr_free(&j);
}

/*
 * A minimum the host demands (CONFINE_REQUIRE_*): where the machine
 * cannot give it the job is refused, saying what, and nothing runs; where
 * it can, the job runs as ever.
 */
static void
a_requirement_the_machine_cannot_meet_refuses(void **state)
{
	struct jr_dirs *d = *state;
	char *marker = tu_join(d->scratch, "marker");
	struct job_env env;
	struct jr j;

	env = jr_env;
	env.ns = false;
	refused_for(d, &env, LL, CONFINE_REQUIRE_NAMESPACES,
	    "namespaces of its own were required", marker);
	env = jr_env;
	env.landlock_abi = -EOPNOTSUPP;
	refused_for(d, &env, LL, CONFINE_REQUIRE_LANDLOCK,
	    "Landlock was required", marker);
	refused_for(d, &jr_env, NONE, CONFINE_REQUIRE_LANDLOCK,
	    "backend none confines nothing", marker);

	/* Here, both are: it runs. */
	jr_init(&j, LL, d->scratch, "write", marker, NULL);
	j.spec.flags |= CONFINE_REQUIRE_LANDLOCK |
	    (jr_env.ns ? CONFINE_REQUIRE_NAMESPACES : 0);
	jr_run(&j);
	assert_int_equal(j.rc, 0);
	assert_outcome(&j, CONFINE_COMPLETED, CONFINE_REASON_NONE);
	assert_true(tu_exists(marker));
	jr_free(&j);
	free(marker);
}

/*
 * No namespace at all (a container's profile, user namespaces disabled):
 * refused, saying why and the waiver, unless the metadata is waived
 * (tests/cli/container_test.sh runs such jobs, waived, in a stand-in
 * container: a root job as 65534, which Bazel's sandbox cannot be).
 */
static void
no_namespace_at_all_needs_the_waiver(void **state)
{
	struct jr_dirs *d = *state;
	char *marker = tu_join(d->scratch, "marker");
	struct job_env env = jr_env;

	env.ns = false;
	env.view_ok = false;
	env.view_err = -EPERM;
	env.view_op = OP_UNSHARE_USER;
	refused_for(d, &env, LL, 0, "--waive metadata", marker);
	free(marker);
}

/* A confinement call failing in the child refuses the job before exec. */
static void
failing_confinement_call_refuses_before_exec(void **state)
{
	struct jr_dirs *d = *state;
	char *marker = tu_join(d->scratch, "marker");
	struct sock_filter bogus = { 0xffff, 0, 0, 0 };
	struct job_env broken = jr_env;
	struct jr j;

	/* Each program a job may load: in the host's namespaces, or its own. */
	broken.seccomp.insns = &bogus;
	broken.seccomp.count = 1;
	broken.seccomp_own = broken.seccomp;
	broken.seccomp_own_net = broken.seccomp;
	jr_init(&j, LL, d->scratch, "write", marker, NULL);
	jr_run_env(&j, &broken);
	assert_int_equal(j.rc, -ENOTSUP);
	assert_false(tu_exists(marker));
	jr_free(&j);

	broken = jr_env;
	broken.seccomp.count = 0;
	broken.seccomp_own.count = 0;
	broken.seccomp_own_net.count = 0;
	jr_init(&j, LL, d->scratch, "write", marker, NULL);
	jr_run_env(&j, &broken);
	assert_int_equal(j.rc, -ENOTSUP);
	assert_false(tu_exists(marker));
	jr_free(&j);
	free(marker);
}

/* The seam: failures injected where settlement depends on a call. */
/*
 * Fail the first kill with this signal: of the job's group, or (a signal,
 * not the probe 0) of one of its processes, as its init kills them.
 */
static int kill_fail_sig = -1;
static int kill_fail_errno;
static int wait_fail_errno;     /* fail wait4 with this errno */
static int wait_eintr;          /* this many EINTRs before the real wait4 */

static int
fake_kill(pid_t pid, int sig)
{
	if ((pid < 0 || (pid > 1 && sig != 0)) && sig == kill_fail_sig) {
		kill_fail_sig = -1;
		errno = kill_fail_errno;
		return -1;
	}
	return kill(pid, sig);
}

static pid_t
fake_wait4(pid_t pid, int *status, int options, struct rusage *ru)
{
	if (wait_eintr > 0) {
		wait_eintr--;
		errno = EINTR;
		return -1;
	}
	if (wait_fail_errno != 0) {
		errno = wait_fail_errno;
		return -1;
	}
	return job_sys_real.wait4(pid, status, options, ru);
}

/* The shepherd's copy of this fails that many calls (EINVAL), then is real. */
static int waitid_fails;

static int
fake_waitid(idtype_t type, id_t id, siginfo_t *si, int options)
{
	if (waitid_fails > 0) {
		waitid_fails--;
		errno = EINVAL;
		return -1;
	}
	return job_sys_real.waitid(type, id, si, options);
}

static const struct job_sys fake_sys = {
	.kill = fake_kill,
	.wait4 = fake_wait4,
	.waitid = fake_waitid,
};

static void
linger_in_group(void)
{
	usleep(50 * 1000);
}

/*
 * A deadline that fires while the job is still starting, with the
 * shepherd held in the job's group (the benchmark found it under load):
 * the kill must wait until the shepherd is out, and then still be
 * Cancelled, never a refused spawn or the job's own Failed(signal).
 */
static void
deadline_during_start_is_still_cancelled(void **state)
{
	struct jr_dirs *d = *state;
	struct job_env env = jr_env;
	struct job_sys sys = job_sys_real;
	struct jr j;
	int i;

	sys.in_group = linger_in_group;
	env.sys = &sys;
	for (i = 0; i < 5; i++) {
		jr_init(&j, LL, d->scratch, "pid-sleep", "30000", NULL);
		j.spec.deadline_ms = 1;
		jr_run_env(&j, &env);
		assert_outcome(&j, CONFINE_CANCELLED, CONFINE_REASON_DEADLINE);
		jr_free(&j);
	}
}

static void
run_faked(struct jr *j)
{
	struct job_env env = jr_env;

	env.sys = &fake_sys;
	jr_run_env(j, &env);
	kill_fail_sig = -1;
	wait_fail_errno = 0;
	wait_eintr = 0;
	waitid_fails = 0;
}

static void
deadline_kill_eperm_is_kill_ambiguous(void **state)
{
	struct jr_dirs *d = *state;
	struct jr j;

	kill_fail_sig = SIGKILL;
	kill_fail_errno = EPERM;
	jr_init(&j, LL, d->scratch, "pid-sleep", "30000", NULL);
	j.spec.deadline_ms = TU_DEADLINE_AFTER_START_MS;
	run_faked(&j);
	assert_outcome(&j, CONFINE_UNCERTAIN, CONFINE_REASON_KILL_AMBIGUOUS);
	assert_int_equal(j.r.error, EPERM);
	/* The retried kill still ended it. */
	assert_true(tu_gone(jr_pid(&j, 0)));
	jr_free(&j);
}

/*
 * Where kill(-pgid, 0) is a proof (without a shepherd, and on macOS's
 * path; a shepherd's job leading its own session is proven by the
 * shepherd's account instead, child_check_error_...).
 */
static void
proof_kill_eperm_is_kill_ambiguous(void **state)
{
	struct jr_dirs *d = *state;
	struct job_env env = jr_env;
	struct jr j;

	kill_fail_sig = 0;
	kill_fail_errno = EPERM;
	jr_init(&j, LL, d->scratch, "exit", "0", NULL);
	env.group_proof_only = true;
	env.sys = &fake_sys;
	jr_run_env(&j, &env);
	kill_fail_sig = -1;
	assert_outcome(&j, CONFINE_UNCERTAIN, CONFINE_REASON_KILL_AMBIGUOUS);
	assert_int_equal(j.r.error, EPERM);
	jr_free(&j);
}

static void
wait_error_is_wait_failed(void **state)
{
	struct jr_dirs *d = *state;
	struct jr j;

	wait_fail_errno = ECHILD;
	jr_init(&j, LL, d->scratch, "exit", "0", NULL);
	run_faked(&j);
	assert_outcome(&j, CONFINE_UNCERTAIN, CONFINE_REASON_WAIT_FAILED);
	assert_int_equal(j.r.error, ECHILD);
	jr_free(&j);
}

static void
wait_eintr_is_retried(void **state)
{
	struct jr_dirs *d = *state;
	struct jr j;

	wait_eintr = 3;
	jr_init(&j, LL, d->scratch, "exit", "0", NULL);
	run_faked(&j);
	assert_outcome(&j, CONFINE_COMPLETED, CONFINE_REASON_NONE);
	jr_free(&j);
}

/*
 * The shepherd's check for children left failing other than with ECHILD
 * (here once, EINVAL): children are assumed, so exit 0 is not Completed.
 * The sweep that follows finds none, and that is proven afterwards.
 */
static void
child_check_error_is_uncertain_never_completed(void **state)
{
	struct jr_dirs *d = *state;
	struct jr j;

	waitid_fails = 1;
	jr_init(&j, LL, d->scratch, "exit", "0", NULL);
	run_faked(&j);
	assert_outcome(&j, CONFINE_UNCERTAIN, CONFINE_REASON_GROUP_STILL_PRESENT);
	assert_int_equal(j.r.exit_code, 0);
	assert_int_equal(j.r.proof, CONFINE_PROOF_SUBREAPER);
	jr_free(&j);
}

/*
 * Failing for good: the sweep gives up (after its 10 s) with children
 * still assumed, and nothing is claimed proven, though the group is empty.
 */
static void
child_check_failing_for_good_is_never_proven(void **state)
{
	struct jr_dirs *d = *state;
	struct jr j;

	waitid_fails = INT_MAX;
	jr_init(&j, LL, d->scratch, "exit", "0", NULL);
	run_faked(&j);
	assert_outcome(&j, CONFINE_UNCERTAIN, CONFINE_REASON_GROUP_STILL_PRESENT);
	assert_int_equal(j.r.proof, CONFINE_PROOF_NONE);
	jr_free(&j);
}

/* `none` is never a fallback: the automatic choice is Landlock here. */
static void
auto_backend_is_landlock_never_none(void **state)
{
	struct jr_dirs *d = *state;
	char *out = tu_join(d->outside, "auto");
	struct jr j;

	jr_init(&j, CONFINE_BACKEND_AUTO, d->scratch, "write", out, NULL);
	jr_run(&j);
	assert_outcome(&j, CONFINE_FAILED, CONFINE_REASON_EXIT_CODE);
	assert_int_equal(j.r.exit_code, EROFS);
	assert_int_equal(j.r.backend, LL);
	jr_free(&j);
	free(out);
}

static void
shepherd_record_round_trips(void **state)
{
	struct job_report a = {
		.type = REP_EXITED, .pid = 1234, .status = 0x0300, .err = 0,
		.step = CONFINE_STEP_CWD, .wall_us = INT64_C(1) << 40,
		.user_us = 5, .sys_us = 6, .max_rss_kib = 7,
	}, b;
	unsigned char buf[SHEP_REC_LEN];

	(void)state;
	shep_rec_encode(&a, buf);
	assert_int_equal(shep_rec_decode(buf, &b), 0);
	assert_int_equal(b.type, a.type);
	assert_int_equal(b.pid, a.pid);
	assert_int_equal(b.status, a.status);
	assert_int_equal(b.step, a.step);
	assert_int_equal(b.wall_us, a.wall_us);
	assert_int_equal(b.user_us, a.user_us);
	assert_int_equal(b.sys_us, a.sys_us);
	assert_int_equal(b.max_rss_kib, a.max_rss_kib);
	buf[3] = 99;
	assert_int_equal(shep_rec_decode(buf, &b), -EBADMSG);
}

static void
send_rec(int fd, enum report_type type)
{
	struct job_report r = { .type = type, .pid = 77, .err = EPERM };
	unsigned char buf[SHEP_REC_LEN];

	shep_rec_encode(&r, buf);
	assert_int_equal(write(fd, buf, sizeof(buf)), (ssize_t)sizeof(buf));
}

/*
 * The state machine hears a record only in the phases its table row
 * names: a running job takes no start, set-up failure or removal, and a
 * starting one no exit (each would settle or refuse it wrongly).
 */
static void
a_record_out_of_its_phase_is_dropped(void **state)
{
	static const enum report_type not_running[] = { REP_FORKED,
		REP_EXEC_OK, REP_EXEC_FAILED, REP_SETUP_FAILED, REP_REMOVED };
	static const enum report_type not_starting[] = { REP_EXITED,
		REP_WAIT_FAILED, REP_REMOVED };
	struct job j;
	int sv[2];
	size_t i;

	(void)state;
	assert_int_equal(fd_socketpair(sv), 0);
	assert_int_equal(fd_nonblock(sv[0]), 0);
	memset(&j, 0, sizeof(j));
	j.fd = sv[0];
	j.phase = JOB_RUNNING;
	j.result.pid = 5;
	for (i = 0; i < sizeof(not_running) / sizeof(not_running[0]); i++) {
		send_rec(sv[1], not_running[i]);
		job_input(&j, 0);
		assert_int_equal(j.phase, JOB_RUNNING);
		assert_int_equal(j.events, 0);
		assert_int_equal(j.result.pid, 5);
		assert_false(j.forked);
	}
	j.phase = JOB_STARTING;
	for (i = 0; i < sizeof(not_starting) / sizeof(not_starting[0]); i++) {
		send_rec(sv[1], not_starting[i]);
		job_input(&j, 0);
		assert_int_equal(j.phase, JOB_STARTING);
		assert_int_equal(j.events, 0);
	}
	/* And the row that does apply is heard: the paired half. */
	send_rec(sv[1], REP_FORKED);
	job_input(&j, 0);
	assert_true(j.forked);
	assert_int_equal(j.result.pid, 77);
	close(sv[0]);
	close(sv[1]);
}

#define T(name) cmocka_unit_test_setup_teardown(name, jr_dirs_setup, jr_dirs_teardown)

int
main(void)
{
	const struct CMUnitTest tests[] = {
		T(dev_null_stays_writable),
		T(named_device_is_writable_and_others_are_not),
		T(a_signal_is_failed_signal),
		T(grace_sends_sigterm_first),
		T(sigterm_ignored_is_killed_after_grace),
		T(deadline_during_start_is_still_cancelled),
		T(a_job_faster_than_its_deadline_completes),
		T(missing_program_is_failed_exec_enoent),
		T(program_without_exec_permission_is_failed_exec_eacces),
		T(missing_cwd_is_failed_exec_at_the_cwd_step),
		T(closed_stdio_descriptor_is_failed_exec_at_the_stdio_step),
		T(bad_input_is_invalid_before_any_spawn),
		T(environment_is_empty_unless_given),
		T(only_stdio_is_inherited),
		T(stdio_goes_where_it_is_told),
		T(signals_are_default_and_unblocked),
		T(job_runs_in_its_own_process_group),
		T(cwd_defaults_to_the_scratch_root),
		T(rusage_and_wall_time_are_reported),
		T(landlock_abi_too_old_is_unsupported),
		T(a_requirement_the_machine_cannot_meet_refuses),
		T(no_namespace_at_all_needs_the_waiver),
		T(failing_confinement_call_refuses_before_exec),
		T(deadline_kill_eperm_is_kill_ambiguous),
		T(proof_kill_eperm_is_kill_ambiguous),
		T(wait_error_is_wait_failed),
		T(wait_eintr_is_retried),
		T(child_check_error_is_uncertain_never_completed),
		T(child_check_failing_for_good_is_never_proven),
		T(auto_backend_is_landlock_never_none),
		cmocka_unit_test(shepherd_record_round_trips),
		cmocka_unit_test(a_record_out_of_its_phase_is_dropped),
	};

	/*
	 * Outside the scratch root every mount is read-only in the job's
	 * view: EROFS, and a rename across the root's own mount EXDEV.
	 */
	struct contract_errnos landlock = { EROFS, EXDEV, 0 };

	jr_setup();
	/* The shepherd's path: cgroup_test runs the contract without one. */
	jr_env.direct = false;
	landlock.net = JR_NET_ERRNO;
	return contract_run(CONFINE_BACKEND_LANDLOCK, &landlock,
	    CONFINE_PROOF_SUBREAPER) +
	    cmocka_run_group_tests_name("job", tests, NULL, NULL);
}
