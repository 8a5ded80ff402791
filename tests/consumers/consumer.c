/*
 * A program of its own, built with nothing but cc and pkg-config against
 * an installed confine:
 *
 *   consumer SCRATCH OUTSIDE [HELPER]
 *
 * opens the library in exec mode (HELPER, else the library's default),
 * runs a job that writes inside SCRATCH and one that writes to OUTSIDE,
 * and prints how each settled and which binary served them.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <confine/confine.h>

static int
run(struct confine *c, const char *scratch, const char *what,
    const char *script)
{
	const char *argv[] = { "sh", "-c", script, NULL };
	struct confine_spec spec;
	struct confine_result r;
	struct confine_job *job;

	confine_spec_init(&spec);
	spec.exe = "/bin/sh";
	spec.argv = argv;
	spec.scratch = scratch;
	spec.stdout_fd = STDOUT_FILENO;
	if (confine_spawn(c, &spec, &job) != 0) {
		printf("%s: refused: %s\n", what, confine_error_message());
		return 1;
	}
	confine_wait(job, -1, &r);
	printf("%s: %s %s %d\n", what, confine_outcome_name(r.outcome),
	    confine_reason_name(r.reason), r.exit_code);
	confine_job_free(job);
	return 0;
}

int
main(int argc, char **argv)
{
	struct confine_options o;
	struct confine *c;
	char link[64], exe[4096], script[4200];
	ssize_t n;

	if (argc < 3 || argc > 4) {
		fprintf(stderr, "usage: consumer SCRATCH OUTSIDE [HELPER]\n");
		return 2;
	}
	memset(&o, 0, sizeof(o));
	o.mode = CONFINE_MODE_EXEC;
	o.helper_path = argc == 4 ? argv[3] : NULL;
	printf("default helper: %s\n", confine_default_helper_path());
	if (confine_open(&c, &o) != 0) {
		printf("open: %s\n", confine_error_message());
		return 1;
	}
	snprintf(link, sizeof(link), "/proc/%ld/exe", (long)confine_helper_pid(c));
	n = readlink(link, exe, sizeof(exe) - 1);
	exe[n > 0 ? n : 0] = '\0';
	printf("helper: %s\n", exe);
	run(c, argv[1], "inside", "echo consumed > note && cat note");
	snprintf(script, sizeof(script), "echo escaped > '%s'", argv[2]);
	run(c, argv[1], "outside", script);
	confine_close(c);
	return 0;
}
