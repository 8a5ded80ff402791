/* The contract's cases, run for one backend. */
#ifndef CONFINE_CONTRACT_H
#define CONFINE_CONTRACT_H

#include "confine/confine.h"

/* The backend's denial errnos. */
struct contract_errnos {
	int write;   /* create, write, truncate or hard-link outside the root,
	                also through a symlink pointing out */
	int rename;  /* rename out of the scratch root, or into it */
	int net;     /* a TCP connect */
};

/*
 * Runs them as a cmocka group; returns the number of failures. proof is
 * the one the platform must report for a job that left nothing behind.
 */
int contract_run(enum confine_backend backend, const struct contract_errnos *e,
    enum confine_proof proof);

#endif
