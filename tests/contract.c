/*
 * The contract's cases, for any backend that really confines: each
 * denial paired with the same probe run unconfined (backend none), each
 * asserting the backend's own denial errno. Linux runs them with Landlock
 * (job_test), a Mac with Seatbelt (tests/macos). Beside the contract's
 * own eight: the indirect writes out of DESIGN.md's invariant 6 (through
 * a symlink, by rename, by hard link), portable, so both backends run them.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/contract.h"
#include "tests/jobrun.h"
#include "tests/testutil.h"

#define NONE CONFINE_BACKEND_NONE

static struct {
	enum confine_backend backend;
	int write_errno;
	int rename_errno;
	int net_errno;
	enum confine_proof proof;
} cfg;

/*
 * `fixture write path` in scratch: Completed with the file there when
 * allowed, else Failed with the backend's denial errno and no file.
 */
static void
probe_write(enum confine_backend backend, const char *scratch,
    const char *path, bool allowed)
{
	struct jr j;

	jr_init(&j, backend, scratch, "write", path, NULL);
	jr_run(&j);
	if (allowed) {
		assert_outcome(&j, CONFINE_COMPLETED, CONFINE_REASON_NONE);
		assert_true(tu_exists(path));
	} else {
		assert_outcome(&j, CONFINE_FAILED, CONFINE_REASON_EXIT_CODE);
		assert_int_equal(j.r.exit_code, cfg.write_errno);
		assert_false(tu_exists(path));
	}
	jr_free(&j);
}

/* The contract's healthy job: Completed, and writes only inside. */
static void
healthy_job_completes_and_writes_only_inside_scratch(void **state)
{
	struct jr_dirs *d = *state;
	char *in = tu_join(d->scratch, "inside"), *out = tu_join(d->outside, "x");
	char *text;
	struct jr j;

	jr_init(&j, cfg.backend, d->scratch, "write", in, NULL);
	jr_run(&j);
	assert_outcome(&j, CONFINE_COMPLETED, CONFINE_REASON_NONE);
	assert_int_equal(j.r.exit_code, 0);
	assert_int_equal(j.r.backend, cfg.backend);
	assert_int_equal(j.r.proof, cfg.proof);
	text = tu_slurp(in, NULL);
	assert_non_null(text);
	assert_string_equal(text, "confined\n");
	free(text);
	jr_free(&j);

	probe_write(cfg.backend, d->scratch, out, false);
	free(in);
	free(out);
}

/* The same probe unconfined succeeds: the denial is confinement's. */
static void
write_outside_succeeds_unconfined_and_is_denied_confined(void **state)
{
	struct jr_dirs *d = *state;
	char *out = tu_join(d->outside, "pair");

	probe_write(NONE, d->scratch, out, true);
	assert_int_equal(unlink(out), 0);

	probe_write(cfg.backend, d->scratch, out, false);
	free(out);
}

/*
 * A host's listener on the loopback: unconfined, the job's connect
 * reaches it (and the host accepts it); confined, it is refused, by the
 * backend (EPERM) or because the job's loopback is its own
 * (ECONNREFUSED: nothing listens there), and the host sees nothing.
 */
static void
network_connect_reaches_the_kernel_unconfined_and_is_refused_confined(void **state)
{
	struct jr_dirs *d = *state;
	char port[16];
	struct jr j;
	int fd, a;

	snprintf(port, sizeof(port), "%d", tu_listening_port(&fd));
	jr_init(&j, NONE, d->scratch, "connect", port, NULL);
	jr_run(&j);
	assert_outcome(&j, CONFINE_COMPLETED, CONFINE_REASON_NONE);
	jr_free(&j);
	assert_true((a = tu_accept_now(fd)) >= 0);
	close(a);

	jr_init(&j, cfg.backend, d->scratch, "connect", port, NULL);
	jr_run(&j);
	assert_outcome(&j, CONFINE_FAILED, CONFINE_REASON_EXIT_CODE);
	assert_int_equal(j.r.exit_code, cfg.net_errno);
	jr_free(&j);
	assert_int_equal(tu_accept_now(fd), -1);
	close(fd);
}

static void
scratch_root_through_a_symlink_works(void **state)
{
	struct jr_dirs *d = *state;
	char *link = tu_join(d->outside, "link"), *in = tu_join(link, "f");
	char *real = tu_join(d->scratch, "f");

	assert_int_equal(symlink(d->scratch, link), 0);
	probe_write(cfg.backend, link, in, true);
	assert_true(tu_exists(real));
	free(link);
	free(in);
	free(real);
}

static void
scratch_root_named_with_metacharacters_confines_exactly(void **state)
{
	struct jr_dirs *d = *state;
	char *weird = tu_join(d->scratch, "we\"ir)d\\\nname");
	char *in = tu_join(weird, "f"), *out = tu_join(d->scratch, "beside");

	assert_int_equal(mkdir(weird, 0755), 0);
	probe_write(cfg.backend, weird, in, true);
	/* Its parent is outside it. */
	probe_write(cfg.backend, weird, out, false);
	free(weird);
	free(in);
	free(out);
}

/* `fixture op a [b]` under backend: its exit code, 0 or an errno. */
static int
probe(enum confine_backend backend, const char *scratch, const char *op,
    const char *a, const char *b)
{
	struct jr j;
	int rc;

	jr_init(&j, backend, scratch, op, a, b, NULL);
	jr_run(&j);
	assert_int_equal(j.rc, 0);
	assert_true(j.r.outcome == CONFINE_COMPLETED ||
	    j.r.reason == CONFINE_REASON_EXIT_CODE);
	rc = j.r.exit_code;
	jr_free(&j);
	return rc;
}

/*
 * Invariant 6, the indirect ways out: each unconfined first (it gets out),
 * then confined (the backend's denial errno, nothing changed outside).
 */
static void
write_through_a_symlink_pointing_out(void **state)
{
	struct jr_dirs *d = *state;
	char *target = tu_join(d->outside, "target");
	char *link = tu_join(d->scratch, "link");

	jr_put(target, "orig");
	assert_int_equal(symlink(target, link), 0);
	assert_int_equal(probe(NONE, d->scratch, "write", link, NULL), 0);
	jr_assert_text(target, "confined\n");
	jr_put(target, "orig");
	assert_int_equal(probe(cfg.backend, d->scratch, "write", link, NULL),
	    cfg.write_errno);
	jr_assert_text(target, "orig");
	free(target);
	free(link);
}

static void
rename_out_and_in(void **state)
{
	struct jr_dirs *d = *state;
	char *in = tu_join(d->scratch, "f"), *out = tu_join(d->outside, "f");

	jr_put(in, "x");
	assert_int_equal(probe(NONE, d->scratch, "rename", in, out), 0);
	assert_int_equal(rename(out, in), 0);
	assert_int_equal(probe(cfg.backend, d->scratch, "rename", in, out),
	    cfg.rename_errno);
	assert_true(tu_exists(in));
	assert_false(tu_exists(out));
	/* Into the root: removing it from outside is a write outside. */
	assert_int_equal(rename(in, out), 0);
	assert_int_equal(probe(NONE, d->scratch, "rename", out, in), 0);
	assert_int_equal(rename(in, out), 0);
	assert_int_equal(probe(cfg.backend, d->scratch, "rename", out, in),
	    cfg.rename_errno);
	assert_true(tu_exists(out));
	assert_false(tu_exists(in));
	free(in);
	free(out);
}

static void
hard_link_out(void **state)
{
	struct jr_dirs *d = *state;
	char *in = tu_join(d->scratch, "f"), *out = tu_join(d->outside, "f");

	jr_put(in, "x");
	assert_int_equal(probe(NONE, d->scratch, "link", in, out), 0);
	assert_int_equal(unlink(out), 0);
	assert_int_equal(probe(cfg.backend, d->scratch, "link", in, out),
	    cfg.write_errno);
	assert_false(tu_exists(out));
	free(in);
	free(out);
}

/* The contract's detached descendant: not Completed, and killed after. */
static void
descendant_left_in_the_group_is_uncertain_and_killed(void **state)
{
	struct jr_dirs *d = *state;
	struct jr j;
	pid_t pid;

	jr_init(&j, cfg.backend, d->scratch, "detach", "30000", NULL);
	jr_run(&j);
	assert_outcome(&j, CONFINE_UNCERTAIN, CONFINE_REASON_GROUP_STILL_PRESENT);
	assert_int_equal(j.r.exit_code, 0);
	pid = jr_pid(&j, 0);
	assert_true(pid > 1);
	assert_true(tu_gone(pid));
	/* Cleanup emptied the group: that much was proven afterwards. */
	assert_int_equal(j.r.proof, cfg.proof);
	jr_free(&j);
}

static void
exit_3_is_failed_exit_3(void **state)
{
	struct jr_dirs *d = *state;
	struct jr j;

	jr_init(&j, cfg.backend, d->scratch, "exit", "3", NULL);
	jr_run(&j);
	assert_outcome(&j, CONFINE_FAILED, CONFINE_REASON_EXIT_CODE);
	assert_int_equal(j.r.exit_code, 3);
	assert_int_equal(j.r.signal, 0);
	jr_free(&j);
}

/* Cancelled, never before the deadline, and nothing of it left. */
static void
deadline_cancels_and_the_group_is_gone(void **state)
{
	struct jr_dirs *d = *state;
	struct jr j;
	pid_t pid;

	jr_init(&j, cfg.backend, d->scratch, "pid-sleep", "30000", NULL);
	j.spec.deadline_ms = TU_DEADLINE_AFTER_START_MS;
	jr_run(&j);
	assert_outcome(&j, CONFINE_CANCELLED, CONFINE_REASON_DEADLINE);
	assert_true(j.elapsed_ms >= TU_DEADLINE_AFTER_START_MS);
	assert_int_equal(j.r.signal, SIGKILL);
	pid = jr_pid(&j, 0);
	assert_true(pid > 1);
	assert_true(tu_gone(pid));
	assert_int_equal(j.r.proof, cfg.proof);
	jr_free(&j);
}

#define T(name) cmocka_unit_test_setup_teardown(name, jr_dirs_setup, jr_dirs_teardown)

int
contract_run(enum confine_backend backend, const struct contract_errnos *e,
    enum confine_proof proof)
{
	const struct CMUnitTest tests[] = {
		T(healthy_job_completes_and_writes_only_inside_scratch),
		T(write_outside_succeeds_unconfined_and_is_denied_confined),
		T(network_connect_reaches_the_kernel_unconfined_and_is_refused_confined),
		T(scratch_root_through_a_symlink_works),
		T(scratch_root_named_with_metacharacters_confines_exactly),
		T(write_through_a_symlink_pointing_out),
		T(rename_out_and_in),
		T(hard_link_out),
		T(descendant_left_in_the_group_is_uncertain_and_killed),
		T(exit_3_is_failed_exit_3),
		T(deadline_cancels_and_the_group_is_gone),
	};

	cfg.backend = backend;
	cfg.write_errno = e->write;
	cfg.rename_errno = e->rename;
	cfg.net_errno = e->net;
	cfg.proof = proof;
	return cmocka_run_group_tests_name("contract", tests, NULL, NULL);
}
