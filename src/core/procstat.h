/*
 * A process's figures as /proc gives them to anyone of its uid, read from
 * outside: its memory, CPU time, state, descriptors and children; and the
 * machine's busy time. The one reader of these for the benchmark and the
 * tests (the helper and the client need none of them).
 */
#ifndef CONFINE_PROCSTAT_H
#define CONFINE_PROCSTAT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

long proc_status_kib(pid_t pid, const char *field);   /* VmRSS, VmPTE... */
long proc_rollup_kib(pid_t pid, const char *field);   /* Pss, Private_Dirty */
/* utime, stime, cutime, cstime in microseconds. */
int proc_cpu_us(pid_t pid, int64_t out[4]);
/* The main thread's time on CPU, nanoseconds, from schedstat. */
int64_t proc_oncpu_ns(pid_t pid);
/* Its state letter in /proc/PID/stat (S: asleep in a call), 0 if gone. */
char proc_state(pid_t pid);
/* Open descriptors of pid. */
long proc_fd_count(pid_t pid);
/* CPU time every CPU spent busy, any process or kernel thread. */
int64_t proc_busy_us(void);
/* Children of pid's main thread; returns how many, fills up to max. */
size_t proc_children(pid_t pid, pid_t *out, size_t max);
/* pid's descendants, its children's children too. */
long proc_descendants(pid_t pid);

#endif
