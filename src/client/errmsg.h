/*
 * What confine_error_message() says: one message for each thread, set
 * where a call of the client fails; and for a refused job, what
 * confine_last_refusal() says.
 */
#ifndef CONFINE_ERRMSG_H
#define CONFINE_ERRMSG_H

struct wire_error;

/* Sets the calling thread's message; returns -err, for `return bail(...)`. */
int bail(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* No message: a call begins. */
void bail_clear(void);

/* A helper's refusal, kept with its job until the spawn returns it. */
struct refusal;
/* A copy of e's strings, or NULL without memory. */
struct refusal *refusal_new(const struct wire_error *e);
void refusal_free(struct refusal *r);
/* The calling thread's message and refusal, from r; returns -err. */
int bail_refusal(int err, const struct refusal *r);

#endif
