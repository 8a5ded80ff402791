/*
 * The one framer: the reading side of a connection, for the client and
 * the helper alike. Bytes are read into a buffer and descriptors, where a
 * side takes them, into a queue; whole frames are then taken out one at a
 * time, each header decoded and checked once (wire_hdr_decode).
 */
#ifndef CONFINE_FRAME_H
#define CONFINE_FRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "src/core/wire.h"

#define FRAME_CHUNK 65536          /* the buffer grows by this much */
#define FRAME_MAX_FDS (2 * WIRE_MAX_FDS) /* descriptors queued at most */

struct frame_in {
	uint8_t *buf;
	size_t off, len, cap;          /* [off, len) is not yet taken */
	int fdq[FRAME_MAX_FDS];
	size_t nfdq;
	bool fds_lost;                 /* a read said MSG_CTRUNC */
};

/*
 * One read: recvmsg with flags. With take_fds the descriptors that come
 * are queued (too many, or none to be had, sets fds_lost); without, any
 * that come are closed. Returns the bytes read, 0 for nothing yet
 * (EAGAIN), -ECONNRESET at end of file or a failed read, -ENOMEM when the
 * buffer cannot grow, -EMSGSIZE when it may grow no more (a frame over the
 * maximum is refused by its header before that). A buffer that cannot grow
 * is the end of the connection, never "nothing yet": that would have the
 * reader poll a readable socket for ever.
 */
ssize_t frame_read(struct frame_in *in, int fd, int flags, bool take_fds);

/*
 * The next whole frame: 1, with *h and *payload (valid until the next
 * frame_read); 0 when none is whole yet; or the header's error (-EMSGSIZE,
 * -EBADMSG), with *h as decoded, after which the connection cannot be
 * framed any more.
 */
int frame_next(struct frame_in *in, struct wire_hdr *h,
    const uint8_t **payload);

/* Moves n queued descriptors to fds; false, moving none, if fewer wait. */
bool frame_take_fds(struct frame_in *in, int *fds, size_t n);

/* Closes every queued descriptor and forgets fds_lost. */
void frame_drop_fds(struct frame_in *in);

/* Bytes read but not yet taken as frames. */
static inline size_t
frame_pending(const struct frame_in *in)
{
	return in->len - in->off;
}

/* What was read and not taken is dropped: a new peer starts afresh. */
void frame_discard(struct frame_in *in);

/* Everything freed and closed; in is empty and usable again. */
void frame_in_free(struct frame_in *in);

#endif
