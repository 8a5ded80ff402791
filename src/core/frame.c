#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "src/core/fd.h"
#include "src/core/frame.h"

ssize_t
frame_read(struct frame_in *in, int fd, int flags, bool take_fds)
{
	int fds[FRAME_MAX_FDS], excess;
	size_t nfds, i;
	uint8_t *buf;
	ssize_t n;

	if (in->off > 0) {
		memmove(in->buf, in->buf + in->off, in->len - in->off);
		in->len -= in->off;
		in->off = 0;
	}
	if (in->cap - in->len < FRAME_CHUNK / 16) {
		if (in->cap >= WIRE_HDR_LEN + WIRE_MAX_PAYLOAD + FRAME_CHUNK)
			return -EMSGSIZE;
		if ((buf = realloc(in->buf, in->cap + FRAME_CHUNK)) == NULL)
			return -ENOMEM;
		in->buf = buf;
		in->cap += FRAME_CHUNK;
	}
	n = fd_recv_with(fd, in->buf + in->len, in->cap - in->len, flags, fds,
	    take_fds ? FRAME_MAX_FDS - in->nfdq : 0, &nfds, &excess);
	if (n == -EAGAIN || n == -EWOULDBLOCK)
		return 0;
	for (i = 0; i < nfds; i++)
		in->fdq[in->nfdq++] = fds[i];
	/*
	 * Descriptors lost in transit: too many were attached, or the reader
	 * has too many open (the kernel says MSG_CTRUNC for both). The framing
	 * is intact: the frame that wanted them is the one to refuse.
	 */
	if (excess && take_fds)
		in->fds_lost = true;
	if (n <= 0)
		return -ECONNRESET;
	in->len += (size_t)n;
	return n;
}

int
frame_next(struct frame_in *in, struct wire_hdr *h, const uint8_t **payload)
{
	int rc;

	if (in->len - in->off < WIRE_HDR_LEN)
		return 0;
	if ((rc = wire_hdr_decode(in->buf + in->off, h)) != 0)
		return rc;
	if (in->len - in->off - WIRE_HDR_LEN < h->len)
		return 0;
	*payload = in->buf + in->off + WIRE_HDR_LEN;
	in->off += WIRE_HDR_LEN + h->len;
	return 1;
}

bool
frame_take_fds(struct frame_in *in, int *fds, size_t n)
{
	if (n > in->nfdq)
		return false;
	memcpy(fds, in->fdq, n * sizeof(int));
	memmove(in->fdq, in->fdq + n, (in->nfdq - n) * sizeof(int));
	in->nfdq -= n;
	return true;
}

void
frame_drop_fds(struct frame_in *in)
{
	size_t i;

	for (i = 0; i < in->nfdq; i++)
		close(in->fdq[i]);
	in->nfdq = 0;
	in->fds_lost = false;
}

void
frame_discard(struct frame_in *in)
{
	frame_drop_fds(in);
	in->off = in->len = 0;
}

void
frame_in_free(struct frame_in *in)
{
	frame_drop_fds(in);
	free(in->buf);
	in->buf = NULL;
	in->off = in->len = in->cap = 0;
}
