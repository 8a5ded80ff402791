/*
 * Another workspace's program: `hello_confined [HELPER]` runs one job,
 * confined, through the helper it forks (or the HELPER binary it execs),
 * in a fresh scratch root, and says how the job settled.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <confine/confine.h>

int
main(int argc, char **argv)
{
	const char *job_argv[] = { "sh", "-c",
	    "echo hello from another workspace > note && cat note", NULL };
	const char *tmp = getenv("TEST_TMPDIR");
	struct confine_options o;
	struct confine_spec spec;
	struct confine_result r;
	struct confine_job *job;
	struct confine *c;
	char scratch[4096];

	snprintf(scratch, sizeof(scratch), "%s/hello.XXXXXX", tmp ? tmp : "/tmp");
	if (mkdtemp(scratch) == NULL) {
		perror("mkdtemp");
		return 1;
	}
	memset(&o, 0, sizeof(o));
	o.mode = argc > 1 ? CONFINE_MODE_EXEC : CONFINE_MODE_AUTO;
	o.helper_path = argc > 1 ? argv[1] : NULL;
	if (confine_open(&c, &o) != 0) {
		fprintf(stderr, "open: %s\n", confine_error_message());
		return 1;
	}
	confine_spec_init(&spec);
	spec.exe = "/bin/sh";
	spec.argv = job_argv;
	spec.scratch = scratch;
	spec.stdout_fd = STDOUT_FILENO;
	if (confine_spawn(c, &spec, &job) != 0) {
		fprintf(stderr, "spawn: %s\n", confine_error_message());
		confine_close(c);
		return 1;
	}
	confine_wait(job, -1, &r);
	printf("%s\n", confine_outcome_name(r.outcome));
	confine_job_free(job);
	confine_close(c);
	return r.outcome == CONFINE_COMPLETED ? 0 : 1;
}
