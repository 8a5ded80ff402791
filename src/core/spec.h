/*
 * The one description of a job below the API is the API's own: a struct
 * confine_spec, as the host gives it (the client checks and encodes it),
 * and as the helper decodes it (strings and arrays borrowed from the
 * frame). What the API leaves implicit is said here once.
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
#define SPEC_FLAGS (CONFINE_FRESH_SCRATCH | CONFINE_NO_TMP | \
	CONFINE_SET_TMPDIR | CONFINE_SET_HOME | CONFINE_READ_SYSTEM | \
	CONFINE_REQUIRE_NAMESPACES | CONFINE_REQUIRE_LANDLOCK | \
	CONFINE_WAIVE_METADATA)

/* Entries of a NULL-terminated list; NULL has none. */
size_t spec_count(const char *const *v);

/* Whether the spec gives argv: without, the job's argv is { exe }. */
static inline bool
spec_argv_given(const struct confine_spec *s)
{
	return s->argv != NULL && s->argv[0] != NULL;
}

/* Reads narrowed: a readable list (even empty) or the system trees. */
static inline bool
spec_narrow(const struct confine_spec *s)
{
	return s->readable != NULL || (s->flags & CONFINE_READ_SYSTEM) != 0;
}

/* The job's stdio descriptor k (0-2), or -1. */
int spec_stdio(const struct confine_spec *s, int k);

/*
 * Checks what can be checked without touching the system. Returns 0, or
 * -EINVAL with *why naming the field at fault.
 */
int spec_check(const struct confine_spec *s, const char **why);

/* An absolute path of a sane length. */
int spec_check_path(const char *path);

#endif
