/*
 * Jobs' inits prepared before their requests (Linux; issue 35). Most of
 * what a job's init does depends on no request: its clone into a PID
 * namespace (and a user namespace, where the helper is not root), its
 * maps, its mount, network (loopback up), IPC and UTS namespaces
 * (shepherd_prepare). A prepared init has done that and waits on its
 * socket. The request's plan then reaches it whole: the helper copies
 * it into memory the two share (mapped before the clone, at the same
 * address in both, so its pointers hold), and sends the descriptors the
 * plan names with a word to go. From there it is any job's init
 * (shepherd_main), with the same settlement, proofs and outcomes.
 *
 * Each is made for one job of this helper and never reused; while it
 * waits it is named PREPARED_NAME, dies with the helper
 * (PR_SET_PDEATHSIG, and its socket's EOF), and holds nothing of the
 * helper's but its socket and its shared page.
 */
#ifndef CONFINE_PREPARED_H
#define CONFINE_PREPARED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "helper/engine/child.h"
#include "helper/backend/mountns.h"
#include "helper/engine/sys.h"

#define PREPARED_NAME "confine-prep"
#define PREPARED_MAX 16

struct prepared {
	pid_t pid;      /* the init, our child; -1: none */
	int ctl;        /* our end of its socket pair (the shepherd's) */
	void *arena;    /* the memory we share with it */
	/*
	 * A private tmp made for its job (path malloc'd; NULL: none), with
	 * the host's /tmp beneath: the init made that overlay ahead (where
	 * it could), for a job that may have it (plan.c). Removed once the
	 * init is gone, unless a job's plan took it.
	 */
	char *tmp;
	struct stat tmp_st;
	int tmp_err;    /* why there is none: -errno */
};

/* A dropped one's tmp, removed once it is reaped (prepared_forget). */
struct prepared_left {
	pid_t pid;
	char *tmp;
};

/*
 * The helper's prepared inits, ready for the next jobs: how many it keeps
 * follows demand up to a ceiling (serve.c grows and drains it).
 */
struct prepared_pool {
	struct prepared held[PREPARED_MAX];  /* oldest first */
	size_t n;
	size_t want;         /* how many to keep now */
	size_t ceiling;      /* at most; 0: none are made */
	size_t missed;       /* jobs that found none, since the last refill */
	size_t taken;        /* given to jobs, in all */
	int64_t t_asked;     /* when a job last asked, CLOCK_MONOTONIC ns */
	/* What each is made with: the helper's ids, and a user namespace. */
	bool userns;
	uid_t uid;
	gid_t gid;
	const struct job_sys *sys;
	/* Where each gets a private tmp with /tmp beneath, else NULL. */
	const char *tmp_base;
	struct prepared_left left[2 * PREPARED_MAX];
	size_t nleft;
};

/*
 * Clones one into *pi, 0 or -errno. pool: what it is made with, and every
 * other one's shared memory, which the new one unmaps. With report, it
 * says on its socket how its preparation went, which prepared_result
 * reads: a probe of what every job's init will do.
 */
int prepared_make(struct prepared *pi, const struct prepared_pool *pool,
    bool report);

/*
 * Waits for what one made with report says: 0, or its preparation's
 * -errno with the call in *op, and then it is gone (reaped, its tmp
 * removed). *overlay: whether it made the overlay of /tmp for its tmp
 * (made with the pool's tmp_base), 0 or -errno.
 */
int prepared_result(struct prepared *pi, enum op *op, int *overlay);

/*
 * Our copies closed and *pi emptied; with kill, it is killed first. Its
 * tmp is the caller's to remove once it is gone, or to give a job.
 */
void prepared_drop(struct prepared *pi, bool kill);

/* Killed, reaped, its tmp removed, and *pi emptied. */
void prepared_discard(struct prepared *pi);

/* What prepared_forget has yet to hear of: reaped now, tmps removed. */
void prepared_fini(struct prepared_pool *p);

/*
 * Every one the pool holds dropped and killed, and with reap waited for
 * and its tmp removed (else the caller's reaping collects them, and
 * prepared_forget removes their tmps); none wanted any more.
 */
void prepared_drain(struct prepared_pool *p, bool reap);

/*
 * The oldest into *out, or false: none, counted as a miss. now:
 * clock_ns().
 */
bool prepared_take(struct prepared_pool *p, struct prepared *out, int64_t now);

/*
 * pid, if it is one of the pool's, forgotten (it died, and its tmp is
 * removed), or one it dropped whose tmp is now removed: true. The
 * caller reaps it.
 */
bool prepared_forget(struct prepared_pool *p, pid_t pid);

/*
 * Gives plan to pi: copied into its memory, its descriptors sent with the
 * word to go. 0, or -errno (-E2BIG: the plan does not fit) with nothing
 * sent: the caller drops it.
 */
int prepared_go(struct prepared *pi, const struct child_plan *plan);

#endif
