/*
 * The client holds a helper to the protocol: a frame that cannot come now
 * (SETTLED before STARTED, STARTED twice, a refusal after STARTED, a
 * SHUTDOWN no one asked for, a second HELLO) ends the connection, and
 * every job in flight is Uncertain(helper lost), never what such a helper
 * says. The helper is a fake, scripted here, in a child process; each
 * script ends with a SETTLED(completed) that a client which believed it
 * would report.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "src/core/fd.h"
#include "src/core/wire.h"
#include "tests/helperutil.h"
#include "tests/testutil.h"

enum script { SETTLED_FIRST, STARTED_TWICE, ERROR_AFTER_STARTED,
	STRAY_SHUTDOWN, SECOND_HELLO };

static void
put(int fd, struct wire_buf *b)
{
	if (b->err != 0 || fd_write_full(fd, b->p, b->len) != 0)
		_exit(3);
	wire_buf_free(b);
}

/* One frame from the host; its descriptors closed. */
static int
take(int fd, struct wire_hdr *h)
{
	uint8_t hdr[WIRE_HDR_LEN], *p;
	int fds[WIRE_MAX_FDS], excess, rc;
	size_t nfds, i;
	ssize_t n;

	n = fd_recv_with(fd, hdr, sizeof(hdr), MSG_WAITALL, fds, WIRE_MAX_FDS,
	    &nfds, &excess);
	for (i = 0; n > 0 && i < nfds; i++)
		close(fds[i]);
	if (n != (ssize_t)sizeof(hdr) || wire_hdr_decode(hdr, h) != 0)
		return -1;
	if ((p = malloc(h->len + 1)) == NULL)
		return -1;
	rc = fd_read_full(fd, p, h->len);
	free(p);
	return rc;
}

/* The fake helper: the handshake, then the script once a spawn comes. */
static _Noreturn void
fake(int lfd, enum script sc)
{
	struct wire_hello hi = { .version = WIRE_VERSION, .pid = 1 };
	struct confine_result done = { .outcome = CONFINE_COMPLETED,
		.backend = CONFINE_BACKEND_LANDLOCK, .proof = CONFINE_PROOF_CGROUP,
		.pid = 2, .pgid = 1 };
	struct wire_buf b = { 0 };
	struct wire_hdr h;
	int fd = accept(lfd, NULL, NULL);

	if (fd < 0 || take(fd, &h) != 0 || h.type != WIRE_HELLO)
		_exit(2);
	wire_put_hello(&b, &hi, 1);
	put(fd, &b);
	if (take(fd, &h) != 0 || h.type != WIRE_SPAWN)
		_exit(2);
	switch (sc) {
	case SETTLED_FIRST:
		break;
	case STARTED_TWICE:
		wire_put_started(&b, h.id, 2, 1, "/s", "", "backend=none");
		wire_put_started(&b, h.id, 2, 1, "/s", "", "backend=none");
		break;
	case ERROR_AFTER_STARTED:
		wire_put_started(&b, h.id, 2, 1, "/s", "", "backend=none");
		wire_put_error(&b, h.id, EPERM, "too late");
		break;
	case STRAY_SHUTDOWN:
		wire_put_empty(&b, WIRE_SHUTDOWN, 0);
		wire_put_started(&b, h.id, 2, 1, "/s", "", "backend=none");
		break;
	case SECOND_HELLO:
		wire_put_hello(&b, &hi, 1);
		wire_put_started(&b, h.id, 2, 1, "/s", "", "backend=none");
		break;
	}
	wire_put_settled(&b, h.id, &done);
	put(fd, &b);
	/* Until the host is gone: it is the one to decide. */
	while (take(fd, &h) == 0)
		;
	_exit(0);
}

static void
run_script(enum script sc)
{
	char *dir = tu_sockdir(), *path = tu_join(dir, "fake.sock");
	char *scratch = tu_mkdtemp("scratch");
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	struct confine *c;
	struct hu_job j;
	int lfd, status, rc;
	pid_t pid;

	strcpy(sun.sun_path, path);
	lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(lfd >= 0);
	assert_int_equal(bind(lfd, (struct sockaddr *)&sun, sizeof(sun)), 0);
	assert_int_equal(listen(lfd, 1), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		fake(lfd, sc);
	close(lfd);
	assert_int_equal(hu_open(&c, CONFINE_MODE_CONNECT, path), 0);
	hu_init(&j, scratch, "exit", "0", NULL);
	rc = hu_spawn(c, &j);
	/* Lost before it started, or after: never believed either way. */
	if (rc == 0) {
		assert_int_equal(confine_wait(j.job, 10000, &j.r), 0);
		assert_int_equal(j.r.outcome, CONFINE_UNCERTAIN);
		assert_int_equal(j.r.reason, CONFINE_REASON_HELPER_LOST);
	} else {
		assert_int_equal(rc, -ECONNRESET);
	}
	hu_free(&j);
	assert_int_equal(confine_dispatch(c), -ECONNRESET);
	confine_close(c);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	tu_rmsock(dir, path);
	free(scratch);
}

static void settled_before_started_is_fatal(void **state) { (void)state; run_script(SETTLED_FIRST); }
static void started_twice_is_fatal(void **state) { (void)state; run_script(STARTED_TWICE); }
static void a_refusal_after_started_is_fatal(void **state) { (void)state; run_script(ERROR_AFTER_STARTED); }
static void a_shutdown_no_one_asked_for_is_fatal(void **state) { (void)state; run_script(STRAY_SHUTDOWN); }
static void a_second_hello_is_fatal(void **state) { (void)state; run_script(SECOND_HELLO); }

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(settled_before_started_is_fatal),
		cmocka_unit_test(started_twice_is_fatal),
		cmocka_unit_test(a_refusal_after_started_is_fatal),
		cmocka_unit_test(a_shutdown_no_one_asked_for_is_fatal),
		cmocka_unit_test(a_second_hello_is_fatal),
	};

	hu_setup();
	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests_name("protocol", tests, NULL, NULL);
}
