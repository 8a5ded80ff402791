/*
 * Big-endian field encoding for the wire and the shepherd's records.
 * libbsd provides the BSD <sys/endian.h> on Linux; macOS has no such
 * header, so the same four functions are defined here for it.
 */
#ifndef CONFINE_ENDIAN_H
#define CONFINE_ENDIAN_H

#ifdef __APPLE__
#include <stdint.h>

static inline uint32_t
be32dec(const void *pp)
{
	const uint8_t *p = pp;

	return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) |
	    ((uint32_t)p[2] << 8) | p[3];
}

static inline void
be32enc(void *pp, uint32_t u)
{
	uint8_t *p = pp;

	p[0] = (uint8_t)(u >> 24);
	p[1] = (uint8_t)(u >> 16);
	p[2] = (uint8_t)(u >> 8);
	p[3] = (uint8_t)u;
}

static inline uint64_t
be64dec(const void *pp)
{
	const uint8_t *p = pp;

	return ((uint64_t)be32dec(p) << 32) | be32dec(p + 4);
}

static inline void
be64enc(void *pp, uint64_t u)
{
	uint8_t *p = pp;

	be32enc(p, (uint32_t)(u >> 32));
	be32enc(p + 4, (uint32_t)u);
}
#else
#include <sys/endian.h>
#endif

#endif
