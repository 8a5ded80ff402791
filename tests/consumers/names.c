/*
 * A host whose own functions have the names of confine's internal ones
 * (and of the helper's, which the library once linked): linked statically
 * with confine, it must link, call its own, and run a job through the
 * library's, never one of these.
 *
 *   names [SCRATCH]   (default: $TEST_TMPDIR)
 *
 * prints "names: completed" and exits 0, or says what went wrong.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <confine/confine.h>

/* Called by confine instead of its own, any of these ends the run. */
#define HOSTS(name)                                                      \
	int name(void);                                                  \
	int name(void)                                                   \
	{                                                                \
		fprintf(stderr, "names: the library called the host's %s\n", \
		    #name);                                              \
		_exit(3);                                                \
	}
HOSTS(serve)
HOSTS(job_start)
HOSTS(ev_init)
HOSTS(fd_close)
HOSTS(fd_socketpair)
HOSTS(fd_close_except)
HOSTS(fd_write_full)
HOSTS(wire_hdr_encode)
HOSTS(wire_put_hello)
HOSTS(wire_get_settled)
HOSTS(settle_select)
HOSTS(spec_check)
HOSTS(proc_reap)
HOSTS(image_open)

int
main(int argc, char **argv)
{
	const char *args[] = { "sh", "-c", "exit 0", NULL };
	struct confine_spec spec;
	struct confine_result r;
	struct confine_job *job;
	struct confine *c;
	const char *scratch;

	if (argc > 2 || (scratch = argc == 2 ? argv[1] :
	    getenv("TEST_TMPDIR")) == NULL) {
		fprintf(stderr, "usage: names [SCRATCH]\n");
		return 2;
	}
	if (confine_open(&c, NULL) != 0) {
		fprintf(stderr, "names: open: %s\n", confine_error_message());
		return 1;
	}
	confine_spec_init(&spec);
	spec.exe = "/bin/sh";
	spec.argv = args;
	spec.scratch = scratch;
	if (confine_spawn(c, &spec, &job) != 0) {
		fprintf(stderr, "names: spawn: %s\n", confine_error_message());
		return 1;
	}
	confine_wait(job, -1, &r);
	printf("names: %s\n", confine_outcome_name(r.outcome));
	confine_job_free(job);
	confine_close(c);
	return r.outcome == CONFINE_COMPLETED ? 0 : 1;
}
