/*
 * What happened to a job, as its state machine (job.c) takes it: a report
 * typed by what it says, whoever saw it. A job's shepherd or init sees
 * most, and sends each over its socket as a fixed record (shepherd.h's
 * shep_rec_encode). A job without one (job.c's direct path) is seen by the
 * helper itself: its exec result read as it starts, its exit reaped
 * through its pidfd, its tree removed by a process of its own. The
 * machine takes every report alike, by type and phase, and never asks
 * where one came from.
 */
#ifndef CONFINE_REPORT_H
#define CONFINE_REPORT_H

#include <stdint.h>
#include <sys/resource.h>
#include <sys/types.h>

#include "confine/confine.h"
#include "helper/backend/op.h"

/* The values are the shepherd's record's type field too: kept. */
enum report_type {
	REP_EXEC_OK = 1,      /* pid: the job exec'd */
	REP_EXEC_FAILED = 2,  /* pid, step, err: a step before exec failed */
	REP_EXITED = 3,       /* status, rusage, wall: the job was reaped */
	REP_WAIT_FAILED = 4,  /* err: the job could not be waited for */
	REP_SETUP_FAILED = 5, /* err: no job was started */
	REP_SWEPT = 6,        /* status: how many leftovers it killed */
	REP_REMOVED = 7,      /* err: the fresh root is gone (0) or not */
	REP_FORKED = 8,       /* pid: the job is in its group, we are out */
	REP_SIGNALLED = 9,    /* status: the signal, err: 0 once it reached
	                         the job's group, ESRCH when the job was
	                         reaped already, or kill's errno */
};

struct job_report {
	enum report_type type;
	pid_t pid;
	int status;
	int err;
	enum confine_step step;
	enum op op;            /* EXEC_FAILED: the call that failed */
	int leftovers;         /* EXITED: something of the job outlived it */
	int64_t wall_us;
	int64_t user_us;
	int64_t sys_us;
	int64_t max_rss_kib;
};

/* An EXITED report of a reaped job: its status and usage. */
void report_exited(struct job_report *r, int status, const struct rusage *ru,
    int64_t wall_us);

#endif
