/*
 * The helper's event loop: one thread, epoll (poll(2) elsewhere) over the
 * listening socket, every connection, every job's shepherd and a self-pipe
 * for signals, with a heap of job timers. It serves until it is told to stop: when its only
 * connection closes (an inherited socket), or on SIGTERM/SIGINT (listening).
 * On the way out it cancels every job and settles it.
 */
#ifndef CONFINE_SERVE_H
#define CONFINE_SERVE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define SERVE_MAX_ALLOW 16
#define SERVE_MAX_JOBS_PER_CONN 8192

/* --prepared: jobs' inits made before their requests (prepared.h, Linux). */
#define SERVE_PREPARED_DEFAULT 4
#define SERVE_PREPARED_MAX 16

struct serve_opts {
	int fd;                  /* an inherited connection, or -1 */
	int listen_fd;           /* a listening unix socket, or -1 */
	uid_t allow[SERVE_MAX_ALLOW]; /* peers served besides our own uid */
	size_t nallow;
	pid_t parent;            /* > 0: shut down when this parent is gone */
	bool force_poll;         /* poll(2) even where epoll exists (tests) */
	size_t prepared;         /* at most this many jobs' inits made before
	                            their requests (prepared.h); 0: none */
	const char *log;         /* non-NULL: log on stderr, starting with
	                            this line (what is served, and how) */
};

/*
 * Serves until done; returns the exit status for the helper process.
 * Closes every descriptor but opts' and 0-2 first.
 */
int serve(const struct serve_opts *opts);

#endif
