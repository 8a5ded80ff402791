#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "src/core/endian.h"
#include "src/core/wire.h"

/* ---- output ---- */

void
wire_buf_free(struct wire_buf *b)
{
	if (!b->fixed) {
		free(b->p);
		b->p = NULL;
		b->cap = 0;
	}
	b->len = 0;
	b->err = 0;
}

static uint8_t *
reserve(struct wire_buf *b, size_t n)
{
	size_t cap;
	uint8_t *p;

	if (b->err != 0)
		return NULL;
	if (SIZE_MAX - b->len < n) {
		b->err = -ENOMEM;
		return NULL;
	}
	if (b->len + n > b->cap && b->fixed) {
		b->err = -EMSGSIZE;
		return NULL;
	}
	if (b->len + n > b->cap) {
		cap = b->cap ? b->cap : 256;
		while (cap < b->len + n)
			cap = cap > SIZE_MAX / 2 ? b->len + n : cap * 2;
		p = realloc(b->p, cap);
		if (p == NULL) {
			b->err = -ENOMEM;
			return NULL;
		}
		b->p = p;
		b->cap = cap;
	}
	p = b->p + b->len;
	b->len += n;
	return p;
}

void
wire_put_u8(struct wire_buf *b, uint8_t v)
{
	uint8_t *p = reserve(b, 1);

	if (p)
		*p = v;
}

void
wire_put_u16(struct wire_buf *b, uint16_t v)
{
	uint8_t *p = reserve(b, 2);

	if (p) {
		p[0] = (uint8_t)(v >> 8);
		p[1] = (uint8_t)v;
	}
}

void
wire_put_u32(struct wire_buf *b, uint32_t v)
{
	uint8_t *p = reserve(b, 4);

	if (p)
		be32enc(p, v);
}

void
wire_put_u64(struct wire_buf *b, uint64_t v)
{
	uint8_t *p = reserve(b, 8);

	if (p)
		be64enc(p, v);
}

/* NULL travels as the empty string. */
void
wire_put_str(struct wire_buf *b, const char *s)
{
	size_t n = s ? strlen(s) + 1 : 1;
	uint8_t *p;

	if (n > WIRE_MAX_PAYLOAD) {
		b->err = b->err ? b->err : -EMSGSIZE;
		return;
	}
	wire_put_u32(b, (uint32_t)n);
	p = reserve(b, n);
	if (p)
		memcpy(p, s ? s : "", n);
}

void
wire_hdr_encode(uint8_t buf[WIRE_HDR_LEN], const struct wire_hdr *h)
{
	be32enc(buf, h->len);
	buf[4] = (uint8_t)(h->type >> 8);
	buf[5] = (uint8_t)h->type;
	buf[6] = (uint8_t)(h->nfds >> 8);
	buf[7] = (uint8_t)h->nfds;
	be32enc(buf + 8, h->id);
}

/* Opens a frame; returns the header's offset for frame_end. */
static size_t
frame_begin(struct wire_buf *b, uint16_t type, uint32_t id, unsigned nfds)
{
	size_t at = b->len;
	struct wire_hdr h = { 0, type, (uint16_t)nfds, id };
	uint8_t *p = reserve(b, WIRE_HDR_LEN);

	if (p)
		wire_hdr_encode(p, &h);
	return at;
}

static int
frame_end(struct wire_buf *b, size_t at)
{
	size_t len;
	int err = b->err;

	/*
	 * A frame that failed is taken back whole, and the buffer is good
	 * for the next: the frames queued before it stay as they were.
	 */
	if (err != 0) {
		b->len = at;
		b->err = 0;
		return err;
	}
	len = b->len - at - WIRE_HDR_LEN;
	if (len > WIRE_MAX_PAYLOAD) {
		b->len = at;
		return -EMSGSIZE;
	}
	be32enc(b->p + at, (uint32_t)len);
	return 0;
}

int
wire_put_hello(struct wire_buf *b, const struct wire_hello *h, int reply)
{
	size_t at = frame_begin(b, WIRE_HELLO, 0, 0);

	wire_put_u32(b, WIRE_MAGIC);
	if (reply) {
		wire_put_u16(b, h->version);
		wire_put_u16(b, 0);
		wire_put_u32(b, h->pid);
		wire_put_u32(b, 0);
	} else {
		wire_put_u16(b, h->version_min);
		wire_put_u16(b, h->version_max);
	}
	return frame_end(b, at);
}

static void
put_strv(struct wire_buf *b, const char *const *v)
{
	size_t i, n = spec_count(v);

	wire_put_u32(b, (uint32_t)n);
	for (i = 0; i < n; i++)
		wire_put_str(b, v[i]);
}

/* The API's flags as the wire has them: READ_NARROW says it outright. */
static uint16_t
spawn_flags(const struct confine_spec *s)
{
	return ((s->flags & CONFINE_FRESH_SCRATCH) ? WIRE_SPAWN_FRESH : 0) |
	    ((s->flags & CONFINE_NO_TMP) ? WIRE_SPAWN_NO_TMP : 0) |
	    ((s->flags & CONFINE_SET_TMPDIR) ? WIRE_SPAWN_SET_TMPDIR : 0) |
	    ((s->flags & CONFINE_SET_HOME) ? WIRE_SPAWN_SET_HOME : 0) |
	    (spec_narrow(s) ? WIRE_SPAWN_READ_NARROW : 0) |
	    ((s->flags & CONFINE_READ_SYSTEM) ? WIRE_SPAWN_READ_SYSTEM : 0) |
	    ((s->flags & CONFINE_REQUIRE_NAMESPACES) ? WIRE_SPAWN_REQUIRE_NS : 0) |
	    ((s->flags & CONFINE_REQUIRE_LANDLOCK) ? WIRE_SPAWN_REQUIRE_LL : 0) |
	    ((s->flags & CONFINE_WAIVE_METADATA) ? WIRE_SPAWN_WAIVE_META : 0);
}

unsigned
wire_spawn_fdmask(const struct confine_spec *s)
{
	unsigned mask = 0;
	int k;

	for (k = 0; k < 3; k++)
		if (spec_stdio(s, k) >= 0)
			mask |= 1u << k;
	return mask;
}

int
wire_put_spawn(struct wire_buf *b, uint32_t id, const struct confine_spec *s)
{
	unsigned mask = wire_spawn_fdmask(s);
	const char *argv0[2] = { s->exe, NULL };
	size_t at = frame_begin(b, WIRE_SPAWN, id, wire_mask_nfds(mask));

	wire_put_u8(b, (uint8_t)s->backend);
	wire_put_u8(b, (uint8_t)mask);
	wire_put_u16(b, spawn_flags(s));
	wire_put_u32(b, 0);
	wire_put_u64(b, (uint64_t)s->deadline_ms);
	wire_put_u64(b, (uint64_t)s->grace_ms);
	wire_put_u64(b, (uint64_t)s->limits.cpu_seconds);
	wire_put_u64(b, (uint64_t)s->limits.address_space);
	wire_put_u64(b, (uint64_t)s->limits.open_files);
	wire_put_u64(b, (uint64_t)s->limits.file_size);
	wire_put_u64(b, (uint64_t)s->limits.processes);
	wire_put_u64(b, (uint64_t)s->limits.memory);
	wire_put_str(b, s->exe);
	wire_put_str(b, s->scratch);
	wire_put_str(b, s->cwd);
	wire_put_str(b, s->launcher);
	put_strv(b, spec_argv_given(s) ? s->argv : argv0);
	put_strv(b, s->envp);
	put_strv(b, s->devices);
	put_strv(b, s->readable);
	return frame_end(b, at);
}

int
wire_put_started(struct wire_buf *b, uint32_t id, pid_t pid, pid_t pgid,
    const char *scratch, const char *tmp, const char *enforced)
{
	size_t at = frame_begin(b, WIRE_STARTED, id, 0);

	wire_put_u32(b, (uint32_t)pid);
	wire_put_u32(b, (uint32_t)pgid);
	wire_put_str(b, scratch);
	wire_put_str(b, tmp);
	wire_put_str(b, enforced);
	return frame_end(b, at);
}

int
wire_put_settled(struct wire_buf *b, uint32_t id,
    const struct confine_result *r)
{
	size_t at = frame_begin(b, WIRE_SETTLED, id, 0);

	wire_put_u8(b, (uint8_t)r->outcome);
	wire_put_u8(b, (uint8_t)r->reason);
	wire_put_u8(b, (uint8_t)r->step);
	wire_put_u8(b, (uint8_t)r->backend);
	wire_put_u8(b, (uint8_t)r->proof);
	wire_put_u8(b, (r->scratch_kept ? 1 : 0) | (r->tmp_kept ? 2 : 0));
	wire_put_u16(b, 0);
	wire_put_u32(b, (uint32_t)r->exit_code);
	wire_put_u32(b, (uint32_t)r->signal);
	wire_put_u32(b, (uint32_t)r->error);
	wire_put_u32(b, (uint32_t)r->pid);
	wire_put_u32(b, (uint32_t)r->pgid);
	wire_put_u64(b, (uint64_t)r->wall_us);
	wire_put_u64(b, (uint64_t)r->user_us);
	wire_put_u64(b, (uint64_t)r->sys_us);
	wire_put_u64(b, (uint64_t)r->max_rss_kib);
	return frame_end(b, at);
}

int
wire_put_refusal(struct wire_buf *b, uint32_t id, const struct wire_error *e)
{
	size_t at = frame_begin(b, WIRE_ERROR, id, 0);

	wire_put_u32(b, (uint32_t)e->err);
	wire_put_u32(b, (uint32_t)e->call_err);
	wire_put_str(b, e->message);
	wire_put_str(b, e->layer ? e->layer : "");
	wire_put_str(b, e->call ? e->call : "");
	wire_put_str(b, e->hint ? e->hint : "");
	return frame_end(b, at);
}

int
wire_put_error(struct wire_buf *b, uint32_t id, int err, const char *message)
{
	struct wire_error e = { .err = err, .message = message };

	return wire_put_refusal(b, id, &e);
}

int
wire_put_empty(struct wire_buf *b, uint16_t type, uint32_t id)
{
	return frame_end(b, frame_begin(b, type, id, 0));
}

/* ---- input ---- */

int
wire_type_known(uint16_t type)
{
	return type >= WIRE_HELLO && type <= WIRE_SHUTDOWN;
}

long
wire_fixed_len(uint16_t type, int from_helper)
{
	switch (type) {
	case WIRE_HELLO:
		return from_helper ? WIRE_HELLO_REPLY_LEN : WIRE_HELLO_LEN;
	case WIRE_SETTLED:
		return WIRE_SETTLED_LEN;
	case WIRE_CANCEL:
	case WIRE_SHUTDOWN:
		return 0;
	default:
		return -1;
	}
}

int
wire_hdr_decode(const uint8_t buf[WIRE_HDR_LEN], struct wire_hdr *h)
{
	h->len = be32dec(buf);
	h->type = (uint16_t)(buf[4] << 8 | buf[5]);
	h->nfds = (uint16_t)(buf[6] << 8 | buf[7]);
	h->id = be32dec(buf + 8);
	if (h->len > WIRE_MAX_PAYLOAD)
		return -EMSGSIZE;
	if (h->nfds > WIRE_MAX_FDS)
		return -EBADMSG;
	return 0;
}

static const uint8_t *
take(struct wire_rd *r, size_t n)
{
	const uint8_t *p;

	if (r->err != 0 || r->len - r->off < n) {
		r->err = -EBADMSG;
		return NULL;
	}
	p = r->p + r->off;
	r->off += n;
	return p;
}

uint8_t
wire_get_u8(struct wire_rd *r)
{
	const uint8_t *p = take(r, 1);

	return p ? *p : 0;
}

uint16_t
wire_get_u16(struct wire_rd *r)
{
	const uint8_t *p = take(r, 2);

	return p ? (uint16_t)(p[0] << 8 | p[1]) : 0;
}

uint32_t
wire_get_u32(struct wire_rd *r)
{
	const uint8_t *p = take(r, 4);

	return p ? be32dec(p) : 0;
}

uint64_t
wire_get_u64(struct wire_rd *r)
{
	const uint8_t *p = take(r, 8);

	return p ? be64dec(p) : 0;
}

/* Out of range reads as -1: spec_check refuses it as Invalid. */
static int64_t
get_i64(struct wire_rd *r)
{
	uint64_t v = wire_get_u64(r);

	return v > INT64_MAX ? -1 : (int64_t)v;
}

/* A string: NUL at the end and nowhere else. */
const char *
wire_get_str(struct wire_rd *r)
{
	uint32_t n = wire_get_u32(r);
	const uint8_t *p;

	if (r->err != 0 || n == 0) {
		r->err = -EBADMSG;
		return NULL;
	}
	p = take(r, n);
	if (p == NULL || p[n - 1] != '\0' || memchr(p, '\0', n - 1) != NULL) {
		r->err = -EBADMSG;
		return NULL;
	}
	return (const char *)p;
}

static const char *
get_opt_str(struct wire_rd *r)
{
	const char *s = wire_get_str(r);

	return s && *s ? s : NULL;
}

enum confine_step
wire_get_step(struct wire_rd *r)
{
	uint32_t step = wire_get_u32(r);

	return step <= WIRE_STEP_LAST ? (enum confine_step)step :
	    CONFINE_STEP_EXEC;
}

int
wire_get_end(struct wire_rd *r)
{
	if (r->err == 0 && r->off != r->len)
		r->err = -EBADMSG;
	return r->err;
}

int
wire_get_hello(const uint8_t *p, size_t len, struct wire_hello *h, int reply)
{
	struct wire_rd r = WIRE_RD(p, len);

	memset(h, 0, sizeof(*h));
	if (wire_get_u32(&r) != WIRE_MAGIC)
		r.err = -EBADMSG;
	if (reply) {
		h->version = wire_get_u16(&r);
		if (wire_get_u16(&r) != 0)
			r.err = -EBADMSG;
		h->pid = wire_get_u32(&r);
		if (wire_get_u32(&r) != 0)
			r.err = -EBADMSG;
	} else {
		h->version_min = wire_get_u16(&r);
		h->version_max = wire_get_u16(&r);
		if (h->version_min > h->version_max)
			r.err = -EBADMSG;
	}
	return wire_get_end(&r);
}

int
wire_get_started(const uint8_t *p, size_t len, pid_t *pid, pid_t *pgid,
    const char **scratch, const char **tmp, const char **enforced)
{
	struct wire_rd r = WIRE_RD(p, len);

	*pid = (pid_t)wire_get_u32(&r);
	*pgid = (pid_t)wire_get_u32(&r);
	*scratch = wire_get_str(&r);
	*tmp = wire_get_str(&r);
	*enforced = wire_get_str(&r);
	return wire_get_end(&r);
}

int
wire_get_settled(const uint8_t *p, size_t len, struct confine_result *res)
{
	struct wire_rd r = WIRE_RD(p, len);
	uint8_t outcome, reason, step, backend, proof, kept;

	memset(res, 0, sizeof(*res));
	outcome = wire_get_u8(&r);
	reason = wire_get_u8(&r);
	step = wire_get_u8(&r);
	backend = wire_get_u8(&r);
	proof = wire_get_u8(&r);
	kept = wire_get_u8(&r);
	if (kept > 3 || wire_get_u16(&r) != 0)
		r.err = -EBADMSG;
	res->scratch_kept = kept & 1;
	res->tmp_kept = kept >> 1;
	if (outcome < CONFINE_COMPLETED || outcome > CONFINE_UNCERTAIN ||
	    reason > CONFINE_REASON_HELPER_LOST || step > WIRE_STEP_LAST ||
	    backend > CONFINE_BACKEND_NONE || proof > CONFINE_PROOF_CGROUP)
		r.err = -EBADMSG;
	res->outcome = (enum confine_outcome)outcome;
	res->reason = (enum confine_reason)reason;
	res->step = (enum confine_step)step;
	res->backend = (enum confine_backend)backend;
	res->proof = (enum confine_proof)proof;
	res->exit_code = (int)wire_get_u32(&r);
	res->signal = (int)wire_get_u32(&r);
	res->error = (int)wire_get_u32(&r);
	res->pid = (pid_t)wire_get_u32(&r);
	res->pgid = (pid_t)wire_get_u32(&r);
	res->wall_us = (int64_t)wire_get_u64(&r);
	res->user_us = (int64_t)wire_get_u64(&r);
	res->sys_us = (int64_t)wire_get_u64(&r);
	res->max_rss_kib = (int64_t)wire_get_u64(&r);
	return wire_get_end(&r);
}

int
wire_get_error(const uint8_t *p, size_t len, struct wire_error *e)
{
	struct wire_rd r = WIRE_RD(p, len);
	uint32_t err, call_err;

	err = wire_get_u32(&r);
	call_err = wire_get_u32(&r);
	if (err == 0 || err > 4095 || call_err > 4095)
		r.err = -EBADMSG;
	e->err = (int)err;
	e->call_err = (int)call_err;
	e->message = wire_get_str(&r);
	e->layer = wire_get_str(&r);
	e->call = wire_get_str(&r);
	e->hint = wire_get_str(&r);
	return wire_get_end(&r);
}

/*
 * A count of strings, checked against what is left before anything is
 * allocated: each string takes at least five bytes.
 */
static size_t
get_count(struct wire_rd *r)
{
	uint32_t n = wire_get_u32(r);

	if (r->err == 0 && n > (r->len - r->off) / 5)
		r->err = -EBADMSG;
	return r->err ? 0 : n;
}

static void
get_strv(struct wire_rd *r, const char **v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		v[i] = wire_get_str(r);
	v[n] = NULL;
}

int
wire_get_spawn(const uint8_t *p, size_t len, struct confine_spec *s,
    unsigned *fdmask, void **arena)
{
	struct wire_rd r = WIRE_RD(p, len);
	size_t cap = len / 5 + 4, n[4], at = 0, k;
	const char **v, **lists[4];
	uint16_t flags;

	*arena = NULL;
	memset(s, 0, sizeof(*s));
	s->backend = (enum confine_backend)wire_get_u8(&r);
	*fdmask = wire_get_u8(&r);
	flags = wire_get_u16(&r);
	if ((flags & ~(WIRE_SPAWN_FRESH | WIRE_SPAWN_NO_TMP |
	    WIRE_SPAWN_SET_TMPDIR | WIRE_SPAWN_SET_HOME |
	    WIRE_SPAWN_READ_NARROW | WIRE_SPAWN_READ_SYSTEM |
	    WIRE_SPAWN_REQUIRE_NS | WIRE_SPAWN_REQUIRE_LL |
	    WIRE_SPAWN_WAIVE_META)) != 0 ||
	    ((flags & WIRE_SPAWN_READ_SYSTEM) &&
	    !(flags & WIRE_SPAWN_READ_NARROW)) ||
	    wire_get_u32(&r) != 0 ||
	    (*fdmask & ~7u) != 0)
		r.err = -EBADMSG;
	s->flags = ((flags & WIRE_SPAWN_FRESH) ? CONFINE_FRESH_SCRATCH : 0) |
	    ((flags & WIRE_SPAWN_NO_TMP) ? CONFINE_NO_TMP : 0) |
	    ((flags & WIRE_SPAWN_SET_TMPDIR) ? CONFINE_SET_TMPDIR : 0) |
	    ((flags & WIRE_SPAWN_SET_HOME) ? CONFINE_SET_HOME : 0) |
	    ((flags & WIRE_SPAWN_READ_SYSTEM) ? CONFINE_READ_SYSTEM : 0) |
	    ((flags & WIRE_SPAWN_REQUIRE_NS) ? CONFINE_REQUIRE_NAMESPACES : 0) |
	    ((flags & WIRE_SPAWN_REQUIRE_LL) ? CONFINE_REQUIRE_LANDLOCK : 0) |
	    ((flags & WIRE_SPAWN_WAIVE_META) ? CONFINE_WAIVE_METADATA : 0);
	s->deadline_ms = get_i64(&r);
	s->grace_ms = get_i64(&r);
	s->limits.cpu_seconds = get_i64(&r);
	s->limits.address_space = get_i64(&r);
	s->limits.open_files = get_i64(&r);
	s->limits.file_size = get_i64(&r);
	s->limits.processes = get_i64(&r);
	s->limits.memory = get_i64(&r);
	s->exe = wire_get_str(&r);
	s->scratch = get_opt_str(&r);
	s->cwd = get_opt_str(&r);
	s->launcher = get_opt_str(&r);
	if (r.err != 0)
		return r.err;
	/*
	 * argv, envp, devices and readable share one array, each
	 * NULL-terminated. Every string takes at least five payload bytes,
	 * so cap bounds them all.
	 */
	v = calloc(cap, sizeof(*v));
	if (v == NULL)
		return -ENOMEM;
	for (k = 0; k < 4 && r.err == 0; k++) {
		n[k] = get_count(&r);
		if (r.err == 0 && cap - at < n[k] + 1)
			r.err = -EBADMSG;
		if (r.err == 0) {
			lists[k] = v + at;
			get_strv(&r, lists[k], n[k]);
			at += n[k] + 1;
		}
	}
	/* Trees to read without narrowed reads: no encoder says that. */
	if (r.err == 0 && n[3] > 0 && !(flags & WIRE_SPAWN_READ_NARROW))
		r.err = -EBADMSG;
	if (wire_get_end(&r) != 0) {
		free(v);
		return r.err;
	}
	s->argv = lists[0];
	s->envp = lists[1];
	s->devices = lists[2];
	s->readable = (flags & WIRE_SPAWN_READ_NARROW) ? lists[3] : NULL;
	s->stdin_fd = s->stdout_fd = s->stderr_fd = -1;
	*arena = v;
	return 0;
}
