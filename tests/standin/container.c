/*
 * container [--no-userns] [--] CMD [ARG...]: runs CMD as a default Docker
 * container would have it, as far as confine can tell: the capabilities
 * Docker grants (CHOWN, DAC_OVERRIDE, FOWNER, FSETID, KILL, SETGID,
 * SETUID, SETPCAP, NET_BIND_SERVICE, NET_RAW, SYS_CHROOT, MKNOD,
 * AUDIT_WRITE, SETFCAP), every other gone from every set; and the part of
 * Docker's default seccomp profile that decides what confine can make:
 * unshare, setns, mount, umount2, pivot_root, the new mount API and
 * clone's namespace flags refused with EPERM, clone3 with ENOSYS (so that
 * the C library falls back to clone, whose flags a filter sees), as the
 * profile does for a process without CAP_SYS_ADMIN. Landlock's calls stay,
 * as in the profile. With --no-userns only unprivileged user namespaces
 * are refused (a host where user.max_user_namespaces is 0, or AppArmor
 * restricts them): unshare and clone with CLONE_NEWUSER get ENOSPC, the
 * kernel's answer there, and nothing else changes.
 *
 * A stand-in, not Docker: no registry is reachable here to pull an image,
 * and confine meets a container only through these calls.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/audit.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

#ifndef SYS_clone3
#define SYS_clone3 435
#endif
#ifndef SYS_open_tree
#define SYS_open_tree 428
#define SYS_move_mount 429
#define SYS_fsopen 430
#define SYS_fsconfig 431
#define SYS_fsmount 432
#define SYS_fspick 433
#endif
#ifndef SYS_mount_setattr
#define SYS_mount_setattr 442
#endif

static const int docker_caps[] = {
	CAP_CHOWN, CAP_DAC_OVERRIDE, CAP_FOWNER, CAP_FSETID, CAP_KILL,
	CAP_SETGID, CAP_SETUID, CAP_SETPCAP, CAP_NET_BIND_SERVICE, CAP_NET_RAW,
	CAP_SYS_CHROOT, CAP_MKNOD, CAP_AUDIT_WRITE, CAP_SETFCAP,
};

#define NS_FLAGS (CLONE_NEWNS | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER | \
	CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWCGROUP)

#define LD_NR BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr))
#define LD_ARG0 BPF_STMT(BPF_LD | BPF_W | BPF_ABS, \
	offsetof(struct seccomp_data, args[0]))
#define RET(v) BPF_STMT(BPF_RET | BPF_K, (v))
#define IS(nr, t, f) BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (nr), (t), (f))

static int
die(const char *what)
{
	fprintf(stderr, "container: %s: %s\n", what, strerror(errno));
	return 125;
}

static int
load(struct sock_filter *f, unsigned short n)
{
	struct sock_fprog prog = { n, f };

	return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0);
}

/* Docker's refusals of what makes namespaces and mounts. */
static int
docker_filter(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
		    offsetof(struct seccomp_data, arch)),
		IS(AUDIT_ARCH_X86_64, 1, 0),
		RET(SECCOMP_RET_KILL_PROCESS),
		LD_NR,
		IS(SYS_clone3, 0, 1), RET(SECCOMP_RET_ERRNO | ENOSYS),
		IS(SYS_unshare, 10, 0),
		IS(SYS_setns, 9, 0),
		IS(SYS_mount, 8, 0),
		IS(SYS_umount2, 7, 0),
		IS(SYS_pivot_root, 6, 0),
		IS(SYS_open_tree, 5, 0),
		IS(SYS_move_mount, 4, 0),
		IS(SYS_fsopen, 3, 0),
		IS(SYS_fsmount, 2, 0),
		IS(SYS_mount_setattr, 1, 0),
		IS(SYS_clone, 2, 3),
		RET(SECCOMP_RET_ERRNO | EPERM),
		RET(SECCOMP_RET_ALLOW),
		/* clone: its flags in the first argument's low half. */
		LD_ARG0,
		BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, NS_FLAGS, 0, 1),
		RET(SECCOMP_RET_ERRNO | EPERM),
		RET(SECCOMP_RET_ALLOW),
	};

	return load(f, NELEM(f));
}

/* No user namespace for anyone but root: ENOSPC, as the sysctl gives. */
static int
no_userns_filter(void)
{
	struct sock_filter f[] = {
		LD_NR,
		IS(SYS_clone3, 0, 1), RET(SECCOMP_RET_ERRNO | ENOSYS),
		IS(SYS_unshare, 1, 0),
		IS(SYS_clone, 0, 3),
		LD_ARG0,
		BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, CLONE_NEWUSER, 0, 1),
		RET(SECCOMP_RET_ERRNO | ENOSPC),
		RET(SECCOMP_RET_ALLOW),
	};

	return load(f, NELEM(f));
}

static int
docker_caps_only(void)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];
	size_t i;
	int cap, in;

	memset(d, 0, sizeof(d));
	for (i = 0; i < NELEM(docker_caps); i++) {
		d[docker_caps[i] / 32].permitted |= 1u << (docker_caps[i] % 32);
		d[docker_caps[i] / 32].effective |= 1u << (docker_caps[i] % 32);
	}
	for (cap = 0; (in = prctl(PR_CAPBSET_READ, cap, 0, 0, 0)) >= 0; cap++) {
		int keep = 0;

		for (i = 0; i < NELEM(docker_caps); i++)
			keep |= docker_caps[i] == cap;
		if (in == 1 && !keep && prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0)
			return -1;
	}
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0)
		return -1;
	return (int)syscall(SYS_capset, &h, d);
}

int
main(int argc, char **argv)
{
	int no_userns = 0, i = 1;

	if (i < argc && strcmp(argv[i], "--no-userns") == 0) {
		no_userns = 1;
		i++;
	}
	if (i < argc && strcmp(argv[i], "--") == 0)
		i++;
	if (i >= argc) {
		fprintf(stderr, "usage: container [--no-userns] [--] CMD [ARG...]\n");
		return 125;
	}
	if (no_userns) {
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
		    no_userns_filter() != 0)
			return die("the user namespace filter");
	} else {
		/* Loaded with CAP_SYS_ADMIN, as Docker's runtime does. */
		if (docker_filter() != 0)
			return die("the seccomp filter");
		if (docker_caps_only() != 0)
			return die("the capabilities");
	}
	execvp(argv[i], argv + i);
	return die(argv[i]);
}
