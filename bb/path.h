/*
 * The paths of a Buildbarn Run request, checked and joined as text, without
 * touching the file system: pure, tested by tests/bb/path_test.c. The
 * file system's part (symbolic links, existence) is runner.c's.
 *
 * Every path of a request is relative: to the build directory (the input
 * root, the temporary directory, stdout and stderr) or to the input root
 * (the working directory). Each is made canonical the way bb_runner's path
 * builder does it, as text: "." and empty components go, ".." takes the
 * previous component away. One that is absolute, or climbs above its root,
 * is refused: nothing a request names lies outside the build directory.
 */
#ifndef CONFINE_BB_PATH_H
#define CONFINE_BB_PATH_H

#include <stddef.h>

/*
 * rel made canonical into out ("a/./b//../c" is "a/c"; "", "." and "a/.."
 * are "", the root itself). 0, or -EINVAL (absolute, or ".." above the
 * root) or -ENAMETOOLONG, with *why saying which.
 */
int bbpath_clean(const char *rel, char *out, size_t len, const char **why);

/*
 * An absolute path made canonical as text: ".." at "/" stays "/". 0 or
 * -ENAMETOOLONG; -EINVAL when abs is not absolute.
 */
int bbpath_clean_abs(const char *abs, char *out, size_t len);

/*
 * base (absolute, canonical) and rel (canonical, maybe "") as one path:
 * base itself for "". 0 or -ENAMETOOLONG.
 */
int bbpath_join(const char *base, const char *rel, char *out, size_t len);

/*
 * The deepest directory holding both canonical relative paths a and b
 * (b NULL or "": a itself), "" when that is their root.
 */
void bbpath_common(const char *a, const char *b, char *out, size_t len);

/*
 * 1 when canonical path rel is dir or lies beneath it (both relative, or
 * both absolute).
 */
int bbpath_within(const char *rel, const char *dir);

/*
 * argv0 resolved as bb_runner resolves it. With a slash it is a path, from
 * cwd (absolute, canonical) unless absolute; else the first entry of
 * path_var (the request's PATH: ':'-separated, an empty entry meaning cwd,
 * a relative one taken from cwd; no PATH finds nothing) under which
 * is_exe(candidate, arg) says 1. The result, absolute and canonical as
 * text, in out. 0; -ENOENT when no entry has it (or argv0 is empty);
 * -ENAMETOOLONG.
 */
int bbpath_lookup(const char *cwd, const char *path_var, const char *argv0,
    int (*is_exe)(const char *candidate, void *arg), void *arg,
    char *out, size_t len);

#endif
