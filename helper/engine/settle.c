#include <sys/wait.h>

#include "helper/engine/settle.h"

void
settle_init(struct settle *s)
{
	s->outcome = 0;
	s->reason = CONFINE_REASON_NONE;
	s->detail = 0;
	s->step = CONFINE_STEP_NONE;
}

bool
settle_terminal(const struct settle *s)
{
	return s->outcome != 0 && s->outcome != CONFINE_COMPLETED;
}

bool
settle_selected(const struct settle *s)
{
	return s->outcome != 0;
}

bool
settle_select(struct settle *s, enum confine_outcome outcome,
    enum confine_reason reason, int detail, enum confine_step step)
{
	if (settle_terminal(s))
		return false;
	/* A pending Completed is never replaced by another Completed: no-op. */
	if (outcome == CONFINE_COMPLETED && s->outcome == CONFINE_COMPLETED)
		return false;
	s->outcome = outcome;
	s->reason = reason;
	s->detail = detail;
	s->step = step;
	return true;
}

bool
settle_select_status(struct settle *s, int wstatus)
{
	if (WIFEXITED(wstatus)) {
		if (WEXITSTATUS(wstatus) == 0)
			return settle_select(s, CONFINE_COMPLETED,
			    CONFINE_REASON_NONE, 0, CONFINE_STEP_NONE);
		return settle_select(s, CONFINE_FAILED, CONFINE_REASON_EXIT_CODE,
		    WEXITSTATUS(wstatus), CONFINE_STEP_NONE);
	}
	if (WIFSIGNALED(wstatus))
		return settle_select(s, CONFINE_FAILED, CONFINE_REASON_SIGNAL,
		    WTERMSIG(wstatus), CONFINE_STEP_NONE);
	/* Stopped or continued is not an end: nothing to select. */
	return false;
}
