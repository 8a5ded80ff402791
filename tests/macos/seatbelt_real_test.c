/*
 * The contract's evidence on macOS: the contract's cases (tests/contract.c)
 * run for real under /usr/bin/sandbox-exec, each denial paired with the
 * same probe unconfined, each denied with Seatbelt's EPERM. Defined only
 * when Bazel runs on a Mac (tests/macos/defs.bzl). No macOS host has run
 * this yet: see docs/macos-contract.md.
 */
#include <errno.h>

#include "tests/contract.h"
#include "tests/jobrun.h"

int
main(void)
{
	static const struct contract_errnos seatbelt = { EPERM, EPERM, EPERM };

	jr_setup();
	return contract_run(CONFINE_BACKEND_SEATBELT, &seatbelt,
	    CONFINE_PROOF_PGID);
}
