/*
 * The pure parts of confine-run: durations, exit statuses, the one line
 * saying how a job settled, and the settlement as JSON. No I/O but the
 * stream given; tested directly by tests/cli/cli_test.c.
 */
#ifndef CONFINE_TOOLS_CLI_H
#define CONFINE_TOOLS_CLI_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <confine/confine.h>

/* The PATH confine-run gives a job unless told otherwise. */
#define CLI_DEFAULT_PATH "/usr/local/bin:/usr/bin:/bin"

/* confine-run's own statuses, beside the job's exit code (timeout(1)'s). */
#define CLI_EXIT_UNCERTAIN 123
#define CLI_EXIT_CANCELLED 124
#define CLI_EXIT_USAGE 125    /* usage, Invalid, Unsupported, our own failure */
#define CLI_EXIT_EXEC 126
#define CLI_EXIT_NOENT 127    /* the program does not exist */

/*
 * A whole number with its unit, "250ms", "10s", "2m" or "1h", in
 * milliseconds. Returns 0, or -EINVAL (-ERANGE when too large) with *why
 * saying what is wrong with it.
 */
int cli_duration(const char *s, int64_t *ms, const char **why);

/*
 * A size in bytes, "4096", "512K", "64M", "2G", "1T" (powers of 1024), or
 * a count, "64". Both whole and positive. Returns 0, or -EINVAL (-ERANGE
 * when too large) with *why saying what is wrong with it.
 */
int cli_size(const char *s, int64_t *bytes, const char **why);
int cli_count(const char *s, int64_t *n, const char **why);

/*
 * A bound given on the command line, as confine-run and confine-bb-runner
 * take them: the option's name, "cpu" (a duration of whole seconds),
 * "memory", "address-space", "file-size" (sizes), "open-files" or
 * "processes" (counts), and arg its value, set in *l. Returns 0; -EINVAL
 * (-ERANGE when too large) with *why; -ENOENT when name is none of those.
 */
int cli_bound(const char *name, const char *arg, struct confine_limits *l,
    const char **why);

/* confine-run's exit status for a settlement. */
int cli_exit_status(const struct confine_result *r);

/* The read policy asked for: NULL or !narrowed, everywhere. */
struct cli_reads {
	int narrowed;
	int system;                /* with the system trees */
	const char *const *trees;  /* NULL-terminated, or NULL */
};

/* What the summary line knows beside the result. */
struct cli_context {
	const char *exe;       /* the program, for a failed exec */
	int unfound;           /* exe is a name found nowhere along PATH */
	const char *given;     /* the relative path exe was made from, or NULL */
	int exists;            /* exe exists (an ENOENT is then not its own) */
	const char *cwd;       /* its working directory, for a failed chdir */
	const char *deadline;  /* as given on the command line, or NULL */
	int signal;            /* what made confine-run cancel the job, or 0 */
	const struct cli_reads *reads;  /* what it could read; NULL: all */
	const char *enforced;  /* what was in force (confine_job_enforced) */
};

/*
 * How the job settled, in words, without a newline: "failed: exit code 3".
 * verbose adds the job's ids, backend, times, peak memory, what it
 * could read and what was in force.
 */
void cli_summary(char *buf, size_t len, const struct confine_result *r,
    const struct cli_context *ctx, int verbose);

/* s as a JSON string, quotes included. */
void cli_json_string(FILE *f, const char *s);

/*
 * Nothing ran: {"refused": {"layer", "call", "errno", "message", "hint"}}
 * on one line, layer, call and hint null where none is named; errno the
 * failed call's, or the refusal's own. 0 or -EIO.
 */
int cli_json_refused(FILE *f, const char *message, int err, const char *layer,
    const char *call, const char *hint);

/*
 * The settlement as one JSON object on one line: outcome, reason, exit_code,
 * signal, errno, step, pid, pgid, backend, proof, scratch_kept, tmp_kept,
 * wall_ms, user_ms, sys_ms, max_rss_kib: the fields of struct
 * confine_result, in its order; then reads, the read policy that ran:
 * "everywhere", or an array of "system" and the trees. A name that does
 * not apply is null. Returns 0, or -EIO.
 */
int cli_json(FILE *f, const struct confine_result *r,
    const struct cli_reads *reads, const char *enforced);

#endif
