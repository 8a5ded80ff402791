/*
 * Each layer of the Linux backend alone, in a child of this test: what
 * one refuses, it refuses without the others. In a whole job the
 * read-only view answers a write outside first (EROFS) and seccomp a
 * connect() first (EPERM), so the escape suites cannot show that
 * Landlock still holds beneath them; this does.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "helper/backend/caps.h"
#include "helper/backend/landlock.h"
#include "helper/backend/mountns.h"
#include "tests/testutil.h"

static char *scratch, *outside;

/* fn in a child: its return, or 125 when something else went wrong. */
static int
in_child(int (*fn)(void))
{
	int status;
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0)
		_exit(fn());
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	return WEXITSTATUS(status);
}

static int
err_of(int rc)
{
	return rc < 0 ? errno : 0;
}

static int
create_in(const char *dir)
{
	char *path = tu_join(dir, "f");
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	free(path);
	if (fd < 0)
		return errno;
	close(fd);
	return 0;
}

static int
landlock_only(void)
{
	struct landlock_plan plan;
	struct policy p = { .scratch = scratch };

	if (landlock_plan(landlock_abi(), &plan) != 0 ||
	    landlock_apply(&plan, &p, NULL) != 0)
		return 125;
	return 0;
}

/* Under Landlock alone: create outside, TCP connect, abstract connect. */
static int
landlock_create_outside(void)
{
	int rc = landlock_only();

	return rc ? rc : create_in(outside);
}

static int
landlock_create_inside(void)
{
	int rc = landlock_only();

	return rc ? rc : create_in(scratch);
}

static int
landlock_tcp_connect(void)
{
	struct sockaddr_in sin = { .sin_family = AF_INET,
		.sin_addr.s_addr = htonl(INADDR_LOOPBACK), .sin_port = htons(9) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int rc = fd < 0 ? 125 : landlock_only();

	return rc ? rc : err_of(connect(fd, (struct sockaddr *)&sin,
	    sizeof(sin)));
}

static int
landlock_abstract_connect(void)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int rc = fd < 0 ? 125 : landlock_only();

	snprintf(sun.sun_path + 1, sizeof(sun.sun_path) - 1,
	    "confine-layers-%ld", (long)getppid());
	return rc ? rc : err_of(connect(fd, (struct sockaddr *)&sun,
	    (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 +
	    strlen(sun.sun_path + 1))));
}

static void
landlock_alone_refuses_writes_tcp_and_abstract_sockets(void **state)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	int lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	(void)state;
	/* A listener outside the domain, so that only the scope refuses. */
	snprintf(sun.sun_path + 1, sizeof(sun.sun_path) - 1,
	    "confine-layers-%ld", (long)getpid());
	assert_int_equal(bind(lfd, (struct sockaddr *)&sun,
	    (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 +
	    strlen(sun.sun_path + 1))), 0);
	assert_int_equal(listen(lfd, 4), 0);
	assert_int_equal(in_child(landlock_create_inside), 0);
	assert_int_equal(in_child(landlock_create_outside), EACCES);
	assert_int_equal(in_child(landlock_tcp_connect), EACCES);
	assert_int_equal(in_child(landlock_abstract_connect), EPERM);
	close(lfd);
}

static int
view_only(void)
{
	struct mountns_view v = { .root.path = scratch };
	struct stat st;
	enum op op;

	if (stat(scratch, &st) != 0)
		return 125;
	v.root.dev = st.st_dev;
	v.root.ino = st.st_ino;
	return mountns_unshare(&op) == 0 && mountns_apply(&v, NULL, NULL) == 0 ? 0 :
	    125;
}

static int
view_chmod_outside(void)
{
	int rc = view_only();
	char *f = tu_join(outside, "m");

	return rc ? rc : err_of(chmod(f, 0600));
}

static int
view_create_inside(void)
{
	int rc = view_only();

	return rc ? rc : create_in(scratch);
}

/* The view checks that the root is still the directory checked. */
static int
view_of_another_directory(void)
{
	struct mountns_view v = { .root.path = scratch };
	struct stat st;
	enum op op;
	int rc;

	if (stat(outside, &st) != 0)
		return 125;
	v.root.dev = st.st_dev;
	v.root.ino = st.st_ino;
	rc = mountns_unshare(&op);
	return -(rc != 0 ? rc : mountns_apply(&v, NULL, NULL));
}

static void
the_view_alone_makes_outside_read_only(void **state)
{
	char *f = tu_join(outside, "m");
	int fd = open(f, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);

	(void)state;
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(in_child(view_chmod_outside), EROFS);
	assert_int_equal(in_child(view_create_inside), 0);
	assert_int_equal(in_child(view_of_another_directory), ESTALE);
	free(f);
}

static char *readonly_file;

static int
open_for_writing(void)
{
	int fd = open(readonly_file, O_WRONLY | O_CLOEXEC);

	if (fd < 0)
		return errno;
	close(fd);
	return 0;
}

/* Root's own file of mode 0444: root writes it, root without caps not. */
static int
caps_only(void)
{
	if (caps_drop_bounding() != 0 || caps_clear() != 0)
		return 125;
	return open_for_writing();
}

static void
no_capability_means_root_is_any_user(void **state)
{
	(void)state;
	readonly_file = tu_join(outside, "ro");
	assert_int_equal(close(open(readonly_file, O_WRONLY | O_CREAT |
	    O_CLOEXEC, 0444)), 0);
	assert_int_equal(geteuid(), 0);
	assert_int_equal(in_child(open_for_writing), 0);
	assert_int_equal(in_child(caps_only), EACCES);
	free(readonly_file);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(landlock_alone_refuses_writes_tcp_and_abstract_sockets),
		cmocka_unit_test(the_view_alone_makes_outside_read_only),
		cmocka_unit_test(no_capability_means_root_is_any_user),
	};

	scratch = tu_mkdtemp("scratch");
	outside = tu_mkdtemp("outside");
	return cmocka_run_group_tests_name("layers", tests, NULL, NULL);
}
