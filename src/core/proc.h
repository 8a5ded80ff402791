/*
 * Children: reaping them, finding one that has exited, and listing them;
 * and a process's own cgroup. The one reader of these /proc files for the
 * helper, the tests and the benchmark alike.
 */
#ifndef CONFINE_PROC_H
#define CONFINE_PROC_H

#include <stddef.h>
#include <sys/types.h>

/* Reaps pid, retrying on EINTR; status may be NULL. */
void proc_reap(pid_t pid, int *status);
/*
 * Reaps pid, waiting up to timeout_ms for it to exit (woken by its exit
 * where pidfds exist, not by a clock), then killing it: it must not
 * linger. 0 waits not at all.
 */
void proc_reap_within(pid_t pid, int timeout_ms);
/* A child that has exited, left unreaped for the caller; 0 when none. */
pid_t proc_exited_child(void);

/*
 * Every signal's disposition the default: no handler of the process this
 * one was forked from (or shares its memory with) runs here. SIGKILL,
 * SIGSTOP and the C library's own signals refuse, as they may.
 */
void proc_signals_default(void);

/*
 * In a process the helper forks (a shepherd, a guard, a remover): the
 * helper's own handlers reset, and a terminal's signals (Ctrl-C, Ctrl-\,
 * Ctrl-Z, SIGTTIN, SIGTTOU, its hangup) ignored. They go to the
 * terminal's foreground group, which such a process shares with the host
 * that started the helper: the host's to act on; the helper's word is
 * this process's.
 */
void proc_helper_signals(void);

/*
 * Each child of pid's thread tid, as /proc/PID/task/TID/children lists
 * them (a process's children are its threads': tid is the one that made
 * them; pid 0: our own, by /proc/self, with tid as /proc numbers it),
 * given to fn with arg in order while the list is read, however long it
 * is. fn's nonzero stops the list. Returns how many fn was given, or
 * -errno when there is no list to read (no /proc; a kernel without
 * CONFIG_PROC_CHILDREN; not Linux: -ENOSYS).
 */
long proc_children_each(pid_t pid, pid_t tid, int (*fn)(pid_t, void *),
    void *arg);
/*
 * The same, read through proc, a descriptor of a /proc (another PID
 * namespace's than the one mounted at /proc: a job's init reads its
 * host's), or AT_FDCWD for /proc. pid 0 and tid 0: the calling thread's,
 * by /proc/thread-self, numbered as that /proc numbers them.
 */
long proc_children_at(int proc, pid_t pid, pid_t tid,
    int (*fn)(pid_t, void *), void *arg);

/*
 * This process's cgroup in a hierarchy, from /proc/self/cgroup: the v2 one
 * ("0::/path") when controller is NULL, else the v1 hierarchy whose
 * controllers ("N:a,b:/path") name it. 0, -ENOENT when none does,
 * -ENAMETOOLONG when out is short, or -errno.
 */
int proc_own_cgroup(const char *controller, char *out, size_t len);

#endif
