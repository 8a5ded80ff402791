#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "helper/backend/op.h"

static const struct {
	const char *layer, *call;
} ops[] = {
	[OP_NONE] = { "", "" },
	[OP_SETSID] = { "session", "setsid" },
	[OP_SIGMASK] = { "signals", "sigprocmask" },
	[OP_CGROUP_JOIN] = { "cgroup", "write(cgroup.procs)" },
	[OP_STDIO] = { "stdio", "dup2" },
	[OP_SETGROUPS] = { "identity", "setgroups" },
	[OP_SETRESGID] = { "identity", "setresgid" },
	[OP_SETFSUID] = { "identity", "setfsuid" },
	[OP_SETRESUID] = { "identity", "setresuid" },
	[OP_UNSHARE_MOUNT] = { "mount namespace", "unshare(CLONE_NEWNS)" },
	[OP_UNSHARE_USER] = { "user namespace",
	    "unshare(CLONE_NEWUSER|CLONE_NEWNS)" },
	[OP_ID_MAP] = { "user namespace", "write(uid_map, gid_map)" },
	[OP_OPEN_TREE] = { "mount namespace", "open_tree(OPEN_TREE_CLONE)" },
	[OP_MOUNT_SETATTR] = { "mount namespace", "mount_setattr" },
	[OP_MOVE_MOUNT] = { "mount namespace", "move_mount" },
	[OP_MOUNT_TMP] = { "mount namespace", "fsmount(overlay of /tmp)" },
	[OP_MOUNTPOINT] = { "mount namespace", "mkdir(mount point)" },
	[OP_CAPBSET_DROP] = { "capabilities", "prctl(PR_CAPBSET_DROP)" },
	[OP_CAPSET] = { "capabilities", "capset" },
	[OP_SCRATCH_ACCESS] = { "identity", "faccessat(scratch, W_OK)" },
	[OP_CHDIR] = { "cwd", "chdir" },
	[OP_NO_NEW_PRIVS] = { "no_new_privs", "prctl(PR_SET_NO_NEW_PRIVS)" },
	[OP_LANDLOCK_CREATE] = { "landlock", "landlock_create_ruleset" },
	[OP_LANDLOCK_ADD_RULE] = { "landlock", "landlock_add_rule" },
	[OP_LANDLOCK_RESTRICT] = { "landlock", "landlock_restrict_self" },
	[OP_SECCOMP] = { "seccomp", "prctl(PR_SET_SECCOMP)" },
	[OP_PROGRAM] = { "program", "stat(program)" },
	[OP_SETRLIMIT] = { "limits", "setrlimit" },
	[OP_PDEATHSIG] = { "session", "prctl(PR_SET_PDEATHSIG)" },
	[OP_EXECVE] = { "program", "execve" },
	[OP_CLONE_INIT] = { "pid namespace", "clone(CLONE_NEWPID)" },
	[OP_UNSHARE_NS] = { "namespaces",
	    "unshare(CLONE_NEWNS|CLONE_NEWNET|CLONE_NEWIPC|CLONE_NEWUTS)" },
	[OP_LO_UP] = { "network namespace", "ioctl(SIOCSIFFLAGS, lo)" },
	[OP_MOUNT_PROC] = { "mount namespace", "mount(proc)" },
	[OP_MOUNT_DEV] = { "mount namespace", "mount(tmpfs, /dev)" },
	[OP_MOUNT_DEVPTS] = { "mount namespace", "mount(devpts, /dev/pts)" },
	[OP_MOUNT_SHM] = { "mount namespace", "mount(tmpfs, /dev/shm)" },
	[OP_SECCOMP_LISTENER] = { "seccomp",
	    "seccomp(SECCOMP_FILTER_FLAG_NEW_LISTENER)" },
	[OP_SUPERVISE] = { "seccomp", "pidfd_getfd(listener)" },
	[OP_LANDLOCK_ABI] = { "landlock",
	    "landlock_create_ruleset(LANDLOCK_CREATE_RULESET_VERSION)" },
};

const char *
op_layer(enum op op)
{
	return (unsigned)op <= OP_LAST ? ops[op].layer : "";
}

const char *
op_call(enum op op)
{
	return (unsigned)op <= OP_LAST ? ops[op].call : "";
}

/* The first number in a file, or -1. */
static long
read_number(const char *path)
{
	char buf[32];
	ssize_t n;
	long v = -1;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n > 0) {
		buf[n] = '\0';
		if (sscanf(buf, "%ld", &v) != 1)
			v = -1;
	}
	return v;
}

/* In a container: Docker's marker, or a container manager's variable. */
static bool
in_container(void)
{
	char buf[4096];
	ssize_t n;
	int fd;

	if (access("/.dockerenv", F_OK) == 0 ||
	    access("/run/.containerenv", F_OK) == 0)
		return true;
	fd = open("/proc/1/environ", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	for (ssize_t i = 0; i < n; i += (ssize_t)strlen(buf + i) + 1)
		if (strncmp(buf + i, "container=", 10) == 0)
			return true;
	return false;
}

static const char *
namespace_hint(int err)
{
	if (read_number("/proc/sys/user/max_user_namespaces") == 0)
		return "user namespaces are disabled here (sysctl "
		    "user.max_user_namespaces=0): set it above 0, or run the "
		    "helper as root";
	if (read_number("/proc/sys/kernel/unprivileged_userns_clone") == 0)
		return "unprivileged user namespaces are disabled here (sysctl "
		    "kernel.unprivileged_userns_clone=0): set it to 1, or run "
		    "the helper as root";
	if (read_number("/proc/sys/kernel/apparmor_restrict_unprivileged_userns")
	    == 1)
		return "AppArmor restricts unprivileged user namespaces here "
		    "(kernel.apparmor_restrict_unprivileged_userns=1): give "
		    "confine-helper an AppArmor profile that allows userns, or "
		    "run the helper as root";
	if (err == EPERM && in_container())
		return "in a container, its seccomp profile refuses namespaces "
		    "(Docker's default does): run it with podman, or with "
		    "--security-opt seccomp= a profile that allows unshare, "
		    "setns and mount, or --privileged";
	if (err == ENOSPC)
		return "the user's namespace limit is reached (sysctl "
		    "user.max_user_namespaces)";
	return "";
}

const char *
op_hint(enum op op, int err)
{
	switch (op) {
	case OP_UNSHARE_MOUNT:
	case OP_UNSHARE_USER:
	case OP_ID_MAP:
	case OP_CLONE_INIT:
	case OP_UNSHARE_NS:
		return namespace_hint(err);
	case OP_OPEN_TREE:
	case OP_MOUNT_SETATTR:
	case OP_MOVE_MOUNT:
		if (err == ENOSYS)
			return "this kernel has no new mount API (Linux 5.12 "
			    "and later have it)";
		return err == EPERM && in_container() ? namespace_hint(err) :
		    "";
	case OP_LANDLOCK_ABI:
	case OP_LANDLOCK_CREATE:
		if (err == ENOSYS)
			return "this kernel was built without Landlock "
			    "(CONFIG_SECURITY_LANDLOCK)";
		if (err == EOPNOTSUPP)
			return "Landlock is built in but not enabled: add "
			    "landlock to the kernel's lsm= boot parameter";
		return "";
	case OP_SETGROUPS:
	case OP_SETRESGID:
	case OP_SETFSUID:
	case OP_SETRESUID:
		return "a helper serving other users must run as root";
	case OP_SCRATCH_ACCESS:
		return "the job's user (with no capability, a root job too) "
		    "must be able to write its scratch root";
	default:
		return "";
	}
}

void
op_message(char *buf, size_t len, const char *why, enum op op, int err)
{
	const char *hint = op_hint(op, err);

	if (op == OP_NONE)
		snprintf(buf, len, "%s", why);
	else
		snprintf(buf, len, "%s: %s failed: %s%s%s", why, op_call(op),
		    strerror(err), *hint ? "; " : "", hint);
}
