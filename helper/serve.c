#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include "helper/evloop.h"
#include "helper/engine/job.h"
#include "helper/serve.h"
#include "src/core/clock.h"
#include "src/core/fd.h"
#include "src/core/frame.h"
#include "src/core/proc.h"
#include "src/core/sigpipe.h"
#include "src/core/table.h"
#include "src/core/wire.h"

#define OUT_HIGH (1u << 20)   /* stop reading a peer that does not read */
#define CONN_BUCKETS 256
#define PID_BUCKETS 1024
#define FRAMES_PER_TURN 16    /* then the other peers' turn */
#define READY_MAX 64          /* events taken in one turn */
/*
 * Timers fired and exited children settled in one turn (twice as many
 * kills as reaps: a kill is the cheaper): a burst of deadlines then
 * reaches its hosts a batch at a time, not all at the end. And what
 * settled jobs left to tidy (their cgroups and empty tmps, each a few
 * rmdirs): one of each a turn, four when a turn found nothing to do.
 */
#define REAPS_PER_TURN 32
#define TIMERS_PER_TURN 64
#define TIDY_BUSY 1
#define TIDY_IDLE 4
/*
 * What may wait at most: under a steady load there may be no idle turn,
 * and beyond this many a turn tidies what it takes to come back to it.
 * A burst of a thousand deadlines fits.
 */
#define TIDY_KEEP 1024
/*
 * Prepared inits (prepared.h) are dropped, all of them, once no job asked
 * for one in this long: an idle helper holds no process.
 */
#define POOL_IDLE_MS 2000

struct conn;

/* What a readiness event points at: the first member of each. */
enum watch { W_SIGNALS = 1, W_LISTEN, W_JOB, W_CONN };

struct hjob {
	enum watch kind;              /* W_JOB */
	struct job j;
	struct conn *conn;            /* NULL once the connection is gone */
	uint32_t id;
	struct ev_timer timer;        /* at job_timer(), in the loop */
	struct tlink by_id;           /* in conn's ids */
	struct tlink by_pid;          /* in the server's pids */
	bool in_pids;
	int fd;                       /* job_fd() as the loop watches it */
	unsigned fd_gen;              /* and its fd_gen then */
	bool dying;                   /* done and reaped: freed after the step */
	TAILQ_ENTRY(hjob) all;
	TAILQ_ENTRY(hjob) mine;
	TAILQ_ENTRY(hjob) dead;
};

struct conn {
	enum watch kind;              /* W_CONN */
	int fd;
	struct ident peer;            /* whose jobs these are */
	int peer_err;                 /* -errno: unknown, so none are run */
	unsigned watched;             /* EV_IN | EV_OUT asked of the loop */
	unsigned ready;               /* what the loop said this turn */
	struct frame_in in;           /* what the host sent, not yet taken */
	struct wire_buf out;
	size_t outoff;
	bool hello;
	bool shutdown;                /* asked to stop: ack once its jobs are done */
	bool closing;                 /* flush what is queued, then close */
	bool backlog;                 /* whole frames wait for its next turn */
	size_t njobs;
	struct tlink *ids[CONN_BUCKETS];
	TAILQ_HEAD(, hjob) jobs;
	TAILQ_ENTRY(conn) link;
};

struct srv {
	struct job_env env;
	struct evloop ev;
	int listen_fd;
	bool listen_watched;
	int64_t listen_paused_until;
	bool single;
	bool stopping;
	bool cancelled_all;
	pid_t parent;
	uid_t self;
	const uid_t *allow;
	size_t nallow;
	TAILQ_HEAD(, conn) conns;
	TAILQ_HEAD(, hjob) jobs;
	TAILQ_HEAD(, hjob) dead;     /* done and reaped, to free after the step */
	size_t nconns, njobs;
	struct tlink *pids[PID_BUCKETS];
	bool reap_more;              /* exited children wait for the next turn */
	size_t untidy;               /* what job_env_tidy left */
	int guard;                   /* the guard's pipe, or -errno */
	pid_t guard_pid;
#ifdef __linux__
	struct prepared_pool pool;   /* jobs' inits made before their requests */
	int64_t pool_idle_ns;
#endif
};

static enum watch signals_watch = W_SIGNALS;
static enum watch listen_watch = W_LISTEN;

static bool logging;

/* One line on stderr, when the helper was asked to log (listening). */
static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void
say(const char *fmt, ...)
{
	va_list ap;

	if (!logging)
		return;
	va_start(ap, fmt);
	fprintf(stderr, "confine-helper[%ld]: ", (long)getpid());
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

static int
timer_add(struct srv *s, struct hjob *h)
{
	h->timer.obj = h;
	h->timer.at = job_timer(&h->j);
	return ev_timer_add(&s->ev, &h->timer);
}

/* The job's timer, where job_timer() says. */
static void
timer_fix(struct srv *s, struct hjob *h)
{
	ev_timer_set(&s->ev, &h->timer, job_timer(&h->j));
}

/* ---- lookups ---- */

static struct hjob *
id_job(struct conn *c, uint32_t id)
{
	struct tlink *l = table_get(c->ids, CONN_BUCKETS, id);

	return l ? TABLE_ENTRY(l, struct hjob, by_id) : NULL;
}

static struct hjob *
pid_job(struct srv *s, pid_t pid)
{
	struct tlink *l = table_get(s->pids, PID_BUCKETS, (uint32_t)pid);

	return l ? TABLE_ENTRY(l, struct hjob, by_pid) : NULL;
}

/* ---- output ---- */

static void
conn_flush(struct conn *c)
{
	ssize_t n;

	while (c->outoff < c->out.len) {
		/* fd_send_with retries EINTR, and never raises SIGPIPE. */
		n = fd_send_with(c->fd, c->out.p + c->outoff,
		    c->out.len - c->outoff, NULL, 0);
		if (n == -EAGAIN || n == -EWOULDBLOCK)
			return;
		if (n <= 0) {
			/* The peer is gone: drop what it will never read. */
			c->outoff = c->out.len;
			c->closing = true;
			break;
		}
		c->outoff += (size_t)n;
	}
	c->out.len = c->outoff = 0;
}

/*
 * rc of queuing a frame the peer must have: a hello, a job's start, its
 * settlement or refusal, the end of a shutdown. One that could not be
 * queued (out of memory) would leave the client waiting for ever, so the
 * connection ends instead: its client reads that as the helper lost (its
 * jobs Uncertain, never wrongly settled), and its jobs are cancelled.
 */
static void
told(struct conn *c, int rc)
{
	if (rc == 0 || c->closing)
		return;
	say("peer pid %ld uid %ld: connection ended: a reply could not be "
	    "queued (%s)", (long)c->peer.pid, (long)c->peer.uid,
	    strerror(-rc));
	(void)wire_put_error(&c->out, 0, -rc, "the helper could not queue a "
	    "reply");
	c->closing = true;
}

static void
reply_error(struct conn *c, uint32_t id, int err, const char *why)
{
	say("peer pid %ld uid %ld: %s %lu refused: %s (%s)", (long)c->peer.pid,
	    (long)c->peer.uid, id ? "request" : "connection", (unsigned long)id,
	    why ? why : strerror(err), strerror(err));
	told(c, wire_put_error(&c->out, id, err, why ? why : strerror(err)));
}

/*
 * A job refused: why, in words, and where a layer of its confinement
 * could not be applied, which, the call and its errno, and what to do.
 */
static void
reply_refusal(struct conn *c, uint32_t id, const struct job *j, int err,
    const char *why)
{
	struct wire_error e = { .err = err, .message = why ? why :
	    strerror(err) };
	char msg[512];

	if (j->refused_op != OP_NONE) {
		e.layer = op_layer(j->refused_op);
		e.call = op_call(j->refused_op);
		e.call_err = j->refused_err;
		e.hint = op_hint(j->refused_op, j->refused_err);
		op_message(msg, sizeof(msg), e.message, j->refused_op,
		    j->refused_err);
		e.message = msg;
	}
	say("peer pid %ld uid %ld: request %lu refused: %s (%s)",
	    (long)c->peer.pid, (long)c->peer.uid, (unsigned long)id, e.message,
	    strerror(err));
	told(c, wire_put_refusal(&c->out, id, &e));
}

/* A peer that broke the framing: say why, then stop reading it. */
static void
conn_fatal(struct conn *c, uint32_t id, int err, const char *why)
{
	reply_error(c, id, err, why);
	c->closing = true;
}

/* ---- jobs ---- */

static void
job_detach(struct srv *s, struct hjob *h)
{
	struct conn *c = h->conn;

	if (c == NULL)
		return;
	table_del(c->ids, CONN_BUCKETS, &h->by_id);
	TAILQ_REMOVE(&c->jobs, h, mine);
	c->njobs--;
	h->conn = NULL;
	if (c->shutdown && c->njobs == 0) {
		told(c, wire_put_empty(&c->out, WIRE_SHUTDOWN, 0));
		c->closing = true;
	}
	(void)s;
}

/*
 * What the loop watches for a job may change with its way (job.c): on the
 * direct way its pidfd until it is reaped, then the socket of what
 * removes its tree, if anything. A child the job reaped itself leaves the
 * pid table (its pid may be another job's soon); done, and with no child
 * left to reap, the job is freed after this step, as reap() frees the
 * others.
 */
static void
watch_after(struct srv *s, struct hjob *h)
{
	int fd = job_fd(&h->j);

	/*
	 * The pidfd was unwatched and closed when the job was reaped; the
	 * remover's socket made next often gets its number: new all the same.
	 */
	if (fd >= 0 && (fd != h->fd || job_fd_gen(&h->j) != h->fd_gen) &&
	    ev_add(&s->ev, fd, EV_IN, h) != 0) {
		/* Unwatched, its report would never come: kept, not lost. */
		job_shepherd_lost(&h->j, clock_ns());
		fd = -1;
	}
	h->fd = fd;
	h->fd_gen = job_fd_gen(&h->j);
	if (h->in_pids && job_shepherd(&h->j) == 0) {
		table_del(s->pids, PID_BUCKETS, &h->by_pid);
		h->in_pids = false;
	}
	if (!h->in_pids && h->j.phase == JOB_DONE && !h->dying) {
		h->dying = true;
		TAILQ_INSERT_TAIL(&s->dead, h, dead);
	}
}

/* Sends what the job's last step produced, and re-files its timer. */
static void
job_after(struct srv *s, struct hjob *h)
{
	struct conn *c = h->conn;
	unsigned ev = h->j.events;

	watch_after(s, h);
	/* REFUSED stays set: it is sent at JOB_DONE, below. */
	h->j.events &= JOB_EV_REFUSED;
	if (c != NULL) {
		if (ev & JOB_EV_STARTED)
			told(c, wire_put_started(&c->out, h->id,
			    h->j.result.pid, h->j.result.pgid, job_root(&h->j),
			    job_tmp(&h->j), job_enforced(&h->j)));
		/* A refusal is told once the job left nothing behind. */
		if ((h->j.events & JOB_EV_REFUSED) && h->j.phase == JOB_DONE)
			reply_refusal(c, h->id, &h->j, -h->j.refused, h->j.why);
		if (ev & JOB_EV_SETTLED)
			told(c, wire_put_settled(&c->out, h->id,
			    &h->j.result));
	}
	if (h->j.phase == JOB_DONE)
		job_detach(s, h);
	timer_fix(s, h);
}

static void
job_free(struct srv *s, struct hjob *h)
{
	job_detach(s, h);
	if (h->in_pids)
		table_del(s->pids, PID_BUCKETS, &h->by_pid);
	if (h->dying)
		TAILQ_REMOVE(&s->dead, h, dead);
	ev_timer_del(&s->ev, &h->timer);
	TAILQ_REMOVE(&s->jobs, h, all);
	s->njobs--;
	job_release(&h->j);
	free(h);
}

/*
 * No shepherds to end the jobs if we die: the guard instead, or them; a
 * guard that died (killed, out of memory) is replaced, or the jobs still
 * to come get shepherds.
 */
static void
guard_start(struct srv *s)
{
	fd_closep(&s->guard);
	s->guard_pid = 0;
	if (s->env.direct && (s->guard = job_env_guard(&s->env,
	    &s->guard_pid, false)) < 0)
		say("no guard for the jobs (%s): shepherds", strerror(-s->guard));
}

/*
 * A child we did not start: an orphan that came back to us, a subreaper.
 * If it is a relayed job's own process (job.h), its shepherd died and it
 * with it: its group goes too, while its zombie, ours, still holds the id.
 */
static void
orphan_job(struct srv *s, pid_t pid)
{
	struct hjob *h;

	TAILQ_FOREACH(h, &s->jobs, all)
		if (job_is_relayed(&h->j, pid)) {
			(void)kill(-pid, SIGKILL);
			return;
		}
}

static void
reap(struct srv *s)
{
	struct hjob *h;
	pid_t pid;
	int n = 0;

	s->reap_more = false;
	while ((pid = proc_exited_child()) > 0) {
		if (n++ == REAPS_PER_TURN) {
			s->reap_more = true;
			return;
		}
		if (pid == s->guard_pid) {
			proc_reap(pid, NULL);
			say("the guard (pid %ld) died: another for its %zu jobs",
			    (long)pid, s->njobs);
			guard_start(s);
			continue;
		}
		h = pid_job(s, pid);
#ifdef __linux__
		/* A prepared init that died waiting: never a job's. */
		if (h == NULL && prepared_forget(&s->pool, pid)) {
			proc_reap(pid, NULL);
			continue;
		}
#endif
		if (h == NULL)
			orphan_job(s, pid);
		if (h != NULL && !job_child_exited(&h->j, clock_ns())) {
			/* The job reaped it (the job itself), and is freed later. */
			job_after(s, h);
			if (job_shepherd(&h->j) == pid)
				proc_reap(pid, NULL);  /* never spin on it */
			continue;
		}
		if (h != NULL)
			job_after(s, h);
		proc_reap(pid, NULL);
		if (h != NULL)
			job_free(s, h);
	}
}

static void
cancel_all(struct srv *s)
{
	struct hjob *h;
	int64_t now = clock_ns();

	TAILQ_FOREACH(h, &s->jobs, all) {
		job_cancel(&h->j, now);
		job_after(s, h);
	}
}

/* ---- requests ---- */

static void
on_spawn(struct srv *s, struct conn *c, const struct wire_hdr *hd,
    const uint8_t *p, int *fds)
{
	struct hjob *h = NULL;
	const char *why = NULL;
	struct confine_spec spec;
	int *stdio[3] = { &spec.stdin_fd, &spec.stdout_fd, &spec.stderr_fd };
	unsigned mask, i, k = 0;
	void *arena = NULL;
	int rc;

	if (hd->id == 0 || id_job(c, hd->id) != NULL) {
		reply_error(c, hd->id, EEXIST, "job id 0 or already in use");
		return;
	}
	if (s->stopping || c->shutdown) {
		reply_error(c, hd->id, ESHUTDOWN, "the helper is shutting down");
		return;
	}
	if (c->njobs >= SERVE_MAX_JOBS_PER_CONN) {
		reply_error(c, hd->id, EAGAIN, "too many jobs on this connection");
		return;
	}
	rc = wire_get_spawn(p, hd->len, &spec, &mask, &arena);
	if (rc == 0 && wire_mask_nfds(mask) != hd->nfds) {
		rc = -EBADMSG;
		why = "descriptor count does not match the stdio mask";
	}
	if (rc != 0) {
		reply_error(c, hd->id, -rc, why ? why : "malformed spawn request");
		free(arena);
		return;
	}
	for (i = 0; i < 3; i++)
		if (mask & (1u << i))
			*stdio[i] = fds[k++];
	h = calloc(1, sizeof(*h));
	if (h == NULL) {
		reply_error(c, hd->id, ENOMEM, NULL);
		free(arena);
		return;
	}
	h->kind = W_JOB;
	if (c->peer_err != 0) {
		reply_error(c, hd->id, EPROTO, "the helper could not read this "
		    "client's credentials, so it runs none of its jobs");
		free(arena);
		free(h);
		return;
	}
	rc = job_start(&h->j, &spec, &s->env, &c->peer, clock_ns(), &why);
	free(arena);
	if (rc == 0 && (rc = timer_add(s, h)) == 0 &&
	    (rc = ev_add(&s->ev, job_fd(&h->j), EV_IN, h)) != 0)
		ev_timer_del(&s->ev, &h->timer);
	if (rc != 0) {
		if (job_fd(&h->j) >= 0) {
			/*
			 * Started but untracked: it must not outlive this. Its
			 * shepherd, released, kills it; reap() takes the zombie.
			 */
			job_shepherd_lost(&h->j, clock_ns());
			job_release(&h->j);
			why = "no memory to track the job";
			h->j.refused_op = OP_NONE;
		}
		reply_refusal(c, hd->id, &h->j, -rc, why);
		free(h);
		return;
	}
	h->id = hd->id;
	h->conn = c;
	table_put(c->ids, CONN_BUCKETS, &h->by_id, h->id);
	TAILQ_INSERT_TAIL(&c->jobs, h, mine);
	c->njobs++;
	table_put(s->pids, PID_BUCKETS, &h->by_pid,
	    (uint32_t)job_shepherd(&h->j));
	h->in_pids = true;
	h->fd = job_fd(&h->j);
	h->fd_gen = job_fd_gen(&h->j);
	TAILQ_INSERT_TAIL(&s->jobs, h, all);
	s->njobs++;
	/* What is known already (without a shepherd: it started or failed). */
	job_after(s, h);
}

static void
on_hello(struct srv *s, struct conn *c, const struct wire_hdr *hd,
    const uint8_t *p, int *fds)
{
	struct wire_hello hi;

	(void)s;
	(void)fds;
	if (wire_get_hello(p, hd->len, &hi, 0) != 0) {
		conn_fatal(c, 0, EBADMSG, "malformed hello");
		return;
	}
	if (hi.version_min > WIRE_VERSION || hi.version_max < WIRE_VERSION) {
		conn_fatal(c, 0, EPROTONOSUPPORT, "no protocol version in common");
		return;
	}
	hi.version = WIRE_VERSION;
	hi.pid = (uint32_t)getpid();
	told(c, wire_put_hello(&c->out, &hi, 1));
	c->hello = true;
}

static void
on_cancel(struct srv *s, struct conn *c, const struct wire_hdr *hd,
    const uint8_t *p, int *fds)
{
	struct hjob *h;

	(void)p;
	(void)fds;
	/* Unknown ids are jobs already settled: nothing to do. */
	if ((h = id_job(c, hd->id)) != NULL) {
		job_cancel(&h->j, clock_ns());
		job_after(s, h);
	}
}

static void
on_shutdown(struct srv *s, struct conn *c, const struct wire_hdr *hd,
    const uint8_t *p, int *fds)
{
	struct hjob *h;

	(void)s;
	(void)hd;
	(void)p;
	(void)fds;
	c->shutdown = true;
	TAILQ_FOREACH(h, &c->jobs, mine)
		job_cancel(&h->j, clock_ns());
	if (c->njobs == 0) {
		told(c, wire_put_empty(&c->out, WIRE_SHUTDOWN, 0));
		c->closing = true;
	}
}

/*
 * What a host may ask, and when (OpenSSH's monitor has the same table):
 * a request in the wrong state ends the connection, a helper's message
 * type from a host is refused, a type no one knows is refused and the
 * connection kept (it can still be skipped by its length). Only SPAWN
 * carries descriptors.
 */
static const struct request {
	uint16_t type;
	bool before_hello;  /* only before it; the others only after */
	bool fds;
	void (*fn)(struct srv *, struct conn *, const struct wire_hdr *,
	    const uint8_t *, int *);
} requests[] = {
	{ WIRE_HELLO, true, false, on_hello },
	{ WIRE_SPAWN, false, true, on_spawn },
	{ WIRE_CANCEL, false, false, on_cancel },
	{ WIRE_SHUTDOWN, false, false, on_shutdown },
};

static void
on_frame(struct srv *s, struct conn *c, const struct wire_hdr *hd,
    const uint8_t *p, int *fds)
{
	const struct request *rq = NULL;
	long fixed = wire_fixed_len(hd->type, 0);
	size_t i;

	for (i = 0; i < sizeof(requests) / sizeof(requests[0]); i++)
		if (requests[i].type == hd->type)
			rq = &requests[i];
	if (rq != NULL && rq->before_hello == c->hello) {
		conn_fatal(c, hd->id, EPROTO, c->hello ? "hello twice" :
		    "hello first");
		return;
	}
	if (rq == NULL && !c->hello) {
		conn_fatal(c, hd->id, EPROTO, "hello first");
		return;
	}
	if (rq == NULL) {
		reply_error(c, hd->id, wire_type_known(hd->type) ? EPROTO :
		    ENOSYS, wire_type_known(hd->type) ? "not a request" :
		    "unknown message type");
		return;
	}
	if (!rq->fds && hd->nfds != 0) {
		reply_error(c, hd->id, EBADMSG, "descriptors on a message that takes none");
		return;
	}
	if (fixed >= 0 && hd->len != (uint32_t)fixed) {
		reply_error(c, hd->id, EBADMSG, "wrong payload size for its type");
		return;
	}
	rq->fn(s, c, hd, p, fds);
}

static void
close_fds(int *fds, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (fds[i] >= 0)
			close(fds[i]);
}

/* Takes every whole frame read, FRAMES_PER_TURN at a time. */
static void
conn_parse(struct srv *s, struct conn *c)
{
	int fds[WIRE_MAX_FDS] = { -1, -1, -1 }, rc = 0, turn = 0;
	const uint8_t *p;
	struct wire_hdr hd;

	c->backlog = false;
	while (!c->closing) {
		/*
		 * A peer that floods gets a turn like any other: its next frames
		 * wait for the next round of the loop, not the others for it.
		 */
		if (turn++ == FRAMES_PER_TURN) {
			c->backlog = frame_pending(&c->in) > 0;
			break;
		}
		if ((rc = frame_next(&c->in, &hd, &p)) <= 0)
			break;
		if (!frame_take_fds(&c->in, fds, hd.nfds)) {
			reply_error(c, hd.id, c->in.fds_lost ? EMFILE : EBADMSG,
			    c->in.fds_lost ? "descriptors lost: the helper has "
			    "too many open, or too many were sent" :
			    "descriptors missing");
			frame_drop_fds(&c->in);
			continue;
		}
		on_frame(s, c, &hd, p, fds);
		/* The shepherd has its copies now; ours are not needed. */
		close_fds(fds, hd.nfds);
	}
	if (rc < 0) {
		/* The header is decoded even so: its id is the one to blame. */
		conn_fatal(c, hd.id, -rc, rc == -EMSGSIZE ? "frame too large" :
		    "too many descriptors");
		return;
	}
	if (!c->backlog && frame_pending(&c->in) == 0 &&
	    (c->in.nfdq > 0 || c->in.fds_lost)) {
		/* Descriptors no frame asked for: close them, say so. */
		frame_drop_fds(&c->in);
		reply_error(c, 0, EBADMSG, "unexpected descriptors");
	}
}

static int
conn_read(struct srv *s, struct conn *c)
{
	ssize_t got = frame_read(&c->in, c->fd, 0, true);

	if (got == -EMSGSIZE) {
		conn_fatal(c, 0, EMSGSIZE, "input buffer full");
		return -1;
	}
	if (got == -ENOMEM)
		told(c, -ENOMEM);
	if (got < 0)
		return -1;
	if (got > 0)
		conn_parse(s, c);
	return 0;
}

static void
conn_close(struct srv *s, struct conn *c)
{
	struct hjob *h;
	int64_t now = clock_ns();

	/* Its host is gone: nothing of its jobs may outlive it. */
	while ((h = TAILQ_FIRST(&c->jobs)) != NULL) {
		job_cancel(&h->j, now);
		job_detach(s, h);
		timer_fix(s, h);
	}
	frame_in_free(&c->in);
	TAILQ_REMOVE(&s->conns, c, link);
	s->nconns--;
	ev_del(&s->ev, c->fd);
	close(c->fd);
	wire_buf_free(&c->out);
	free(c);
}

static int
peer_allowed(const struct srv *s, const struct conn *c)
{
	size_t i;

	if (c->peer_err != 0)
		return 0;
	if (c->peer.uid == s->self)
		return 1;
	for (i = 0; i < s->nallow; i++)
		if (c->peer.uid == s->allow[i])
			return 1;
	return 0;
}

static struct conn *
conn_add(struct srv *s, int fd)
{
	struct conn *c = calloc(1, sizeof(*c));
	int rc = c == NULL ? -ENOMEM : 0;

	(void)fd_nonblock(fd);
	(void)fd_cloexec(fd);
	if (rc == 0 && (rc = ev_add(&s->ev, fd, EV_IN, c)) != 0)
		free(c);
	if (rc != 0) {
		/* Its client reads the close as "closed during the handshake". */
		say("a connection dropped: %s", strerror(-rc));
		close(fd);
		return NULL;
	}
	c->kind = W_CONN;
	c->fd = fd;
	c->peer_err = ident_peer(fd, &c->peer);
	c->watched = EV_IN;
	TAILQ_INIT(&c->jobs);
	TAILQ_INSERT_TAIL(&s->conns, c, link);
	s->nconns++;
	return c;
}

static void
accept_one(struct srv *s)
{
	struct conn *c;
	int fd;

	fd = accept(s->listen_fd, NULL, NULL);
	if (fd < 0) {
		if (errno == EMFILE || errno == ENFILE || errno == ENOMEM)
			s->listen_paused_until = clock_ns() + 100 * 1000000LL;
		return;
	}
	c = conn_add(s, fd);
	if (c == NULL)
		return;
	if (!peer_allowed(s, c)) {
		conn_fatal(c, 0, EACCES, c->peer_err != 0 ? "this helper could "
		    "not read your credentials" : "this helper does not serve "
		    "your uid");
		return;
	}
	say("peer pid %ld uid %ld gid %ld: admitted", (long)c->peer.pid,
	    (long)c->peer.uid, (long)c->peer.gid);
}

/* ---- jobs' inits made before their requests ---- */

#ifdef __linux__
/*
 * After a turn's replies are out, off the request's path: as many more as
 * jobs found none since the last turn are wanted (up to the ceiling), and
 * made; none at all once idle.
 */
static void
pool_refill(struct srv *s, int64_t now)
{
	struct prepared_pool *p = &s->pool;
	int rc;

	if (p->ceiling == 0 || s->stopping)
		return;
	if (p->missed > 0) {
		p->want += p->missed;
		if (p->want > p->ceiling)
			p->want = p->ceiling;
		p->missed = 0;
	}
	if ((p->n > 0 || p->want > 0) && now - p->t_asked >= s->pool_idle_ns) {
		/* reap() collects them; prepared_forget removes their tmps */
		prepared_drain(&s->pool, false);
		return;
	}
	while (p->n < p->want) {
		if ((rc = prepared_make(&p->held[p->n], p, false)) != 0) {
			say("no init prepared (%s): each job's is made as it "
			    "starts", strerror(-rc));
			prepared_drain(&s->pool, false);
			p->ceiling = 0;
			return;
		}
		p->n++;
	}
}

/*
 * Where jobs' inits are prepared: wherever they have namespaces. In a
 * build for the tests, CONFINE_PREPARED_IDLE_MS shortens the idle time
 * and CONFINE_PREPARED sets the ceiling (0: every init made as its job
 * starts, as before).
 */
static void
pool_init(struct srv *s, size_t ceiling, struct prepared *first)
{
	s->pool.ceiling = ceiling > PREPARED_MAX ? PREPARED_MAX : ceiling;
	s->pool_idle_ns = POOL_IDLE_MS * 1000000LL;
#ifdef CONFINE_TEST_SWITCHES
	{
		const char *ms = getenv("CONFINE_PREPARED_IDLE_MS");
		const char *n = getenv("CONFINE_PREPARED");

		if (ms != NULL && atol(ms) > 0)
			s->pool_idle_ns = atol(ms) * 1000000LL;
		if (n != NULL && atol(n) >= 0 && atol(n) <= PREPARED_MAX)
			s->pool.ceiling = (size_t)atol(n);
	}
#endif
	s->pool.userns = s->env.self.uid != 0;
	s->pool.uid = s->env.self.uid;
	s->pool.gid = s->env.self.gid;
	s->pool.sys = s->env.sys != NULL ? s->env.sys : &job_sys_real;
	/* Each with the overlay of /tmp its job may have, made ahead. */
	if (s->env.tmp_overlay_ok)
		s->pool.tmp_base = s->env.tmp_base;
	if (s->env.ns && s->pool.ceiling > 0)
		s->env.pool = &s->pool;
	else
		s->pool.ceiling = 0;
	/* The one the start made, for the first job. */
	s->pool.t_asked = clock_ns();
	if (first->pid > 0 && s->pool.ceiling > 0)
		s->pool.held[s->pool.n++] = *first;
	else if (first->pid > 0)
		prepared_discard(first);
}
#endif

/* ---- the loop ---- */

/* A shepherd's socket is about to be closed: stop watching it first. */
static void
unwatch(void *ev, int fd)
{
	ev_del(ev, fd);
}

/* How long to sleep: until the next timer, -1 for none; in ns. */
static int64_t
sleep_ns(const struct srv *s, int64_t now)
{
	int64_t t = ev_timer_next(&s->ev);

	if (s->reap_more || s->untidy > 0)
		return 0;
#ifdef __linux__
	/* Holders to make, or to drop once idle. */
	if (s->pool.n < s->pool.want || s->pool.missed > 0)
		return 0;
	if (s->pool.n > 0 && s->pool.t_asked + s->pool_idle_ns < t)
		t = s->pool.t_asked + s->pool_idle_ns;
#endif
	if (s->listen_paused_until > now && s->listen_paused_until < t)
		t = s->listen_paused_until;
	if (t == INT64_MAX)
		return -1;
	return t <= now ? 0 : t - now;
}

/* Every timer that is due, before anything else of the turn. */
static void
run_timers(struct srv *s, int64_t now)
{
	struct ev_timer *t;
	struct hjob *h;
	int n = 0;

	while (n++ < TIMERS_PER_TURN && (t = ev_timer_due(&s->ev, now)) != NULL) {
		h = t->obj;
		job_tick(&h->j, now);
		job_after(s, h);
	}
}

static void
on_signal(int sig, void *arg)
{
	struct srv *s = arg;

	if ((sig == SIGTERM || sig == SIGINT) && !s->stopping) {
		say("%s: stopping, %zu job%s to cancel",
		    sig == SIGTERM ? "SIGTERM" : "SIGINT", s->njobs,
		    s->njobs == 1 ? "" : "s");
		s->stopping = true;
	}
	/* SIGHUP is our parent-death signal; check it is so. */
	if (sig == SIGHUP && s->parent > 0 && getppid() != s->parent)
		s->stopping = true;
}

static void
on_signals(struct srv *s, int fd)
{
	sigpipe_drain(fd, on_signal, s);
}

/* The self-pipe's read end, or -errno. */
static int
set_signals(void)
{
	static const int sigs[] = { SIGCHLD, SIGTERM, SIGINT, SIGHUP };
	sigset_t mask;
	size_t i;
	int fd;

	fd = sigpipe_open(sigs, sizeof(sigs) / sizeof(sigs[0]),
	    SA_RESTART | SA_NOCLDSTOP);
	if (fd < 0)
		return fd;
	sigemptyset(&mask);
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaddset(&mask, sigs[i]);
	/* Whoever started us may have held them until now. */
	sigprocmask(SIG_UNBLOCK, &mask, NULL);
	return fd;
}

static bool
done(struct srv *s)
{
	if (s->single && s->nconns == 0)
		s->stopping = true;
	if (!s->stopping)
		return false;
	if (!s->cancelled_all) {
		s->cancelled_all = true;
		if (s->listen_fd >= 0) {
			ev_del(&s->ev, s->listen_fd);
			close(s->listen_fd);
			s->listen_fd = -1;
		}
		cancel_all(s);
	}
	return s->njobs == 0;
}

/* What a connection asks of the loop this turn. */
static unsigned
conn_wants(const struct conn *c)
{
	unsigned ev = 0;

	if (!c->backlog && !c->closing && c->out.len - c->outoff < OUT_HIGH)
		ev |= EV_IN;
	if (c->outoff < c->out.len)
		ev |= EV_OUT;
	return ev;
}

/*
 * One wait over everything: signals, listener, shepherds, connections.
 * Nothing is freed while a batch of events is handled: connections close
 * after it, jobs are freed by reap() last.
 */
static void
step(struct srv *s, int sigfd)
{
	struct ev_ready r[READY_MAX];
	struct conn *c, *cn;
	struct hjob *h;
	int64_t now = clock_ns();
	unsigned want;
	bool busy = false, sig = false, acc = false;
	size_t tidy;
	int n, i;

	want = s->listen_fd >= 0 && s->listen_paused_until <= now ? EV_IN : 0;
	if (s->listen_fd >= 0 && (want != 0) != s->listen_watched &&
	    ev_mod(&s->ev, s->listen_fd, want, &listen_watch) == 0)
		s->listen_watched = want != 0;
	TAILQ_FOREACH(c, &s->conns, link) {
		busy |= c->backlog;
		want = conn_wants(c);
		if (want != c->watched && ev_mod(&s->ev, c->fd, want, c) == 0)
			c->watched = want;
		c->ready = 0;
	}
	n = ev_wait(&s->ev, r, READY_MAX, busy ? 0 : sleep_ns(s, now));
	if (n < 0)
		n = 0;  /* EINTR: the self-pipe has the news */
	now = clock_ns();
	run_timers(s, now);
	/* Jobs, then connections, then reaping (which frees jobs) last. */
	for (i = 0; i < n; i++) {
		switch (*(enum watch *)r[i].obj) {
		case W_SIGNALS:
			sig = true;
			break;
		case W_LISTEN:
			acc = true;
			break;
		case W_JOB:
			h = r[i].obj;
			job_input(&h->j, now);
			job_after(s, h);
			break;
		case W_CONN:
			c = r[i].obj;
			c->ready = r[i].events;
			break;
		}
	}
	TAILQ_FOREACH(c, &s->conns, link) {
		if (c->backlog && !c->closing)
			conn_parse(s, c);
		else if ((c->ready & EV_IN) && !c->closing && conn_read(s, c) != 0)
			c->closing = true;
	}
	run_timers(s, clock_ns());
	TAILQ_FOREACH_SAFE(c, &s->conns, link, cn) {
		if (c->outoff < c->out.len)
			conn_flush(c);
		if (c->closing && c->outoff >= c->out.len)
			conn_close(s, c);
	}
	if (sig)
		on_signals(s, sigfd);
	if (sig || s->reap_more)
		reap(s);
	if (acc && s->listen_fd >= 0)
		accept_one(s);
	while ((h = TAILQ_FIRST(&s->dead)) != NULL)
		job_free(s, h);
	tidy = n == 0 ? TIDY_IDLE : TIDY_BUSY;
	if (s->untidy > TIDY_KEEP && s->untidy - TIDY_KEEP > tidy)
		tidy = s->untidy - TIDY_KEEP;
	s->untidy = job_env_tidy(&s->env, tidy);
#ifdef __linux__
	pool_refill(s, clock_ns());
#endif
}

int
serve(const struct serve_opts *o)
{
	struct srv s;
#ifdef __linux__
	struct prepared first;
#endif
	int keep[5], sigfd, rc = 0;
	struct hjob *h;
	struct conn *c;

	keep[0] = 0;
	keep[1] = 1;
	keep[2] = 2;
	keep[3] = o->fd;
	keep[4] = o->listen_fd;
	fd_close_except(keep, 5);
	memset(&s, 0, sizeof(s));
	TAILQ_INIT(&s.conns);
	TAILQ_INIT(&s.jobs);
	TAILQ_INIT(&s.dead);
	s.listen_fd = o->listen_fd;
	s.single = o->listen_fd < 0;
	s.parent = o->parent;
	s.self = geteuid();
	s.allow = o->allow;
	s.nallow = o->nallow;
	if ((sigfd = set_signals()) < 0 || ev_init(&s.ev, o->force_poll) != 0 ||
	    ev_add(&s.ev, sigfd, EV_IN, &signals_watch) != 0)
		return 1;
#ifdef __linux__
	if (s.parent > 0) {
		prctl(PR_SET_PDEATHSIG, SIGHUP, 0, 0, 0);
		if (getppid() != s.parent)
			s.stopping = true;
	}
#endif
	logging = o->log != NULL;
#ifdef __linux__
	/*
	 * The job of a shepherd that died comes back to us, not to init: so
	 * that its group is ended while its id is still its (orphan_job).
	 */
	(void)prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
#endif
#ifdef __linux__
	rc = job_env_init_ahead(&s.env, &first, true);
#else
	rc = job_env_init(&s.env);
#endif
	if (rc != 0) {
		fprintf(stderr, "confine-helper: %s\n", strerror(-rc));
#ifdef __linux__
		/* The first job's init, and the tmp made with it. */
		if (first.pid > 0)
			prepared_discard(&first);
#endif
		job_env_fini(&s.env);
		return 1;
	}
	job_env_trash(&s.env);
	/* What it adopted from helpers that are gone, tidied when idle. */
	s.untidy = job_env_tidy(&s.env, 0);
	say("started as uid %ld gid %ld, %s", (long)s.env.self.uid,
	    (long)s.env.self.gid, o->log ? o->log : "");
	s.env.unwatch = unwatch;
	s.env.unwatch_arg = &s.ev;
	s.guard = -1;
	guard_start(&s);
#ifdef __linux__
	pool_init(&s, o->prepared, &first);
#endif
	if (s.listen_fd >= 0) {
		(void)fd_nonblock(s.listen_fd);
		if (ev_add(&s.ev, s.listen_fd, EV_IN, &listen_watch) != 0)
			rc = 1;
		s.listen_watched = true;
	}
	if (o->fd >= 0 && conn_add(&s, o->fd) == NULL)
		rc = 1;
	while (rc == 0 && !done(&s))
		step(&s, sigfd);
#ifdef __linux__
	/* Killed and waited for: their tmps, and the dropped ones', removed. */
	prepared_drain(&s.pool, true);
	prepared_fini(&s.pool);
#endif
	while ((c = TAILQ_FIRST(&s.conns)) != NULL) {
		conn_flush(c);
		conn_close(&s, c);
	}
	while ((h = TAILQ_FIRST(&s.jobs)) != NULL)
		job_free(&s, h);
	say("stopped");
	job_env_fini(&s.env);
	/*
	 * The jobs settled: the guard's cue now (a kill of what is gone),
	 * and then it is reaped by us, not left to outlive us as an orphan
	 * (a zombie for good under a PID 1 that reaps none). A second at
	 * most: it only has a write to make.
	 */
	fd_closep(&s.guard);
	if (s.guard_pid > 0)
		proc_reap_within(s.guard_pid, 1000);
	ev_fini(&s.ev);
	sigpipe_close(sigfd);
	return rc;
}
