/* The contract's cases, run for one backend. */
#ifndef CONFINE_CONTRACT_H
#define CONFINE_CONTRACT_H

#include "confine/confine.h"

/*
 * Runs them as a cmocka group; returns the number of failures. proof is
 * the one the platform must report for a job that left nothing behind.
 */
int contract_run(enum confine_backend backend, int write_errno, int net_errno,
    enum confine_proof proof);

#endif
