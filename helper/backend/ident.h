/*
 * Whose job it is. A job runs with the credentials of the host that asked
 * for it (the peer of its connection), never with the helper's: a helper
 * run as root for several users lends none of its own authority.
 *
 * A helper whose credentials are the peer's (the usual case: a host and
 * the helper it started) runs jobs as they are. A root helper switches a
 * job to its peer's uid, gid and groups, and checks every path of the
 * spec as the peer, before anything is made. Any other helper refuses a
 * peer whose uid is not its own, or who lacks one of its groups.
 */
#ifndef CONFINE_IDENT_H
#define CONFINE_IDENT_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "helper/backend/op.h"

#define IDENT_MAX_GROUPS 256

struct ident {
	pid_t pid;                       /* for the logs only; 0: unknown */
	uid_t uid;
	gid_t gid;
	size_t ngroups;
	gid_t groups[IDENT_MAX_GROUPS];  /* supplementary, gid not among them */
};

/* The calling process's effective credentials. Returns 0 or -errno. */
int ident_self(struct ident *id);

/*
 * The credentials of a unix socket's peer as they were when it connected
 * (SO_PEERCRED and SO_PEERGROUPS on Linux, LOCAL_PEERCRED on macOS).
 * Returns 0 or -errno: -E2BIG for a peer with more groups than fit.
 */
int ident_peer(int fd, struct ident *id);

/* The same uid, gid and set of supplementary groups (pid aside). */
bool ident_same(const struct ident *a, const struct ident *b);

/*
 * Whether a helper running as self may run jobs for peer: 0 when it may
 * (*become says whether the job must switch to peer's credentials), or
 * -EPERM with *why.
 */
int ident_admit(const struct ident *self, const struct ident *peer,
    bool *become, const char **why);

/*
 * In the helper (one thread), around the checks of a spec: act as id
 * (groups, egid, euid), then as self again (a failed enter leaves it so). Leaving cannot fail short of
 * a broken kernel; if it does, the helper aborts rather than go on with
 * another's credentials. Returns 0 or -errno (then nothing changed).
 */
int ident_enter(const struct ident *id, const struct ident *self);
void ident_leave(const struct ident *self);

/*
 * In the job's process, after fork, as root: the peer's groups and gid,
 * and its uid for file access (Linux: the fsuid, so that root can still
 * make the job's mount namespace, resolving paths as the peer); then
 * ident_finish sets the uid itself, which clears every capability.
 * Returns 0 or -errno, with the call that failed in *op.
 */
int ident_start(const struct ident *id, enum op *op);
/* What ident_start changed, back to self's. 0 or -errno. */
int ident_revert(const struct ident *self);
int ident_finish(const struct ident *id, enum op *op);

#endif
