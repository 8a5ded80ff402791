/*
 * libFuzzer entry for confine-run's pure parts (tools/cli.c): what a user
 * types on its command line and what it writes back. The first byte picks,
 * modulo 5; the rest, up to a NUL, is the argument:
 *
 *   0 cli_duration, 1 cli_size, 2 cli_count: each checked against a model
 *     of the grammar written apart from it (digits, then a unit), with
 *     128-bit arithmetic for the bounds: accepted exactly when the model
 *     accepts, with the model's value; refused with a reason otherwise.
 *   3 cli_json_string: its output must be a JSON string (no raw control
 *     byte, only known escapes) that decodes back to the input.
 *   4 a settlement made of the bytes, in-range or not: cli_exit_status
 *     stays a status, cli_summary stays within a buffer of the size the
 *     input picks, cli_json writes one line.
 *
 * The seeds in corpus/cli are such files: printf '\0250ms' >corpus/cli/...
 * A finding aborts (libFuzzer keeps the input); replay.c runs the seeds
 * under gcc and each sanitizer in the test suite.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/cli.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(c) do { if (!(c)) { \
	fprintf(stderr, "cli_fuzz: %s:%d: %s\n", __FILE__, __LINE__, #c); \
	abort(); } } while (0)

enum grammar { DURATION, SIZE, COUNT };

/*
 * What the manual says each takes: a whole number, its digits only, then a
 * unit (a duration must have one; a size may; a count has none). Returns 1
 * with *v when it is well formed and fits in int64_t, else 0.
 */
static int
model(enum grammar g, const char *s, int64_t *v)
{
	static const struct {
		const char *unit;
		int64_t scale;
	} units[] = {
		{ "ms", 1 }, { "s", 1000 }, { "m", 60000 }, { "h", 3600000 },
		{ "K", 1LL << 10 }, { "M", 1LL << 20 }, { "G", 1LL << 30 },
		{ "T", 1LL << 40 },
	};
	unsigned __int128 n = 0;
	int64_t scale = 0;
	const char *p;
	size_t i, first = g == DURATION ? 0 : 4, last = g == DURATION ? 4 : 8;

	for (p = s; *p >= '0' && *p <= '9'; p++)
		if ((n = n * 10 + (unsigned)(*p - '0')) > INT64_MAX)
			return 0;
	if (p == s)
		return 0;
	if (*p == '\0' && g != DURATION)
		scale = 1;
	else if (g != COUNT)
		for (i = first; i < last; i++)
			if (strcmp(p, units[i].unit) == 0)
				scale = units[i].scale;
	if (scale == 0 || (g != DURATION && n == 0) ||
	    n * (unsigned __int128)scale > INT64_MAX)
		return 0;
	*v = (int64_t)(n * (unsigned __int128)scale);
	return 1;
}

static void
parse(enum grammar g, const char *s)
{
	const char *why = "unset";
	int64_t got = -1, want = -1;
	int rc, ok = model(g, s, &want);

	if (g == DURATION)
		rc = cli_duration(s, &got, &why);
	else if (g == SIZE)
		rc = cli_size(s, &got, &why);
	else
		rc = cli_count(s, &got, &why);
	if (ok) {
		CHECK(rc == 0);
		CHECK(got == want);
		CHECK(why == NULL);
	} else {
		CHECK(rc == -EINVAL || rc == -ERANGE);
		CHECK(why != NULL && *why != '\0');
	}
}

static int
hex(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* cli_json_string's output for s, decoded as JSON, must be s again. */
static void
json_string(const char *s)
{
	size_t len = 0, i, n = 0;
	char *out = NULL, *back;
	FILE *f = open_memstream(&out, &len);

	CHECK(f != NULL);
	cli_json_string(f, s);
	CHECK(fclose(f) == 0);
	CHECK(len >= 2 && out[0] == '"' && out[len - 1] == '"');
	back = malloc(len);
	CHECK(back != NULL);
	for (i = 1; i < len - 1; i++) {
		unsigned char c = (unsigned char)out[i];

		CHECK(c >= 0x20 && c != 0x7f && c != '"');
		if (c != '\\') {
			back[n++] = (char)c;
			continue;
		}
		CHECK(++i < len - 1);
		switch (out[i]) {
		case '"':
		case '\\':
			back[n++] = out[i];
			break;
		case 'n':
			back[n++] = '\n';
			break;
		case 'r':
			back[n++] = '\r';
			break;
		case 't':
			back[n++] = '\t';
			break;
		case 'u':
			CHECK(i + 4 < len - 1 && out[i + 1] == '0' &&
			    out[i + 2] == '0' && hex(out[i + 3]) >= 0 &&
			    hex(out[i + 4]) >= 0);
			back[n++] = (char)(hex(out[i + 3]) << 4 | hex(out[i + 4]));
			i += 4;
			break;
		default:
			CHECK(!"an unknown escape");
		}
	}
	CHECK(n == strlen(s) && memcmp(back, s, n) == 0);
	free(back);
	free(out);
}

/* The next 4 bytes of the input as an int (0 past its end). */
static int
take(const uint8_t **p, const uint8_t *end)
{
	uint32_t v = 0;
	int i;

	for (i = 0; i < 4; i++)
		v = v << 8 | (*p < end ? *(*p)++ : 0);
	return (int)v;
}

static int64_t
take64(const uint8_t **p, const uint8_t *end)
{
	uint64_t hi = (uint32_t)take(p, end);

	return (int64_t)(hi << 32 | (uint32_t)take(p, end));
}

static void
settlement(const uint8_t *p, size_t n)
{
	const uint8_t *end = p + n;
	static const char *const trees[] = { "/a\"b", "/c", NULL };
	static const struct cli_reads reads = { 1, 1, trees };
	struct cli_context ctx = { .exe = "/bin/x", .cwd = "/s",
	    .deadline = "10s" };
	struct confine_result r;
	char buf[512], *out = NULL;
	size_t len = 0, room;
	FILE *f;
	int st;

	memset(&r, 0, sizeof(r));
	r.outcome = (enum confine_outcome)take(&p, end);
	r.reason = (enum confine_reason)take(&p, end);
	r.exit_code = take(&p, end);
	r.signal = take(&p, end);
	r.error = take(&p, end);
	r.step = (enum confine_step)take(&p, end);
	r.pid = take(&p, end);
	r.pgid = take(&p, end);
	r.backend = (enum confine_backend)take(&p, end);
	r.proof = (enum confine_proof)take(&p, end);
	r.scratch_kept = take(&p, end);
	r.tmp_kept = take(&p, end);
	r.wall_us = take64(&p, end);
	r.user_us = take64(&p, end);
	r.sys_us = take64(&p, end);
	r.max_rss_kib = take64(&p, end);
	ctx.unfound = take(&p, end) & 1;
	ctx.signal = take(&p, end) & 0x3f;
	room = 1 + (size_t)(take(&p, end) & 0x7fffffff) % sizeof(buf);

	st = cli_exit_status(&r);
	CHECK(st >= 0 && st <= 255);
	/* A canary past the room given: the summary must stop short of it. */
	memset(buf, 0x5a, sizeof(buf));
	ctx.reads = (room & 2) ? &reads : NULL;
	/* Words as a helper says them, one with a quote and no value. */
	ctx.enforced = (room & 4) ? "backend=landlock landlock=7 odd=\"q\" bare" :
	    NULL;
	cli_summary(buf, room, &r, &ctx, (int)(room & 1));
	CHECK(memchr(buf, '\0', room) != NULL);
	if (room < sizeof(buf))
		CHECK((unsigned char)buf[room] == 0x5a);
	f = open_memstream(&out, &len);
	CHECK(f != NULL);
	CHECK(cli_json(f, &r, (room & 2) ? &reads : NULL, ctx.enforced) == 0);
	CHECK(fclose(f) == 0);
	CHECK(len > 2 && out[0] == '{' && out[len - 2] == '}' &&
	    out[len - 1] == '\n' && memchr(out, '\n', len - 1) == NULL);
	free(out);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s;

	if (size < 1)
		return 0;
	if (data[0] % 5 == 4) {
		settlement(data + 1, size - 1);
		return 0;
	}
	s = malloc(size);
	if (s == NULL)
		return 0;
	memcpy(s, data + 1, size - 1);
	s[size - 1] = '\0';
	switch (data[0] % 5) {
	case 0:
		parse(DURATION, s);
		break;
	case 1:
		parse(SIZE, s);
		break;
	case 2:
		parse(COUNT, s);
		break;
	default:
		json_string(s);
		break;
	}
	free(s);
	return 0;
}
