/*
 * confine-bb-runner's runner: a Buildbarn Run request run as one confine
 * job through the runner's one helper, in C, without gRPC (server.cc puts
 * it on the wire; tests/bb/runner_test.c drives it directly).
 *
 *   bbrun_open(&r, &config)                 once: the helper starts
 *   call = bbrun_call_new(r)                per Run, on any thread:
 *   bbrun_call_run(call, &req, ms, &reply)  blocks until the job settled
 *   bbrun_call_cancel(call)                 from any other thread, any time
 *   bbrun_call_free(call)                   after run has returned (or
 *                                           instead of it)
 *   bbrun_close(r)                          once every call is freed
 *
 * Thread-safe: any number of calls run at once on one runner, each on its
 * own thread, sharing the one helper. No lock is held while a job runs:
 * the runner's lock guards its count of jobs, a call's its job handle.
 */
#ifndef CONFINE_BB_RUNNER_H
#define CONFINE_BB_RUNNER_H

#include <stdint.h>

#include <confine/confine.h>

#include "bb/reply.h"
#include "bb/request.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Kept, not copied: its strings and arrays must outlive the runner. */
struct bbrun_config {
	const char *build_dir;          /* absolute: every request's base */
	int concurrency;                /* jobs at once, more wait; 0: any */
	int64_t margin_ms;              /* the job's deadline is the call's
	                                   less this (reply.h) */
	int64_t grace_ms;               /* SIGTERM this long before SIGKILL */
	enum confine_backend backend;
	struct confine_limits limits;
	unsigned flags;                 /* CONFINE_NO_TMP, CONFINE_READ_SYSTEM */
	const char *const *readable;    /* NULL-terminated, or NULL */
	const char *const *devices;     /* NULL-terminated, or NULL */
	struct confine_options options; /* how to start or reach the helper */
	int quiet;                      /* no line on stderr per failed Run */
};

struct bbrun;
struct bbrun_call;

/*
 * Opens the build directory and starts (or connects to) the helper. 0, or
 * a negative errno with why in words.
 */
int bbrun_open(struct bbrun **r, const struct bbrun_config *config,
    char *why, size_t whylen);

/* The helper's pid, as confine_helper_pid says it. */
pid_t bbrun_helper_pid(struct bbrun *r);

/* Waits until every call is freed, then stops the helper. */
void bbrun_close(struct bbrun *r);

/* A call's state; NULL when out of memory. Thread-safe. */
struct bbrun_call *bbrun_call_new(struct bbrun *r);

/*
 * Runs req: checks it, finds its program, waits for a free slot (no
 * longer than the call's deadline or a cancel), opens its stdout and
 * stderr, spawns the job and waits until it settled; then *reply says
 * how. call_ms is the call's time left (-1: no deadline). Once per call.
 * A request refused touches nothing: the checks all come before the
 * first file is made.
 */
void bbrun_call_run(struct bbrun_call *call, const struct bbreq *req,
    int64_t call_ms, struct bbreply *reply);

/*
 * Cancels the call: a job running is cancelled (run returns once it has
 * settled), one not started yet never starts. NULL does nothing. Any
 * thread, before bbrun_call_free.
 */
void bbrun_call_cancel(struct bbrun_call *call);

/* Releases the call, once run has returned (or was never called). */
void bbrun_call_free(struct bbrun_call *call);

/*
 * CheckReadiness: path, relative to the build directory, exists there
 * (found without leaving it). OK, or INTERNAL as bb_runner answers.
 */
void bbrun_check_readiness(struct bbrun *r, const char *path,
    struct bbreply *reply);

#ifdef __cplusplus
}
#endif

#endif
