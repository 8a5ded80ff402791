#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "src/core/fd.h"
#include "src/core/proc.h"
#include "src/core/procstat.h"

/* "Field:   1234 kB" in a status-like file; -1 when absent. */
static long
kib_field(const char *path, const char *field)
{
	char line[256];
	size_t len = strlen(field);
	long v = -1;
	FILE *f = fopen(path, "re");

	if (f == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL)
		if (strncmp(line, field, len) == 0 && line[len] == ':') {
			v = strtol(line + len + 1, NULL, 10);
			break;
		}
	fclose(f);
	return v;
}

long
proc_status_kib(pid_t pid, const char *field)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%ld/status", (long)pid);
	return kib_field(path, field);
}

long
proc_rollup_kib(pid_t pid, const char *field)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%ld/smaps_rollup", (long)pid);
	return kib_field(path, field);
}

int
proc_cpu_us(pid_t pid, int64_t out[4])
{
	char path[64], buf[1024], *p;
	long tick = sysconf(_SC_CLK_TCK);
	long long v[4];
	int field;

	snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
	if (fd_read_small(AT_FDCWD, path, buf, sizeof(buf)) < 0 || tick <= 0)
		return -1;
	/* Fields after the command, which may hold spaces: utime is 14th. */
	p = strrchr(buf, ')');
	for (field = 2; p != NULL && field < 14; field++)
		p = strchr(p + 1, ' ');
	if (p == NULL || sscanf(p + 1, "%lld %lld %lld %lld", &v[0], &v[1],
	    &v[2], &v[3]) != 4)
		return -1;
	for (field = 0; field < 4; field++)
		out[field] = (int64_t)v[field] * 1000000 / tick;
	return 0;
}

char
proc_state(pid_t pid)
{
	char path[64], buf[256], *p;

	snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
	if (fd_read_small(AT_FDCWD, path, buf, sizeof(buf)) < 0)
		return 0;
	/* After the command, which may hold spaces and parentheses. */
	p = strrchr(buf, ')');
	return p != NULL && p[1] == ' ' && p[2] != '\0' ? p[2] : '?';
}

int64_t
proc_oncpu_ns(pid_t pid)
{
	char path[64], buf[128];
	long long ns;

	snprintf(path, sizeof(path), "/proc/%ld/task/%ld/schedstat", (long)pid,
	    (long)pid);
	if (fd_read_small(AT_FDCWD, path, buf, sizeof(buf)) < 0 ||
	    sscanf(buf, "%lld", &ns) != 1)
		return -1;
	return ns;
}

struct into {
	pid_t *out;
	size_t max, n;
};

static int
put_child(pid_t child, void *arg)
{
	struct into *in = arg;

	if (in->n < in->max)
		in->out[in->n] = child;
	in->n++;
	return 0;
}

size_t
proc_children(pid_t pid, pid_t *out, size_t max)
{
	struct into in = { out, max, 0 };

	return proc_children_each(pid, pid, put_child, &in) < 0 ? 0 : in.n;
}

long
proc_descendants(pid_t pid)
{
	size_t n = proc_children(pid, NULL, 0), got, i;
	pid_t *kids;
	long sum = 0;

	if (n == 0 || (kids = calloc(n, sizeof(*kids))) == NULL)
		return 0;
	/* Those born since are left out; those gone since have none. */
	if ((got = proc_children(pid, kids, n)) > n)
		got = n;
	for (i = 0; i < got; i++)
		sum += 1 + proc_descendants(kids[i]);
	free(kids);
	return sum;
}

int64_t
proc_busy_us(void)
{
	char buf[512];
	long long v[8] = { 0 };
	long tick = sysconf(_SC_CLK_TCK);

	if (fd_read_small(AT_FDCWD, "/proc/stat", buf, sizeof(buf)) < 0 ||
	    tick <= 0 ||
	    sscanf(buf, "cpu %lld %lld %lld %lld %lld %lld %lld %lld", &v[0],
	    &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]) != 8)
		return -1;
	/* Everything but idle and iowait: user, nice, system, irq, softirq, steal. */
	return (v[0] + v[1] + v[2] + v[5] + v[6] + v[7]) * 1000000 / tick;
}

long
proc_fd_count(pid_t pid)
{
	char path[64];
	struct dirent *e;
	long n = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%ld/fd", (long)pid);
	if ((d = opendir(path)) == NULL)
		return -1;
	while ((e = readdir(d)) != NULL)
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}
