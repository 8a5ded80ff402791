#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "helper/backend/landlock.h"
#include "helper/backend/landlock_uapi.h"

#define FS_WRITE_V1 (LL_FS_WRITE_FILE | LL_FS_REMOVE_DIR | LL_FS_REMOVE_FILE | \
	LL_FS_MAKE_CHAR | LL_FS_MAKE_DIR | LL_FS_MAKE_REG | LL_FS_MAKE_SOCK | \
	LL_FS_MAKE_FIFO | LL_FS_MAKE_BLOCK | LL_FS_MAKE_SYM)
/* Rights that make sense on a file rather than a directory. */
#define FS_FILE_ALL (LL_FS_EXECUTE | LL_FS_WRITE_FILE | LL_FS_READ_FILE | \
	LL_FS_TRUNCATE | LL_FS_IOCTL_DEV)

int
landlock_abi(void)
{
	long abi = syscall(LL_NR_CREATE_RULESET, NULL, 0,
	    LL_CREATE_RULESET_VERSION);

	return abi < 0 ? -errno : (int)abi;
}

int
landlock_plan(int abi, struct landlock_plan *plan)
{
	if (abi < 1)
		return -ENOTSUP;
	plan->abi = abi;
	plan->fs_handled = FS_WRITE_V1 | LL_FS_REFER | LL_FS_TRUNCATE |
	    LL_FS_IOCTL_DEV;
	plan->net_handled = LL_NET_BIND_TCP | LL_NET_CONNECT_TCP;
	plan->scoped = LL_SCOPE_ABSTRACT_UNIX_SOCKET | LL_SCOPE_SIGNAL;
	/* Newer ABIs only add rights: drop what an older one lacks. */
	switch (abi) {
	case 1:
		plan->fs_handled &= ~LL_FS_REFER;
		/* FALLTHROUGH */
	case 2:
		plan->fs_handled &= ~LL_FS_TRUNCATE;
		/* FALLTHROUGH */
	case 3:
		plan->net_handled = 0;
		/* FALLTHROUGH */
	case 4:
		plan->fs_handled &= ~LL_FS_IOCTL_DEV;
		/* FALLTHROUGH */
	case 5:
		plan->scoped = 0;
		/* FALLTHROUGH */
	case 6:
	case 7:
	default:
		/* ABI 7 adds logging flags only; later ABIs are handled as 7. */
		break;
	}
	plan->fs_file = plan->fs_handled & FS_FILE_ALL;
	plan->fs_read = LL_FS_READ_FILE | LL_FS_READ_DIR | LL_FS_EXECUTE;
	/* No device node is made or used beneath it (its mount is nodev too). */
	plan->fs_scratch = plan->fs_handled &
	    ~(LL_FS_MAKE_CHAR | LL_FS_MAKE_BLOCK | LL_FS_IOCTL_DEV);
	/* Without all of them the policy cannot be applied exactly. */
	return abi < LANDLOCK_MIN_ABI ? -ENOTSUP : 0;
}

void
landlock_rights(const struct landlock_plan *plan, bool read_narrow,
    char *buf, size_t n)
{
	static const struct {
		int kind;  /* 0 fs, 1 net, 2 scope */
		uint64_t bit;
		const char *word;
	} words[] = {
		{ 0, LL_FS_WRITE_FILE, "write" }, { 0, LL_FS_REFER, "refer" },
		{ 0, LL_FS_TRUNCATE, "truncate" }, { 0, LL_FS_IOCTL_DEV, "ioctl-dev" },
		{ 1, LL_NET_CONNECT_TCP, "tcp" }, { 2, LL_SCOPE_SIGNAL, "signal" },
		{ 2, LL_SCOPE_ABSTRACT_UNIX_SOCKET, "abstract-unix" },
	};
	size_t i, k = 0;
	uint64_t set;

	if (n == 0)
		return;
	buf[0] = '\0';
	for (i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
		set = words[i].kind == 0 ? plan->fs_handled :
		    words[i].kind == 1 ? plan->net_handled : plan->scoped;
		if ((set & words[i].bit) && k < n)
			k += (size_t)snprintf(buf + k, n - k, "%s%s",
			    k > 0 ? "," : "", words[i].word);
	}
	if (read_narrow && k < n)
		(void)snprintf(buf + k, n - k, "%sread", k > 0 ? "," : "");
}

/* access beneath path; on a file, only the rights a file takes. */
static int
add_path(int ruleset, const char *path, uint64_t access)
{
	struct ll_path_beneath_attr attr;
	struct stat st;
	int fd, rc = 0;

	fd = open(path, O_PATH | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) != 0) {
		rc = -errno;
		close(fd);
		return rc;
	}
	attr.allowed_access = S_ISDIR(st.st_mode) ? access : access & FS_FILE_ALL;
	attr.parent_fd = fd;
	if (syscall(LL_NR_ADD_RULE, ruleset, LL_RULE_PATH_BENEATH, &attr, 0) != 0)
		rc = -errno;
	close(fd);
	return rc;
}

int
landlock_apply(const struct landlock_plan *plan, const struct policy *p,
    enum op *failed)
{
	enum op op_, *op = failed != NULL ? failed : &op_;
	uint64_t read = p->read_narrow ? plan->fs_read : 0;
	struct ll_ruleset_attr attr = {
		.handled_access_fs = plan->fs_handled | read,
		.handled_access_net = plan->net_handled,
		.scoped = plan->scoped,
	};
	size_t i;
	int ruleset, rc;

	*op = OP_NO_NEW_PRIVS;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
		return -errno;
	*op = OP_LANDLOCK_CREATE;
	ruleset = (int)syscall(LL_NR_CREATE_RULESET, &attr, sizeof(attr), 0);
	if (ruleset < 0)
		return -errno;
	*op = OP_LANDLOCK_ADD_RULE;
	rc = add_path(ruleset, p->scratch, plan->fs_scratch | read);
	if (rc == 0 && p->tmp != NULL)
		rc = add_path(ruleset, p->tmp, plan->fs_scratch | read);
	if (rc == 0)
		rc = add_path(ruleset, "/dev/null", plan->fs_file | read);
	/*
	 * Its own /dev's shared memory, queues, ptys and terminal: a tmpfs,
	 * an mqueue and a devpts instance of its own, nothing of the host's.
	 */
	if (rc == 0 && p->own_dev)
		rc = add_path(ruleset, "/dev/shm", plan->fs_scratch | read);
	/* The IPC namespace's POSIX queues, however they are opened. */
	if (rc == 0 && p->own_dev)
		rc = add_path(ruleset, "/dev/mqueue", plan->fs_scratch | read);
	if (rc == 0 && p->own_dev)
		rc = add_path(ruleset, "/dev/pts", plan->fs_file | read);
	if (rc == 0 && p->own_dev)
		rc = add_path(ruleset, "/dev/tty", plan->fs_file | read);
	for (i = 0; rc == 0 && i < p->ndevices; i++)
		rc = add_path(ruleset, p->devices[i], plan->fs_file | read);
	for (i = 0; rc == 0 && p->read_narrow && i < p->nreadable; i++)
		rc = add_path(ruleset, p->readable[i], plan->fs_read);
	if (rc == 0)
		*op = OP_LANDLOCK_RESTRICT;
	if (rc == 0 && syscall(LL_NR_RESTRICT_SELF, ruleset, 0) != 0)
		rc = -errno;
	close(ruleset);
	if (rc == 0)
		*op = OP_NONE;
	return rc;
}
