/* The one hash table: keys that share a bucket, taken out in any order. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "src/core/table.h"

#define NB 4
#define N 12

struct entry {
	int payload;
	struct tlink link;
};

static void
colliding_keys_are_kept_apart(void **state)
{
	struct tlink *b[NB] = { NULL };
	struct entry e[N];
	struct tlink *l;
	int i;

	(void)state;
	/* Keys 0, 4, 8...: every one in bucket 0, so each chain is long. */
	for (i = 0; i < N; i++) {
		e[i].payload = i;
		assert_null(table_get(b, NB, (uint32_t)(i * NB)));
		table_put(b, NB, &e[i].link, (uint32_t)(i * NB));
	}
	for (i = 0; i < N; i++) {
		l = table_get(b, NB, (uint32_t)(i * NB));
		assert_non_null(l);
		assert_int_equal(TABLE_ENTRY(l, struct entry, link)->payload, i);
	}
	assert_null(table_get(b, NB, 1));
	/* Out of the middle, the head and the tail: the rest stay found. */
	table_del(b, NB, &e[5].link);
	table_del(b, NB, &e[0].link);
	table_del(b, NB, &e[N - 1].link);
	for (i = 0; i < N; i++) {
		l = table_get(b, NB, (uint32_t)(i * NB));
		if (i == 5 || i == 0 || i == N - 1)
			assert_null(l);
		else
			assert_ptr_equal(l, &e[i].link);
	}
	for (i = 1; i < N - 1; i++)
		if (i != 5)
			table_del(b, NB, &e[i].link);
	for (i = 0; i < NB; i++)
		assert_null(b[i]);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(colliding_keys_are_kept_apart),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
