/*
 * What confine-bb-runner answers a Run with: a gRPC status and, when it
 * is OK, an exit code and the job's resource usage. Pure: the settlement
 * of a job, a refused spawn or a bad request, mapped to the answer bb_worker
 * expects (tests/bb/reply_test.c). server.cc puts it on the wire.
 *
 * Only a job that ran to its own end answers OK: Completed (exit code 0),
 * Failed by an exit code (that code) or a signal (-1, as bb_runner reports
 * a signal death, and the signal's name in the resource usage). Every
 * other settlement answers a status that is not OK, with a message that
 * says what happened, so that no Cancelled or Uncertain job can pass for
 * an action that ran to its end:
 *
 *   Cancelled(deadline)        DEADLINE_EXCEEDED
 *   Cancelled(cancelled)       CANCELLED
 *   Uncertain(helper lost)     UNAVAILABLE  (another try gets a new helper)
 *   Uncertain(otherwise)       INTERNAL     (outputs not to be trusted)
 *   Failed(exec) ENOENT, EACCES, EPERM, EISDIR, ENOTDIR, ENOEXEC
 *                              INVALID_ARGUMENT (bb_runner's, for a program
 *                              that cannot start); otherwise INTERNAL
 */
#ifndef CONFINE_BB_REPLY_H
#define CONFINE_BB_REPLY_H

#include <stdint.h>

#include <confine/confine.h>

#ifdef __cplusplus
extern "C" {
#endif

/* gRPC's status codes, by their numbers on the wire. */
enum bbreply_code {
	BBREPLY_OK = 0,
	BBREPLY_CANCELLED = 1,
	BBREPLY_INVALID_ARGUMENT = 3,
	BBREPLY_DEADLINE_EXCEEDED = 4,
	BBREPLY_RESOURCE_EXHAUSTED = 8,
	BBREPLY_FAILED_PRECONDITION = 9,
	BBREPLY_INTERNAL = 13,
	BBREPLY_UNAVAILABLE = 14,
};

struct bbreply {
	enum bbreply_code code;
	char message[1024];      /* for a status that is not OK */
	/* For OK: */
	int64_t exit_code;
	int64_t user_us, sys_us; /* rusage of the job and its children */
	int64_t max_rss_bytes;
	char signal[16];         /* "SEGV", without SIG; "" when it exited */
};

/* The status's name, "DEADLINE_EXCEEDED"; "UNKNOWN" out of range. */
const char *bbreply_code_name(enum bbreply_code code);

/* Sets a status that is not OK and its message. */
void bbreply_error(struct bbreply *reply, enum bbreply_code code,
    const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/*
 * The answer for a settled job. deadline_ms is the job's own deadline
 * and call_ms the call's time left when it arrived (-1: none), for the
 * message.
 */
void bbreply_settled(struct bbreply *reply, const struct confine_result *r,
    int64_t deadline_ms, int64_t call_ms);

/*
 * The answer for confine_spawn's refusal err (negative), in why's words:
 * nothing ran. The request's own paths (-EINVAL, -ENOENT, -ENOTDIR,
 * -EACCES, -EMSGSIZE) are INVALID_ARGUMENT; confinement this machine
 * cannot give (-ENOTSUP) FAILED_PRECONDITION; too many jobs (-EAGAIN)
 * RESOURCE_EXHAUSTED; a helper lost or stuck (-ECONNRESET, -ETIMEDOUT,
 * -ESHUTDOWN) UNAVAILABLE; anything else INTERNAL.
 */
void bbreply_refused(struct bbreply *reply, int err, const char *why);

/*
 * The job's deadline for a call with call_ms left (-1: none): the call's,
 * less margin_ms, so that the settlement reaches the caller before its own
 * deadline fires; the margin is at most half the time left. 0 when the
 * call has no deadline; -1 when no time is left to run anything.
 */
int64_t bbreply_job_deadline(int64_t call_ms, int64_t margin_ms);

#ifdef __cplusplus
}
#endif

#endif
