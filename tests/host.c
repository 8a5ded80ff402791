/*
 * A host program for the tests that kill the host: `host MODE HELPER
 * FIXTURE SCRATCH N` opens confine in MODE (exec or fork), starts N
 * sleeping jobs, prints the helper's pid and then each job's pid (as we
 * see it), one per line, and waits to be killed.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "confine/confine.h"

/*
 * The pid, as we see it, of whoever wrote the first line on fd: a job in
 * a PID namespace of its own prints the pid it sees, which is not ours.
 */
#ifdef __linux__
static pid_t
line_writer(int fd)
{
	char c, cbuf[CMSG_SPACE(sizeof(struct ucred))];
	struct iovec iov = { &c, 1 };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct cmsghdr *cm;
	struct ucred uc;
	pid_t first = 0;

	for (;;) {
		m.msg_control = cbuf;
		m.msg_controllen = sizeof(cbuf);
		if (recvmsg(fd, &m, 0) != 1) {
			if (errno == EINTR)
				continue;
			return first;
		}
		for (cm = CMSG_FIRSTHDR(&m); first == 0 && cm != NULL;
		    cm = CMSG_NXTHDR(&m, cm))
			if (cm->cmsg_type == SCM_CREDENTIALS) {
				memcpy(&uc, CMSG_DATA(cm), sizeof(uc));
				first = uc.pid;
			}
		if (c == '\n')
			return first;
	}
}

static int
writer_pair(int p[2])
{
	int one = 1;

	return socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, p) != 0 ||
	    setsockopt(p[0], SOL_SOCKET, SO_PASSCRED, &one, sizeof(one)) != 0 ?
	    -1 : 0;
}
#else
/* No PID namespaces: the pid printed is ours too. */
static pid_t
line_writer(int fd)
{
	char line[32];
	size_t k = 0;

	while (k + 1 < sizeof(line) && read(fd, &line[k], 1) == 1 &&
	    line[k] != '\n')
		k++;
	line[k] = '\0';
	return (pid_t)atol(line);
}

static int
writer_pair(int p[2])
{
	return socketpair(AF_UNIX, SOCK_STREAM, 0, p) != 0 ||
	    fcntl(p[0], F_SETFD, FD_CLOEXEC) != 0 ||
	    fcntl(p[1], F_SETFD, FD_CLOEXEC) != 0 ? -1 : 0;
}
#endif

int
main(int argc, char **argv)
{
	struct confine_options o = { .mode = CONFINE_MODE_EXEC };
	const char *jargv[] = { "fixture", "pid-sleep", "30000", NULL };
	struct confine_spec spec;
	struct confine_job *job;
	struct confine *c;
	int i, n, p[2];
	pid_t writer;

	if (argc != 6) {
		fprintf(stderr, "usage: host exec|fork HELPER FIXTURE SCRATCH N\n");
		return 2;
	}
	o.mode = strcmp(argv[1], "fork") == 0 ? CONFINE_MODE_FORK :
	    CONFINE_MODE_EXEC;
	o.helper_path = argv[2];
	if (confine_open(&c, &o) != 0) {
		fprintf(stderr, "host: %s\n", confine_error_message());
		return 1;
	}
	printf("%ld\n", (long)confine_helper_pid(c));
	n = atoi(argv[5]);
	for (i = 0; i < n; i++) {
		/* Its writer's pid with what it prints: ours to see (ns.h). */
		if (writer_pair(p) != 0)
			return 1;
		confine_spec_init(&spec);
		spec.exe = argv[3];
		spec.argv = jargv;
		spec.scratch = argv[4];
		spec.stdout_fd = p[1];
		if (confine_spawn(c, &spec, &job) != 0) {
			fprintf(stderr, "host: %s\n", confine_error_message());
			return 1;
		}
		close(p[1]);
		if ((writer = line_writer(p[0])) <= 1)
			return 1;
		printf("%ld\n", (long)writer);
		close(p[0]);
	}
	fflush(stdout);
	for (;;)
		pause();
}
