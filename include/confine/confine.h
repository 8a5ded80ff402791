/*
 * confine: run untrusted jobs confined, in their own process groups, through
 * a small pre-forked helper, and learn how each one settled.
 *
 * This header is the reference manual. Every call returns 0 or a negative
 * errno unless it says otherwise.
 */
#ifndef CONFINE_CONFINE_H
#define CONFINE_CONFINE_H

#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CONFINE_VERSION "0.1.0"

/*
 * How a job settled. The four outcomes never collapse into each other and
 * only CONFINE_COMPLETED means success.
 */
enum confine_outcome {
	CONFINE_COMPLETED = 1, /* exited 0 and its process group is provably empty */
	CONFINE_FAILED = 2,    /* exit code, signal or exec error, on its own */
	CONFINE_CANCELLED = 3, /* our deadline or an explicit cancel stopped it */
	CONFINE_UNCERTAIN = 4, /* settlement could not be proven */
};

/* Why, within an outcome. */
enum confine_reason {
	CONFINE_REASON_NONE = 0,            /* Completed */
	CONFINE_REASON_EXIT_CODE = 1,       /* Failed: exited with exit_code != 0 */
	CONFINE_REASON_SIGNAL = 2,          /* Failed: killed by signal */
	CONFINE_REASON_EXEC = 3,            /* Failed: step failed with error */
	CONFINE_REASON_DEADLINE = 4,        /* Cancelled: the deadline fired */
	CONFINE_REASON_CANCELLED = 5,       /* Cancelled: confine_cancel() */
	CONFINE_REASON_WAIT_FAILED = 6,     /* Uncertain: the job could not be observed */
	CONFINE_REASON_GROUP_STILL_PRESENT = 7, /* Uncertain: something outlived the job */
	CONFINE_REASON_KILL_AMBIGUOUS = 8,  /* Uncertain: a kill failed other than ESRCH */
	CONFINE_REASON_HELPER_LOST = 9,     /* Uncertain: the helper died */
};

/* Which confinement a job runs under. */
enum confine_backend {
	CONFINE_BACKEND_AUTO = 0,     /* the platform's own: Landlock or Seatbelt */
	CONFINE_BACKEND_LANDLOCK = 1, /* Linux: Landlock + seccomp */
	CONFINE_BACKEND_SEATBELT = 2, /* macOS: sandbox-exec with a Seatbelt profile */
	CONFINE_BACKEND_NONE = 3,     /* no confinement; only when asked for by name */
};

/* The step of the job's start that failed (reason CONFINE_REASON_EXEC). */
enum confine_step {
	CONFINE_STEP_NONE = 0,
	CONFINE_STEP_SIGNALS = 1, /* default dispositions, empty mask */
	CONFINE_STEP_STDIO = 2,   /* stdio in place, every other fd closed */
	CONFINE_STEP_CWD = 3,     /* chdir */
	CONFINE_STEP_CONFINE = 4, /* confinement (refused as -ENOTSUP, never run) */
	CONFINE_STEP_EXEC = 5,    /* execve, or the pre-check of the program */
};

/* How the result proved that nothing of the job was left. */
enum confine_proof {
	CONFINE_PROOF_NONE = 0,  /* not proven (see the outcome) */
	CONFINE_PROOF_PGID = 1,  /* kill(-pgid, 0) gave ESRCH */
};

/*
 * The settlement of one job. Fields that do not apply are 0, except
 * exit_code, which is -1 unless the job's process exited by itself.
 */
struct confine_result {
	enum confine_outcome outcome;
	enum confine_reason reason;
	int exit_code;           /* the job's exit status, or -1 */
	int signal;              /* the signal that ended the job, or 0 */
	int error;               /* errno for EXEC, WAIT_FAILED, KILL_AMBIGUOUS */
	enum confine_step step;  /* the failed step for EXEC */
	pid_t pid;               /* the job's process */
	pid_t pgid;              /* its process group (not pid: see docs) */
	enum confine_backend backend; /* the backend it ran under */
	enum confine_proof proof;
	int64_t wall_us;         /* from the job's fork to its exit */
	int64_t user_us;         /* rusage of the job and its waited-for children */
	int64_t sys_us;
	int64_t max_rss_kib;
};

/* Names for logs and JSON: "completed", "exit_code", "landlock", "cwd"... */
const char *confine_outcome_name(enum confine_outcome outcome);
const char *confine_reason_name(enum confine_reason reason);
const char *confine_backend_name(enum confine_backend backend);
const char *confine_step_name(enum confine_step step);
const char *confine_proof_name(enum confine_proof proof);

#ifdef __cplusplus
}
#endif

#endif
