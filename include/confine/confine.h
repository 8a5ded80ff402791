/*
 * confine: run untrusted jobs confined, in their own process groups, through
 * a small pre-forked helper, and learn how each one settled.
 *
 * This header is the reference manual. Every call returns 0 or a negative
 * errno unless it says otherwise; on failure confine_error_message() says
 * what went wrong, in words, in the calling thread.
 *
 * The intended sequence:
 *
 *   struct confine *c;
 *   confine_open(&c, NULL);               start a helper (once)
 *
 *   struct confine_spec spec;
 *   confine_spec_init(&spec);             stdio -1 (/dev/null), auto backend
 *   spec.exe = "/usr/bin/cc"; spec.argv = argv; spec.scratch = "/tmp/j1";
 *   struct confine_job *job;
 *   confine_spawn(c, &spec, &job);        the job exec'd (or failed to)
 *   struct confine_result r;
 *   confine_wait(job, -1, &r);            its settlement
 *   confine_job_free(job);
 *
 *   confine_close(c);                     cancels what is left, stops the helper
 *
 * The host never forks: its helper is a fresh process, on Linux the one
 * the library carries, run from memory. Any number of threads may
 * spawn, wait and cancel on one struct confine at once; the library starts
 * no thread of its own (see confine_wait and confine_dispatch).
 */
#ifndef CONFINE_CONFINE_H
#define CONFINE_CONFINE_H

#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

#include <stddef.h>

/*
 * The version of this header. confine_version() says the library's, which
 * may be newer: a host built against this header works with any library of
 * the same major version (see "Growing" below).
 */
#define CONFINE_VERSION_MAJOR 0
#define CONFINE_VERSION_MINOR 2
#define CONFINE_VERSION_PATCH 0
#define CONFINE_VERSION "0.2.0"

/* The library's version, as "MAJOR.MINOR.PATCH". A static string. */
const char *confine_version(void);

/*
 * Growing. The structs below grow at their ends, in later versions, by
 * fields whose zero is the old behaviour. So that a host built against one
 * header works with a library built against another, every call taking
 * one of them takes its size too: confine_open, confine_spec_init,
 * confine_spawn and confine_wait are macros passing sizeof as this header
 * knows it to the *_sized functions, which the library exports (bindings
 * from other languages call those with their own sizes). The library
 * reads only the bytes the host's struct has (a field the host's header
 * lacks is taken as zero, its default) and writes only those. A host's
 * struct longer than the library's must have zeros beyond it: a field the
 * library does not know, set, is refused with -E2BIG, for it may ask for
 * confinement the library cannot give. A size below this version's is
 * -EINVAL. On ELF the exported names carry the symbol version CONFINE_0.2.
 */

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
	CONFINE_STEP_LIMITS = 6,  /* resource bounds, cgroups (refused, never run) */
	CONFINE_STEP_IDENTITY = 7, /* the client's uid, gid and groups, for a
	                              shared helper's job (refused, never run) */
};

/*
 * How the end of the job was proven: nothing of it left. The strongest
 * available is used, and the weaker ones are checked too.
 */
enum confine_proof {
	CONFINE_PROOF_NONE = 0,      /* not proven (see the outcome) */
	CONFINE_PROOF_PGID = 1,      /* kill(-pgid, 0) gave ESRCH (macOS) */
	CONFINE_PROOF_SUBREAPER = 2, /* and, as the job's subreaper, no
	                                descendant left in or out of the group */
	CONFINE_PROOF_CGROUP = 3,    /* and its cgroup v2 reads "populated 0" */
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
	int scratch_kept;        /* CONFINE_FRESH_SCRATCH: the root was kept
	                            (Uncertain: something may still write) */
	int tmp_kept;            /* its private temporary directory was kept
	                            (Uncertain, as scratch_kept) */
	int64_t wall_us;         /* from the job's fork to its exit */
	int64_t user_us;         /* rusage of the job and its waited-for children */
	int64_t sys_us;
	int64_t max_rss_kib;
#ifdef CONFINE_ABI_NEXT
	int64_t abi_next;        /* the ABI test's "next version" only */
#endif
};

/* ---- Starting or attaching to a helper ---- */

enum confine_mode {
	/* The helper the library carries: on Linux confine-helper's image,
	 * linked into the library and exec'd from a sealed memfd, so no
	 * installed binary is needed; elsewhere the binary found as for EXEC.
	 * Never a copy of the host: safe from any thread, as fast from a
	 * large host as from a small one. The default. */
	CONFINE_MODE_AUTO = 0,
	/* posix_spawn the helper binary: safe from any thread. Its path is
	 * options->helper_path, else $CONFINE_HELPER, else the installed one
	 * (confine_default_helper_path()), looked up once, by confine_open. */
	CONFINE_MODE_EXEC = 1,
	/* The same as AUTO. (It forked the helper from inside the library,
	 * which a threaded or large host could not afford; the name stays.) */
	CONFINE_MODE_FORK = 2,
	/* Attach to a standalone confine-helper listening on socket_path. */
	CONFINE_MODE_CONNECT = 3,
};

struct confine_options {
	enum confine_mode mode;
	const char *helper_path;  /* EXEC (AUTO and FORK off Linux);
	                             copied: the caller keeps its string */
	const char *socket_path;  /* CONNECT */
	int spawn_timeout_ms;     /* how long confine_spawn waits for the
	                             helper's answer: 0 is 30 s, -1 for ever */
#ifdef CONFINE_ABI_NEXT
	int64_t abi_next;         /* the ABI test's "next version" only */
#endif
};

struct confine;
struct confine_job;

/*
 * Starts or attaches to a helper and shakes hands with it. options may be
 * NULL (CONFINE_MODE_AUTO). On success *c is owned by the caller until
 * confine_close(). Errors: -ENOENT (no helper binary), -ECONNREFUSED/
 * -EACCES (connect), -EPROTO (handshake), -EINVAL (bad options),
 * -E2BIG (options set a field this library does not know), or the errno
 * of making or spawning the carried helper (no /proc, say).
 */
int confine_open_sized(struct confine **c, const struct confine_options *options,
    size_t options_size);
#define confine_open(c, options) \
	confine_open_sized((c), (options), sizeof(struct confine_options))

/*
 * The helper path used when none is given and $CONFINE_HELPER is unset:
 * the install location compiled in. A static string; thread-safe.
 */
const char *confine_default_helper_path(void);

/*
 * The current helper's pid, as it reported it (for diagnostics and
 * tests). A lost helper's until its replacement starts, then the new
 * one's. Thread-safe.
 */
pid_t confine_helper_pid(struct confine *c);

/*
 * Cancels every job not yet settled, waits for their settlements, stops
 * the helper (or detaches from a shared one) and releases c. Job handles
 * stay valid, settled, until freed. Not concurrently with other calls on c.
 */
void confine_close(struct confine *c);

/* ---- Jobs ---- */

/*
 * Resource bounds, 0 for none. Exceeding one shows as the Failed(signal) or
 * exit code it causes (SIGXCPU, SIGXFSZ, an allocation or open failing, a
 * fork failing, the OOM killer's SIGKILL), never as Uncertain. A bound that
 * cannot be applied exactly refuses the job (-ENOTSUP).
 */
struct confine_limits {
	int64_t cpu_seconds;     /* RLIMIT_CPU: SIGXCPU */
	int64_t address_space;   /* RLIMIT_AS, bytes */
	int64_t open_files;      /* RLIMIT_NOFILE */
	int64_t file_size;       /* RLIMIT_FSIZE, bytes: SIGXFSZ */
	int64_t processes;       /* the job's cgroup pids.max when there is one;
	                            else RLIMIT_NPROC, which counts every process
	                            of the uid and does not bind root */
	int64_t memory;          /* bytes; needs a memory cgroup */
};

struct confine_spec {
	const char *exe;             /* absolute path of the program */
	const char *const *argv;     /* NULL-terminated; NULL: { exe } */
	const char *const *envp;     /* NULL-terminated NAME=VALUE; NULL: empty */
	const char *scratch;         /* absolute; the only writable tree.
	                                Required unless backend is NONE */
	const char *cwd;             /* absolute; NULL: the scratch root */
	const char *const *devices;  /* NULL-terminated extra writable device
	                                nodes (/dev/null always is); or NULL */
	const char *launcher;        /* Seatbelt: NULL is /usr/bin/sandbox-exec */
	int stdin_fd;                /* the job's stdio; -1: /dev/null. The */
	int stdout_fd;               /* caller keeps its descriptors: the */
	int stderr_fd;               /* helper gets copies at spawn */
	int64_t deadline_ms;         /* from spawn; 0: none */
	int64_t grace_ms;            /* SIGTERM this long before SIGKILL */
	enum confine_backend backend;
	struct confine_limits limits;
	unsigned flags;              /* CONFINE_FRESH_SCRATCH... */
	const char *const *readable; /* NULL-terminated trees the job may read
	                                and run programs from; NULL: every
	                                one (see CONFINE_READ_SYSTEM) */
#ifdef CONFINE_ABI_NEXT
	int64_t abi_next;            /* the ABI test's "next version" only */
#endif
};

/*
 * scratch names a parent: the helper creates a fresh root beneath it for
 * this job (confine_job_scratch() says where) and removes it once the job
 * is proven settled. A job that ends Uncertain keeps it, and its result
 * says so (scratch_kept): something of the job may still write into it.
 */
#define CONFINE_FRESH_SCRATCH 1u

/*
 * Every job has a private temporary directory unless its spec says
 * CONFINE_NO_TMP: the helper makes it, as the job's user, beneath its own
 * $TMPDIR (else /tmp), and removes it once the job is proven settled; a
 * job that ends Uncertain keeps it, and its result says so (tmp_kept).
 * On Linux it is the job's /tmp: the host's /tmp is out of its sight,
 * except its scratch root and cwd when they are beneath it. The job's
 * environment stays what the spec gives: with CONFINE_SET_TMPDIR it gets
 * TMPDIR too, naming the directory as the job sees it (unless the
 * environment already has a TMPDIR). confine_job_tmp() says where it is
 * on the host.
 */
#define CONFINE_NO_TMP 2u
#define CONFINE_SET_TMPDIR 4u

/*
 * HOME added to the job's environment, naming its scratch root (the fresh
 * one with CONFINE_FRESH_SCRATCH), unless the environment has a HOME.
 */
#define CONFINE_SET_HOME 8u

/*
 * Reads narrowed. By default a job reads everything its user may read, as
 * the seed's contract says; with a readable list, or this flag, it reads
 * (and executes) only beneath the scratch root, its private tmp, /dev/null
 * and its devices, the trees of readable, and with CONFINE_READ_SYSTEM
 * what programs of this platform need to start (docs/linux-contract.md
 * lists it: /usr and the /lib, /bin trees, the loader's, locale, time
 * zone, name service and certificate files of /etc, /proc, a few of /dev
 * and /sys). A read outside fails with EACCES; metadata (stat) stays
 * visible. Each readable path must exist and be readable by the job's
 * user, else the spawn is refused. Backend none refuses a narrowed spec:
 * it confines nothing.
 */
#define CONFINE_READ_SYSTEM 16u

/*
 * A minimum the host demands: the job is refused (-ENOTSUP, with the
 * reason), never run weaker, where the helper cannot give it.
 * CONFINE_REQUIRE_NAMESPACES: namespaces of its own (PID, mount, network,
 * IPC, UTS), under its init. CONFINE_REQUIRE_LANDLOCK: Landlock in force,
 * at whatever ABI the kernel has (on Linux; elsewhere refused).
 * confine_job_enforced() says what was in force.
 */
#define CONFINE_REQUIRE_NAMESPACES 32u
#define CONFINE_REQUIRE_LANDLOCK 64u

/*
 * A waiver, asked for by name. Where no namespace at all can be made (a
 * default container's seccomp profile, user namespaces disabled), a Linux
 * job has no read-only view, and Landlock does not mediate metadata: the
 * mode, owner, times and extended attributes of a file outside the
 * scratch root that the job's user owns (or may write, for times and
 * user xattrs) could change. Such a job is refused unless this flag
 * accepts that; with it the job runs with Landlock (ABI 6 needed) and the
 * shared seccomp filter, and a root job runs as uid and gid 65534, whose
 * scratch root must then be theirs to write. confine_job_enforced() says
 * "waived=metadata". Ignored where the job has a view of its own.
 */
#define CONFINE_WAIVE_METADATA 128u

/* Fills in the defaults: everything 0 or NULL, stdio -1, backend AUTO. */
void confine_spec_init_sized(struct confine_spec *spec, size_t spec_size);
#define confine_spec_init(spec) \
	confine_spec_init_sized((spec), sizeof(struct confine_spec))

/*
 * Asks the helper to start a job and waits until it has: on 0, *job is the
 * caller's until confine_job_free(), and the job has exec'd, failed before
 * exec (its result says so), or been lost with the helper. Everything
 * needed is copied before the call returns: the caller may free spec and
 * its strings and close its stdio descriptors at once.
 *
 * A helper found lost (or found gone when the request is sent: nothing
 * ran) is replaced first, and the request sent once more to the new one.
 * The job runs with the credentials of the process that connected to the
 * helper (for a helper this process started: its own), never the
 * helper's: a root helper shared by several users checks every path of
 * the spec as the client, and runs the job as the client.
 *
 * Refusals, with nothing started: -EINVAL (bad spec), -EBADF (a stdio
 * descriptor is not open), -EMSGSIZE (the request is over 1 MiB),
 * -ENOENT/-ENOTDIR (scratch root), -EACCES (a scratch root, or a parent
 * for a fresh one, or a device, that the job's user may not write, or a
 * path it may not reach; a job on Linux has no capabilities, so a root
 * job writes only where root's own permission bits let it), -EPERM (a
 * helper that is not root, asked for another user's job), -ENOTSUP
 * (confinement cannot be applied exactly), -EAGAIN (fork failed or too
 * many jobs), -ECONNRESET
 * (the helper is gone and none could replace it: always so in connect
 * mode), -ESHUTDOWN (confine_close has begun), -E2BIG (the host's spec
 * sets a field this library does not know: see "Growing"), or what
 * starting a replacement failed with (as for confine_open).
 *
 * Bounded: a helper that has not answered within the options'
 * spawn_timeout_ms (30 s unless set) is stuck (stopped, deadlocked,
 * starved) and is taken as lost, exactly as if it had died: every job in
 * flight settles Uncertain(helper lost), a helper this library started is
 * killed (a shared one is disconnected, and ends this client's jobs when
 * it runs again), and the call returns -ETIMEDOUT. The request may have
 * started a job: it ends with the helper. The next spawn starts a
 * replacement. A replacement is started by one thread while the others'
 * waits, cancels and dispatches go on. Thread-safe.
 */
int confine_spawn_sized(struct confine *c, const struct confine_spec *spec,
    size_t spec_size, struct confine_job **job);
#define confine_spawn(c, spec, job) \
	confine_spawn_sized((c), (spec), sizeof(struct confine_spec), (job))

/*
 * Waits up to timeout_ms (-1: for ever, 0: just look) for the job to
 * settle; then fills *result and returns 0, else -ETIMEDOUT. The result is
 * sticky: later calls return the same one. Thread-safe; waiting threads
 * take turns reading the helper's socket, so no thread is needed to
 * deliver results.
 */
int confine_wait_sized(struct confine_job *job, int timeout_ms,
    struct confine_result *result, size_t result_size);
#define confine_wait(job, timeout_ms, result) \
	confine_wait_sized((job), (timeout_ms), (result), \
	    sizeof(struct confine_result))

/*
 * Cancels a job that has not settled (it will settle Cancelled, or as it
 * was about to). Returns 0, or -EALREADY for a job that has settled (or
 * whose helper was lost), which it changes nothing of. Thread-safe.
 */
int confine_cancel(struct confine_job *job);

/*
 * The job's scratch root: with CONFINE_FRESH_SCRATCH the one the helper
 * made; else the one given, canonical ("" for a job lost before the
 * helper said). Owned by the job handle: valid, unchanged, until
 * confine_job_free(job). Thread-safe.
 */
const char *confine_job_scratch(struct confine_job *job);

/*
 * The job's private temporary directory on the host (CONFINE_NO_TMP), ""
 * for none or a job lost before the helper said. As confine_job_scratch.
 */
const char *confine_job_tmp(struct confine_job *job);

/*
 * What was in force for the job, as the helper said when it started: a
 * line of space-separated NAME=VALUE words (docs/api.md lists them), e.g.
 * "backend=landlock landlock=7 namespaces=pid,mount,net,ipc,uts
 * sockets=supervised seccomp=own view=ro,nodev uid=1000 gid=1000"; "" for
 * a job lost before the helper said. As confine_job_scratch.
 */
const char *confine_job_enforced(struct confine_job *job);

/*
 * Releases a handle; a job not yet settled is cancelled first. NULL does
 * nothing. Thread-safe, with calls on other jobs and with calls already
 * inside confine_wait or confine_cancel on this job in other threads: a
 * wait returns the job's settlement (Cancelled, by this free, if it had
 * not settled), and the job's memory goes once the last of them has
 * returned. A call on the job that begins after this one has returned,
 * or a string of confine_job_scratch/confine_job_tmp used after it, is a
 * use after free: ordering those is the caller's. Handles may outlive
 * confine_close(); c is released with the last one.
 */
void confine_job_free(struct confine_job *job);

/*
 * For hosts with their own event loop: poll confine_fd() for input (it is
 * stable for the life of c), call confine_dispatch() when it is readable,
 * then confine_wait(job, 0, ...) tells which jobs settled. dispatch never
 * blocks; it returns the number of messages handled (0 when there was
 * nothing to read or another thread is reading) or a negative errno.
 *
 * Once the helper is lost, every job in flight has settled
 * Uncertain(helper lost) and dispatch returns -ECONNRESET on every call
 * for as long as it stays lost, because the descriptor stays readable
 * (at EOF): stop polling it, or call confine_spawn, which starts a
 * replacement on the same descriptor number (not in connect mode).
 * Thread-safe.
 */
int confine_fd(struct confine *c);
int confine_dispatch(struct confine *c);

/*
 * What the calling thread's last failed call went wrong on, in words. The
 * buffer is the calling thread's own (thread-local): valid until that
 * thread's next call into the library, never to be freed.
 */
const char *confine_error_message(void);

/*
 * Why the calling thread's last failed confine_spawn refused its job,
 * where a layer of its confinement could not be applied (or the machine
 * lacks it): which layer ("mount namespace", "user namespace",
 * "landlock", "seccomp", "capabilities", "identity", "limits"...), the
 * call that failed and its own errno (the spawn's return is the class of
 * the refusal, -ENOTSUP say, this the call's, EPERM say), and what the
 * user can do about it, in words ("" when nothing is known to help).
 * confine_error_message() says all of it in one line. The strings are the
 * calling thread's: valid until its next call into the library.
 */
struct confine_refusal {
	const char *layer;
	const char *call;
	int error;
	const char *hint;
};

/*
 * Fills *r and returns 0; or -ENOENT when the thread's last failure named
 * no layer (a bad spec, a helper lost, or no failure). Thread-safe.
 */
int confine_last_refusal(struct confine_refusal *r);

/*
 * Names for logs and JSON: "completed", "exit_code", "landlock", "cwd"...;
 * "unknown" for a value out of range. Static strings; thread-safe.
 */
const char *confine_outcome_name(enum confine_outcome outcome);
const char *confine_reason_name(enum confine_reason reason);
const char *confine_backend_name(enum confine_backend backend);
const char *confine_step_name(enum confine_step step);
const char *confine_proof_name(enum confine_proof proof);

#ifdef __cplusplus
}
#endif

#endif
