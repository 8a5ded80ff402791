/*
 * libFuzzer entry for every decoder of the wire protocol and for the spec
 * and policy checks. The first byte picks the decoder; the rest is the
 * input. A decoded spawn goes on through spec_check and, when it passes,
 * the Seatbelt argument builder, as the helper would take it.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "helper/backend/policy.h"
#include "src/core/spec.h"
#include "src/core/wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
spawn(const uint8_t *p, size_t n)
{
	struct policy pol = { 0 };
	const char *why;
	struct confine_spec s;
	unsigned mask;
	void *arena;
	char **argv;

	if (wire_get_spawn(p, n, &s, &mask, &arena) != 0)
		return;
	if (spec_check(&s, &why) == 0 && s.scratch != NULL) {
		pol.scratch = s.scratch;
		pol.devices = s.devices;
		pol.ndevices = spec_count(s.devices);
		pol.read_narrow = spec_narrow(&s);
		pol.read_system = (s.flags & CONFINE_READ_SYSTEM) != 0;
		pol.readable = s.readable;
		pol.nreadable = spec_count(s.readable);
		if (policy_sbpl_argv(&pol, "/usr/bin/sandbox-exec", s.exe, s.argv,
		    spec_count(s.argv), &argv) == 0)
			free(argv);
	}
	free(arena);
}

/* One payload: 1 hello, 2 hello reply, 3 spawn, 4 started, 5 settled, 6 error. */
static void
decode(int kind, const uint8_t *p, size_t n)
{
	struct confine_result r;
	struct wire_hello hi;
	struct wire_error e;
	const char *root, *tmp, *enforced;
	pid_t a, b;

	switch (kind) {
	case 1:
	case 2:
		(void)wire_get_hello(p, n, &hi, kind == 2);
		break;
	case 3:
		spawn(p, n);
		break;
	case 4:
		(void)wire_get_started(p, n, &a, &b, &root, &tmp, &enforced);
		break;
	case 5:
		(void)wire_get_settled(p, n, &r);
		break;
	case 6:
		(void)wire_get_error(p, n, &e);
		break;
	default:
		break;
	}
}

/* A stream of frames, as a peer would send them: header, then payload. */
static void
stream(const uint8_t *p, size_t n)
{
	static const int kinds[] = {
		[WIRE_HELLO] = 1, [WIRE_SPAWN] = 3, [WIRE_STARTED] = 4,
		[WIRE_SETTLED] = 5, [WIRE_ERROR] = 6,
	};
	struct wire_hdr h;
	int kind;

	while (n >= WIRE_HDR_LEN) {
		if (wire_hdr_decode(p, &h) != 0 || n - WIRE_HDR_LEN < h.len)
			return;
		p += WIRE_HDR_LEN;
		n -= WIRE_HDR_LEN;
		kind = h.type < sizeof(kinds) / sizeof(kinds[0]) ? kinds[h.type] : 0;
		/* A hello's direction cannot be told from it: let the id say. */
		decode(kind == 1 && (h.id & 1) ? 2 : kind, p, h.len);
		p += h.len;
		n -= h.len;
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct wire_hdr h;

	if (size < 1)
		return 0;
	switch (data[0] % 8) {
	case 0:
		if (size > WIRE_HDR_LEN)
			(void)wire_hdr_decode(data + 1, &h);
		break;
	case 7:
		stream(data + 1, size - 1);
		break;
	default:
		decode(data[0] % 8, data + 1, size - 1);
		break;
	}
	return 0;
}
