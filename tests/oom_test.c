/*
 * The client out of memory while reading its helper: the connection ends
 * and the call says so, rather than its readers polling a readable
 * socket for ever (without the fix this test times out). realloc is this program's own, failing once armed for
 * the sizes the client's input buffer grows by (the library resolves it
 * here, before the C library's).
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

static void
a_buffer_that_cannot_grow_ends_the_connection(void **state)
{
	char *scratch = tu_mkdtemp("scratch");
	struct confine *c;
	struct hu_job j;

	/* The input buffer is made at the first read: the handshake's. */
	armed = true;
	assert_int_equal(hu_open(&c, CONFINE_MODE_EXEC, NULL), -ECONNRESET);
	armed = false;
	/* Memory again: a helper serves. */
	assert_int_equal(hu_open(&c, CONFINE_MODE_EXEC, NULL), 0);
	hu_init(&j, scratch, "exit", "0", NULL);
	assert_int_equal(hu_run(c, &j), 0);
	assert_int_equal(j.r.outcome, CONFINE_COMPLETED);
	hu_free(&j);
	confine_close(c);
	free(scratch);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(a_buffer_that_cannot_grow_ends_the_connection),
	};

	hu_setup();
	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests_name("oom", tests, NULL, NULL);
}
