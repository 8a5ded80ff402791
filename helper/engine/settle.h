/*
 * Settlement: the four outcomes and the sticky selection rule.
 *
 * The first terminal (non-Completed) selection wins and nothing afterwards
 * moves it. A Completed selection is only pending: the group-emptiness proof
 * that follows it may still override it. Pure logic, no I/O.
 */
#ifndef CONFINE_SETTLE_H
#define CONFINE_SETTLE_H

#include <stdbool.h>

#include "confine/confine.h"

struct settle {
	enum confine_outcome outcome; /* 0: nothing selected yet */
	enum confine_reason reason;
	int detail;                   /* exit code, signal or errno */
	enum confine_step step;       /* for CONFINE_REASON_EXEC */
};

void settle_init(struct settle *s);

/* Returns true when the selection took effect. */
bool settle_select(struct settle *s, enum confine_outcome outcome,
    enum confine_reason reason, int detail, enum confine_step step);

/* The selection a wait status calls for: Completed, Failed(exit), Failed(signal). */
bool settle_select_status(struct settle *s, int wstatus);

/* A non-Completed selection holds: nothing can move it. */
bool settle_terminal(const struct settle *s);

/* Something, pending Completed included, has been selected. */
bool settle_selected(const struct settle *s);

#endif
