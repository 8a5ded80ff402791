#include <errno.h>
#include <fcntl.h>
#include <linux/mount.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "helper/mountns.h"
#include "helper/op.h"

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
unshare_mounts(enum op *op)
{
	uid_t uid = geteuid();
	gid_t gid = getegid();
	int rc, dumpable;

	*op = OP_UNSHARE_MOUNT;
	if (unshare(CLONE_NEWNS) == 0)
		return 0;
	if (errno != EPERM)
		return -errno;
	*op = OP_UNSHARE_USER;
	if (unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0)
		return -errno;
	*op = OP_ID_MAP;
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

/* A copy of a tree, checked to be the directory the helper checked. */
static int
clone_tree(const struct mountns_tree *t, int *fd)
{
	struct stat st;

	*fd = -1;
	if (t->path == NULL)
		return 0;
	*fd = (int)syscall(SYS_open_tree, AT_FDCWD, t->path, OPEN_TREE_CLONE |
	    OPEN_TREE_CLOEXEC | AT_RECURSIVE | AT_SYMLINK_NOFOLLOW);
	if (*fd < 0)
		return -errno;
	if (fstat(*fd, &st) != 0)
		return -errno;
	return st.st_dev == t->dev && st.st_ino == t->ino ? 0 : -ESTALE;
}

static int
set_attr(int fd, const char *path, unsigned flags, uint64_t set)
{
	struct mount_attr a = { .attr_set = set, .propagation = MS_PRIVATE };

	return syscall(SYS_mount_setattr, fd, path, flags | AT_RECURSIVE, &a,
	    sizeof(a)) == 0 ? 0 : -errno;
}

static bool
beneath_tmp(const char *path)
{
	return strncmp(path, "/tmp/", 5) == 0;
}

/*
 * In the private /tmp, the directories down to path, made as the job's
 * user, so that the tree of the host's can be seen there again. Those of
 * another mount (a kept cwd above a scratch root) exist already.
 */
static int
make_mountpoint(const char *path)
{
	char buf[4096];
	size_t i, n = strlen(path);

	if (n >= sizeof(buf))
		return -ENAMETOOLONG;
	memcpy(buf, path, n + 1);
	for (i = 5; i <= n; i++) {
		if (buf[i] != '/' && buf[i] != '\0')
			continue;
		buf[i] = '\0';
		if (mkdir(buf, 0755) != 0 && errno != EEXIST)
			return -errno;
		buf[i] = i < n ? '/' : '\0';
	}
	return 0;
}

/*
 * What make_mountpoint made for path, undone: beneath tmp (the private
 * tmp, a directory descriptor) the directories of path's components,
 * opened one by one without following a link, removed deepest first
 * while empty. No name is resolved through the tree, so what the job's
 * user renamed or linked in its place is left, and nothing outside it
 * is reached.
 */
int
mountns_unmake(int tmp, const char *path)
{
	enum { DEPTH = 64 };
	char buf[4096], *name[DEPTH], *s;
	int dir[DEPTH], nd = 1, n = 0, rc = 0, i;
	size_t len;

	if (!beneath_tmp(path) || (len = strlen(path + 5)) == 0 ||
	    len >= sizeof(buf) || path[5 + len - 1] == '/')
		return -EINVAL;
	memcpy(buf, path + 5, len + 1);
	/* name[i] is an entry of dir[i]; dir[i + 1] is name[i], opened. */
	dir[0] = tmp;
	for (s = buf; rc == 0 && *s != '\0'; ) {
		if (n == DEPTH) {
			rc = -ENAMETOOLONG;
			break;
		}
		name[n++] = s;
		s += strcspn(s, "/");
		if (*s == '/')
			*s++ = '\0';
		if (name[n - 1][0] == '\0' || strcmp(name[n - 1], ".") == 0 ||
		    strcmp(name[n - 1], "..") == 0)
			rc = -EINVAL;
		else if (*s != '\0' && (dir[nd] = openat(dir[nd - 1],
		    name[n - 1], O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
		    O_CLOEXEC)) < 0)
			rc = -errno;
		else if (*s != '\0')
			nd++;
	}
	for (i = n - 1; rc == 0 && i >= 0; i--)
		if (unlinkat(dir[i], name[i], AT_REMOVEDIR) != 0)
			rc = -errno;
	while (nd > 1)
		close(dir[--nd]);
	return rc;
}

static int
attach(int fd, const char *path, bool over_tmp, enum op *op)
{
	int rc;

	*op = OP_MOUNTPOINT;
	if (over_tmp && beneath_tmp(path) && (rc = make_mountpoint(path)) != 0)
		return rc;
	*op = OP_MOVE_MOUNT;
	return syscall(SYS_move_mount, fd, "", AT_FDCWD, path,
	    MOVE_MOUNT_F_EMPTY_PATH) == 0 ? 0 : -errno;
}

int
mountns_apply(const struct mountns_view *v, enum op *failed)
{
	int root = -1, tmp = -1, keep[2] = { -1, -1 }, rc, i;
	enum op op_, *op = failed != NULL ? failed : &op_;

	if ((rc = unshare_mounts(op)) != 0)
		return rc;
	/*
	 * Copies taken before anything is made read-only, so that they keep
	 * their own flags; then everything private and read-only, which also
	 * keeps the host's mounts from seeing any of ours.
	 */
	*op = OP_OPEN_TREE;
	rc = clone_tree(&v->root, &root);
	if (rc == 0)
		rc = clone_tree(&v->tmp, &tmp);
	for (i = 0; rc == 0 && i < 2; i++)
		rc = clone_tree(&v->keep[i], &keep[i]);
	if (rc == 0)
		*op = OP_MOUNT_SETATTR;
	if (rc == 0)
		rc = set_attr(AT_FDCWD, "/", 0, MOUNT_ATTR_RDONLY |
		    MOUNT_ATTR_NOSUID);
	if (rc == 0)
		rc = set_attr(root, "", AT_EMPTY_PATH, MOUNT_ATTR_NODEV |
		    MOUNT_ATTR_NOSUID);
	if (rc == 0 && tmp >= 0)
		rc = set_attr(tmp, "", AT_EMPTY_PATH, MOUNT_ATTR_NODEV |
		    MOUNT_ATTR_NOSUID);
	for (i = 0; rc == 0 && i < 2; i++)
		if (keep[i] >= 0)
			rc = set_attr(keep[i], "", AT_EMPTY_PATH, MOUNT_ATTR_RDONLY |
			    MOUNT_ATTR_NODEV | MOUNT_ATTR_NOSUID);
	/* /tmp first: the kept trees, then the root, may lie beneath it. */
	if (rc == 0 && tmp >= 0 && v->over_tmp)
		rc = attach(tmp, "/tmp", false, op);
	for (i = 0; rc == 0 && i < 2; i++)
		if (keep[i] >= 0)
			rc = attach(keep[i], v->keep[i].path, v->over_tmp, op);
	if (rc == 0)
		rc = attach(root, v->root.path, v->over_tmp, op);
	if (rc == 0)
		*op = OP_NONE;
	if (root >= 0)
		close(root);
	if (tmp >= 0)
		close(tmp);
	for (i = 0; i < 2; i++)
		if (keep[i] >= 0)
			close(keep[i]);
	return rc;
}
