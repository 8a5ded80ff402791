/*
 * Where a helper puts the private tmps of settled jobs, to remove them
 * when it has time. A job's tmp the job left empty (but for the
 * directories its view made there, to see trees beneath /tmp again) is
 * renamed into the helper's trash, a directory of its own beside the
 * tmps: one rename, where removing it is a rmdir per directory, each of
 * which on a disk (and there with online discard, which waits for the
 * device) costs a good part of a short job. The job's result does not
 * wait for the removal; its tmp's path is gone when the result is sent.
 *
 * Only empty directories are ever removed from the trash, without
 * following a link: whatever else is found there (something the tmp's
 * user put in it after the check) is left, and with it the trash.
 */
#ifndef CONFINE_TRASH_H
#define CONFINE_TRASH_H

#include <stddef.h>

struct trash;

/*
 * A trash beneath base (the helper's tmp base), or NULL: then none. It
 * is locked while it lives; what the trashes of helpers that are gone
 * (unlocked, and of this user) still hold is moved into it, to be
 * removed as its own entries are.
 */
struct trash *trash_open(const char *base);

/*
 * Moves dir into the trash if it holds nothing but empty directories
 * for made (n paths beneath /tmp, canonical: those the job's view made
 * in its tmp): 0, or -errno and dir is where it was.
 */
int trash_put(struct trash *t, const char *dir, char *const *made, size_t n);

/* Removes up to max entries; returns how many are left. */
size_t trash_tidy(struct trash *t, size_t max);

/* Removes what it can, the trash itself if empty, and frees t. */
void trash_close(struct trash *t);

#endif
