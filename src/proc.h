/* Children: reaping them, and finding one that has exited. */
#ifndef CONFINE_PROC_H
#define CONFINE_PROC_H

#include <sys/types.h>

/* Reaps pid, retrying on EINTR; status may be NULL. */
void proc_reap(pid_t pid, int *status);
/* A child that has exited, left unreaped for the caller; 0 when none. */
pid_t proc_exited_child(void);

#endif
