/* Shared by the integration tests: runfiles, scratch roots, captured output. */
#ifndef CONFINE_TESTUTIL_H
#define CONFINE_TESTUTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include <stdarg.h>

/*
 * The deadline for a job whose test reads what it printed first (its pid,
 * its new session): long enough that it has started and said so on a slow
 * machine under a sanitizer. A margin, not a measure; nothing asserts it.
 */
#define TU_DEADLINE_AFTER_START_MS 1500

/*
 * argv for the fixture: "fixture" then the strings of ap up to NULL, at
 * most max - 1 entries in all, NULL-terminated. Returns the count.
 */
size_t tu_fixture_argv(const char **argv, size_t max, va_list ap);

/*
 * TMPDIR set to the test's own directory: the jobs' private tmps are made
 * there (one an Uncertain job keeps goes with the test's directory), and
 * no other test's come and go in it.
 */
void tu_own_tmpdir(void);

/* The absolute path of a file of this workspace's runfiles. */
char *tu_runfile(const char *rel);
/* A fresh directory under $TEST_TMPDIR (or /tmp), canonical. */
char *tu_mkdtemp(const char *prefix);
/*
 * A fresh short directory in /tmp, for unix sockets; or in parent (a
 * confined job's /tmp is its own: what it must see lies elsewhere).
 */
char *tu_sockdir(void);
char *tu_sockdir_in(const char *parent);
/* Removes a socket and its tu_sockdir() directory, and frees both names. */
void tu_rmsock(char *dir, char *sock);
/* path joined with name, allocated. */
char *tu_join(const char *dir, const char *name);
bool tu_exists(const char *path);
/* Where cgroup v2 is mounted (mountinfo), allocated; NULL if nowhere. */
char *tu_v2_mount(void);
/*
 * Moves this process into a fresh cgroup beside its own, in v2 and in the
 * v1 memory and pids hierarchies where they are mounted; left and removed
 * at exit: the helpers it starts then see only each other's cgroups,
 * never another test's (a helper's start ends what dead helpers beside it
 * left running). False without writable hierarchies.
 */
bool tu_own_cgroup(void);
/* True once path is gone, polled for up to ten seconds. */
bool tu_path_gone(const char *path);
/* Whole file, NUL-terminated; *len gets its length. NULL if unreadable. */
char *tu_slurp(const char *path, size_t *len);
/* Reads fd to EOF, NUL-terminated, and closes it. */
char *tu_drain(int fd);
/* Number of entries of a directory, "." and ".." aside; -1 on error. */
int tu_count_entries(const char *dir);
/* Copies a file and makes it executable. */
void tu_copy_exec(const char *from, const char *to);
/* A loopback TCP port that refuses connections: bound, never listening. */
int tu_closed_port(int *fd);
/* True once kill(pid, 0) says ESRCH, polled for up to two seconds. */
bool tu_gone(pid_t pid);
/*
 * A uid of no user that no process has, for tests that need an
 * unprivileged one: RLIMIT_NPROC counts every process of a uid, so
 * "nobody" may already be over a low bound. Each call gives another.
 */
uid_t tu_unused_uid(void);

#endif
