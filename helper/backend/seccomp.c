#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "helper/backend/seccomp.h"

/* seccomp_rules.c's programs, compiled when the helper was built. */
extern const struct sock_filter seccomp_prebuilt[];
extern const unsigned short seccomp_prebuilt_count;
extern const struct sock_filter seccomp_prebuilt_own[];
extern const unsigned short seccomp_prebuilt_own_count;
extern const struct sock_filter seccomp_prebuilt_own_net[];
extern const unsigned short seccomp_prebuilt_own_net_count;

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
	return rc;
}
