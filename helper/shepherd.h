/*
 * The shepherd: one small process per job, forked by the helper. It makes
 * the job's process group with its own pid, forks the job into it, leaves
 * it, and reaps the job (and, on Linux as a subreaper, every orphan of it).
 *
 * Why a shepherd: on Linux a zombie keeps its process group alive, so
 * kill(-pgid, 0) cannot tell "only the unreaped leader is left" from "a
 * descendant is still running". Reaping the leader first frees its pid, and
 * then the pgid could be recycled before a cleanup kill. The group's id is
 * the shepherd's pid instead: it cannot be reused while the shepherd lives,
 * and the helper does not reap the shepherd until the job is settled.
 *
 * On Linux it is also a child subreaper, so every descendant of the job
 * that outlives its parent comes back to it, in the group or not (setsid,
 * double fork): once the job has exited, "the shepherd has no children"
 * proves nothing of the job is left. If something is, it sweeps: kills its
 * children (which are its own, so their pids cannot be recycled under the
 * kill), reaps them, and repeats until none is left.
 *
 * It reports to the helper over a socketpair and exits when the helper
 * closes its end; if the helper dies first, it kills the group on the way.
 * Asked to, it removes the job's fresh scratch root first: it is the one
 * process with time for a tree of any size.
 */
#ifndef CONFINE_SHEPHERD_H
#define CONFINE_SHEPHERD_H

#include <stdint.h>
#include <sys/resource.h>
#include <sys/types.h>

#include "helper/child.h"
#include "helper/sys.h"

#define SHEP_REC_LEN 56

enum shep_type {
	SHEP_EXEC_OK = 1,      /* pid: the job exec'd */
	SHEP_EXEC_FAILED = 2,  /* pid, step, err: a step before exec failed */
	SHEP_EXITED = 3,       /* status, rusage, wall: the job was reaped */
	SHEP_WAIT_FAILED = 4,  /* err: the job could not be waited for */
	SHEP_SETUP_FAILED = 5, /* err: no job was started */
	SHEP_SWEPT = 6,        /* status: how many leftovers it killed */
	SHEP_REMOVED = 7,      /* err: the fresh root is gone (0) or not */
	SHEP_FORKED = 8,       /* pid: the job is in its group, we are out */
};

/* What the helper may ask of the shepherd, one byte, before it closes. */
#define SHEP_CMD_REMOVE 'R'    /* remove plan->remove_root */

struct shep_rec {
	enum shep_type type;
	pid_t pid;
	int status;
	int err;
	enum confine_step step;
	int leftovers;         /* EXITED: something of the job outlived it */
	int64_t wall_us;
	int64_t user_us;
	int64_t sys_us;
	int64_t max_rss_kib;
};

void shep_rec_encode(const struct shep_rec *r, unsigned char buf[SHEP_REC_LEN]);
/* Returns -EBADMSG for a type it does not know. */
int shep_rec_decode(const unsigned char buf[SHEP_REC_LEN], struct shep_rec *r);

/* An EXITED record of a reaped job: its status and usage. */
void shep_rec_exited(struct shep_rec *r, int status, const struct rusage *ru,
    int64_t wall_us);

/*
 * Removes a fresh root and a private tmp (either NULL for none) as become
 * (NULL: as we are), and reports SHEP_REMOVED on ctl. In a process of its
 * own: it changes the credentials it runs with.
 */
void shepherd_remove(int ctl, const struct ident *become,
    const struct ident *self, const char *root, const char *tmp);

_Noreturn void shepherd_main(const struct child_plan *plan, int ctl,
    const struct job_sys *sys);

#endif
