/*
 * The self-pipe for signals, one per process (the helper's loop, a job's
 * shepherd or init, confine-run): each signal given writes its number, as
 * it arrives, as one byte into a pipe whose read end a poll loop watches.
 */
#ifndef CONFINE_SIGPIPE_H
#define CONFINE_SIGPIPE_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/*
 * The pipe made (both ends non-blocking and close-on-exec) and a handler
 * put on each of sigs, with sa_flags. A full pipe drops the byte: the
 * loop is behind, and a wake-up is pending already. SIGPIPE is ignored
 * too: a write's EPIPE is an error to read, never a death. Nothing is
 * unblocked here: a caller that blocked some unblocks them when its loop
 * is ready. Returns the read end, or -errno. Made again (in a process
 * forked from one that had it), the new pipe is the one written.
 */
int sigpipe_open(const int *sigs, size_t n, int sa_flags);

/*
 * Each signal number read from the pipe, to fn with arg (fn NULL: thrown
 * away), until it is empty. A signal that arrived twice may come once.
 */
void sigpipe_drain(int fd, void (*fn)(int sig, void *arg), void *arg);

/* Both ends closed; signals that arrive after it write nowhere. */
void sigpipe_close(int fd);

/*
 * Around a fork (or clone) of a process that has the pipe: every signal
 * held from before it (sigpipe_hold, *old the mask to go back to) until
 * the child has let go of the pipe (sigpipe_release(true, old), its first
 * step). A signal for the child then writes nowhere: never a byte into
 * its parent's pipe, as if the parent had had that signal, nor, once the
 * child has closed the parent's descriptors, into whatever took that
 * number. The parent calls sigpipe_release(false, old) after the fork,
 * whether it made a child or not.
 */
void sigpipe_hold(sigset_t *old);
void sigpipe_release(bool child, const sigset_t *old);
/* fork() between the two: what a process that has the pipe forks with. */
pid_t sigpipe_fork(void);
/*
 * The same with the clone system call itself, fork()'s way (no stack
 * given: the child runs on a copy of ours), flags | SIGCHLD: for a child
 * in new namespaces (CLONE_NEWPID, CLONE_NEWUSER...), or one that may
 * make them. Not the C library's fork: its (or a sanitizer's) may leave
 * the child a thread of its own, and a process of two threads is refused
 * CLONE_NEWUSER. Linux only.
 */
#ifdef __linux__
pid_t sigpipe_clone(unsigned long flags);
#endif

#endif
