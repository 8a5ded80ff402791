#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "helper/engine/trash.h"
#include "src/core/fd.h"
#include "src/core/tree.h"

#define DEPTH 64       /* deeper than any tree a job's view makes */
#define PREFIX "confine-trash."
#define OPEN_TRIES 4
#define MADE_MAX 3     /* the job's root, cwd and program: job.h's made */

struct trash {
	int dir;
	char *path;
	char **name;       /* what is in it, not yet removed */
	size_t n, cap;
};

static bool
dots(const char *name)
{
	return strcmp(name, ".") == 0 || strcmp(name, "..") == 0;
}

static int
open_dir(int parent, const char *name)
{
	return openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC);
}

/*
 * Whether dir holds nothing but directories that some of the n paths
 * (relative, '/'-separated) pass through, each of them holding in turn
 * nothing else: what make_mountpoint made, and no more. Read only,
 * never through a link.
 */
static bool
only_made(int dir, const char *const *rel, size_t n, int depth)
{
	const char *sub[MADE_MAX];
	struct dirent *e;
	size_t k, m, len;
	bool ok = depth < DEPTH, hit;
	int fd = dup(dir), child = -1;
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;

	if (d == NULL) {
		if (fd >= 0)
			close(fd);
		return false;
	}
	while (ok && (e = readdir(d)) != NULL) {
		if (dots(e->d_name))
			continue;
		for (k = m = 0, hit = false; k < n; k++) {
			len = strcspn(rel[k], "/");
			if (strlen(e->d_name) != len ||
			    strncmp(rel[k], e->d_name, len) != 0)
				continue;
			hit = true;
			if (rel[k][len] == '/')
				sub[m++] = rel[k] + len + 1;
		}
		ok = hit && (child = open_dir(dirfd(d), e->d_name)) >= 0;
		if (ok) {
			ok = only_made(child, sub, m, depth + 1);
			close(child);
		}
	}
	closedir(d);
	return ok;
}

/* One more name in t's list, the entry name of its directory. */
static int
keep(struct trash *t, const char *name)
{
	char **names;
	size_t k;

	if (t->n == t->cap) {
		k = t->cap ? 2 * t->cap : 64;
		if (k > SIZE_MAX / sizeof(*names) ||
		    (names = realloc(t->name, k * sizeof(*names))) == NULL)
			return -ENOMEM;
		t->name = names;
		t->cap = k;
	}
	if ((t->name[t->n] = strdup(name)) == NULL)
		return -ENOMEM;
	t->n++;
	return 0;
}

/*
 * The trash of a helper that is gone (none holds its lock), ours to
 * take: its entries renamed into t's, to be removed as t's own are, and
 * then it, if that left it empty. Only a directory of our own user's,
 * never through a link; an entry that cannot move stays, and with it
 * that trash, for the next helper.
 */
static void
adopt(struct trash *t, int base, const char *name)
{
	struct dirent *e;
	struct stat st;
	int fd = open_dir(base, name);
	DIR *d;

	if (fd < 0)
		return;
	/*
	 * Another user's is not even locked; ours must still be there once
	 * locked: the helper that last held it may have just removed it.
	 */
	if (fstat(fd, &st) != 0 || st.st_uid != geteuid() ||
	    flock(fd, LOCK_EX | LOCK_NB) != 0 || fstat(fd, &st) != 0 ||
	    st.st_nlink == 0 || (d = fdopendir(fd)) == NULL) {
		close(fd);
		return;
	}
	while ((e = readdir(d)) != NULL) {
		if (dots(e->d_name))
			continue;
		/* Each came from a mkdtemp in the same base: unique here. */
		if (renameat(dirfd(d), e->d_name, t->dir, e->d_name) != 0)
			continue;
		if (keep(t, e->d_name) != 0)
			break;  /* then it stays in t, until t's own last rmdir */
	}
	(void)unlinkat(base, name, AT_REMOVEDIR);
	closedir(d);
}

/* Every trash beneath base but t's whose helper is gone. */
static void
adopt_all(struct trash *t, const char *base)
{
	const char *own = strrchr(t->path, '/') + 1;
	struct dirent *e;
	DIR *d;

	if ((d = opendir(base)) == NULL)
		return;
	while ((e = readdir(d)) != NULL)
		if (strncmp(e->d_name, PREFIX, strlen(PREFIX)) == 0 &&
		    strcmp(e->d_name, own) != 0)
			adopt(t, dirfd(d), e->d_name);
	closedir(d);
}

/*
 * A fresh trash, locked for as long as t lives: that lock is how another
 * helper tells it from a dead helper's. Locked and still there: such a
 * helper may have taken it between the mkdtemp and the flock.
 */
static int
make(struct trash *t, const char *base)
{
	struct stat st;
	int i;

	for (i = 0; i < OPEN_TRIES; i++) {
		free(t->path);
		t->path = NULL;
		if (asprintf(&t->path, "%s/" PREFIX "XXXXXX", base) < 0)
			return -1;
		if (mkdtemp(t->path) == NULL)
			return -1;
		t->dir = open(t->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (t->dir < 0) {
			(void)rmdir(t->path);
			return -1;
		}
		if (flock(t->dir, LOCK_EX | LOCK_NB) == 0 &&
		    fstat(t->dir, &st) == 0 && st.st_nlink > 0)
			return 0;
		close(t->dir);
		(void)rmdir(t->path);
	}
	return -1;
}

struct trash *
trash_open(const char *base)
{
	struct trash *t = calloc(1, sizeof(*t));

	if (t == NULL || base == NULL || make(t, base) != 0) {
		if (t != NULL)
			free(t->path);
		free(t);
		return NULL;
	}
	adopt_all(t, base);
	return t;
}

int
trash_put(struct trash *t, const char *dir, char *const *made, size_t n)
{
	const char *rel[MADE_MAX], *base = strrchr(dir, '/');
	size_t k;
	bool ok;
	int fd, rc;

	if (n > MADE_MAX || base == NULL || base[1] == '\0')
		return -EINVAL;
	base++;
	for (k = 0; k < n; k++) {
		if (strncmp(made[k], "/tmp/", 5) != 0)
			return -EINVAL;
		rel[k] = made[k] + 5;
	}
	if ((fd = open_dir(AT_FDCWD, dir)) < 0)
		return -errno;
	ok = only_made(fd, rel, n, 0);
	close(fd);
	if (!ok)
		return -ENOTEMPTY;
	if ((rc = keep(t, base)) != 0)
		return rc;
	/* Its name is unique in the tmp base, so it is in the trash too. */
	if (renameat(AT_FDCWD, dir, t->dir, base) != 0) {
		rc = -errno;
		free(t->name[--t->n]);
		return rc;
	}
	return 0;
}

size_t
trash_tidy(struct trash *t, size_t max)
{
	if (t == NULL)
		return 0;
	/* One that cannot go (something put in it after the check) stays. */
	for (; max > 0 && t->n > 0; max--) {
		t->n--;
		(void)tree_remove(t->dir, t->name[t->n], TREE_DIRS_ONLY,
		    DEPTH);
		free(t->name[t->n]);
	}
	return t->n;
}

void
trash_close(struct trash *t)
{
	if (t == NULL)
		return;
	(void)trash_tidy(t, SIZE_MAX);
	/* Removed while still locked: no other helper takes it meanwhile. */
	(void)rmdir(t->path);
	close(t->dir);
	free(t->name);
	free(t->path);
	free(t);
}
