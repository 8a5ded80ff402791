/*
 * Allocation failure on demand, for programs linked with
 * -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=strdup,
 * --wrap=asprintf: armed with n, the n-th allocation from then on fails
 * with ENOMEM, once. A program may instead be armed from its environment
 * (CONFINE_TEST_ALLOC_FAIL=n, read at its first allocation); then the
 * file CONFINE_TEST_ALLOC_MARK is made at the failure, and only the first
 * of the program and its forked children to reach the n-th fails.
 */
#ifndef CONFINE_TESTS_ALLOC_FAIL_H
#define CONFINE_TESTS_ALLOC_FAIL_H

void alloc_fail_arm(long n);  /* 0 disarms, and keeps the count */
int alloc_fail_hits(void);    /* failures since last armed */

#endif
