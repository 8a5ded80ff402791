#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "bb/reply.h"

static const struct {
	enum bbreply_code code;
	const char *name;
} codes[] = {
	{ BBREPLY_OK, "OK" },
	{ BBREPLY_CANCELLED, "CANCELLED" },
	{ BBREPLY_INVALID_ARGUMENT, "INVALID_ARGUMENT" },
	{ BBREPLY_DEADLINE_EXCEEDED, "DEADLINE_EXCEEDED" },
	{ BBREPLY_RESOURCE_EXHAUSTED, "RESOURCE_EXHAUSTED" },
	{ BBREPLY_FAILED_PRECONDITION, "FAILED_PRECONDITION" },
	{ BBREPLY_INTERNAL, "INTERNAL" },
	{ BBREPLY_UNAVAILABLE, "UNAVAILABLE" },
};

const char *
bbreply_code_name(enum bbreply_code code)
{
	size_t i;

	for (i = 0; i < sizeof(codes) / sizeof(codes[0]); i++)
		if (codes[i].code == code)
			return codes[i].name;
	return "UNKNOWN";
}

void
bbreply_error(struct bbreply *reply, enum bbreply_code code,
    const char *fmt, ...)
{
	va_list ap;

	memset(reply, 0, sizeof(*reply));
	reply->code = code;
	va_start(ap, fmt);
	vsnprintf(reply->message, sizeof(reply->message), fmt, ap);
	va_end(ap);
}

/* What is left of a job that did not end by itself, in words. */
static const char *
left(const struct confine_result *r)
{
	return r->proof != CONFINE_PROOF_NONE ?
	    "nothing of it is left" :
	    "but it could not be shown gone: its outputs are not to be trusted";
}

/* bb_runner's name of a signal: "SEGV"; the number when it has none. */
static void
signal_name(int sig, char *out, size_t len)
{
	const char *name = sig > 0 && sig < NSIG ? sigabbrev_np(sig) : NULL;

	if (name != NULL)
		snprintf(out, len, "%s", name);
	else
		snprintf(out, len, "%d", sig);
}

/* Whether bb_runner takes a start failing with err for the request's fault. */
static int
request_fault(int err)
{
	return err == ENOENT || err == EACCES || err == EPERM ||
	    err == EISDIR || err == ENOTDIR || err == ENOEXEC;
}

void
bbreply_settled(struct bbreply *reply, const struct confine_result *r,
    int64_t deadline_ms, int64_t call_ms)
{
	char how[32];

	memset(reply, 0, sizeof(*reply));
	switch (r->outcome) {
	case CONFINE_COMPLETED:
	case CONFINE_FAILED:
		if (r->reason == CONFINE_REASON_EXEC) {
			bbreply_error(reply, request_fault(r->error) ?
			    BBREPLY_INVALID_ARGUMENT : BBREPLY_INTERNAL,
			    "Failed to start process: %s: %s",
			    confine_step_name(r->step), strerror(r->error));
			return;
		}
		reply->code = BBREPLY_OK;
		reply->exit_code = r->reason == CONFINE_REASON_SIGNAL ? -1 :
		    r->exit_code;
		if (r->reason == CONFINE_REASON_SIGNAL)
			signal_name(r->signal, reply->signal, sizeof(reply->signal));
		reply->user_us = r->user_us;
		reply->sys_us = r->sys_us;
		reply->max_rss_bytes = r->max_rss_kib * 1024;
		return;
	case CONFINE_CANCELLED:
		if (r->reason == CONFINE_REASON_DEADLINE) {
			bbreply_error(reply, BBREPLY_DEADLINE_EXCEEDED,
			    "cancelled: the action ran out of time (%" PRId64
			    " ms, the call's %" PRId64 " ms less a margin): "
			    "confine killed it, and %s", deadline_ms, call_ms,
			    left(r));
			return;
		}
		bbreply_error(reply, BBREPLY_CANCELLED,
		    "cancelled: the call was cancelled: confine killed the "
		    "action, and %s", left(r));
		return;
	case CONFINE_UNCERTAIN:
		if (r->reason == CONFINE_REASON_HELPER_LOST) {
			bbreply_error(reply, BBREPLY_UNAVAILABLE,
			    "uncertain: confine's helper was lost while the action "
			    "ran; the next action gets a new one");
			return;
		}
		/* The exit code, for the log: never as a result. */
		if (r->exit_code >= 0)
			snprintf(how, sizeof(how), "it exited %d", r->exit_code);
		else
			snprintf(how, sizeof(how), "its exit unknown");
		bbreply_error(reply, BBREPLY_INTERNAL,
		    "uncertain: %s (%s); it was killed, and %s",
		    r->reason == CONFINE_REASON_GROUP_STILL_PRESENT ?
		    "a process of the action outlived it" :
		    r->reason == CONFINE_REASON_KILL_AMBIGUOUS ?
		    "a kill of the action failed" :
		    "the action could not be observed", how, left(r));
		return;
	}
	bbreply_error(reply, BBREPLY_INTERNAL, "unknown settlement %d",
	    (int)r->outcome);
}

void
bbreply_refused(struct bbreply *reply, int err, const char *why)
{
	enum bbreply_code code;

	switch (-err) {
	case EINVAL:
	case ENOENT:
	case ENOTDIR:
	case EACCES:
	case EMSGSIZE:
		code = BBREPLY_INVALID_ARGUMENT;
		break;
	case ENOTSUP:
		code = BBREPLY_FAILED_PRECONDITION;
		break;
	case EAGAIN:
		code = BBREPLY_RESOURCE_EXHAUSTED;
		break;
	case ECONNRESET:
	case ETIMEDOUT:
	case ESHUTDOWN:
		code = BBREPLY_UNAVAILABLE;
		break;
	default:
		code = BBREPLY_INTERNAL;
		break;
	}
	bbreply_error(reply, code, "refused, nothing ran: %s",
	    why != NULL && why[0] != '\0' ? why : strerror(-err));
}

int64_t
bbreply_job_deadline(int64_t call_ms, int64_t margin_ms)
{
	if (call_ms < 0)
		return 0;
	if (margin_ms > call_ms / 2)
		margin_ms = call_ms / 2;
	return call_ms - margin_ms > 0 ? call_ms - margin_ms : -1;
}
