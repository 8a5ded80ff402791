#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "src/core/tree.h"

/*
 * name in dir, a directory not followed through a link: its descriptor,
 * with TREE_CHMOD made readable, writable and searchable by its owner.
 */
static int
open_dir(int dir, const char *name, unsigned flags)
{
	struct stat st;
	int fd;

	fd = openat(dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (!(flags & TREE_CHMOD))
		return fd;
	if (fd < 0 && errno == EACCES) {
		if (fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
		    !S_ISDIR(st.st_mode) ||
		    fchmodat(dir, name, (st.st_mode & 07777) | S_IRWXU, 0) != 0) {
			errno = EACCES;
			return -1;
		}
		return openat(dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
		    O_CLOEXEC);
	}
	if (fd >= 0 && fstat(fd, &st) == 0 && (st.st_mode & S_IRWXU) !=
	    S_IRWXU && fchmod(fd, (st.st_mode & 07777) | S_IRWXU) != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

int
tree_remove(int dir, const char *name, unsigned flags, int depth)
{
	struct dirent *e;
	int fd, rc = 0;
	DIR *d;

	/* Most are an empty directory or a file: one call, nothing read. */
	if (unlinkat(dir, name, AT_REMOVEDIR) == 0 || errno == ENOENT)
		return 0;
	if (errno == ENOTDIR) {
		if (flags & TREE_DIRS_ONLY)
			return -ENOTDIR;
		return unlinkat(dir, name, 0) == 0 || errno == ENOENT ? 0 :
		    -errno;
	}
	/* Not empty is the one reason to look inside. */
	if (errno != ENOTEMPTY && errno != EEXIST)
		return -errno;
	if (depth <= 0)
		return -ELOOP;
	if ((fd = open_dir(dir, name, flags)) < 0)
		return errno == ENOENT ? 0 : -errno;
	if ((d = fdopendir(fd)) == NULL) {
		rc = -errno;
		close(fd);
		return rc;
	}
	while (rc == 0 && (e = readdir(d)) != NULL)
		if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
			rc = tree_remove(dirfd(d), e->d_name, flags, depth - 1);
	closedir(d);
	if (rc == 0 && unlinkat(dir, name, AT_REMOVEDIR) != 0)
		rc = errno == ENOENT ? 0 : -errno;
	return rc;
}
