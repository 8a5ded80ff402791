/*
 * Hostile bytes on a live helper's socket: each case is refused (an error
 * reply, or the connection closed) and afterwards the helper still serves
 * a well-behaved client. Unexpected descriptors are closed by the helper.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "src/core/fd.h"
#include "src/core/wire.h"
#include "tests/helperutil.h"
#include "tests/testutil.h"

static char *dir, *sock, *scratch;
static pid_t listener;
static struct confine *good;

static int
setup(void **state)
{
	(void)state;
	dir = tu_sockdir();
	sock = tu_join(dir, "h.sock");
	scratch = tu_mkdtemp("scratch");
	listener = hu_listen(sock, NULL);
	return hu_open(&good, CONFINE_MODE_CONNECT, sock);
}

static int
teardown(void **state)
{
	(void)state;
	confine_close(good);
	hu_stop(listener);
	tu_rmsock(dir, sock);
	free(scratch);
	return 0;
}

/* After every case: the helper is alive and serves. */
static void
still_serving(void)
{
	struct hu_job j;

	assert_int_equal(kill(listener, 0), 0);
	hu_init(&j, scratch, "exit", "0", NULL);
	assert_int_equal(hu_run(good, &j), 0);
	assert_int_equal(j.r.outcome, CONFINE_COMPLETED);
	hu_free(&j);
}

static int
raw(void)
{
	return hu_raw_connect(sock);
}

static void
send_fds(int fd, const void *p, size_t n, const int *fds, size_t nfds)
{
	assert_int_equal(fd_send_with(fd, p, n, fds, nfds), (ssize_t)n);
}

static void
send_bytes(int fd, const void *p, size_t n)
{
	send_fds(fd, p, n, NULL, 0);
}

static void
send_hello(int fd, uint16_t vmin, uint16_t vmax)
{
	struct wire_hello h = { .version_min = vmin, .version_max = vmax };
	struct wire_buf b = { 0 };

	assert_int_equal(wire_put_hello(&b, &h, 0), 0);
	send_bytes(fd, b.p, b.len);
	wire_buf_free(&b);
}

/* Reads one frame (or EOF: returns -1) within five seconds. */
static int
read_frame(int fd, struct wire_hdr *h, uint8_t *payload, size_t cap)
{
	struct pollfd pfd = { fd, POLLIN, 0 };
	uint8_t hdr[WIRE_HDR_LEN];
	size_t got = 0;
	ssize_t n;

	while (got < WIRE_HDR_LEN) {
		assert_true(poll(&pfd, 1, 5000) > 0);
		n = read(fd, hdr + got, WIRE_HDR_LEN - got);
		if (n <= 0)
			return -1;
		got += (size_t)n;
	}
	assert_int_equal(wire_hdr_decode(hdr, h), 0);
	assert_true(h->len <= cap);
	assert_int_equal(fd_read_full(fd, payload, h->len), 0);
	return 0;
}

/* The next frame is an ERROR with this errno; returns it for more checks. */
static void
expect_error(int fd, int err)
{
	uint8_t p[4096];
	struct wire_error e;
	struct wire_hdr h;

	assert_int_equal(read_frame(fd, &h, p, sizeof(p)), 0);
	if (h.type == WIRE_HELLO)  /* the reply to our own hello first */
		assert_int_equal(read_frame(fd, &h, p, sizeof(p)), 0);
	assert_int_equal(h.type, WIRE_ERROR);
	assert_int_equal(wire_get_error(p, h.len, &e), 0);
	assert_int_equal(e.err, err);
}

static void
expect_closed(int fd)
{
	struct pollfd pfd = { fd, POLLIN, 0 };
	char c;

	assert_true(poll(&pfd, 1, 5000) > 0);
	assert_int_equal(read(fd, &c, 1), 0);
}

static void
header(uint8_t *b, uint32_t len, uint16_t type, uint16_t nfds, uint32_t id)
{
	struct wire_hdr h = { len, type, nfds, id };

	wire_hdr_encode(b, &h);
}

/* A second hello is a host that lost its place: its connection ends. */
static void
a_second_hello_is_fatal(void **state)
{
	int fd = raw();

	(void)state;
	send_hello(fd, WIRE_VERSION, WIRE_VERSION);
	send_hello(fd, WIRE_VERSION, WIRE_VERSION);
	expect_error(fd, EPROTO);
	expect_closed(fd);
	close(fd);
	still_serving();
}

/* What only a helper sends, from a host: refused, the connection kept. */
static void
a_helpers_message_from_a_host_is_refused(void **state)
{
	struct wire_buf b = { 0 };
	struct wire_hdr h;
	uint8_t p[256];
	int fd = raw();

	(void)state;
	send_hello(fd, WIRE_VERSION, WIRE_VERSION);
	assert_int_equal(wire_put_started(&b, 3, 1, 1, "/x", "", ""), 0);
	send_bytes(fd, b.p, b.len);
	wire_buf_free(&b);
	expect_error(fd, EPROTO);
	/* Still served on this connection: its shutdown is acknowledged. */
	assert_int_equal(wire_put_empty(&b, WIRE_SHUTDOWN, 0), 0);
	send_bytes(fd, b.p, b.len);
	wire_buf_free(&b);
	assert_int_equal(read_frame(fd, &h, p, sizeof(p)), 0);
	assert_int_equal(h.type, WIRE_SHUTDOWN);
	close(fd);
	still_serving();
}

static void
truncated_frame_then_disconnect(void **state)
{
	uint8_t b[WIRE_HDR_LEN + 8];
	int fd = raw();

	(void)state;
	send_hello(fd, WIRE_VERSION, WIRE_VERSION);
	header(b, 200, WIRE_SPAWN, 0, 1);
	memset(b + WIRE_HDR_LEN, 0, 8);
	send_bytes(fd, b, sizeof(b));
	close(fd);
	still_serving();
}

static void
oversized_length_is_refused_and_closed(void **state)
{
	uint8_t b[WIRE_HDR_LEN];
	int fd = raw();

	(void)state;
	header(b, WIRE_MAX_PAYLOAD + 1, WIRE_SPAWN, 0, 1);
	send_bytes(fd, b, sizeof(b));
	expect_error(fd, EMSGSIZE);
	expect_closed(fd);
	close(fd);
	still_serving();
}

static void
fill_0xff_is_refused_and_closed(void **state)
{
	uint8_t b[4096];
	int fd = raw();

	(void)state;
	memset(b, 0xff, sizeof(b));
	send_bytes(fd, b, sizeof(b));
	expect_error(fd, EMSGSIZE);
	expect_closed(fd);
	close(fd);
	still_serving();
}

static void
wrong_version_is_refused_and_closed(void **state)
{
	int fd = raw();

	(void)state;
	send_hello(fd, 7, 9);
	expect_error(fd, EPROTONOSUPPORT);
	expect_closed(fd);
	close(fd);
	still_serving();
}

static void
bad_magic_is_refused_and_closed(void **state)
{
	uint8_t b[WIRE_HDR_LEN + WIRE_HELLO_LEN] = { 0 };
	int fd = raw();

	(void)state;
	header(b, WIRE_HELLO_LEN, WIRE_HELLO, 0, 0);
	memcpy(b + WIRE_HDR_LEN, "EVIL\0\1\0\1", WIRE_HELLO_LEN);
	send_bytes(fd, b, sizeof(b));
	expect_error(fd, EBADMSG);
	expect_closed(fd);
	close(fd);
	still_serving();
}

static void
requests_before_hello_are_refused_and_closed(void **state)
{
	uint8_t b[WIRE_HDR_LEN];
	int fd = raw();

	(void)state;
	header(b, 0, WIRE_CANCEL, 0, 5);
	send_bytes(fd, b, sizeof(b));
	expect_error(fd, EPROTO);
	expect_closed(fd);
	close(fd);
	still_serving();
}

/* The framing is intact: refused, and the connection goes on. */
static void
unknown_type_and_wrong_sizes_are_refused_but_not_fatal(void **state)
{
	uint8_t b[WIRE_HDR_LEN + 4] = { 0 };
	int fd = raw();

	(void)state;
	send_hello(fd, WIRE_VERSION, WIRE_VERSION);
	header(b, 0, 200, 0, 1);
	send_bytes(fd, b, WIRE_HDR_LEN);
	expect_error(fd, ENOSYS);
	header(b, 4, WIRE_CANCEL, 0, 1);
	send_bytes(fd, b, WIRE_HDR_LEN + 4);
	expect_error(fd, EBADMSG);
	/* Not a request at all: refused as such, whatever its size. */
	header(b, 0, WIRE_SETTLED, 0, 1);
	send_bytes(fd, b, WIRE_HDR_LEN);
	expect_error(fd, EPROTO);
	/* Only now is the connection at an end: a second hello. */
	send_hello(fd, WIRE_VERSION, WIRE_VERSION);
	expect_error(fd, EPROTO);
	expect_closed(fd);
	close(fd);
	still_serving();
}

/*
 * A well-formed spawn but for one byte: exe sent without its NUL. The
 * rest of the frame is sound (the same frame with the NUL starts a job),
 * and the next byte on the wire is 0 (a length's high byte), so a decoder
 * that skipped the check would read "…/fixture" and run it: only the
 * terminator check refuses this.
 */
static void
string_without_terminator_is_refused(void **state)
{
	const char *argv[] = { "fixture", "exit", "0", NULL };
	struct wire_buf b = { 0 };
	size_t at = WIRE_HDR_LEN + WIRE_SPAWN_FIXED, n = strlen(hu_fixture) + 1;
	uint8_t p[4096];
	struct wire_hdr h;
	struct confine_spec s;
	int fd = raw();

	(void)state;
	hu_spec(&s, argv, scratch);
	send_hello(fd, WIRE_VERSION, WIRE_VERSION);
	assert_int_equal(wire_put_spawn(&b, 8, &s), 0);
	send_bytes(fd, b.p, b.len);
	assert_int_equal(read_frame(fd, &h, p, sizeof(p)), 0);
	assert_int_equal(h.type, WIRE_HELLO);
	assert_int_equal(read_frame(fd, &h, p, sizeof(p)), 0);
	assert_int_equal(h.type, WIRE_STARTED);
	assert_int_equal(h.id, 8);
	assert_int_equal(read_frame(fd, &h, p, sizeof(p)), 0);
	assert_int_equal(h.type, WIRE_SETTLED);

	/* Now the same request, id 9, with exe's NUL taken out. */
	wire_buf_free(&b);
	assert_int_equal(wire_put_spawn(&b, 9, &s), 0);
	/* exe's length (NUL counted), its NUL, then scratch's length. */
	assert_true(n < 256);
	assert_int_equal(b.p[at] | b.p[at + 1] | b.p[at + 2], 0);
	assert_int_equal(b.p[at + 3], n);
	assert_int_equal(b.p[at + 4 + n - 1], 0);
	assert_int_equal(b.p[at + 4 + n], 0);
	b.p[at + 3] = (uint8_t)(n - 1);
	memmove(b.p + at + 4 + n - 1, b.p + at + 4 + n, b.len - (at + 4 + n));
	b.len--;
	assert_int_equal(wire_hdr_decode(b.p, &h), 0);
	h.len--;
	wire_hdr_encode(b.p, &h);
	send_bytes(fd, b.p, b.len);
	expect_error(fd, EBADMSG);
	wire_buf_free(&b);
	close(fd);
	still_serving();
}

/* A pipe's write end sent where none belongs: the helper must close it. */
static void
expect_pipe_closed_by_helper(int rd)
{
	struct pollfd pfd = { rd, POLLIN, 0 };
	char c;

	assert_true(poll(&pfd, 1, 5000) > 0);
	assert_int_equal(read(rd, &c, 1), 0);
	close(rd);
}

static void
too_many_descriptors_are_refused_and_closed(void **state)
{
	uint8_t b[WIRE_HDR_LEN];
	int p[2], fds[10], fd, i;

	(void)state;
	/* Four declared: over the cap of three. */
	fd = raw();
	send_hello(fd, WIRE_VERSION, WIRE_VERSION);
	assert_int_equal(fd_pipe(p), 0);
	for (i = 0; i < 4; i++)
		fds[i] = p[1];
	header(b, 0, WIRE_SPAWN, 4, 1);
	send_fds(fd, b, sizeof(b), fds, 4);
	close(p[1]);
	expect_error(fd, EBADMSG);
	expect_closed(fd);
	close(fd);
	expect_pipe_closed_by_helper(p[0]);

	/* Ten attached: more than the helper will even receive. */
	fd = raw();
	send_hello(fd, WIRE_VERSION, WIRE_VERSION);
	assert_int_equal(fd_pipe(p), 0);
	for (i = 0; i < 10; i++)
		fds[i] = p[1];
	header(b, 0, WIRE_CANCEL, 0, 1);
	send_fds(fd, b, sizeof(b), fds, 10);
	close(p[1]);
	expect_error(fd, EBADMSG);
	close(fd);
	expect_pipe_closed_by_helper(p[0]);
	still_serving();
}

static void
descriptors_nobody_asked_for_are_closed(void **state)
{
	uint8_t b[WIRE_HDR_LEN];
	int p[2], fd = raw();

	(void)state;
	send_hello(fd, WIRE_VERSION, WIRE_VERSION);
	assert_int_equal(fd_pipe(p), 0);
	header(b, 0, WIRE_CANCEL, 0, 77);
	send_fds(fd, b, sizeof(b), &p[1], 1);
	close(p[1]);
	expect_error(fd, EBADMSG);
	expect_pipe_closed_by_helper(p[0]);
	close(fd);
	still_serving();
}

/* Garbage from many connections at once, then a good client. */
static void
many_garbage_connections(void **state)
{
	uint8_t b[512];
	int fds[40], i, k;

	(void)state;
	srand(1);
	for (i = 0; i < 40; i++) {
		fds[i] = raw();
		for (k = 0; k < (int)sizeof(b); k++)
			b[k] = (uint8_t)rand();
		if (i % 2)
			send_hello(fds[i], WIRE_VERSION, WIRE_VERSION);
		send_bytes(fds[i], b, (size_t)(rand() % (int)sizeof(b)) + 1);
	}
	for (i = 0; i < 40; i++)
		close(fds[i]);
	still_serving();
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(truncated_frame_then_disconnect),
		cmocka_unit_test(oversized_length_is_refused_and_closed),
		cmocka_unit_test(fill_0xff_is_refused_and_closed),
		cmocka_unit_test(wrong_version_is_refused_and_closed),
		cmocka_unit_test(bad_magic_is_refused_and_closed),
		cmocka_unit_test(requests_before_hello_are_refused_and_closed),
		cmocka_unit_test(a_second_hello_is_fatal),
		cmocka_unit_test(a_helpers_message_from_a_host_is_refused),
		cmocka_unit_test(unknown_type_and_wrong_sizes_are_refused_but_not_fatal),
		cmocka_unit_test(string_without_terminator_is_refused),
		cmocka_unit_test(too_many_descriptors_are_refused_and_closed),
		cmocka_unit_test(descriptors_nobody_asked_for_are_closed),
		cmocka_unit_test(many_garbage_connections),
	};

	hu_setup();
	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests_name("hostile", tests, setup, teardown);
}
