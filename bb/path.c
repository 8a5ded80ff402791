#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "bb/path.h"

#define BAD(err, what) do { *why = (what); return -(err); } while (0)

/*
 * path's components made canonical into out: for a relative path ".."
 * above the root is refused, for an absolute one it stays at the root
 * (the kernel's rule). out holds no leading slash.
 */
static int
canon(const char *path, int absolute, char *out, size_t len,
    const char **why)
{
	const char *p = path, *end;
	size_t n = 0, clen;

	if (len == 0)
		BAD(ENAMETOOLONG, "too long");
	for (; *p != '\0'; p = *end != '\0' ? end + 1 : end) {
		end = p + strcspn(p, "/");
		clen = (size_t)(end - p);
		if (clen == 0 || (clen == 1 && p[0] == '.'))
			continue;
		if (clen == 2 && p[0] == '.' && p[1] == '.') {
			if (n == 0 && !absolute)
				BAD(EINVAL, "climbs above its root with ..");
			while (n > 0 && out[n - 1] != '/')
				n--;
			if (n > 0)
				n--;
			continue;
		}
		if (n + (n > 0) + clen >= len)
			BAD(ENAMETOOLONG, "too long");
		if (n > 0)
			out[n++] = '/';
		memcpy(out + n, p, clen);
		n += clen;
	}
	out[n] = '\0';
	return 0;
}

int
bbpath_clean(const char *rel, char *out, size_t len, const char **why)
{
	*why = NULL;
	if (rel[0] == '/')
		BAD(EINVAL, "is absolute");
	return canon(rel, 0, out, len, why);
}

int
bbpath_clean_abs(const char *abs, char *out, size_t len)
{
	const char *why;

	if (abs[0] != '/')
		return -EINVAL;
	if (len < 2)
		return -ENAMETOOLONG;
	out[0] = '/';
	return canon(abs, 1, out + 1, len - 1, &why);
}

int
bbpath_join(const char *base, const char *rel, char *out, size_t len)
{
	size_t bl = strlen(base), rl = strlen(rel);

	if (rl == 0) {
		if (bl >= len)
			return -ENAMETOOLONG;
		memcpy(out, base, bl + 1);
		return 0;
	}
	if (bl == 1 && base[0] == '/')
		bl = 0;    /* "/" and "a" are "/a" */
	if (bl + 1 + rl >= len)
		return -ENAMETOOLONG;
	memcpy(out, base, bl);
	out[bl] = '/';
	memcpy(out + bl + 1, rel, rl + 1);
	return 0;
}

void
bbpath_common(const char *a, const char *b, char *out, size_t len)
{
	size_t i, last = 0;

	if (b == NULL)
		b = a;
	for (i = 0; a[i] == b[i]; i++) {
		if (a[i] == '\0')
			break;
		if (a[i] == '/')
			last = i;
	}
	/* Equal, or one a whole component longer than the other. */
	if ((a[i] == '\0' || a[i] == '/') && (b[i] == '\0' || b[i] == '/'))
		last = i;
	if (last >= len)
		last = len - 1;
	memcpy(out, a, last);
	out[last] = '\0';
}

int
bbpath_within(const char *rel, const char *dir)
{
	size_t dl = strlen(dir);

	if (dl == 0)
		return 1;
	return strncmp(rel, dir, dl) == 0 && (rel[dl] == '\0' || rel[dl] == '/');
}

/* dir (absolute) and name as one canonical absolute path in out. */
static int
candidate(const char *dir, size_t dlen, const char *name, char *out,
    size_t len)
{
	char buf[PATH_MAX];
	int n;

	n = snprintf(buf, sizeof(buf), "%.*s/%s", (int)dlen, dir, name);
	if (n < 0 || (size_t)n >= sizeof(buf))
		return -ENAMETOOLONG;
	return bbpath_clean_abs(buf, out, len);
}

int
bbpath_lookup(const char *cwd, const char *path_var, const char *argv0,
    int (*is_exe)(const char *candidate, void *arg), void *arg,
    char *out, size_t len)
{
	char dir[PATH_MAX];
	const char *p, *end;
	int rc;

	if (argv0[0] == '\0')
		return -ENOENT;
	if (strchr(argv0, '/') != NULL) {
		if (argv0[0] == '/')
			return bbpath_clean_abs(argv0, out, len);
		return candidate(cwd, strlen(cwd), argv0, out, len);
	}
	/* bb_runner splits PATH as Go's filepath.SplitList: none for "". */
	if (path_var == NULL || path_var[0] == '\0')
		return -ENOENT;
	for (p = path_var;; p = end + 1) {
		end = p + strcspn(p, ":");
		if (end == p || p[0] != '/') {
			rc = snprintf(dir, sizeof(dir), "%s/%.*s", cwd,
			    (int)(end - p), p);
			if (rc < 0 || (size_t)rc >= sizeof(dir))
				return -ENAMETOOLONG;
		} else if ((size_t)(end - p) >= sizeof(dir)) {
			return -ENAMETOOLONG;
		} else {
			memcpy(dir, p, (size_t)(end - p));
			dir[end - p] = '\0';
		}
		if ((rc = candidate(dir, strlen(dir), argv0, out, len)) != 0)
			return rc;
		if (is_exe(out, arg))
			return 0;
		if (*end == '\0')
			break;
	}
	return -ENOENT;
}
