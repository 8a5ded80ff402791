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
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "helper/op.h"

/*
 * Whether this process can give jobs their namespaces: a child cloned as
 * a job's init would be, which makes the others and exits. 0, or -errno
 * with the call that failed in *op. A few hundred microseconds, once.
 */
int ns_probe(enum op *op);

/*
 * Clones the caller into the job's init: a child in a new PID namespace
 * (and user namespace, with userns), returning 0 in the child, its pid
 * in the parent, -1 with errno on failure. fork()'s semantics otherwise:
 * the child runs on, with a copy of the memory.
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

/*
 * Namespaces made before the request (issue 35): a holder, a child of the
 * helper cloned into a network namespace (its loopback up), an IPC and a
 * UTS namespace of its own, which then waits. A job's init joins them
 * (ns_join) in place of making its own, and says so; the holder then
 * exits. Each holder's namespaces are joined once, by one init, and
 * nothing else ever runs in them before it: they are as fresh as the ones
 * ns_enter makes. Only where the helper is root: an init in a user
 * namespace of its own could not join namespaces that another one owns.
 */
struct ns_held {
	pid_t pid;     /* the holder, our child; -1: none */
	int pidfd;     /* setns(2) joins its namespaces through it */
	int ready;     /* reads a byte once its loopback is up; EOF: it failed */
	int release;   /* a byte written: it exits */
};

#define NS_HELD_NONE { -1, -1, -1, -1 }

/* A holder's name (comm), as ps(1) shows it. */
#define NS_HOLDER_NAME "confine-holder"

/*
 * Clones a holder into *h. 0, or -errno with *h empty. The holder dies
 * with us (PR_SET_PDEATHSIG), and keeps no descriptor of ours but its two
 * pipes.
 */
int ns_hold(struct ns_held *h);

/*
 * The helper's copies closed, *h emptied. With kill, the holder is killed
 * first: one that was never given to an init. The caller reaps it.
 */
void ns_held_close(struct ns_held *h, bool kill);

/*
 * In the init, in place of ns_enter: the holder's network, IPC and UTS
 * namespaces joined once it is ready, a mount namespace of the init's own
 * made, the holder released and the descriptors closed. A holder that
 * failed is not joined: the namespaces are then made as ns_enter makes
 * them, with *joined false. 0 or -errno, the call in *op.
 */
int ns_join(struct ns_held *h, bool *joined, enum op *op);

/*
 * The helper's holders, ready for the next inits: how many it keeps
 * follows demand up to a ceiling (serve.c grows and drains it).
 */
#define NS_POOL_MAX 16

struct ns_pool {
	struct ns_held held[NS_POOL_MAX];  /* oldest first */
	size_t n;
	size_t want;         /* how many to keep now */
	size_t ceiling;      /* at most; 0: none are made */
	size_t missed;       /* inits that found none, since the last refill */
	size_t taken;        /* holders given to inits, in all */
	int64_t t_asked;     /* when an init last asked, CLOCK_MONOTONIC ns */
};

/*
 * The oldest holder into *out (the caller closes its copies once the init
 * is cloned), or false: none, counted as a miss. now: clock_ns().
 */
bool ns_pool_take(struct ns_pool *p, struct ns_held *out, int64_t now);

#endif
