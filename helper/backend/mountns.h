/*
 * The job's own view of the file system (Linux): a private mount namespace
 * in which every mount is read-only and nosuid, except the scratch root,
 * which is a read-write, nodev, nosuid copy of itself, and /tmp, which is
 * the job's private temporary directory (the host's /tmp is out of sight,
 * but for the scratch root, the cwd and the program's directory where they
 * lie beneath it), or an overlay of the host's /tmp with the private one
 * above (tmp_overlay: the host's read where it lies, the job's writes its
 * own). The kernel then
 * refuses every change to an inode outside the scratch root, its content
 * and its metadata alike (mode, owner, times, extended attributes), with
 * EROFS, whatever the job's uid and whatever Landlock mediates; and no
 * device node beneath the scratch root opens.
 *
 * Made before Landlock (which forbids changing mounts once applied): by
 * the job's init where the job has namespaces of its own (ns.h,
 * shepherd.c), else in the job's process after fork (child.c). A process
 * that may not make a mount namespace (not root, or root of no user
 * namespace) makes a user namespace first, with its own uid and gid
 * mapped to themselves: nothing else is mapped, so it gains nothing
 * outside it.
 */
#ifndef CONFINE_MOUNTNS_H
#define CONFINE_MOUNTNS_H

#include <stdbool.h>
#include <sys/types.h>

#include "helper/backend/op.h"

/* A tree as the helper checked it: the copy must be the same directory. */
struct mountns_tree {
	const char *path;   /* canonical, absolute; NULL: none */
	dev_t dev;
	ino_t ino;
};

#define MOUNTNS_MAX_DEVICES 16

struct mountns_view {
	struct mountns_tree root;  /* the scratch root: read-write */
	struct mountns_tree tmp;   /* the private temporary directory, made
	                              read-write at /tmp when over_tmp */
	struct mountns_tree keep[2]; /* the cwd and the program's directory,
	                              when beneath /tmp and not the root's:
	                              seen again, read-only, where they were */
	bool over_tmp;
	/*
	 * With over_tmp: /tmp an overlay, the host's /tmp beneath (read-only
	 * to it: its writes go to tmp's "u", "w" the overlay's work), rather
	 * than the private tmp alone. Both exist, empty, in tmp. With
	 * tmp_ahead, the init made that overlay before the request, on this
	 * tmp (mountns_ready's tmp); made here where it could not.
	 */
	bool tmp_overlay;
	bool tmp_ahead;
	/*
	 * With namespaces of its own (ns.h): a /proc of its PID namespace; a
	 * /dev of its own, with the devices the spec names (those beneath
	 * /dev; others are seen where they are).
	 */
	bool own_proc;
	bool own_dev;
	const char *const *devices;
	size_t ndevices;
};

/*
 * A mount namespace of the caller's own (and a user namespace first, for
 * one that may not make it otherwise), where ns.h made none. 0 or -errno,
 * the call in *op.
 */
int mountns_unshare(enum op *op);

/*
 * What of a view no request changes, made ahead by a job's init in its own
 * mount and PID namespaces (ns.h), before the request: the job's /dev
 * (its harmless nodes, links, ptys, /dev/shm and mqueue; still writable,
 * for the spec's devices) and its /proc, each a detached tree to be
 * attached where mountns_apply would make it. -1 where it was not made:
 * mountns_apply then makes it, and says what fails. The overlay of /tmp
 * is made ahead apart (it depends on a private tmp the helper made for
 * this init): mountns_tmp_overlay, into tmp.
 */
struct mountns_ready {
	int dev;
	int proc;
	int tmp;   /* the overlay of /tmp (mountns_tmp_overlay), or -1 */
};

void mountns_ready_make(struct mountns_ready *ready);
void mountns_ready_close(struct mountns_ready *ready);

/*
 * The view, made in the caller's mount namespace, which must be its own
 * (mountns_unshare, or ns.h's), with what ready holds (NULL: nothing
 * made ahead; closed, and -1, once used). Returns 0 or -errno, and the
 * call that failed in *failed (NULL: not wanted); on error the caller
 * must not exec. -ESTALE: a tree is no longer the directory the helper
 * checked.
 */
int mountns_apply(const struct mountns_view *view,
    struct mountns_ready *ready, enum op *failed);

/*
 * An overlay with the caller's /tmp beneath and the tree's "u" and "w"
 * (which must exist) above, made but not attached: its descriptor
 * (fsmount), or -errno (-ESTALE: not the directory the helper checked).
 * In a mount namespace of the caller's own, with /proc.
 */
int mountns_tmp_overlay(const struct mountns_tree *tmp);

/*
 * What the overlay made in the work layer "w" of the private tmp tmp (a
 * directory descriptor), once it is unmounted: "w/work" and, a volatile
 * overlay's, its "incompat/volatile/dirty" (made mode 0; made 0700 to be
 * entered, as their owner). "w" itself stays. Nothing is resolved through
 * a link. 0 (none there too), or -errno of "w/work"'s removal.
 */
int mountns_work_remove(int tmp);

/*
 * A private tmp that holds nothing of the job's (the trees a view made
 * in it unmade, or the job's own files gone), removed from the helper:
 * where it was made with the host's /tmp beneath, what the overlay left
 * in its work layer and the two layers, first. Nothing is resolved
 * through a link. 0 or -1 and errno (of the last rmdir).
 */
int mountns_tmp_rmdir(const char *tmp);

/*
 * A private tmp beneath base (the helper's tmp base) with an overlay's two
 * layers made in it, empty, as the caller: its path malloc'd into *path,
 * and its stat. 0 or -errno (*path NULL).
 */
int mountns_tmp_make(const char *base, char **path, struct stat *st);

/*
 * The directories the view made in the private tmp for path (beneath the
 * host's /tmp) to be seen there again, removed from the helper once the
 * job is settled: tmp is that directory, opened; each of path's
 * components is opened beneath it without following a link and removed,
 * deepest first, while empty. Returns 0 once all are gone, else -errno of
 * the first that is not (-ENOTEMPTY: the job left something there;
 * -ENOTDIR: a link or a file in its place, left alone; -EINVAL: a
 * path not beneath /tmp or not canonical).
 */
int mountns_unmake(int tmp, const char *path);

#endif
