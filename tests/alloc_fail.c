/* Allocation failure on demand: see alloc_fail.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "tests/alloc_fail.h"

static atomic_long countdown = -1;  /* -1: the environment not read yet */
static atomic_int hits;

void
alloc_fail_arm(long n)
{
	if (n > 0)
		atomic_store(&hits, 0);
	atomic_store(&countdown, n);
}

int
alloc_fail_hits(void)
{
	return atomic_load(&hits);
}

/*
 * Whether this failure is the first: a forked child counts on from its
 * parent's count, so either could reach the n-th; the mark file, made
 * exclusively, lets only the first of them fail. No allocation here: it
 * runs inside every one.
 */
static bool
first_failure(void)
{
	const char *path = getenv("CONFINE_TEST_ALLOC_MARK");
	int fd;

	if (path == NULL)
		return true;
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		return false;
	(void)write(fd, "hit\n", 4);
	close(fd);
	return true;
}

static bool
fail_now(void)
{
	long n = atomic_load(&countdown), first = -1;
	const char *env;

	if (n == -1) {
		env = getenv("CONFINE_TEST_ALLOC_FAIL");
		(void)atomic_compare_exchange_strong(&countdown, &first,
		    env != NULL ? strtol(env, NULL, 10) : 0);
		n = atomic_load(&countdown);
	}
	while (n > 0 && !atomic_compare_exchange_weak(&countdown, &n, n - 1))
		;
	if (n != 1 || !first_failure())
		return false;
	atomic_fetch_add(&hits, 1);
	errno = ENOMEM;
	return true;
}

void *__real_malloc(size_t n);
void *__real_calloc(size_t k, size_t n);
void *__real_realloc(void *p, size_t n);
char *__real_strdup(const char *s);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t k, size_t n);
void *__wrap_realloc(void *p, size_t n);
char *__wrap_strdup(const char *s);
int __wrap_asprintf(char **s, const char *fmt, ...);

void *
__wrap_malloc(size_t n)
{
	return fail_now() ? NULL : __real_malloc(n);
}

void *
__wrap_calloc(size_t k, size_t n)
{
	return fail_now() ? NULL : __real_calloc(k, n);
}

void *
__wrap_realloc(void *p, size_t n)
{
	return fail_now() ? NULL : __real_realloc(p, n);
}

char *
__wrap_strdup(const char *s)
{
	return fail_now() ? NULL : __real_strdup(s);
}

int
__wrap_asprintf(char **s, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (fail_now())
		return -1;
	va_start(ap, fmt);
	n = vasprintf(s, fmt, ap);
	va_end(ap);
	return n;
}
