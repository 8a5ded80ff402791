#include <errno.h>
#include <linux/filter.h>
#include <seccomp.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "helper/seccomp.h"

static int
add_rules(scmp_filter_ctx ctx)
{
	static const int refused[] = {
		SCMP_SYS(socket),
		SCMP_SYS(io_uring_setup),
		SCMP_SYS(io_uring_enter),
		SCMP_SYS(io_uring_register),
	};
	/* ioctl's cmd is an int: compare its low 32 bits only. */
	static const unsigned long tty_inject[] = { TIOCSTI, TIOCLINUX };
	size_t i;
	int rc;

	rc = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH,
	    SCMP_ACT_KILL_PROCESS);
	for (i = 0; rc == 0 && i < sizeof(refused) / sizeof(refused[0]); i++)
		rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), refused[i], 0);
	for (i = 0; rc == 0 && i < sizeof(tty_inject) / sizeof(tty_inject[0]);
	    i++)
		rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(ioctl),
		    1, SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffUL, tty_inject[i]));
	return rc;
}

int
seccomp_build(struct seccomp_prog *prog)
{
	scmp_filter_ctx ctx;
	struct stat st;
	void *buf = NULL;
	int fd = -1, rc;

	prog->insns = NULL;
	prog->count = 0;
	ctx = seccomp_init(SCMP_ACT_ALLOW);
	if (ctx == NULL)
		return -ENOMEM;
	rc = add_rules(ctx);
	if (rc != 0)
		goto out;
	fd = memfd_create("confine-seccomp", MFD_CLOEXEC);
	if (fd < 0) {
		rc = -errno;
		goto out;
	}
	rc = seccomp_export_bpf(ctx, fd);
	if (rc != 0)
		goto out;
	if (fstat(fd, &st) != 0) {
		rc = -errno;
		goto out;
	}
	if (st.st_size <= 0 || st.st_size % sizeof(struct sock_filter) != 0 ||
	    st.st_size / sizeof(struct sock_filter) > BPF_MAXINSNS) {
		rc = -EINVAL;
		goto out;
	}
	buf = malloc((size_t)st.st_size);
	if (buf == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	if (pread(fd, buf, (size_t)st.st_size, 0) != st.st_size) {
		rc = -EIO;
		goto out;
	}
	prog->insns = buf;
	prog->count = (unsigned short)(st.st_size / sizeof(struct sock_filter));
	buf = NULL;
out:
	free(buf);
	if (fd >= 0)
		close(fd);
	seccomp_release(ctx);
	return rc;
}

void
seccomp_free(struct seccomp_prog *prog)
{
	free(prog->insns);
	prog->insns = NULL;
	prog->count = 0;
}

int
seccomp_apply(const struct seccomp_prog *prog)
{
	struct sock_fprog fprog = {
		.len = prog->count,
		.filter = prog->insns,
	};

	if (prog->count == 0)
		return -EINVAL;
	if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &fprog, 0, 0) != 0)
		return -errno;
	return 0;
}
