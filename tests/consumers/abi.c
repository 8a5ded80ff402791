/*
 * A host and a library built against headers of different sizes.
 *
 * Built as is, it is a host of this header linked with
 * //src/client:client_next, the library as the next version would build
 * it (one more field at the end of confine_options, confine_spec and
 * confine_result): each struct of the host sits at the very end of a
 * page followed by one that cannot be touched, so a library that read
 * or wrote its own sizeof instead of the host's would fault. Built with
 * CONFINE_ABI_NEXT, it is the next version's host against this library:
 * the field it adds, left zero, changes nothing; set, it is refused with
 * -E2BIG, never ignored.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "confine/confine.h"

static unsigned char *pages;
static size_t page;

/* Room for n bytes that end where the page that faults begins. */
static void *
at_the_edge(size_t n)
{
	memset(pages, 0, page);
	return pages + page - n;
}

static int
setup(void **state)
{
	(void)state;
	page = (size_t)sysconf(_SC_PAGESIZE);
	pages = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE,
	    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (pages == MAP_FAILED)
		return -1;
	return mprotect(pages + page, page, PROT_NONE);
}

static const char *
scratch(void)
{
	const char *t = getenv("TEST_TMPDIR");

	return t != NULL ? t : "/tmp";
}

static const char *exit3[] = { "sh", "-c", "exit 3", NULL };

/*
 * Opens with the options at the edge, then runs sh -c 'exit 3' with the
 * spec there, and waits with the result there (one after the other: each
 * is the library's once the call returns).
 */
static void
open_and_run(struct confine **c)
{
	struct confine_options *o = at_the_edge(sizeof(*o));
	struct confine_spec *spec;
	struct confine_job *job;
	struct confine_result *r;

	o->mode = CONFINE_MODE_AUTO;
	o->spawn_timeout_ms = 60000;
	assert_int_equal(confine_open(c, o), 0);
	spec = at_the_edge(sizeof(*spec));
	confine_spec_init(spec);
	assert_int_equal(spec->stdout_fd, -1);
	spec->exe = "/bin/sh";
	spec->argv = exit3;
	spec->scratch = scratch();
	assert_int_equal(confine_spawn(*c, spec, &job), 0);
	r = at_the_edge(sizeof(*r));
	assert_int_equal(confine_wait(job, -1, r), 0);
	assert_int_equal(r->outcome, CONFINE_FAILED);
	assert_int_equal(r->reason, CONFINE_REASON_EXIT_CODE);
	assert_int_equal(r->exit_code, 3);
	assert_true(r->pid > 0);
	confine_job_free(job);
}

static void
structs_of_the_hosts_size_work(void **state)
{
	struct confine *c;

	(void)state;
	open_and_run(&c);
	confine_close(c);
}

static void
sizes_below_this_version_are_refused(void **state)
{
	struct confine_spec spec;
	struct confine_result r;
	struct confine_options o = { .mode = CONFINE_MODE_AUTO };
	struct confine_job *job = NULL;
	struct confine *c = NULL;

	(void)state;
	assert_int_equal(confine_open_sized(&c, &o, 3 * sizeof(void *)),
	    -EINVAL);
	assert_non_null(strstr(confine_error_message(), "confine_options"));
	assert_null(c);
	assert_int_equal(confine_open(&c, NULL), 0);
	confine_spec_init(&spec);
	spec.exe = "/bin/true";
	spec.scratch = scratch();
	assert_int_equal(confine_spawn_sized(c, &spec,
	    offsetof(struct confine_spec, readable), &job), -EINVAL);
	assert_null(job);
	assert_int_equal(confine_spawn(c, &spec, &job), 0);
	assert_int_equal(confine_wait_sized(job, -1, &r,
	    offsetof(struct confine_result, max_rss_kib)), -EINVAL);
	assert_int_equal(confine_wait(job, -1, &r), 0);
	assert_int_equal(r.outcome, CONFINE_COMPLETED);
	confine_job_free(job);
	confine_close(c);
}

static void
the_version_is_the_headers(void **state)
{
	char v[32];

	(void)state;
	snprintf(v, sizeof(v), "%d.%d.%d", CONFINE_VERSION_MAJOR,
	    CONFINE_VERSION_MINOR, CONFINE_VERSION_PATCH);
	assert_string_equal(v, CONFINE_VERSION);
	assert_string_equal(confine_version(), CONFINE_VERSION);
}

#ifdef CONFINE_ABI_NEXT
/* The next version's field, set: this library does not know it. */
static void
a_field_the_library_lacks_is_refused_when_set(void **state)
{
	struct confine_options o = { .mode = CONFINE_MODE_AUTO, .abi_next = 1 };
	struct confine_spec spec;
	struct confine_result r;
	struct confine_job *job;
	struct confine *c;

	(void)state;
	assert_int_equal(confine_open(&c, &o), -E2BIG);
	assert_non_null(strstr(confine_error_message(), "does not know"));
	open_and_run(&c);
	confine_spec_init(&spec);
	spec.exe = "/bin/sh";
	spec.argv = exit3;
	spec.scratch = scratch();
	spec.abi_next = 7;
	assert_int_equal(confine_spawn(c, &spec, &job), -E2BIG);
	spec.abi_next = 0;
	assert_int_equal(confine_spawn(c, &spec, &job), 0);
	/* The library writes what it knows and zeros the rest. */
	memset(&r, 0xff, sizeof(r));
	assert_int_equal(confine_wait(job, -1, &r), 0);
	assert_int_equal(r.exit_code, 3);
	assert_int_equal(r.abi_next, 0);
	confine_job_free(job);
	confine_close(c);
}
#endif

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(structs_of_the_hosts_size_work),
		cmocka_unit_test(sizes_below_this_version_are_refused),
		cmocka_unit_test(the_version_is_the_headers),
#ifdef CONFINE_ABI_NEXT
		cmocka_unit_test(a_field_the_library_lacks_is_refused_when_set),
#endif
	};

	return cmocka_run_group_tests_name("abi", tests, setup, NULL);
}
