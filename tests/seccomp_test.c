/*
 * The seccomp program helpers load is compiled when they are built
 * (//helper/backend:seccomp_gen): it must be what this machine's
 * libseccomp makes of helper/backend/seccomp_rules.c now, and it must be
 * the filter that refuses.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/ipc.h>
#include <sys/msg.h>
#include <sys/sem.h>
#include <sys/shm.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef SYS_openat2
#define SYS_openat2 437
#endif

#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>

#include <cmocka.h>
#include <seccomp.h>

#include "helper/backend/seccomp.h"
#include "helper/backend/seccomp_rules.h"

static void
the_prebuilt_programs_are_what_libseccomp_compiles(void **state)
{
	struct sock_filter *insns;
	struct seccomp_prog prog;
	unsigned short count;
	int k;

	(void)state;
	for (k = 0; k < SECCOMP_KINDS; k++) {
		assert_int_equal(seccomp_compile(k, &insns, &count), 0);
		seccomp_program(k, &prog);
		assert_true(count > 0);
		assert_int_equal(prog.count, count);
		assert_memory_equal(prog.insns, insns, count * sizeof(*insns));
		free(insns);
	}
}


/*
 * Each rule that refuses by an argument, called so that it is harmless
 * when allowed (a closed descriptor, a path that does not exist): the
 * kernel's own answer unfiltered, the filter's filtered.
 */
static long
call(int what)
{
	struct { uint64_t flags, mode, resolve; } how = { 0, 0, 0 };
	struct sockaddr_in in = { .sin_family = AF_INET };
	struct msghdr m = { 0 };
	int sv[2], n_null = 27;

	switch (what) {
	case 0: return ioctl(-1, TIOCCONS);
	case 1: return ioctl(-1, TIOCVHANGUP);
	case 2: return ioctl(-1, TIOCSETD, &n_null);
	case 3: return ioctl(-1, TIOCEXCL);
	case 4: return fcntl(-1, F_SETLEASE, F_RDLCK);
	case 5: return bind(-1, NULL, 0);
	case 6: return syscall(SYS_openat2, -1, "x", &how, sizeof(how));
	case 7: return chmod("/nonexistent/confine", 04755);
	case 8: return chmod("/nonexistent/confine", 02755);
	case 9: return open("/nonexistent/confine", O_CREAT | O_WRONLY, 04755);
	case 10: return mknod("/nonexistent/confine", S_IFREG | 02755, 0);
	case 11: return socketpair(AF_UNIX, SOCK_RAW, 0, sv);
	case 12: return socketpair(AF_UNIX, SOCK_DGRAM, 0, sv);
	case 13: return fcntl(-1, F_SETLEASE, F_WRLCK);    /* allowed */
	case 14: return chmod("/nonexistent/confine", 01777);  /* allowed */
	case 15: return socket(AF_INET, SOCK_STREAM, 0);
	/* A key no segment has, a queue nobody made. */
	case 16: return shmget((key_t)0x6e6f6e65, 0, 0);
	case 17: return syscall(SYS_mq_open, "confine-none", O_RDONLY, 0, NULL);
	case 18: return msgget((key_t)0x6e6f6e65, 0);
	case 19: return semget((key_t)0x6e6f6e65, 0, 0);
	/* Sockets of its own, by family, type and protocol. */
	case 20: return socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	case 21: return socket(AF_UNIX, SOCK_SEQPACKET, 0);
	case 22: return socket(AF_UNIX, SOCK_DGRAM, 0);
	case 23: return socket(AF_UNIX, SOCK_RAW, 0);
	case 24: return socket(AF_INET6, SOCK_DGRAM, 0);
	case 25: return socket(AF_NETLINK, SOCK_RAW, 0 /* NETLINK_ROUTE */);
	case 26: return socket(AF_NETLINK, SOCK_RAW, 16 /* NETLINK_GENERIC */);
	case 27: return socket(63, SOCK_STREAM, 0);  /* no family, yet */
	case 28: return socket(1000, SOCK_STREAM, 0);
	case 29: return sendto(-1, "", 0, 0, (struct sockaddr *)&in, sizeof(in));
	/* Whole, address or not, to its init where it has one. */
	case 30: return sendmsg(-1, &m, 0);
	case 31: return sendmmsg(-1, NULL, 0, 0);
	default: return 0;
	}
}

/*
 * Unfiltered, filtered in the host's namespaces, in its own, and in its
 * own with its sockets (NOTIFIED: the call goes to its init. Here no one
 * holds the listener, so the kernel answers ENOSYS; tests/reach_test and
 * the programs prove what an init makes of them).
 */
#define NOTIFIED ENOSYS
static const struct {
	int unfiltered, filtered, own, own_net;
} calls[] = {
	{ EBADF, EPERM, EPERM, EPERM }, { EBADF, EPERM, EPERM, EPERM },
	{ EBADF, EPERM, EPERM, EPERM }, { EBADF, EPERM, EPERM, EPERM },
	{ EBADF, EACCES, EACCES, EACCES }, { EBADF, EPERM, EPERM, NOTIFIED },
	{ EBADF, ENOSYS, ENOSYS, ENOSYS }, { ENOENT, EPERM, EPERM, EPERM },
	{ ENOENT, EPERM, EPERM, EPERM }, { ENOENT, EPERM, EPERM, EPERM },
	{ ENOENT, EPERM, EPERM, EPERM }, { 0, EPERM, EPERM, 0 },
	{ 0, EPERM, EPERM, 0 }, { EBADF, EBADF, EBADF, EBADF },
	{ ENOENT, ENOENT, ENOENT, ENOENT }, { 0, EPERM, EPERM, 0 },
	{ ENOENT, EPERM, ENOENT, ENOENT }, { ENOENT, EPERM, ENOENT, ENOENT },
	{ ENOENT, EPERM, ENOENT, ENOENT }, { ENOENT, EPERM, ENOENT, ENOENT },
	{ 0, EPERM, EPERM, 0 }, { 0, EPERM, EPERM, 0 },
	{ 0, EPERM, EPERM, 0 }, { 0, EPERM, EPERM, 0 },
	{ 0, EPERM, EPERM, 0 }, { 0, EPERM, EPERM, 0 },
	{ 0, EPERM, EPERM, EPERM }, { EAFNOSUPPORT, EPERM, EPERM, EPERM },
	{ EAFNOSUPPORT, EPERM, EPERM, EPERM }, { EBADF, EPERM, EPERM, NOTIFIED },
	{ EBADF, EBADF, EBADF, NOTIFIED }, { EBADF, EBADF, EBADF, NOTIFIED },
};
#define CALL_SOCKET 15

/* The call's errno (0: it succeeded) unfiltered, or under one filter. */
enum filter { SHARED = SECCOMP_SHARED, OWN = SECCOMP_OWN,
	OWN_NET = SECCOMP_OWN_NET, UNFILTERED };

static int
call_errno(int what, enum filter f)
{
	struct seccomp_prog prog;
	bool filtered = f != UNFILTERED;
	int status, listener = -1;
	pid_t pid;

	seccomp_program(filtered ? (enum seccomp_kind)f : SECCOMP_SHARED, &prog);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		if (filtered && (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
		    seccomp_apply(&prog, &listener) != 0))
			_exit(255);
		/* No one to answer: a notified call is ENOSYS at once. */
		if (listener >= 0)
			close(listener);
		_exit(call(what) < 0 ? errno : 0);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	return WEXITSTATUS(status);
}

static void
the_prebuilt_program_refuses(void **state)
{
	(void)state;
	assert_int_equal(call_errno(CALL_SOCKET, UNFILTERED), 0);
	assert_int_equal(call_errno(CALL_SOCKET, SHARED), EPERM);
}

static void
each_argument_rule_refuses_with_its_errno(void **state)
{
	size_t i;
	int got;

	(void)state;
	for (i = 0; i < sizeof(calls) / sizeof(calls[0]); i++) {
		if ((got = call_errno((int)i, UNFILTERED)) != calls[i].unfiltered)
			fail_msg("call %zu unfiltered: errno %d, wanted %d", i,
			    got, calls[i].unfiltered);
		if ((got = call_errno((int)i, SHARED)) != calls[i].filtered)
			fail_msg("call %zu filtered: errno %d, wanted %d", i,
			    got, calls[i].filtered);
		if ((got = call_errno((int)i, OWN)) != calls[i].own)
			fail_msg("call %zu filtered (own namespaces): errno %d, "
			    "wanted %d", i, got, calls[i].own);
		if ((got = call_errno((int)i, OWN_NET)) != calls[i].own_net)
			fail_msg("call %zu filtered (own network): errno %d, "
			    "wanted %d", i, got, calls[i].own_net);
	}
}

/*
 * The programs read exhaustively, not call by call: a classic BPF
 * interpreter (the instructions libseccomp and persona() emit, and no
 * other: an unknown one fails the test) runs a program over made-up
 * seccomp_data, so every family, type and persona value can be asked,
 * upper bits and all, without making a socket.
 */
static uint32_t
run_bpf(const struct sock_filter *f, unsigned short n,
    const struct seccomp_data *d)
{
	uint32_t a = 0, x = 0, mem[BPF_MEMWORDS] = { 0 };
	unsigned pc = 0, steps = 0;

	while (pc < n && steps++ < 4096) {
		const struct sock_filter *i = &f[pc++];

		switch (i->code) {
		case BPF_LD | BPF_W | BPF_ABS:
			assert_true(i->k % 4 == 0 && i->k + 4 <= sizeof(*d));
			memcpy(&a, (const char *)d + i->k, 4);
			break;
		case BPF_LD | BPF_MEM:
			assert_true(i->k < BPF_MEMWORDS);
			a = mem[i->k];
			break;
		case BPF_LDX | BPF_MEM:
			assert_true(i->k < BPF_MEMWORDS);
			x = mem[i->k];
			break;
		case BPF_ST:
			assert_true(i->k < BPF_MEMWORDS);
			mem[i->k] = a;
			break;
		case BPF_STX:
			assert_true(i->k < BPF_MEMWORDS);
			mem[i->k] = x;
			break;
		case BPF_ALU | BPF_AND | BPF_K:
			a &= i->k;
			break;
		case BPF_MISC | BPF_TAX:
			x = a;
			break;
		case BPF_MISC | BPF_TXA:
			a = x;
			break;
		case BPF_JMP | BPF_JA:
			pc += i->k;
			break;
		case BPF_JMP | BPF_JEQ | BPF_K:
			pc += a == i->k ? i->jt : i->jf;
			break;
		case BPF_JMP | BPF_JGT | BPF_K:
			pc += a > i->k ? i->jt : i->jf;
			break;
		case BPF_JMP | BPF_JGE | BPF_K:
			pc += a >= i->k ? i->jt : i->jf;
			break;
		case BPF_JMP | BPF_JSET | BPF_K:
			pc += (a & i->k) != 0 ? i->jt : i->jf;
			break;
		case BPF_RET | BPF_K:
			return i->k;
		default:
			fail_msg("instruction %u: code 0x%x not known here", pc - 1,
			    i->code);
		}
	}
	fail_msg("the program ran off its end");
	return 0;
}

static uint32_t
verdict(enum seccomp_kind k, int nr, uint32_t arch, uint64_t a0,
    uint64_t a1, uint64_t a2)
{
	struct seccomp_prog prog;
	struct seccomp_data d;

	memset(&d, 0, sizeof(d));
	d.nr = nr;
	d.arch = arch;
	d.args[0] = a0;
	d.args[1] = a1;
	d.args[2] = a2;
	seccomp_program(k, &prog);
	return run_bpf(prog.insns, prog.count, &d);
}

#define REFUSED (SECCOMP_RET_ERRNO | EPERM)

/* A 64-bit argument's values worth asking: low ones, and upper bits set. */
static uint64_t
arg_value(unsigned i)
{
	static const uint64_t odd[] = { 0x7fffffff, 0x80000000, 0xffffffff,
		(1ull << 32) | AF_UNIX, (1ull << 32) | AF_INET,
		(1ull << 40) | AF_NETLINK, (1ull << 63) | AF_INET6,
		0xffffffff00000001ull };

	return i < 1024 ? i : odd[i - 1024];
}
#define ARG_VALUES (1024 + 8)

static void
every_socket_family_and_type_has_its_verdict(void **state)
{
	uint32_t arch = seccomp_arch_native(), want, got;
	unsigned i, t, f;
	int k;

	(void)state;
	for (k = 0; k < SECCOMP_KINDS; k++)
		for (i = 0; i < ARG_VALUES; i++)
			for (t = 0; t < 16; t++) {
				uint64_t fam = arg_value(i);
				uint64_t type = t | (i % 2 ? SOCK_CLOEXEC : 0) |
				    (i % 3 ? SOCK_NONBLOCK : 0);
				bool ok = k == SECCOMP_OWN_NET &&
				    (fam == AF_INET || fam == AF_INET6 ||
				    fam == AF_NETLINK || (fam == AF_UNIX &&
				    (t == SOCK_STREAM || t == SOCK_SEQPACKET ||
				    t == SOCK_DGRAM || t == SOCK_RAW)));

				want = ok ? SECCOMP_RET_ALLOW : REFUSED;
				got = verdict(k, __NR_socket, arch, fam, type, 0);
				if (got != want)
					fail_msg("kind %d: socket(%#llx, %#llx, 0): "
					    "%#x, wanted %#x", k,
					    (unsigned long long)fam,
					    (unsigned long long)type, got, want);
			}
	/* Routing netlink only. */
	for (f = 0; f < 64; f++) {
		want = f == 0 ? SECCOMP_RET_ALLOW : REFUSED;
		got = verdict(SECCOMP_OWN_NET, __NR_socket, arch, AF_NETLINK,
		    SOCK_RAW, f);
		assert_int_equal(got, want);
	}
	/* Pairs: unix stream and seqpacket; datagram ones with an init. */
	for (k = 0; k < SECCOMP_KINDS; k++)
		for (i = 0; i < ARG_VALUES; i++)
			for (t = 0; t < 16; t++) {
				uint64_t fam = arg_value(i);
				bool ok = fam == AF_UNIX && (t == SOCK_STREAM ||
				    t == SOCK_SEQPACKET || (k == SECCOMP_OWN_NET &&
				    (t == SOCK_DGRAM || t == SOCK_RAW)));

				want = ok ? SECCOMP_RET_ALLOW : REFUSED;
				got = verdict(k, __NR_socketpair, arch, fam,
				    t | SOCK_CLOEXEC, 0);
				if (got != want)
					fail_msg("kind %d: socketpair(%#llx, %u): "
					    "%#x, wanted %#x", k,
					    (unsigned long long)fam, t, got, want);
			}
}

static void
every_persona_but_linux_own_is_refused(void **state)
{
	static const uint64_t ok[] = { 0x0, 0x8, 0x20000, 0x20008, 0xffffffff };
	uint32_t arch = seccomp_arch_native(), want, got;
	uint32_t foreign = arch == AUDIT_ARCH_X86_64 ? AUDIT_ARCH_I386 :
	    AUDIT_ARCH_X86_64;
	unsigned i, j;
	int k;

	(void)state;
	for (k = 0; k < SECCOMP_KINDS; k++) {
		for (i = 0; i < ARG_VALUES + 4; i++) {
			uint64_t v = i < ARG_VALUES ? arg_value(i) :
			    (uint64_t)1 << (18 + i - ARG_VALUES);
			bool allowed = false;

			for (j = 0; j < sizeof(ok) / sizeof(ok[0]); j++)
				allowed |= (uint32_t)v == ok[j];
			want = allowed ? SECCOMP_RET_ALLOW : REFUSED;
			got = verdict(k, __NR_personality, arch, v, 0, 0);
			if (got != want)
				fail_msg("kind %d: personality(%#llx): %#x, "
				    "wanted %#x", k, (unsigned long long)v, got,
				    want);
		}
		/* Another architecture's call is killed, whatever it is. */
		assert_int_equal(verdict(k, __NR_personality, foreign,
		    0x0040000, 0, 0), SECCOMP_RET_KILL_PROCESS);
		assert_int_equal(verdict(k, 135, foreign, 0, 0, 0),
		    SECCOMP_RET_KILL_PROCESS);
		assert_int_equal(verdict(k, __NR_getpid, arch, 0, 0, 0),
		    SECCOMP_RET_ALLOW);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(the_prebuilt_programs_are_what_libseccomp_compiles),
		cmocka_unit_test(the_prebuilt_program_refuses),
		cmocka_unit_test(each_argument_rule_refuses_with_its_errno),
		cmocka_unit_test(every_socket_family_and_type_has_its_verdict),
		cmocka_unit_test(every_persona_but_linux_own_is_refused),
	};

	return cmocka_run_group_tests_name("seccomp", tests, NULL, NULL);
}
