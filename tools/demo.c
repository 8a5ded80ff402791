/*
 * The README's main job: a few confined jobs on this machine, each with its
 * settlement. Uses the core directly (one job at a time, blocking).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "helper/job.h"

static struct job_env env;
static int failures;

static void
show(const char *what, const struct confine_result *r, int rc,
    const char *why, enum confine_outcome want)
{
	printf("  -> ");
	if (rc != 0) {
		printf("refused: %s (%s)\n\n", strerror(-rc), why ? why : "");
		failures++;
		return;
	}
	printf("%s", confine_outcome_name(r->outcome));
	if (r->reason != CONFINE_REASON_NONE)
		printf(" (%s)", confine_reason_name(r->reason));
	if (r->exit_code >= 0)
		printf(", exit %d", r->exit_code);
	if (r->signal)
		printf(", signal %d", r->signal);
	if (r->reason == CONFINE_REASON_EXEC)
		printf(", %s at %s", strerror(r->error), confine_step_name(r->step));
	printf(", pid %ld, pgid %ld, %s, %.1f ms\n", (long)r->pid, (long)r->pgid,
	    confine_backend_name(r->backend), r->wall_us / 1000.0);
	if (r->outcome != want) {
		printf("  !! expected %s for: %s\n", confine_outcome_name(want), what);
		failures++;
	}
	printf("\n");
	fflush(stdout);
}

static void
run(const char *what, const char *scratch, int64_t deadline_ms,
    enum confine_outcome want, const char *const *argv)
{
	struct confine_result r;
	const char *why = NULL;
	struct spec s;
	size_t n = 0;
	int rc;

	while (argv[n] != NULL)
		n++;
	memset(&s, 0, sizeof(s));
	s.exe = argv[0];
	s.argv = argv;
	s.argc = n;
	s.scratch = scratch;
	s.backend = CONFINE_BACKEND_AUTO;
	s.deadline_ms = deadline_ms;
	s.fd[0] = -1;
	s.fd[1] = STDOUT_FILENO;
	s.fd[2] = STDOUT_FILENO;
	printf("%s\n  $", what);
	for (size_t i = 0; i < n; i++)
		printf(strchr(argv[i], ' ') ? " '%s'" : " %s", argv[i]);
	printf("\n");
	fflush(stdout);
	rc = job_run(&s, &env, &r, &why);
	show(what, &r, rc, why, want);
}

int
main(void)
{
	char scratch[] = "/tmp/confine-demo-scratch.XXXXXX";
	char outside[] = "/tmp/confine-demo-outside.XXXXXX";
	char cmd[512], target[256];
	struct stat st;

	if (mkdtemp(scratch) == NULL || mkdtemp(outside) == NULL) {
		perror("demo: mkdtemp");
		return 1;
	}
	job_env_init(&env);
	printf("confine demo: Landlock ABI %d; scratch root %s\n\n",
	    env.landlock_abi, scratch);

	run("1. A write inside the scratch root succeeds", scratch, 0,
	    CONFINE_COMPLETED, (const char *const[]){ "/bin/sh", "-c",
	    "echo hello > note.txt && cat note.txt", NULL });

	snprintf(target, sizeof(target), "%s/escaped", outside);
	snprintf(cmd, sizeof(cmd), "echo escape > %s", target);
	run("2. A write outside it is denied", scratch, 0, CONFINE_FAILED,
	    (const char *const[]){ "/bin/sh", "-c", cmd, NULL });
	printf("  %s %s\n\n", target, stat(target, &st) == 0 ?
	    "EXISTS: confinement failed" : "was not created");
	if (stat(target, &st) == 0)
		failures++;

	run("3. A network connect is denied", scratch, 0, CONFINE_FAILED,
	    (const char *const[]){ "/bin/bash", "-c",
	    "exec 3<>/dev/tcp/127.0.0.1/80", NULL });

	run("4. A deadline of 500 ms cancels a sleeper", scratch, 500,
	    CONFINE_CANCELLED, (const char *const[]){ "/bin/sleep", "30", NULL });

	run("5. A descendant left behind makes the job Uncertain, and is killed",
	    scratch, 0, CONFINE_UNCERTAIN, (const char *const[]){ "/bin/sh", "-c",
	    "sleep 30 & exit 0", NULL });

	job_env_fini(&env);
	snprintf(target, sizeof(target), "%s/note.txt", scratch);
	unlink(target);
	rmdir(scratch);
	rmdir(outside);
	printf("%s\n", failures ? "demo: something did not settle as expected" :
	    "demo: every job settled as expected");
	return failures ? 1 : 0;
}
