/*
 * Read-only looks at /proc the benchmark alone needs: the mounts and the
 * cgroup the helper's jobs will meet. (A process's own figures, its
 * memory, CPU time and children: src/core/procstat.c, the tests' too.)
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "src/core/mountinfo.h"
#include "src/core/proc.h"
#include "tools/bench/bench.h"

struct best_mount {
	const char *path, *fstype;
	struct proc_mount *out;
	size_t best;
	int rc;
};

/* The deepest mount covering path, or (path NULL) the first of fstype. */
static int
better_mount(const struct mountinfo_entry *e, void *arg)
{
	struct best_mount *b = arg;
	size_t n = 0;

	if (b->path == NULL ? strcmp(e->type, b->fstype) != 0 :
	    (n = mountinfo_covers(e->point, b->path)) == 0 || n < b->best)
		return 0;
	b->best = n;
	snprintf(b->out->point, sizeof(b->out->point), "%s", e->point);
	snprintf(b->out->type, sizeof(b->out->type), "%s", e->type);
	snprintf(b->out->opts, sizeof(b->out->opts), "%s", e->opts);
	snprintf(b->out->super, sizeof(b->out->super), "%s", e->super);
	b->rc = 0;
	return b->path == NULL;
}

int
proc_mount(const char *path, const char *fstype, struct proc_mount *out)
{
	struct best_mount b = { path, fstype, out, 0, -ENOENT };
	int rc = mountinfo_each(better_mount, &b);

	return rc < 0 ? rc : b.rc;
}

bool
proc_cgroup_kill(void)
{
	char own[1024] = "", dir[6000], path[6400];
	struct proc_mount m;
	struct statvfs vfs;
	struct dirent *e;
	bool found = false;
	DIR *d;

	if (proc_mount(NULL, "cgroup2", &m) != 0 ||
	    proc_own_cgroup(NULL, own, sizeof(own)) != 0 || own[0] != '/')
		return false;
	snprintf(dir, sizeof(dir), "%s%s", m.point,
	    strcmp(own, "/") == 0 ? "" : own);
	/* As the helper decides: read-only in Bazel's sandbox, say. */
	if (statvfs(dir, &vfs) != 0 || (vfs.f_flag & ST_RDONLY) ||
	    access(dir, W_OK) != 0)
		return false;
	snprintf(path, sizeof(path), "%s/cgroup.kill", dir);
	if (access(path, F_OK) == 0)
		return true;
	/* The root cgroup has none: one below it says if the kernel has it. */
	if ((d = opendir(dir)) == NULL)
		return false;
	while (!found && (e = readdir(d)) != NULL) {
		if (e->d_type != DT_DIR || e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s/cgroup.kill", dir, e->d_name);
		found = access(path, F_OK) == 0;
	}
	closedir(d);
	return found;
}
