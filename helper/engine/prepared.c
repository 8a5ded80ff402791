#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "helper/backend/landlock.h"
#include "helper/backend/ns.h"
#include "helper/backend/mountns.h"
#include "helper/engine/prepared.h"
#include "helper/engine/shepherd.h"
#include "src/core/fd.h"
#include "src/core/proc.h"

/*
 * The shared memory of each: room for the largest plan a request can
 * make (its argv and environment come in one frame of at most 1 MiB),
 * taken from memory only as it is written.
 */
#define ARENA_SIZE (4u << 20)
#define GO_MAGIC 0x676f2121u  /* "go!!" */
#define GO_FDS 7              /* stdio, three cgroup.procs, the cgroup */

struct go {
	uint32_t magic;
	uint32_t mask;   /* which of the plan's descriptors follow, in order */
};

/* The plan's descriptors, in the order they travel. */
static int *
plan_fd(struct child_plan *p, int i)
{
	return i < 3 ? &p->fd[i] : i < 6 ? &p->cg_procs[i - 3] : &p->cg_dir;
}

/* ---- the copy of a plan into the arena ---- */

struct arena {
	char *p;
	size_t left;
	bool over;
};

static void *
a_alloc(struct arena *a, size_t n)
{
	void *r;

	n = (n + 15) & ~(size_t)15;
	if (a->over || n > a->left) {
		a->over = true;
		return NULL;
	}
	r = a->p;
	a->p += n;
	a->left -= n;
	return r;
}

static const char *
a_str(struct arena *a, const char *s)
{
	size_t n;
	char *d;

	if (s == NULL)
		return NULL;
	n = strlen(s) + 1;
	if ((d = a_alloc(a, n)) != NULL)
		memcpy(d, s, n);
	return d;
}

/* n strings of v, or with n SIZE_MAX those before its NULL, which ends it. */
static const char **
a_strv(struct arena *a, const char *const *v, size_t n)
{
	const char **d;
	size_t i;

	if (v == NULL)
		return NULL;
	if (n == SIZE_MAX)
		for (n = 0; v[n] != NULL; n++)
			;
	if ((d = a_alloc(a, (n + 1) * sizeof(*d))) == NULL)
		return NULL;
	for (i = 0; i < n; i++)
		d[i] = a_str(a, v[i]);
	d[n] = NULL;
	return d;
}

static void *
a_dup(struct arena *a, const void *src, size_t n)
{
	void *d;

	if (src == NULL)
		return NULL;
	if ((d = a_alloc(a, n)) != NULL)
		memcpy(d, src, n);
	return d;
}

/*
 * Every pointer of the plan followed: a copy that holds nothing of the
 * helper's but its seccomp programs, which the init's memory has too
 * (made at the helper's start, before any init was cloned, and never
 * changed).
 */
static struct child_plan *
copy_plan(struct arena *a, const struct child_plan *src)
{
	struct child_plan *c = a_dup(a, src, sizeof(*src));
	struct policy *pol;
	int i;

	if (c == NULL)
		return NULL;
	c->path = a_str(a, src->path);
	c->argv = (char *const *)(uintptr_t)a_strv(a,
	    (const char *const *)src->argv, SIZE_MAX);
	c->envp = (char *const *)(uintptr_t)a_strv(a,
	    (const char *const *)src->envp, SIZE_MAX);
	c->exe = a_str(a, src->exe);
	c->cwd = a_str(a, src->cwd);
	c->become = a_dup(a, src->become, sizeof(*src->become));
	c->self = a_dup(a, src->self, sizeof(*src->self));
	c->landlock = a_dup(a, src->landlock, sizeof(*src->landlock));
	c->limits = a_dup(a, src->limits, sizeof(*src->limits));
	c->remove_root = a_str(a, src->remove_root);
	c->remove_tmp = a_str(a, src->remove_tmp);
	if (src->policy != NULL &&
	    (pol = a_dup(a, src->policy, sizeof(*src->policy))) != NULL) {
		pol->scratch = a_str(a, src->policy->scratch);
		pol->tmp = a_str(a, src->policy->tmp);
		pol->devices = a_strv(a, src->policy->devices,
		    src->policy->ndevices);
		pol->readable = a_strv(a, src->policy->readable,
		    src->policy->nreadable);
		c->policy = pol;
	}
	c->view.root.path = a_str(a, src->view.root.path);
	c->view.tmp.path = a_str(a, src->view.tmp.path);
	for (i = 0; i < 2; i++)
		c->view.keep[i].path = a_str(a, src->view.keep[i].path);
	c->view.devices = a_strv(a, src->view.devices, src->view.ndevices);
	return a->over ? NULL : c;
}

/* ---- the prepared init ---- */

/*
 * Waits for its word to go; the plan's descriptors into plan (a copy of
 * the one in the arena, read after the word). 0 or -1.
 */
static int
recv_go(int ctl, const void *arena, struct child_plan *plan)
{
	char cbuf[CMSG_SPACE(GO_FDS * sizeof(int))];
	int fds[GO_FDS], nfds = 0, want = 0, i, k;
	struct go go;
	struct iovec iov = { &go, sizeof(go) };
	struct msghdr mh;
	struct cmsghdr *cm;
	ssize_t n;

	memset(&mh, 0, sizeof(mh));
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	mh.msg_control = cbuf;
	mh.msg_controllen = sizeof(cbuf);
	while ((n = recvmsg(ctl, &mh, MSG_CMSG_CLOEXEC)) < 0 && errno == EINTR)
		;
	if (n <= 0)
		return -1;
	for (cm = CMSG_FIRSTHDR(&mh); cm != NULL; cm = CMSG_NXTHDR(&mh, cm))
		if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS) {
			k = (int)((cm->cmsg_len - CMSG_LEN(0)) / sizeof(int));
			for (i = 0; i < k && nfds < GO_FDS; i++)
				memcpy(&fds[nfds++], CMSG_DATA(cm) + i * sizeof(int),
				    sizeof(int));
		}
	/* The rest of the word, on a stream (never split in practice). */
	if (n < (ssize_t)sizeof(go) && fd_read_full(ctl, (char *)&go + n,
	    sizeof(go) - (size_t)n) != 0)
		return -1;
	for (i = 0; i < GO_FDS; i++)
		want += (go.mask >> i) & 1;
	if (go.magic != GO_MAGIC || want != nfds ||
	    (mh.msg_flags & MSG_CTRUNC) != 0)
		return -1;
	memcpy(plan, arena, sizeof(*plan));
	for (i = 0, k = 0; i < GO_FDS; i++)
		*plan_fd(plan, i) = (go.mask >> i) & 1 ? fds[k++] : -1;
	return 0;
}

/* pi's tmp removed, as it is gone (or never was): none then. */
static void
tmp_gone(struct prepared *pi)
{
	if (pi->tmp == NULL)
		return;
	(void)mountns_tmp_rmdir(pi->tmp);
	free(pi->tmp);
	pi->tmp = NULL;
}

/* The helper's own name, which a prepared init takes back with a job. */
static char helper_name[17];

static _Noreturn void
prepared_main(int ctl, const struct prepared *pi,
    const struct prepared_pool *pool, bool report)
{
	void *arena = pi->arena;
	int ovl;
	struct child_plan plan;
	struct init_prep pr;
	char closed = 'c';
	size_t i;

	/*
	 * Our copies of the helper's descriptors first, its hosts' sockets
	 * among them: until they are closed a host would not see its helper
	 * die. The helper waits for our word that they are.
	 */
	fd_close_except(&ctl, 1);
	(void)prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
	if (write(ctl, &closed, 1) != 1)
		_exit(0);
	/* The others' plans are not ours to see. */
	for (i = 0; i < pool->n; i++)
		if (pool->held[i].arena != NULL && pool->held[i].arena != arena)
			(void)munmap(pool->held[i].arena, ARENA_SIZE);
	shepherd_prepare(&pr, pool->userns, pool->uid, pool->gid);
	/*
	 * The overlay of /tmp for the tmp the helper made us: made in a
	 * moment of our own, so that a job that may have it finds it made
	 * (plan.c). It needs no unmount, unlike /dev's and /proc's below.
	 */
	ovl = pi->tmp_err;
	if (pr.err == 0 && pi->tmp != NULL) {
		struct mountns_tree t = { pi->tmp, pi->tmp_st.st_dev,
			pi->tmp_st.st_ino };

		ovl = mountns_tmp_overlay(&t);
	}
	pr.tmp = ovl >= 0 ? ovl : -1;
	if (report) {
		uint32_t said[3] = { (uint32_t)pr.err, (uint32_t)pr.op,
			(uint32_t)(ovl >= 0 ? 0 : -ovl) };

		if (write(ctl, said, sizeof(said)) != (ssize_t)sizeof(said) ||
		    pr.err != 0)
			_exit(0);
	}
	/*
	 * Made ahead only where a request is not likely at once: the lazy
	 * unmounts that take them away wait for an RCU grace period (1.5 ms
	 * measured), which a helper's first job, and confine-run's one job,
	 * would wait for too.
	 */
	if (!report)
		shepherd_prepare_view(&pr);
	if (recv_go(ctl, arena, &plan) != 0)
		_exit(0);  /* dropped, or the helper is gone */
	(void)prctl(PR_SET_PDEATHSIG, 0, 0, 0, 0);
	(void)prctl(PR_SET_NAME, helper_name, 0, 0, 0);
	shepherd_main(&plan, ctl, pool->sys, &pr);
}

/* A new one's word that it closed our descriptors: 0, or -EIO. */
static int
closed_word(int ctl)
{
	struct pollfd pfd = { ctl, POLLIN, 0 };
	char c = 0;
	int n;

	while ((n = poll(&pfd, 1, 10000)) < 0 && errno == EINTR)
		;
	if (n != 1 || read(ctl, &c, 1) != 1 || c != 'c')
		return -EIO;
	return 0;
}

int
prepared_make(struct prepared *pi, const struct prepared_pool *pool,
    bool report)
{
	int sv[2], rc;
	void *arena;
	pid_t pid;

	pi->pid = -1;
	pi->ctl = -1;
	pi->arena = NULL;
	pi->tmp = NULL;
	pi->tmp_err = pool->tmp_base != NULL ? mountns_tmp_make(pool->tmp_base,
	    &pi->tmp, &pi->tmp_st) : -ENOTSUP;
	arena = mmap(NULL, ARENA_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED |
	    MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (arena == MAP_FAILED) {
		rc = -errno;
		tmp_gone(pi);
		return rc;
	}
	if ((rc = fd_socketpair(sv)) != 0) {
		(void)munmap(arena, ARENA_SIZE);
		tmp_gone(pi);
		return rc;
	}
	pi->arena = arena;
	/*
	 * Born with its name: ours for the clone, so that no one sees a
	 * prepared init by our name (tests count a helper's inits by it).
	 */
	(void)prctl(PR_GET_NAME, helper_name, 0, 0, 0);
	(void)prctl(PR_SET_NAME, PREPARED_NAME, 0, 0, 0);
	pid = ns_clone_init(pool->userns);
	if (pid != 0)
		(void)prctl(PR_SET_NAME, helper_name, 0, 0, 0);
	if (pid == 0) {
		close(sv[0]);
		prepared_main(sv[1], pi, pool, report);
	}
	rc = pid < 0 ? -errno : 0;
	close(sv[1]);
	if (rc != 0) {
		close(sv[0]);
		(void)munmap(arena, ARENA_SIZE);
		pi->arena = NULL;
		tmp_gone(pi);
		return rc;
	}
	(void)fd_nonblock(sv[0]);
	pi->pid = pid;
	pi->ctl = sv[0];
	/*
	 * Not given out until it holds nothing of ours but its socket: a
	 * helper killed after this leaves no host's socket open behind it.
	 */
	if ((rc = closed_word(pi->ctl)) != 0)
		prepared_discard(pi);
	return rc;
}

int
prepared_result(struct prepared *pi, enum op *op, int *overlay)
{
	struct pollfd pfd = { pi->ctl, POLLIN, 0 };
	uint32_t said[3];
	int rc;

	*op = OP_CLONE_INIT;
	*overlay = -ENOTSUP;
	while (poll(&pfd, 1, -1) < 0 && errno == EINTR)
		;
	rc = fd_read_full(pi->ctl, said, sizeof(said));
	if (rc == 0 && said[0] == 0) {
		*overlay = said[2] < 4096 ? -(int)said[2] : -EIO;
		return 0;
	}
	if (rc == 0) {
		*op = said[1] <= OP_LAST ? (enum op)said[1] : OP_NONE;
		rc = said[0] < 4096 ? -(int)said[0] : -EIO;
	} else {
		rc = -EIO;
	}
	prepared_discard(pi);
	return rc;
}

void
prepared_drop(struct prepared *pi, bool kill_it)
{
	if (kill_it && pi->pid > 0)
		(void)kill(pi->pid, SIGKILL);
	fd_closep(&pi->ctl);
	if (pi->arena != NULL)
		(void)munmap(pi->arena, ARENA_SIZE);
	pi->arena = NULL;
	pi->pid = -1;
}

void
prepared_discard(struct prepared *pi)
{
	pid_t pid = pi->pid;

	prepared_drop(pi, true);
	if (pid > 0)
		proc_reap(pid, NULL);
	tmp_gone(pi);
}

void
prepared_drain(struct prepared_pool *p, bool reap)
{
	struct prepared *pi;

	while (p->n > 0) {
		pi = &p->held[--p->n];
		/* Without reap, waited for only if its tmp has no room left. */
		if (reap || (pi->tmp != NULL && (pi->pid <= 0 ||
		    p->nleft == sizeof(p->left) / sizeof(p->left[0])))) {
			prepared_discard(pi);
			continue;
		}
		if (pi->tmp != NULL) {
			p->left[p->nleft].pid = pi->pid;
			p->left[p->nleft++].tmp = pi->tmp;
			pi->tmp = NULL;
		}
		prepared_drop(pi, true);
	}
	p->want = 0;
	p->missed = 0;
}

void
prepared_fini(struct prepared_pool *p)
{
	while (p->nleft > 0) {
		struct prepared_left *l = &p->left[--p->nleft];

		proc_reap(l->pid, NULL);
		(void)mountns_tmp_rmdir(l->tmp);
		free(l->tmp);
	}
}

bool
prepared_take(struct prepared_pool *p, struct prepared *out, int64_t now)
{
	p->t_asked = now;
	if (p->n == 0) {
		p->missed++;
		return false;
	}
	*out = p->held[0];
	memmove(&p->held[0], &p->held[1], --p->n * sizeof(p->held[0]));
	p->taken++;
	/* One taken is one to make again (the first, the start's, too). */
	if (p->want == 0)
		p->want = 1;
	return true;
}

bool
prepared_forget(struct prepared_pool *p, pid_t pid)
{
	size_t i;

	/*
	 * Dead, its exit past: nothing holds its overlay of /tmp any more
	 * (its last descriptor went with its files, before it was a zombie).
	 */
	for (i = 0; i < p->n; i++)
		if (p->held[i].pid == pid) {
			prepared_drop(&p->held[i], false);
			tmp_gone(&p->held[i]);
			memmove(&p->held[i], &p->held[i + 1],
			    (p->n - i - 1) * sizeof(p->held[0]));
			p->n--;
			return true;
		}
	for (i = 0; i < p->nleft; i++)
		if (p->left[i].pid == pid) {
			(void)mountns_tmp_rmdir(p->left[i].tmp);
			free(p->left[i].tmp);
			p->left[i] = p->left[--p->nleft];
			return true;
		}
	return false;
}

int
prepared_go(struct prepared *pi, const struct child_plan *plan)
{
	struct arena a = { pi->arena, ARENA_SIZE, false };
	char cbuf[CMSG_SPACE(GO_FDS * sizeof(int))];
	struct child_plan *c = copy_plan(&a, plan);
	struct go go = { GO_MAGIC, 0 };
	struct iovec iov = { &go, sizeof(go) };
	struct msghdr mh;
	struct cmsghdr *cm;
	int fds[GO_FDS], n = 0, i;
	ssize_t sent;

	if (c == NULL)
		return -E2BIG;
	for (i = 0; i < GO_FDS; i++)
		if (*plan_fd(c, i) >= 0) {
			go.mask |= 1u << i;
			fds[n++] = *plan_fd(c, i);
		}
	memset(&mh, 0, sizeof(mh));
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	if (n > 0) {
		memset(cbuf, 0, sizeof(cbuf));
		mh.msg_control = cbuf;
		mh.msg_controllen = CMSG_SPACE((size_t)n * sizeof(int));
		cm = CMSG_FIRSTHDR(&mh);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN((size_t)n * sizeof(int));
		memcpy(CMSG_DATA(cm), fds, (size_t)n * sizeof(int));
	}
	while ((sent = sendmsg(pi->ctl, &mh, MSG_NOSIGNAL)) < 0 &&
	    errno == EINTR)
		;
	if (sent < 0)
		return -errno;
	return sent == (ssize_t)sizeof(go) ? 0 : -EIO;
}
