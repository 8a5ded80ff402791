/*
 * The wire protocol between a host and its helper (docs/protocol.md).
 * Pure encoding and decoding on buffers; no I/O. Every field is encoded
 * explicitly, big-endian; no struct is ever copied onto the wire.
 *
 * Frame: a 12-byte header then exactly len payload bytes.
 *   u32 len     payload bytes, <= WIRE_MAX_PAYLOAD
 *   u16 type    enum wire_type
 *   u16 nfds    descriptors sent with the frame (SCM_RIGHTS), <= WIRE_MAX_FDS
 *   u32 id      the job, chosen by the host; 0 for the connection
 * Strings: u32 n (>= 1, including the NUL), n bytes, the last one NUL and
 * no other.
 */
#ifndef CONFINE_WIRE_H
#define CONFINE_WIRE_H

#include <stddef.h>
#include <stdint.h>

#include "confine/confine.h"
#include "src/core/spec.h"

#define WIRE_HDR_LEN 12
#define WIRE_MAX_PAYLOAD (1u << 20)
#define WIRE_MAX_FDS 3
#define WIRE_MAGIC 0x434e464eu /* "CNFN" */
#define WIRE_VERSION 5

enum wire_type {
	WIRE_HELLO = 1,    /* both ways, first */
	WIRE_SPAWN = 2,    /* host -> helper */
	WIRE_STARTED = 3,  /* helper -> host */
	WIRE_SETTLED = 4,  /* helper -> host */
	WIRE_CANCEL = 5,   /* host -> helper */
	WIRE_ERROR = 6,    /* helper -> host: a request was refused */
	WIRE_SHUTDOWN = 7, /* host -> helper, and its acknowledgement */
};

#define WIRE_HELLO_LEN 8        /* request: magic, version min, version max */
#define WIRE_HELLO_REPLY_LEN 16 /* magic, version, 0, pid, 0 */
#define WIRE_SETTLED_LEN 60
#define WIRE_SPAWN_FIXED 72     /* before the strings */
#define WIRE_SPAWN_FRESH 1u     /* spawn flags: a fresh scratch root */
#define WIRE_SPAWN_NO_TMP 2u    /* no private temporary directory */
#define WIRE_SPAWN_SET_TMPDIR 4u /* TMPDIR added to the environment */
#define WIRE_SPAWN_SET_HOME 8u  /* HOME added to the environment */
#define WIRE_SPAWN_READ_NARROW 16u /* reads only where the policy says */
#define WIRE_SPAWN_READ_SYSTEM 32u /* and the platform's system trees */
#define WIRE_SPAWN_REQUIRE_NS 64u  /* refused without namespaces of its own */
#define WIRE_SPAWN_REQUIRE_LL 128u /* refused without Landlock in force */
#define WIRE_SPAWN_WAIVE_META 256u /* run without a view where none can be */

struct wire_hdr {
	uint32_t len;
	uint16_t type;
	uint16_t nfds;
	uint32_t id;
};

struct wire_hello {
	uint16_t version_min, version_max;   /* request */
	uint16_t version;                    /* reply */
	uint32_t pid;                        /* reply: the helper's pid */
};

/*
 * A refusal. Where a layer of the job's confinement could not be applied,
 * which one, the call that failed and its own errno, and what the user
 * can do; else "" and 0.
 */
struct wire_error {
	int err;                   /* positive errno */
	const char *message;       /* borrowed from the payload */
	const char *layer;         /* "mount namespace", "landlock"... or "" */
	const char *call;          /* "unshare(CLONE_NEWNS)"... or "" */
	int call_err;              /* the call's errno, or 0 */
	const char *hint;          /* what to do, in words, or "" */
};

/*
 * An output buffer; err sticks within a frame, and a frame that fails (out
 * of memory, too long) is taken back whole: the buffer keeps the frames
 * before it and takes the next. A fixed buffer (WIRE_BUF_FIXED) never
 * allocates, so a child between fork and exec may write into one; a write
 * past its end sets err to -EMSGSIZE.
 */
struct wire_buf {
	uint8_t *p;
	size_t len, cap;
	int err;
	int fixed;
};

#define WIRE_BUF_FIXED(array) \
	{ .p = (array), .len = 0, .cap = sizeof(array), .err = 0, .fixed = 1 }

void wire_buf_free(struct wire_buf *b);

/*
 * The one codec: the fields every message is made of, for the host's
 * frames, the shepherd's records and the child's error record alike.
 * Big-endian; a string is u32 n (>= 1, with the NUL), then n bytes.
 */
void wire_put_u8(struct wire_buf *b, uint8_t v);
void wire_put_u16(struct wire_buf *b, uint16_t v);
void wire_put_u32(struct wire_buf *b, uint32_t v);
void wire_put_u64(struct wire_buf *b, uint64_t v);
void wire_put_str(struct wire_buf *b, const char *s); /* NULL: "" */

/* A bounds-checked reader over one message; err sticks at the first fault. */
struct wire_rd {
	const uint8_t *p;
	size_t len, off;
	int err;
};

#define WIRE_RD(p, len) { (p), (len), 0, 0 }

uint8_t wire_get_u8(struct wire_rd *r);
uint16_t wire_get_u16(struct wire_rd *r);
uint32_t wire_get_u32(struct wire_rd *r);
uint64_t wire_get_u64(struct wire_rd *r);
/* NUL at the end and nowhere else; NULL (and err) otherwise. */
const char *wire_get_str(struct wire_rd *r);
/*
 * The last step there is: every decoder of a step takes the same range,
 * CONFINE_STEP_NONE to this.
 */
#define WIRE_STEP_LAST CONFINE_STEP_IDENTITY

/* A step of enum confine_step; one it does not know reads as EXEC. */
enum confine_step wire_get_step(struct wire_rd *r);
/* 0 when all was read and nothing was left over, else -EBADMSG. */
int wire_get_end(struct wire_rd *r);

void wire_hdr_encode(uint8_t buf[WIRE_HDR_LEN], const struct wire_hdr *h);
/*
 * Decodes and checks a header once: -EMSGSIZE for a length over the
 * maximum, -EBADMSG for too many fds. An unknown type is not an error
 * here: the frame can still be skipped by its length.
 */
int wire_hdr_decode(const uint8_t buf[WIRE_HDR_LEN], struct wire_hdr *h);
int wire_type_known(uint16_t type);
/* The exact payload size of a fixed-size type, or -1 if it varies. */
long wire_fixed_len(uint16_t type, int from_helper);

/* Whole frames appended to b. Return 0 or -errno (b->err). */
int wire_put_hello(struct wire_buf *b, const struct wire_hello *h, int reply);
/* The stdio descriptors >= 0 travel with the frame, in order (mask bits 0-2). */
int wire_put_spawn(struct wire_buf *b, uint32_t id,
    const struct confine_spec *s);
unsigned wire_spawn_fdmask(const struct confine_spec *s);

/* How many descriptors a stdio mask says travel. */
static inline unsigned
wire_mask_nfds(unsigned mask)
{
	return (mask & 1) + (mask >> 1 & 1) + (mask >> 2 & 1);
}
int wire_put_started(struct wire_buf *b, uint32_t id, pid_t pid, pid_t pgid,
    const char *scratch, const char *tmp, const char *enforced);
int wire_put_settled(struct wire_buf *b, uint32_t id,
    const struct confine_result *r);
int wire_put_error(struct wire_buf *b, uint32_t id, int err,
    const char *message);
/* The same with what could not be applied (e's strings may be NULL). */
int wire_put_refusal(struct wire_buf *b, uint32_t id,
    const struct wire_error *e);
int wire_put_empty(struct wire_buf *b, uint16_t type, uint32_t id);

/* Payload decoders: 0, or -EBADMSG when the bytes are not exactly one. */
int wire_get_hello(const uint8_t *p, size_t len, struct wire_hello *h,
    int reply);
/* scratch and tmp point into p ("" for none). */
int wire_get_started(const uint8_t *p, size_t len, pid_t *pid, pid_t *pgid,
    const char **scratch, const char **tmp, const char **enforced);
int wire_get_settled(const uint8_t *p, size_t len, struct confine_result *r);
int wire_get_error(const uint8_t *p, size_t len, struct wire_error *e);

/*
 * A spawn payload into s. Strings point into p, which must outlive s;
 * the lists are allocated in *arena, freed with free(), each one given
 * (argv, envp, devices) even when empty; readable only when the reads are
 * narrowed. fdmask says which of stdin, stdout, stderr arrive as
 * descriptors (bits 0-2); the fd fields are left -1 for the caller to
 * fill. Returns 0 or -EBADMSG; semantic checks are spec_check's.
 */
int wire_get_spawn(const uint8_t *p, size_t len, struct confine_spec *s,
    unsigned *fdmask, void **arena);

#endif
