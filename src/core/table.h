/*
 * The one hash table: entries keyed by a u32, in a fixed array of
 * buckets, chained through a link each entry embeds (the client's jobs by
 * id; the helper's by connection and id, and by shepherd pid). Keys are
 * unique within a table. Nothing is allocated.
 */
#ifndef CONFINE_TABLE_H
#define CONFINE_TABLE_H

#include <stddef.h>
#include <stdint.h>

struct tlink {
	struct tlink *next;
	uint32_t key;
};

/* The entry that embeds link as member. */
#define TABLE_ENTRY(link, type, member) \
	((type *)(void *)((char *)(link) - offsetof(type, member)))

/* Where key is, or where it would go (*slot NULL). */
static inline struct tlink **
table_slot(struct tlink **b, size_t n, uint32_t key)
{
	struct tlink **p = &b[key % n];

	while (*p != NULL && (*p)->key != key)
		p = &(*p)->next;
	return p;
}

/* The link of key, or NULL. */
static inline struct tlink *
table_get(struct tlink **b, size_t n, uint32_t key)
{
	return *table_slot(b, n, key);
}

/* Files l under key, which the table must not hold yet. */
static inline void
table_put(struct tlink **b, size_t n, struct tlink *l, uint32_t key)
{
	l->key = key;
	l->next = NULL;
	*table_slot(b, n, key) = l;
}

/* Takes l, which the table holds, out. */
static inline void
table_del(struct tlink **b, size_t n, struct tlink *l)
{
	*table_slot(b, n, l->key) = l->next;
}

#endif
