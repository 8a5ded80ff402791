/*
 * Writes the seed corpus: one valid input of each kind, in the form
 * wire_fuzz.c expects (a selector byte, then the bytes). Run by
 * tools/fuzz --seed; the output is kept in tests/fuzz/corpus.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/core/wire.h"

static const char *dir;

static void
save(const char *name, int selector, const uint8_t *p, size_t n)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "wb");
	if (f == NULL || fputc(selector, f) == EOF ||
	    fwrite(p, 1, n, f) != n || fclose(f) != 0) {
		perror(path);
		exit(1);
	}
}

/* A frame's payload: what follows its header. */
static void
save_payload(const char *name, int selector, const struct wire_buf *b)
{
	save(name, selector, b->p + WIRE_HDR_LEN, b->len - WIRE_HDR_LEN);
}

int
main(int argc, char **argv)
{
	static const char *const args[] = { "cc", "-c", "x.c", NULL };
	static const char *const env[] = { "PATH=/bin", NULL };
	static const char *const devs[] = { "/dev/zero", NULL };
	static const char *const reads[] = { "/usr/src", "/etc/passwd", NULL };
	struct wire_hello hi = { WIRE_VERSION, WIRE_VERSION, WIRE_VERSION, 42 };
	struct confine_result r;
	struct wire_buf b = { 0 }, all = { 0 };
	struct confine_spec s;

	if (argc != 2)
		return 2;
	dir = argv[1];
	memset(&s, 0, sizeof(s));
	s.exe = "/usr/bin/cc";
	s.argv = args;
	s.envp = env;
	s.devices = devs;
	s.scratch = "/tmp/s\"cr)atch";
	s.cwd = "/tmp";
	s.deadline_ms = 1000;
	s.limits.open_files = 64;
	s.flags |= CONFINE_FRESH_SCRATCH;
	s.readable = reads;
	s.flags |= CONFINE_READ_SYSTEM;
	s.stdin_fd = s.stderr_fd = 0;   /* two descriptors ride with it */
	s.stdout_fd = -1;
	wire_put_hello(&b, &hi, 0);
	save("hdr", 0, b.p, WIRE_HDR_LEN);
	save_payload("hello", 1, &b);
	wire_buf_free(&b);
	wire_put_hello(&b, &hi, 1);
	save_payload("hello-reply", 2, &b);
	wire_buf_free(&b);
	wire_put_spawn(&b, 9, &s);
	save_payload("spawn", 3, &b);
	wire_buf_free(&b);
	wire_put_started(&b, 9, 100, 99, "/tmp/scratch/confine.abc",
	    "/tmp/confine-tmp.abc", "backend=landlock landlock=7 uid=0 gid=0");
	save_payload("started", 4, &b);
	wire_buf_free(&b);
	memset(&r, 0, sizeof(r));
	r.outcome = CONFINE_FAILED;
	r.reason = CONFINE_REASON_EXEC;
	r.step = CONFINE_STEP_CWD;
	r.error = 2;
	r.exit_code = -1;
	wire_put_settled(&b, 9, &r);
	save_payload("settled", 5, &b);
	wire_buf_free(&b);
	wire_put_error(&b, 9, 95, "the confinement could not be applied");
	save_payload("error", 6, &b);
	wire_buf_free(&b);
	/* A whole conversation, as one stream. */
	wire_put_hello(&all, &hi, 0);
	s.stdin_fd = s.stderr_fd = -1;
	wire_put_spawn(&all, 1, &s);
	wire_put_empty(&all, WIRE_CANCEL, 1);
	wire_put_started(&all, 1, 100, 99, "", "", "");
	wire_put_settled(&all, 1, &r);
	wire_put_error(&all, 2, 22, "bad");
	wire_put_empty(&all, WIRE_SHUTDOWN, 0);
	save("stream", 7, all.p, all.len);
	wire_buf_free(&all);
	return 0;
}
