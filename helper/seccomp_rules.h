/*
 * The rules of the Linux backend's seccomp filter (helper/seccomp.h says
 * what it refuses), compiled with libseccomp for this architecture. Only
 * the build (seccomp_gen) and a test call it: helpers load the program it
 * gave when they were built.
 */
#ifndef CONFINE_SECCOMP_RULES_H
#define CONFINE_SECCOMP_RULES_H

#include <linux/filter.h>
#include <stdbool.h>

/*
 * The filter for a job in namespaces of its own (own, ns.h) or in the
 * host's. *insns is malloc'd. Returns 0 or -errno.
 */
int seccomp_compile(bool own, struct sock_filter **insns,
    unsigned short *count);

#endif
