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
/*
 * Moves this process into a fresh cgroup v2 beneath tu_own_cgroup's,
 * delegated to uid (the directory, its cgroup.procs, cgroup.threads and
 * cgroup.subtree_control are uid's): for a child about to become uid,
 * whose helper then makes its cgroups there, as in any cgroup delegated
 * to it. Removed at the test's exit; false without tu_own_cgroup's.
 */
bool tu_cgroup_for(uid_t uid);
/* Whether tu_own_cgroup moved us: our helpers have cgroups, then. */
bool tu_in_own_cgroup(void);

/*
 * The rest of the test as pid 1 of a fresh pid namespace with a /proc of
 * its own, as Bazel's sandbox runs a sandboxed test: unsandboxed too, its
 * pids are then none of the machine's other processes', and its own do
 * not wrap soon. First in main; the caller's process waits, and exits as
 * the test does.
 */
void tu_own_pids(void);

/*
 * The path a target of both_paths (tests/defs.bzl) runs its jobs on, from
 * CONFINE_TEST_PATH: true for direct (no shepherd: the helper, or the
 * test through the core, starts each job itself), false for the
 * shepherd's. First in main: it moves the test into a cgroup of its own
 * (tu_own_cgroup), where its helpers sweep no other test's cgroups nor
 * another's theirs. Exits, saying why, when the variable is unset or
 * wrong, or when the direct path finds no writable cgroup v2.
 */
void tu_path_setup(void);
bool tu_path_direct(void);
/* The init's path: each job in namespaces of its own (helper/backend/ns.h). */
bool tu_path_init(void);
/*
 * NULL when a job (pid, pgid and its parent's ppid, as it sees them; in
 * a PID namespace not the driver's, own_ns), started by driver, shows the
 * path tu_path_setup read: it leads its own group (and session), as the
 * driver's child directly, else as the shepherd's, else (init) as pid 2
 * of a namespace of its own. Otherwise why not.
 */
const char *tu_path_is(long pid, long pgid, long ppid, long driver,
    bool own_ns);
/* The same from outside the job: its pid, pgid and ppid as we see them. */
const char *tu_path_seen(long pid, long pgid, long ppid, long driver);
/*
 * The same from the fixture's `ids` line (out) and the pid of its writer
 * as we see it, which must agree with the job's result (pid, pgid), and
 * show the job leading its session; on the init's path the line has the
 * ids it sees in its own PID namespace.
 */
const char *tu_path_ids(const char *out, long writer, long pid, long pgid,
    long driver);

/* True once path is gone, polled for up to ten seconds. */
bool tu_path_gone(const char *path);
/* Whole file, NUL-terminated; *len gets its length. NULL if unreadable. */
char *tu_slurp(const char *path, size_t *len);
/* Reads fd to EOF, NUL-terminated, and closes it. */
char *tu_drain(int fd);

/*
 * A job's stdout that says who wrote what: a stream socketpair whose
 * reading end, sv[0], gets each writer's pid with its bytes
 * (SO_PASSCRED), translated into our pid namespace by the kernel, so that
 * a job in a PID namespace of its own (ns.h) is known by the pid we see,
 * not the one it sees. The job gets sv[1].
 */
void tu_cred_pair(int sv[2]);
/*
 * Reads it to its end, and closes it: the text, and for each of its lines
 * the pid of the process that wrote it (0 where it is not ours to see),
 * malloc'd.
 */
char *tu_drain_cred(int fd, pid_t **line_pids, size_t *nlines);
/* One line of it, into line (without its newline): its writer's pid. */
pid_t tu_read_line_pid(int fd, char *line, size_t len);
/* Number of entries of a directory, "." and ".." aside; -1 on error. */
int tu_count_entries(const char *dir);
/* The same, of those whose names start with prefix. */
int tu_count_named(const char *dir, const char *prefix);
/*
 * The name of an entry of dir that starts with prefix and is not skip
 * (NULL: any), malloc'd; NULL when there is none.
 */
char *tu_find_named(const char *dir, const char *prefix, const char *skip);
/* Copies a file and makes it executable. */
void tu_copy_exec(const char *from, const char *to);
/* A loopback TCP port that refuses connections: bound, never listening. */
int tu_closed_port(int *fd);
/* Whether the running kernel is at least major.minor (uname). */
bool tu_kernel_at_least(int major, int minor);
/* A loopback TCP port that accepts them: listening on *fd. */
int tu_listening_port(int *fd);
/* A connection already made to a listener, accepted; -1 when none is. */
int tu_accept_now(int fd);
/* True once kill(pid, 0) says ESRCH, polled for up to ten seconds. */
bool tu_gone(pid_t pid);
/*
 * The same, for pid that may come back to us, its subreaper, as a job's
 * orphan does to its driver on the direct path: reaped once it exits, as
 * the helper's loop reaps every child.
 */
bool tu_reaped(pid_t pid);
/*
 * Whether what a job saw as pid, in the PID namespace whose
 * /proc/self/ns/pid link is ns (it wrote both), is alive: in ours,
 * kill(pid, 0); in one of its own, whether anything of that namespace is
 * but its init (pid 1 there: confine's, not the job's). No polling.
 */
bool tu_job_alive(const char *ns, pid_t pid);
/*
 * A uid of no user that no process has, for tests that need an
 * unprivileged one: RLIMIT_NPROC counts every process of a uid, so
 * "nobody" may already be over a low bound. Each call gives another.
 */
uid_t tu_unused_uid(void);

#endif
