/* The fixture run as a job through the engine (helper/engine/job.h). */
#ifndef CONFINE_JOBRUN_H
#define CONFINE_JOBRUN_H

#include <stdbool.h>

#include "helper/engine/job.h"

struct jr {
	struct confine_spec spec;
	const char *argv[16];
	const char *envp[8];
	const struct ident *peer;  /* whose job: NULL for the helper's own */
	struct confine_result r;
	int rc;            /* jr_job_run's return */
	const char *why;
	char *out;         /* the job's stdout */
	pid_t *out_pids;   /* each of its lines' writer, as we see it */
	size_t out_lines;
	int64_t elapsed_ms;
};

/*
 * The pid, as we see it, of the process that wrote line n (from 0) of the
 * job's stdout: the same as it printed without a PID namespace of its
 * own, its pid outside one with it. Fails the test when there is none.
 */
pid_t jr_pid(const struct jr *j, size_t n);
/*
 * The job's process group as it sees it, run with env: 2 in a PID
 * namespace of its own (its init's child, it leads its session), else
 * its result's.
 */
long jr_seen_pgid(const struct jr *j, const struct job_env *env);

/*
 * Runs one job to its settlement through job.h's calls, blocking: for a
 * single-threaded test (it forks). 0 with *r filled, or a refusal as
 * job_start's.
 */
int jr_job_run(const struct confine_spec *s, const struct job_env *env,
    const struct ident *peer, struct confine_result *r, const char **why);

extern struct job_env jr_env;
extern char *jr_fixture;

/* Probes the machine once and finds the fixture. */
void jr_setup(void);

/*
 * The first case of a both_paths suite (tests/defs.bzl): a job through
 * jr_env runs on the path the target is named for (tu_path_is), and
 * jr_env says so.
 */
void jr_on_its_path(void **state);

/* A proven job's proof here: its cgroup's, where jr_env has cgroups. */
enum confine_proof jr_proof(void);

/* The fixture with args (NULL-terminated) under backend, in scratch. */
void jr_init(struct jr *j, enum confine_backend backend, const char *scratch,
    ...);
/* The same with args as an array (NULL-terminated, at most 14). */
void jr_init_args(struct jr *j, enum confine_backend backend,
    const char *scratch, const char *const *args);
/* Runs it, capturing stdout unless fd[1] was set. */
void jr_run(struct jr *j);
void jr_run_env(struct jr *j, const struct job_env *env);
void jr_free(struct jr *j);

/*
 * Runs j (`fixture ids wait`) with an intruder: a process that is not the
 * job's descendant and that, once the job has printed its ids, calls
 * join(pid, pgid) on itself (to enter the job's group or its cgroup; it
 * _exits on failure), lets the job exit 0 by closing its stdin, and
 * sleeps 30 s. Its parent, a keeper outside the job, reaps it at once, so
 * that no zombie of it stays anywhere. Returns true when the intruder died
 * of SIGKILL (waiting for it, after the job).
 */
bool jr_run_intruded(struct jr *j, void (*join)(long pid, long pgid));
/*
 * The same, saying how the intruder ended: 0 killed by SIGKILL, 100 + N
 * when it exited N (N < 100; join may _exit, which ends the job's stdin
 * too), else 1.
 */
int jr_run_intruder(struct jr *j, void (*join)(long pid, long pgid));

/*
 * Runs `fixture args...` (NULL-terminated) under a backend in scratch, with
 * stdin_fd (-1: /dev/null) and whose job it is (peer, NULL: ours): the
 * exit code (0 or an errno), or JR_SIG(n) when signal n ended it.
 */
#define JR_SIG(n) (-(n))
int jr_probe(enum confine_backend b, const char *scratch, int stdin_fd,
    const struct ident *peer, const char *const *args);

#define JR_PROBE(b, scratch, ...) jr_probe((b), (scratch), -1, NULL,       \
	(const char *const[]){ __VA_ARGS__, NULL })

/* The same attempt unconfined, then confined: each answer asserted. */
#define JR_PAIR(d, unconfined, confined, ...) do {                         \
		assert_int_equal(JR_PROBE(CONFINE_BACKEND_NONE, (d)->scratch,   \
		    __VA_ARGS__), (unconfined));                                \
		assert_int_equal(JR_PROBE(CONFINE_BACKEND_LANDLOCK,             \
		    (d)->scratch, __VA_ARGS__), (confined));                    \
	} while (0)

/*
 * A process outside the job, named by its pid: with a PID namespace of
 * its own (jr_env.ns) there is no such process for the job (ESRCH, and no
 * /proc entry of it, ENOENT); without one, e, another layer's refusal.
 */
#define JR_OUTSIDE(e) (jr_env.ns ? ESRCH : (e))
/*
 * Sockets of its own: namespaces of its own, and a kernel whose init can
 * supervise their calls (helper/backend/supervise.h); else socket() is refused.
 */
#define JR_NET (jr_env.ns && jr_env.sup_ok && !jr_env.group_proof_only)
/* A host's loopback listener, from a job: not there (its loopback is its
 * own), or refused. */
#define JR_NET_ERRNO (JR_NET ? ECONNREFUSED : EPERM)
#define JR_OUTSIDE_PROC(e) (jr_env.ns ? ENOENT : (e))
/*
 * The host's /tmp beneath the job's own (an overlay: mountns.h), where
 * its init can lay it and reads are everywhere; else its /tmp is private.
 */
#define JR_TMP_OVER (jr_env.ns && jr_env.tmp_overlay_ok &&                  \
	!jr_env.group_proof_only)

/* Writes text to path, replacing what was there. */
void jr_put(const char *path, const char *text);
/* Asserts that path holds exactly text. */
void jr_assert_text(const char *path, const char *text);

/* A scratch root and a directory outside it, as a cmocka state. */
struct jr_dirs {
	char *scratch;
	char *outside;
};

int jr_dirs_setup(void **state);
int jr_dirs_teardown(void **state);

/* Assertions on the result, with the whole result in the message. */
#define assert_outcome(j, o, rs) jr_assert(j, o, rs, __FILE__, __LINE__)
void jr_assert(const struct jr *j, enum confine_outcome o,
    enum confine_reason rs, const char *file, int line);

#endif
