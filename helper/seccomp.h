/*
 * The seccomp half of the Linux backend: socket() refused for every family
 * (socketpair stays allowed), io_uring refused, and the terminal input
 * injection ioctls refused, each with EPERM; a syscall of a foreign
 * architecture kills the process. Built once with libseccomp in the helper,
 * loaded in each job with one prctl, so nothing is allocated after fork.
 */
#ifndef CONFINE_SECCOMP_H
#define CONFINE_SECCOMP_H

#include <stddef.h>

struct seccomp_prog {
	void *insns;          /* struct sock_filter[] */
	unsigned short count;
};

int seccomp_build(struct seccomp_prog *prog);
void seccomp_free(struct seccomp_prog *prog);

/* In the job's process, with no_new_privs set. Returns 0 or -errno. */
int seccomp_apply(const struct seccomp_prog *prog);

#endif
