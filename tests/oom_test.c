/*
 * The client out of memory while reading its helper: the call says so
 * (-ENOMEM), rather than its readers polling a readable socket for ever
 * (without the fix this test times out). realloc is this program's own,
 * failing once armed for the sizes the client's input buffer grows by
 * (the library resolves it here, before the C library's).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "tests/helperutil.h"
#include "tests/testutil.h"

static volatile bool armed;

void *realloc(void *p, size_t n);

void *
realloc(void *p, size_t n)
{
	static void *(*next)(void *, size_t);

	if (armed && n >= 65536) {
		errno = ENOMEM;
		return NULL;
	}
	if (next == NULL)
		next = (void *(*)(void *, size_t))dlsym(RTLD_NEXT, "realloc");
	return next(p, n);
}

/* The string the client's strdup fails for, once set. */
static const char *volatile refuse_copy;

char *strdup(const char *s);

char *
strdup(const char *s)
{
	size_t n = strlen(s) + 1;
	char *d;

	if (refuse_copy != NULL && strcmp(s, refuse_copy) == 0) {
		errno = ENOMEM;
		return NULL;
	}
	if ((d = malloc(n)) != NULL)
		memcpy(d, s, n);
	return d;
}

static void
a_buffer_that_cannot_grow_ends_the_connection(void **state)
{
	char *scratch = tu_mkdtemp("scratch");
	struct confine *c;
	struct hu_job j;
	int rc;

	(void)state;
	/* The input buffer is made at the first read: the handshake's. */
	armed = true;
	rc = hu_open(&c, CONFINE_MODE_EXEC, NULL);
	armed = false;
	assert_int_equal(rc, -ENOMEM);
	/* Memory again: a helper serves. */
	assert_int_equal(hu_open(&c, CONFINE_MODE_EXEC, NULL), 0);
	hu_init(&j, scratch, "exit", "0", NULL);
	assert_int_equal(hu_run(c, &j), 0);
	assert_int_equal(j.r.outcome, CONFINE_COMPLETED);
	hu_free(&j);
	confine_close(c);
	free(scratch);
}

/*
 * The job's root, as STARTED names it, not copied: the connection ends,
 * and the job, which may have started, is Uncertain(helper lost), never a
 * job that reads as started with no root.
 */
static void
a_root_that_cannot_be_copied_ends_the_connection(void **state)
{
	char *scratch = tu_mkdtemp("scratch"), *root = realpath(scratch, NULL);
	struct confine *c;
	struct hu_job j;

	(void)state;
	assert_non_null(root);
	assert_int_equal(hu_open(&c, CONFINE_MODE_EXEC, NULL), 0);
	hu_init(&j, scratch, "exit", "0", NULL);
	refuse_copy = root;
	assert_int_equal(hu_spawn(c, &j), 0);
	refuse_copy = NULL;
	assert_int_equal(hu_wait(&j), 0);
	assert_int_equal(j.r.outcome, CONFINE_UNCERTAIN);
	assert_int_equal(j.r.reason, CONFINE_REASON_HELPER_LOST);
	hu_free(&j);
	confine_close(c);
	/* A copy again: a helper serves, and names the root. */
	assert_int_equal(hu_open(&c, CONFINE_MODE_EXEC, NULL), 0);
	hu_init(&j, scratch, "exit", "0", NULL);
	assert_int_equal(hu_spawn(c, &j), 0);
	assert_string_equal(confine_job_scratch(j.job), root);
	assert_int_equal(hu_wait(&j), 0);
	assert_int_equal(j.r.outcome, CONFINE_COMPLETED);
	hu_free(&j);
	confine_close(c);
	free(root);
	free(scratch);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(a_buffer_that_cannot_grow_ends_the_connection),
		cmocka_unit_test(a_root_that_cannot_be_copied_ends_the_connection),
	};

	hu_setup();
	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests_name("oom", tests, NULL, NULL);
}
