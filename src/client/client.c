/*
 * The client library: starting or attaching to a helper, thread-safe
 * submission, results routed to their jobs, and helper loss.
 *
 * Locking: mu guards the job table and every job's state; send_mu keeps a
 * frame whole on the socket. A thread that needs a result and finds no
 * other thread reading takes the reader role, reads without mu, then
 * parses under mu and wakes the others (cv). No thread of our own.
 *
 * A helper is lost when its socket reads EOF or garbage, or a send to it
 * fails; the socket is then shut down, what the helper said before it went
 * is still delivered, and every job left in the table is settled
 * Uncertain(helper lost) by helper_lost(), once. The next spawn starts a
 * replacement on the same descriptor number; gen tells a send meant for
 * the lost helper from one for its replacement. The replacement is
 * started without mu (starting set): spawning and shaking hands may take
 * seconds, and other threads' waits, cancels and dispatches must not
 * stall behind it. Until it is done, c stays lost: no one else reads the
 * socket or the input buffer, and other spawns wait for it.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "confine/confine.h"
#include "src/core/clock.h"
#include "src/client/errmsg.h"
#include "src/core/fd.h"
#include "src/core/frame.h"
#include "src/client/launch.h"
#include "src/core/proc.h"
#include "src/core/spec.h"
#include "src/core/table.h"
#include "src/core/wire.h"

#define BUCKETS 512
#define HELLO_TIMEOUT_MS 10000
#define SPAWN_TIMEOUT_MS 30000
#define CLOSE_TIMEOUT_MS 30000

enum { J_SENT = 1, J_STARTED, J_SETTLED, J_REFUSED };

struct confine_job {
	struct confine *c;
	uint32_t id;
	int state;
	int err;                       /* J_REFUSED: positive errno */
	struct refusal *refused;       /* J_REFUSED: why, or NULL without
	                                  memory for it */
	bool freed;                    /* the caller let go of it */
	bool listed;                   /* in the table, awaiting the helper */
	unsigned users;                /* threads inside confine_wait on it */
	enum confine_backend backend;
	char *scratch;                 /* as the helper said, from STARTED */
	char *tmp;                     /* the same */
	char *enforced;                /* the same */
	struct confine_result result;
	struct tlink link;             /* in c->ids while listed */
};

struct confine {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	pthread_mutex_t send_mu;
	int fd;                        /* stable number, even across helpers */
	pid_t child;                   /* a helper we started, or 0 */
	pid_t helper_pid;              /* as the helper reported it */
	unsigned gen;                  /* the helper's; changed under both locks */
	enum confine_mode mode;        /* resolved: EXEC, FORK or CONNECT */
	int spawn_timeout_ms;          /* -1: none */
	char *helper_path;
	char *socket_path;
	bool reading;
	bool starting;                 /* a replacement on its way, outside mu */
	bool lost;
	bool closing;
	bool shut_acked;
	uint32_t next_id;
	size_t handles;                /* jobs not yet freed */
	unsigned waiting;              /* threads inside confine_wait */
	struct tlink *ids[BUCKETS];     /* listed jobs, by id */
	struct frame_in in;            /* the reader's, between parses */
};

const char *
confine_default_helper_path(void)
{
	return CONFINE_HELPER_DEFAULT;
}

const char *
confine_version(void)
{
	return CONFINE_VERSION;
}

/* ---- structs of another header's size ---- */

#define END_OF(type, field) (offsetof(type, field) + sizeof(((type *)0)->field))
/* Version 0.2's, the first with sizes: no host passes less. */
#define OPTIONS_MIN END_OF(struct confine_options, spawn_timeout_ms)
#define SPEC_MIN END_OF(struct confine_spec, readable)
#define RESULT_MIN END_OF(struct confine_result, max_rss_kib)

/*
 * The host's struct of size bytes into ours, which holds the defaults of
 * the fields its header lacks. Bytes of the host's beyond ours are fields
 * we do not know: set, they are refused (-E2BIG), never ignored.
 */
static int
struct_in(void *ours, size_t our_size, const void *theirs, size_t size,
    size_t min, const char *what)
{
	const unsigned char *p = theirs;
	size_t i;

	if (size < min)
		return bail(EINVAL, "struct %s of %zu bytes: this library needs "
		    "at least %zu (a header older than 0.2?)", what, size, min);
	for (i = our_size; i < size; i++)
		if (p[i] != 0)
			return bail(E2BIG, "struct %s has a field set at byte %zu "
			    "that this library (%s) does not know", what, i,
			    CONFINE_VERSION);
	memcpy(ours, theirs, size < our_size ? size : our_size);
	return 0;
}

/* Ours into the host's of size bytes: what it has room for, zeros after. */
static void
struct_out(void *theirs, size_t size, const void *ours, size_t our_size)
{
	memcpy(theirs, ours, size < our_size ? size : our_size);
	if (size > our_size)
		memset((unsigned char *)theirs + our_size, 0, size - our_size);
}

static void
spec_defaults(struct confine_spec *spec)
{
	memset(spec, 0, sizeof(*spec));
	spec->stdin_fd = spec->stdout_fd = spec->stderr_fd = -1;
	spec->backend = CONFINE_BACKEND_AUTO;
}

void
confine_spec_init_sized(struct confine_spec *spec, size_t size)
{
	struct confine_spec d;

	/* Every byte of the host's cleared, ours set where it has them. */
	spec_defaults(&d);
	struct_out(spec, size, &d, sizeof(d));
}

/* ---- the job table, under mu ---- */

static void
job_delete(struct confine_job *j)
{
	refusal_free(j->refused);
	free(j->scratch);
	free(j->tmp);
	free(j->enforced);
	free(j);
}

/*
 * A job goes once its owner has let go of it, the helper is done with it
 * and no thread is inside a wait on it: a free while another thread waits
 * is not a use after free.
 */
static void
job_release(struct confine_job *j)
{
	if (j->freed && !j->listed && j->users == 0)
		job_delete(j);
}

/* The listed job of id, or NULL. */
static struct confine_job *
listed_job(struct confine *c, uint32_t id)
{
	struct tlink *l = table_get(c->ids, BUCKETS, id);

	return l ? TABLE_ENTRY(l, struct confine_job, link) : NULL;
}

static void
unlist(struct confine *c, struct confine_job *j)
{
	if (!j->listed)
		return;
	table_del(c->ids, BUCKETS, &j->link);
	j->listed = false;
	job_release(j);
}

static void
lost_result(struct confine_job *j)
{
	struct confine_result *r = &j->result;
	pid_t pid = r->pid, pgid = r->pgid;

	memset(r, 0, sizeof(*r));
	r->outcome = CONFINE_UNCERTAIN;
	r->reason = CONFINE_REASON_HELPER_LOST;
	r->exit_code = -1;
	r->pid = pid;
	r->pgid = pgid;
	r->backend = j->backend;
	j->state = J_SETTLED;
}

/* Every job in flight is Uncertain(helper lost): never Completed, never lost. */
static void
helper_lost(struct confine *c)
{
	struct confine_job *j;
	struct tlink *l, *next;
	size_t b;

	c->lost = true;
	/* We will not hear from it again: a helper still alive stops too. */
	(void)shutdown(c->fd, SHUT_RDWR);
	for (b = 0; b < BUCKETS; b++) {
		for (l = c->ids[b]; l != NULL; l = next) {
			next = l->next;
			j = TABLE_ENTRY(l, struct confine_job, link);
			lost_result(j);
			j->listed = false;
			job_release(j);
		}
		c->ids[b] = NULL;
	}
	frame_discard(&c->in);
	pthread_cond_broadcast(&c->cv);
}

/* ---- frames from the helper, under mu ---- */

/*
 * A frame is fatal to the connection when it cannot come now: STARTED
 * for a job not waiting for it, SETTLED before STARTED, a refusal of a
 * job that started, a SHUTDOWN no one asked for, a second HELLO. A helper
 * that says such things is not believed about anything: every job in
 * flight is then Uncertain(helper lost), never Completed. Frames for an
 * id no longer listed (a job freed unsettled) are dropped.
 */
static int
on_frame(struct confine *c, const struct wire_hdr *h, const uint8_t *p)
{
	struct confine_job *j = h->id ? listed_job(c, h->id) : NULL;
	struct confine_result r;
	struct wire_error e;
	const char *scratch, *tmp, *enforced;
	pid_t pid, pgid;

	if (!wire_type_known(h->type) || h->nfds != 0)
		return -EBADMSG;
	if (wire_fixed_len(h->type, 1) >= 0 &&
	    h->len != (uint32_t)wire_fixed_len(h->type, 1))
		return -EBADMSG;
	switch (h->type) {
	case WIRE_STARTED:
		if (wire_get_started(p, h->len, &pid, &pgid, &scratch, &tmp,
		    &enforced) != 0)
			return -EBADMSG;
		if (j != NULL && j->state != J_SENT)
			return -EPROTO;
		if (j != NULL) {
			j->scratch = strdup(scratch);
			j->tmp = strdup(tmp);
			j->enforced = strdup(enforced);
			/* Not a job whose root reads as "": the connection ends. */
			if (j->scratch == NULL || j->tmp == NULL ||
			    j->enforced == NULL)
				return -ENOMEM;
			j->state = J_STARTED;
			j->result.pid = pid;
			j->result.pgid = pgid;
		}
		return 0;
	case WIRE_SETTLED:
		if (wire_get_settled(p, h->len, &r) != 0)
			return -EBADMSG;
		if (j != NULL && j->state != J_STARTED)
			return -EPROTO;
		if (j != NULL) {
			j->result = r;
			j->state = J_SETTLED;
			unlist(c, j);
		}
		return 0;
	case WIRE_ERROR:
		if (wire_get_error(p, h->len, &e) != 0)
			return -EBADMSG;
		if (j != NULL && j->state != J_SENT)
			return -EPROTO;
		if (j != NULL) {
			j->state = J_REFUSED;
			j->err = e.err;
			j->refused = refusal_new(&e);
			unlist(c, j);
		}
		/* id 0: about the connection; EOF will follow if it is fatal. */
		return 0;
	case WIRE_SHUTDOWN:
		if (!c->closing)
			return -EPROTO;
		c->shut_acked = true;
		return 0;
	default:
		return -EBADMSG;
	}
}

static int
parse(struct confine *c)
{
	const uint8_t *p;
	struct wire_hdr h;
	int n = 0, rc;

	while ((rc = frame_next(&c->in, &h, &p)) == 1) {
		if (on_frame(c, &h, p) != 0)
			return -EBADMSG;
		n++;
	}
	return rc < 0 ? -EBADMSG : n;
}

/*
 * One read, by the reader only (no mu): frame_read's answer, with every
 * failure but running out of memory read as the helper gone (-ECONNRESET).
 * Descriptors never come from the helper: any that arrive are closed.
 */
static ssize_t
read_some(struct confine *c)
{
	ssize_t n = frame_read(&c->in, c->fd, MSG_DONTWAIT, false);

	return n < 0 && n != -ENOMEM ? -ECONNRESET : n;
}

static int
timed_wait(struct confine *c, int64_t deadline)
{
	struct timespec ts;
	int64_t ns;

	if (deadline == INT64_MAX) {
		pthread_cond_wait(&c->cv, &c->mu);
		return 0;
	}
#ifdef __APPLE__
	/* No monotonic condition variables there: wall clock it is. */
	clock_gettime(CLOCK_REALTIME, &ts);
	ns = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec + deadline - clock_ns();
#else
	ns = deadline;
#endif
	ts.tv_sec = (time_t)(ns / 1000000000);
	ts.tv_nsec = (long)(ns % 1000000000);
	return pthread_cond_timedwait(&c->cv, &c->mu, &ts) == ETIMEDOUT ?
	    -ETIMEDOUT : 0;
}

static void
cond_init(pthread_cond_t *cv)
{
	pthread_condattr_t a;

	pthread_condattr_init(&a);
#ifndef __APPLE__
	pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
#endif
	pthread_cond_init(cv, &a);
	pthread_condattr_destroy(&a);
}

/*
 * Makes progress until something changes or the deadline passes; called
 * and returns with mu held. Returns 0 or -ETIMEDOUT.
 */
static int
pump(struct confine *c, int64_t deadline)
{
	struct pollfd pfd;
	ssize_t got = 0;
	int rc = 0;

	if (c->lost)
		return 0;
	if (c->reading)
		return timed_wait(c, deadline);
	c->reading = true;
	pthread_mutex_unlock(&c->mu);
	pfd.fd = c->fd;
	pfd.events = POLLIN;
	if (poll(&pfd, 1, clock_ms_until(deadline)) > 0)
		got = read_some(c);
	else if (deadline != INT64_MAX && clock_ns() >= deadline)
		rc = -ETIMEDOUT;
	pthread_mutex_lock(&c->mu);
	c->reading = false;
	if (got < 0 || (got > 0 && parse(c) < 0))
		helper_lost(c);
	pthread_cond_broadcast(&c->cv);
	return rc;
}

/* ---- sending ---- */

static bool
peer_gone(int err)
{
	return err == EPIPE || err == ECONNRESET || err == ENOTCONN;
}

/*
 * Sends one whole frame to the helper of generation gen. Returns 0, or
 * -ESTALE: that helper has been replaced, nothing sent; -EPIPE: the
 * connection is unusable (the helper is gone, or a frame was cut short,
 * which leaves the stream unreadable: it is shut down here); another
 * negative errno: nothing sent, the connection intact.
 */
static int
send_frame(struct confine *c, unsigned gen, const struct wire_buf *b,
    const int *fds, unsigned nfds)
{
	size_t off = 0;
	ssize_t n;
	int rc = 0;

	pthread_mutex_lock(&c->send_mu);
	if (gen != c->gen)
		rc = -ESTALE;
	while (rc == 0 && off < b->len) {
		/* The descriptors ride with the frame's first byte. */
		n = fd_send_with(c->fd, b->p + off, b->len - off,
		    off == 0 ? fds : NULL, off == 0 ? nfds : 0);
		if (n <= 0) {
			rc = n < 0 ? (int)n : -EPIPE;
			if (off > 0 || peer_gone(-rc)) {
				(void)shutdown(c->fd, SHUT_RDWR);
				rc = -EPIPE;
			}
			break;
		}
		off += (size_t)n;
	}
	pthread_mutex_unlock(&c->send_mu);
	return rc;
}

/* A frame of a header alone, from the stack: cancels cannot run out. */
static int
send_empty(struct confine *c, unsigned gen, uint16_t type, uint32_t id)
{
	struct wire_hdr h = { .type = type, .id = id };
	uint8_t hdr[WIRE_HDR_LEN];
	struct wire_buf b = { .p = hdr, .len = sizeof(hdr) };

	wire_hdr_encode(hdr, &h);
	return send_frame(c, gen, &b, NULL, 0);
}

/*
 * A send to the helper of generation gen found it unusable: unless that
 * is known already, or it has been replaced, read what it sent before it
 * went (the socket is shut down, so EOF follows) and settle the rest as
 * lost. Under mu.
 */
static void
lose_helper(struct confine *c, unsigned gen)
{
	if (gen == c->gen && !c->lost)
		(void)shutdown(c->fd, SHUT_RDWR);
	while (gen == c->gen && !c->lost)
		(void)pump(c, INT64_MAX);
}

/*
 * A helper that has not answered a spawn in time is stuck (stopped,
 * deadlocked, starved): it is lost, as if it had died, and one we started
 * is killed, so that it and its jobs end now rather than whenever it
 * wakes. Under mu.
 */
static void
spawn_timed_out(struct confine *c, unsigned gen)
{
	if (gen == c->gen && !c->lost && c->child > 0)
		(void)kill(c->child, SIGKILL);
	lose_helper(c, gen);
}

/* ---- starting helpers ---- */

/*
 * Sends hello and waits for the helper's, which says its pid. c is lost
 * or not yet shared, so the socket and the input are ours alone.
 */
static int
handshake(struct confine *c, pid_t *pid)
{
	struct wire_hello hi = { .version_min = WIRE_VERSION,
		.version_max = WIRE_VERSION };
	struct wire_buf b = { 0 };
	int64_t deadline = clock_ns() + HELLO_TIMEOUT_MS * 1000000LL;
	struct wire_error e;
	struct wire_hdr h;
	struct pollfd pfd = { c->fd, POLLIN, 0 };
	const uint8_t *p;
	ssize_t n;
	int rc, got;

	rc = wire_put_hello(&b, &hi, 0);
	if (rc == 0)
		rc = send_frame(c, c->gen, &b, NULL, 0);
	wire_buf_free(&b);
	if (rc == -ENOMEM)
		return bail(ENOMEM, "out of memory");
	/*
	 * A helper that refuses us writes why and closes, maybe before our
	 * hello arrives: a failed send still leaves its reply to read.
	 */
	while ((got = frame_next(&c->in, &h, &p)) == 0) {
		if (poll(&pfd, 1, clock_ms_until(deadline)) <= 0)
			return bail(ETIMEDOUT, "no hello from the helper");
		if ((n = read_some(c)) == -ENOMEM)
			return bail(ENOMEM, "out of memory");
		if (n < 0)
			return bail(ECONNRESET, "the helper closed the connection "
			    "during the handshake%s%s", rc ? ": " : "",
			    rc ? strerror(-rc) : "");
	}
	if (got < 0)
		return bail(EPROTO, "bad frame from the helper");
	if (h.type == WIRE_ERROR && wire_get_error(p, h.len, &e) == 0)
		return bail(e.err, "the helper refused: %s", e.message);
	if (h.type != WIRE_HELLO || wire_get_hello(p, h.len, &hi, 1) != 0 ||
	    hi.version != WIRE_VERSION)
		return bail(EPROTO, "the helper does not speak protocol %d",
		    WIRE_VERSION);
	*pid = (pid_t)hi.pid;
	return 0;
}

/* The helper we started, if any, given CLOSE_TIMEOUT_MS to exit. */
static void
reap_child(struct confine *c, bool wait_long)
{
	if (c->child > 0)
		proc_reap_within(c->child, wait_long ? CLOSE_TIMEOUT_MS : 0);
	c->child = 0;
}

/*
 * Starts (or attaches to) a helper; its socket takes c->fd's number when
 * c already has one, so hosts polling confine_fd() need not notice.
 * Called without mu, while c is lost (or not yet shared).
 */
static int
start_helper(struct confine *c)
{
	int fd = -1, rc;
	pid_t pid = 0;

	switch (c->mode) {
	case CONFINE_MODE_EXEC:
		rc = launch_spawn(c->helper_path, &c->child, &fd);
		break;
	case CONFINE_MODE_AUTO:
	case CONFINE_MODE_FORK:
		rc = launch_embedded(c->helper_path, &c->child, &fd);
		break;
	case CONFINE_MODE_CONNECT:
		rc = launch_connect(c->socket_path, &fd);
		break;
	default:
		rc = bail(EINVAL, "unknown mode");
		break;
	}
	if (rc != 0)
		return rc;
	/* From here on, a send meant for the old helper is dropped. */
	pthread_mutex_lock(&c->mu);
	pthread_mutex_lock(&c->send_mu);
	c->gen++;
	if (c->fd >= 0 && fd != c->fd) {
		if (dup2(fd, c->fd) < 0)
			rc = bail(errno, "dup2: %s", strerror(errno));
		else
			(void)fd_cloexec(c->fd);
		close(fd);
	} else {
		c->fd = fd;
	}
	pthread_mutex_unlock(&c->send_mu);
	pthread_mutex_unlock(&c->mu);
	if (rc == 0) {
		frame_discard(&c->in);
		rc = handshake(c, &pid);
	}
	if (rc != 0) {
		reap_child(c, false);
		return rc;
	}
	pthread_mutex_lock(&c->mu);
	c->helper_pid = pid;
	c->lost = false;
	pthread_mutex_unlock(&c->mu);
	return 0;
}

static void
free_confine(struct confine *c)
{
	pthread_mutex_unlock(&c->mu);
	pthread_mutex_destroy(&c->mu);
	pthread_mutex_destroy(&c->send_mu);
	pthread_cond_destroy(&c->cv);
	free(c->helper_path);
	free(c->socket_path);
	frame_in_free(&c->in);
	free(c);
}

int
confine_open_sized(struct confine **out, const struct confine_options *given,
    size_t size)
{
	struct confine_options own = { .mode = CONFINE_MODE_AUTO }, *o = &own;
	struct confine *c;
	int rc;

	*out = NULL;
	bail_clear();
	/* NULL: the defaults, as own holds them. */
	if (given != NULL && (rc = struct_in(&own, sizeof(own), given, size,
	    OPTIONS_MIN, "confine_options")) != 0)
		return rc;
	if (own.spawn_timeout_ms < -1)
		return bail(EINVAL, "spawn_timeout_ms %d: 0, -1 or a positive "
		    "number of ms", own.spawn_timeout_ms);
	c = calloc(1, sizeof(*c));
	if (c == NULL)
		return bail(ENOMEM, "out of memory");
	pthread_mutex_init(&c->mu, NULL);
	pthread_mutex_init(&c->send_mu, NULL);
	cond_init(&c->cv);
	c->fd = -1;
	c->next_id = 1;
	c->mode = own.mode;
	c->spawn_timeout_ms = own.spawn_timeout_ms ? own.spawn_timeout_ms :
	    SPAWN_TIMEOUT_MS;
	rc = 0;
	switch (c->mode) {
	case CONFINE_MODE_EXEC:
		rc = launch_find(o ? o->helper_path : NULL, &c->helper_path);
		break;
	case CONFINE_MODE_AUTO:
	case CONFINE_MODE_FORK:
#ifndef __linux__
		/* No image carried here: the installed helper, or none. */
		if (launch_find(o ? o->helper_path : NULL, &c->helper_path) != 0)
			c->helper_path = NULL;
#endif
		c->mode = CONFINE_MODE_AUTO;
		break;
	case CONFINE_MODE_CONNECT:
		if (o->socket_path == NULL)
			rc = bail(EINVAL, "connect mode needs a socket path");
		else if ((c->socket_path = strdup(o->socket_path)) == NULL)
			rc = bail(ENOMEM, "out of memory");
		break;
	default:
		rc = bail(EINVAL, "unknown mode %d", (int)c->mode);
		break;
	}
	if (rc == 0) {
		bail_clear();
		rc = start_helper(c);
	}
	if (rc != 0) {
		if (c->fd >= 0)
			close(c->fd);
		pthread_mutex_lock(&c->mu);
		free_confine(c);
		return rc;
	}
	*out = c;
	return 0;
}

pid_t
confine_helper_pid(struct confine *c)
{
	pid_t pid;

	pthread_mutex_lock(&c->mu);
	pid = c->helper_pid;
	pthread_mutex_unlock(&c->mu);
	return pid;
}

/*
 * A lost helper is replaced for the next spawn: by one thread, outside
 * mu, while the others that want it wait and the rest go on. Called and
 * returns with mu held.
 */
static int
replace_helper(struct confine *c)
{
	int rc;

	while (c->reading || c->starting)
		pthread_cond_wait(&c->cv, &c->mu);
	if (!c->lost)
		return 0;
	if (c->closing)
		return bail(ESHUTDOWN, "confine_close() has begun");
	if (c->mode == CONFINE_MODE_CONNECT)
		return bail(ECONNRESET, "the helper at %s is gone", c->socket_path);
	c->starting = true;
	pthread_mutex_unlock(&c->mu);
	reap_child(c, false);
	rc = start_helper(c);
	pthread_mutex_lock(&c->mu);
	c->starting = false;
	pthread_cond_broadcast(&c->cv);
	return rc;
}

/* ---- jobs ---- */

/*
 * Puts j in the table, to be sent to the current helper (*gen), started
 * anew if the last one was lost. Under mu.
 */
static int
enlist(struct confine *c, struct confine_job *j, unsigned *gen)
{
	int rc;

	if (c->closing)
		return bail(ESHUTDOWN, "confine_close() has begun");
	if (c->lost && (rc = replace_helper(c)) != 0)
		return rc;
	do
		j->id = c->next_id++;
	while (j->id == 0 || listed_job(c, j->id) != NULL);
	memset(&j->result, 0, sizeof(j->result));
	j->state = J_SENT;
	j->listed = true;
	table_put(c->ids, BUCKETS, &j->link, j->id);
	c->handles++;
	*gen = c->gen;
	return 0;
}

int
confine_spawn_sized(struct confine *c, const struct confine_spec *given,
    size_t size, struct confine_job **out)
{
	struct confine_spec own, *ps = &own;
	struct wire_buf b = { 0 };
	struct confine_job *j;
	unsigned nfds = 0, gen = 0;
	int64_t deadline;
	const char *why;
	int fds[3], rc, tries, k;

	*out = NULL;
	bail_clear();
	spec_defaults(&own);
	if ((rc = struct_in(&own, sizeof(own), given, size, SPEC_MIN,
	    "confine_spec")) != 0)
		return rc;
	if ((rc = spec_check(ps, &why)) != 0)
		return bail(EINVAL, "%s", why);
	for (k = 0; k < 3; k++)
		if (spec_stdio(ps, k) >= 0) {
			if (fcntl(spec_stdio(ps, k), F_GETFD) < 0)
				return bail(EBADF, "stdio descriptor %d is not open",
				    spec_stdio(ps, k));
			fds[nfds++] = spec_stdio(ps, k);
		}
	j = calloc(1, sizeof(*j));
	if (j == NULL)
		return bail(ENOMEM, "out of memory");
	j->c = c;
	j->backend = ps->backend;
	pthread_mutex_lock(&c->mu);
	for (tries = 0; tries < 2; tries++) {
		if ((rc = enlist(c, j, &gen)) != 0)
			goto out;
		pthread_mutex_unlock(&c->mu);
		rc = wire_put_spawn(&b, j->id, ps);
		if (rc == 0)
			rc = send_frame(c, gen, &b, fds, nfds);
		wire_buf_free(&b);
		pthread_mutex_lock(&c->mu);
		if (rc == 0)
			break;
		/* An incomplete frame never starts a job: nothing ran. */
		unlist(c, j);
		c->handles--;
		if (rc == -EMSGSIZE) {
			rc = bail(EMSGSIZE, "the spawn request is over %u bytes",
			    WIRE_MAX_PAYLOAD);
			goto out;
		}
		if (rc != -EPIPE && rc != -ESTALE) {
			rc = bail(-rc, "sending the spawn request: %s",
			    strerror(-rc));
			goto out;
		}
		/* That helper is gone: once more, on its replacement. */
		lose_helper(c, gen);
	}
	if (rc != 0) {
		rc = bail(ECONNRESET, "the helper is gone, and so is the one "
		    "started to replace it");
		goto out;
	}
	deadline = c->spawn_timeout_ms < 0 ? INT64_MAX :
	    clock_ns() + (int64_t)c->spawn_timeout_ms * 1000000;
	while (j->state == J_SENT) {
		(void)pump(c, deadline);
		if (j->state == J_SENT && clock_ns() >= deadline) {
			spawn_timed_out(c, gen);
			c->handles--;
			rc = bail(ETIMEDOUT, "the helper did not answer within "
			    "%d ms: it is taken as lost, and what it started "
			    "ends with it", c->spawn_timeout_ms);
			goto out;
		}
	}
	if (j->state == J_REFUSED) {
		rc = j->refused != NULL ? bail_refusal(j->err, j->refused) :
		    bail(j->err, "the helper refused the job (no memory to "
		    "say why)");
		c->handles--;
		goto out;
	}
	pthread_mutex_unlock(&c->mu);
	*out = j;
	return 0;
out:
	pthread_mutex_unlock(&c->mu);
	job_delete(j);
	return rc;
}

/*
 * Unlocks mu, and releases c too once it is closed and no handle or
 * waiting thread is left of it: c goes with the last of them.
 */
static void
release_confine(struct confine *c)
{
	if (c->fd < 0 && c->handles == 0 && c->waiting == 0)
		free_confine(c);
	else
		pthread_mutex_unlock(&c->mu);
}

int
confine_wait_sized(struct confine_job *j, int timeout_ms,
    struct confine_result *r, size_t size)
{
	struct confine *c = j->c;
	int64_t deadline = timeout_ms < 0 ? INT64_MAX :
	    clock_ns() + (int64_t)timeout_ms * 1000000;
	int rc = 0;

	if (size < RESULT_MIN)
		return bail(EINVAL, "struct confine_result of %zu bytes: this "
		    "library needs at least %zu", size, (size_t)RESULT_MIN);
	pthread_mutex_lock(&c->mu);
	j->users++;
	c->waiting++;
	while (j->state != J_SETTLED && rc == 0) {
		rc = pump(c, deadline);
		if (j->state != J_SETTLED && deadline != INT64_MAX &&
		    clock_ns() >= deadline)
			rc = -ETIMEDOUT;
	}
	if (j->state == J_SETTLED) {
		struct_out(r, size, &j->result, sizeof(j->result));
		rc = 0;
	}
	j->users--;
	c->waiting--;
	job_release(j);
	release_confine(c);
	return rc == 0 ? 0 : bail(ETIMEDOUT, "the job has not settled yet");
}

int
confine_cancel(struct confine_job *j)
{
	struct confine *c = j->c;
	bool settled;
	unsigned gen;
	uint32_t id;

	pthread_mutex_lock(&c->mu);
	settled = j->state == J_SETTLED || c->lost;
	gen = c->gen;
	id = j->id;
	pthread_mutex_unlock(&c->mu);
	if (settled)
		return -EALREADY;
	/*
	 * By id, j untouched: another thread may free it now. A send that
	 * fails means the helper is gone: it settles as lost.
	 */
	(void)send_empty(c, gen, WIRE_CANCEL, id);
	return 0;
}

void
confine_job_free(struct confine_job *j)
{
	struct confine *c;
	uint32_t id;
	bool cancel;
	unsigned gen;

	if (j == NULL)
		return;
	c = j->c;
	id = j->id;
	pthread_mutex_lock(&c->mu);
	cancel = j->listed && !c->lost && c->fd >= 0;
	gen = c->gen;
	c->handles--;
	/* Now, or when its settlement arrives, or its last waiter leaves. */
	j->freed = true;
	job_release(j);
	if (!cancel) {
		release_confine(c);
		return;
	}
	pthread_mutex_unlock(&c->mu);
	/* By id: once unlocked, the settlement may free the job. */
	(void)send_empty(c, gen, WIRE_CANCEL, id);
}

/* A path the helper reported, once STARTED set it; "" until then. */
static const char *
job_path(struct confine_job *j, char *const *field)
{
	const char *p;

	pthread_mutex_lock(&j->c->mu);
	p = *field ? *field : "";
	pthread_mutex_unlock(&j->c->mu);
	return p;
}

const char *
confine_job_scratch(struct confine_job *j)
{
	return job_path(j, &j->scratch);
}

const char *
confine_job_tmp(struct confine_job *j)
{
	return job_path(j, &j->tmp);
}

const char *
confine_job_enforced(struct confine_job *j)
{
	return job_path(j, &j->enforced);
}

int
confine_fd(struct confine *c)
{
	return c->fd;
}

/* What confine_dispatch says while the helper is lost; under mu. */
static int
lost_error(const struct confine *c)
{
	return bail(ECONNRESET, "the helper is gone%s",
	    c->mode == CONFINE_MODE_CONNECT ? "" :
	    "; the next confine_spawn starts another");
}

int
confine_dispatch(struct confine *c)
{
	ssize_t got;
	int n = 0, k;

	pthread_mutex_lock(&c->mu);
	if (c->reading || c->lost) {
		/* Lost: said every time, for its socket stays readable (EOF). */
		n = c->lost ? lost_error(c) : 0;
		pthread_mutex_unlock(&c->mu);
		return n;
	}
	c->reading = true;
	pthread_mutex_unlock(&c->mu);
	for (;;) {
		got = read_some(c);
		pthread_mutex_lock(&c->mu);
		k = got > 0 ? parse(c) : 0;
		if (got < 0 || k < 0) {
			c->reading = false;
			helper_lost(c);
			n = lost_error(c);
			pthread_mutex_unlock(&c->mu);
			return n;
		}
		n += k;
		if (got == 0)
			break;
		pthread_mutex_unlock(&c->mu);
	}
	c->reading = false;
	pthread_cond_broadcast(&c->cv);
	pthread_mutex_unlock(&c->mu);
	return n;
}

void
confine_close(struct confine *c)
{
	int64_t deadline = clock_ns() + CLOSE_TIMEOUT_MS * 1000000LL;
	unsigned gen;

	if (c == NULL)
		return;
	pthread_mutex_lock(&c->mu);
	c->closing = true;
	while (c->starting)
		pthread_cond_wait(&c->cv, &c->mu);
	gen = c->gen;
	if (!c->lost) {
		pthread_mutex_unlock(&c->mu);
		(void)send_empty(c, gen, WIRE_SHUTDOWN, 0);
		pthread_mutex_lock(&c->mu);
		/* The helper settles every job, then acknowledges. */
		while (!c->shut_acked && !c->lost && clock_ns() < deadline)
			(void)pump(c, deadline);
	}
	while (c->reading)
		pthread_cond_wait(&c->cv, &c->mu);
	helper_lost(c);  /* anything it did not settle in time */
	close(c->fd);
	c->fd = -1;
	pthread_mutex_unlock(&c->mu);
	reap_child(c, true);
	pthread_mutex_lock(&c->mu);
	release_confine(c);
}
