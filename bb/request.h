/*
 * A Buildbarn Run request, checked as text and planned as one confine job:
 * pure, tested by tests/bb/request_test.c. runner.c then checks the plan
 * against the file system and runs it.
 */
#ifndef CONFINE_BB_REQUEST_H
#define CONFINE_BB_REQUEST_H

#include <limits.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A RunRequest's fields, as C strings (server.cc refuses a NUL in one). */
struct bbreq {
	const char *const *argv;     /* arguments */
	size_t argc;
	const char *const *env_names;   /* environment_variables */
	const char *const *env_values;
	size_t nenv;
	const char *working_directory;     /* relative to the input root */
	const char *stdout_path;           /* the rest relative to the */
	const char *stderr_path;           /* build directory */
	const char *input_root_directory;
	const char *temporary_directory;   /* "": none */
	const char *server_logs_directory; /* "": none */
};

/*
 * The job a request asks for. Relative paths are canonical and relative
 * to the build directory ("" is the build directory itself).
 */
struct bbreq_plan {
	char input_root[PATH_MAX];
	char cwd[PATH_MAX];          /* the working directory */
	char stdout_path[PATH_MAX];
	char stderr_path[PATH_MAX];
	char tmp[PATH_MAX];          /* "" when the request has none */
	/*
	 * The job's scratch root, the only tree it may write: the action's
	 * own directory, the deepest one holding its input root and its
	 * temporary directory (bb_worker's <build>/<action>/ for root/ and
	 * tmp/). Never the build directory itself, where every other
	 * action's directories lie.
	 */
	char scratch[PATH_MAX];
	char tmpdir_env[PATH_MAX + 8];  /* "TMPDIR=<abs tmp>", or "" */
	const char *path_var;        /* the request's PATH, or NULL */
};

/*
 * Checks req as text and plans its job beneath build_dir (absolute,
 * canonical). 0, or -EINVAL (-ENAMETOOLONG) with why, in words, naming
 * the field: an empty argv, an empty argv[0], a path that is absolute or
 * climbs out of its root, a working directory outside the input root, a
 * temporary directory outside the action's directory, stdout or stderr
 * naming the build directory itself, an environment entry without a name,
 * or an action directory that would be the build directory.
 */
int bbreq_make_plan(const struct bbreq *req, const char *build_dir,
    struct bbreq_plan *plan, char *why, size_t whylen);

/*
 * The job's environment: exactly the request's, NAME=VALUE, and TMPDIR
 * naming the temporary directory unless the request sets TMPDIR itself
 * (bb_runner's order: the request's wins). NULL-terminated, in one
 * allocation the caller frees; NULL when out of memory.
 */
char **bbreq_envp(const struct bbreq *req, const struct bbreq_plan *plan);

#ifdef __cplusplus
}
#endif

#endif
