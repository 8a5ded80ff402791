#include <errno.h>
#include <fcntl.h>
#include <linux/mount.h>
#include <sched.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "helper/mountns.h"

/* Decimal digits of v into buf (no allocation, no locale: after fork). */
static size_t
put_uint(char *buf, unsigned long v)
{
	char tmp[24];
	size_t n = 0, i;

	do
		tmp[n++] = (char)('0' + v % 10);
	while ((v /= 10) != 0);
	for (i = 0; i < n; i++)
		buf[i] = tmp[n - 1 - i];
	return n;
}

static int
write_file(const char *path, const char *text, size_t len)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), rc = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, text, len) != (ssize_t)len)
		rc = -errno;
	close(fd);
	return rc;
}

/* "ID ID 1": the one id, mapped to itself. */
static int
map_self(const char *path, unsigned long id)
{
	char line[64];
	size_t n;

	n = put_uint(line, id);
	line[n++] = ' ';
	n += put_uint(line + n, id);
	memcpy(line + n, " 1", 2);
	return write_file(path, line, n + 2);
}

/*
 * A mount namespace of the job's own. Root (of the current user
 * namespace) makes one directly; anyone else makes a user namespace that
 * maps only its own ids first: it holds capabilities only over what that
 * namespace owns, and gives them up before exec (ident_drop_caps).
 */
static int
unshare_mounts(void)
{
	uid_t uid = geteuid();
	gid_t gid = getegid();
	int rc, dumpable;

	if (unshare(CLONE_NEWNS) == 0)
		return 0;
	if (errno != EPERM)
		return -errno;
	if (unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0)
		return -errno;
	/*
	 * A process that changed its uid without exec since (a host that
	 * dropped root, then forked its helper) is not dumpable, and its
	 * /proc/self is root's, whom the new namespace does not map: dumpable
	 * just for the three writes.
	 */
	dumpable = prctl(PR_GET_DUMPABLE, 0, 0, 0, 0);
	if (dumpable == 0 && prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) != 0)
		return -errno;
	rc = write_file("/proc/self/setgroups", "deny", 4);
	if (rc == 0)
		rc = map_self("/proc/self/uid_map", uid);
	if (rc == 0)
		rc = map_self("/proc/self/gid_map", gid);
	if (dumpable == 0 && prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0 && rc == 0)
		rc = -errno;
	return rc;
}

int
mountns_apply(const struct mountns_root *root)
{
	struct mount_attr ro = {
		.attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID,
		.propagation = MS_PRIVATE,
	};
	struct mount_attr rw = {
		.attr_set = MOUNT_ATTR_NODEV | MOUNT_ATTR_NOSUID,
		.propagation = MS_PRIVATE,
	};
	struct stat st;
	int tree, rc;

	if ((rc = unshare_mounts()) != 0)
		return rc;
	/*
	 * A copy of the scratch root's tree taken before anything is made
	 * read-only, so that it keeps its own flags; checked to be the
	 * directory the helper checked, so that a name changed since cannot
	 * put another tree in its place.
	 */
	tree = (int)syscall(SYS_open_tree, AT_FDCWD, root->path,
	    OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE |
	    AT_SYMLINK_NOFOLLOW);
	if (tree < 0)
		return -errno;
	if (fstat(tree, &st) != 0) {
		rc = -errno;
	} else if (st.st_dev != root->dev || st.st_ino != root->ino) {
		rc = -ESTALE;
	} else if (syscall(SYS_mount_setattr, AT_FDCWD, "/", AT_RECURSIVE, &ro,
	    sizeof(ro)) != 0 ||
	    syscall(SYS_mount_setattr, tree, "", AT_EMPTY_PATH | AT_RECURSIVE,
	    &rw, sizeof(rw)) != 0 ||
	    syscall(SYS_move_mount, tree, "", AT_FDCWD, root->path,
	    MOVE_MOUNT_F_EMPTY_PATH) != 0) {
		/* Everything private first: nothing here reaches the host's. */
		rc = -errno;
	}
	close(tree);
	return rc;
}
