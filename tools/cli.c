#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "tools/cli.h"

static const struct {
	const char *name;
	int64_t ms;
} units[] = {
	{ "ms", 1 },
	{ "s", 1000 },
	{ "m", 60 * 1000 },
	{ "h", 60 * 60 * 1000 },
};

#define BAD(err, what) do { *why = (what); return -(err); } while (0)

int
cli_duration(const char *s, int64_t *ms, const char **why)
{
	const char *p = s;
	int64_t v = 0;
	size_t i;

	*why = NULL;
	if (*p == '\0')
		BAD(EINVAL, "empty");
	if (*p < '0' || *p > '9')
		BAD(EINVAL, "not a whole number with a unit (ms, s, m or h)");
	for (; *p >= '0' && *p <= '9'; p++) {
		if (v > (INT64_MAX - (*p - '0')) / 10)
			BAD(ERANGE, "too large");
		v = v * 10 + (*p - '0');
	}
	if (*p == '\0')
		BAD(EINVAL, "no unit (ms, s, m or h)");
	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (strcmp(p, units[i].name) == 0) {
			if (v > INT64_MAX / units[i].ms)
				BAD(ERANGE, "too large");
			*ms = v * units[i].ms;
			return 0;
		}
	if (*p == '.' || *p == ',')
		BAD(EINVAL, "not a whole number");
	BAD(EINVAL, "unknown unit (ms, s, m or h)");
}

/* A whole positive number, its digits only; *end is what follows. */
static int
number(const char *s, int64_t *v, const char **end, const char **why)
{
	const char *p = s;

	*v = 0;
	if (*p < '0' || *p > '9')
		BAD(EINVAL, *p ? "not a whole number" : "empty");
	for (; *p >= '0' && *p <= '9'; p++) {
		if (*v > (INT64_MAX - (*p - '0')) / 10)
			BAD(ERANGE, "too large");
		*v = *v * 10 + (*p - '0');
	}
	if (*v == 0)
		BAD(EINVAL, "zero (leave the option out for no bound)");
	*end = p;
	return 0;
}

int
cli_count(const char *s, int64_t *n, const char **why)
{
	const char *end;
	int rc;

	*why = NULL;
	if ((rc = number(s, n, &end, why)) != 0)
		return rc;
	if (*end != '\0')
		BAD(EINVAL, "not a whole number");
	return 0;
}

int
cli_size(const char *s, int64_t *bytes, const char **why)
{
	static const char suffixes[] = "KMGT";
	const char *end, *at;
	int64_t v, scale = 1;
	int rc;

	*why = NULL;
	if ((rc = number(s, &v, &end, why)) != 0)
		return rc;
	if (*end != '\0') {
		at = strchr(suffixes, *end);
		if (at == NULL || end[1] != '\0')
			BAD(EINVAL, "unknown unit (K, M, G or T)");
		for (; at >= suffixes; at--)
			scale *= 1024;
	}
	if (v > INT64_MAX / scale)
		BAD(ERANGE, "too large");
	*bytes = v * scale;
	return 0;
}

int
cli_bound(const char *name, const char *arg, struct confine_limits *l,
    const char **why)
{
	int rc;

	*why = NULL;
	if (strcmp(name, "cpu") == 0) {
		if ((rc = cli_duration(arg, &l->cpu_seconds, why)) != 0)
			return rc;
		if (l->cpu_seconds % 1000 != 0 || l->cpu_seconds == 0)
			BAD(EINVAL, "not a whole number of seconds");
		l->cpu_seconds /= 1000;
		return 0;
	}
	if (strcmp(name, "memory") == 0)
		return cli_size(arg, &l->memory, why);
	if (strcmp(name, "address-space") == 0)
		return cli_size(arg, &l->address_space, why);
	if (strcmp(name, "file-size") == 0)
		return cli_size(arg, &l->file_size, why);
	if (strcmp(name, "open-files") == 0)
		return cli_count(arg, &l->open_files, why);
	if (strcmp(name, "processes") == 0)
		return cli_count(arg, &l->processes, why);
	BAD(ENOENT, "not a bound");
}

int
cli_exit_status(const struct confine_result *r)
{
	switch (r->outcome) {
	case CONFINE_COMPLETED:
		return 0;
	case CONFINE_FAILED:
		if (r->reason == CONFINE_REASON_EXIT_CODE &&
		    r->exit_code > 0 && r->exit_code < 256)
			return r->exit_code;
		if (r->reason == CONFINE_REASON_SIGNAL &&
		    r->signal > 0 && r->signal < 128)
			return 128 + r->signal;
		if (r->reason == CONFINE_REASON_EXEC)
			return r->error == ENOENT && r->step == CONFINE_STEP_EXEC ?
			    CLI_EXIT_NOENT : CLI_EXIT_EXEC;
		break;
	case CONFINE_CANCELLED:
		return CLI_EXIT_CANCELLED;
	case CONFINE_UNCERTAIN:
		return CLI_EXIT_UNCERTAIN;
	}
	/* Nothing the library reports: never let it pass for the job's own. */
	return CLI_EXIT_USAGE;
}

/* Microseconds as milliseconds with three decimals, exactly. */
static void
fmt_ms(char *buf, size_t len, int64_t us)
{
	uint64_t m = us < 0 ? (uint64_t)0 - (uint64_t)us : (uint64_t)us;

	snprintf(buf, len, "%s%" PRIu64 ".%03" PRIu64, us < 0 ? "-" : "",
	    m / 1000, m % 1000);
}

static const char *
signal_name(int sig)
{
	switch (sig) {
	case SIGINT:
		return "SIGINT";
	case SIGTERM:
		return "SIGTERM";
	case SIGHUP:
		return "SIGHUP";
	default:
		return "a signal";
	}
}

/* What to do about a failed start, for the mistakes people make. */
static const char *
start_hint(const struct confine_result *r, const struct cli_context *ctx)
{
	switch (r->step) {
	case CONFINE_STEP_EXEC:
		if (ctx->unfound && r->error == ENOENT)
			return "; give its absolute path, or put its directory in "
			    "confine-run's PATH";
		if (r->error == ENOENT && ctx->exists)
			return "; it exists, so what it needs does not: a script's "
			    "#! interpreter, or a program's loader or libraries";
		if (r->error == ENOENT && ctx->given != NULL)
			return "; a relative path is taken from confine-run's "
			    "working directory, not the job's";
		if (r->error == EACCES)
			return "; the job's user may not execute it: chmod +x it, "
			    "run it through its interpreter, or check the "
			    "directories above it";
		if (r->error == ENOEXEC)
			return "; not a program the kernel runs: a script needs a "
			    "#! line";
		return "";
	case CONFINE_STEP_CWD:
		return "; -C must name a directory the job's user may enter";
	default:
		return "";
	}
}

/*
 * "cannot run PROG: STEP[ DIR]: ERROR[; HINT]": the program, the step that
 * failed, the errno, and what to do when the mistake is a common one.
 */
static int
start_failure(char *buf, size_t len, const char *o,
    const struct confine_result *r, const struct cli_context *ctx)
{
	const char *step = confine_step_name(r->step), *err = strerror(r->error);

	if (ctx->exe == NULL)
		return snprintf(buf, len, "%s: cannot start: %s (step %s)", o, err,
		    step);
	if (r->step == CONFINE_STEP_EXEC && ctx->unfound && r->error == ENOENT)
		err = "not found in PATH";
	if (r->step == CONFINE_STEP_CWD && ctx->cwd != NULL)
		return snprintf(buf, len, "%s: cannot run %s: cwd %s: %s%s", o,
		    ctx->exe, ctx->cwd, err, start_hint(r, ctx));
	return snprintf(buf, len, "%s: cannot run %s: %s: %s%s", o, ctx->exe,
	    step, err, start_hint(r, ctx));
}

static int
narrowed(const struct cli_reads *reads)
{
	return reads != NULL && reads->narrowed;
}

/*
 * "; reads everywhere", or "; reads its own trees, system, /a, /b" (its
 * own: the scratch root, its tmp, /dev/null), cut to len.
 */
static void
reads_summary(char *buf, size_t len, const struct cli_reads *reads)
{
	size_t i, at;
	int n;

	n = snprintf(buf, len, "; reads %s%s", narrowed(reads) ?
	    "its own trees" : "everywhere", narrowed(reads) && reads->system ?
	    ", system" : "");
	at = n < 0 ? len : (size_t)n;
	for (i = 0; narrowed(reads) && reads->trees != NULL &&
	    reads->trees[i] != NULL && at < len; i++) {
		n = snprintf(buf + at, len - at, ", %s", reads->trees[i]);
		at = n < 0 ? len : at + (size_t)n;
	}
}

void
cli_summary(char *buf, size_t len, const struct confine_result *r,
    const struct cli_context *ctx, int verbose)
{
	const char *o = confine_outcome_name(r->outcome);
	char wall[32], user[32], sys[32];
	int n, m;

	switch (r->reason) {
	case CONFINE_REASON_NONE:
		n = snprintf(buf, len, "%s", o);
		break;
	case CONFINE_REASON_EXIT_CODE:
		n = snprintf(buf, len, "%s: exit code %d", o, r->exit_code);
		break;
	case CONFINE_REASON_SIGNAL:
		n = snprintf(buf, len, "%s: killed by signal %d (%s)", o,
		    r->signal, strsignal(r->signal));
		break;
	case CONFINE_REASON_EXEC:
		n = start_failure(buf, len, o, r, ctx);
		break;
	case CONFINE_REASON_DEADLINE:
		n = snprintf(buf, len, "%s: the deadline%s%s passed", o,
		    ctx->deadline ? " of " : "", ctx->deadline ? ctx->deadline : "");
		break;
	case CONFINE_REASON_CANCELLED:
		n = ctx->signal ? snprintf(buf, len, "%s: confine-run got %s", o,
		    signal_name(ctx->signal)) : snprintf(buf, len, "%s", o);
		break;
	case CONFINE_REASON_WAIT_FAILED:
		n = snprintf(buf, len, "%s: the job could not be observed (%s)",
		    o, strerror(r->error));
		break;
	case CONFINE_REASON_GROUP_STILL_PRESENT:
		n = snprintf(buf, len, "%s: something the job started outlived "
		    "it, and was killed", o);
		break;
	case CONFINE_REASON_KILL_AMBIGUOUS:
		n = snprintf(buf, len, "%s: killing its process group failed (%s)",
		    o, strerror(r->error));
		break;
	case CONFINE_REASON_HELPER_LOST:
		n = snprintf(buf, len, "%s: the helper died", o);
		break;
	default:
		n = snprintf(buf, len, "%s (%s)", o, confine_reason_name(r->reason));
		break;
	}
	if (!verbose || n < 0 || (size_t)n >= len)
		return;
	fmt_ms(wall, sizeof(wall), r->wall_us);
	fmt_ms(user, sizeof(user), r->user_us);
	fmt_ms(sys, sizeof(sys), r->sys_us);
	m = snprintf(buf + n, len - (size_t)n, "; pid %ld, pgid %ld, %s, wall "
	    "%s ms, user %s ms, sys %s ms, max rss %" PRId64 " KiB", (long)r->pid,
	    (long)r->pgid, confine_backend_name(r->backend), wall, user, sys,
	    r->max_rss_kib);
	if (m < 0 || (size_t)m >= len - (size_t)n)
		return;
	n += m;
	reads_summary(buf + n, len - (size_t)n, ctx->reads);
	n = (int)strlen(buf);
	if (ctx->enforced != NULL && *ctx->enforced != '\0' && (size_t)n < len)
		(void)snprintf(buf + n, len - (size_t)n, "; enforced: %s",
		    ctx->enforced);
}

void
cli_json_string(FILE *f, const char *s)
{
	const unsigned char *p;

	putc('"', f);
	for (p = (const unsigned char *)s; *p != '\0'; p++) {
		switch (*p) {
		case '"':
			fputs("\\\"", f);
			break;
		case '\\':
			fputs("\\\\", f);
			break;
		case '\n':
			fputs("\\n", f);
			break;
		case '\r':
			fputs("\\r", f);
			break;
		case '\t':
			fputs("\\t", f);
			break;
		default:
			if (*p < 0x20 || *p == 0x7f)
				fprintf(f, "\\u%04x", *p);
			else
				putc(*p, f);
			break;
		}
	}
	putc('"', f);
}

/* A name, or null when the field does not apply. */
static void
json_name(FILE *f, const char *key, int applies, const char *name)
{
	fprintf(f, ",\"%s\":", key);
	if (applies)
		cli_json_string(f, name);
	else
		fputs("null", f);
}

int
cli_json_refused(FILE *f, const char *message, int err, const char *layer,
    const char *call, const char *hint)
{
	fputs("{\"refused\":{", f);
	fputs("\"layer\":", f);
	if (layer != NULL && *layer != '\0')
		cli_json_string(f, layer);
	else
		fputs("null", f);
	json_name(f, "call", call != NULL && *call != '\0', call);
	fprintf(f, ",\"errno\":%d,\"message\":", err);
	cli_json_string(f, message);
	json_name(f, "hint", hint != NULL && *hint != '\0', hint);
	fputs("}}\n", f);
	return fflush(f) != 0 || ferror(f) ? -EIO : 0;
}

/*
 * The enforcement line's NAME=VALUE words as a JSON object: ,"enforced":
 * {"backend":"landlock",...}; nothing for an empty line.
 */
static void
json_enforced(FILE *f, const char *line)
{
	const char *w = line, *eq, *end;
	char name[64], value[128];
	const char *sep = "";

	if (line == NULL || *line == '\0')
		return;
	fputs(",\"enforced\":{", f);
	while (*w != '\0') {
		end = strchr(w, ' ');
		if (end == NULL)
			end = w + strlen(w);
		eq = memchr(w, '=', (size_t)(end - w));
		if (eq != NULL && (size_t)(eq - w) < sizeof(name) &&
		    (size_t)(end - eq - 1) < sizeof(value)) {
			memcpy(name, w, (size_t)(eq - w));
			name[eq - w] = '\0';
			memcpy(value, eq + 1, (size_t)(end - eq - 1));
			value[end - eq - 1] = '\0';
			fputs(sep, f);
			cli_json_string(f, name);
			fputc(':', f);
			cli_json_string(f, value);
			sep = ",";
		}
		w = *end == ' ' ? end + 1 : end;
	}
	fputc('}', f);
}

int
cli_json(FILE *f, const struct confine_result *r, const struct cli_reads *reads,
    const char *enforced)
{
	const char *sep = "";
	size_t i;

	char wall[32], user[32], sys[32];

	fmt_ms(wall, sizeof(wall), r->wall_us);
	fmt_ms(user, sizeof(user), r->user_us);
	fmt_ms(sys, sizeof(sys), r->sys_us);
	fputs("{\"outcome\":", f);
	cli_json_string(f, confine_outcome_name(r->outcome));
	json_name(f, "reason", r->reason != CONFINE_REASON_NONE,
	    confine_reason_name(r->reason));
	fprintf(f, ",\"exit_code\":%d,\"signal\":%d,\"errno\":%d", r->exit_code,
	    r->signal, r->error);
	json_name(f, "step", r->step != CONFINE_STEP_NONE,
	    confine_step_name(r->step));
	fprintf(f, ",\"pid\":%ld,\"pgid\":%ld", (long)r->pid, (long)r->pgid);
	json_name(f, "backend", 1, confine_backend_name(r->backend));
	json_name(f, "proof", r->proof != CONFINE_PROOF_NONE,
	    confine_proof_name(r->proof));
	fprintf(f, ",\"scratch_kept\":%s,\"tmp_kept\":%s",
	    r->scratch_kept ? "true" : "false", r->tmp_kept ? "true" : "false");
	fprintf(f, ",\"wall_ms\":%s,\"user_ms\":%s,\"sys_ms\":%s,"
	    "\"max_rss_kib\":%" PRId64, wall, user, sys, r->max_rss_kib);
	json_enforced(f, enforced);
	if (!narrowed(reads)) {
		fputs(",\"reads\":\"everywhere\"}\n", f);
		return fflush(f) != 0 || ferror(f) ? -EIO : 0;
	}
	fputs(",\"reads\":[", f);
	if (reads->system) {
		fputs("\"system\"", f);
		sep = ",";
	}
	for (i = 0; reads->trees != NULL && reads->trees[i] != NULL; i++) {
		fputs(sep, f);
		cli_json_string(f, reads->trees[i]);
		sep = ",";
	}
	fputs("]}\n", f);
	return fflush(f) != 0 || ferror(f) ? -EIO : 0;
}
