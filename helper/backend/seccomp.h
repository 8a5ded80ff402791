/*
 * The seccomp half of the Linux backend: one filter, loaded in each job
 * with one call, so nothing is allocated after fork. It is the rules of
 * seccomp_rules.c here (docs/linux-contract.md's seccomp table says why
 * each), compiled by libseccomp when the helper was built, behind a few
 * instructions of ours that refuse every personality but Linux's own.
 */
#ifndef CONFINE_SECCOMP_H
#define CONFINE_SECCOMP_H

#include <stdbool.h>
#include <stddef.h>

#include "helper/backend/seccomp_kind.h"

struct seccomp_prog {
	const void *insns;    /* struct sock_filter[] */
	unsigned short count;
	bool listener;        /* its notifications go to a listener */
};

/* The program of a kind the helper was built with: never empty. */
void seccomp_program(enum seccomp_kind kind, struct seccomp_prog *prog);

/*
 * In the job's process, with no_new_privs set. Returns 0 or -errno; for a
 * program with a listener, its descriptor in *listener (else -1).
 */
int seccomp_apply(const struct seccomp_prog *prog, int *listener);

#endif
