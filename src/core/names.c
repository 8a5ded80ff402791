#include <stddef.h>

#include "confine/confine.h"

#define NAME(table, i) \
	((size_t)(i) < sizeof(table) / sizeof(table[0]) && table[i] ? \
	    table[i] : "unknown")

static const char *const outcome_names[] = {
	[CONFINE_COMPLETED] = "completed",
	[CONFINE_FAILED] = "failed",
	[CONFINE_CANCELLED] = "cancelled",
	[CONFINE_UNCERTAIN] = "uncertain",
};

static const char *const reason_names[] = {
	[CONFINE_REASON_NONE] = "none",
	[CONFINE_REASON_EXIT_CODE] = "exit_code",
	[CONFINE_REASON_SIGNAL] = "signal",
	[CONFINE_REASON_EXEC] = "exec",
	[CONFINE_REASON_DEADLINE] = "deadline",
	[CONFINE_REASON_CANCELLED] = "cancelled",
	[CONFINE_REASON_WAIT_FAILED] = "wait_failed",
	[CONFINE_REASON_GROUP_STILL_PRESENT] = "group_still_present",
	[CONFINE_REASON_KILL_AMBIGUOUS] = "kill_ambiguous",
	[CONFINE_REASON_HELPER_LOST] = "helper_lost",
};

static const char *const backend_names[] = {
	[CONFINE_BACKEND_AUTO] = "auto",
	[CONFINE_BACKEND_LANDLOCK] = "landlock",
	[CONFINE_BACKEND_SEATBELT] = "seatbelt",
	[CONFINE_BACKEND_NONE] = "none",
};

static const char *const step_names[] = {
	[CONFINE_STEP_NONE] = "none",
	[CONFINE_STEP_SIGNALS] = "signals",
	[CONFINE_STEP_STDIO] = "stdio",
	[CONFINE_STEP_CWD] = "cwd",
	[CONFINE_STEP_CONFINE] = "confine",
	[CONFINE_STEP_EXEC] = "exec",
	[CONFINE_STEP_LIMITS] = "limits",
	[CONFINE_STEP_IDENTITY] = "identity",
};

static const char *const proof_names[] = {
	[CONFINE_PROOF_NONE] = "none",
	[CONFINE_PROOF_PGID] = "pgid",
	[CONFINE_PROOF_SUBREAPER] = "subreaper",
	[CONFINE_PROOF_CGROUP] = "cgroup",
};

const char *
confine_outcome_name(enum confine_outcome outcome)
{
	return NAME(outcome_names, outcome);
}

const char *
confine_reason_name(enum confine_reason reason)
{
	return NAME(reason_names, reason);
}

const char *
confine_backend_name(enum confine_backend backend)
{
	return NAME(backend_names, backend);
}

const char *
confine_step_name(enum confine_step step)
{
	return NAME(step_names, step);
}

const char *
confine_proof_name(enum confine_proof proof)
{
	return NAME(proof_names, proof);
}
