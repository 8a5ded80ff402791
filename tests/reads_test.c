/*
 * Reads narrowed (issue 16), through the core: a secret outside every
 * readable tree is unreadable (open, a listing, a mapping, exec), each
 * proven in a pair: the same probe reaches it unconfined, and confined
 * with reads left wide (the seed's default). What stays: metadata, and
 * what the spec lists.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/jobrun.h"
#include "tests/testutil.h"

#define LL CONFINE_BACKEND_LANDLOCK
#define NONE CONFINE_BACKEND_NONE

/* A scratch root, and beside it a secret directory no tree names. */
struct dirs {
	char *scratch, *secret, *key, *tool, *pub;
	const char *reads[4];   /* the fixture's directory, then pub */
};

static char *
dir_of(const char *path)
{
	char *c = realpath(path, NULL), *slash;

	assert_non_null(c);
	slash = strrchr(c, '/');
	assert_non_null(slash);
	*slash = '\0';
	return c;
}

static int
setup(void **state)
{
	struct dirs *d = calloc(1, sizeof(*d));
	char cmd[8192];

	assert_non_null(d);
	d->scratch = tu_mkdtemp("scratch");
	d->secret = tu_mkdtemp("secret");
	d->pub = tu_mkdtemp("pub");
	d->key = tu_join(d->secret, "key");
	d->tool = tu_join(d->secret, "true");
	jr_put(d->key, "secret\n");
	snprintf(cmd, sizeof(cmd), "cp /bin/true '%s'", d->tool);
	assert_int_equal(system(cmd), 0);
	d->reads[0] = dir_of(jr_fixture);
	d->reads[1] = NULL;
	*state = d;
	return 0;
}

static int
teardown(void **state)
{
	struct dirs *d = *state;
	char cmd[8192];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s' '%s' '%s'", d->scratch,
	    d->secret, d->pub);
	(void)system(cmd);
	free(d->scratch);
	free(d->secret);
	free(d->pub);
	free(d->key);
	free(d->tool);
	free((char *)(uintptr_t)d->reads[0]);
	free(d);
	return 0;
}

/*
 * `fixture args...` in d's scratch root: with reads narrowed to the
 * fixture's own directory, reads (NULL-terminated), and the system trees
 * when system. Its exit code: 0 or an errno.
 */
static int
probe(const struct dirs *d, enum confine_backend b, bool narrow, bool system,
    const char *const *reads, const char *const *args)
{
	const char *all[8];
	struct jr j;
	size_t k = 0;
	int rc;

	jr_init_args(&j, b, d->scratch, args);
	all[k++] = d->reads[0];
	while (reads != NULL && *reads != NULL && k < 7)
		all[k++] = *reads++;
	all[k] = NULL;
	if (narrow) {
		j.spec.flags |= system ? CONFINE_READ_SYSTEM : 0;
		j.spec.readable = all;
	}
	jr_run(&j);
	assert_int_equal(j.rc, 0);
	assert_int_equal(j.r.outcome == CONFINE_UNCERTAIN, 0);
	rc = j.r.reason == CONFINE_REASON_EXEC ? -j.r.error : j.r.exit_code;
	jr_free(&j);
	return rc;
}

#define ARGS(...) ((const char *const[]){ __VA_ARGS__, NULL })

/* Unconfined and wide it gets through; narrowed, EACCES. */
#define DENIED(d, ...) do {                                                \
		assert_int_equal(probe((d), NONE, false, false, NULL,       \
		    ARGS(__VA_ARGS__)), 0);                                 \
		assert_int_equal(probe((d), LL, false, false, NULL,         \
		    ARGS(__VA_ARGS__)), 0);                                 \
		assert_int_equal(probe((d), LL, true, true, NULL,           \
		    ARGS(__VA_ARGS__)), EACCES);                            \
	} while (0)

static void
a_secret_outside_every_tree_is_unreadable(void **state)
{
	struct dirs *d = *state;

	DENIED(d, "read", d->key);
	DENIED(d, "map", d->key);
	DENIED(d, "list", d->secret);
}

/*
 * Without the system trees a dynamically linked program does not even
 * start: its loader and libc are unreadable (the exec step's EACCES).
 */
static void
without_the_system_trees_nothing_dynamic_starts(void **state)
{
	struct dirs *d = *state;

	assert_int_equal(probe(d, LL, true, false, NULL, ARGS("exit", "0")),
	    -EACCES);
}

/* Exec only where read is: a program of the secret tree runs nowhere. */
static void
a_program_outside_every_tree_does_not_run(void **state)
{
	struct dirs *d = *state;

	DENIED(d, "run", d->tool);
	/* Listed, it runs (the system trees hold its libraries). */
	assert_int_equal(probe(d, LL, true, true, ARGS(d->secret),
	    ARGS("run", d->tool)), 0);
}

/* A link inside a readable tree opens nothing outside it. */
static void
a_link_to_the_secret_opens_nothing(void **state)
{
	struct dirs *d = *state;
	char *in_pub = tu_join(d->pub, "key"), *in_root = tu_join(d->scratch,
	    "key");

	assert_int_equal(symlink(d->key, in_pub), 0);
	assert_int_equal(symlink(d->key, in_root), 0);
	assert_int_equal(probe(d, LL, false, false, NULL, ARGS("read", in_pub)), 0);
	assert_int_equal(probe(d, LL, true, true, ARGS(d->pub),
	    ARGS("read", in_pub)), EACCES);
	assert_int_equal(probe(d, LL, true, true, NULL, ARGS("read", in_root)),
	    EACCES);
	unlink(in_pub);
	unlink(in_root);
	free(in_pub);
	free(in_root);
}

/* What is listed reads; so do the job's own trees and the system's. */
static void
what_is_listed_reads(void **state)
{
	struct dirs *d = *state;
	char *mine = tu_join(d->scratch, "mine");

	jr_put(mine, "x");
	assert_int_equal(probe(d, LL, true, true, ARGS(d->secret),
	    ARGS("read", d->key)), 0);
	/* A file alone, not its directory. */
	assert_int_equal(probe(d, LL, true, true, ARGS(d->key),
	    ARGS("read", d->key)), 0);
	assert_int_equal(probe(d, LL, true, true, ARGS(d->key),
	    ARGS("list", d->secret)), EACCES);
	assert_int_equal(probe(d, LL, true, true, NULL, ARGS("read", mine)), 0);
	assert_int_equal(probe(d, LL, true, true, NULL, ARGS("list",
	    d->scratch)), 0);
	assert_int_equal(probe(d, LL, true, true, NULL, ARGS("read",
	    "/dev/null")), 0);
	assert_int_equal(probe(d, LL, true, true, NULL, ARGS("read",
	    "/etc/passwd")), 0);
	assert_int_equal(probe(d, LL, true, true, NULL, ARGS("read",
	    "/proc/self/status")), 0);
	/* Of /etc, what the preset names, not the rest. */
	assert_int_equal(probe(d, LL, true, true, NULL, ARGS("list", "/etc")),
	    EACCES);
	unlink(mine);
	free(mine);
}

/* Not claimed, and pinned so: metadata stays visible (Landlock's own). */
static void
metadata_of_the_secret_stays_visible(void **state)
{
	struct dirs *d = *state;

	assert_int_equal(probe(d, LL, true, true, NULL, ARGS("stat", d->key)), 0);
}

/* The system preset names none of /etc's secrets. */
static void
the_system_trees_hold_no_secret_of_etc(void **state)
{
	static const char *const secrets[] = { "/etc/shadow", "/etc/gshadow",
		"/etc/ssh", "/etc/ssl/private", "/etc/sudoers", "/root" };
	struct dirs *d = *state;
	size_t i;

	struct stat st;

	for (i = 0; i < sizeof(secrets) / sizeof(secrets[0]); i++) {
		if (stat(secrets[i], &st) != 0)
			continue;
		assert_int_equal(probe(d, LL, true, true, NULL, ARGS(
		    S_ISDIR(st.st_mode) ? "list" : "read", secrets[i])), EACCES);
	}
}

static struct jr
refusal(const struct dirs *d, enum confine_backend b, const char *const *reads)
{
	struct jr j;

	jr_init(&j, b, d->scratch, "exit", "0", NULL);
	j.spec.readable = reads;
	jr_run(&j);
	return j;
}

/* A tree that cannot be read as named refuses the job, and says why. */
static void
a_bad_tree_refuses_the_job(void **state)
{
	struct dirs *d = *state;
	char *gone = tu_join(d->secret, "gone");
	const char *const missing[] = { gone, NULL };
	const char *const relative[] = { "usr", NULL };
	const char *const none[] = { NULL };
	struct jr j;

	j = refusal(d, LL, missing);
	assert_int_equal(j.rc, -ENOENT);
	assert_non_null(strstr(j.why, "readable tree must exist"));
	jr_free(&j);
	j = refusal(d, LL, relative);
	assert_int_equal(j.rc, -EINVAL);
	jr_free(&j);
	/* Backend none would read everything: refused, not ignored. */
	j = refusal(d, NONE, none);
	assert_int_equal(j.rc, -EINVAL);
	assert_non_null(strstr(j.why, "backend none"));
	jr_free(&j);
	free(gone);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(a_secret_outside_every_tree_is_unreadable),
		cmocka_unit_test(without_the_system_trees_nothing_dynamic_starts),
		cmocka_unit_test(a_program_outside_every_tree_does_not_run),
		cmocka_unit_test(a_link_to_the_secret_opens_nothing),
		cmocka_unit_test(what_is_listed_reads),
		cmocka_unit_test(metadata_of_the_secret_stays_visible),
		cmocka_unit_test(the_system_trees_hold_no_secret_of_etc),
		cmocka_unit_test(a_bad_tree_refuses_the_job),
	};

	jr_setup();
	return cmocka_run_group_tests_name("reads", tests, setup, teardown);
}
