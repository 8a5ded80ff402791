/*
 * The client of valgrind_test: `valgrind_client SOCKET FIXTURE SCRATCH`
 * runs one job of each outcome through the helper listening on SOCKET and
 * checks each settlement; exit 0 when all are as expected.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "confine/confine.h"

static int bad;

/*
 * One job; its outcome must be want and, unless it was cancelled, its own
 * exit code want_exit: valgrind's --error-exitcode in the traced job would
 * change it.
 */
static void
run(struct confine *c, const char *fixture, const char *scratch,
    enum confine_backend backend, int64_t deadline, enum confine_outcome want,
    int want_exit, int want_rc, const char *const *argv)
{
	struct confine_spec spec;
	struct confine_result r;
	struct confine_job *job;
	int rc;

	confine_spec_init(&spec);
	spec.exe = fixture;
	spec.argv = argv;
	spec.scratch = scratch;
	spec.backend = backend;
	spec.deadline_ms = deadline;
	rc = confine_spawn(c, &spec, &job);
	if (rc != want_rc) {
		fprintf(stderr, "%s: spawn gave %d (%s), wanted %d\n", argv[1], rc,
		    confine_error_message(), want_rc);
		bad++;
	}
	if (rc != 0)
		return;
	confine_wait(job, -1, &r);
	if (r.outcome != want) {
		fprintf(stderr, "%s: %s, wanted %s\n", argv[1],
		    confine_outcome_name(r.outcome), confine_outcome_name(want));
		bad++;
	} else if (want != CONFINE_CANCELLED && r.exit_code != want_exit) {
		fprintf(stderr, "%s: exit code %d, wanted %d\n", argv[1],
		    r.exit_code, want_exit);
		bad++;
	}
	confine_job_free(job);
}

int
main(int argc, char **argv)
{
	struct confine_options o = { .mode = CONFINE_MODE_CONNECT };
	struct confine *c;

	if (argc != 4)
		return 2;
	o.socket_path = argv[1];
	if (confine_open(&c, &o) != 0) {
		fprintf(stderr, "open: %s\n", confine_error_message());
		return 1;
	}
#define ARGV(...) (const char *const[]){ "fixture", __VA_ARGS__, NULL }
	run(c, argv[2], argv[3], CONFINE_BACKEND_NONE, 0, CONFINE_COMPLETED, 0,
	    0, ARGV("exit", "0"));
	run(c, argv[2], argv[3], CONFINE_BACKEND_NONE, 0, CONFINE_FAILED, 3,
	    0, ARGV("exit", "3"));
	run(c, argv[2], argv[3], CONFINE_BACKEND_NONE, 300, CONFINE_CANCELLED,
	    0, 0, ARGV("sleep", "30000"));
	run(c, argv[2], argv[3], CONFINE_BACKEND_NONE, 0, CONFINE_UNCERTAIN, 0,
	    0, ARGV("detach", "30000"));
	/*
	 * valgrind does not know the Landlock calls (ENOSYS under it): the
	 * ABI probe fails and the job is refused, never run unconfined.
	 */
	run(c, argv[2], argv[3], CONFINE_BACKEND_LANDLOCK, 0, CONFINE_COMPLETED,
	    0, -ENOTSUP, ARGV("exit", "0"));
	run(c, argv[2], "relative", CONFINE_BACKEND_NONE, 0, CONFINE_COMPLETED,
	    0, -EINVAL, ARGV("exit", "0"));
	confine_close(c);
	return bad != 0;
}
