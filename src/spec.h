/*
 * The internal description of one job, shared by the client (which encodes
 * it), the wire decoder and the helper (which runs it). Strings are borrowed.
 */
#ifndef CONFINE_SPEC_H
#define CONFINE_SPEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "confine/confine.h"

#define SPEC_MAX_DEVICES 16
#define SPEC_MAX_READABLE 64
#define SPEC_MAX_MS INT64_C(1000000000000) /* ~31 years: no ns overflow */
#define SPEC_DEFAULT_LAUNCHER "/usr/bin/sandbox-exec"

struct spec {
	const char *exe;            /* absolute */
	const char *const *argv;    /* argc entries then NULL; argv[0] is the name */
	size_t argc;                /* >= 1 */
	const char *const *envp;    /* envc "NAME=VALUE" entries then NULL */
	size_t envc;
	const char *scratch;        /* absolute; NULL only with backend none */
	const char *cwd;            /* absolute, or NULL: the scratch root */
	const char *const *devices; /* extra writable device nodes, absolute */
	size_t ndevices;
	const char *launcher;       /* seatbelt only; NULL: SPEC_DEFAULT_LAUNCHER */
	int64_t deadline_ms;        /* 0: none */
	int64_t grace_ms;           /* SIGTERM this long before SIGKILL; 0: none */
	enum confine_backend backend;
	struct confine_limits limits;
	bool fresh_scratch;         /* scratch is a parent: make a fresh root */
	bool no_tmp;                /* no private temporary directory */
	bool set_tmpdir;            /* add TMPDIR to the environment */
	bool set_home;              /* add HOME (the scratch root) to it */
	const char *const *readable; /* trees it may read, absolute */
	size_t nreadable;
	bool read_narrow;           /* reads only where the policy says */
	bool read_system;           /* and the platform's system trees */
	int fd[3];                  /* the job's stdio; -1: /dev/null */
};

/*
 * Checks what can be checked without touching the system. Returns 0, or
 * -EINVAL with *why naming the field at fault.
 */
int spec_check(const struct spec *s, const char **why);

/* An absolute path of a sane length. */
int spec_check_path(const char *path);

#endif
