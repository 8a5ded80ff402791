/*
 * The job's namespaces (Linux): each job gets private copies of what it
 * may use, so that using them harms no one. Its init (the shepherd) is
 * cloned into a PID namespace of its own, and in a user namespace mapping
 * only its own uid and gid where the helper is not root (which may not
 * make the others without one); it then makes the job's mount, network
 * (only lo, up), IPC and UTS namespaces, which the job inherits.
 *
 * Why the init is ours and not the job: when the first process of a PID
 * namespace exits, the kernel kills everything else in it, before anyone
 * could see what was left. The job's own process is the namespace's second
 * (pid 2): when it exits its init sees, and says, whether anything of it
 * is left, so a descendant that outlived it still makes it Uncertain.
 */
#ifndef CONFINE_NS_H
#define CONFINE_NS_H

#include <stdbool.h>
#include <sys/types.h>

#include "helper/backend/op.h"

/*
 * Clones the caller into the job's init: a child in a new PID namespace
 * (and user namespace, with userns), returning 0 in the child, its pid
 * in the parent, -1 with errno on failure. fork()'s semantics otherwise:
 * the child runs on, with a copy of the memory; as sigpipe_fork, it lets
 * go of the caller's self-pipe (src/core/sigpipe.h) before any signal reaches
 * it.
 */
pid_t ns_clone_init(bool userns);

/*
 * In the init, first of all: a fresh user namespace's maps, the init's
 * own uid and gid (outside) to themselves, nothing else (setgroups
 * denied). uid and gid are the helper's, read before the clone.
 */
int ns_map_self(uid_t uid, gid_t gid, enum op *op);

/*
 * In the init: the job's mount, network, IPC and UTS namespaces, and the
 * network's loopback up. 0 or -errno, the call in *op.
 */
int ns_enter(enum op *op);

#endif
