#include <errno.h>
#include <limits.h>
#include <string.h>

#include "src/core/spec.h"

int
spec_check_path(const char *path)
{
	if (path == NULL || path[0] != '/')
		return -EINVAL;
	if (strnlen(path, PATH_MAX) >= PATH_MAX)
		return -ENAMETOOLONG;
	return 0;
}

static int
check_env(const char *entry)
{
	const char *eq = strchr(entry, '=');

	/* A name, then '=': execve takes anything, but nothing reads the rest. */
	return eq == NULL || eq == entry ? -EINVAL : 0;
}

size_t
spec_count(const char *const *v)
{
	size_t n = 0;

	while (v != NULL && v[n] != NULL)
		n++;
	return n;
}

int
spec_stdio(const struct confine_spec *s, int k)
{
	return k == 0 ? s->stdin_fd : k == 1 ? s->stdout_fd : s->stderr_fd;
}

#define REFUSE(err, what) do { *why = (what); return (err); } while (0)

int
spec_check(const struct confine_spec *s, const char **why)
{
	size_t i, n;

	*why = NULL;
	if (spec_check_path(s->exe) != 0)
		REFUSE(-EINVAL, "exe must be an absolute path");
	for (i = 0; s->envp != NULL && s->envp[i] != NULL; i++)
		if (check_env(s->envp[i]) != 0)
			REFUSE(-EINVAL, "envp entries must be NAME=VALUE");
	if ((unsigned)s->backend > CONFINE_BACKEND_NONE)
		REFUSE(-EINVAL, "unknown backend");
	if ((s->flags & ~SPEC_FLAGS) != 0)
		REFUSE(-EINVAL, "unknown flags");
	if (s->scratch == NULL) {
		if (s->backend != CONFINE_BACKEND_NONE ||
		    (s->flags & CONFINE_FRESH_SCRATCH))
			REFUSE(-EINVAL, "a scratch root is required unless the backend is none");
	} else if (spec_check_path(s->scratch) != 0)
		REFUSE(-EINVAL, "scratch root must be an absolute path");
	if (s->cwd != NULL && spec_check_path(s->cwd) != 0)
		REFUSE(-EINVAL, "cwd must be an absolute path");
	if ((n = spec_count(s->devices)) > SPEC_MAX_DEVICES)
		REFUSE(-EINVAL, "too many device nodes");
	for (i = 0; i < n; i++)
		if (spec_check_path(s->devices[i]) != 0)
			REFUSE(-EINVAL, "device nodes must be absolute paths");
	if ((n = spec_count(s->readable)) > SPEC_MAX_READABLE)
		REFUSE(-EINVAL, "too many readable trees");
	for (i = 0; i < n; i++)
		if (spec_check_path(s->readable[i]) != 0)
			REFUSE(-EINVAL, "readable trees must be absolute paths");
	if (spec_narrow(s) && s->backend == CONFINE_BACKEND_NONE)
		REFUSE(-EINVAL, "backend none cannot narrow reads: it confines nothing");
	if (s->launcher != NULL && spec_check_path(s->launcher) != 0)
		REFUSE(-EINVAL, "launcher must be an absolute path");
	if (s->deadline_ms < 0 || s->deadline_ms > SPEC_MAX_MS)
		REFUSE(-EINVAL, "deadline out of range");
	if (s->grace_ms < 0 || s->grace_ms > SPEC_MAX_MS)
		REFUSE(-EINVAL, "grace out of range");
	for (i = 0; i < 3; i++)
		if (spec_stdio(s, (int)i) < -1)
			REFUSE(-EINVAL, "stdio fds must be -1 or a descriptor");
	if (s->limits.cpu_seconds < 0 || s->limits.address_space < 0 ||
	    s->limits.open_files < 0 || s->limits.file_size < 0 ||
	    s->limits.processes < 0 || s->limits.memory < 0)
		REFUSE(-EINVAL, "resource bounds must be 0 (none) or positive");
	return 0;
}
