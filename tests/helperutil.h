/* Tests through the public API: helpers to start, connect and spawn. */
#ifndef CONFINE_HELPERUTIL_H
#define CONFINE_HELPERUTIL_H

#include <stdbool.h>
#include <sys/types.h>

#include "confine/confine.h"
#include "src/core/spec.h"

extern char *hu_fixture;
extern char *hu_helper;

/* Finds the fixture and the helper binary in the runfiles. */
void hu_setup(void);

/*
 * The first case of a both_paths suite (tests/defs.bzl): a job through a
 * helper of exec mode runs on the path the target is named for
 * (tu_path_is; on the direct path the job is the helper's child).
 */
void hu_on_its_path(void **state);

/* A proven job's proof: its cgroup's where our helpers have cgroups. */
enum confine_proof hu_proof(void);

/* Starts `confine-helper --listen PATH` with extra args; waits for it. */
pid_t hu_listen(const char *path, const char *const *extra);
/* SIGTERM, then reap. */
void hu_stop(pid_t pid);

/*
 * The helper binary at helper (a copy user may run) started as user with
 * --listen sock, its TMPDIR dir, and where nproc > 0 an RLIMIT_NPROC of
 * nproc; env: NAME=VALUE settings for it besides, NULL-terminated, or
 * NULL. Its pid, once sock is there (or after 5 s).
 */
pid_t hu_listen_as(uid_t user, const char *helper, const char *sock,
    const char *dir, long nproc, const char *const *env);

/*
 * Where a helper runs as another user: dir, beneath /tmp, user's (mode
 * 0755, so that the copy runs), holding helper, a copy of the helper
 * binary, scratch, a scratch root of user's, and sock, the path for its
 * socket (for hu_listen_as). hu_stage_as fails the test where it cannot
 * make them.
 */
struct hu_stage {
	char dir[32];
	char *helper, *scratch, *sock;
	uid_t user;
};

void hu_stage_as(struct hu_stage *st, uid_t user);
/*
 * The helper pid (hu_listen_as's) stopped and reaped, then the stage's
 * files removed and freed; anything else put in dir must be gone first.
 */
void hu_unstage(struct hu_stage *st, pid_t pid);

/*
 * hu_open in connect mode as user (a peer's credentials are taken at
 * connect), tried for up to 5 s while the helper starts: 0, or the last
 * error.
 */
int hu_open_as(struct confine **c, uid_t user, const char *sock);

/* Opens in a mode; for CONNECT, socket is the listening path. */
int hu_open(struct confine **c, enum confine_mode mode, const char *socket);

/* A spec for the fixture with args (NULL-terminated), in scratch. */
struct hu_job {
	struct confine_spec spec;
	const char *argv[16];
	struct confine_job *job;
	struct confine_result r;
	int rc;
	char *out;
	pid_t *out_pids;   /* each line's writer, as we see it (testutil.h) */
	size_t out_lines;
	int outfd;
};

void hu_init(struct hu_job *j, const char *scratch, ...);
/* Spawns; captures stdout unless spec.stdout_fd was set. */
int hu_spawn(struct confine *c, struct hu_job *j);
/* Waits for ever and drains stdout. */
int hu_wait(struct hu_job *j);
int hu_run(struct confine *c, struct hu_job *j);
/*
 * Fails the test unless r has this outcome and reason, saying all of r:
 * a wrong outcome is told with what decided it.
 */
void hu_assert_outcome(const struct confine_result *r,
    enum confine_outcome outcome, enum confine_reason reason);
void hu_free(struct hu_job *j);

/*
 * The first line a job printed on fd (fixture pid-sleep: its pid, as it
 * sees it), and the pid of the process that wrote it, as we see it: the
 * one returned.
 */
pid_t hu_read_pid(int fd);
/* As jr_pid: line n's writer, as we see it. */
pid_t hu_pid(const struct hu_job *j, size_t n);

/*
 * Starts tests/host in mode ("exec" or "fork") with n sleeping jobs; fills
 * pids[0] with the helper's pid and pids[1..n] with the jobs'. Returns the
 * host's pid, for the caller to kill.
 */
pid_t hu_host(const char *mode, const char *scratch, int n, pid_t *pids);

/*
 * Starts tests/host in mode with n sleeping jobs, each on the path of the
 * target (tu_path_is), kills the host with SIGKILL (and at once its
 * helper too, when helper_too) and asserts that nothing of it outlives
 * it: not the helper, not a child of the helper (a shepherd, or the
 * guard), not a job, not a process in any job's group.
 */
void hu_kill_host(const char *mode, const char *scratch, int n,
    bool helper_too);

/*
 * pid's children (its first thread's), at most cap: a helper's shepherds
 * and inits, not the inits it prepared ahead, still waiting for a job
 * (helper/engine/prepared.h).
 */
int hu_children_of(pid_t pid, pid_t *out, int cap);

/* A helper's prepared inits still waiting for a job, at most cap. */
int hu_prepared_of(pid_t pid, pid_t *out, int cap);

/* pid's parent as we see it, from /proc/PID/stat. */
pid_t hu_parent_of(pid_t pid);

/* A request for the fixture with argv, as it goes on the wire: no fds. */
void hu_spec(struct confine_spec *s, const char *const *argv, const char *scratch);

/* A raw connection to a listening helper. */
int hu_raw_connect(const char *path);

/* Waits until a child of ours has exited, leaving it to its reaper. */
void hu_await_exit(pid_t pid);

/* True when pid runs the program at path (/proc/PID/exe, canonical). */
bool hu_runs(pid_t pid, const char *path);

/* True when pid has a descriptor open on the file at path. */
bool hu_has_open(pid_t pid, const char *path);

/*
 * True once kill(who, 0) says ESRCH (who < 0: a process group), polled
 * for up to a minute: "gone" needs every member reaped, not just dead.
 */
bool hu_gone(pid_t who);

#endif
