/*
 * confine-helper: the standalone helper (usage() says how to run it).
 * Each job runs with the credentials of the client that asked for it,
 * never with the helper's (helper/backend/ident.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "confine/confine.h"
#include "helper/serve.h"
#include "src/core/fd.h"

extern char **environ;

/* libbsd gives Linux the BSDs' setproctitle(); macOS has none, and a title
 * is only a courtesy to ps(1): there the helper keeps its own. */
#ifdef __APPLE__
#define setproctitle_init(argc, argv, envp) ((void)0)
#define setproctitle(...) ((void)0)
#endif

static _Noreturn void
usage(int status)
{
	fprintf(status ? stderr : stdout,
	    "usage: confine-helper --fd N [--parent PID] [--prepared N] [--poll]\n"
	    "       confine-helper --listen PATH [--mode OCTAL] [--allow-uid UID]...\n"
	    "                      [--prepared N] [--quiet] [--poll]\n"
	    "\n"
	    "Runs confined jobs for hosts that use the confine library. Each job\n"
	    "runs as the user who asked for it, never as the helper: a helper run\n"
	    "as root switches each job to its client's uid, gid and groups and\n"
	    "checks every path of the spec as that client; any other helper serves\n"
	    "only its own uid.\n"
	    "\n"
	    "  --fd N           serve the connection inherited on descriptor N (the\n"
	    "                   library's exec mode); exit when it closes\n"
	    "  --parent PID     with --fd: exit too once PID is no longer our parent\n"
	    "  --listen PATH    serve every client that connects to the unix socket\n"
	    "                   PATH, until SIGTERM or SIGINT\n"
	    "  --mode OCTAL     with --listen: the socket's mode (default 0600)\n"
	    "  --allow-uid UID  with --listen: serve UID too, besides our own uid\n"
	    "                   (up to 16 times); a root helper runs its jobs as UID\n"
	    "  --quiet          with --listen: no log; by default one line on stderr\n"
	    "                   for the start, each client admitted or refused, each\n"
	    "                   request refused and why, and the stop\n"
	    "  --prepared N     keep at most N jobs' inits made before their\n"
	    "                   requests, in their namespaces, as demand asks\n"
	    "                   (default 4, at most 16; 0: none); all are dropped\n"
	    "                   after 2 s without a job (Linux)\n"
	    "  --poll           poll(2) where epoll would be used\n"
	    "  --help           this text\n"
	    "  --version        the version\n");
	exit(status);
}

static long
number(const char *s, int base, long max, const char *what)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, base);
	if (errno != 0 || *s == '\0' || *end != '\0' || v < 0 || v > max) {
		fprintf(stderr, "confine-helper: bad %s: %s\n", what, s);
		exit(2);
	}
	return v;
}

/* A unix socket at path, replacing only a stale socket nobody answers on. */
static int
listen_on(const char *path, mode_t mode)
{
	struct sockaddr_un sun;
	struct stat st;
	mode_t old;
	int fd, probe;

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sun.sun_path)) {
		fprintf(stderr, "confine-helper: socket path too long: %s\n", path);
		return -1;
	}
	strcpy(sun.sun_path, path);
	if (lstat(path, &st) == 0) {
		if (!S_ISSOCK(st.st_mode)) {
			fprintf(stderr, "confine-helper: %s exists and is not a socket\n", path);
			return -1;
		}
		probe = fd_socket(AF_UNIX, SOCK_STREAM);
		if (probe >= 0 && connect(probe, (struct sockaddr *)&sun,
		    sizeof(sun)) == 0) {
			fprintf(stderr, "confine-helper: %s: a helper already listens there\n", path);
			close(probe);
			return -1;
		}
		if (probe >= 0)
			close(probe);
		unlink(path);
	}
	fd = fd_socket(AF_UNIX, SOCK_STREAM);
	if (fd < 0) {
		fprintf(stderr, "confine-helper: socket: %s\n", strerror(-fd));
		return -1;
	}
	/* Born with its mode: never reachable by more than asked, even briefly. */
	old = umask(~mode & 0777);
	if (bind(fd, (struct sockaddr *)&sun, sizeof(sun)) != 0) {
		umask(old);
		fprintf(stderr, "confine-helper: bind %s: %s\n", path, strerror(errno));
		close(fd);
		return -1;
	}
	umask(old);
	if (listen(fd, 128) != 0) {
		fprintf(stderr, "confine-helper: %s: %s\n", path, strerror(errno));
		close(fd);
		unlink(path);
		return -1;
	}
	return fd;
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "fd", required_argument, NULL, 'f' },
		{ "parent", required_argument, NULL, 'p' },
		{ "listen", required_argument, NULL, 'l' },
		{ "mode", required_argument, NULL, 'm' },
		{ "allow-uid", required_argument, NULL, 'u' },
		{ "poll", no_argument, NULL, 'P' },
		{ "prepared", required_argument, NULL, 'n' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	struct serve_opts o;
	char *path = NULL, logline[256];
	mode_t mode = 0600;
	bool quiet = false;
	size_t i, n;
	sigset_t held;
	int ch, rc;

	/* Held until serve() has its handlers: SIGTERM must never kill us
	 * with the socket still in place. */
	sigemptyset(&held);
	sigaddset(&held, SIGTERM);
	sigaddset(&held, SIGINT);
	sigaddset(&held, SIGHUP);
	sigprocmask(SIG_BLOCK, &held, NULL);
	memset(&o, 0, sizeof(o));
	o.fd = -1;
	o.listen_fd = -1;
	o.prepared = SERVE_PREPARED_DEFAULT;
	while ((ch = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (ch) {
		case 'f':
			o.fd = (int)number(optarg, 10, INT_MAX, "descriptor");
			break;
		case 'p':
			o.parent = (pid_t)number(optarg, 10, INT_MAX, "pid");
			break;
		case 'l':
			/* A copy: setproctitle() reuses argv's memory. */
			free(path);
			path = strdup(optarg);
			if (path == NULL) {
				fprintf(stderr, "confine-helper: %s\n",
				    strerror(ENOMEM));
				return 1;
			}
			break;
		case 'm':
			mode = (mode_t)number(optarg, 8, 0777, "mode");
			break;
		case 'u':
			if (o.nallow == SERVE_MAX_ALLOW) {
				fprintf(stderr, "confine-helper: at most %d --allow-uid\n",
				    SERVE_MAX_ALLOW);
				return 2;
			}
			o.allow[o.nallow++] = (uid_t)number(optarg, 10, INT_MAX, "uid");
			break;
		case 'n':
			o.prepared = (size_t)number(optarg, 10,
			    SERVE_PREPARED_MAX, "count");
			break;
		case 'P':
			o.force_poll = true;
			break;
		case 'q':
			quiet = true;
			break;
		case 'h':
			usage(0);
		case 'V':
			printf("confine-helper %s\n", CONFINE_VERSION);
			return 0;
		default:
			usage(2);
		}
	}
	if (optind != argc || (o.fd < 0) == (path == NULL))
		usage(2);
	setproctitle_init(argc, argv, environ);
	if (path != NULL) {
		o.listen_fd = listen_on(path, mode);
		if (o.listen_fd < 0)
			return 1;
		setproctitle("listening on %s", path);
		n = (size_t)snprintf(logline, sizeof(logline),
		    "listening on %s, mode %04o, serving uid %ld", path,
		    (unsigned)mode, (long)geteuid());
		for (i = 0; i < o.nallow && n < sizeof(logline); i++)
			n += (size_t)snprintf(logline + n, sizeof(logline) - n,
			    " and %ld", (long)o.allow[i]);
		if (!quiet)
			o.log = logline;
	} else {
		if (fcntl(o.fd, F_GETFD) < 0) {
			fprintf(stderr, "confine-helper: descriptor %d is not open\n", o.fd);
			return 2;
		}
		/* Out of the host's session: its terminal's signals are not ours. */
		(void)setsid();
		setproctitle("serving fd %d", o.fd);
	}
	rc = serve(&o);
	if (path != NULL)
		unlink(path);
	free(path);
	return rc;
}
