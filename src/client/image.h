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

/* tools/image_c.sh's output, in //helper:image_c. */
extern CONFINE_HIDDEN const unsigned char image_bytes[];
extern CONFINE_HIDDEN const size_t image_len;

#define IMAGE_PATH_LEN 32

/*
 * The image in a sealed memfd of its own, *fd (close-on-exec, above 9 so
 * that a spawn's own file actions leave it alone), and the path that
 * execs it, "/proc/self/fd/N": valid in this process and in a child it
 * spawns, until the caller closes *fd, which it does once the helper is
 * spawned. One each start; thread-safe. Returns 0, or -errno with
 * nothing made.
 */
int image_open(char path[IMAGE_PATH_LEN], int *fd);

#endif
