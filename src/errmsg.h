/*
 * What confine_error_message() says: one message for each thread, set
 * where a call of the client fails.
 */
#ifndef CONFINE_ERRMSG_H
#define CONFINE_ERRMSG_H

/* Sets the calling thread's message; returns -err, for `return bail(...)`. */
int bail(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* No message: a call begins. */
void bail_clear(void);

#endif
