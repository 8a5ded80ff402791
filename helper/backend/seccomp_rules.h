/*
 * The rules of the Linux backend's seccomp filter (seccomp.h says
 * what it refuses), compiled with libseccomp for this architecture. Only
 * the build (seccomp_gen) and a test call it: helpers load the program it
 * gave when they were built.
 */
#ifndef CONFINE_SECCOMP_RULES_H
#define CONFINE_SECCOMP_RULES_H

#include <linux/filter.h>

#include "helper/backend/seccomp_kind.h"

/* The filter of a kind. *insns is malloc'd. Returns 0 or -errno. */
int seccomp_compile(enum seccomp_kind kind, struct sock_filter **insns,
    unsigned short *count);

#endif
