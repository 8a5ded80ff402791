/*
 * Landlock: writes only beneath the scratch root and to the named device
 * nodes, no TCP bind or connect, no abstract unix sockets or signals that
 * leave the job's domain; and, when the policy narrows them, reads and
 * exec only beneath the writable trees and the readable ones.
 */
#ifndef CONFINE_LANDLOCK_H
#define CONFINE_LANDLOCK_H

#include <stddef.h>
#include <stdint.h>

#include "helper/backend/op.h"
#include "helper/backend/policy.h"

/* Signal scoping arrived in ABI 6; without it a job could kill its helper. */
#define LANDLOCK_MIN_ABI 6
/* The newest ABI whose rights this code knows. */
#define LANDLOCK_KNOWN_ABI 7

struct landlock_plan {
	int abi;
	uint64_t fs_handled;  /* every write-side right the ABI knows */
	uint64_t fs_scratch;  /* beneath the scratch root: all but devices */
	uint64_t fs_file;     /* the subset that applies to a device node */
	uint64_t fs_read;     /* read a file, list a directory, execute */
	uint64_t net_handled;
	uint64_t scoped;
};

/* The running kernel's ABI, or -ENOSYS / -EOPNOTSUPP. */
int landlock_abi(void);

/*
 * Fills in the rights an ABI knows. Returns -ENOTSUP when it is too old for
 * the policy to be applied exactly (the plan is still filled in), else 0.
 */
int landlock_plan(int abi, struct landlock_plan *plan);

/*
 * The rights the plan handles, as words for the enforcement line:
 * "write,refer,truncate,ioctl-dev,tcp,signal,abstract-unix", those of its
 * ABI, and ",read" where reads are narrowed. Truncated to fit n.
 */
void landlock_rights(const struct landlock_plan *plan, bool read_narrow,
    char *buf, size_t n);

/*
 * In the job's process, after fork: no_new_privs, then a ruleset granting
 * plan->fs_scratch beneath the scratch root and plan->fs_file on /dev/null
 * and each device node, then landlock_restrict_self. With reads narrowed
 * the ruleset handles plan->fs_read too, granted with those and on each
 * readable tree (on a file, its file rights). Returns 0 or -errno, and
 * the call that failed in *failed (NULL: not wanted); on error the caller
 * must not exec.
 */
int landlock_apply(const struct landlock_plan *plan, const struct policy *p,
    enum op *failed);

#endif
