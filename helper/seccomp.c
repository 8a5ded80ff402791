#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "helper/seccomp.h"

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

/* helper/seccomp_rules.c's programs, compiled when the helper was built. */
extern const struct sock_filter seccomp_prebuilt[];
extern const unsigned short seccomp_prebuilt_count;
extern const struct sock_filter seccomp_prebuilt_own[];
extern const unsigned short seccomp_prebuilt_own_count;
extern const struct sock_filter seccomp_prebuilt_own_net[];
extern const unsigned short seccomp_prebuilt_own_net_count;

/*
 * personality(2) other than Linux's own personas (and the query): not
 * expressible in one libseccomp rule (one test per argument), so a small
 * filter of its own, loaded beside the first. A foreign architecture is
 * the first filter's to kill: the kernel takes the strictest action of all.
 */
#define ARG0_LO offsetof(struct seccomp_data, args[0])
static const struct sock_filter persona[] = {
	BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_personality, 1, 0),
	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG0_LO),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0x0, 5, 0),        /* PER_LINUX */
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0x8, 4, 0),        /* PER_LINUX32 */
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0x20000, 3, 0),    /* UNAME26 */
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0x20008, 2, 0),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0xffffffff, 1, 0), /* the query */
	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
};

void
seccomp_program(enum seccomp_kind kind, struct seccomp_prog *prog)
{
	switch (kind) {
	case SECCOMP_OWN:
		prog->insns = seccomp_prebuilt_own;
		prog->count = seccomp_prebuilt_own_count;
		break;
	case SECCOMP_OWN_NET:
		prog->insns = seccomp_prebuilt_own_net;
		prog->count = seccomp_prebuilt_own_net_count;
		break;
	case SECCOMP_SHARED:
	case SECCOMP_KINDS:
	default:
		prog->insns = seccomp_prebuilt;
		prog->count = seccomp_prebuilt_count;
		break;
	}
	prog->listener = kind == SECCOMP_OWN_NET;
}

static int
load(const struct sock_filter *insns, unsigned short count)
{
	struct sock_fprog fprog = {
		.len = count,
		.filter = (struct sock_filter *)(uintptr_t)insns,
	};

	return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &fprog, 0, 0) == 0 ?
	    0 : -errno;
}

/*
 * A filter whose notifications go to the descriptor returned. Waiting for
 * its answer, the caller may be interrupted by a fatal signal only: a
 * handler's signal would restart a connect the init made already.
 */
static int
load_listener(const struct sock_filter *insns, unsigned short count)
{
	struct sock_fprog fprog = {
		.len = count,
		.filter = (struct sock_filter *)(uintptr_t)insns,
	};
	long fd = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
	    SECCOMP_FILTER_FLAG_NEW_LISTENER |
	    SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV, &fprog);

	return fd >= 0 ? (int)fd : -errno;
}

int
seccomp_apply(const struct seccomp_prog *prog, int *listener)
{
	int rc;

	*listener = -1;
	if (prog->count == 0)
		return -EINVAL;
	if (prog->listener) {
		rc = load_listener(prog->insns, prog->count);
		if (rc >= 0) {
			*listener = rc;
			rc = 0;
		}
	} else {
		rc = load(prog->insns, prog->count);
	}
	if (rc == 0 && (rc = load(persona, NELEM(persona))) != 0 &&
	    *listener >= 0) {
		close(*listener);
		*listener = -1;
	}
	return rc;
}
