/*
 * The one way a tree is removed (the helper's and its tools'): a job's
 * fresh root and private tmp as the job's user (shepherd.c), the trash's
 * emptied tmps (trash.c), the benchmarks' scratch.
 */
#ifndef CONFINE_TREE_H
#define CONFINE_TREE_H

/* Only directories: a file anywhere in the tree stops it (-ENOTDIR). */
#define TREE_DIRS_ONLY 1u
/*
 * A directory whose owner lacks read, write or search on it gets all
 * three for its owner first (a job's tree, removed as the job's user:
 * what it locked, or made read-only as Go's module cache does).
 */
#define TREE_CHMOD 2u

/*
 * Removes name beneath dir (a directory's descriptor, or AT_FDCWD), and
 * everything in it, never following a symbolic link (a link goes, not
 * what it points to) and never more than depth levels down. A directory
 * is entered only when it is not empty: one that may not be removed for
 * any other reason (a mount point, a read-only file system, a parent it
 * may not change) stops it there. Nothing may be changing the tree
 * meanwhile: its maker is gone. 0 (also when name is not there), or the
 * -errno of the first failure; what it could not remove stays.
 */
int tree_remove(int dir, const char *name, unsigned flags, int depth);

#endif
