/* Reading /proc/self/mountinfo: its escapes, and which mount covers a path. */
#ifndef CONFINE_MOUNTINFO_H
#define CONFINE_MOUNTINFO_H

#include <stddef.h>

/* A field's octal escapes (\040 for a space) undone, in place. */
void mountinfo_unescape(char *s);

/*
 * How much of path the mount point covers (path is point, or lies
 * beneath it): point's length, 1 for "/", 0 when it does not.
 */
size_t mountinfo_covers(const char *point, const char *path);

#endif
