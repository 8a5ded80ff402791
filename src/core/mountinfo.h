/* Reading /proc/self/mountinfo: its escapes, and which mount covers a path. */
#ifndef CONFINE_MOUNTINFO_H
#define CONFINE_MOUNTINFO_H

#include <stdbool.h>
#include <stddef.h>

/* One line of /proc/self/mountinfo, its paths unescaped. */
struct mountinfo_entry {
	const char *root;    /* of the mount, in its file system */
	const char *point;   /* where it is mounted */
	const char *opts;    /* the mount's own: rw,nosuid,... */
	const char *type;    /* the file system's: ext4, cgroup2, ... */
	const char *source;
	const char *super;   /* the super block's options */
};

/*
 * Each mount this process sees, given to fn with arg in the order listed.
 * fn's nonzero stops the walk and is returned. Else 0, or -errno: -EIO
 * for a line not read whole (never seen: no mount is passed over then).
 * fn may change mounts meanwhile; the kernel lists each line as it is
 * then.
 */
int mountinfo_each(int (*fn)(const struct mountinfo_entry *, void *),
    void *arg);

/* Whether a comma-separated list (a mount's options) names name, whole. */
bool mountinfo_lists(const char *list, const char *name);

/* A field's octal escapes (\040 for a space) undone, in place. */
void mountinfo_unescape(char *s);

/*
 * How much of path the mount point covers (path is point, or lies
 * beneath it): point's length, 1 for "/", 0 when it does not.
 */
size_t mountinfo_covers(const char *point, const char *path);

#endif
