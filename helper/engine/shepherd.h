/*
 * The shepherd: one small process per job, forked by the helper, which
 * starts the job and reaps it (and, on Linux as a subreaper, every orphan
 * of it).
 *
 * On Linux the job leads a session and a group of its own (so that a
 * terminal it is lent is never its controlling one), and the shepherd is
 * a child subreaper: every descendant of the job that outlives its parent
 * comes back to it, in the group or not (setsid, double fork), so once the
 * job has exited, "the shepherd has no children" proves nothing of the job
 * is left, in its group or out of it (only its descendants can join its
 * session's groups). If something is, it sweeps: kills its children
 * (which are its own, so their pids cannot be recycled under the kill),
 * reaps them, and repeats until none is left. The group's id is the job's
 * pid, which is free to be recycled once the job is reaped: so the helper
 * never signals the group itself; it asks the shepherd (SHEP_CMD_TERM,
 * SHEP_CMD_KILL), which knows when it reaped the job.
 *
 * Where kill(-pgid, 0) is the one proof (macOS, no subreaper), the group
 * is the shepherd's instead: it makes it with its own pid, forks the job
 * into it and leaves it. On Linux a zombie keeps its group alive, so the
 * proof could not tell "only the unreaped leader is left" from "a
 * descendant is still running", and reaping the leader first would free
 * its pid for recycling before a cleanup kill; the shepherd's pid cannot
 * be reused while it lives, and the helper reaps it only once the job is
 * settled.
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

#include "helper/engine/child.h"
#include "helper/engine/report.h"
#include "helper/engine/sys.h"

#define SHEP_REC_LEN 60

/* What the helper may ask of the shepherd, one byte, before it closes. */
#define SHEP_CMD_REMOVE 'R'    /* remove plan->remove_root */
/*
 * Where the job leads a session of its own (plan->own_session), only we
 * may signal its group: its id is the job's pid, held while the job is
 * not reaped, and only we know when it is. SIGKILL kills our children
 * too (those that left the group); each is answered with SIGNALLED.
 */
#define SHEP_CMD_TERM 'T'
#define SHEP_CMD_KILL 'K'

/* A report as the shepherd sends it (report.h), and as the helper reads it. */
void shep_rec_encode(const struct job_report *r, unsigned char buf[SHEP_REC_LEN]);
/* Returns -EBADMSG for a type it does not know. */
int shep_rec_decode(const unsigned char buf[SHEP_REC_LEN], struct job_report *r);

/*
 * Removes a fresh root and a private tmp (either NULL for none) as become
 * (NULL: as we are), their absolute paths resolved beneath at (a
 * directory, or AT_FDCWD), and reports REP_REMOVED on ctl. In a process of its
 * own: it changes the credentials it runs with.
 */
void shepherd_remove(int ctl, const struct ident *become,
    const struct ident *self, int at, const char *root, const char *tmp);

/*
 * What a job's init does first, which no request changes (Linux): in a
 * user namespace of its own (userns), its maps (ns.h: uid and gid are the
 * helper's); the host's / and /proc opened; its mount, network, IPC and
 * UTS namespaces made. err is 0, or the errno of the call that failed
 * (op), to be reported once the job's request is known. Then, where it
 * is made before the request, shepherd_prepare_view: the job's /dev and
 * /proc (mountns.h's mountns_ready; dev and proc are -1 where not made).
 */
struct init_prep {
	int host_root;
	int host_proc;
	int dev;
	int proc;
	int tmp;     /* mountns_ready's */
	int err;
	enum op op;
};

void shepherd_prepare(struct init_prep *pr, bool userns, uid_t uid, gid_t gid);
void shepherd_prepare_view(struct init_prep *pr);
int shepherd_view(const struct child_plan *plan, const struct init_prep *pr,
    enum op *op);

/*
 * Runs the job of plan as its shepherd (or, with plan->in_init, its init,
 * which first does what pr says was prepared, or all of it with pr NULL),
 * reporting on ctl; never returns.
 */
_Noreturn void shepherd_main(const struct child_plan *plan, int ctl,
    const struct job_sys *sys, const struct init_prep *pr);

#endif
