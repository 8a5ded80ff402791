/*
 * The job's own view of the file system (Linux): a private mount namespace
 * in which every mount is read-only and nosuid, except the scratch root,
 * which is a read-write, nodev, nosuid copy of itself, and /tmp, which is
 * the job's private temporary directory (the host's /tmp is out of sight,
 * but for the scratch root, the cwd and the program's directory where they
 * lie beneath it). The kernel then
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

#include "helper/op.h"

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
 * mountns_apply then makes it, and says what fails.
 */
struct mountns_ready {
	int dev;
	int proc;
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
