#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "bb/path.h"
#include "bb/runner.h"

struct bbrun {
	struct bbrun_config cfg;
	char build[PATH_MAX];      /* the build directory, canonical */
	int build_fd;              /* O_PATH: every request's paths from it */
	struct confine *c;

	pthread_mutex_t lock;      /* guards the rest */
	pthread_cond_t changed;    /* a slot or a call went, a cancel came */
	int running;               /* jobs holding a slot */
	int calls;                 /* calls not yet freed */
};

struct bbrun_call {
	struct bbrun *r;
	atomic_int cancelled;
	pthread_mutex_t lock;      /* guards job against its free */
	struct confine_job *job;
	struct bbreq_plan plan;
	char scratch[PATH_MAX];    /* real paths, as the helper gets them */
	char cwd[PATH_MAX];
	char exe[PATH_MAX];
};

static int64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * rel opened from the build directory without leaving it, a symbolic
 * link's target included: the kernel refuses a path that would
 * (RESOLVE_BENEATH, EXDEV).
 */
static int
open_beneath(const struct bbrun *r, const char *rel, int flags, mode_t mode)
{
	struct open_how how;
	long fd;

	memset(&how, 0, sizeof(how));
	how.flags = (uint64_t)(flags | O_CLOEXEC);
	how.mode = (flags & O_CREAT) ? mode : 0;
	how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;
	do
		fd = syscall(SYS_openat2, r->build_fd, rel[0] ? rel : ".", &how,
		    sizeof(how));
	while (fd < 0 && errno == EAGAIN);
	return fd < 0 ? -errno : (int)fd;
}

/* The directory rel, beneath the build directory, as its real path. */
static int
real_dir(const struct bbrun *r, const char *rel, char *out, size_t len)
{
	char link[64];
	ssize_t n;
	int fd, err = 0;

	if ((fd = open_beneath(r, rel, O_PATH | O_DIRECTORY, 0)) < 0)
		return fd;
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	if ((n = readlink(link, out, len)) < 0)
		err = -errno;
	else if ((size_t)n >= len)
		err = -ENAMETOOLONG;
	else
		out[n] = '\0';
	close(fd);
	return err;
}

/* Why a path of the request could not be resolved, in words. */
static const char *
resolve_error(int err)
{
	switch (-err) {
	case EXDEV:
		return "it leaves the build directory through a symbolic link";
	case ELOOP:
		return "too many symbolic links";
	default:
		return strerror(-err);
	}
}

static enum bbreply_code
resolve_code(int err)
{
	switch (-err) {
	case ENOENT:
	case ENOTDIR:
	case EXDEV:
	case ELOOP:
	case ENAMETOOLONG:
	case EEXIST:
	case EISDIR:
		return BBREPLY_INVALID_ARGUMENT;
	default:
		return BBREPLY_INTERNAL;
	}
}

/* exec.LookPath's test, which bb_runner's PATH search makes. */
static int
is_exe(const char *path, void *arg)
{
	struct stat st;

	(void)arg;
	return stat(path, &st) == 0 && !S_ISDIR(st.st_mode) &&
	    faccessat(AT_FDCWD, path, X_OK, AT_EACCESS) == 0;
}

/*
 * Everything of the request that can be checked without making anything:
 * its paths as text, then the action's directory and working directory
 * where they really are, then its program. 0, or the refusal in reply.
 */
static int
check(struct bbrun_call *call, const struct bbreq *req, struct bbreply *reply)
{
	struct bbreq_plan *p = &call->plan;
	struct bbrun *r = call->r;
	char why[512];
	int rc;

	if (bbreq_make_plan(req, r->build, p, why, sizeof(why)) != 0) {
		bbreply_error(reply, BBREPLY_INVALID_ARGUMENT, "%s", why);
		return -1;
	}
	if ((rc = real_dir(r, p->scratch, call->scratch,
	    sizeof(call->scratch))) != 0) {
		bbreply_error(reply, resolve_code(rc),
		    "the action's directory \"%s\": %s", p->scratch,
		    resolve_error(rc));
		return -1;
	}
	if (strcmp(call->scratch, r->build) == 0) {
		bbreply_error(reply, BBREPLY_INVALID_ARGUMENT,
		    "the action's directory \"%s\" is the build directory",
		    p->scratch);
		return -1;
	}
	if ((rc = real_dir(r, p->cwd, call->cwd, sizeof(call->cwd))) != 0) {
		bbreply_error(reply, resolve_code(rc),
		    "Failed to resolve working directory \"%s\": %s",
		    req->working_directory, resolve_error(rc));
		return -1;
	}
	if (!bbpath_within(call->cwd, call->scratch)) {
		bbreply_error(reply, BBREPLY_INVALID_ARGUMENT,
		    "working directory \"%s\" leaves the action's directory "
		    "through a symbolic link", req->working_directory);
		return -1;
	}
	rc = bbpath_lookup(call->cwd, p->path_var, req->argv[0], is_exe, NULL,
	    call->exe, sizeof(call->exe));
	if (rc != 0) {
		bbreply_error(reply, BBREPLY_INVALID_ARGUMENT,
		    "Cannot find executable \"%s\" in search paths \"%s\"",
		    req->argv[0], p->path_var ? p->path_var : "");
		return -1;
	}
	/* With a slash it is a path, which exec would fail on: as bb_runner. */
	if (!is_exe(call->exe, NULL)) {
		struct stat st;

		bbreply_error(reply, BBREPLY_INVALID_ARGUMENT,
		    "Failed to start process: %s: %s", call->exe,
		    stat(call->exe, &st) != 0 ? strerror(errno) :
		    S_ISDIR(st.st_mode) ? strerror(EISDIR) : strerror(EACCES));
		return -1;
	}
	return 0;
}

/*
 * A slot for the job, once one is free: 0; -ECANCELED or -ETIMEDOUT
 * (end_ms, monotonic, passed; -1: never) with none taken.
 */
static int
take_slot(struct bbrun_call *call, int64_t end_ms)
{
	struct bbrun *r = call->r;
	struct timespec ts;
	int rc = 0;

	pthread_mutex_lock(&r->lock);
	while (r->cfg.concurrency > 0 && r->running >= r->cfg.concurrency) {
		if (atomic_load(&call->cancelled)) {
			rc = -ECANCELED;
			break;
		}
		if (end_ms < 0) {
			pthread_cond_wait(&r->changed, &r->lock);
			continue;
		}
		if (now_ms() >= end_ms) {
			rc = -ETIMEDOUT;
			break;
		}
		ts.tv_sec = end_ms / 1000;
		ts.tv_nsec = (end_ms % 1000) * 1000000;
		pthread_cond_timedwait(&r->changed, &r->lock, &ts);
	}
	if (rc == 0)
		r->running++;
	pthread_mutex_unlock(&r->lock);
	return rc;
}

static void
give_slot(struct bbrun *r)
{
	pthread_mutex_lock(&r->lock);
	r->running--;
	pthread_cond_broadcast(&r->changed);
	pthread_mutex_unlock(&r->lock);
}

/* The first n of stdout and stderr, made by us for a job that never ran. */
static void
unlink_logs(const struct bbrun_call *call, int n)
{
	const char *paths[2] = { call->plan.stdout_path, call->plan.stderr_path };
	int i;

	for (i = 0; i < n; i++)
		(void)unlinkat(call->r->build_fd, paths[i], 0);
}

/* stdout and stderr, made as bb_runner makes them: new files, 0666. */
static int
open_logs(struct bbrun_call *call, int fds[2], struct bbreply *reply)
{
	const char *paths[2] = { call->plan.stdout_path, call->plan.stderr_path };
	const char *names[2] = { "stdout", "stderr" };
	int i, fd;

	for (i = 0; i < 2; i++) {
		fd = open_beneath(call->r, paths[i],
		    O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_NOCTTY, 0666);
		if (fd < 0) {
			bbreply_error(reply, resolve_code(fd),
			    "Failed to open %s path \"%s\": %s", names[i], paths[i],
			    resolve_error(fd));
			if (i == 1) {
				close(fds[0]);
				unlink_logs(call, 1);
			}
			return -1;
		}
		fds[i] = fd;
	}
	return 0;
}

static void
say(const struct bbrun_call *call, const struct bbreq *req,
    const struct bbreply *reply)
{
	if (call->r->cfg.quiet || reply->code == BBREPLY_OK)
		return;
	fprintf(stderr, "confine-bb-runner: Run %s in \"%s\": %s: %s\n",
	    req->argc > 0 ? req->argv[0] : "(no arguments)",
	    req->input_root_directory, bbreply_code_name(reply->code),
	    reply->message);
}

/* The job spawned and waited for; the slot is the caller's. */
static void
run_job(struct bbrun_call *call, const struct bbreq *req, int64_t end_ms,
    struct bbreply *reply)
{
	const struct bbrun_config *cfg = &call->r->cfg;
	struct confine_spec spec;
	struct confine_result res;
	struct confine_job *job;
	int64_t now = now_ms(), deadline;
	/* -1 is no deadline: a deadline passed is 0 left, never that. */
	int64_t left = end_ms < 0 ? -1 : end_ms > now ? end_ms - now : 0;
	char **envp = NULL;
	int fds[2] = { -1, -1 }, rc;

	if ((deadline = bbreply_job_deadline(left, cfg->margin_ms)) < 0) {
		bbreply_error(reply, BBREPLY_DEADLINE_EXCEEDED,
		    "no time was left to run the action: nothing ran");
		return;
	}
	if ((envp = bbreq_envp(req, &call->plan)) == NULL) {
		bbreply_error(reply, BBREPLY_RESOURCE_EXHAUSTED, "out of memory");
		return;
	}
	if (open_logs(call, fds, reply) != 0)
		goto out;
	confine_spec_init(&spec);
	spec.exe = call->exe;
	spec.argv = req->argv;
	spec.envp = (const char *const *)envp;
	spec.scratch = call->scratch;
	spec.cwd = call->cwd;
	spec.devices = cfg->devices;
	spec.readable = cfg->readable;
	spec.stdout_fd = fds[0];
	spec.stderr_fd = fds[1];
	spec.deadline_ms = deadline;
	spec.grace_ms = cfg->grace_ms;
	spec.backend = cfg->backend;
	spec.limits = cfg->limits;
	spec.flags = cfg->flags;
	rc = confine_spawn(call->r->c, &spec, &job);
	/* The helper has its copies. */
	close(fds[0]);
	close(fds[1]);
	if (rc != 0) {
		bbreply_refused(reply, rc, confine_error_message());
		unlink_logs(call, 2);
		goto out;
	}
	pthread_mutex_lock(&call->lock);
	call->job = job;
	pthread_mutex_unlock(&call->lock);
	/* A cancel that came before the job was there finds it here. */
	if (atomic_load(&call->cancelled))
		(void)confine_cancel(job);
	rc = confine_wait(job, -1, &res);
	pthread_mutex_lock(&call->lock);
	call->job = NULL;
	pthread_mutex_unlock(&call->lock);
	confine_job_free(job);
	if (rc != 0)
		bbreply_error(reply, BBREPLY_INTERNAL, "waiting for the job: %s",
		    strerror(-rc));
	else
		bbreply_settled(reply, &res, deadline, left);
out:
	free(envp);
}

void
bbrun_call_run(struct bbrun_call *call, const struct bbreq *req,
    int64_t call_ms, struct bbreply *reply)
{
	int64_t end_ms = call_ms < 0 ? -1 : now_ms() + call_ms;
	int rc;

	if (check(call, req, reply) != 0)
		goto out;
	if ((rc = take_slot(call, end_ms)) != 0) {
		if (rc == -ECANCELED)
			bbreply_error(reply, BBREPLY_CANCELLED,
			    "the call was cancelled while the action waited for "
			    "a slot: nothing ran");
		else
			bbreply_error(reply, BBREPLY_DEADLINE_EXCEEDED,
			    "the action's deadline passed while it waited for a "
			    "slot (%d at once): nothing ran",
			    call->r->cfg.concurrency);
		goto out;
	}
	if (atomic_load(&call->cancelled))
		bbreply_error(reply, BBREPLY_CANCELLED,
		    "the call was cancelled before the action started: nothing "
		    "ran");
	else
		run_job(call, req, end_ms, reply);
	give_slot(call->r);
out:
	say(call, req, reply);
}

void
bbrun_call_cancel(struct bbrun_call *call)
{
	struct bbrun *r;

	if (call == NULL)
		return;
	r = call->r;
	atomic_store(&call->cancelled, 1);
	/* A call waiting for a slot sees it. */
	pthread_mutex_lock(&r->lock);
	pthread_cond_broadcast(&r->changed);
	pthread_mutex_unlock(&r->lock);
	pthread_mutex_lock(&call->lock);
	if (call->job != NULL)
		(void)confine_cancel(call->job);
	pthread_mutex_unlock(&call->lock);
}

struct bbrun_call *
bbrun_call_new(struct bbrun *r)
{
	struct bbrun_call *call = calloc(1, sizeof(*call));

	if (call == NULL)
		return NULL;
	call->r = r;
	atomic_init(&call->cancelled, 0);
	pthread_mutex_init(&call->lock, NULL);
	pthread_mutex_lock(&r->lock);
	r->calls++;
	pthread_mutex_unlock(&r->lock);
	return call;
}

void
bbrun_call_free(struct bbrun_call *call)
{
	struct bbrun *r;

	if (call == NULL)
		return;
	r = call->r;
	pthread_mutex_destroy(&call->lock);
	free(call);
	pthread_mutex_lock(&r->lock);
	r->calls--;
	pthread_cond_broadcast(&r->changed);
	pthread_mutex_unlock(&r->lock);
}

void
bbrun_check_readiness(struct bbrun *r, const char *path,
    struct bbreply *reply)
{
	char rel[PATH_MAX];
	const char *what;
	int fd;

	memset(reply, 0, sizeof(*reply));
	if (bbpath_clean(path, rel, sizeof(rel), &what) != 0) {
		bbreply_error(reply, BBREPLY_INTERNAL,
		    "Failed to resolve path \"%s\" in build directory: %s", path,
		    what);
		return;
	}
	if ((fd = open_beneath(r, rel, O_PATH | O_NOFOLLOW, 0)) < 0) {
		bbreply_error(reply, BBREPLY_INTERNAL,
		    "Failed to check existence of path \"%s\" in build "
		    "directory: %s", path, resolve_error(fd));
		return;
	}
	close(fd);
	reply->code = BBREPLY_OK;
}

int
bbrun_open(struct bbrun **rp, const struct bbrun_config *config, char *why,
    size_t whylen)
{
	pthread_condattr_t ca;
	struct bbrun *r;
	int rc;

	*rp = NULL;
	if ((r = calloc(1, sizeof(*r))) == NULL) {
		snprintf(why, whylen, "out of memory");
		return -ENOMEM;
	}
	r->cfg = *config;
	r->build_fd = -1;
	if (realpath(config->build_dir, r->build) == NULL ||
	    (r->build_fd = open(r->build, O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0) {
		rc = -errno;
		snprintf(why, whylen, "build directory %s: %s", config->build_dir,
		    strerror(errno));
		goto fail;
	}
	if ((rc = confine_open(&r->c, &config->options)) != 0) {
		snprintf(why, whylen, "cannot start confine's helper: %s",
		    confine_error_message());
		goto fail;
	}
	pthread_mutex_init(&r->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&r->changed, &ca);
	pthread_condattr_destroy(&ca);
	*rp = r;
	return 0;
fail:
	if (r->build_fd >= 0)
		close(r->build_fd);
	free(r);
	return rc;
}

pid_t
bbrun_helper_pid(struct bbrun *r)
{
	return confine_helper_pid(r->c);
}

void
bbrun_close(struct bbrun *r)
{
	if (r == NULL)
		return;
	pthread_mutex_lock(&r->lock);
	while (r->calls > 0)
		pthread_cond_wait(&r->changed, &r->lock);
	pthread_mutex_unlock(&r->lock);
	confine_close(r->c);
	close(r->build_fd);
	pthread_cond_destroy(&r->changed);
	pthread_mutex_destroy(&r->lock);
	free(r);
}
