#include <errno.h>
#include <fcntl.h>
#include <linux/mount.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "helper/backend/mountns.h"
#include "helper/backend/ns.h"
#include "helper/backend/op.h"
#include "src/core/fd.h"
#include "src/core/mountinfo.h"

/*
 * A mount namespace of the caller's own, where it has no other (no init
 * of ns.h made one): root (of the current user namespace) makes one
 * directly; anyone else makes a user namespace that maps only its own ids
 * first: it holds capabilities only over what that namespace owns, and
 * gives them up before exec.
 */
int
mountns_unshare(enum op *op)
{
	uid_t uid = geteuid();
	gid_t gid = getegid();

	*op = OP_UNSHARE_MOUNT;
	if (unshare(CLONE_NEWNS) == 0)
		return 0;
	if (errno != EPERM)
		return -errno;
	*op = OP_UNSHARE_USER;
	if (unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0)
		return -errno;
	return ns_map_self(uid, gid, op);
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

/* One mount's attributes: set and cleared, not those beneath it. */
static int
set_attr_one(int fd, const char *path, unsigned flags, uint64_t set,
    uint64_t clr)
{
	struct mount_attr a = { .attr_set = set, .attr_clr = clr };

	return syscall(SYS_mount_setattr, fd, path, flags, &a, sizeof(a)) == 0 ?
	    0 : -errno;
}

static int
set_attr(int fd, const char *path, unsigned flags, uint64_t set)
{
	struct mount_attr a = { .attr_set = set, .propagation = MS_PRIVATE };

	return syscall(SYS_mount_setattr, fd, path, flags | AT_RECURSIVE, &a,
	    sizeof(a)) == 0 ? 0 : -errno;
}

/*
 * The same with the classic mount API, for a kernel without
 * mount_setattr (before 5.12): each mount at or beneath path (as
 * /proc/self/mountinfo lists them) remounted by itself, keeping the flags
 * it has (a user namespace may not clear those it was given locked) and
 * adding set; made private first. A mount the caller cannot reach (a
 * directory of another user's above it: EACCES, or gone: ENOENT) is left:
 * the job, as that caller or less, cannot reach it either. bubblewrap
 * makes its read-only binds the same way.
 */
static unsigned long
kept_flags(const char *path, int *err)
{
	static const struct {
		unsigned long st, ms;
	} map[] = {
		{ ST_RDONLY, MS_RDONLY }, { ST_NOSUID, MS_NOSUID },
		{ ST_NODEV, MS_NODEV }, { ST_NOEXEC, MS_NOEXEC },
		{ ST_NOATIME, MS_NOATIME }, { ST_NODIRATIME, MS_NODIRATIME },
		{ ST_RELATIME, MS_RELATIME },
	};
	struct statvfs v;
	unsigned long ms = 0;
	size_t i;

	*err = statvfs(path, &v) == 0 ? 0 : -errno;
	for (i = 0; *err == 0 && i < sizeof(map) / sizeof(map[0]); i++)
		if (v.f_flag & map[i].st)
			ms |= map[i].ms;
	return ms;
}

struct legacy_attr {
	const char *path;
	unsigned long set;
};

/* One mount at or beneath path: remounted with set, its own flags kept. */
static int
legacy_remount(const struct mountinfo_entry *e, void *arg)
{
	const struct legacy_attr *a = arg;
	unsigned long flags;
	int err;

	if (mountinfo_covers(a->path, e->point) == 0)
		return 0;
	flags = kept_flags(e->point, &err);
	if (err == -EACCES || err == -ENOENT)
		return 0;
	if (err == 0 && mount("none", e->point, "none", MS_REMOUNT | MS_BIND |
	    flags | a->set, NULL) != 0)
		err = errno == EACCES || errno == ENOENT ? 0 : -errno;
	return err;
}

static int
legacy_set_attr(const char *path, unsigned long set)
{
	struct legacy_attr a = { path, set };

	if (mount("none", path, "none", MS_REC | MS_PRIVATE, NULL) != 0)
		return -errno;
	/* A line not read whole fails it: never a mount left as it was. */
	return mountinfo_each(legacy_remount, &a);
}

static bool
beneath_tmp(const char *path)
{
	return strncmp(path, "/tmp/", 5) == 0;
}

/*
 * The directories along path below its first component ("/tmp/",
 * "/dev/": five characters), path itself too when whole: made as the
 * caller, each kept where it exists already.
 */
static int
make_dirs(const char *path, bool whole)
{
	char buf[4096];
	size_t i, n = strlen(path);

	if (n >= sizeof(buf))
		return -ENAMETOOLONG;
	memcpy(buf, path, n + 1);
	for (i = 5; i < n || (whole && i == n); i++) {
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
 * In the private /tmp, the directories down to path, made as the job's
 * user, so that the tree of the host's can be seen there again. Those of
 * another mount (a kept cwd above a scratch root) exist already.
 */
static int
make_mountpoint(const char *path)
{
	return make_dirs(path, true);
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

/* A tree just attached at path, by the classic API: its flags, set. */
static int
legacy_attr(enum op *op, const char *path, unsigned long set)
{
	*op = OP_MOUNT_SETATTR;
	return legacy_set_attr(path, set);
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

/* Where the job's own /dev takes what it names of the host's. */
struct devnode {
	const char *path;   /* beneath /dev, or (a named one) elsewhere */
	int fd;             /* the host's node, cloned: -1 until then */
};

static bool
in_dev(const char *path)
{
	return strncmp(path, "/dev/", 5) == 0;
}

static bool
listed(const struct devnode *d, size_t n, const char *path)
{
	while (n-- > 0)
		if (strcmp(d[n].path, path) == 0)
			return true;
	return false;
}

/* path's parent directories beneath /dev, in the new tmpfs. */
static int
make_parents(const char *path)
{
	return make_dirs(path, false);
}

/* A host node cloned (open_tree), to be seen again in the new /dev. */
static int
clone_node(struct devnode *d)
{
	d->fd = (int)syscall(SYS_open_tree, AT_FDCWD, d->path, OPEN_TREE_CLONE |
	    OPEN_TREE_CLOEXEC);
	return d->fd >= 0 ? 0 : -errno;
}

/* The clone attached at its path in the new /dev, on an empty file. */
static int
attach_node(const struct devnode *d)
{
	int fd, rc;

	if ((rc = make_parents(d->path)) != 0)
		return rc;
	fd = open(d->path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	close(fd);
	return syscall(SYS_move_mount, d->fd, "", AT_FDCWD, d->path,
	    MOVE_MOUNT_F_EMPTY_PATH) == 0 ? 0 : -errno;
}

static const char *const dev_nodes[] = {
	"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom",
	"/dev/tty",
};
#define NODES (sizeof(dev_nodes) / sizeof(dev_nodes[0]))

static const struct {
	const char *path, *target;
} dev_links[] = {
	{ "/dev/ptmx", "pts/ptmx" }, { "/dev/fd", "/proc/self/fd" },
	{ "/dev/stdin", "/proc/self/fd/0" }, { "/dev/stdout", "/proc/self/fd/1" },
	{ "/dev/stderr", "/proc/self/fd/2" },
};

/* One of the nodes every /dev of a job has. */
static bool
std_node(const char *path)
{
	size_t i;

	for (i = 0; i < NODES; i++)
		if (strcmp(dev_nodes[i], path) == 0)
			return true;
	return false;
}

/*
 * The job's own /dev: a small tmpfs with the harmless nodes and the
 * spec's devices (the host's own, attached: those nodes of n that are
 * beneath /dev), a new devpts instance with its ptmx, a private /dev/shm
 * and the IPC namespace's mqueue. Left writable: dev_seal.
 */
static int
dev_build(struct devnode *nodes, size_t n, enum op *op)
{
	size_t i;
	int rc = 0;

	*op = OP_MOUNT_DEV;
	if (mount("tmpfs", "/dev", "tmpfs", MS_NOSUID | MS_NOEXEC,
	    "mode=0755,size=64k,nr_inodes=256") != 0)
		return -errno;
	*op = OP_MOVE_MOUNT;
	for (i = 0; rc == 0 && i < n; i++)
		if (in_dev(nodes[i].path))
			rc = attach_node(&nodes[i]);
	*op = OP_MOUNT_DEV;
	for (i = 0; rc == 0 && i < sizeof(dev_links) / sizeof(dev_links[0]); i++)
		if (symlink(dev_links[i].target, dev_links[i].path) != 0)
			rc = -errno;
	if (rc == 0 && (mkdir("/dev/pts", 0755) != 0 ||
	    mkdir("/dev/shm", 01777) != 0 || mkdir("/dev/mqueue", 0755) != 0))
		rc = -errno;
	if (rc != 0)
		return rc;
	*op = OP_MOUNT_DEVPTS;
	if (mount("devpts", "/dev/pts", "devpts", MS_NOSUID | MS_NOEXEC,
	    "newinstance,ptmxmode=0666,mode=0620") != 0)
		return -errno;
	*op = OP_MOUNT_SHM;
	if (mount("tmpfs", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV,
	    "mode=01777") != 0)
		return -errno;
	/* The IPC namespace's POSIX queues, where programs look for them. */
	if (mount("mqueue", "/dev/mqueue", "mqueue", MS_NOSUID | MS_NODEV |
	    MS_NOEXEC, NULL) != 0)
		return -errno;
	return 0;
}

/* /dev read-only, but for the file systems beneath it. */
static int
dev_seal(enum op *op)
{
	int rc;

	*op = OP_MOUNT_SETATTR;
	rc = set_attr_one(AT_FDCWD, "/dev", 0, MOUNT_ATTR_RDONLY, 0);
	if (rc == -ENOSYS && mount("none", "/dev", "none", MS_REMOUNT | MS_BIND |
	    MS_RDONLY | MS_NOSUID | MS_NOEXEC, NULL) != 0)
		return -errno;
	return rc == -ENOSYS ? 0 : rc;
}

/*
 * A tree made at path, taken away (a detached copy, descriptor in *fd)
 * and path as it was again; else *fd is -1 and what was made is gone.
 */
static void
take_away(const char *path, unsigned flags, int *fd)
{
	*fd = (int)syscall(SYS_open_tree, AT_FDCWD, path, OPEN_TREE_CLONE |
	    OPEN_TREE_CLOEXEC | flags);
	if (umount2(path, MNT_DETACH) != 0 && *fd >= 0) {
		close(*fd);
		*fd = -1;
	}
}

void
mountns_ready_make(struct mountns_ready *r)
{
	struct devnode nodes[NODES];
	struct stat host, now;
	enum op op;
	size_t k;
	int rc = stat("/dev", &host) == 0 ? 0 : -errno;

	r->dev = r->proc = r->tmp = -1;
	for (k = 0; k < NODES; k++) {
		nodes[k].path = dev_nodes[k];
		nodes[k].fd = -1;
		if (rc == 0)
			rc = clone_node(&nodes[k]);
	}
	/*
	 * Made where they will be seen, then taken away, so that the request's
	 * view is made over the host's /dev and /proc as it would be without
	 * them: what is made here on failure goes with the detach.
	 */
	if (rc == 0 && dev_build(nodes, NODES, &op) == 0)
		take_away("/dev", AT_RECURSIVE, &r->dev);
	else if (rc == 0 && stat("/dev", &now) == 0 && now.st_dev != host.st_dev)
		(void)umount2("/dev", MNT_DETACH);
	for (k = 0; k < NODES; k++)
		if (nodes[k].fd >= 0)
			close(nodes[k].fd);
	if (mount("proc", "/proc", "proc", MS_RDONLY | MS_NOSUID | MS_NODEV |
	    MS_NOEXEC, NULL) == 0)
		take_away("/proc", 0, &r->proc);
}

void
mountns_ready_close(struct mountns_ready *r)
{
	if (r->dev >= 0)
		close(r->dev);
	if (r->proc >= 0)
		close(r->proc);
	if (r->tmp >= 0)
		close(r->tmp);
	r->dev = r->proc = r->tmp = -1;
}

/* A tree made ahead, attached at path: 0 or -errno. Closed either way. */
static int
attach_ready(int *fd, const char *path)
{
	int rc = syscall(SYS_move_mount, *fd, "", AT_FDCWD, path,
	    MOVE_MOUNT_F_EMPTY_PATH) == 0 ? 0 : -errno;

	close(*fd);
	*fd = -1;
	return rc;
}

/*
 * dir's directory name opened: fd or -1. The overlay makes its own mode 0:
 * where that keeps us out (not root), made ours to enter (mode 0700).
 */
static int
enter_dir(int dir, const char *name)
{
	int fd = openat(dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC);

	if (fd >= 0 || errno != EACCES)
		return fd;
	/* Not ours, or a link: the open then fails again and says why. */
	if (fchmodat(dir, name, 0700, AT_SYMLINK_NOFOLLOW) != 0)
		errno = 0;
	return openat(dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC);
}

/*
 * What a volatile overlay marks its work layer with (w a directory
 * descriptor): "work/incompat/volatile/dirty", a sign for the next mount
 * of those layers, which there never is. Removed while it is mounted
 * too: the mount reads it no more.
 */
static void
volatile_mark_remove(int w)
{
	int work, incompat = -1, vol = -1;

	if ((work = enter_dir(w, "work")) >= 0 &&
	    (incompat = enter_dir(work, "incompat")) >= 0 &&
	    (vol = enter_dir(incompat, "volatile")) >= 0)
		(void)unlinkat(vol, "dirty", 0);
	if (incompat >= 0)
		(void)unlinkat(incompat, "volatile", AT_REMOVEDIR);
	if (work >= 0)
		(void)unlinkat(work, "incompat", AT_REMOVEDIR);
	fd_closep(&vol);
	fd_closep(&incompat);
	fd_closep(&work);
}

int
mountns_work_remove(int tmp)
{
	int w, rc = 0;

	if ((w = openat(tmp, "w", O_PATH | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC)) < 0)
		return errno == ENOENT ? 0 : -errno;
	/* Its mark gone as it was made (mountns_tmp_overlay): once. */
	if (unlinkat(w, "work", AT_REMOVEDIR) == 0 || errno == ENOENT)
		rc = 0;
	else if (errno != ENOTEMPTY)
		rc = -errno;
	else if (close(w), (w = enter_dir(tmp, "w")) < 0)
		return -errno;
	else {
		volatile_mark_remove(w);
		if (unlinkat(w, "work", AT_REMOVEDIR) != 0)
			rc = -errno;
	}
	close(w);
	return rc;
}

/* dir's subdirectory name, opened (O_PATH) without following a link. */
static int
layer_dir(int dir, const char *name)
{
	int fd = openat(dir, name, O_PATH | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC);

	return fd >= 0 ? fd : -errno;
}

int
mountns_tmp_overlay(const struct mountns_tree *t)
{
	char upper[64], work[64];
	int dir, u = -1, w = -1, wd, fs = -1, mnt = -1, err = 0;
	struct stat st;

	/*
	 * The private tmp the helper checked, and its layers, each opened
	 * without following a link and named by its descriptor: what its
	 * user renames or links in their place meanwhile is not taken.
	 */
	dir = open(t->path, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dir < 0)
		return -errno;
	if (fstat(dir, &st) != 0)
		err = -errno;
	else if (st.st_dev != t->dev || st.st_ino != t->ino)
		err = -ESTALE;
	else if ((u = layer_dir(dir, "u")) < 0)
		err = u;
	else if ((w = layer_dir(dir, "w")) < 0)
		err = w;
	close(dir);
	if (err == 0) {
		snprintf(upper, sizeof(upper), "/proc/self/fd/%d", u);
		snprintf(work, sizeof(work), "/proc/self/fd/%d", w);
		fs = (int)syscall(SYS_fsopen, "overlay", FSOPEN_CLOEXEC);
	}
	/*
	 * volatile: no sync of the upper layer's file system, at the job's
	 * fsync nor at the end: what the job writes there goes with it
	 * (and a sync per job cost tens of milliseconds here).
	 */
	if (err == 0 && fs >= 0 && syscall(SYS_fsconfig, fs,
	    FSCONFIG_SET_STRING, "lowerdir", "/tmp", 0) == 0 &&
	    syscall(SYS_fsconfig, fs, FSCONFIG_SET_FLAG, "volatile", NULL,
	    0) == 0 &&
	    syscall(SYS_fsconfig, fs, FSCONFIG_SET_STRING, "upperdir", upper,
	    0) == 0 && syscall(SYS_fsconfig, fs, FSCONFIG_SET_STRING,
	    "workdir", work, 0) == 0 && syscall(SYS_fsconfig, fs,
	    FSCONFIG_CMD_CREATE, NULL, NULL, 0) == 0)
		mnt = (int)syscall(SYS_fsmount, fs, FSMOUNT_CLOEXEC,
		    MOUNT_ATTR_NODEV | MOUNT_ATTR_NOSUID);
	if (err == 0 && mnt < 0)
		err = -errno;
	/* Not on the request's path, where the overlay is made ahead. */
	if (mnt >= 0 && (wd = openat(w, ".", O_RDONLY | O_DIRECTORY |
	    O_CLOEXEC)) >= 0) {
		volatile_mark_remove(wd);
		close(wd);
	}
	fd_closep(&fs);
	fd_closep(&u);
	fd_closep(&w);
	return mnt >= 0 ? mnt : err;
}

/* The overlay's layers in a private tmp, as named beneath /tmp. */
static const char *const tmp_layers[] = { "/tmp/u", "/tmp/w" };

int
mountns_tmp_rmdir(const char *tmp)
{
	int fd = open(tmp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	size_t i;

	if (fd >= 0) {
		(void)mountns_work_remove(fd);
		for (i = 0; i < 2; i++)
			(void)mountns_unmake(fd, tmp_layers[i]);
		close(fd);
	}
	return rmdir(tmp);
}

int
mountns_tmp_make(const char *base, char **path, struct stat *st)
{
	size_t n = strlen(base) + sizeof("/confine-tmp.XXXXXX");
	char *dir = malloc(n);
	int fd = -1, rc = 0;

	*path = NULL;
	if (dir == NULL)
		return -ENOMEM;
	snprintf(dir, n, "%s/confine-tmp.XXXXXX", base);
	if (mkdtemp(dir) == NULL) {
		free(dir);
		return -errno;
	}
	/* As plan.c makes a job's: the upper layer's mode the tmp's own. */
	if ((fd = open(dir, O_PATH | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC)) < 0 || fstat(fd, st) != 0 ||
	    mkdirat(fd, "u", st->st_mode & 07777) != 0 ||
	    mkdirat(fd, "w", 0700) != 0)
		rc = -errno;
	if (fd >= 0)
		close(fd);
	if (rc != 0) {
		(void)mountns_tmp_rmdir(dir);
		free(dir);
		return rc;
	}
	*path = dir;
	return 0;
}

int
mountns_apply(const struct mountns_view *v, struct mountns_ready *ready,
    enum op *failed)
{
	int root = -1, tmp = -1, keep[2] = { -1, -1 }, rc, i;
	struct mountns_ready none = { -1, -1, -1 }, *r = ready != NULL ? ready :
	    &none;
	bool legacy = false;
	struct devnode nodes[NODES + MOUNTNS_MAX_DEVICES];
	size_t k, nnodes = 0;
	enum op op_, *op = failed != NULL ? failed : &op_;

	/*
	 * Copies taken before anything is made read-only, so that they keep
	 * their own flags; then everything private and read-only, which also
	 * keeps the host's mounts from seeing any of ours.
	 */
	*op = OP_OPEN_TREE;
	rc = clone_tree(&v->root, &root);
	if (rc == 0 && v->over_tmp && v->tmp_overlay && v->tmp_ahead &&
	    r->tmp >= 0) {
		/* Made ahead on this tmp's layers (plan.c gave us its tmp). */
		tmp = r->tmp;
		r->tmp = -1;
	} else if (rc == 0 && v->over_tmp && v->tmp_overlay) {
		/*
		 * Made now, while its upper layer's mount may still be written:
		 * the overlay keeps a private copy of that mount. The host's
		 * /tmp beneath: its files read where they are; what the job
		 * writes or removes there, its own, in the private tmp.
		 */
		*op = OP_MOUNT_TMP;
		if ((tmp = mountns_tmp_overlay(&v->tmp)) < 0) {
			rc = tmp;
			tmp = -1;
		}
		*op = OP_OPEN_TREE;
	} else if (rc == 0) {
		rc = clone_tree(&v->tmp, &tmp);
	}
	for (i = 0; rc == 0 && i < 2; i++)
		rc = clone_tree(&v->keep[i], &keep[i]);
	/*
	 * The host's nodes the job's /dev takes, and the named ones
	 * elsewhere, before the view covers them or makes them nodev; where
	 * its /dev was made ahead, those it has not.
	 */
	for (k = 0; v->own_dev && k < NODES + v->ndevices; k++) {
		nodes[nnodes].path = k < NODES ? dev_nodes[k] :
		    v->devices[k - NODES];
		nodes[nnodes].fd = -1;
		if (r->dev >= 0 && std_node(nodes[nnodes].path))
			continue;
		if (k >= NODES && listed(nodes, nnodes, nodes[nnodes].path))
			continue;
		if (rc == 0)
			rc = clone_node(&nodes[nnodes]);
		nnodes++;
	}
	if (rc == 0)
		*op = OP_MOUNT_SETATTR;
	/*
	 * With a /dev of its own, no device node of the host's opens
	 * anywhere else either (nodev): what Landlock's device rights would
	 * refuse, on a kernel whose Landlock has none.
	 */
	if (rc == 0)
		rc = set_attr(AT_FDCWD, "/", 0, MOUNT_ATTR_RDONLY |
		    MOUNT_ATTR_NOSUID | (v->own_dev ? MOUNT_ATTR_NODEV : 0));
	/* Before 5.12: the classic API, mount by mount, each once attached. */
	if (rc == -ENOSYS) {
		legacy = true;
		rc = legacy_set_attr("/", MS_RDONLY | MS_NOSUID |
		    (v->own_dev ? MS_NODEV : 0));
	}
	if (rc == 0 && !legacy)
		rc = set_attr(root, "", AT_EMPTY_PATH, MOUNT_ATTR_NODEV |
		    MOUNT_ATTR_NOSUID);
	if (rc == 0 && tmp >= 0 && !legacy)
		rc = set_attr(tmp, "", AT_EMPTY_PATH, MOUNT_ATTR_NODEV |
		    MOUNT_ATTR_NOSUID);
	for (i = 0; rc == 0 && i < 2 && !legacy; i++)
		if (keep[i] >= 0)
			rc = set_attr(keep[i], "", AT_EMPTY_PATH, MOUNT_ATTR_RDONLY |
			    MOUNT_ATTR_NODEV | MOUNT_ATTR_NOSUID);
	/* /tmp first: the kept trees, then the root, may lie beneath it. */
	if (rc == 0 && tmp >= 0 && v->over_tmp)
		rc = attach(tmp, "/tmp", false, op);
	if (rc == 0 && tmp >= 0 && v->over_tmp && legacy)
		rc = legacy_attr(op, "/tmp", MS_NODEV | MS_NOSUID);
	for (i = 0; rc == 0 && i < 2; i++) {
		if (keep[i] < 0)
			continue;
		rc = attach(keep[i], v->keep[i].path, v->over_tmp, op);
		if (rc == 0 && legacy)
			rc = legacy_attr(op, v->keep[i].path, MS_RDONLY |
			    MS_NODEV | MS_NOSUID);
	}
	if (rc == 0)
		rc = attach(root, v->root.path, v->over_tmp, op);
	if (rc == 0 && legacy)
		rc = legacy_attr(op, v->root.path, MS_NODEV | MS_NOSUID);
	/* The PID namespace's own processes, read-only as the rest. */
	if (rc == 0 && v->own_proc && r->proc >= 0) {
		*op = OP_MOUNT_PROC;
		rc = attach_ready(&r->proc, "/proc");
	} else if (rc == 0 && v->own_proc) {
		*op = OP_MOUNT_PROC;
		if (mount("proc", "/proc", "proc", MS_RDONLY | MS_NOSUID |
		    MS_NODEV | MS_NOEXEC, NULL) != 0)
			rc = -errno;
	}
	/* Made ahead: the spec's devices added, as dev_build would. */
	if (rc == 0 && v->own_dev && r->dev >= 0) {
		*op = OP_MOUNT_DEV;
		rc = attach_ready(&r->dev, "/dev");
		*op = OP_MOVE_MOUNT;
		for (k = 0; rc == 0 && k < nnodes; k++)
			if (in_dev(nodes[k].path))
				rc = attach_node(&nodes[k]);
	} else if (rc == 0 && v->own_dev) {
		rc = dev_build(nodes, nnodes, op);
	}
	if (rc == 0 && v->own_dev)
		rc = dev_seal(op);
	/* A named device elsewhere: its clone over it, where it is. */
	*op = OP_MOVE_MOUNT;
	for (k = 0; rc == 0 && k < nnodes; k++)
		if (!in_dev(nodes[k].path) && syscall(SYS_move_mount, nodes[k].fd,
		    "", AT_FDCWD, nodes[k].path, MOVE_MOUNT_F_EMPTY_PATH) != 0)
			rc = -errno;
	if (rc == 0)
		*op = OP_NONE;
	if (root >= 0)
		close(root);
	if (tmp >= 0)
		close(tmp);
	for (i = 0; i < 2; i++)
		if (keep[i] >= 0)
			close(keep[i]);
	for (k = 0; k < nnodes; k++)
		if (nodes[k].fd >= 0)
			close(nodes[k].fd);
	mountns_ready_close(r);
	return rc;
}
