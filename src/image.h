/*
 * The helper the library carries (Linux): confine-helper's image, built
 * with the library and linked into it, run from a sealed memfd. So the
 * library needs no installed binary, and its helper is never a copy of
 * the host (a fork of a large or threaded host is slow, or unsafe).
 */
#ifndef CONFINE_IMAGE_H
#define CONFINE_IMAGE_H

#include <stddef.h>

/* Not the library's API: in no symbol table the library exports. */
#define CONFINE_HIDDEN __attribute__((visibility("hidden")))

/* tools/image_c.sh's output, in //helper:image. */
extern CONFINE_HIDDEN const unsigned char image_bytes[];
extern CONFINE_HIDDEN const size_t image_len;

/*
 * A path that execs the image, "/proc/self/fd/N", valid in this process
 * and in a child it spawns (N is close-on-exec, and above 9 so that the
 * spawn's own file actions leave it alone). Made once per process, then
 * the same; thread-safe. Returns 0, or -errno with nothing made.
 */
int image_path(const char **path);

#endif
