/*
 * Readiness of many descriptors, with a nanosecond timeout. On Linux it is
 * epoll: descriptors are registered once and a turn costs what is ready,
 * not what is watched (a helper with a thousand jobs in flight watches
 * three thousand). Elsewhere, and on request, poll(2) over a kept array.
 *
 *   ev_init -> [ev_add | ev_mod | ev_del | ev_wait | ev_timer_*]* -> ev_fini
 *
 * ev_del must come before the descriptor is closed: an epoll registration
 * belongs to the open file, which a forked child may still hold, and would
 * go on reporting. An object passed to ev_add may be reported by the
 * ev_wait after its ev_del only if it was ready in that same batch: callers
 * free objects only after handling a batch. Single-threaded.
 */
#ifndef CONFINE_EVLOOP_H
#define CONFINE_EVLOOP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct pollfd;

#define EV_IN  1u   /* readable, or hung up, or in error */
#define EV_OUT 2u   /* writable */

struct ev_ready {
	void *obj;
	unsigned events;
};

/*
 * A timer, kept by its owner and ordered by the loop (a binary heap):
 * adding, moving and removing one is O(log n), the next one O(1).
 */
struct ev_timer {
	int64_t at;             /* monotonic ns; INT64_MAX: not armed */
	void *obj;
	size_t slot;            /* the loop's: its place in the heap */
};

struct evloop {
	int epfd;               /* -1: the poll(2) implementation */
	struct pollfd *pfd;     /* poll: what is watched */
	void **obj;
	size_t n, cap;
	struct ev_timer **heap; /* the timers, earliest first */
	size_t nheap, capheap;
};

/* 0 or -errno. force_poll: poll(2) even where epoll exists (tests). */
int ev_init(struct evloop *ev, bool force_poll);
void ev_fini(struct evloop *ev);

/* events 0 keeps fd registered with no interest. 0 or -errno. */
int ev_add(struct evloop *ev, int fd, unsigned events, void *obj);
int ev_mod(struct evloop *ev, int fd, unsigned events, void *obj);
void ev_del(struct evloop *ev, int fd);

/*
 * Waits until something is ready or timeout_ns passed (< 0: no timeout);
 * fills at most max entries. Returns how many, 0 on timeout, or -errno
 * (-EINTR when a signal came first).
 */
int ev_wait(struct evloop *ev, struct ev_ready *out, int max,
    int64_t timeout_ns);

/* Starts keeping t, due at t->at. 0 or -ENOMEM. */
int ev_timer_add(struct evloop *ev, struct ev_timer *t);
/* Moves t to at (INT64_MAX: disarmed, still kept). */
void ev_timer_set(struct evloop *ev, struct ev_timer *t, int64_t at);
/* Stops keeping t. */
void ev_timer_del(struct evloop *ev, struct ev_timer *t);
/* The earliest timer due at now or before, or NULL; it stays kept. */
struct ev_timer *ev_timer_due(const struct evloop *ev, int64_t now);
/* When the earliest timer is due; INT64_MAX for none. */
int64_t ev_timer_next(const struct evloop *ev);

#endif
