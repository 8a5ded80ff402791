#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "helper/cgroup.h"
#include "src/fd.h"

/*
 * Where a hierarchy is mounted: the mount point of the first mountinfo
 * line whose type is fstype and, for v1, whose super options list opt.
 */
static int
mount_point(const char *fstype, const char *opt, char *out, size_t len)
{
	char line[1024], *sep, *fields[5], *p, *type, *super;
	FILE *f = fopen("/proc/self/mountinfo", "re");
	int i, found = -ENOENT;

	if (f == NULL)
		return -errno;
	while (found != 0 && fgets(line, sizeof(line), f) != NULL) {
		/* id parent major:minor root mountpoint ... - type source super */
		sep = strstr(line, " - ");
		if (sep == NULL)
			continue;
		*sep = '\0';
		p = line;
		for (i = 0; i < 5 && p != NULL; i++)
			fields[i] = strsep(&p, " ");
		if (i < 5 || fields[4] == NULL)
			continue;
		p = sep + 3;
		type = strsep(&p, " ");
		(void)strsep(&p, " ");
		super = p ? strsep(&p, " \n") : NULL;
		if (type == NULL || strcmp(type, fstype) != 0)
			continue;
		if (opt != NULL) {
			bool has = false;
			char *o;

			while (super != NULL && (o = strsep(&super, ",")) != NULL)
				if (strcmp(o, opt) == 0)
					has = true;
			if (!has)
				continue;
		}
		if (strlen(fields[4]) < len) {
			strcpy(out, fields[4]);
			found = 0;
		}
	}
	fclose(f);
	return found;
}

/* Our cgroup in a hierarchy: "0::/path" for v2, "N:ctl,..:/path" for v1. */
static int
own_cgroup(const char *controller, char *out, size_t len)
{
	char line[1024], *p, *ctls, *path;
	FILE *f = fopen("/proc/self/cgroup", "re");
	int found = -ENOENT;

	if (f == NULL)
		return -errno;
	while (found != 0 && fgets(line, sizeof(line), f) != NULL) {
		p = line;
		(void)strsep(&p, ":");
		ctls = strsep(&p, ":");
		path = p ? strsep(&p, "\n") : NULL;
		if (ctls == NULL || path == NULL)
			continue;
		if (controller == NULL ? *ctls != '\0' :
		    strstr(ctls, controller) == NULL)
			continue;
		if (strlen(path) < len) {
			strcpy(out, path);
			found = 0;
		}
	}
	fclose(f);
	return found;
}

/*
 * A helper killed outright leaves its cgroups behind. Remove those of
 * helpers that are gone: their job cgroups first (rmdir fails, harmlessly,
 * on one still in use).
 */
static void
sweep_stale(const char *parent)
{
	struct dirent *e, *f;
	char *end;
	DIR *d, *sub;
	long pid;
	int fd;

	d = opendir(parent);
	if (d == NULL)
		return;
	while ((e = readdir(d)) != NULL) {
		if (strncmp(e->d_name, "confine.", 8) != 0)
			continue;
		pid = strtol(e->d_name + 8, &end, 10);
		if (*end != '\0' || pid <= 0 || pid == (long)getpid() ||
		    kill((pid_t)pid, 0) == 0 || errno != ESRCH)
			continue;
		fd = openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0)
			continue;
		sub = fdopendir(fd);
		while (sub != NULL && (f = readdir(sub)) != NULL)
			if (strncmp(f->d_name, "job.", 4) == 0)
				(void)unlinkat(fd, f->d_name, AT_REMOVEDIR);
		if (sub != NULL)
			closedir(sub);
		else
			close(fd);
		(void)unlinkat(dirfd(d), e->d_name, AT_REMOVEDIR);
	}
	closedir(d);
}

/* <mount><own>/<name>, created; its directory fd or -errno. */
static int
make_base(const char *fstype, const char *opt, const char *controller,
    const char *name)
{
	char mnt[512], own[1024], path[2048];
	int fd;

	if (mount_point(fstype, opt, mnt, sizeof(mnt)) != 0 ||
	    own_cgroup(controller, own, sizeof(own)) != 0)
		return -ENOENT;
	snprintf(path, sizeof(path), "%s%s", mnt, strcmp(own, "/") == 0 ? "" : own);
	sweep_stale(path[0] ? path : "/");
	snprintf(path, sizeof(path), "%s%s/%s", mnt,
	    strcmp(own, "/") == 0 ? "" : own, name);
	if (mkdir(path, 0755) != 0 && errno != EEXIST)
		return -errno;
	fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}


void
cgroup_env_init(struct cgroup_env *env)
{
	struct stat st;
	int fd;

	memset(env, 0, sizeof(*env));
	snprintf(env->name, sizeof(env->name), "confine.%ld", (long)getpid());
	fd = make_base("cgroup2", NULL, NULL, env->name);
	env->v2 = fd < 0 ? -1 : fd;
	/* Without it (no memory) no v1 level is made, no empty one kept. */
	if ((env->kept = calloc(1, sizeof(*env->kept))) != NULL)
		env->kept->memory = env->kept->pids = -1;
	env->v2_kill = env->v2 >= 0 &&
	    fstatat(env->v2, "cgroup.kill", &st, 0) == 0;
	if (env->v2 >= 0 && !env->v2_kill) {
		/* cgroup.kill is in the child cgroups only: look at one. */
		if (mkdirat(env->v2, "probe", 0755) == 0) {
			env->v2_kill = fstatat(env->v2, "probe/cgroup.kill",
			    &st, 0) == 0;
			unlinkat(env->v2, "probe", AT_REMOVEDIR);
		}
	}
}

static void
v1_made(const struct cgroup_env *env)
{
	struct cgroup_kept *k = env->kept;
	int fd;

	if (k == NULL || k->made)
		return;
	k->made = true;
	fd = make_base("cgroup", "memory", "memory", env->name);
	k->memory = fd < 0 ? -1 : fd;
	fd = make_base("cgroup", "pids", "pids", env->name);
	k->pids = fd < 0 ? -1 : fd;
}

int
cgroup_env_memory(const struct cgroup_env *env)
{
	v1_made(env);
	return env->kept != NULL ? env->kept->memory : -1;
}

int
cgroup_env_pids(const struct cgroup_env *env)
{
	v1_made(env);
	return env->kept != NULL ? env->kept->pids : -1;
}

static void
remove_base(int *fd, const char *name)
{
	char path[64];

	if (*fd < 0)
		return;
	/* Our directory's parent is reached through the directory itself. */
	snprintf(path, sizeof(path), "../%s", name);
	(void)unlinkat(*fd, path, AT_REMOVEDIR);
	fd_closep(fd);
}

void
cgroup_env_fini(struct cgroup_env *env)
{
	while (env->kept != NULL && env->kept->npool > 0 && env->v2 >= 0)
		(void)unlinkat(env->v2, env->kept->pool[--env->kept->npool],
		    AT_REMOVEDIR);
	remove_base(&env->v2, env->name);
	if (env->kept != NULL) {
		remove_base(&env->kept->memory, env->name);
		remove_base(&env->kept->pids, env->name);
		free(env->kept);
		env->kept = NULL;
	}
}

static int
write_at(int dir, const char *name, const char *file, const char *value)
{
	char path[64];
	int fd, rc = 0;
	ssize_t n;

	snprintf(path, sizeof(path), "%s/%s", name, file);
	fd = openat(dir, path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = write(fd, value, strlen(value));
	if (n != (ssize_t)strlen(value))
		rc = n < 0 ? -errno : -EIO;
	close(fd);
	return rc;
}

static int
open_at(int dir, const char *name, const char *file, int flags)
{
	char path[64];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", name, file);
	fd = openat(dir, path, flags | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

/* One job cgroup in a hierarchy: mkdir, and its cgroup.procs to join. */
static int
make_job(int base, const char *name, int *procs)
{
	int fd;

	if (mkdirat(base, name, 0755) != 0)
		return -errno;
	fd = open_at(base, name, "cgroup.procs", O_WRONLY);
	if (fd < 0) {
		unlinkat(base, name, AT_REMOVEDIR);
		return fd;
	}
	*procs = fd;
	return 0;
}

static void
job_init(struct cgroup_job *job)
{
	int i;

	memset(job, 0, sizeof(*job));
	job->v2 = job->memory = job->pids = job->events = job->kill = -1;
	job->dir = -1;
	for (i = 0; i < CGROUP_JOINS; i++)
		job->procs[i] = -1;
}

int
cgroup_job_create(const struct cgroup_env *env, struct cgroup_job *job,
    int64_t memory, int64_t processes, const char **why)
{
	static unsigned seq;  /* the helper is single-threaded */
	int mem_base = memory > 0 ? cgroup_env_memory(env) : -1;
	int pids_base = processes > 0 ? cgroup_env_pids(env) : -1;
	char value[32];
	int rc = 0;

	job_init(job);
	*why = NULL;
	if (memory > 0 && mem_base < 0) {
		*why = "a memory bound needs a memory cgroup, not available here";
		return -ENOTSUP;
	}
	job->kept = env->kept;
	if (env->v2 >= 0 && env->kept != NULL && env->kept->npool > 0) {
		/* An empty one kept from an earlier job: no mkdir to wait for. */
		memcpy(job->name, env->kept->pool[--env->kept->npool],
		    sizeof(job->name));
		job->procs[0] = open_at(env->v2, job->name, "cgroup.procs",
		    O_WRONLY);
		rc = job->procs[0] < 0 ? job->procs[0] : 0;
	} else {
		snprintf(job->name, sizeof(job->name), "job.%u", ++seq);
		rc = env->v2 >= 0 ? make_job(env->v2, job->name, &job->procs[0]) : 0;
	}
	if (env->v2 >= 0) {
		if (rc != 0) {
			*why = "the job's cgroup could not be created";
			goto fail;
		}
		job->v2 = env->v2;
		job->dir = openat(env->v2, job->name, O_RDONLY | O_DIRECTORY |
		    O_CLOEXEC);
		if (job->dir < 0) {
			rc = -errno;
			*why = "the job's cgroup could not be opened";
			goto fail;
		}
		job->events = open_at(env->v2, job->name, "cgroup.events", O_RDONLY);
		if (job->events < 0) {
			rc = job->events;
			*why = "the job's cgroup.events could not be opened";
			goto fail;
		}
		if (env->v2_kill)
			job->kill = open_at(env->v2, job->name, "cgroup.kill",
			    O_WRONLY);
	}
	if (memory > 0) {
		if ((rc = make_job(mem_base, job->name, &job->procs[1])) != 0)
			goto fail_memory;
		job->memory = mem_base;
		snprintf(value, sizeof(value), "%lld", (long long)memory);
		if ((rc = write_at(mem_base, job->name,
		    "memory.limit_in_bytes", value)) != 0)
			goto fail_memory;
		/* With swap accounting, swap must not extend the bound. */
		(void)write_at(mem_base, job->name,
		    "memory.memsw.limit_in_bytes", value);
	}
	if (processes > 0 && pids_base >= 0) {
		if ((rc = make_job(pids_base, job->name, &job->procs[2])) != 0)
			goto fail_pids;
		job->pids = pids_base;
		snprintf(value, sizeof(value), "%lld", (long long)processes);
		if ((rc = write_at(pids_base, job->name, "pids.max", value)) != 0)
			goto fail_pids;
	}
	return 0;
fail_memory:
	*why = "the memory bound could not be applied";
	goto fail;
fail_pids:
	*why = "the process bound could not be applied";
fail:
	cgroup_job_destroy(job);
	return rc;
}

void
cgroup_job_destroy(struct cgroup_job *job)
{
	int i;

	/*
	 * Only an empty cgroup that was never killed: a child born into one
	 * that was (CLONE_INTO_CGROUP) is killed at once on this kernel, as
	 * if forked during the kill; observed, see cgroup_test.
	 */
	bool keep = job->v2 >= 0 && !job->killed && job->kept != NULL &&
	    job->kept->npool < CGROUP_POOL &&
	    cgroup_job_populated(job) == 0;

	for (i = 0; i < CGROUP_JOINS; i++)
		fd_closep(&job->procs[i]);
	fd_closep(&job->events);
	fd_closep(&job->kill);
	fd_closep(&job->dir);
	if (keep)
		memcpy(job->kept->pool[job->kept->npool++], job->name,
		    sizeof(job->name));
	/* A cgroup still in use stays: rmdir says EBUSY and nothing is lost. */
	else if (job->v2 >= 0)
		(void)unlinkat(job->v2, job->name, AT_REMOVEDIR);
	if (job->memory >= 0)
		(void)unlinkat(job->memory, job->name, AT_REMOVEDIR);
	if (job->pids >= 0)
		(void)unlinkat(job->pids, job->name, AT_REMOVEDIR);
	job->v2 = job->memory = job->pids = -1;
}

int
cgroup_job_populated(const struct cgroup_job *job)
{
	char buf[256], *p;
	ssize_t n;

	if (job->events < 0)
		return -ENOENT;
	n = pread(job->events, buf, sizeof(buf) - 1, 0);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	p = strstr(buf, "populated ");
	/* Only what the kernel writes: anything else is no proof of empty. */
	if (p == NULL || (p[10] != '0' && p[10] != '1') ||
	    (p[11] != '\n' && p[11] != '\0'))
		return -EBADMSG;
	return p[10] == '1';
}

int
cgroup_job_kill(struct cgroup_job *job)
{
	if (job->kill < 0)
		return -ENOTSUP;
	job->killed = true;
	return pwrite(job->kill, "1", 1, 0) == 1 ? 0 : -errno;
}

int
cgroup_join(const int procs[CGROUP_JOINS])
{
	char pid[24];
	int i, n;

	n = snprintf(pid, sizeof(pid), "%ld", (long)getpid());
	for (i = 0; i < CGROUP_JOINS; i++)
		if (procs[i] >= 0 && write(procs[i], pid, (size_t)n) != n)
			return -errno;
	return 0;
}
