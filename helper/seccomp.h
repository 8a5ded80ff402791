/*
 * The seccomp half of the Linux backend: two filters, loaded in each job
 * with one prctl each, so nothing is allocated after fork. The first is
 * the rules of helper/seccomp_rules.c (docs/linux-contract.md's seccomp
 * table says why each), compiled by libseccomp when the helper was built;
 * the second refuses every personality but Linux's own.
 */
#ifndef CONFINE_SECCOMP_H
#define CONFINE_SECCOMP_H

#include <stdbool.h>
#include <stddef.h>

struct seccomp_prog {
	const void *insns;    /* struct sock_filter[] */
	unsigned short count;
};

/*
 * The program the helper was built with, for a job in namespaces of its
 * own (own: its IPC objects are its own copies) or in the host's: never
 * empty.
 */
void seccomp_program(bool own, struct seccomp_prog *prog);

/* In the job's process, with no_new_privs set. Returns 0 or -errno. */
int seccomp_apply(const struct seccomp_prog *prog);

#endif
