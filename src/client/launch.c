#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "src/client/errmsg.h"
#include "src/core/fd.h"
#ifdef __linux__
#include "src/client/image.h"
#endif
#include "src/client/launch.h"

#define HELPER_FD 3

int
launch_find(const char *given, char **out)
{
	const char *path = given ? given : getenv("CONFINE_HELPER");

	if (path == NULL || *path == '\0')
		path = CONFINE_HELPER_DEFAULT;
	if (path[0] != '/')
		return bail(EINVAL, "helper path %s is not absolute", path);
	if (access(path, X_OK) != 0)
		return bail(errno, "helper %s: %s", path, strerror(errno));
	*out = strdup(path);
	return *out ? 0 : bail(ENOMEM, "out of memory");
}

int
launch_spawn(const char *path, pid_t *pid, int *fd)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	char parent[24], *argv[6], *envp[6] = { NULL };
	const char *tmpdir = getenv("TMPDIR");
	size_t ne = 0, i;
	int sv[2], rc, moved;
	sigset_t none, all;

	if ((rc = fd_socketpair(sv)) != 0)
		return bail(-rc, "socketpair: %s", strerror(-rc));
	if (sv[1] == HELPER_FD) {
		/* dup2 onto itself would leave close-on-exec set. */
		moved = fcntl(sv[1], F_DUPFD_CLOEXEC, HELPER_FD + 1);
		rc = errno;
		close(sv[1]);
		if ((sv[1] = moved) < 0) {
			close(sv[0]);
			return bail(rc, "fcntl: %s", strerror(rc));
		}
	}
	snprintf(parent, sizeof(parent), "%ld", (long)getpid());
	argv[0] = (char *)(uintptr_t)"confine-helper";
	argv[1] = (char *)(uintptr_t)"--fd";
	argv[2] = (char *)(uintptr_t)"3";
	argv[3] = (char *)(uintptr_t)"--parent";
	argv[4] = parent;
	argv[5] = NULL;
	/* Each may allocate: a helper without its socket is not started. */
	rc = posix_spawn_file_actions_init(&fa);
	if (rc == 0)
		rc = posix_spawn_file_actions_adddup2(&fa, sv[1], HELPER_FD);
	if (rc == 0)
		rc = posix_spawn_file_actions_addopen(&fa, 0, "/dev/null",
		    O_RDONLY, 0);
	if (rc == 0)
		rc = posix_spawn_file_actions_addopen(&fa, 1, "/dev/null",
		    O_WRONLY, 0);
	posix_spawnattr_init(&at);
	sigemptyset(&none);
	sigfillset(&all);
	posix_spawnattr_setsigmask(&at, &none);
	posix_spawnattr_setsigdefault(&at, &all);
	posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
	/*
	 * Nothing of the host's environment but where it keeps temporary
	 * files (the helper makes its jobs' private tmps there), and, in a
	 * build for the tests only, whether it must run every job under a
	 * shepherd (CONFINE_SHEPHERD=1) and without namespaces
	 * (CONFINE_NO_NAMESPACES=1), and its pool of prepared inits' ceiling
	 * and idle time (CONFINE_PREPARED, CONFINE_PREPARED_IDLE_MS: a number).
	 */
#ifdef CONFINE_TEST_SWITCHES
	static const struct {
		const char *name;
		bool number;
	} switches[] = { { "CONFINE_SHEPHERD", false },
		{ "CONFINE_NO_NAMESPACES", false }, { "CONFINE_PREPARED", true },
		{ "CONFINE_PREPARED_IDLE_MS", true } };
	const char *on;
#endif
	if (tmpdir != NULL && tmpdir[0] == '/' &&
	    asprintf(&envp[ne++], "TMPDIR=%s", tmpdir) < 0) {
		envp[--ne] = NULL;
		rc = ENOMEM;
	}
#ifdef CONFINE_TEST_SWITCHES
	for (i = 0; rc == 0 && i < sizeof(switches) / sizeof(switches[0]); i++) {
		on = getenv(switches[i].name);
		if (on == NULL || (switches[i].number ? on[0] == '\0' ||
		    strspn(on, "0123456789") != strlen(on) || strlen(on) > 9 :
		    strcmp(on, "1") != 0))
			continue;
		if (asprintf(&envp[ne++], "%s=%s", switches[i].name, on) < 0) {
			envp[--ne] = NULL;
			rc = ENOMEM;
		}
	}
#endif
	if (rc == 0)
		rc = posix_spawn(pid, path, &fa, &at, argv, envp);
	for (i = 0; i < sizeof(envp) / sizeof(envp[0]); i++)
		free(envp[i]);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&at);
	close(sv[1]);
	if (rc != 0) {
		close(sv[0]);
		return bail(rc, "posix_spawn %s: %s", path, strerror(rc));
	}
	*fd = sv[0];
	return 0;
}

int
launch_embedded(const char *path, pid_t *pid, int *fd)
{
#ifdef __linux__
	char image[IMAGE_PATH_LEN];
	int rc, ifd;

	(void)path;
	if ((rc = image_open(image, &ifd)) != 0)
		return bail(-rc, "the library's own helper cannot be run from "
		    "memory: %s", strerror(-rc));
	rc = launch_spawn(image, pid, fd);
	close(ifd);
	return rc;
#else
	if (path == NULL)
		return bail(ENOENT, "no helper binary (options, $CONFINE_HELPER, "
		    "%s)", CONFINE_HELPER_DEFAULT);
	return launch_spawn(path, pid, fd);
#endif
}

int
launch_connect(const char *socket_path, int *fd)
{
	struct sockaddr_un sun;
	int s, rc;

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	if (socket_path == NULL || strlen(socket_path) >= sizeof(sun.sun_path))
		return bail(EINVAL, "socket path missing or too long");
	strcpy(sun.sun_path, socket_path);
	s = fd_socket(AF_UNIX, SOCK_STREAM);
	if (s < 0)
		return bail(-s, "socket: %s", strerror(-s));
	if (connect(s, (struct sockaddr *)&sun, sizeof(sun)) != 0) {
		rc = errno;
		close(s);
		return bail(rc, "connect %s: %s", socket_path, strerror(rc));
	}
	*fd = s;
	return 0;
}
