#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "src/clock.h"
#include "src/fd.h"
#include "tests/jobrun.h"
#include "tests/testutil.h"

struct job_env jr_env;
char *jr_fixture;

void
jr_setup(void)
{
	job_env_init(&jr_env);
	jr_fixture = tu_runfile("tests/fixture");
}

void
jr_init(struct jr *j, enum confine_backend backend, const char *scratch, ...)
{
	va_list ap;
	size_t n;

	memset(j, 0, sizeof(*j));
	va_start(ap, scratch);
	n = tu_fixture_argv(j->argv, sizeof(j->argv) / sizeof(j->argv[0]), ap);
	va_end(ap);
	j->spec.exe = jr_fixture;
	j->spec.argv = j->argv;
	j->spec.argc = n;
	j->spec.scratch = scratch;
	j->spec.backend = backend;
	j->spec.fd[0] = j->spec.fd[1] = j->spec.fd[2] = -1;
}

void
jr_run_env(struct jr *j, const struct job_env *env)
{
	int p[2] = { -1, -1 };
	int64_t t0;

	if (j->spec.fd[1] == -1) {
		assert_int_equal(fd_pipe(p), 0);
		j->spec.fd[1] = p[1];
	}
	t0 = clock_ns();
	j->rc = job_run(&j->spec, env, &j->r, &j->why);
	j->elapsed_ms = (clock_ns() - t0) / 1000000;
	if (p[1] >= 0) {
		close(p[1]);
		j->spec.fd[1] = -1;
		j->out = tu_drain(p[0]);
	}
}

void
jr_run(struct jr *j)
{
	jr_run_env(j, &jr_env);
}

void
jr_free(struct jr *j)
{
	free(j->out);
	j->out = NULL;
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
