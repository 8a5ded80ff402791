#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "helper/backend/cgroup.h"
#include "src/core/clock.h"
#include "src/core/fd.h"
#include "src/core/mountinfo.h"
#include "src/core/proc.h"
#include "src/core/sigpipe.h"

/*
 * Where a hierarchy is mounted: the mount point of the first mountinfo
 * line whose type is fstype and, for v1, whose super options list opt.
 */
struct hierarchy {
	const char *fstype, *opt;
	char *out;
	size_t len;
};

static int
is_hierarchy(const struct mountinfo_entry *e, void *arg)
{
	const struct hierarchy *h = arg;

	if (strcmp(e->type, h->fstype) != 0 ||
	    (h->opt != NULL && !mountinfo_lists(e->super, h->opt)))
		return 0;
	return strlcpy(h->out, e->point, h->len) < h->len ? 1 : -ENAMETOOLONG;
}

static int
mount_point(const char *fstype, const char *opt, char *out, size_t len)
{
	struct hierarchy h = { fstype, opt, out, len };
	int rc = mountinfo_each(is_hierarchy, &h);

	return rc == 1 ? 0 : rc == 0 ? -ENOENT : rc;
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

/*
 * A helper's directory is its own while it holds an flock on it: taken at
 * once, kept for the helper's life, let go by the kernel when it dies
 * (its shepherds close the descriptor, and its jobs exec). The pid in
 * the name says nothing: two helpers in two pid namespaces may share a pid
 * and a parent cgroup (Bazel's sandbox does), and a dead helper's pid may
 * be another process's by now.
 */
static bool
claim(int fd)
{
	return flock(fd, LOCK_EX | LOCK_NB) == 0;
}

/* SIGKILL to each process listed in <dir>/<name>/cgroup.procs. */
static void
kill_listed(int dir, const char *name)
{
	char path[64];
	FILE *f;
	long pid;
	int fd;

	snprintf(path, sizeof(path), "%s/cgroup.procs", name);
	if ((fd = openat(dir, path, O_RDONLY | O_CLOEXEC)) < 0)
		return;
	if ((f = fdopen(fd, "r")) == NULL) {
		close(fd);
		return;
	}
	while (fscanf(f, "%ld", &pid) == 1)
		if (pid > 1)
			(void)kill((pid_t)pid, SIGKILL);
	fclose(f);
}

#define STALE_TRIES 200          /* x 10 ms: a dead helper's jobs dying */

/*
 * What a dead helper left in its directory: every job cgroup's processes
 * killed (cgroup.kill, else each listed process: a v1 hierarchy, or a
 * kernel before 5.14), then the cgroups removed as they empty. One that
 * will not empty stays, for the next helper to try.
 */
static void
empty_stale(int dir)
{
	struct timespec ts = { 0, 10 * 1000 * 1000 };
	struct dirent *e;
	int i, left = 1;
	DIR *d;

	if ((d = fdopendir(openat(dir, ".", O_RDONLY | O_DIRECTORY |
	    O_CLOEXEC))) == NULL)
		return;
	for (i = 0; i < STALE_TRIES && left > 0; i++) {
		rewinddir(d);
		left = 0;
		while ((e = readdir(d)) != NULL) {
			if (strncmp(e->d_name, "job.", 4) != 0)
				continue;
			if (i == 0 && write_at(dir, e->d_name, "cgroup.kill",
			    "1") != 0)
				kill_listed(dir, e->d_name);
			else if (i > 0 && i % 10 == 0)
				kill_listed(dir, e->d_name);
			/* Busy until its processes are reaped; else give up. */
			if (unlinkat(dir, e->d_name, AT_REMOVEDIR) != 0 &&
			    errno == EBUSY)
				left++;
		}
		if (left > 0)
			nanosleep(&ts, NULL);
	}
	closedir(d);
}

/*
 * Whether name is as pick_name makes them: only those are claimed, never
 * a directory someone else named confine.*, nor one of an older helper
 * that does not hold its claim.
 */
static bool
base_name(const char *name)
{
	size_t digits, hex;

	if (strncmp(name, "confine.", 8) != 0)
		return false;
	name += 8;
	digits = strspn(name, "0123456789");
	if (digits == 0 || name[digits] != '.')
		return false;
	name += digits + 1;
	hex = strspn(name, "0123456789abcdef");
	return hex == 16 && name[hex] == '\0';
}

/*
 * The directories of helpers that are gone, found beside ours: what their
 * jobs left running is killed (their shepherds died with them, or nothing
 * would be left), and the directories removed.
 */
static void
sweep_stale(const char *parent)
{
	struct dirent *e;
	DIR *d;
	int fd;

	if ((d = opendir(parent)) == NULL)
		return;
	while ((e = readdir(d)) != NULL) {
		if (!base_name(e->d_name))
			continue;
		fd = openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (claim(fd)) {
			empty_stale(fd);
			(void)unlinkat(dirfd(d), e->d_name, AT_REMOVEDIR);
		}
		close(fd);
	}
	closedir(d);
}

/*
 * <mount><own>/<name>, made fresh and claimed; its directory fd, or
 * -errno (-EEXIST: the name is taken, which a random name makes all but
 * impossible). Claimed and still there: a sweeping helper may have taken
 * and removed it between the mkdir and the flock.
 */
static int
make_base(const char *fstype, const char *opt, const char *controller,
    const char *name)
{
	char mnt[512], own[1024], path[2048];
	struct statvfs vfs;
	int fd;

	if (mount_point(fstype, opt, mnt, sizeof(mnt)) != 0 ||
	    proc_own_cgroup(controller, own, sizeof(own)) != 0)
		return -ENOENT;
	snprintf(path, sizeof(path), "%s%s", mnt, strcmp(own, "/") == 0 ? "" : own);
	/* Read-only (Bazel's sandbox): nothing to make, nothing to sweep. */
	if (statvfs(path[0] ? path : "/", &vfs) != 0 || (vfs.f_flag & ST_RDONLY))
		return -EROFS;
	sweep_stale(path[0] ? path : "/");
	snprintf(path, sizeof(path), "%s%s/%s", mnt,
	    strcmp(own, "/") == 0 ? "" : own, name);
	if (mkdir(path, 0755) != 0)
		return -errno;
	fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (!claim(fd) || faccessat(fd, "cgroup.procs", F_OK, 0) != 0) {
		close(fd);
		return -EAGAIN;
	}
	return fd;
}

/* confine.<pid>.<random>: the pid for people, the rest for uniqueness. */
static void
pick_name(char *out, size_t len)
{
	uint64_t r = 0;

	if (getrandom(&r, sizeof(r), GRND_NONBLOCK) != (ssize_t)sizeof(r))
		r = (uint64_t)clock_ns() ^ ((uint64_t)getpid() << 32);
	snprintf(out, len, "confine.%ld.%016llx", (long)getpid(),
	    (unsigned long long)r);
}

#define BASE_TRIES 4

void
cgroup_env_init(struct cgroup_env *env)
{
	struct stat st;
	int fd, i;

	memset(env, 0, sizeof(*env));
	for (i = 0, fd = -EEXIST; i < BASE_TRIES &&
	    (fd == -EEXIST || fd == -EAGAIN); i++) {
		pick_name(env->name, sizeof(env->name));
		fd = make_base("cgroup2", NULL, NULL, env->name);
	}
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
	(void)cgroup_env_tidy(env, SIZE_MAX);
	while (env->kept != NULL && env->kept->npool > 0 && env->v2 >= 0)
		(void)unlinkat(env->v2, env->kept->pool[--env->kept->npool],
		    AT_REMOVEDIR);
	remove_base(&env->v2, env->name);
	if (env->kept != NULL) {
		remove_base(&env->kept->memory, env->name);
		remove_base(&env->kept->pids, env->name);
		free(env->kept->dead);
		free(env->kept);
		env->kept = NULL;
	}
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

/* Queues the job's cgroups for cgroup_env_tidy: false if it cannot grow. */
static bool
bury(struct cgroup_job *job)
{
	struct cgroup_kept *k = job->kept;
	struct cgroup_dead *d;
	size_t cap;

	if (k == NULL)
		return false;
	if (k->ndead == k->dead_cap) {
		cap = k->dead_cap ? 2 * k->dead_cap : 64;
		if ((d = reallocarray(k->dead, cap, sizeof(*d))) == NULL)
			return false;
		k->dead = d;
		k->dead_cap = cap;
	}
	d = &k->dead[k->ndead++];
	memcpy(d->name, job->name, sizeof(d->name));
	d->v2 = job->v2 >= 0;
	d->memory = job->memory >= 0;
	d->pids = job->pids >= 0;
	return true;
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
	if (keep) {
		memcpy(job->kept->pool[job->kept->npool++], job->name,
		    sizeof(job->name));
		job->v2 = -1;
	}
	/* The name is reused with the kept one: its v1 cgroups go now. */
	if (keep || ((job->v2 >= 0 || job->memory >= 0 || job->pids >= 0) &&
	    !bury(job))) {
		/* A cgroup still in use stays: rmdir says EBUSY, nothing is lost. */
		if (job->v2 >= 0)
			(void)unlinkat(job->v2, job->name, AT_REMOVEDIR);
		if (job->memory >= 0)
			(void)unlinkat(job->memory, job->name, AT_REMOVEDIR);
		if (job->pids >= 0)
			(void)unlinkat(job->pids, job->name, AT_REMOVEDIR);
	}
	job->v2 = job->memory = job->pids = -1;
}

size_t
cgroup_env_tidy(const struct cgroup_env *env, size_t max)
{
	struct cgroup_kept *k = env->kept;
	struct cgroup_dead *d;

	if (k == NULL)
		return 0;
	/* The last buried first: the order does not matter, the cost does. */
	for (; max > 0 && k->ndead > 0; max--) {
		d = &k->dead[--k->ndead];
		if (d->v2 && env->v2 >= 0)
			(void)unlinkat(env->v2, d->name, AT_REMOVEDIR);
		if (d->memory && k->memory >= 0)
			(void)unlinkat(k->memory, d->name, AT_REMOVEDIR);
		if (d->pids && k->pids >= 0)
			(void)unlinkat(k->pids, d->name, AT_REMOVEDIR);
	}
	return k->ndead;
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

/*
 * The guard of a process that runs its one job and exits (confine-run):
 * a process sharing its memory (CLONE_VM), so that no page table is
 * copied to start it, which only makes system calls: every signal held,
 * it waits for its pipe's end, which comes when its starter has exited
 * (the write end is never closed before), then writes cgroup.kill. A
 * failed call of its would write its starter's errno: none can fail
 * before that end, and after it nothing reads it. What it writes to is
 * opened by its starter, before it is made: a guard that could open
 * nothing would guard nothing, and no one would know.
 */
static struct shared_guard {
	int pipe, end, kill;  /* the pipe's two ends, cgroup.kill */
} shared;

/*
 * Not under ThreadSanitizer: its state for the thread is reached through
 * the thread pointer, which a process sharing our memory shares too, and
 * its instrumentation of the guard's code would corrupt ours. A forked
 * guard there.
 */
#if defined(__SANITIZE_THREAD__)
#define SHARED_GUARD 0
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define SHARED_GUARD 0
#endif
#endif
#ifndef SHARED_GUARD
#define SHARED_GUARD 1
#endif
static char shared_stack[16384] __attribute__((aligned(16)));

static int
shared_guard_main(void *arg)
{
	const struct shared_guard *g = arg;
	sigset_t all;
	char c;

	sigfillset(&all);
	(void)syscall(SYS_rt_sigprocmask, SIG_SETMASK, &all, NULL, _NSIG / 8);
	/* Its copy of the write end would keep the end from coming. */
	(void)syscall(SYS_close, g->end);
	while (syscall(SYS_read, g->pipe, &c, 1) > 0)
		;
	(void)syscall(SYS_write, g->kill, "1", 1);
	return 0;
}

/* The helper's cgroup.kill, to be written when it dies: opened now. */
static int
open_kill(const struct cgroup_env *env)
{
	int fd;

	if (env->v2 < 0 || !env->v2_kill)
		return -ENOTSUP;
	fd = openat(env->v2, "cgroup.kill", O_WRONLY | O_CLOEXEC);
	return fd >= 0 ? fd : -errno;
}

int
cgroup_guard_shared(const struct cgroup_env *env, pid_t *guard)
{
	int p[2], rc;
	pid_t pid;

	if (!SHARED_GUARD)
		return cgroup_guard(env, guard);
	if ((shared.kill = open_kill(env)) < 0)
		return shared.kill;
	if ((rc = fd_pipe(p)) != 0) {
		close(shared.kill);
		return rc;
	}
	shared.pipe = p[0];
	shared.end = p[1];
	pid = clone(shared_guard_main, shared_stack + sizeof(shared_stack),
	    CLONE_VM | SIGCHLD, &shared);
	rc = pid < 0 ? -errno : 0;
	close(p[0]);
	close(shared.kill);
	if (rc != 0) {
		close(p[1]);
		return rc;
	}
	*guard = pid;
	return p[1];
}

int
cgroup_guard(const struct cgroup_env *env, pid_t *guard)
{
	int p[2] = { -1, -1 }, done[2] = { -1, -1 }, keep[3], rc, kill;
	pid_t pid;
	char c;

	/* Opened here, where a failure is the caller's to know of. */
	if ((kill = open_kill(env)) < 0)
		return kill;
	if ((rc = fd_pipe(p)) != 0 || (rc = fd_pipe(done)) != 0) {
		fd_closep(&p[0]);
		fd_closep(&p[1]);
		close(kill);
		return rc;
	}
	pid = sigpipe_fork();
	if (pid == 0) {
		keep[0] = p[0];
		keep[1] = kill;
		keep[2] = done[1];
		fd_close_except(keep, 3);
		close(done[1]);
		proc_helper_signals();
		while (read(p[0], &c, 1) < 0 && errno == EINTR)
			;
		if (write(kill, "1", 1) != 1) {
			/* Gone with the helper's own cleanup: nothing to kill. */
		}
		_exit(0);
	}
	rc = pid < 0 ? -errno : 0;
	close(p[0]);
	close(done[1]);
	close(kill);
	/*
	 * Forked, it holds the helper's sockets too until it closes them: a
	 * host would not see the helper die, nor a client its connection
	 * end. EOF once it has (or has died).
	 */
	while (rc == 0 && read(done[0], &c, 1) < 0 && errno == EINTR)
		;
	close(done[0]);
	if (rc != 0) {
		close(p[1]);
		return rc;
	}
	*guard = pid;
	return p[1];
}
