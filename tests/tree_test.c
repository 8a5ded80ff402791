/*
 * The one tree remover (src/core/tree.h), shared by the shepherd (a job's
 * trees), the trash (its emptied tmps) and the benchmarks: everything
 * beneath goes, a link goes and never what it points to, what may not go
 * stays and is said, and a tree its owner locked is opened only when
 * asked.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "src/core/tree.h"

static char base[256];

static int
setup(void **state)
{
	const char *t = getenv("TEST_TMPDIR");

	(void)state;
	snprintf(base, sizeof(base), "%s/tree.XXXXXX", t != NULL ? t : "/tmp");
	return mkdtemp(base) != NULL ? 0 : -1;
}

static int
teardown(void **state)
{
	char cmd[600];

	(void)state;
	snprintf(cmd, sizeof(cmd), "chmod -R u+rwx '%s'; rm -rf '%s'", base,
	    base);
	return system(cmd) == 0 ? 0 : -1;
}

/* A shell command, run in base. */
static void
sh(const char *what)
{
	char cmd[1024];

	snprintf(cmd, sizeof(cmd), "cd '%s' && %s", base, what);
	assert_int_equal(system(cmd), 0);
}

static int
open_base(void)
{
	int dir = open(base, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	assert_true(dir >= 0);
	return dir;
}

static bool
exists(const char *rel)
{
	char p[512];
	struct stat st;

	snprintf(p, sizeof(p), "%s/%s", base, rel);
	return lstat(p, &st) == 0;
}

/* Files, nested directories, links in and out: all of it, and only it. */
static void
test_removes_all_follows_nothing(void **state)
{
	int dir;

	(void)state;
	sh("mkdir -p t/a/b/c outside && echo x > t/a/f && "
	    "echo y > outside/keep && ln -s ../outside t/a/out && "
	    "ln -s nowhere t/dangling && mkfifo t/a/b/fifo");
	dir = open_base();
	assert_int_equal(tree_remove(dir, "t", 0, 64), 0);
	assert_false(exists("t"));
	assert_true(exists("outside/keep"));
	/* What is not there is removed already. */
	assert_int_equal(tree_remove(dir, "t", 0, 64), 0);
	/* A file alone, and a link to a directory: the link, not the target. */
	sh("echo z > file && ln -s outside link");
	assert_int_equal(tree_remove(dir, "file", 0, 64), 0);
	assert_int_equal(tree_remove(dir, "link", 0, 64), 0);
	assert_false(exists("file"));
	assert_false(exists("link"));
	assert_true(exists("outside/keep"));
	close(dir);
}

/* The trash's way: directories only, and a file stops it where it is. */
static void
test_dirs_only(void **state)
{
	int dir;

	(void)state;
	sh("mkdir -p e/a/b e/c && mkdir -p f/a/b && echo x > f/a/b/x");
	dir = open_base();
	assert_int_equal(tree_remove(dir, "e", TREE_DIRS_ONLY, 64), 0);
	assert_false(exists("e"));
	assert_int_equal(tree_remove(dir, "f", TREE_DIRS_ONLY, 64), -ENOTDIR);
	assert_true(exists("f/a/b/x"));
	/* The same tree without the flag goes. */
	assert_int_equal(tree_remove(dir, "f", 0, 64), 0);
	assert_false(exists("f"));
	close(dir);
}

/* Deeper than asked: refused there, the rest of the way down kept. */
static void
test_depth(void **state)
{
	int dir;

	(void)state;
	sh("mkdir -p d/1/2/3/4 && echo x > d/1/2/3/4/x");
	dir = open_base();
	assert_int_equal(tree_remove(dir, "d", 0, 3), -ELOOP);
	assert_true(exists("d/1/2/3/4/x"));
	assert_int_equal(tree_remove(dir, "d", 0, 5), 0);
	assert_false(exists("d"));
	close(dir);
}

/*
 * As the tree's owner, not root (who needs no permission): a directory
 * the owner locked (chmod 000) stops the removal, unless TREE_CHMOD opens
 * it first. Run in a child that became nobody, given base open (the way
 * to it may be closed to nobody).
 */
static int
as_nobody(unsigned flags)
{
	int st, dir = open_base();
	pid_t pid;

	if ((pid = fork()) == 0) {
		if (setgroups(0, NULL) != 0 || setgid(65534) != 0 ||
		    setuid(65534) != 0)
			_exit(100);
		_exit(-tree_remove(dir, "locked", flags, 64));
	}
	close(dir);
	assert_true(pid > 0);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_not_equal(WEXITSTATUS(st), 100);
	return -WEXITSTATUS(st);
}

static void
test_chmod(void **state)
{
	(void)state;
	if (geteuid() != 0)
		skip();  /* becoming another user takes root */
	sh("chmod 0777 . && mkdir -p locked/a/b && "
	    "echo x > locked/a/b/x && chown -R 65534:65534 locked && "
	    "chmod 000 locked/a");
	assert_int_equal(as_nobody(0), -EACCES);
	assert_true(exists("locked/a/b/x"));
	assert_int_equal(as_nobody(TREE_CHMOD), 0);
	assert_false(exists("locked"));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_removes_all_follows_nothing,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_dirs_only, setup, teardown),
		cmocka_unit_test_setup_teardown(test_depth, setup, teardown),
		cmocka_unit_test_setup_teardown(test_chmod, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
