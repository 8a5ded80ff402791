/*
 * The client's launch, apart from its job table: starting a helper
 * process, or reaching a running one, and reaping one it started. Each
 * failure is said (src/client/errmsg.h) and returned as -errno.
 */
#ifndef CONFINE_LAUNCH_H
#define CONFINE_LAUNCH_H

#include <stdbool.h>
#include <sys/types.h>

#ifndef CONFINE_HELPER_DEFAULT
#define CONFINE_HELPER_DEFAULT "/usr/local/libexec/confine-helper"
#endif

/* The helper binary: given, else $CONFINE_HELPER, else the default. */
int launch_find(const char *given, char **out);

/*
 * posix_spawn the helper at path with one end of a socketpair on its
 * fd 3, stdin and stdout /dev/null, signals default and unblocked, and of
 * the host's environment only TMPDIR. *fd is the other end.
 */
int launch_spawn(const char *path, pid_t *pid, int *fd);

/*
 * The helper the library carries, exec'd from memory (Linux); elsewhere
 * the installed one at path (NULL: none found). Either way a fresh
 * process, never a copy of the host.
 */
int launch_embedded(const char *path, pid_t *pid, int *fd);

/* A running helper's socket. */
int launch_connect(const char *socket_path, int *fd);

#endif
