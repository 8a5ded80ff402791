/*
 * The calls of a job's setup, named: when one fails, the job is refused
 * or fails naming the layer it belongs to and the call, with its errno,
 * so that a refusal says what could not be applied and why (op_hint says
 * what the user can do about it).
 */
#ifndef CONFINE_OP_H
#define CONFINE_OP_H

#include <stddef.h>

enum op {
	OP_NONE = 0,
	OP_SETSID,
	OP_SIGMASK,
	OP_CGROUP_JOIN,
	OP_STDIO,
	OP_SETGROUPS,
	OP_SETRESGID,
	OP_SETFSUID,
	OP_SETRESUID,
	OP_UNSHARE_MOUNT,
	OP_UNSHARE_USER,
	OP_ID_MAP,
	OP_OPEN_TREE,
	OP_MOUNT_SETATTR,
	OP_MOVE_MOUNT,
	OP_MOUNTPOINT,
	OP_CAPBSET_DROP,
	OP_CAPSET,
	OP_SCRATCH_ACCESS,
	OP_CHDIR,
	OP_NO_NEW_PRIVS,
	OP_LANDLOCK_CREATE,
	OP_LANDLOCK_ADD_RULE,
	OP_LANDLOCK_RESTRICT,
	OP_SECCOMP,
	OP_PROGRAM,
	OP_SETRLIMIT,
	OP_PDEATHSIG,
	OP_EXECVE,
	OP_CLONE_INIT,        /* the job's init, in its PID namespace */
	OP_UNSHARE_NS,        /* its mount, network, IPC, UTS namespaces */
	OP_LO_UP,
	OP_MOUNT_PROC,
	OP_MOUNT_DEV,
	OP_MOUNT_DEVPTS,
	OP_MOUNT_SHM,
	OP_SECCOMP_LISTENER,  /* its listener, sent to its init */
	OP_SUPERVISE,         /* the init taking the listener */
	OP_LANDLOCK_ABI,      /* the helper's probe, before any job */
	OP_MOUNT_TMP,         /* its /tmp, an overlay of the host's */
	OP_LAST = OP_MOUNT_TMP
};

/* "mount namespace", "landlock"...; "" for OP_NONE or one out of range. */
const char *op_layer(enum op op);
/* "unshare(CLONE_NEWNS)", "landlock_restrict_self"...; "" likewise. */
const char *op_call(enum op op);

/*
 * What the user can do when op failed with err here, in words, or "":
 * read from the machine (its sysctls, whether it is a container), so
 * only in the helper, never after fork.
 */
const char *op_hint(enum op op, int err);

/*
 * A refusal in one line, into buf: why, and where op names a call, "CALL
 * failed: ERROR" and the hint. What the helper sends and what confine-run
 * says running its own job, alike.
 */
void op_message(char *buf, size_t len, const char *why, enum op op, int err);

#endif
