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
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
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
	char cmd[1000];

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
	    "echo y > outside/keep && ln -s ../../outside t/a/out && "
	    "ln -s nowhere t/dangling && mkfifo t/a/b/fifo");
	dir = open_base();
	assert_int_equal(tree_remove(dir, "t", 0, 64), 0);
	assert_false(exists("t"));
	assert_true(exists("outside/keep"));
	assert_true(exists("outside"));
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
 * As the tree's owner, not root (who needs no permission): as nobody, in
 * a child given base open (the way to it may be closed to nobody), where
 * we are root; else as ourselves.
 */
static int
as_owner(unsigned flags)
{
	int st, dir = open_base(), rc;
	pid_t pid;

	if (geteuid() != 0) {
		rc = tree_remove(dir, "locked", flags, 64);
		close(dir);
		return rc;
	}
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

/* Its owner's tree, as a job leaves one: mode is the inner directory's. */
static void
locked_tree(const char *mode)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd), "chmod 0777 . && mkdir -p locked/a/b && "
	    "echo x > locked/a/b/x && { [ $(id -u) != 0 ] || "
	    "chown -R 65534:65534 locked; } && chmod %s locked/a", mode);
	sh(cmd);
}

/* The locked tree's inner directory given mode (chmod's). */
static void
relock(const char *mode)
{
	char cmd[64];

	snprintf(cmd, sizeof(cmd), "chmod %s locked/a", mode);
	sh(cmd);
}

/*
 * A directory its owner locked (000), or made read-only (0555, as Go's
 * module cache does), stops the removal, unless TREE_CHMOD opens it.
 */
static void
test_chmod(void **state)
{
	static const char *const modes[] = { "000", "0555", "0600" };
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		locked_tree(modes[i]);
		assert_int_equal(as_owner(0), -EACCES);
		/* Looked at unlocked (its owner, not root, could not see it). */
		relock("u+rwx");
		assert_true(exists("locked/a/b/x"));
		relock(modes[i]);
		assert_int_equal(as_owner(TREE_CHMOD), 0);
		assert_false(exists("locked"));
	}
}

#ifdef __linux__
/* text into path, whole: 0, or -1. */
static int
put(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), ok;

	if (fd < 0)
		return -1;
	ok = write(fd, text, strlen(text)) == (ssize_t)strlen(text);
	close(fd);
	return ok ? 0 : -1;
}

/*
 * A mount namespace of our own, its mounts private: what the test mounts
 * is never the host's, even if it dies before its unmount. Where we are
 * not root, in a user namespace of our own too, mapping us to its root.
 */
static int
private_mounts(void)
{
	char map[64];
	uid_t uid = geteuid();
	gid_t gid = getegid();

	if (uid != 0) {
		if (unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0 ||
		    put("/proc/self/setgroups", "deny") != 0)
			return -1;
		snprintf(map, sizeof(map), "0 %ld 1", (long)uid);
		if (put("/proc/self/uid_map", map) != 0)
			return -1;
		snprintf(map, sizeof(map), "0 %ld 1", (long)gid);
		if (put("/proc/self/gid_map", map) != 0)
			return -1;
	} else if (unshare(CLONE_NEWNS) != 0) {
		return -1;
	}
	return mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL);
}

/*
 * Only a directory that is not empty is entered: a mount point in the
 * tree (rmdir: EBUSY) stops it, and nothing of the file system mounted
 * there is touched, even its empty directories. The steps, in a child
 * with mounts of its own: 0, or the number of the first that failed.
 */
static int
mount_point_steps(const char *mnt, const char *empty, const char *deeper)
{
	int dir, rc;

	if (private_mounts() != 0)
		return 1;
	if (mount("tree_test", mnt, "tmpfs", 0, NULL) != 0)
		return 2;
	if (mkdir(empty, 0755) != 0 || mkdir(deeper, 0755) != 0)
		return 3;
	if ((dir = open(base, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		return 4;
	if (tree_remove(dir, "m", TREE_DIRS_ONLY, 64) != -EBUSY || !exists(
	    "m/a/mnt/empty/deeper"))
		rc = 5;
	else if (tree_remove(dir, "m", 0, 64) != -EBUSY ||
	    !exists("m/a/mnt/empty/deeper"))
		rc = 6;
	else if (umount2(mnt, MNT_DETACH) != 0)
		rc = 7;
	else if (tree_remove(dir, "m", 0, 64) != 0 || exists("m"))
		rc = 8;
	else
		rc = 0;
	close(dir);
	return rc;
}

static void
test_mount_point_not_entered(void **state)
{
	char mnt[512], empty[600], deeper[700];
	pid_t pid;
	int st;

	(void)state;
	sh("mkdir -p m/a/mnt");
	snprintf(mnt, sizeof(mnt), "%s/m/a/mnt", base);
	snprintf(empty, sizeof(empty), "%s/empty", mnt);
	snprintf(deeper, sizeof(deeper), "%s/deeper", empty);
	if ((pid = fork()) == 0)
		_exit(mount_point_steps(mnt, empty, deeper));
	assert_true(pid > 0);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	/* 1: no mount namespace of our own; 2-8: the steps above. */
	assert_int_equal(WEXITSTATUS(st), 0);
	/* The host never saw the mount: what the child removed is gone. */
	assert_false(exists("m"));
}
#endif

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_removes_all_follows_nothing,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_dirs_only, setup, teardown),
		cmocka_unit_test_setup_teardown(test_depth, setup, teardown),
		cmocka_unit_test_setup_teardown(test_chmod, setup, teardown),
#ifdef __linux__
		cmocka_unit_test_setup_teardown(test_mount_point_not_entered,
		    setup, teardown),
#endif
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
