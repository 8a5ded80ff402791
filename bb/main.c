/*
 * confine-bb-runner: Buildbarn's runner, every action a confine job.
 *
 *   confine-bb-runner --listen SOCKET --build-directory DIR [OPTIONS]
 *
 * Serves bb-remote-execution's Runner service (bb/proto/runner.proto) on a
 * unix socket for bb_worker, in place of bb_runner. The manual is
 * docs/man/confine-bb-runner.8; docs/remote-execution.md says how to
 * deploy it and what it confines.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <confine/confine.h>

#include "bb/runner.h"
#include "bb/server.h"
#include "tools/cli.h"

#define NAME "confine-bb-runner"

static const char usage_text[] =
    "usage: " NAME " --listen SOCKET --build-directory DIR [OPTIONS]\n"
    "\n"
    "Serves Buildbarn's Runner service on the unix socket SOCKET for\n"
    "bb_worker: each Run is one confine job, confined to the action's own\n"
    "directory beneath DIR, and answered once it has settled.\n"
    "\n"
    "      --listen SOCKET        the unix socket (at most 107 bytes)\n"
    "      --build-directory DIR  bb_worker's build directory\n"
    "      --mode OCTAL           the socket's mode (0600)\n"
    "      --concurrency N        run at most N actions at once; more wait\n"
    "                             for a slot (default: no bound)\n"
    "      --deadline-margin DUR  end an action this much before its call's\n"
    "                             deadline, at most half its time (1s)\n"
    "      --grace DUR            SIGTERM this long before SIGKILL (0ms)\n"
    "      --read PATH            narrow reads: the action may read its own\n"
    "                             directory and PATH (repeatable)\n"
    "      --read-system          narrow reads, and let it read what\n"
    "                             programs need to start: /usr, /lib*, ...\n"
    "      --no-tmp               no private /tmp: the host's, read-only\n"
    "      --device PATH          let it write this device node (repeatable)\n"
    "      --cpu DUR  --memory SIZE  --address-space SIZE  --file-size SIZE\n"
    "      --open-files N  --processes N   bound each action\n"
    "      --backend NAME         auto, landlock or none (auto)\n"
    "      --helper PATH          run this confine-helper (default: the one\n"
    "                             the library carries)\n"
    "      --connect SOCKET       use the confine-helper listening there\n"
    "      --spawn-timeout DUR    a helper silent this long is lost (30s)\n"
    "      --quiet                no line on stderr per action not answered OK\n"
    "  -h, --help                 print this and exit\n"
    "      --version              print the version and exit\n"
    "\n"
    "SIGINT, SIGTERM and SIGHUP stop it: every action in flight is\n"
    "cancelled and answered once it has settled.\n";

enum {
	OPT_LISTEN = 256,
	OPT_BUILD,
	OPT_MODE,
	OPT_CONCURRENCY,
	OPT_MARGIN,
	OPT_GRACE,
	OPT_READ,
	OPT_READ_SYSTEM,
	OPT_NO_TMP,
	OPT_DEVICE,
	OPT_CPU,
	OPT_MEMORY,
	OPT_AS,
	OPT_FSIZE,
	OPT_NOFILE,
	OPT_NPROC,
	OPT_BACKEND,
	OPT_HELPER,
	OPT_CONNECT,
	OPT_SPAWN_TIMEOUT,
	OPT_QUIET,
	OPT_VERSION,
};

static const struct option longopts[] = {
	{ "listen", required_argument, NULL, OPT_LISTEN },
	{ "build-directory", required_argument, NULL, OPT_BUILD },
	{ "mode", required_argument, NULL, OPT_MODE },
	{ "concurrency", required_argument, NULL, OPT_CONCURRENCY },
	{ "deadline-margin", required_argument, NULL, OPT_MARGIN },
	{ "grace", required_argument, NULL, OPT_GRACE },
	{ "read", required_argument, NULL, OPT_READ },
	{ "read-system", no_argument, NULL, OPT_READ_SYSTEM },
	{ "no-tmp", no_argument, NULL, OPT_NO_TMP },
	{ "device", required_argument, NULL, OPT_DEVICE },
	{ "cpu", required_argument, NULL, OPT_CPU },
	{ "memory", required_argument, NULL, OPT_MEMORY },
	{ "address-space", required_argument, NULL, OPT_AS },
	{ "file-size", required_argument, NULL, OPT_FSIZE },
	{ "open-files", required_argument, NULL, OPT_NOFILE },
	{ "processes", required_argument, NULL, OPT_NPROC },
	{ "backend", required_argument, NULL, OPT_BACKEND },
	{ "helper", required_argument, NULL, OPT_HELPER },
	{ "connect", required_argument, NULL, OPT_CONNECT },
	{ "spawn-timeout", required_argument, NULL, OPT_SPAWN_TIMEOUT },
	{ "quiet", no_argument, NULL, OPT_QUIET },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, OPT_VERSION },
	{ NULL, 0, NULL, 0 },
};

struct opts {
	const char *listen;
	unsigned mode;
	struct bbrun_config cfg;
	const char **reads;     /* NULL-terminated */
	size_t nreads;
	const char **devices;   /* NULL-terminated */
	size_t ndevices;
};

static _Noreturn void
vexit(int status, const char *fmt, va_list ap)
{
	fputs(NAME ": ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	exit(status);
}

/* Bad usage: exit 2. */
static _Noreturn void __attribute__((format(printf, 1, 2)))
die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vexit(2, fmt, ap);
}

/* It cannot serve: exit 1. */
static _Noreturn void __attribute__((format(printf, 1, 2)))
fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vexit(1, fmt, ap);
}

static int64_t
duration(const char *flag, const char *arg)
{
	const char *why;
	int64_t ms;

	if (strcmp(arg, "0") == 0)
		return 0;
	if (cli_duration(arg, &ms, &why) != 0)
		die("%s %s: %s", flag, arg, why);
	return ms;
}

static enum confine_backend
backend(const char *name)
{
	static const enum confine_backend all[] = {
		CONFINE_BACKEND_AUTO, CONFINE_BACKEND_LANDLOCK,
		CONFINE_BACKEND_NONE,
	};
	size_t i;

	for (i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		if (strcmp(name, confine_backend_name(all[i])) == 0)
			return all[i];
	die("unknown backend %s (auto, landlock or none)", name);
}

static void
parse(int argc, char **argv, struct opts *o)
{
	struct bbrun_config *c = &o->cfg;
	const char *why;
	char *end;
	int64_t n;
	long v;
	int ch, idx = 0;

	memset(o, 0, sizeof(*o));
	o->mode = 0600;
	c->margin_ms = 1000;
	c->backend = CONFINE_BACKEND_AUTO;
	c->options.mode = CONFINE_MODE_AUTO;
	/* Each --read or --device is an argument: argc bounds them. */
	o->reads = calloc((size_t)argc + 1, sizeof(*o->reads));
	o->devices = calloc((size_t)argc + 1, sizeof(*o->devices));
	if (o->reads == NULL || o->devices == NULL)
		die("out of memory");
	opterr = 0;
	while ((ch = getopt_long(argc, argv, ":h", longopts, &idx)) != -1) {
		switch (ch) {
		case OPT_LISTEN:
			o->listen = optarg;
			break;
		case OPT_BUILD:
			c->build_dir = optarg;
			break;
		case OPT_MODE:
			errno = 0;
			v = strtol(optarg, &end, 8);
			if (errno != 0 || *end != '\0' || end == optarg || v < 0 ||
			    v > 0777)
				die("--mode %s: not an octal mode", optarg);
			o->mode = (unsigned)v;
			break;
		case OPT_CONCURRENCY:
			if (cli_count(optarg, &n, &why) != 0 || n > 100000)
				die("--concurrency %s: %s", optarg,
				    why ? why : "more than 100000");
			c->concurrency = (int)n;
			break;
		case OPT_MARGIN:
			c->margin_ms = duration("--deadline-margin", optarg);
			break;
		case OPT_GRACE:
			c->grace_ms = duration("--grace", optarg);
			break;
		case OPT_READ:
			o->reads[o->nreads++] = optarg;
			break;
		case OPT_READ_SYSTEM:
			c->flags |= CONFINE_READ_SYSTEM;
			break;
		case OPT_NO_TMP:
			c->flags |= CONFINE_NO_TMP;
			break;
		case OPT_DEVICE:
			o->devices[o->ndevices++] = optarg;
			break;
		case OPT_CPU:
		case OPT_MEMORY:
		case OPT_AS:
		case OPT_FSIZE:
		case OPT_NOFILE:
		case OPT_NPROC:
			if (cli_bound(longopts[idx].name, optarg, &c->limits,
			    &why) != 0)
				die("--%s %s: %s", longopts[idx].name, optarg, why);
			break;
		case OPT_BACKEND:
			c->backend = backend(optarg);
			break;
		case OPT_HELPER:
			c->options.mode = CONFINE_MODE_EXEC;
			c->options.helper_path = optarg;
			break;
		case OPT_CONNECT:
			c->options.mode = CONFINE_MODE_CONNECT;
			c->options.socket_path = optarg;
			break;
		case OPT_SPAWN_TIMEOUT:
			c->options.spawn_timeout_ms = (int)duration("--spawn-timeout",
			    optarg);
			break;
		case OPT_QUIET:
			c->quiet = 1;
			break;
		case 'h':
			fputs(usage_text, stdout);
			exit(fflush(stdout) == 0 ? 0 : 2);
		case OPT_VERSION:
			printf(NAME " %s\n", CONFINE_VERSION);
			exit(fflush(stdout) == 0 ? 0 : 2);
		case ':':
			die("%s needs a value (see " NAME " --help)",
			    argv[optind - 1]);
		default:
			die("unknown option %s (see " NAME " --help)",
			    argv[optind - 1]);
		}
	}
	if (optind < argc)
		die("unexpected argument %s (see " NAME " --help)", argv[optind]);
	if (o->listen == NULL || c->build_dir == NULL)
		die("--listen SOCKET and --build-directory DIR are required");
	if (c->options.helper_path != NULL && c->options.socket_path != NULL)
		die("--helper and --connect exclude each other");
	/* --read-system alone narrows too: an empty list, not NULL. */
	if (o->nreads > 0 || (c->flags & CONFINE_READ_SYSTEM))
		c->readable = o->reads;
	if (o->ndevices > 0)
		c->devices = o->devices;
	if (c->options.spawn_timeout_ms == 0)
		c->options.spawn_timeout_ms = 30000;
}

/*
 * The socket's path is ours: free, or a stale socket nobody answers on,
 * which is removed. A live one, or anything else there, is not touched
 * (gRPC would replace a socket in use).
 */
static void
claim_socket(const char *path)
{
	struct sockaddr_un sun;
	struct stat st;
	int fd, live;

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sun.sun_path))
		fail("socket path too long (at most %zu bytes): %s",
		    sizeof(sun.sun_path) - 1, path);
	strcpy(sun.sun_path, path);
	if (lstat(path, &st) != 0)
		return;
	if (!S_ISSOCK(st.st_mode))
		fail("%s exists and is not a socket", path);
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0)
		fail("socket: %s", strerror(errno));
	live = connect(fd, (struct sockaddr *)&sun, sizeof(sun)) == 0;
	close(fd);
	if (live)
		fail("%s: something already listens there", path);
	if (unlink(path) != 0)
		fail("unlink %s: %s", path, strerror(errno));
}

int
main(int argc, char **argv)
{
	struct bbserve *s;
	struct bbrun *r;
	struct opts o;
	sigset_t stop;
	char why[512];
	int sig;

	parse(argc, argv, &o);
	/*
	 * Held in every thread, gRPC's included, and taken by sigwait below;
	 * the helper started now inherits them held, as confine-run's does.
	 */
	sigemptyset(&stop);
	sigaddset(&stop, SIGINT);
	sigaddset(&stop, SIGTERM);
	sigaddset(&stop, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &stop, NULL);
	signal(SIGPIPE, SIG_IGN);

	claim_socket(o.listen);
	if (bbrun_open(&r, &o.cfg, why, sizeof(why)) != 0)
		fail("%s", why);
	if (bbserve_start(&s, r, o.listen, o.mode, why, sizeof(why)) != 0) {
		bbrun_close(r);
		fail("%s", why);
	}
	if (!o.cfg.quiet)
		fprintf(stderr, NAME "[%ld]: serving %s for %s (concurrency %d, "
		    "helper pid %ld)\n", (long)getpid(), o.listen,
		    o.cfg.build_dir, o.cfg.concurrency, (long)bbrun_helper_pid(r));
	while (sigwait(&stop, &sig) != 0)
		;
	if (!o.cfg.quiet)
		fprintf(stderr, NAME "[%ld]: SIG%s: cancelling what runs, then "
		    "stopping\n", (long)getpid(), sigabbrev_np(sig));
	bbserve_stop(s);
	bbrun_close(r);
	(void)unlink(o.listen);
	if (!o.cfg.quiet)
		fprintf(stderr, NAME "[%ld]: stopped\n", (long)getpid());
	free(o.reads);
	free(o.devices);
	return 0;
}
