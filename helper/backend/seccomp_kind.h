/*
 * The Linux backend's seccomp filters, one for each way a job meets the
 * host (helper/backend/seccomp_rules.c says what each refuses).
 */
#ifndef CONFINE_SECCOMP_KIND_H
#define CONFINE_SECCOMP_KIND_H

enum seccomp_kind {
	SECCOMP_SHARED,     /* the host's namespaces: no IPC, no socket */
	SECCOMP_OWN,        /* namespaces of its own: its IPC is its own */
	SECCOMP_OWN_NET,    /* and its sockets, its init supervising the calls
	                       that reach an address (supervise.h) */
	SECCOMP_KINDS
};

#endif
