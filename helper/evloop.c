#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/epoll.h>
#endif

#include "helper/evloop.h"

#define NS 1000000000LL

int
ev_init(struct evloop *ev, bool force_poll)
{
	memset(ev, 0, sizeof(*ev));
	ev->epfd = -1;
#ifdef __linux__
	if (!force_poll && (ev->epfd = epoll_create1(EPOLL_CLOEXEC)) < 0)
		return -errno;
#else
	(void)force_poll;
#endif
	return 0;
}

void
ev_fini(struct evloop *ev)
{
	if (ev->epfd >= 0)
		close(ev->epfd);
	free(ev->pfd);
	free(ev->obj);
	free(ev->heap);
	memset(ev, 0, sizeof(*ev));
	ev->epfd = -1;
}

static short
poll_events(unsigned events)
{
	return (short)((events & EV_IN ? POLLIN : 0) |
	    (events & EV_OUT ? POLLOUT : 0));
}

static size_t
poll_find(const struct evloop *ev, int fd)
{
	size_t i;

	for (i = 0; i < ev->n; i++)
		if (ev->pfd[i].fd == fd)
			return i;
	return ev->n;
}

#ifdef __linux__
static int
ep_ctl(struct evloop *ev, int op, int fd, unsigned events, void *obj)
{
	struct epoll_event e;

	memset(&e, 0, sizeof(e));
	e.events = (events & EV_IN ? EPOLLIN : 0) |
	    (events & EV_OUT ? EPOLLOUT : 0);
	e.data.ptr = obj;
	return epoll_ctl(ev->epfd, op, fd, &e) == 0 ? 0 : -errno;
}
#endif

int
ev_add(struct evloop *ev, int fd, unsigned events, void *obj)
{
	struct pollfd *p;
	void **o;
	size_t cap;

#ifdef __linux__
	if (ev->epfd >= 0)
		return ep_ctl(ev, EPOLL_CTL_ADD, fd, events, obj);
#endif
	if (poll_find(ev, fd) < ev->n)
		return -EEXIST;
	if (ev->n == ev->cap) {
		cap = ev->cap ? ev->cap * 2 : 64;
		if ((p = realloc(ev->pfd, cap * sizeof(*p))) == NULL)
			return -ENOMEM;
		ev->pfd = p;
		if ((o = realloc(ev->obj, cap * sizeof(*o))) == NULL)
			return -ENOMEM;
		ev->obj = o;
		ev->cap = cap;
	}
	ev->pfd[ev->n].fd = fd;
	ev->pfd[ev->n].events = poll_events(events);
	ev->pfd[ev->n].revents = 0;
	ev->obj[ev->n++] = obj;
	return 0;
}

int
ev_mod(struct evloop *ev, int fd, unsigned events, void *obj)
{
	size_t i;

#ifdef __linux__
	if (ev->epfd >= 0)
		return ep_ctl(ev, EPOLL_CTL_MOD, fd, events, obj);
#endif
	if ((i = poll_find(ev, fd)) == ev->n)
		return -ENOENT;
	ev->pfd[i].events = poll_events(events);
	ev->obj[i] = obj;
	return 0;
}

void
ev_del(struct evloop *ev, int fd)
{
	size_t i;

#ifdef __linux__
	if (ev->epfd >= 0) {
		(void)epoll_ctl(ev->epfd, EPOLL_CTL_DEL, fd, NULL);
		return;
	}
#endif
	if ((i = poll_find(ev, fd)) == ev->n)
		return;
	ev->n--;
	ev->pfd[i] = ev->pfd[ev->n];
	ev->obj[i] = ev->obj[ev->n];
}

static unsigned
ready_events(unsigned in, unsigned out, unsigned hup_err, unsigned got)
{
	return (got & (in | hup_err) ? EV_IN : 0) | (got & out ? EV_OUT : 0);
}

static int
poll_wait(struct evloop *ev, struct ev_ready *out, int max, int64_t ns)
{
	int n, k = 0;
	size_t i;
#ifdef __linux__
	struct timespec ts = { (time_t)(ns / NS), (long)(ns % NS) };

	n = ppoll(ev->pfd, ev->n, ns < 0 ? NULL : &ts, NULL);
#else
	int64_t ms = ns < 0 ? -1 : (ns + 999999) / 1000000;

	/* Rounded up: a deadline must never be fired early. */
	n = poll(ev->pfd, ev->n, ms > 60000 ? 60000 : (int)ms);
#endif
	if (n < 0)
		return -errno;
	for (i = 0; i < ev->n && k < max; i++) {
		if (ev->pfd[i].revents == 0)
			continue;
		out[k].obj = ev->obj[i];
		out[k].events = ready_events(POLLIN, POLLOUT,
		    POLLHUP | POLLERR | POLLNVAL, (unsigned)ev->pfd[i].revents);
		k++;
	}
	return k;
}

int
ev_wait(struct evloop *ev, struct ev_ready *out, int max, int64_t timeout_ns)
{
#ifdef __linux__
	struct epoll_event e[64];
	struct timespec ts;
	int n, i;

	if (ev->epfd < 0)
		return poll_wait(ev, out, max, timeout_ns);
	if (max > 64)
		max = 64;
	ts.tv_sec = (time_t)(timeout_ns / NS);
	ts.tv_nsec = (long)(timeout_ns % NS);
	n = epoll_pwait2(ev->epfd, e, max, timeout_ns < 0 ? NULL : &ts, NULL);
	if (n < 0 && errno == ENOSYS) {
		/* Before Linux 5.11: whole milliseconds, rounded up. */
		int64_t ms = timeout_ns < 0 ? -1 :
		    (timeout_ns + 999999) / 1000000;

		n = epoll_wait(ev->epfd, e, max, ms > 60000 ? 60000 : (int)ms);
	}
	if (n < 0)
		return -errno;
	for (i = 0; i < n; i++) {
		out[i].obj = e[i].data.ptr;
		out[i].events = ready_events(EPOLLIN, EPOLLOUT,
		    EPOLLHUP | EPOLLERR | EPOLLRDHUP, e[i].events);
	}
	return n;
#else
	return poll_wait(ev, out, max, timeout_ns);
#endif
}

/* ---- timers ---- */

static void
heap_swap(struct evloop *ev, size_t a, size_t b)
{
	struct ev_timer *t = ev->heap[a];

	ev->heap[a] = ev->heap[b];
	ev->heap[b] = t;
	ev->heap[a]->slot = a;
	ev->heap[b]->slot = b;
}

static void
heap_fix(struct evloop *ev, size_t i)
{
	size_t c;

	while (i > 0 && ev->heap[(i - 1) / 2]->at > ev->heap[i]->at) {
		heap_swap(ev, i, (i - 1) / 2);
		i = (i - 1) / 2;
	}
	for (;;) {
		c = 2 * i + 1;
		if (c >= ev->nheap)
			break;
		if (c + 1 < ev->nheap && ev->heap[c + 1]->at < ev->heap[c]->at)
			c++;
		if (ev->heap[i]->at <= ev->heap[c]->at)
			break;
		heap_swap(ev, i, c);
		i = c;
	}
}

int
ev_timer_add(struct evloop *ev, struct ev_timer *t)
{
	struct ev_timer **n;
	size_t cap;

	if (ev->nheap == ev->capheap) {
		cap = ev->capheap ? ev->capheap * 2 : 64;
		if ((n = realloc(ev->heap, cap * sizeof(*n))) == NULL)
			return -ENOMEM;
		ev->heap = n;
		ev->capheap = cap;
	}
	t->slot = ev->nheap;
	ev->heap[ev->nheap++] = t;
	heap_fix(ev, t->slot);
	return 0;
}

void
ev_timer_set(struct evloop *ev, struct ev_timer *t, int64_t at)
{
	t->at = at;
	heap_fix(ev, t->slot);
}

void
ev_timer_del(struct evloop *ev, struct ev_timer *t)
{
	size_t i = t->slot;

	ev->nheap--;
	if (i != ev->nheap) {
		heap_swap(ev, i, ev->nheap);
		heap_fix(ev, i);
	}
}

struct ev_timer *
ev_timer_due(const struct evloop *ev, int64_t now)
{
	return ev->nheap > 0 && ev->heap[0]->at <= now ? ev->heap[0] : NULL;
}

int64_t
ev_timer_next(const struct evloop *ev)
{
	return ev->nheap > 0 ? ev->heap[0]->at : INT64_MAX;
}
