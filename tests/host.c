/*
 * A host program for the tests that kill the host: `host MODE HELPER
 * FIXTURE SCRATCH N` opens confine in MODE (exec or fork), starts N
 * sleeping jobs, prints the helper's pid and then each job's pid, one per
 * line, and waits to be killed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "confine/confine.h"

int
main(int argc, char **argv)
{
	struct confine_options o = { .mode = CONFINE_MODE_EXEC };
	const char *jargv[] = { "fixture", "pid-sleep", "30000", NULL };
	struct confine_spec spec;
	struct confine_job *job;
	struct confine *c;
	char line[32];
	int i, n, p[2];
	FILE *in;

	if (argc != 6) {
		fprintf(stderr, "usage: host exec|fork HELPER FIXTURE SCRATCH N\n");
		return 2;
	}
	o.mode = strcmp(argv[1], "fork") == 0 ? CONFINE_MODE_FORK :
	    CONFINE_MODE_EXEC;
	o.helper_path = argv[2];
	if (confine_open(&c, &o) != 0) {
		fprintf(stderr, "host: %s\n", confine_error_message());
		return 1;
	}
	printf("%ld\n", (long)confine_helper_pid(c));
	n = atoi(argv[5]);
	for (i = 0; i < n; i++) {
		if (pipe(p) != 0)
			return 1;
		confine_spec_init(&spec);
		spec.exe = argv[3];
		spec.argv = jargv;
		spec.scratch = argv[4];
		spec.stdout_fd = p[1];
		if (confine_spawn(c, &spec, &job) != 0) {
			fprintf(stderr, "host: %s\n", confine_error_message());
			return 1;
		}
		close(p[1]);
		in = fdopen(p[0], "r");
		if (in == NULL || fgets(line, sizeof(line), in) == NULL)
			return 1;
		fputs(line, stdout);
		fclose(in);
	}
	fflush(stdout);
	for (;;)
		pause();
}
