/* The wire protocol: round trips, exact sizes, and hostile bytes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "src/core/wire.h"

static const char *const argv3[] = { "cc", "-c", "x.c", NULL };
static const char *const env2[] = { "A=1", "PATH=/bin", NULL };
static const char *const dev1[] = { "/dev/zero", NULL };

static void
sample_spec(struct confine_spec *s)
{
	memset(s, 0, sizeof(*s));
	s->exe = "/usr/bin/cc";
	s->argv = argv3;
	s->envp = env2;
	s->scratch = "/tmp/j";
	s->cwd = "/tmp/j/src";
	s->devices = dev1;
	s->launcher = NULL;
	s->deadline_ms = 1500;
	s->grace_ms = 250;
	s->backend = CONFINE_BACKEND_LANDLOCK;
	s->limits.cpu_seconds = 1;
	s->limits.address_space = 2;
	s->limits.open_files = 3;
	s->limits.file_size = 4;
	s->limits.processes = 5;
	s->limits.memory = INT64_C(1) << 40;
	s->flags |= CONFINE_FRESH_SCRATCH;
	s->stdin_fd = s->stdout_fd = s->stderr_fd = -1;
}

/* The payload of the first frame in b, checking its header. */
static const uint8_t *
payload(const struct wire_buf *b, uint16_t type, uint32_t id, uint32_t *len)
{
	struct wire_hdr h;

	assert_true(b->len >= WIRE_HDR_LEN);
	assert_int_equal(wire_hdr_decode(b->p, &h), 0);
	assert_int_equal(h.type, type);
	assert_int_equal(h.id, id);
	assert_int_equal(b->len, WIRE_HDR_LEN + h.len);
	*len = h.len;
	return b->p + WIRE_HDR_LEN;
}

static void
spawn_round_trips(void **state)
{
	struct wire_buf b = { 0 };
	struct confine_spec s, d;
	unsigned mask;
	uint32_t len;
	void *arena;
	const uint8_t *p;

	(void)state;
	sample_spec(&s);
	s.stdin_fd = 0;            /* stdin and stderr ride with the frame */
	s.stderr_fd = 2;
	assert_int_equal(wire_put_spawn(&b, 42, &s), 0);
	p = payload(&b, WIRE_SPAWN, 42, &len);
	assert_int_equal(wire_get_spawn(p, len, &d, &mask, &arena), 0);
	assert_int_equal(mask, 5);
	assert_string_equal(d.exe, s.exe);
	assert_int_equal(spec_count(d.argv), 3);
	assert_string_equal(d.argv[2], "x.c");
	assert_int_equal(spec_count(d.envp), 2);
	assert_string_equal(d.envp[1], "PATH=/bin");
	assert_int_equal(spec_count(d.devices), 1);
	assert_string_equal(d.devices[0], "/dev/zero");
	assert_null(d.readable);   /* reads not narrowed */
	assert_string_equal(d.scratch, "/tmp/j");
	assert_string_equal(d.cwd, "/tmp/j/src");
	assert_null(d.launcher);
	assert_int_equal(d.deadline_ms, 1500);
	assert_int_equal(d.grace_ms, 250);
	assert_int_equal(d.backend, CONFINE_BACKEND_LANDLOCK);
	assert_memory_equal(&d.limits, &s.limits, sizeof(s.limits));
	assert_int_equal(d.flags, CONFINE_FRESH_SCRATCH);
	assert_int_equal(d.stdin_fd, -1);
	assert_int_equal(d.stdout_fd, -1);
	assert_int_equal(d.stderr_fd, -1);
	free(arena);
	wire_buf_free(&b);
}

/* Zeroed whole, padding too, so that results can be compared as bytes. */
static void
sample_result(struct confine_result *r)
{
	memset(r, 0, sizeof(*r));
	r->outcome = CONFINE_UNCERTAIN;
	r->reason = CONFINE_REASON_KILL_AMBIGUOUS;
	r->exit_code = -1;
	r->signal = 9;
	r->error = 1;
	r->step = CONFINE_STEP_LIMITS;
	r->pid = 123;
	r->pgid = 122;
	r->backend = CONFINE_BACKEND_SEATBELT;
	r->proof = CONFINE_PROOF_CGROUP;
	r->scratch_kept = 1;
	r->tmp_kept = 1;
	r->wall_us = INT64_C(1) << 40;
	r->user_us = 7;
	r->sys_us = 8;
	r->max_rss_kib = 9;
}

static void
settled_round_trips(void **state)
{
	struct confine_result r, d;
	struct wire_buf b = { 0 };
	const uint8_t *p;
	uint32_t len;

	(void)state;
	sample_result(&r);
	assert_int_equal(wire_put_settled(&b, 7, &r), 0);
	p = payload(&b, WIRE_SETTLED, 7, &len);
	assert_int_equal(len, WIRE_SETTLED_LEN);
	assert_int_equal(wire_get_settled(p, len, &d), 0);
	assert_memory_equal(&r, &d, sizeof(r));
	wire_buf_free(&b);
}

static void
small_messages_round_trip(void **state)
{
	struct wire_hello h = { .version_min = 1, .version_max = 3 }, d;
	struct wire_buf b = { 0 };
	struct wire_error e;
	const uint8_t *p;
	const char *root, *tmp, *enforced;
	pid_t pid, pgid;
	uint32_t len;

	(void)state;
	assert_int_equal(wire_put_hello(&b, &h, 0), 0);
	p = payload(&b, WIRE_HELLO, 0, &len);
	assert_int_equal(len, WIRE_HELLO_LEN);
	assert_int_equal(wire_get_hello(p, len, &d, 0), 0);
	assert_int_equal(d.version_max, 3);
	wire_buf_free(&b);

	h.version = 1;
	h.pid = 99;
	assert_int_equal(wire_put_hello(&b, &h, 1), 0);
	p = payload(&b, WIRE_HELLO, 0, &len);
	assert_int_equal(len, WIRE_HELLO_REPLY_LEN);
	assert_int_equal(wire_get_hello(p, len, &d, 1), 0);
	assert_int_equal(d.pid, 99);
	wire_buf_free(&b);

	assert_int_equal(wire_put_started(&b, 3, 1000, 999, "/tmp/x/confine.a",
	    "/tmp/confine-tmp.b", "backend=landlock landlock=7"), 0);
	p = payload(&b, WIRE_STARTED, 3, &len);
	assert_int_equal(wire_get_started(p, len, &pid, &pgid, &root, &tmp,
	    &enforced), 0);
	assert_int_equal(pid, 1000);
	assert_int_equal(pgid, 999);
	assert_string_equal(root, "/tmp/x/confine.a");
	assert_string_equal(tmp, "/tmp/confine-tmp.b");
	assert_string_equal(enforced, "backend=landlock landlock=7");
	wire_buf_free(&b);

	assert_int_equal(wire_put_error(&b, 4, ENOTSUP, "too old"), 0);
	p = payload(&b, WIRE_ERROR, 4, &len);
	assert_int_equal(wire_get_error(p, len, &e), 0);
	assert_int_equal(e.err, ENOTSUP);
	assert_string_equal(e.message, "too old");
	wire_buf_free(&b);

	assert_int_equal(wire_put_empty(&b, WIRE_CANCEL, 5), 0);
	p = payload(&b, WIRE_CANCEL, 5, &len);
	assert_int_equal(len, 0);
	wire_buf_free(&b);
}

/*
 * Golden bytes: each message exactly as docs/protocol.md spells it out,
 * so that two fields swapped in both the encoder and the decoder (a round
 * trip would not notice) are caught.
 */
#define U16(v) (uint8_t)((v) >> 8), (uint8_t)(v)
#define U32(v) (uint8_t)((uint32_t)(v) >> 24), (uint8_t)((uint32_t)(v) >> 16), \
	U16((uint32_t)(v) & 0xffff)
#define U64(v) U32((uint64_t)(v) >> 32), U32((uint64_t)(v) & 0xffffffffu)
#define HDR(len, type, nfds, id) U32(len), U16(type), U16(nfds), U32(id)

/* b holds exactly want, and its payload is handed back for decoding. */
static const uint8_t *
golden(struct wire_buf *b, int rc, const uint8_t *want, size_t n,
    uint32_t *len)
{
	struct wire_hdr h;

	assert_int_equal(rc, 0);
	assert_int_equal(b->len, n);
	assert_memory_equal(b->p, want, n);
	assert_int_equal(wire_hdr_decode(want, &h), 0);
	*len = h.len;
	return want + WIRE_HDR_LEN;
}

static void
hello_bytes(void **state)
{
	static const uint8_t req[] = { HDR(8, 1, 0, 0), 'C', 'N', 'F', 'N',
		U16(2), U16(5) };
	static const uint8_t rep[] = { HDR(16, 1, 0, 0), 'C', 'N', 'F', 'N',
		U16(3), U16(0), U32(123456), U32(0) };
	struct wire_hello h = { .version_min = 2, .version_max = 5 }, d;
	struct wire_buf b = { 0 };
	const uint8_t *p;
	uint32_t len;

	(void)state;
	p = golden(&b, wire_put_hello(&b, &h, 0), req, sizeof(req), &len);
	assert_int_equal(wire_get_hello(p, len, &d, 0), 0);
	assert_int_equal(d.version_min, 2);
	assert_int_equal(d.version_max, 5);
	wire_buf_free(&b);

	h.version = 3;
	h.pid = 123456;
	p = golden(&b, wire_put_hello(&b, &h, 1), rep, sizeof(rep), &len);
	assert_int_equal(wire_get_hello(p, len, &d, 1), 0);
	assert_int_equal(d.version, 3);
	assert_int_equal(d.pid, 123456);
	wire_buf_free(&b);
}

static void
spawn_bytes(void **state)
{
	static const uint8_t want[] = { HDR(149, 2, 2, 42),
		1, 5, U16(0x31), U32(0),
		U64(1500), U64(250),
		U64(1), U64(2), U64(3), U64(4), U64(5), U64(6),
		U32(3), '/', 'x', 0, U32(3), '/', 's', 0, U32(3), '/', 'c', 0,
		U32(1), 0,
		U32(2), U32(2), 'a', 0, U32(3), 'b', 'c', 0,
		U32(1), U32(4), 'E', '=', '1', 0,
		U32(1), U32(3), '/', 'd', 0,
		U32(1), U32(3), '/', 'r', 0 };
	static const char *const argv[] = { "a", "bc", NULL };
	static const char *const readable[] = { "/r", NULL };
	static const char *const envp[] = { "E=1", NULL };
	static const char *const devs[] = { "/d", NULL };
	struct wire_buf b = { 0 };
	const uint8_t *p;
	struct confine_spec s, d;
	unsigned mask;
	uint32_t len;
	void *arena;

	(void)state;
	memset(&s, 0, sizeof(s));
	s.exe = "/x";
	s.scratch = "/s";
	s.cwd = "/c";
	s.argv = argv;
	s.envp = envp;
	s.devices = devs;
	s.deadline_ms = 1500;
	s.grace_ms = 250;
	s.backend = CONFINE_BACKEND_LANDLOCK;
	s.limits.cpu_seconds = 1;
	s.limits.address_space = 2;
	s.limits.open_files = 3;
	s.limits.file_size = 4;
	s.limits.processes = 5;
	s.limits.memory = 6;
	s.flags |= CONFINE_FRESH_SCRATCH;
	s.readable = readable;
	s.flags |= CONFINE_READ_SYSTEM;
	s.stdin_fd = 0;
	s.stdout_fd = -1;
	s.stderr_fd = 2;
	p = golden(&b, wire_put_spawn(&b, 42, &s), want, sizeof(want),
	    &len);
	assert_int_equal(wire_get_spawn(p, len, &d, &mask, &arena), 0);
	assert_int_equal(mask, 5);
	assert_int_equal(d.backend, CONFINE_BACKEND_LANDLOCK);
	assert_int_equal(d.flags, CONFINE_FRESH_SCRATCH | CONFINE_READ_SYSTEM);
	assert_int_equal(d.deadline_ms, 1500);
	assert_int_equal(d.grace_ms, 250);
	assert_int_equal(d.limits.cpu_seconds, 1);
	assert_int_equal(d.limits.address_space, 2);
	assert_int_equal(d.limits.open_files, 3);
	assert_int_equal(d.limits.file_size, 4);
	assert_int_equal(d.limits.processes, 5);
	assert_int_equal(d.limits.memory, 6);
	assert_string_equal(d.exe, "/x");
	assert_string_equal(d.scratch, "/s");
	assert_string_equal(d.cwd, "/c");
	assert_null(d.launcher);
	assert_int_equal(spec_count(d.argv), 2);
	assert_string_equal(d.argv[0], "a");
	assert_string_equal(d.argv[1], "bc");
	assert_int_equal(spec_count(d.envp), 1);
	assert_string_equal(d.envp[0], "E=1");
	assert_int_equal(spec_count(d.devices), 1);
	assert_string_equal(d.devices[0], "/d");
	assert_true(spec_narrow(&d));
	assert_int_equal(spec_count(d.readable), 1);
	assert_string_equal(d.readable[0], "/r");
	assert_null(d.readable[1]);
	free(arena);
	wire_buf_free(&b);
}

static void
started_bytes(void **state)
{
	static const uint8_t want[] = { HDR(33, 3, 0, 3), U32(1000), U32(999),
		U32(3), '/', 'r', 0, U32(3), '/', 't', 0, U32(7), 'u', 'i', 'd',
		'=', '0', ' ', 0 };
	struct wire_buf b = { 0 };
	const uint8_t *p;
	const char *root, *tmp, *enforced;
	pid_t pid, pgid;
	uint32_t len;

	(void)state;
	p = golden(&b, wire_put_started(&b, 3, 1000, 999, "/r", "/t", "uid=0 "),
	    want, sizeof(want), &len);
	assert_int_equal(wire_get_started(p, len, &pid, &pgid, &root, &tmp,
	    &enforced), 0);
	assert_int_equal(pid, 1000);
	assert_int_equal(pgid, 999);
	assert_string_equal(root, "/r");
	assert_string_equal(tmp, "/t");
	assert_string_equal(enforced, "uid=0 ");
	wire_buf_free(&b);
}

static void
settled_bytes(void **state)
{
	static const uint8_t want[] = { HDR(60, 4, 0, 7),
		4, 8, 6, 2, 3, 3, U16(0),
		U32(-1), U32(9), U32(1), U32(123), U32(122),
		U64(UINT64_C(1) << 40), U64(7), U64(8), U64(9) };
	struct confine_result r, d;
	struct wire_buf b = { 0 };
	const uint8_t *p;
	uint32_t len;

	(void)state;
	sample_result(&r);
	p = golden(&b, wire_put_settled(&b, 7, &r), want, sizeof(want), &len);
	assert_int_equal(wire_get_settled(p, len, &d), 0);
	assert_memory_equal(&d, &r, sizeof(r));
	wire_buf_free(&b);
}

static void
error_bytes(void **state)
{
	static const uint8_t want[] = { HDR(35, 6, 0, 4), U32(22), U32(0),
		U32(8), 't', 'o', 'o', ' ', 'o', 'l', 'd', 0,
		U32(1), 0, U32(1), 0, U32(1), 0 };
	static const uint8_t refusal[] = { HDR(46, 6, 0, 5), U32(95), U32(1),
		U32(3), 'n', 'o', 0, U32(9), 's', 'e', 'c', 'c', 'o', 'm', 'p',
		'x', 0, U32(5), 'c', 'a', 'l', 'l', 0, U32(5), 'h', 'i', 'n',
		't', 0 };
	struct wire_error r = { .err = 95, .message = "no",
		.layer = "seccompx", .call = "call", .call_err = EPERM,
		.hint = "hint" };
	struct wire_buf b = { 0 };
	struct wire_error e;
	const uint8_t *p;
	uint32_t len;

	(void)state;
	assert_int_equal(EINVAL, 22);
	assert_int_equal(EPERM, 1);
	p = golden(&b, wire_put_error(&b, 4, EINVAL, "too old"), want,
	    sizeof(want), &len);
	assert_int_equal(wire_get_error(p, len, &e), 0);
	assert_int_equal(e.err, EINVAL);
	assert_string_equal(e.message, "too old");
	assert_string_equal(e.layer, "");
	assert_int_equal(e.call_err, 0);
	wire_buf_free(&b);
	/* With what could not be applied. */
	p = golden(&b, wire_put_refusal(&b, 5, &r), refusal, sizeof(refusal),
	    &len);
	assert_int_equal(wire_get_error(p, len, &e), 0);
	assert_int_equal(e.err, 95);
	assert_int_equal(e.call_err, EPERM);
	assert_string_equal(e.message, "no");
	assert_string_equal(e.layer, "seccompx");
	assert_string_equal(e.call, "call");
	assert_string_equal(e.hint, "hint");
	wire_buf_free(&b);
}

static void
empty_message_bytes(void **state)
{
	static const uint8_t cancel[] = { HDR(0, 5, 0, 5) };
	static const uint8_t shutdown[] = { HDR(0, 7, 0, 0) };
	struct wire_buf b = { 0 };
	struct wire_hdr h;
	uint32_t len;

	(void)state;
	(void)golden(&b, wire_put_empty(&b, WIRE_CANCEL, 5), cancel,
	    sizeof(cancel), &len);
	assert_int_equal(wire_hdr_decode(cancel, &h), 0);
	assert_int_equal(h.type, WIRE_CANCEL);
	assert_int_equal(h.id, 5);
	assert_int_equal(h.len, 0);
	wire_buf_free(&b);
	(void)golden(&b, wire_put_empty(&b, WIRE_SHUTDOWN, 0), shutdown,
	    sizeof(shutdown), &len);
	assert_int_equal(wire_hdr_decode(shutdown, &h), 0);
	assert_int_equal(h.type, WIRE_SHUTDOWN);
	assert_int_equal(h.nfds, 0);
	wire_buf_free(&b);
}

static void
header_checks_length_and_fds_once(void **state)
{
	uint8_t buf[WIRE_HDR_LEN];
	struct wire_hdr h = { WIRE_MAX_PAYLOAD, WIRE_SPAWN, 3, 1 }, d;

	(void)state;
	wire_hdr_encode(buf, &h);
	assert_int_equal(wire_hdr_decode(buf, &d), 0);
	h.len = WIRE_MAX_PAYLOAD + 1;
	wire_hdr_encode(buf, &h);
	assert_int_equal(wire_hdr_decode(buf, &d), -EMSGSIZE);
	h.len = 0;
	h.nfds = WIRE_MAX_FDS + 1;
	wire_hdr_encode(buf, &h);
	assert_int_equal(wire_hdr_decode(buf, &d), -EBADMSG);
	memset(buf, 0xff, sizeof(buf));
	assert_int_equal(wire_hdr_decode(buf, &d), -EMSGSIZE);
	/* An unknown type is the caller's to refuse: it can be skipped. */
	h.nfds = 0;
	h.type = 99;
	wire_hdr_encode(buf, &h);
	assert_int_equal(wire_hdr_decode(buf, &d), 0);
	assert_false(wire_type_known(d.type));
}

/* Every proper prefix of a valid spawn payload is refused. */
static void
truncated_spawn_is_refused_at_every_length(void **state)
{
	struct wire_buf b = { 0 };
	struct confine_spec s, d;
	unsigned mask;
	uint32_t len, n;
	void *arena;
	const uint8_t *p;

	(void)state;
	sample_spec(&s);
	assert_int_equal(wire_put_spawn(&b, 1, &s), 0);
	p = payload(&b, WIRE_SPAWN, 1, &len);
	for (n = 0; n < len; n++) {
		assert_int_equal(wire_get_spawn(p, n, &d, &mask, &arena), -EBADMSG);
		assert_null(arena);
	}
	wire_buf_free(&b);
}

static void
trailing_bytes_are_refused(void **state)
{
	struct wire_buf b = { 0 };
	struct confine_result r;
	struct confine_spec s, d;
	uint8_t big[WIRE_SETTLED_LEN + 1] = { 0 };
	unsigned mask;
	uint32_t len;
	void *arena;
	uint8_t *copy;
	const uint8_t *p;

	(void)state;
	sample_spec(&s);
	assert_int_equal(wire_put_spawn(&b, 1, &s), 0);
	p = payload(&b, WIRE_SPAWN, 1, &len);
	copy = calloc(1, len + 1);
	memcpy(copy, p, len);
	assert_int_equal(wire_get_spawn(copy, len + 1, &d, &mask, &arena), -EBADMSG);
	free(copy);
	wire_buf_free(&b);
	big[0] = CONFINE_COMPLETED;
	assert_int_equal(wire_get_settled(big, sizeof(big), &r), -EBADMSG);
}

static void
fill_0xff_is_refused_by_every_decoder(void **state)
{
	uint8_t buf[512];
	struct confine_result r;
	struct wire_hello h;
	struct wire_error e;
	struct confine_spec s;
	unsigned mask;
	void *arena;
	const char *root, *tmp, *enforced;
	pid_t a, b;
	size_t n;

	(void)state;
	memset(buf, 0xff, sizeof(buf));
	for (n = 0; n <= sizeof(buf); n += 7) {
		assert_int_equal(wire_get_spawn(buf, n, &s, &mask, &arena), -EBADMSG);
		assert_int_equal(wire_get_hello(buf, n, &h, 0), -EBADMSG);
		assert_int_equal(wire_get_hello(buf, n, &h, 1), -EBADMSG);
		assert_int_equal(wire_get_settled(buf, n, &r), -EBADMSG);
		assert_int_equal(wire_get_error(buf, n, &e), -EBADMSG);
	}
	for (n = 0; n <= sizeof(buf); n += 7)
		assert_int_equal(wire_get_started(buf, n, &a, &b, &root, &tmp,
		    &enforced), -EBADMSG);
}

/* A spawn payload by hand: fixed part, then the strings as given. */
static size_t
raw_spawn(uint8_t *p, const uint8_t *strs, size_t slen)
{
	memset(p, 0, WIRE_SPAWN_FIXED);
	p[0] = CONFINE_BACKEND_NONE;
	memcpy(p + WIRE_SPAWN_FIXED, strs, slen);
	return WIRE_SPAWN_FIXED + slen;
}

#define STR(n) 0, 0, 0, (n)

static void
strings_must_end_in_their_only_nul(void **state)
{
	/* exe "/x" without its terminator, then empty strings and counts. */
	static const uint8_t no_nul[] = { STR(2), '/', 'x', STR(1), 0, STR(1), 0,
		STR(1), 0, STR(0), STR(0), STR(0) };
	static const uint8_t inner_nul[] = { STR(3), '/', 0, 0, STR(1), 0,
		STR(1), 0, STR(1), 0, STR(0), STR(0), STR(0) };
	static const uint8_t zero_len[] = { STR(0), STR(1), 0, STR(1), 0,
		STR(1), 0, STR(0), STR(0), STR(0) };
	static const uint8_t good[] = { STR(3), '/', 'x', 0, STR(1), 0, STR(1), 0,
		STR(1), 0, STR(1), STR(2), 'x', 0, STR(0), STR(0),
		STR(0) };
	uint8_t p[256];
	struct confine_spec s;
	unsigned mask;
	void *arena;

	(void)state;
	assert_int_equal(wire_get_spawn(p, raw_spawn(p, good, sizeof(good)), &s,
	    &mask, &arena), 0);
	assert_string_equal(s.exe, "/x");
	assert_string_equal(s.argv[0], "x");
	free(arena);
	assert_int_equal(wire_get_spawn(p, raw_spawn(p, no_nul, sizeof(no_nul)),
	    &s, &mask, &arena), -EBADMSG);
	assert_int_equal(wire_get_spawn(p, raw_spawn(p, inner_nul,
	    sizeof(inner_nul)), &s, &mask, &arena), -EBADMSG);
	assert_int_equal(wire_get_spawn(p, raw_spawn(p, zero_len,
	    sizeof(zero_len)), &s, &mask, &arena), -EBADMSG);
}

/* A count larger than the bytes left could hold is refused before malloc. */
static void
huge_counts_are_refused(void **state)
{
	static const uint8_t huge[] = { STR(3), '/', 'x', 0, STR(1), 0, STR(1), 0,
		STR(1), 0, 0xff, 0xff, 0xff, 0xff, STR(0), STR(0) };
	static const uint8_t just_over[] = { STR(3), '/', 'x', 0, STR(1), 0,
		STR(1), 0, STR(1), 0, STR(2), STR(2), 'x', 0 };
	uint8_t p[256];
	struct confine_spec s;
	unsigned mask;
	void *arena;

	(void)state;
	assert_int_equal(wire_get_spawn(p, raw_spawn(p, huge, sizeof(huge)), &s,
	    &mask, &arena), -EBADMSG);
	assert_int_equal(wire_get_spawn(p, raw_spawn(p, just_over,
	    sizeof(just_over)), &s, &mask, &arena), -EBADMSG);
}

/*
 * READ_NARROW says outright that reads are narrowed, even with no tree
 * listed; trees, or the system trees, without it no encoder sends.
 */
static void
narrowing_is_said_outright(void **state)
{
	static const uint8_t none[] = { STR(3), '/', 'x', 0, STR(1), 0, STR(1), 0,
		STR(1), 0, STR(1), STR(2), 'x', 0, STR(0), STR(0),
		STR(0) };
	static const uint8_t one[] = { STR(3), '/', 'x', 0, STR(1), 0, STR(1), 0,
		STR(1), 0, STR(1), STR(2), 'x', 0, STR(0), STR(0),
		STR(1), STR(3), '/', 'r', 0 };
	uint8_t p[256];
	struct confine_spec s;
	unsigned mask;
	void *arena;
	size_t n;

	(void)state;
	n = raw_spawn(p, none, sizeof(none));
	assert_int_equal(wire_get_spawn(p, n, &s, &mask, &arena), 0);
	assert_false(spec_narrow(&s));
	free(arena);
	p[3] = WIRE_SPAWN_READ_NARROW;
	assert_int_equal(wire_get_spawn(p, n, &s, &mask, &arena), 0);
	assert_true(spec_narrow(&s));
	assert_non_null(s.readable);
	assert_null(s.readable[0]);
	free(arena);
	p[3] = WIRE_SPAWN_READ_SYSTEM;
	assert_int_equal(wire_get_spawn(p, n, &s, &mask, &arena), -EBADMSG);
	n = raw_spawn(p, one, sizeof(one));
	assert_int_equal(wire_get_spawn(p, n, &s, &mask, &arena), -EBADMSG);
	assert_null(arena);
	p[3] = WIRE_SPAWN_READ_NARROW | WIRE_SPAWN_READ_SYSTEM;
	assert_int_equal(wire_get_spawn(p, n, &s, &mask, &arena), 0);
	assert_int_equal(s.flags, CONFINE_READ_SYSTEM);
	assert_string_equal(s.readable[0], "/r");
	free(arena);
}

static void
reserved_bits_and_enums_out_of_range_are_refused(void **state)
{
	static const uint8_t good[] = { STR(3), '/', 'x', 0, STR(1), 0, STR(1), 0,
		STR(1), 0, STR(1), STR(2), 'x', 0, STR(0), STR(0),
		STR(0) };
	struct confine_result r = { .outcome = CONFINE_COMPLETED }, d;
	struct wire_buf b = { 0 };
	uint8_t p[256], *q;
	uint32_t len;
	struct confine_spec s;
	unsigned mask;
	void *arena;
	size_t n;

	(void)state;
	n = raw_spawn(p, good, sizeof(good));
	p[1] = 8;  /* stdio mask has three bits */
	assert_int_equal(wire_get_spawn(p, n, &s, &mask, &arena), -EBADMSG);
	p[1] = 0;
	p[2] = 2; /* no such spawn flag (512) */
	assert_int_equal(wire_get_spawn(p, n, &s, &mask, &arena), -EBADMSG);
	p[2] = 0;
	p[3] = 6;  /* no tmp, TMPDIR: both known */
	assert_int_equal(wire_get_spawn(p, n, &s, &mask, &arena), 0);
	assert_int_equal(s.flags, CONFINE_NO_TMP | CONFINE_SET_TMPDIR);
	free(arena);
	p[3] = 64 | 128; /* the two requirements: known */
	assert_int_equal(wire_get_spawn(p, n, &s, &mask, &arena), 0);
	assert_int_equal(s.flags,
	    CONFINE_REQUIRE_NAMESPACES | CONFINE_REQUIRE_LANDLOCK);
	free(arena);
	p[3] = 0;
	p[2] = 1; /* the waiver (256): known */
	assert_int_equal(wire_get_spawn(p, n, &s, &mask, &arena), 0);
	assert_int_equal(s.flags, CONFINE_WAIVE_METADATA);
	free(arena);
	p[2] = 0;

	assert_int_equal(wire_put_settled(&b, 1, &r), 0);
	q = b.p + WIRE_HDR_LEN;
	len = WIRE_SETTLED_LEN;
	q[0] = 9;  /* no such outcome */
	assert_int_equal(wire_get_settled(q, len, &d), -EBADMSG);
	q[0] = CONFINE_COMPLETED;
	q[1] = 77; /* no such reason */
	assert_int_equal(wire_get_settled(q, len, &d), -EBADMSG);
	q[1] = CONFINE_REASON_NONE;
	q[5] = 4;  /* kept: only the root's and the tmp's bits */
	assert_int_equal(wire_get_settled(q, len, &d), -EBADMSG);
	q[5] = 0;
	/* Every step there is, the last one too, as the other decoder. */
	q[2] = CONFINE_STEP_IDENTITY;
	assert_int_equal(wire_get_settled(q, len, &d), 0);
	assert_int_equal(d.step, CONFINE_STEP_IDENTITY);
	q[2] = WIRE_STEP_LAST + 1;
	assert_int_equal(wire_get_settled(q, len, &d), -EBADMSG);
	wire_buf_free(&b);
}

static void
hello_checks_magic_and_versions(void **state)
{
	struct wire_hello h = { .version_min = 1, .version_max = 1 }, d;
	struct wire_buf b = { 0 };
	uint8_t *p;

	(void)state;
	assert_int_equal(wire_put_hello(&b, &h, 0), 0);
	p = b.p + WIRE_HDR_LEN;
	p[0] ^= 1;
	assert_int_equal(wire_get_hello(p, WIRE_HELLO_LEN, &d, 0), -EBADMSG);
	p[0] ^= 1;
	p[5] = 2;  /* min 2 > max 1 */
	assert_int_equal(wire_get_hello(p, WIRE_HELLO_LEN, &d, 0), -EBADMSG);
	wire_buf_free(&b);
}

static void
oversized_spawn_is_refused_by_the_encoder(void **state)
{
	static char big[WIRE_MAX_PAYLOAD];
	const char *argv[] = { big, NULL };
	struct wire_buf b = { 0 };
	struct confine_spec s;

	(void)state;
	sample_spec(&s);
	memset(big, 'a', sizeof(big) - 1);
	s.argv = argv;
	assert_int_equal(wire_put_spawn(&b, 1, &s), -EMSGSIZE);
	wire_buf_free(&b);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(spawn_round_trips),
		cmocka_unit_test(settled_round_trips),
		cmocka_unit_test(small_messages_round_trip),
		cmocka_unit_test(hello_bytes),
		cmocka_unit_test(spawn_bytes),
		cmocka_unit_test(narrowing_is_said_outright),
		cmocka_unit_test(started_bytes),
		cmocka_unit_test(settled_bytes),
		cmocka_unit_test(error_bytes),
		cmocka_unit_test(empty_message_bytes),
		cmocka_unit_test(header_checks_length_and_fds_once),
		cmocka_unit_test(truncated_spawn_is_refused_at_every_length),
		cmocka_unit_test(trailing_bytes_are_refused),
		cmocka_unit_test(fill_0xff_is_refused_by_every_decoder),
		cmocka_unit_test(strings_must_end_in_their_only_nul),
		cmocka_unit_test(huge_counts_are_refused),
		cmocka_unit_test(reserved_bits_and_enums_out_of_range_are_refused),
		cmocka_unit_test(hello_checks_magic_and_versions),
		cmocka_unit_test(oversized_spawn_is_refused_by_the_encoder),
	};

	return cmocka_run_group_tests_name("wire", tests, NULL, NULL);
}
