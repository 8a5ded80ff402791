/*
 * cgroups, for real: this target runs unsandboxed (Bazel's sandbox mounts
 * cgroupfs read-only), as root on a writable cgroup v2 hierarchy, and
 * fails, never skips, when there is none. Each job gets its own cgroup;
 * the proof is "populated 0", and it sees what nothing else does (a
 * process moved into the cgroup from outside the job); deadlines use
 * cgroup.kill, even when the group's SIGKILL is lost; memory and process
 * bounds use the memory and pids controllers.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/contract.h"
#include "tests/jobrun.h"
#include "tests/testutil.h"

#define LL CONFINE_BACKEND_LANDLOCK
#define MIB (INT64_C(1) << 20)

static char *plain;

/*
 * No job cgroup under the helper's own still has a process (empty ones
 * may be kept for reuse).
 */
static int
job_cgroups(int base)
{
	int fd = dup(base), n = 0;
	char path[300], *text;
	struct dirent *e;
	DIR *d;

	assert_true(fd >= 0);
	d = fdopendir(fd);
	assert_non_null(d);
	while ((e = readdir(d)) != NULL) {
		if (strncmp(e->d_name, "job.", 4) != 0)
			continue;
		snprintf(path, sizeof(path), "/proc/self/fd/%d/%s/cgroup.events",
		    dirfd(d), e->d_name);
		text = tu_slurp(path, NULL);
		assert_non_null(text);
		if (strstr(text, "populated 0") == NULL)
			n++;
		free(text);
	}
	closedir(d);
	return n;
}

/* The job is born in its own cgroup v2 leaf, under the helper's. */
static void
job_runs_in_its_own_cgroup(void **state)
{
	struct jr_dirs *d = *state;
	char want[96];
	struct jr j;

	jr_init(&j, LL, d->scratch, NULL);
	j.spec.exe = "/bin/cat";
	j.argv[0] = "cat";
	j.argv[1] = "/proc/self/cgroup";
	j.argv[2] = NULL;
	jr_run(&j);
	assert_outcome(&j, CONFINE_COMPLETED, CONFINE_REASON_NONE);
	snprintf(want, sizeof(want), "/%s/job.", jr_env.cg.name);
	assert_non_null(strstr(strstr(j.out, "0::"), want));
	jr_free(&j);
}

static void
cgroups_are_available_here(void **state)
{
	(void)state;
	assert_true(jr_env.cg.v2 >= 0);
	assert_true(jr_env.cg.v2_kill);
	/* So jobs here take no shepherd, the contract below included. */
	assert_true(jr_env.direct);
	assert_true(cgroup_env_memory(&jr_env.cg) >= 0);
	assert_true(cgroup_env_pids(&jr_env.cg) >= 0);
}

/*
 * The v1 memory and pids levels are made at the first job with a bound,
 * not at the helper's start: a job without one leaves them unmade. In a
 * child, so that its levels (named by its pid) are its own, and its pool
 * of empty job cgroups too (the pool is the env's, not the process's).
 */
static void
v1_levels_wait_for_a_bound(void **state)
{
	struct jr_dirs *d = *state;
	struct job_env env;
	struct jr j;
	pid_t pid;
	int status;

	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		if (job_env_init(&env) != 0 || env.cg.kept == NULL)
			_exit(10);
		if (env.cg.kept->made || env.cg.kept->memory != -1 ||
		    env.cg.kept->pids != -1)
			_exit(11);
		jr_init(&j, LL, d->scratch, "exit", "0", NULL);
		jr_run_env(&j, &env);
		if (j.rc != 0 || j.r.outcome != CONFINE_COMPLETED ||
		    env.cg.kept->made)
			_exit(12);
		jr_free(&j);
		jr_init(&j, LL, d->scratch, "exit", "0", NULL);
		j.spec.limits.memory = 256 * 1024 * 1024;
		jr_run_env(&j, &env);
		if (j.rc != 0 || j.r.outcome != CONFINE_COMPLETED ||
		    !env.cg.kept->made || env.cg.kept->memory < 0 ||
		    env.cg.kept->pids < 0)
			_exit(13);
		jr_free(&j);
		job_env_fini(&env);
		_exit(0);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

static void
healthy_job_is_proven_by_its_cgroup_and_the_cgroup_goes(void **state)
{
	struct jr_dirs *d = *state;
	char *in = tu_join(d->scratch, "f");
	struct jr j;

	jr_init(&j, LL, d->scratch, "write", in, NULL);
	jr_run(&j);
	assert_outcome(&j, CONFINE_COMPLETED, CONFINE_REASON_NONE);
	assert_int_equal(j.r.proof, CONFINE_PROOF_CGROUP);
	assert_int_equal(job_cgroups(jr_env.cg.v2), 0);
	jr_free(&j);
	free(in);
}

static void
escaped_descendant_is_found_by_the_cgroup(void **state)
{
	struct jr_dirs *d = *state;
	struct jr j;
	long pid, pgid, sid;

	jr_init(&j, LL, d->scratch, "setsid", "30000", NULL);
	jr_run(&j);
	assert_outcome(&j, CONFINE_UNCERTAIN, CONFINE_REASON_GROUP_STILL_PRESENT);
	/* Out of the job's group; then gone. */
	assert_int_equal(sscanf(j.out, "%ld %ld %ld", &pid, &pgid, &sid), 3);
	assert_int_not_equal(pgid, jr_seen_pgid(&j, &jr_env));
	assert_true(tu_gone(jr_pid(&j, 0)));
	assert_int_equal(j.r.proof, CONFINE_PROOF_CGROUP);
	assert_int_equal(job_cgroups(jr_env.cg.v2), 0);
	jr_free(&j);
}

/* cgroup.kill reaches the escaped one while its parent still lives. */
static void
deadline_with_cgroups_cancels_and_the_escaped_one_dies(void **state)
{
	struct jr_dirs *d = *state;
	struct jr j;
	long pid, pgid, sid;

	jr_init(&j, LL, d->scratch, "setsid", "30000", "then-sleep", NULL);
	j.spec.deadline_ms = TU_DEADLINE_AFTER_START_MS;
	jr_run(&j);
	assert_outcome(&j, CONFINE_CANCELLED, CONFINE_REASON_DEADLINE);
	/* Out of the job's group; then gone. */
	assert_int_equal(sscanf(j.out, "%ld %ld %ld", &pid, &pgid, &sid), 3);
	assert_int_not_equal(pgid, jr_seen_pgid(&j, &jr_env));
	assert_true(tu_gone(jr_pid(&j, 0)));
	assert_int_equal(j.r.proof, CONFINE_PROOF_CGROUP);
	jr_free(&j);
}

static void
double_forked_daemon_under_cgroups_is_uncertain_and_killed(void **state)
{
	struct jr_dirs *d = *state;
	struct jr j;

	jr_init(&j, LL, d->scratch, "daemon", "30000", NULL);
	jr_run(&j);
	assert_outcome(&j, CONFINE_UNCERTAIN, CONFINE_REASON_GROUP_STILL_PRESENT);
	assert_true(tu_gone(jr_pid(&j, 0)));
	jr_free(&j);
}

/* Over its memory bound the job meets the OOM killer: Failed(SIGKILL). */
static void
memory_bound_is_the_oom_killer(void **state)
{
	struct jr_dirs *d = *state;
	struct jr j;

	jr_init(&j, LL, d->scratch, "alloc", "512", NULL);
	j.spec.exe = plain;
	j.spec.limits.memory = 64 * MIB;
	jr_run(&j);
	assert_outcome(&j, CONFINE_FAILED, CONFINE_REASON_SIGNAL);
	assert_int_equal(j.r.signal, SIGKILL);
	jr_free(&j);
	jr_init(&j, LL, d->scratch, "alloc", "16", NULL);
	j.spec.exe = plain;
	j.spec.limits.memory = 256 * MIB;
	jr_run(&j);
	assert_outcome(&j, CONFINE_COMPLETED, CONFINE_REASON_NONE);
	jr_free(&j);
}

/* pids.max binds root too, and counts the job's processes only. */
static void
process_bound_is_a_failed_fork(void **state)
{
	struct jr_dirs *d = *state;
	struct jr j;

	jr_init(&j, LL, d->scratch, "fork-many", "50", NULL);
	j.spec.exe = plain;
	j.spec.limits.processes = 10;
	jr_run(&j);
	assert_outcome(&j, CONFINE_FAILED, CONFINE_REASON_EXIT_CODE);
	assert_int_equal(j.r.exit_code, EAGAIN);
	jr_free(&j);
	jr_init(&j, LL, d->scratch, "fork-many", "5", NULL);
	j.spec.exe = plain;
	j.spec.limits.processes = 10;
	jr_run(&j);
	assert_outcome(&j, CONFINE_COMPLETED, CONFINE_REASON_NONE);
	jr_free(&j);
}

/*
 * Without a pids cgroup a process bound is RLIMIT_NPROC, which binds only
 * a user other than root: run the core as a uid of nobody's, one no other
 * process has (the limit counts them all), with a helper environment
 * probed as that user (who may create no cgroup).
 */
static void
process_bound_without_cgroups_is_rlimit_nproc_for_a_user(void **state)
{
	char dir[] = "/tmp/confine-nproc.XXXXXX", *fixture, *scratch;
	struct confine_result r;
	const char *why, *argv[] = { "fixture", "fork-many", "30", NULL };
	struct job_env env;
	struct confine_spec s;
	int status, rc;
	uid_t user = tu_unused_uid();
	pid_t pid;

	(void)state;
	assert_non_null(mkdtemp(dir));
	assert_int_equal(chmod(dir, 0755), 0);
	fixture = tu_join(dir, "fixture");
	scratch = tu_join(dir, "scratch");
	tu_copy_exec(plain, fixture);
	assert_int_equal(mkdir(scratch, 0755), 0);
	assert_int_equal(chown(scratch, user, user), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		if (setgid(user) != 0 || setuid(user) != 0)
			_exit(100);
		job_env_init(&env);
		if (cgroup_env_pids(&env.cg) >= 0)
			_exit(101);  /* a user should not be able to */
		memset(&s, 0, sizeof(s));
		s.exe = fixture;
		s.argv = argv;
		s.scratch = scratch;
		s.backend = LL;
		s.stdin_fd = s.stdout_fd = s.stderr_fd = -1;
		s.limits.processes = 5;
		rc = jr_job_run(&s, &env, NULL, &r, &why);
		if (rc != 0)
			_exit(102);
		_exit(r.outcome == CONFINE_FAILED && r.exit_code == EAGAIN ? 0 :
		    103);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	unlink(fixture);
	rmdir(scratch);
	rmdir(dir);
	free(fixture);
	free(scratch);
}

/*
 * A helper killed outright leaves its cgroups; the next one clears them,
 * and only those named as a helper names its own: not another's confine.*.
 */
static void
cgroups_of_a_dead_helper_are_removed(void **state)
{
	char name[64], job[96], other[64];
	struct job_env env;
	pid_t dead = fork(), pid;
	int status;

	(void)state;
	assert_true(dead >= 0);
	if (dead == 0)
		_exit(0);
	assert_int_equal(waitpid(dead, NULL, 0), dead);
	snprintf(name, sizeof(name), "../confine.%ld.0123456789abcdef",
	    (long)dead);
	snprintf(job, sizeof(job), "%s/job.1", name);
	snprintf(other, sizeof(other), "../confine.%ld", (long)dead);
	/* Beside our own helper's directory, as a dead helper's would be. */
	assert_int_equal(mkdirat(jr_env.cg.v2, name, 0755), 0);
	assert_int_equal(mkdirat(jr_env.cg.v2, job, 0755), 0);
	assert_int_equal(mkdirat(jr_env.cg.v2, other, 0755), 0);
	/* Another helper starts: a child, so that its cgroups are its own. */
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		job_env_init(&env);
		job_env_fini(&env);
		_exit(0);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_int_equal(faccessat(jr_env.cg.v2, name, F_OK, 0), -1);
	assert_int_equal(errno, ENOENT);
	assert_int_equal(faccessat(jr_env.cg.v2, other, F_OK, 0), 0);
	assert_int_equal(unlinkat(jr_env.cg.v2, other, AT_REMOVEDIR), 0);
	/* Ours, alive, is left alone. */
	assert_int_equal(faccessat(jr_env.cg.v2, ".", F_OK, 0), 0);
}

/*
 * A killed job's cgroup is not reused; it is removed when the helper has
 * time (cgroup_env_tidy), not while the job settles, and the helper's end
 * removes what is still queued. An empty one never killed is kept.
 */
static void
settled_cgroups_are_removed_later_or_kept(void **state)
{
	struct cgroup_env e;
	struct cgroup_job a, b, c;
	const char *why = NULL;
	char na[24], nb[24], base[96];
	int v2;

	(void)state;
	cgroup_env_init(&e);
	assert_true(e.v2 >= 0 && e.v2_kill);
	assert_int_equal(cgroup_job_create(&e, &a, 0, 0, &why), 0);
	assert_int_equal(cgroup_job_create(&e, &b, 0, 0, &why), 0);
	assert_int_equal(cgroup_job_create(&e, &c, 0, 0, &why), 0);
	memcpy(na, a.name, sizeof(na));
	memcpy(nb, b.name, sizeof(nb));
	assert_int_equal(cgroup_job_kill(&a), 0);
	assert_int_equal(cgroup_job_kill(&b), 0);
	cgroup_job_destroy(&a);
	cgroup_job_destroy(&b);
	cgroup_job_destroy(&c);
	/* Queued, both there still; the unkilled one kept for reuse. */
	assert_int_equal(faccessat(e.v2, na, F_OK, 0), 0);
	assert_int_equal(faccessat(e.v2, nb, F_OK, 0), 0);
	assert_int_equal(e.kept->npool, 1);
	assert_int_equal(cgroup_env_tidy(&e, 1), 1);
	assert_int_equal(faccessat(e.v2, nb, F_OK, 0), -1);
	assert_int_equal(errno, ENOENT);
	assert_int_equal(faccessat(e.v2, na, F_OK, 0), 0);
	/* The helper's end removes the rest: its directory goes, so empty. */
	snprintf(base, sizeof(base), "../%s", e.name);
	v2 = dup(e.v2);
	assert_true(v2 >= 0);
	cgroup_env_fini(&e);
	assert_int_equal(faccessat(v2, base, F_OK, 0), -1);
	assert_int_equal(errno, ENOENT);
	close(v2);
}

/*
 * Two helpers with one pid in one parent cgroup (two pid namespaces, as
 * in Bazel's sandbox; here one process, twice): each has a directory of
 * its own, and a third's start leaves both, and their jobs', alone.
 */
static void
helpers_that_share_a_pid_keep_their_own_cgroups(void **state)
{
	struct cgroup_env a, b, c;
	struct cgroup_job ja;
	const char *why = NULL;
	char path[96];

	(void)state;
	cgroup_env_init(&a);
	cgroup_env_init(&b);
	assert_true(a.v2 >= 0 && b.v2 >= 0);
	assert_string_not_equal(a.name, b.name);
	assert_int_equal(cgroup_job_create(&a, &ja, 0, 0, &why), 0);
	cgroup_env_init(&c);
	assert_true(c.v2 >= 0);
	snprintf(path, sizeof(path), "../%s/%s", a.name, ja.name);
	assert_int_equal(faccessat(c.v2, path, F_OK, 0), 0);
	snprintf(path, sizeof(path), "../%s", b.name);
	assert_int_equal(faccessat(c.v2, path, F_OK, 0), 0);
	cgroup_job_destroy(&ja);
	cgroup_env_fini(&c);
	cgroup_env_fini(&b);
	cgroup_env_fini(&a);
}

/*
 * A helper dead with its shepherds leaves a job running in its cgroup:
 * the next helper to start beside it kills the job and removes the
 * cgroups. The job is ours to reap (we are the subreaper meanwhile): its
 * status says who ended it. v1_only: the job is in the dead helper's v1
 * pids cgroup alone, where no cgroup.kill is: the next helper, making its
 * own v1 levels, kills each process listed there.
 */
static void
dead_helpers_job_is_killed_by_the_next(bool v1_only)
{
	struct cgroup_env next;
	char name[sizeof(next.name)], path[128];
	int pipefd[2], status;
	pid_t helper, next_helper, job = 0;

	assert_int_equal(prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0), 0);
	assert_int_equal(pipe(pipefd), 0);
	helper = fork();
	assert_true(helper >= 0);
	if (helper == 0) {
		struct cgroup_env env;
		struct cgroup_job j;
		const char *why;
		pid_t p;

		cgroup_env_init(&env);
		if (env.v2 < 0 || cgroup_job_create(&env, &j, 0,
		    v1_only ? 50 : 0, &why) != 0)
			_exit(1);
		if (v1_only && (j.procs[2] < 0 || j.procs[0] < 0))
			_exit(1);
		if (v1_only) {
			close(j.procs[0]);
			j.procs[0] = -1;
		}
		if ((p = fork()) == 0) {
			if (cgroup_join(j.procs) != 0)
				_exit(1);
			/* Its exec closes the helper's claim, as a job's does. */
			execl("/bin/sleep", "sleep", "60", (char *)NULL);
			_exit(127);
		}
		if (write(pipefd[1], &p, sizeof(p)) != sizeof(p) ||
		    write(pipefd[1], env.name, sizeof(env.name)) !=
		    sizeof(env.name))
			_exit(1);
		_exit(0);  /* killed outright: nothing removed */
	}
	close(pipefd[1]);
	assert_int_equal(read(pipefd[0], &job, sizeof(job)), sizeof(job));
	assert_int_equal(read(pipefd[0], name, sizeof(name)), sizeof(name));
	close(pipefd[0]);
	assert_int_equal(waitpid(helper, &status, 0), helper);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_true(job > 1);
	/* Unended by its helper's death: still running, now ours. */
	usleep(100 * 1000);
	assert_int_equal(waitpid(job, &status, WNOHANG), 0);
	/*
	 * The next helper: a child, so that we can reap the job while it
	 * sweeps (a killed job's cgroup is busy until its zombie is reaped).
	 */
	next_helper = fork();
	assert_true(next_helper >= 0);
	if (next_helper == 0) {
		cgroup_env_init(&next);
		if (v1_only && cgroup_env_pids(&next) < 0)
			_exit(3);
		_exit(next.v2 < 0 ? 2 : 0);
	}
	assert_int_equal(waitpid(job, &status, 0), job);
	assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	assert_int_equal(waitpid(next_helper, &status, 0), next_helper);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	/*
	 * Its directory goes once the job is reaped: by this sweep, or by
	 * another helper's starting beside us at the same time.
	 */
	snprintf(path, sizeof(path), "/proc/self/fd/%d/../%s", jr_env.cg.v2,
	    name);
	assert_true(tu_path_gone(path));
	assert_int_equal(prctl(PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0), 0);
}

static void
a_dead_helpers_running_job_is_killed_by_the_next(void **state)
{
	(void)state;
	dead_helpers_job_is_killed_by_the_next(false);
}

static void
a_dead_helpers_job_in_a_v1_cgroup_alone_is_killed_too(void **state)
{
	(void)state;
	dead_helpers_job_is_killed_by_the_next(true);
}

/*
 * Job cgroups are kept for reuse, but one that cgroup.kill was written to
 * must not be: born into it, the next job was killed at once.
 */
static void
a_job_after_a_killed_one_is_not_killed(void **state)
{
	struct jr_dirs *d = *state;
	struct jr j;
	int i;

	for (i = 0; i < 4; i++) {
		jr_init(&j, LL, d->scratch, "sleep", "30000", NULL);
		j.spec.deadline_ms = 50;
		jr_run(&j);
		assert_outcome(&j, CONFINE_CANCELLED, CONFINE_REASON_DEADLINE);
		jr_free(&j);
		jr_init(&j, LL, d->scratch, "exit", "0", NULL);
		jr_run(&j);
		assert_outcome(&j, CONFINE_COMPLETED, CONFINE_REASON_NONE);
		jr_free(&j);
	}
}

/*
 * The intruder's way in: the job's v2 cgroup, read from its
 * /proc/PID/cgroup, beneath the helper's (jr_env's, inherited).
 */
static void
join_cgroup(long pid, long pgid)
{
	char path[64], procs[96], self[24], *text, *line, *end, *name;
	int fd, n;

	(void)pgid;
	snprintf(path, sizeof(path), "/proc/%ld/cgroup", pid);
	text = tu_slurp(path, NULL);
	if (text == NULL)
		_exit(4);
	line = strncmp(text, "0::", 3) == 0 ? text : strstr(text, "\n0::");
	if (line == NULL)
		_exit(4);
	if ((end = strchr(line + 1, '\n')) != NULL)
		*end = '\0';
	name = strrchr(line, '/');
	if (name == NULL)
		_exit(4);
	snprintf(procs, sizeof(procs), "%s/cgroup.procs", name + 1);
	n = snprintf(self, sizeof(self), "%ld", (long)getpid());
	fd = openat(jr_env.cg.v2, procs, O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, self, (size_t)n) != n)
		_exit(4);
	close(fd);
}

/*
 * A process that is not the job's descendant, nor in its group, is moved
 * into its cgroup while it runs: only the cgroup proof sees it. The job
 * exits 0 and is not Completed; cgroup.kill ends the intruder (neither the
 * group kill nor the shepherd's sweep can reach it), and then the cgroup
 * proves it empty.
 */
static void
a_process_moved_into_the_jobs_cgroup_is_found_and_killed(void **state)
{
	struct jr_dirs *d = *state;
	struct jr j;

	jr_init(&j, LL, d->scratch, "ids", "wait", NULL);
	assert_true(jr_run_intruded(&j, join_cgroup));
	assert_outcome(&j, CONFINE_UNCERTAIN, CONFINE_REASON_GROUP_STILL_PRESENT);
	assert_int_equal(j.r.exit_code, 0);
	assert_int_equal(j.r.proof, CONFINE_PROOF_CGROUP);
	assert_int_equal(job_cgroups(jr_env.cg.v2), 0);
	jr_free(&j);
}

/* The seam's kill, with every SIGKILL to a group said sent and lost. */
static int
lose_group_sigkill(pid_t pid, int sig)
{
	if (pid < 0 && sig == SIGKILL)
		return 0;
	return kill(pid, sig);
}

/*
 * Deadlines kill through cgroup.kill too: with the group's SIGKILL lost,
 * the job (and what escaped its group) still dies of SIGKILL at once, not
 * after its 30 s, and it is Cancelled.
 */
static void
deadline_kills_through_cgroup_kill(void **state)
{
	struct jr_dirs *d = *state;
	struct job_sys sys = job_sys_real;
	struct job_env env = jr_env;
	long pid, pgid, sid;
	struct jr j;

	sys.kill = lose_group_sigkill;
	env.sys = &sys;
	jr_init(&j, LL, d->scratch, "setsid", "30000", "then-sleep", NULL);
	j.spec.deadline_ms = TU_DEADLINE_AFTER_START_MS;
	jr_run_env(&j, &env);
	assert_outcome(&j, CONFINE_CANCELLED, CONFINE_REASON_DEADLINE);
	assert_int_equal(j.r.signal, SIGKILL);
	assert_int_equal(sscanf(j.out, "%ld %ld %ld", &pid, &pgid, &sid), 3);
	assert_int_not_equal(pgid, jr_seen_pgid(&j, &env));
	assert_true(tu_gone(jr_pid(&j, 0)));
	assert_int_equal(j.r.proof, CONFINE_PROOF_CGROUP);
	jr_free(&j);
}

/* The proof rests on "populated 0" as the kernel writes it, nothing else. */
static void
populated_is_read_strictly(void **state)
{
	static const struct {
		const char *text;
		int want;
	} cases[] = {
		{ "populated 0\nfrozen 0\n", 0 },
		{ "populated 1\nfrozen 0\n", 1 },
		{ "populated 0", 0 },
		{ "populated 2\n", -EBADMSG },
		{ "populated 01\n", -EBADMSG },
		{ "populated \n", -EBADMSG },
		{ "frozen 0\n", -EBADMSG },
		{ "", -EBADMSG },
	};
	char *dir = tu_mkdtemp("events"), *path = tu_join(dir, "cgroup.events");
	struct cgroup_job job;
	size_t i;

	(void)state;
	memset(&job, 0, sizeof(job));
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		jr_put(path, cases[i].text);
		job.events = open(path, O_RDONLY | O_CLOEXEC);
		assert_true(job.events >= 0);
		assert_int_equal(cgroup_job_populated(&job), cases[i].want);
		close(job.events);
	}
	job.events = -1;
	assert_int_equal(cgroup_job_populated(&job), -ENOENT);
	free(path);
	free(dir);
}

/*
 * Without a shepherd the job is our own child and leads its own group (as
 * under posix_spawn with a new group); with one, the group is the
 * shepherd's and the job is its child. Each proven by its cgroup.
 */
static void
without_a_shepherd_the_job_is_ours_and_leads_its_group(void **state)
{
	struct jr_dirs *d = *state;
	struct job_env env = jr_env;
	long pid, pgid, sid, ppid;
	struct jr j;
	int direct;

	for (direct = 1; direct >= 0; direct--) {
		env.direct = direct;
		jr_init(&j, LL, d->scratch, "ids", NULL);
		j.argv[0] = "/bin/sh";
		j.argv[1] = "-c";
		j.argv[2] = "echo $$ $(ps -o pgid= -p $$) 0 $PPID";
		j.argv[3] = NULL;
		j.spec.exe = "/bin/sh";
		jr_run_env(&j, &env);
		assert_outcome(&j, CONFINE_COMPLETED, CONFINE_REASON_NONE);
		assert_int_equal(sscanf(j.out, "%ld %ld %ld %ld", &pid, &pgid,
		    &sid, &ppid), 4);
		assert_int_equal(pid, j.r.pid);
		assert_int_equal(pgid, j.r.pgid);
		assert_int_equal(j.r.proof, CONFINE_PROOF_CGROUP);
		/* Its own session's group either way; its parent, us or not. */
		assert_int_equal(pgid, pid);
		if (direct)
			assert_int_equal(ppid, getpid());
		else
			assert_int_not_equal(ppid, getpid());
		jr_free(&j);
	}
}

/*
 * Fills the descriptor table but for free slots: the lowest numbers, as
 * the kernel hands out. Returns the first of those taken, to free with
 * unfill().
 */
static int
fill_but(int free_slots, int *top)
{
	int first = -1, fd, i, spare[8];

	assert_true(free_slots <= 8);
	for (i = 0; i < free_slots; i++)
		assert_true((spare[i] = dup(0)) >= 0);
	while ((fd = dup(0)) >= 0) {
		if (first < 0)
			first = fd;
		*top = fd;
	}
	assert_int_equal(errno, EMFILE);
	for (i = 0; i < free_slots; i++)
		close(spare[i]);
	return first;
}

static void
unfill(int first, int top)
{
	while (top >= first)
		close(top--);
}

/*
 * The guard writes cgroup.kill when the helper dies. What it writes to is
 * opened before it is made: at the descriptor limit a guard could open
 * nothing, and would guard nothing while the helper thought it guarded.
 * A forked guard needs five descriptors (cgroup.kill and two pipes), a
 * shared one three (no pipe to say it is ready): one fewer, and none is
 * started; with five, either starts (a shared one is forked under
 * ThreadSanitizer), and ends the helper's cgroup once its pipe ends.
 */
static void
a_guard_that_could_open_nothing_is_not_started(void **state)
{
	struct cgroup_env env;
	struct rlimit was, low;
	int shared, first, top, fd, status;
	pid_t pid;

	(void)state;
	/* A helper's cgroup of its own: the guard ends what is beneath it. */
	cgroup_env_init(&env);
	assert_true(env.v2 >= 0 && env.v2_kill);
	assert_int_equal(getrlimit(RLIMIT_NOFILE, &was), 0);
	low = was;
	low.rlim_cur = 256;
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &low), 0);
	for (shared = 0; shared < 2; shared++) {
		first = fill_but(shared ? 2 : 4, &top);
		fd = shared ? cgroup_guard_shared(&env, &pid) :
		    cgroup_guard(&env, &pid);
		unfill(first, top);
		assert_int_equal(fd, -EMFILE);
		/* Five for either: the shared one is forked under tsan. */
		first = fill_but(5, &top);
		fd = shared ? cgroup_guard_shared(&env, &pid) :
		    cgroup_guard(&env, &pid);
		unfill(first, top);
		assert_true(fd >= 0);
		close(fd);
		assert_int_equal(waitpid(pid, &status, 0), pid);
		assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	}
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &was), 0);
	cgroup_env_fini(&env);
}

#define T(name) cmocka_unit_test_setup_teardown(name, jr_dirs_setup, jr_dirs_teardown)

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(cgroups_are_available_here),
		cmocka_unit_test(cgroups_of_a_dead_helper_are_removed),
		cmocka_unit_test(helpers_that_share_a_pid_keep_their_own_cgroups),
		cmocka_unit_test(a_dead_helpers_running_job_is_killed_by_the_next),
		cmocka_unit_test(a_dead_helpers_job_in_a_v1_cgroup_alone_is_killed_too),
		T(healthy_job_is_proven_by_its_cgroup_and_the_cgroup_goes),
		T(v1_levels_wait_for_a_bound),
		T(job_runs_in_its_own_cgroup),
		T(a_job_after_a_killed_one_is_not_killed),
		T(escaped_descendant_is_found_by_the_cgroup),
		T(deadline_with_cgroups_cancels_and_the_escaped_one_dies),
		T(double_forked_daemon_under_cgroups_is_uncertain_and_killed),
		T(memory_bound_is_the_oom_killer),
		T(process_bound_is_a_failed_fork),
		T(a_process_moved_into_the_jobs_cgroup_is_found_and_killed),
		T(deadline_kills_through_cgroup_kill),
		T(without_a_shepherd_the_job_is_ours_and_leads_its_group),
		cmocka_unit_test(populated_is_read_strictly),
		cmocka_unit_test(a_guard_that_could_open_nothing_is_not_started),
		cmocka_unit_test(settled_cgroups_are_removed_later_or_kept),
		cmocka_unit_test(process_bound_without_cgroups_is_rlimit_nproc_for_a_user),
	};
	int rc;

	(void)tu_own_cgroup();  /* cgroups_are_available_here says if not */
	jr_setup();
	plain = tu_runfile("tests/plain_fixture");
	/* The contract, as job_test runs it with shepherds, without. */
	struct contract_errnos landlock = { EROFS, EXDEV, 0 };

	rc = cmocka_run_group_tests_name("cgroup", tests, NULL, NULL);
	landlock.net = JR_NET_ERRNO;
	rc += contract_run(CONFINE_BACKEND_LANDLOCK, &landlock,
	    CONFINE_PROOF_CGROUP);
	job_env_fini(&jr_env);
	return rc;
}
