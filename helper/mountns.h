/*
 * The job's own view of the file system (Linux): a private mount namespace
 * in which every mount is read-only and nosuid, except the scratch root,
 * which is a read-write, nodev, nosuid copy of itself. The kernel then
 * refuses every change to an inode outside the scratch root, its content
 * and its metadata alike (mode, owner, times, extended attributes), with
 * EROFS, whatever the job's uid and whatever Landlock mediates; and no
 * device node beneath the scratch root opens.
 *
 * Made in the job's process, after fork and before Landlock (which forbids
 * changing mounts once applied). A process that may not make a mount
 * namespace (not root, or root of no user namespace) makes a user
 * namespace first, with its own uid and gid mapped to themselves: nothing
 * else is mapped, so it gains nothing outside it.
 */
#ifndef CONFINE_MOUNTNS_H
#define CONFINE_MOUNTNS_H

#include <sys/types.h>

struct mountns_root {
	const char *path;   /* canonical, absolute */
	dev_t dev;          /* what the helper checked: the copy must be it */
	ino_t ino;
};

/*
 * Returns 0 or -errno; on error the caller must not exec. -ESTALE: the
 * scratch root is no longer the directory the helper checked.
 */
int mountns_apply(const struct mountns_root *root);

#endif
