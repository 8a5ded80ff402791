/*
 * The seccomp filter's rules, compiled by libseccomp: at build time, by
 * seccomp_gen, into the program every helper loads (seccomp_bpf.c), and by
 * the test that holds the two equal. No helper links libseccomp.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <seccomp.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "helper/backend/seccomp_rules.h"

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

/*
 * Refused outright with EPERM. Each row of docs/linux-contract.md's
 * seccomp table says why; most also need a capability the job no longer
 * has, and are refused here all the same, so that no capability left by
 * mistake could reach them.
 */
static const char *const refused[] = {
	/* asynchronous I/O that bypasses this filter */
	"io_uring_setup", "io_uring_enter", "io_uring_register",
	/* host-wide state: names, clocks, power, swap, modules, accounting */
	"sethostname", "setdomainname", "settimeofday", "clock_settime",
	"clock_adjtime", "adjtimex", "reboot", "swapon", "swapoff",
	"init_module", "finit_module", "delete_module", "kexec_load",
	"kexec_file_load", "acct", "quotactl", "quotactl_fd", "syslog",
	"vhangup", "iopl", "ioperm", "modify_ldt",
	/* the file system's shape, and files by handle */
	"mount", "umount2", "pivot_root", "chroot", "move_mount", "open_tree",
	"fsopen", "fsconfig", "fsmount", "fspick", "mount_setattr",
	"open_by_handle_at", "name_to_handle_at",
	/* namespaces: the job's view of the machine is the one it was given */
	"unshare", "setns",
	/* kernel attack surface Docker's default profile refuses too */
	"add_key", "request_key", "keyctl", "bpf", "perf_event_open",
	"userfaultfd", "process_vm_readv", "process_vm_writev",
	"lookup_dcookie", "uselib", "ustat", "sysfs", "_sysctl",
	"nfsservctl", "create_module", "get_kernel_syms", "query_module",
};

/*
 * SysV IPC and POSIX message queues: objects of the IPC namespace, named
 * by keys and ids any process may guess. Refused where the job shares the
 * host's; in one of its own (ns.h) they are the job's own copies.
 */
static const char *const shared_ipc[] = {
	"shmget", "shmat", "shmctl", "semget", "semop", "semtimedop", "semctl",
	"msgget", "msgsnd", "msgrcv", "msgctl", "mq_open", "mq_unlink",
	"mq_timedsend", "mq_timedreceive", "mq_notify", "mq_getsetattr",
};

/*
 * The network where the job shares the host's: no socket of its own, no
 * connection or listener (and, below, no name and no addressed datagram).
 */
static const char *const shared_net[] = { "socket", "connect", "listen" };

/*
 * In a network namespace of its own, the calls that name or reach an
 * address go to its init (SECCOMP_RET_USER_NOTIF, helper/backend/supervise.c),
 * which makes them itself on the job's socket with the address it read
 * and checked: a pathname socket outside the job's own trees, and any
 * socket it was lent from the host's namespace, stay out of reach.
 * sendmsg and sendmmsg go whole, address or not: theirs is in memory, out
 * of a filter's reach, and the init sends what it read, descriptors and
 * all. (sendto, with an address only: below.)
 */
static const char *const supervised[] = { "connect", "bind", "listen",
	"sendmsg", "sendmmsg" };

/* The families of its own sockets there: AF_UNIX, AF_INET, AF_INET6 and
 * AF_NETLINK; every other value refused. */
#define FAMILIES_OWN ((1u << AF_UNIX) | (1u << AF_INET) | (1u << AF_INET6) | \
	(1u << AF_NETLINK))

/* Namespace flags clone() may not take (clone3 is ENOSYS, below). */
static const unsigned long clone_new[] = {
	CLONE_NEWNS, CLONE_NEWUTS, CLONE_NEWIPC, CLONE_NEWUSER, CLONE_NEWPID,
	CLONE_NEWNET, CLONE_NEWCGROUP,
};

/*
 * Calls that name a process by number: only the caller's own (0), where
 * the job shares the host's PID namespace. In one of its own a number is
 * one of its own processes, but for 1, its init: only that is refused.
 */
static const char *const self_only[] = {
	"sched_setaffinity", "sched_setscheduler", "sched_setparam",
	"sched_setattr",
};

static int
rule(scmp_filter_ctx ctx, int err, const char *name, unsigned n,
    const struct scmp_arg_cmp *cmp)
{
	int nr = seccomp_syscall_resolve_name(name);

	if (nr == __NR_SCMP_ERROR)
		return -EINVAL;
	return seccomp_rule_add_array(ctx, SCMP_ACT_ERRNO(err), nr, n, cmp);
}

#define RULE0(ctx, name) rule((ctx), EPERM, (name), 0, NULL)
#define RULE(ctx, name, ...) rule((ctx), EPERM, (name),                  \
	NELEM(((const struct scmp_arg_cmp[]){ __VA_ARGS__ })),              \
	(const struct scmp_arg_cmp[]){ __VA_ARGS__ })

/*
 * No setuid or setgid file, by any call that sets a mode: a root job's
 * scratch root is an ordinary directory of the host's, nosuid only in the
 * job's own view, and any local user could run what it left there with
 * the job's uid. The mode is a umode_t: its low 32 bits are all there is.
 * mkdir and mkdirat are not listed: the kernel keeps only the permission
 * and sticky bits of their mode. openat2's mode is in memory, out of a
 * filter's reach: ENOSYS, so that callers fall back to openat.
 */
static int
add_setid_rules(scmp_filter_ctx ctx)
{
	static const struct {
		const char *name;
		unsigned arg;
	} modes[] = {
		{ "chmod", 1 }, { "fchmod", 1 }, { "fchmodat", 2 },
		{ "fchmodat2", 2 }, { "open", 2 }, { "openat", 3 },
		{ "creat", 1 }, { "mknod", 1 }, { "mknodat", 2 },
	};
	static const unsigned bits[] = { S_ISUID, S_ISGID };
	size_t i, k;
	int rc = 0;

	for (i = 0; rc == 0 && i < NELEM(modes); i++)
		for (k = 0; rc == 0 && k < NELEM(bits); k++) {
			struct scmp_arg_cmp mode = { .arg = modes[i].arg,
				.op = SCMP_CMP_MASKED_EQ, .datum_a = bits[k],
				.datum_b = bits[k] };

			rc = rule(ctx, EPERM, modes[i].name, 1, &mode);
		}
	if (rc == 0)
		rc = rule(ctx, ENOSYS, "openat2", 0, NULL);
	return rc;
}

/*
 * Sockets of its own in a network namespace of its own: unix stream,
 * seqpacket and datagram ones (SOCK_RAW is a datagram one to the kernel;
 * every address they send to their init checks, sendmsg's too), IPv4 and
 * IPv6 of any type (its own loopback is all there is; raw ones need a
 * capability it has not), and routing netlink (its own interfaces). Every
 * other family, type or protocol is refused.
 */
/*
 * The unix socket types a job may make, the low four bits of the type
 * (SOCK_TYPE_MASK): stream and seqpacket ones address nothing once
 * connected; datagram ones (SOCK_RAW too, a datagram one to the kernel)
 * only where their init makes every send with an address.
 */
static bool
unix_type_ok(unsigned t, bool net)
{
	return t == SOCK_STREAM || t == SOCK_SEQPACKET ||
	    (net && (t == SOCK_DGRAM || t == SOCK_RAW));
}

/*
 * Every value of an argument but those in allow (bits 0-31) refused, in
 * few rules: aligned blocks of refused values, each one masked compare
 * (the block's value with its low bits masked off), the largest first,
 * and every value from the one above allow's highest refused as well.
 * width is the bits the kernel reads: 4 for a socket's type (its low
 * four bits, SOCK_TYPE_MASK; the flags above them stay free), 32 for a
 * family. Fewer rules make a shorter program, which every job's start
 * compiles and every call the job makes runs. also, if set, is a second
 * comparison every rule makes (on another argument).
 */
static int
refuse_all_but(scmp_filter_ctx ctx, const char *name, unsigned arg,
    uint32_t allow, unsigned width, const struct scmp_arg_cmp *also)
{
	uint32_t full = width >= 32 ? 0xffffffffu : (1u << width) - 1;
	unsigned top = width >= 32 ? 32 - (unsigned)__builtin_clz(allow) :
	    1u << width, size, start, v;
	uint64_t covered = 0, block;
	struct scmp_arg_cmp cmp[2];
	int rc = 0;

	for (size = 32; rc == 0 && size >= 1; size /= 2)
		for (start = 0; rc == 0 && start + size <= top; start += size) {
			block = ((1ull << size) - 1) << start;
			if ((block & allow) != 0 || (block & ~covered) == 0)
				continue;
			covered |= block;
			cmp[0] = (struct scmp_arg_cmp){ .arg = arg,
				.op = SCMP_CMP_MASKED_EQ,
				.datum_a = full & ~(size - 1), .datum_b = start };
			if (also != NULL)
				cmp[1] = *also;
			rc = rule(ctx, EPERM, name, also != NULL ? 2 : 1, cmp);
		}
	for (v = 0; v < top; v++)
		if (rc == 0 && ((allow >> v) & 1) == 0 &&
		    ((covered >> v) & 1) == 0)
			rc = -EINVAL;  /* a value no block covered: never */
	if (rc == 0 && top <= full) {
		cmp[0] = (struct scmp_arg_cmp){ .arg = arg,
			.op = SCMP_CMP_GE, .datum_a = top };
		if (also != NULL)
			cmp[1] = *also;
		rc = rule(ctx, EPERM, name, also != NULL ? 2 : 1, cmp);
	}
	return rc;
}

/* The unix types of unix_type_ok, as refuse_all_but's allow. */
static uint32_t
unix_types_ok(bool net)
{
	uint32_t ok = 0;
	unsigned t;

	for (t = 0; t < 16; t++)
		if (unix_type_ok(t, net))
			ok |= 1u << t;
	return ok;
}

static int
add_socket_rules(scmp_filter_ctx ctx)
{
	struct scmp_arg_cmp unix_only = SCMP_A0_32(SCMP_CMP_EQ, AF_UNIX);
	int rc;

	rc = refuse_all_but(ctx, "socket", 0, FAMILIES_OWN, 32, NULL);
	if (rc == 0)
		rc = refuse_all_but(ctx, "socket", 1, unix_types_ok(true), 4,
		    &unix_only);
	if (rc == 0)
		rc = RULE(ctx, "socket", SCMP_A0_32(SCMP_CMP_EQ, AF_NETLINK),
		    SCMP_A2_32(SCMP_CMP_NE, 0 /* NETLINK_ROUTE */));
	return rc;
}

static int
add_rules(scmp_filter_ctx ctx, bool own, bool net)
{
	/*
	 * A terminal it is lent stays its owner's: no input pushed into it,
	 * no console switching, no other line discipline (N_NULL: the user's
	 * shell would read nothing after the job), no exclusive mode, no
	 * console redirection, no hangup. Its size, its modes, reading and
	 * writing stay. Taking its foreground (TIOCSPGRP) or making it a
	 * controlling terminal (TIOCSCTTY) the kernel refuses by itself: the
	 * job runs in a session of its own, and the terminal is another's.
	 * ioctl's cmd is an int: compare its low 32 bits only.
	 */
	static const unsigned long tty_inject[] = { TIOCSTI, TIOCLINUX,
		TIOCSETD, TIOCEXCL, TIOCCONS, TIOCVHANGUP };
	size_t i;
	int rc;

	rc = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH,
	    SCMP_ACT_KILL_PROCESS);
	/* A binary tree over the syscall numbers, not a chain of ~90 tests. */
	if (rc == 0)
		rc = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2);
	for (i = 0; rc == 0 && i < NELEM(refused); i++)
		rc = RULE0(ctx, refused[i]);
	for (i = 0; rc == 0 && !own && i < NELEM(shared_ipc); i++)
		rc = RULE0(ctx, shared_ipc[i]);
	for (i = 0; rc == 0 && !net && i < NELEM(shared_net); i++)
		rc = RULE0(ctx, shared_net[i]);
	for (i = 0; rc == 0 && net && i < NELEM(supervised); i++)
		rc = seccomp_rule_add(ctx, SCMP_ACT_NOTIFY,
		    seccomp_syscall_resolve_name(supervised[i]), 0);
	if (rc == 0 && net)
		rc = add_socket_rules(ctx);
	for (i = 0; rc == 0 && i < NELEM(tty_inject); i++)
		rc = RULE(ctx, "ioctl",
		    SCMP_A1_64(SCMP_CMP_MASKED_EQ, 0xffffffffUL, tty_inject[i]));
	/*
	 * clone3's flags are in memory, out of a filter's reach: ENOSYS, so
	 * that the C library falls back to clone(), whose flags it can see.
	 */
	if (rc == 0)
		rc = rule(ctx, ENOSYS, "clone3", 0, NULL);
	for (i = 0; rc == 0 && i < NELEM(clone_new); i++)
		rc = RULE(ctx, "clone",
		    SCMP_A0_64(SCMP_CMP_MASKED_EQ, clone_new[i], clone_new[i]));
	/*
	 * Device nodes: a job makes none, anywhere (a whiteout, 0:0, is a
	 * character device too, and refused with them).
	 */
	for (i = 0; rc == 0 && i < 4; i++) {
		/* mknod's mode is argument 1, mknodat's 2; the mask is 32-bit. */
		struct scmp_arg_cmp mode = { .arg = i < 2 ? 1 : 2,
			.op = SCMP_CMP_MASKED_EQ, .datum_a = S_IFMT,
			.datum_b = i % 2 ? S_IFBLK : S_IFCHR };

		rc = rule(ctx, EPERM, i < 2 ? "mknod" : "mknodat", 1, &mode);
	}
	/*
	 * A pair of the job's own unix sockets, stream or seqpacket: connected
	 * to each other, they address nothing else. A datagram pair could
	 * send to any socket by its name, and sendmsg's address is out of a
	 * filter's reach: only where its init makes every such send. Every
	 * other type is refused, not only SOCK_DGRAM: the kernel makes
	 * SOCK_RAW a datagram pair too. The type is the low four bits, so
	 * these sixteen values are all there are.
	 */
	if (rc == 0)
		rc = RULE(ctx, "socketpair", SCMP_A0_64(SCMP_CMP_NE, AF_UNIX));
	if (rc == 0)
		rc = refuse_all_but(ctx, "socketpair", 1, unix_types_ok(net), 4,
		    NULL);
	/*
	 * No name of its own in the host's network namespace: an abstract one
	 * could be the host's (a service's traffic taken, its own bind
	 * EADDRINUSE), and its pairs and the sockets it is lent need none.
	 */
	if (rc == 0 && !net)
		rc = RULE0(ctx, "bind");
	if (rc == 0)
		rc = add_setid_rules(ctx);
	/*
	 * A read lease on a file it may only read would hold back every host
	 * process that opens it for writing; one on its own files is refused
	 * with them (a write lease needs a descriptor open for writing, which
	 * only its own files give). EACCES, as the kernel answers a lease on
	 * a file not one's own.
	 */
	if (rc == 0)
		rc = rule(ctx, EACCES, "fcntl", 2, (const struct scmp_arg_cmp[]){
		    SCMP_A1_32(SCMP_CMP_EQ, F_SETLEASE),
		    SCMP_A2_32(SCMP_CMP_EQ, F_RDLCK) });
	/*
	 * sendto with an address; without one it is send(). In a network
	 * namespace of its own, its init makes it (a socket it is lent stays
	 * without one).
	 */
	if (rc == 0 && !net)
		rc = RULE(ctx, "sendto", SCMP_A4_64(SCMP_CMP_NE, 0));
	if (rc == 0 && net)
		rc = seccomp_rule_add(ctx, SCMP_ACT_NOTIFY,
		    seccomp_syscall_resolve_name("sendto"), 1,
		    SCMP_A4_64(SCMP_CMP_NE, 0));
	/*
	 * Another process's limits and scheduling. In the host's PID
	 * namespace a nonzero 64-bit value is refused whatever its low half
	 * says; in its own, only its init (1), as the 32-bit pid the kernel
	 * reads: the rest are its own processes (reach_test
	 * its_own_processes_are_its_own). "which" is compared as the 32-bit
	 * int the kernel reads; a whole user's processes are refused in both.
	 */
	for (i = 0; rc == 0 && i < NELEM(self_only); i++)
		rc = own ? RULE(ctx, self_only[i], SCMP_A0_32(SCMP_CMP_EQ, 1)) :
		    RULE(ctx, self_only[i], SCMP_A0_64(SCMP_CMP_NE, 0));
	if (rc == 0)
		rc = own ? RULE(ctx, "prlimit64", SCMP_A0_32(SCMP_CMP_EQ, 1),
		    SCMP_A2_64(SCMP_CMP_NE, 0)) :
		    RULE(ctx, "prlimit64", SCMP_A0_64(SCMP_CMP_NE, 0),
		    SCMP_A2_64(SCMP_CMP_NE, 0));
	if (rc == 0)
		rc = own ? RULE(ctx, "setpriority", SCMP_A1_32(SCMP_CMP_EQ, 1)) :
		    RULE(ctx, "setpriority", SCMP_A1_64(SCMP_CMP_NE, 0));
	if (rc == 0)
		rc = RULE(ctx, "setpriority",
		    SCMP_A0_32(SCMP_CMP_EQ, PRIO_USER));
	if (rc == 0)
		rc = own ? RULE(ctx, "ioprio_set", SCMP_A1_32(SCMP_CMP_EQ, 1)) :
		    RULE(ctx, "ioprio_set", SCMP_A1_64(SCMP_CMP_NE, 0));
	if (rc == 0)
		rc = RULE(ctx, "ioprio_set", SCMP_A0_32(SCMP_CMP_EQ, 3));
	return rc;  /* 3: IOPRIO_WHO_USER, which glibc does not define */
}

/*
 * personality(2) other than Linux's own personas (and the query): not
 * expressible in libseccomp's rules (one test per argument, and no rule
 * may allow where the default allows), so a few instructions of our own,
 * put before libseccomp's program in the same filter: one filter to load
 * and to run at each call, not two. A call of another architecture goes
 * on to libseccomp's program, which kills it.
 */
#define ARG0_LO offsetof(struct seccomp_data, args[0])
#define PERSONA_LEN 11
static void
persona(struct sock_filter out[PERSONA_LEN], uint32_t arch)
{
	/* From instruction i, a jump to the first after these. */
#define ON(i) (PERSONA_LEN - (i) - 1)
	const struct sock_filter f[PERSONA_LEN] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
		    offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, arch, 0, ON(1)),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
		    offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_personality, 0, ON(3)),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG0_LO),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0x0, ON(5), 0), /* PER_LINUX */
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0x8, ON(6), 0), /* PER_LINUX32 */
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0x20000, ON(7), 0), /* UNAME26 */
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0x20008, ON(8), 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0xffffffff, ON(9), 0), /* query */
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
	};
#undef ON
	memcpy(out, f, sizeof(f));
}

int
seccomp_compile(enum seccomp_kind kind, struct sock_filter **insns,
    unsigned short *count)
{
	scmp_filter_ctx ctx;
	struct stat st;
	void *buf = NULL;
	int fd = -1, rc;

	*insns = NULL;
	*count = 0;
	ctx = seccomp_init(SCMP_ACT_ALLOW);
	if (ctx == NULL)
		return -ENOMEM;
	rc = add_rules(ctx, kind != SECCOMP_SHARED, kind == SECCOMP_OWN_NET);
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
	    st.st_size / sizeof(struct sock_filter) + PERSONA_LEN >
	    BPF_MAXINSNS) {
		rc = -EINVAL;
		goto out;
	}
	buf = malloc(PERSONA_LEN * sizeof(struct sock_filter) +
	    (size_t)st.st_size);
	if (buf == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	persona(buf, seccomp_arch_native());
	if (pread(fd, (struct sock_filter *)buf + PERSONA_LEN,
	    (size_t)st.st_size, 0) != st.st_size) {
		rc = -EIO;
		goto out;
	}
	*insns = buf;
	*count = (unsigned short)(PERSONA_LEN +
	    st.st_size / sizeof(struct sock_filter));
	buf = NULL;
out:
	free(buf);
	if (fd >= 0)
		close(fd);
	seccomp_release(ctx);
	return rc;
}
