/*
 * A complete host: four confined jobs from four threads through one helper.
 * Build and run: bazel run //examples:hello
 */
#include <pthread.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include <confine/confine.h>

static struct confine *c;
static char scratch[] = "/tmp/confine-hello.XXXXXX";

static void *
run(void *arg)
{
	const char *script = arg;
	const char *argv[] = { "sh", "-c", script, NULL };
	struct confine_spec spec;
	struct confine_result r;
	struct confine_job *job;
	int rc;

	confine_spec_init(&spec);
	spec.exe = "/bin/sh";
	spec.argv = argv;
	spec.scratch = scratch;      /* the only tree the job may write */
	spec.stdout_fd = STDOUT_FILENO;
	spec.stderr_fd = STDERR_FILENO;
	spec.deadline_ms = 2000;
	rc = confine_spawn(c, &spec, &job);
	if (rc != 0) {
		fprintf(stderr, "spawn: %s\n", confine_error_message());
		return (void *)1;
	}
	confine_wait(job, -1, &r);
	printf("%-40s -> %s (%s) exit %d\n", script,
	    confine_outcome_name(r.outcome), confine_reason_name(r.reason),
	    r.exit_code);
	confine_job_free(job);
	return NULL;
}

int
main(void)
{
	static const char *const scripts[] = {
		"echo hello > greeting && cat greeting",
		"echo escape > /var/tmp/confine-hello-escape",
		"sleep 10",
		"exit 3",
	};
	pthread_t t[4];
	char path[64];
	void *failed;
	int i, bad = 0;

	if (mkdtemp(scratch) == NULL || confine_open(&c, NULL) != 0) {
		fprintf(stderr, "hello: %s\n", confine_error_message());
		return 1;
	}
	for (i = 0; i < 4; i++)
		pthread_create(&t[i], NULL, run, (void *)(uintptr_t)scripts[i]);
	for (i = 0; i < 4; i++) {
		pthread_join(t[i], &failed);
		bad |= failed != NULL;
	}
	confine_close(c);
	snprintf(path, sizeof(path), "%s/greeting", scratch);
	unlink(path);
	rmdir(scratch);
	return bad;
}
