/*
 * Confinement policy: one value describing what a job may change, and the
 * Seatbelt profile compiler. Pure logic, no I/O: canonicalising the paths is
 * the helper's job, done before a policy is built.
 *
 * A policy admits writes beneath one scratch root, to /dev/null and to a few
 * named device nodes; everything else is read-only and the network is off.
 * Reads are everywhere, or, narrowed, beneath the writable trees and the
 * readable ones alone.
 */
#ifndef CONFINE_POLICY_H
#define CONFINE_POLICY_H

#include <stdbool.h>
#include <stddef.h>

struct policy {
	const char *scratch;        /* canonical absolute path */
	const char *tmp;            /* the private temporary directory, as the
	                               job sees it; NULL: none */
	const char *const *devices; /* writable device nodes, canonical */
	size_t ndevices;
	bool read_narrow;           /* reads only where the policy says */
	const char *const *readable; /* the trees it may read and run
	                               programs from, canonical; on Linux with
	                               the system trees (policy_system_reads) */
	size_t nreadable;
	bool read_system;           /* Seatbelt: the profile's system trees */
	bool own_dev;               /* Linux: a /dev of the job's own, whose
	                               /dev/shm, ptys and tty are its own to
	                               use */
};

/*
 * The system trees of Linux's CONFINE_READ_SYSTEM (docs/linux-contract.md
 * says why each): resolved by the helper once, those absent left out; an
 * entry with '*' is a glob. NULL-terminated.
 */
extern const char *const policy_system_reads[];

/* The names sandbox-exec -D binds and the profile reads with (param ...). */
#define POLICY_SBPL_SCRATCH "CONFINE_SCRATCH"
#define POLICY_SBPL_TMP "CONFINE_TMP"
#define POLICY_SBPL_DEVICE "CONFINE_DEVICE_"
#define POLICY_SBPL_READ "CONFINE_READ_"

/*
 * Writes the Seatbelt profile for a policy into buf. No path of the
 * policy's is ever part of the text: it depends on the counts of devices
 * and readable trees and on the two read flags alone. Returns its length,
 * or -ENOSPC.
 */
int policy_sbpl_profile(const struct policy *p, char *buf, size_t size);

/*
 * Builds the launcher's argv in one allocation, freed with free():
 *   launcher -p PROFILE -D CONFINE_SCRATCH=... -D CONFINE_TMP=...
 *   [-D CONFINE_DEVICE_n=...] [-D CONFINE_READ_n=...] -- exe argv[1..]
 * CONFINE_TMP is the private temporary directory, or the scratch root
 * again when there is none: the profile's text stays the same.
 * Under sandbox-exec the job's argv[0] is exe, not argv[0].
 * Returns 0 or -ENOMEM.
 */
int policy_sbpl_argv(const struct policy *p, const char *launcher,
    const char *exe, const char *const *argv, size_t argc, char ***out);

#endif
