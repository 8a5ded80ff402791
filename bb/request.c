#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bb/path.h"
#include "bb/request.h"

static int __attribute__((format(printf, 4, 5)))
refuse(int err, char *why, size_t whylen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, whylen, fmt, ap);
	va_end(ap);
	return -err;
}

/* A field's path made canonical into out, or refused naming the field. */
static int
field(const char *name, const char *value, char *out, size_t len, char *why,
    size_t whylen)
{
	const char *what;
	int rc;

	if ((rc = bbpath_clean(value, out, len, &what)) != 0)
		return refuse(-rc, why, whylen, "%s \"%s\" %s", name, value, what);
	return 0;
}

/* stdout_path or stderr_path: a file beneath the build directory. */
static int
log_field(const char *name, const char *value, char *out, size_t len,
    char *why, size_t whylen)
{
	int rc;

	if ((rc = field(name, value, out, len, why, whylen)) != 0)
		return rc;
	if (out[0] == '\0')
		return refuse(EINVAL, why, whylen,
		    "%s \"%s\" names the build directory, not a file", name,
		    value);
	return 0;
}

int
bbreq_make_plan(const struct bbreq *req, const char *build_dir,
    struct bbreq_plan *plan, char *why, size_t whylen)
{
	char wd[PATH_MAX], logs[PATH_MAX], abs[PATH_MAX];
	size_t i;
	int rc;

	memset(plan, 0, sizeof(*plan));
	why[0] = '\0';
	if (req->argc == 0)
		return refuse(EINVAL, why, whylen,
		    "Insufficient number of command arguments");
	if (req->argv[0][0] == '\0')
		return refuse(EINVAL, why, whylen, "arguments[0] is empty");
	if ((rc = field("input_root_directory", req->input_root_directory,
	    plan->input_root, sizeof(plan->input_root), why, whylen)) != 0 ||
	    (rc = field("working_directory", req->working_directory, wd,
	    sizeof(wd), why, whylen)) != 0 ||
	    (rc = log_field("stdout_path", req->stdout_path, plan->stdout_path,
	    sizeof(plan->stdout_path), why, whylen)) != 0 ||
	    (rc = log_field("stderr_path", req->stderr_path, plan->stderr_path,
	    sizeof(plan->stderr_path), why, whylen)) != 0 ||
	    (rc = field("temporary_directory", req->temporary_directory,
	    plan->tmp, sizeof(plan->tmp), why, whylen)) != 0 ||
	    (rc = field("server_logs_directory", req->server_logs_directory,
	    logs, sizeof(logs), why, whylen)) != 0)
		return rc;
	if (bbpath_join(plan->input_root, wd, plan->cwd, sizeof(plan->cwd)) != 0)
		return refuse(ENAMETOOLONG, why, whylen,
		    "working_directory \"%s\" too long", req->working_directory);
	bbpath_common(plan->input_root,
	    req->temporary_directory[0] != '\0' ? plan->tmp : NULL,
	    plan->scratch, sizeof(plan->scratch));
	if (plan->scratch[0] == '\0')
		return refuse(EINVAL, why, whylen,
		    "input_root_directory \"%s\" and temporary_directory \"%s\" "
		    "share no directory beneath the build directory: the action "
		    "could write every other action's", req->input_root_directory,
		    req->temporary_directory);
	if (req->temporary_directory[0] != '\0') {
		if (bbpath_join(build_dir, plan->tmp, abs, sizeof(abs)) != 0)
			return refuse(ENAMETOOLONG, why, whylen,
			    "temporary_directory too long");
		snprintf(plan->tmpdir_env, sizeof(plan->tmpdir_env), "TMPDIR=%s",
		    abs);
	}
	for (i = 0; i < req->nenv; i++) {
		const char *name = req->env_names[i];

		if (name[0] == '\0' || strchr(name, '=') != NULL)
			return refuse(EINVAL, why, whylen,
			    "environment variable name \"%s\" is empty or has '='",
			    name);
		if (strcmp(name, "PATH") == 0)
			plan->path_var = req->env_values[i];
		if (strcmp(name, "TMPDIR") == 0)
			plan->tmpdir_env[0] = '\0';
	}
	return 0;
}

char **
bbreq_envp(const struct bbreq *req, const struct bbreq_plan *plan)
{
	size_t i, n = 0, size, slots = req->nenv + 2;
	char **envp, *p;

	size = slots * sizeof(char *) + strlen(plan->tmpdir_env) + 1;
	for (i = 0; i < req->nenv; i++)
		size += strlen(req->env_names[i]) + strlen(req->env_values[i]) + 2;
	if ((envp = malloc(size)) == NULL)
		return NULL;
	p = (char *)(envp + slots);
	for (i = 0; i < req->nenv; i++) {
		envp[n++] = p;
		p += sprintf(p, "%s=%s", req->env_names[i], req->env_values[i]) + 1;
	}
	if (plan->tmpdir_env[0] != '\0') {
		envp[n++] = p;
		strcpy(p, plan->tmpdir_env);
	}
	envp[n] = NULL;
	return envp;
}
