#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "src/core/clock.h"
#include "src/core/fd.h"
#include "helper/engine/local.h"
#include "tests/jobrun.h"
#include "tests/testutil.h"

struct job_env jr_env;
char *jr_fixture;

int
jr_job_run(const struct confine_spec *s, const struct job_env *env,
    const struct ident *peer, struct confine_result *r, const char **why)
{
	struct local_job lj = { .spec = s, .peer = peer, .cancel_fd = -1 };
	int rc = local_run(env, &lj);

	free(lj.root);
	*why = lj.why;
	if (rc == 0)
		*r = lj.result;
	return rc;
}

void
jr_setup(void)
{
	tu_own_tmpdir();
	job_env_init(&jr_env);
	jr_fixture = tu_runfile("tests/fixture");
}

void
jr_on_its_path(void **state)
{
	char *scratch = tu_mkdtemp("path");
	const char *why;
	struct jr j;

	(void)state;
	jr_init(&j, CONFINE_BACKEND_LANDLOCK, scratch, "ids", NULL);
	jr_run(&j);
	assert_outcome(&j, CONFINE_COMPLETED, CONFINE_REASON_NONE);
	/* We drive the job: on the direct path, it is our child. */
	why = tu_path_ids(j.out, jr_pid(&j, 0), j.r.pid, j.r.pgid, getpid());
	if (why != NULL)
		fail_msg("%s: %s", why, j.out);
	assert_int_equal(jr_env.direct, tu_path_direct());
	assert_int_equal(jr_env.ns, tu_path_init());
	jr_free(&j);
	free(scratch);
}

enum confine_proof
jr_proof(void)
{
#ifdef __linux__
	return jr_env.cg.v2 >= 0 ? CONFINE_PROOF_CGROUP :
	    CONFINE_PROOF_SUBREAPER;
#else
	return CONFINE_PROOF_PGID;
#endif
}

void
jr_init(struct jr *j, enum confine_backend backend, const char *scratch, ...)
{
	va_list ap;

	memset(j, 0, sizeof(*j));
	va_start(ap, scratch);
	(void)tu_fixture_argv(j->argv, sizeof(j->argv) / sizeof(j->argv[0]), ap);
	va_end(ap);
	j->spec.exe = jr_fixture;
	j->spec.argv = j->argv;
	j->spec.scratch = scratch;
	j->spec.backend = backend;
	j->spec.stdin_fd = j->spec.stdout_fd = j->spec.stderr_fd = -1;
}

void
jr_run_env(struct jr *j, const struct job_env *env)
{
	int p[2] = { -1, -1 };
	int64_t t0;

	if (j->spec.stdout_fd == -1) {
		tu_cred_pair(p);
		j->spec.stdout_fd = p[1];
	}
	t0 = clock_ns();
	j->rc = jr_job_run(&j->spec, env, j->peer, &j->r, &j->why);
	j->elapsed_ms = (clock_ns() - t0) / 1000000;
	if (p[1] >= 0) {
		close(p[1]);
		j->spec.stdout_fd = -1;
		j->out = tu_drain_cred(p[0], &j->out_pids, &j->out_lines);
	}
}

pid_t
jr_pid(const struct jr *j, size_t n)
{
	if (n >= j->out_lines || j->out_pids[n] <= 1)
		fail_msg("no writer of line %zu of the job's stdout [%s]", n,
		    j->out ? j->out : "");
	return j->out_pids[n];
}

long
jr_seen_pgid(const struct jr *j, const struct job_env *env)
{
	return env->ns ? 2 : (long)j->r.pgid;
}

void
jr_run(struct jr *j)
{
	jr_run_env(j, &jr_env);
}

static _Noreturn void
intrude(int in_wr, int out_rd, void (*join)(long pid, long pgid))
{
	long pid, pgid, sid;
	FILE *f = fdopen(out_rd, "r");

	if (f == NULL || fscanf(f, "%ld %ld %ld", &pid, &pgid, &sid) != 3)
		_exit(2);
	join(pid, pgid);
	close(in_wr);
	sleep(30);
	_exit(0);
}

bool
jr_run_intruded(struct jr *j, void (*join)(long pid, long pgid))
{
	return jr_run_intruder(j, join) == 0;
}

int
jr_run_intruder(struct jr *j, void (*join)(long pid, long pgid))
{
	int in[2], out[2], status = 0;
	pid_t keeper, intruder;

	assert_int_equal(fd_pipe(in), 0);
	assert_int_equal(fd_pipe(out), 0);
	keeper = fork();
	assert_true(keeper >= 0);
	if (keeper == 0) {
		close(in[0]);
		close(out[1]);
		intruder = fork();
		if (intruder == 0)
			intrude(in[1], out[0], join);
		close(in[1]);
		close(out[0]);
		while (intruder > 0 && waitpid(intruder, &status, 0) < 0 &&
		    errno == EINTR)
			;
		if (intruder > 0 && WIFSIGNALED(status) &&
		    WTERMSIG(status) == SIGKILL)
			_exit(0);
		_exit(intruder > 0 && WIFEXITED(status) &&
		    WEXITSTATUS(status) < 100 ? 100 + WEXITSTATUS(status) : 1);
	}
	/* Only the intruder may end the job's stdin. */
	close(in[1]);
	close(out[0]);
	j->spec.stdin_fd = in[0];
	j->spec.stdout_fd = out[1];
	jr_run(j);
	close(in[0]);
	close(out[1]);
	j->spec.stdin_fd = j->spec.stdout_fd = -1;
	assert_int_equal(waitpid(keeper, &status, 0), keeper);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

void
jr_init_args(struct jr *j, enum confine_backend backend, const char *scratch,
    const char *const *args)
{
	size_t n = 1;

	jr_init(j, backend, scratch, NULL);
	while (args[n - 1] != NULL && n < 15) {
		j->argv[n] = args[n - 1];
		n++;
	}
	j->argv[n] = NULL;
}

int
jr_probe(enum confine_backend b, const char *scratch, int stdin_fd,
    const struct ident *peer, const char *const *args)
{
	struct jr j;
	int rc;

	jr_init_args(&j, b, scratch, args);
	j.spec.stdin_fd = stdin_fd;
	j.peer = peer;
	jr_run(&j);
	assert_int_equal(j.rc, 0);
	assert_int_equal(j.r.backend, b);
	rc = j.r.reason == CONFINE_REASON_SIGNAL ? JR_SIG(j.r.signal) :
	    j.r.exit_code;
	jr_free(&j);
	return rc;
}

void
jr_put(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
}

void
jr_assert_text(const char *path, const char *text)
{
	char *got = tu_slurp(path, NULL);

	assert_non_null(got);
	assert_string_equal(got, text);
	free(got);
}

void
jr_free(struct jr *j)
{
	free(j->out);
	j->out = NULL;
	free(j->out_pids);
	j->out_pids = NULL;
	j->out_lines = 0;
}

int
jr_dirs_setup(void **state)
{
	struct jr_dirs *d = calloc(1, sizeof(*d));

	assert_non_null(d);
	d->scratch = tu_mkdtemp("scratch");
	d->outside = tu_mkdtemp("outside");
	*state = d;
	return 0;
}

int
jr_dirs_teardown(void **state)
{
	struct jr_dirs *d = *state;

	free(d->scratch);
	free(d->outside);
	free(d);
	return 0;
}

void
jr_assert(const struct jr *j, enum confine_outcome o, enum confine_reason rs,
    const char *file, int line)
{
	const struct confine_result *r = &j->r;

	if (j->rc == 0 && r->outcome == o && r->reason == rs)
		return;
	print_error("%s:%d: wanted %s/%s, got rc=%d (%s) %s/%s exit=%d "
	    "signal=%d error=%d step=%s stdout=[%s]\n", file, line,
	    confine_outcome_name(o), confine_reason_name(rs), j->rc,
	    j->why ? j->why : "", confine_outcome_name(r->outcome),
	    confine_reason_name(r->reason), r->exit_code, r->signal, r->error,
	    confine_step_name(r->step), j->out ? j->out : "");
	_fail(file, line);
}
