/* Children: reaping them, and finding one that has exited. */
#ifndef CONFINE_PROC_H
#define CONFINE_PROC_H

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
 * In a process the helper forks (a shepherd, a guard, a remover): the
 * helper's own handlers reset, and a terminal's signals (Ctrl-C, Ctrl-\,
 * Ctrl-Z, SIGTTIN, SIGTTOU, its hangup) ignored. They go to the
 * terminal's foreground group, which such a process shares with the host
 * that started the helper: the host's to act on; the helper's word is
 * this process's.
 */
void proc_helper_signals(void);

#endif
