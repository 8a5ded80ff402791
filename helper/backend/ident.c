#include <errno.h>
#include <grp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/fsuid.h>
#include <sys/syscall.h>
#endif
#ifdef __APPLE__
#include <sys/ucred.h>
#include <sys/un.h>
#endif

#include "helper/backend/ident.h"

/* Supplementary groups without the primary gid (and without repeats). */
static void
tidy(struct ident *id)
{
	size_t i, j, n = 0;

	for (i = 0; i < id->ngroups; i++) {
		if (id->groups[i] == id->gid)
			continue;
		for (j = 0; j < n && id->groups[j] != id->groups[i]; j++)
			;
		if (j == n)
			id->groups[n++] = id->groups[i];
	}
	id->ngroups = n;
}

int
ident_self(struct ident *id)
{
	int n;

	memset(id, 0, sizeof(*id));
	id->pid = getpid();
	id->uid = geteuid();
	id->gid = getegid();
	n = getgroups(IDENT_MAX_GROUPS, id->groups);
	if (n < 0)
		return errno == EINVAL ? -E2BIG : -errno;
	id->ngroups = (size_t)n;
	tidy(id);
	return 0;
}

int
ident_peer(int fd, struct ident *id)
{
	memset(id, 0, sizeof(*id));
#if defined(__linux__)
	struct ucred uc;
	socklen_t len = sizeof(uc);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &uc, &len) != 0)
		return -errno;
	id->pid = uc.pid;
	id->uid = uc.uid;
	id->gid = uc.gid;
	len = (socklen_t)sizeof(id->groups);
	if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, id->groups, &len) != 0)
		return errno == ERANGE ? -E2BIG : -errno;
	id->ngroups = len / sizeof(gid_t);
#elif defined(__APPLE__)
	struct xucred xu;
	socklen_t len = sizeof(xu);
	int i;

	if (getsockopt(fd, SOL_LOCAL, LOCAL_PEERCRED, &xu, &len) != 0)
		return -errno;
	if (xu.cr_version != XUCRED_VERSION || xu.cr_ngroups < 1)
		return -EPROTO;
	id->uid = xu.cr_uid;
	id->gid = xu.cr_groups[0];  /* the effective gid comes first */
	for (i = 1; i < xu.cr_ngroups; i++)
		id->groups[id->ngroups++] = xu.cr_groups[i];
#else
	if (getpeereid(fd, &id->uid, &id->gid) != 0)
		return -errno;
#endif
	tidy(id);
	return 0;
}

static bool
has_group(const struct ident *id, gid_t g)
{
	size_t i;

	if (id->gid == g)
		return true;
	for (i = 0; i < id->ngroups; i++)
		if (id->groups[i] == g)
			return true;
	return false;
}

/* Every group of a is one of b's. */
static bool
groups_within(const struct ident *a, const struct ident *b)
{
	size_t i;

	if (!has_group(b, a->gid))
		return false;
	for (i = 0; i < a->ngroups; i++)
		if (!has_group(b, a->groups[i]))
			return false;
	return true;
}

bool
ident_same(const struct ident *a, const struct ident *b)
{
	return a->uid == b->uid && a->gid == b->gid &&
	    a->ngroups == b->ngroups && groups_within(a, b);
}

int
ident_admit(const struct ident *self, const struct ident *peer,
    bool *become, const char **why)
{
	*become = false;
	if (ident_same(self, peer))
		return 0;
	if (self->uid == 0) {
		*become = true;
		return 0;
	}
	/* Not root: its own credentials or nothing, and never more. */
	if (peer->uid != self->uid) {
		*why = "this helper is not root: it runs jobs only for its own uid";
		return -EPERM;
	}
	if (!groups_within(self, peer)) {
		*why = "this helper has a group its client lacks: it cannot run "
		    "the client's jobs with less";
		return -EPERM;
	}
	return 0;
}

int
ident_enter(const struct ident *id, const struct ident *self)
{
	int err;

	if (setgroups((int)id->ngroups, id->groups) == 0 &&
	    setegid(id->gid) == 0 && seteuid(id->uid) == 0)
		return 0;
	err = errno;
	ident_leave(self);
	return -err;
}

void
ident_leave(const struct ident *self)
{
	if (seteuid(self->uid) != 0 || setegid(self->gid) != 0 ||
	    setgroups((int)self->ngroups, self->groups) != 0)
		abort();
}

/*
 * Raw system calls on Linux: the C library's wrappers would signal every
 * thread to change with us, and this process shares the memory of a
 * suspended parent.
 */
int
ident_start(const struct ident *id, enum op *op)
{
	*op = OP_SETGROUPS;
#ifdef __linux__
	if (syscall(SYS_setgroups, id->ngroups, id->groups) != 0)
		return -errno;
	*op = OP_SETRESGID;
	if (syscall(SYS_setresgid, id->gid, id->gid, id->gid) != 0)
		return -errno;
	/* setfsuid says only what was before: ask again to know it took. */
	*op = OP_SETFSUID;
	(void)syscall(SYS_setfsuid, id->uid);
	if ((uid_t)syscall(SYS_setfsuid, (uid_t)-1) != id->uid)
		return -EPERM;
#else
	if (setgroups((int)id->ngroups, id->groups) != 0)
		return -errno;
	*op = OP_SETRESGID;
	if (setgid(id->gid) != 0)
		return -errno;
#endif
	*op = OP_NONE;
	return 0;
}

int
ident_revert(const struct ident *self)
{
#ifdef __linux__
	if (syscall(SYS_setgroups, self->ngroups, self->groups) != 0 ||
	    syscall(SYS_setresgid, self->gid, self->gid, self->gid) != 0)
		return -errno;
	(void)syscall(SYS_setfsuid, self->uid);
	return (uid_t)syscall(SYS_setfsuid, (uid_t)-1) == self->uid ? 0 : -EPERM;
#else
	if (setgroups((int)self->ngroups, self->groups) != 0 ||
	    setgid(self->gid) != 0)
		return -errno;
	return 0;
#endif
}

int
ident_finish(const struct ident *id, enum op *op)
{
	*op = OP_SETRESUID;
#ifdef __linux__
	if (syscall(SYS_setresuid, id->uid, id->uid, id->uid) != 0)
		return -errno;
	/* No way back: a saved root uid would let the job return to it. */
	if (id->uid != 0 && syscall(SYS_setuid, 0) == 0)
		return -EPERM;
#else
	if (setuid(id->uid) != 0)
		return -errno;
	if (id->uid != 0 && setuid(0) == 0)
		return -EPERM;
#endif
	*op = OP_NONE;
	return 0;
}
