/*
 * confine-run: runs one program confined and exits with how it settled.
 *
 *   confine-run [OPTIONS] [--] EXE [ARG...]
 *
 * One job, its stdio our own. By default this process is the job's helper
 * itself (helper/engine/local.h: the helper's own job code, run here, with one
 * init prepared while the start goes on); with --helper or $CONFINE_SOCKET
 * it is a client of <confine/confine.h> instead, of that helper. The pure
 * parts (durations, exit statuses, the summary, the JSON) are in cli.c;
 * the manual is docs/man/confine-run.1.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <confine/confine.h>

#include "helper/engine/local.h"
#include "src/core/sigpipe.h"
#include "tools/cli.h"

static const char usage_text[] =
    "usage: confine-run [OPTIONS] [--] EXE [ARG...]\n"
    "\n"
    "Runs EXE confined, in its own process group, with confine-run's stdin,\n"
    "stdout and stderr, a private /tmp, and an environment of its own:\n"
    "PATH=" CLI_DEFAULT_PATH ", HOME=its scratch root, TMPDIR=its\n"
    "private tmp, never confine-run's unless passed; and exits with how it\n"
    "settled: 0 completed; N its exit code N; 128+N killed by signal N;\n"
    "126 it could not start (127: no such program); 124 cancelled;\n"
    "123 uncertain; 125 refused, bad usage or confine-run's own failure.\n"
    "\n"
    "  -s, --scratch DIR     the only tree the job may write (absolute;\n"
    "                        required unless --backend none)\n"
    "  -C, --cwd DIR         its working directory (default: scratch root)\n"
    "  -t, --deadline DUR    cancel it after DUR: 250ms, 10s, 2m, 1h\n"
    "      --grace DUR       SIGTERM this long before SIGKILL, to cancel\n"
    "  -e, --env NAME=VALUE  set NAME in its environment (repeatable)\n"
    "      --pass-env NAME   pass our own NAME, if set (repeatable)\n"
    "      --empty-env       no PATH, HOME or TMPDIR of ours: only -e and\n"
    "                        --pass-env\n"
    "      --no-tmp          no private tmp: the host's /tmp, read-only\n"
    "      --device PATH     let it write to this device node (repeatable)\n"
    "      --read PATH       narrow its reads: it may read (and run programs\n"
    "                        from) PATH, its scratch root, its tmp and\n"
    "                        /dev/null, and nothing else (repeatable)\n"
    "      --read-system     narrow its reads, and let it read what programs\n"
    "                        need to start: /usr, /lib*, parts of /etc, /proc\n"
    "      --fresh-scratch   make a fresh root beneath --scratch for the job,\n"
    "                        removed once it settled, kept if uncertain\n"
    "      --cpu DUR         bound its CPU time (whole seconds): SIGXCPU\n"
    "      --memory SIZE     bound its memory (needs a memory cgroup)\n"
    "      --address-space SIZE  --file-size SIZE  --open-files N\n"
    "      --processes N     bound those too (SIZE: 4096, 512K, 64M, 2G)\n"
    "      --backend NAME    auto, landlock, seatbelt or none (default: auto)\n"
    "      --require WHAT    refuse the job unless WHAT is in force:\n"
    "                        namespaces, landlock (repeatable)\n"
    "      --waive metadata  where no namespace can be made (a container,\n"
    "                        user namespaces disabled), run without a\n"
    "                        read-only view: metadata of files outside\n"
    "                        that the job's user owns may change\n"
    "      --helper PATH     run the job through this confine-helper\n"
    "                        (default: confine-run is the job's helper)\n"
    "      --connect SOCKET  use the confine-helper listening on SOCKET\n"
    "                        (default: $CONFINE_SOCKET, if set)\n"
    "      --result FILE     write the settlement as JSON to FILE\n"
    "                        (-: to stdout, after the job's own output)\n"
    "  -v, --verbose         say how it settled even when it completed\n"
    "  -h, --help            print this and exit\n"
    "      --version         print the version and exit\n"
    "\n"
    "SIGINT, SIGTERM and SIGHUP cancel the job; confine-run exits once it\n"
    "has settled.\n";

enum {
	OPT_GRACE = 256,
	OPT_PASS_ENV,
	OPT_DEVICE,
	OPT_BACKEND,
	OPT_HELPER,
	OPT_CONNECT,
	OPT_RESULT,
	OPT_VERSION,
	OPT_EMPTY_ENV,
	OPT_NO_TMP,
	OPT_FRESH,
	OPT_CPU,
	OPT_MEMORY,
	OPT_AS,
	OPT_FSIZE,
	OPT_NOFILE,
	OPT_NPROC,
	OPT_READ,
	OPT_READ_SYSTEM,
	OPT_REQUIRE,
	OPT_WAIVE,
};

/* '+': the first operand is the program; its options are its own. */
static const char shortopts[] = "+:s:C:t:e:vh";

static const struct option longopts[] = {
	{ "scratch", required_argument, NULL, 's' },
	{ "cwd", required_argument, NULL, 'C' },
	{ "deadline", required_argument, NULL, 't' },
	{ "grace", required_argument, NULL, OPT_GRACE },
	{ "env", required_argument, NULL, 'e' },
	{ "pass-env", required_argument, NULL, OPT_PASS_ENV },
	{ "device", required_argument, NULL, OPT_DEVICE },
	{ "backend", required_argument, NULL, OPT_BACKEND },
	{ "helper", required_argument, NULL, OPT_HELPER },
	{ "connect", required_argument, NULL, OPT_CONNECT },
	{ "result", required_argument, NULL, OPT_RESULT },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, OPT_VERSION },
	{ "fresh-scratch", no_argument, NULL, OPT_FRESH },
	{ "cpu", required_argument, NULL, OPT_CPU },
	{ "memory", required_argument, NULL, OPT_MEMORY },
	{ "address-space", required_argument, NULL, OPT_AS },
	{ "file-size", required_argument, NULL, OPT_FSIZE },
	{ "open-files", required_argument, NULL, OPT_NOFILE },
	{ "processes", required_argument, NULL, OPT_NPROC },
	{ "empty-env", no_argument, NULL, OPT_EMPTY_ENV },
	{ "no-tmp", no_argument, NULL, OPT_NO_TMP },
	{ "read", required_argument, NULL, OPT_READ },
	{ "read-system", no_argument, NULL, OPT_READ_SYSTEM },
	{ "require", required_argument, NULL, OPT_REQUIRE },
	{ "waive", required_argument, NULL, OPT_WAIVE },
	{ NULL, 0, NULL, 0 },
};

struct opts {
	const char *scratch, *cwd, *helper, *socket, *result;
	const char *deadline;        /* as given, for the summary */
	int64_t deadline_ms, grace_ms;
	enum confine_backend backend;
	struct confine_limits limits;
	unsigned flags;
	int verbose;
	int empty_env;
	char **env;                  /* NAME=VALUE, allocated, NULL-terminated */
	size_t nenv;
	const char **devices;        /* NULL-terminated */
	size_t ndevices;
	const char **reads;          /* NULL-terminated */
	size_t nreads;
	struct cli_reads read;       /* what was asked, for -v and --result */
	char *exe;                   /* absolute */
	int unfound;                 /* no program of that name along PATH:
	                                exe is what exec is to fail on */
	int relative;                /* EXE was given as a relative path */
	char **argv;                 /* the job's, from EXE on */
};

static int sigfd = -1;            /* the self-pipe (src/core/sigpipe.h) */
static sigset_t caught;          /* the signals that cancel the job */

/* --result's FILE once it is open: a refusal is written there too. */
static FILE *result_file;

/*
 * Nothing ran: why, on stderr, and as the one JSON line of --result's
 * FILE, shaped like no settlement: {"refused": {...}}. ref names the layer
 * that could not be applied and its call, or is NULL (bad usage, a bad
 * spec): then the errno is the refusal's own.
 */
static void
say_refused(const char *prefix, const char *message, int err,
    const struct confine_refusal *ref)
{
	fprintf(stderr, "confine-run: %s%s\n", prefix, message);
	if (result_file == NULL)
		return;
	cli_json_refused(result_file, message, ref != NULL ? ref->error : err,
	    ref != NULL ? ref->layer : NULL, ref != NULL ? ref->call : NULL,
	    ref != NULL ? ref->hint : NULL);
	if (result_file != stdout)
		fclose(result_file);
	result_file = NULL;
}

static _Noreturn void __attribute__((format(printf, 1, 2)))
die(const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	say_refused("", msg, 0, NULL);
	exit(CLI_EXIT_USAGE);
}

static void *
xmalloc(size_t n)
{
	void *p = malloc(n);

	if (p == NULL)
		die("out of memory");
	return p;
}

static char *
xstrdup(const char *s)
{
	char *p = strdup(s);

	if (p == NULL)
		die("out of memory");
	return p;
}

static int64_t
duration(const char *flag, const char *arg)
{
	const char *why;
	int64_t ms;

	if (cli_duration(arg, &ms, &why) != 0)
		die("%s %s: %s", flag, arg, why);
	return ms;
}

/* Sets NAME=VALUE (allocated, now ours), replacing an earlier NAME. */
static void
set_env(struct opts *o, char *entry)
{
	size_t i, n = strcspn(entry, "=");

	for (i = 0; i < o->nenv; i++)
		if (strncmp(o->env[i], entry, n + 1) == 0) {
			free(o->env[i]);
			o->env[i] = entry;
			return;
		}
	o->env[o->nenv++] = entry;
	o->env[o->nenv] = NULL;
}

static int
has_env(const struct opts *o, const char *name)
{
	size_t i, n = strlen(name);

	for (i = 0; i < o->nenv; i++)
		if (strncmp(o->env[i], name, n) == 0 && o->env[i][n] == '=')
			return 1;
	return 0;
}

static void
pass_env(struct opts *o, const char *name)
{
	const char *value;
	char *entry;
	size_t n;

	if (*name == '\0' || strchr(name, '=') != NULL)
		die("--pass-env %s: not a variable name", name);
	if ((value = getenv(name)) == NULL)
		return;
	n = strlen(name) + strlen(value) + 2;
	entry = xmalloc(n);
	snprintf(entry, n, "%s=%s", name, value);
	set_env(o, entry);
}

static enum confine_backend
backend(const char *name)
{
	static const enum confine_backend all[] = {
		CONFINE_BACKEND_AUTO, CONFINE_BACKEND_LANDLOCK,
		CONFINE_BACKEND_SEATBELT, CONFINE_BACKEND_NONE,
	};
	size_t i;

	for (i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		if (strcmp(name, confine_backend_name(all[i])) == 0)
			return all[i];
	die("unknown backend %s (auto, landlock, seatbelt or none)", name);
}

/* --require's word: its spec flag. */
static unsigned
requirement(const char *name)
{
	if (strcmp(name, "namespaces") == 0)
		return CONFINE_REQUIRE_NAMESPACES;
	if (strcmp(name, "landlock") == 0)
		return CONFINE_REQUIRE_LANDLOCK;
	die("unknown requirement %s (namespaces or landlock)", name);
}

/* path made absolute against the working directory, allocated. */
static char *
absolute(const char *path)
{
	char cwd[PATH_MAX], *p;
	size_t n;

	if (path[0] == '/')
		return xstrdup(path);
	if (getcwd(cwd, sizeof(cwd)) == NULL)
		die("getcwd: %s", strerror(errno));
	n = strlen(cwd) + strlen(path) + 2;
	p = xmalloc(n);
	snprintf(p, n, "%s/%s", cwd, path);
	return p;
}

/*
 * The program as execvp finds it: a name with a slash from the working
 * directory, else the first executable file of that name along our PATH.
 * Not found, *unfound says so and it is, as execvp would report, the first
 * candidate that exists (exec fails with EACCES: 126), else the first that
 * does not (ENOENT: 127): the job fails to exec it with the settlement of a
 * program named by its path.
 */
static char *
find_exe(const char *name, int *unfound)
{
	const char *path = getenv("PATH"), *p, *end;
	char *cand, *abs, *found = NULL, *missing = NULL;
	struct stat st;
	size_t n;

	*unfound = 0;
	if (strchr(name, '/') != NULL)
		return absolute(name);
	if (path == NULL)
		path = "/usr/bin:/bin";
	for (p = path;; p = end + 1) {
		end = strchr(p, ':');
		if (end == NULL)
			end = p + strlen(p);
		n = (size_t)(end - p) + strlen(name) + 3;
		cand = xmalloc(n);
		/* An empty entry is the working directory, as for execvp. */
		snprintf(cand, n, "%.*s/%s", end > p ? (int)(end - p) : 1,
		    end > p ? p : ".", name);
		abs = absolute(cand);
		free(cand);
		if (stat(abs, &st) != 0) {
			if (missing == NULL)
				missing = abs;
			else
				free(abs);
		} else if (S_ISREG(st.st_mode) && access(abs, X_OK) == 0) {
			free(found);
			free(missing);
			return abs;
		} else if (found == NULL) {
			found = abs;
		} else {
			free(abs);
		}
		if (*end == '\0')
			break;
	}
	*unfound = 1;
	if (found == NULL)
		return missing;
	free(missing);
	return found;
}

static void
parse(int argc, char **argv, struct opts *o)
{
	const char *why;
	int ch, idx = 0;

	memset(o, 0, sizeof(*o));
	o->backend = CONFINE_BACKEND_AUTO;
	/* Each -e, --pass-env, --device or --read is an argument: argc bounds
	 * them (and argc may be 0, from an execve with an empty argv). */
	o->env = xmalloc(sizeof(*o->env) * ((size_t)argc + 1));
	o->devices = xmalloc(sizeof(*o->devices) * ((size_t)argc + 1));
	o->reads = xmalloc(sizeof(*o->reads) * ((size_t)argc + 1));
	o->env[0] = NULL;
	o->devices[0] = NULL;
	o->reads[0] = NULL;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, shortopts, longopts, &idx)) != -1) {
		switch (ch) {
		case 's':
			o->scratch = optarg;
			break;
		case 'C':
			o->cwd = optarg;
			break;
		case 't':
			o->deadline = optarg;
			o->deadline_ms = duration("--deadline", optarg);
			break;
		case OPT_GRACE:
			o->grace_ms = duration("--grace", optarg);
			break;
		case 'e':
			if (strchr(optarg, '=') == NULL || optarg[0] == '=')
				die("--env %s: not NAME=VALUE", optarg);
			set_env(o, xstrdup(optarg));
			break;
		case OPT_PASS_ENV:
			pass_env(o, optarg);
			break;
		case OPT_DEVICE:
			o->devices[o->ndevices++] = optarg;
			o->devices[o->ndevices] = NULL;
			break;
		case OPT_READ:
			o->reads[o->nreads++] = optarg;
			o->reads[o->nreads] = NULL;
			break;
		case OPT_READ_SYSTEM:
			o->flags |= CONFINE_READ_SYSTEM;
			break;
		case OPT_REQUIRE:
			o->flags |= requirement(optarg);
			break;
		case OPT_WAIVE:
			if (strcmp(optarg, "metadata") != 0)
				die("unknown waiver %s (metadata)", optarg);
			o->flags |= CONFINE_WAIVE_METADATA;
			break;
		case OPT_BACKEND:
			o->backend = backend(optarg);
			break;
		case OPT_HELPER:
			o->helper = optarg;
			break;
		case OPT_CONNECT:
			o->socket = optarg;
			break;
		case OPT_RESULT:
			o->result = optarg;
			break;
		case OPT_FRESH:
			o->flags |= CONFINE_FRESH_SCRATCH;
			break;
		case OPT_EMPTY_ENV:
			o->empty_env = 1;
			break;
		case OPT_NO_TMP:
			o->flags |= CONFINE_NO_TMP;
			break;
		case OPT_CPU:
		case OPT_MEMORY:
		case OPT_AS:
		case OPT_FSIZE:
		case OPT_NOFILE:
		case OPT_NPROC:
			if (cli_bound(longopts[idx].name, optarg, &o->limits,
			    &why) != 0)
				die("--%s %s: %s", longopts[idx].name, optarg, why);
			break;
		case 'v':
			o->verbose = 1;
			break;
		case 'h':
			fputs(usage_text, stdout);
			exit(fflush(stdout) == 0 ? 0 : CLI_EXIT_USAGE);
		case OPT_VERSION:
			printf("confine-run %s\n", CONFINE_VERSION);
			exit(fflush(stdout) == 0 ? 0 : CLI_EXIT_USAGE);
		case ':':
			die("%s needs a value (see confine-run --help)",
			    argv[optind - 1]);
		default:
			if (optopt != 0)
				die("unknown option -%c (see confine-run --help)",
				    optopt);
			die("unknown option %s (see confine-run --help)",
			    argv[optind - 1]);
		}
	}
	if (optind >= argc)
		die("no program to run (see confine-run --help)");
	if (o->helper != NULL && o->socket != NULL)
		die("--helper and --connect exclude each other");
	o->read.system = (o->flags & CONFINE_READ_SYSTEM) != 0;
	o->read.narrowed = o->nreads > 0 || o->read.system;
	o->read.trees = o->reads;
	/*
	 * A standalone helper that is already running, when the environment
	 * names one and the command line asks for no other: nothing to start
	 * and stop per run.
	 */
	if (o->helper == NULL && o->socket == NULL &&
	    getenv("CONFINE_SOCKET") != NULL && *getenv("CONFINE_SOCKET") != '\0')
		o->socket = getenv("CONFINE_SOCKET");
	if (o->scratch == NULL && o->backend != CONFINE_BACKEND_NONE)
		die("--scratch DIR is required unless --backend none");
	o->argv = argv + optind;
	o->exe = find_exe(o->argv[0], &o->unfound);
	o->relative = strchr(o->argv[0], '/') != NULL && o->argv[0][0] != '/';
	/*
	 * Ours, unless --empty-env: a PATH that finds what Debian installs,
	 * and HOME and TMPDIR where the job may write (the library names
	 * them; whatever -e or --pass-env gave stays).
	 */
	if (!o->empty_env) {
		if (!has_env(o, "PATH"))
			set_env(o, xstrdup("PATH=" CLI_DEFAULT_PATH));
		o->flags |= CONFINE_SET_HOME | CONFINE_SET_TMPDIR;
	}
}

/*
 * --result's FILE, looked for before anything else is checked, so that it
 * is emptied first: whatever confine-run exits with, FILE then holds this
 * run's settlement or nothing, never an earlier run's.
 */
static const char *
result_option(int argc, char **argv)
{
	const char *path = NULL;
	int ch;

	opterr = 0;
	while ((ch = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1)
		if (ch == OPT_RESULT)
			path = optarg;
	/* From the start again for parse(). */
#ifdef __GLIBC__
	optind = 0;
#else
	optreset = 1;
	optind = 1;
#endif
	return path;
}

static void
opts_free(struct opts *o)
{
	size_t i;

	for (i = 0; i < o->nenv; i++)
		free(o->env[i]);
	free(o->env);
	free(o->devices);
	free(o->reads);
	free(o->exe);
}

/* A closed 0, 1 or 2 would be taken by our next descriptor, and given
 * to the job as its stdio: hold them with /dev/null. */
static void
hold_stdio(void)
{
	int fd;

	for (fd = 0; fd < 3; fd++)
		if (fcntl(fd, F_GETFD) < 0 && errno == EBADF &&
		    open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY) != fd)
			exit(CLI_EXIT_USAGE);
}

static void
catch_signals(void)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP };
	size_t i;

	/*
	 * Even when inherited ignored: a background run can be cancelled.
	 * SIGPIPE ignored with them: EPIPE from write instead, as the
	 * settlement must still be reported.
	 */
	sigfd = sigpipe_open(sigs, sizeof(sigs) / sizeof(sigs[0]), 0);
	if (sigfd < 0)
		die("the signals' pipe: %s", strerror(-sigfd));
	sigemptyset(&caught);
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaddset(&caught, sigs[i]);
}

static void
last_signal(int sig, void *arg)
{
	*(int *)arg = sig;
}

/* The last of the signals that arrived, or 0. */
static int
drain_signals(void)
{
	int sig = 0;

	sigpipe_drain(sigfd, last_signal, &sig);
	return sig;
}

/* A signal arrived: the job is to be cancelled, and arg says which. */
static bool
signalled(void *arg)
{
	int sig = drain_signals();

	if (sig != 0)
		*(int *)arg = sig;
	return sig != 0;
}

/* Waits for the settlement; a signal cancels the job first. */
static void
settle(struct confine *c, struct confine_job *job, struct confine_result *r,
    int *signal)
{
	struct pollfd pfd[2];

	while (confine_wait(job, 0, r) != 0) {
		pfd[0].fd = confine_fd(c);
		pfd[0].events = POLLIN;
		pfd[1].fd = sigfd;
		pfd[1].events = POLLIN;
		if (poll(pfd, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			die("poll: %s", strerror(errno));
		}
		if (pfd[1].revents != 0 && signalled(signal))
			(void)confine_cancel(job);
		/* A lost helper settles the job Uncertain(helper lost). */
		if (pfd[0].revents != 0)
			(void)confine_dispatch(c);
	}
}

static FILE *
open_result(const char *path)
{
	FILE *f;
	int fd;

	if (path == NULL)
		return NULL;
	if (strcmp(path, "-") == 0)
		return stdout;
	/* Before anything runs: a result that cannot be kept refuses the job. */
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
	if (fd < 0 || (f = fdopen(fd, "w")) == NULL)
		die("--result %s: %s", path, strerror(errno));
	return f;
}

/*
 * The job run by this process itself: confine-run is small and runs one
 * job, so it is the job's helper (helper/engine/local.h) and starts no other.
 * 0, or CLI_EXIT_USAGE with the refusal said.
 */
static int
run_here(const struct confine_spec *spec, struct confine_result *r,
    char **root, char **enforced, int *signal)
{
	struct local_job lj;
	struct local l;
	int rc;

	if ((rc = local_open(&l, spec)) != 0) {
		local_close(&l);
		die("cannot start: %s", strerror(-rc));
	}
	memset(&lj, 0, sizeof(lj));
	lj.spec = spec;
	lj.cancel_fd = sigfd;
	lj.cancel = signalled;
	lj.arg = signal;
	rc = local_run(&l.env, &lj);
	local_close(&l);
	if (rc != 0) {
		struct confine_refusal ref = { op_layer(lj.op), op_call(lj.op),
			lj.op_err, op_hint(lj.op, lj.op_err) };
		char msg[1024];

		op_message(msg, sizeof(msg), lj.why != NULL ? lj.why :
		    strerror(-rc), lj.op, lj.op_err);
		say_refused("refused: ", msg, -rc, lj.op != OP_NONE ? &ref :
		    NULL);
		return CLI_EXIT_USAGE;
	}
	*r = lj.result;
	*root = lj.root != NULL ? lj.root : xstrdup("");
	*enforced = xstrdup(lj.enforced);
	return 0;
}

/* The job run by a helper: the one given (--helper) or a running one. */
static int
run_helper(const struct opts *o, const struct confine_spec *spec,
    struct confine_result *r, char **root, char **enforced, int *signal)
{
	struct confine_options co;
	struct confine_job *job;
	struct confine *c;
	sigset_t old;
	int rc;

	memset(&co, 0, sizeof(co));
	co.mode = o->socket ? CONFINE_MODE_CONNECT : CONFINE_MODE_EXEC;
	co.helper_path = o->helper;
	co.socket_path = o->socket;
	/* A helper started now inherits them held and takes them over. */
	sigprocmask(SIG_BLOCK, &caught, &old);
	rc = confine_open(&c, &co);
	sigprocmask(SIG_SETMASK, &old, NULL);
	if (rc != 0)
		die("cannot start a helper: %s", confine_error_message());
	if ((rc = confine_spawn(c, spec, &job)) != 0) {
		struct confine_refusal ref;

		say_refused("refused: ", confine_error_message(), -rc,
		    confine_last_refusal(&ref) == 0 ? &ref : NULL);
		confine_close(c);
		return CLI_EXIT_USAGE;
	}
	/* A fresh root is the job's cwd unless it was given one. */
	*root = xstrdup(confine_job_scratch(job));
	*enforced = xstrdup(confine_job_enforced(job));
	settle(c, job, r, signal);
	confine_job_free(job);
	confine_close(c);
	return 0;
}

int
main(int argc, char **argv)
{
	struct confine_result r;
	struct confine_spec spec;
	struct cli_context ctx;
	struct opts o;
	char line[1024], *root = NULL, *enforced = NULL;
	FILE *result;
	int status, rc;

	hold_stdio();
	result_file = result = open_result(result_option(argc, argv));
	parse(argc, argv, &o);
	catch_signals();

	confine_spec_init(&spec);
	spec.exe = o.exe;
	spec.argv = (const char *const *)o.argv;
	spec.envp = (const char *const *)o.env;
	spec.scratch = o.scratch;
	spec.cwd = o.cwd;
	spec.devices = o.ndevices ? o.devices : NULL;
	/* --read-system alone narrows too: an empty list, not NULL. */
	spec.readable = o.read.narrowed ? o.reads : NULL;
	spec.stdin_fd = STDIN_FILENO;
	spec.stdout_fd = STDOUT_FILENO;
	spec.stderr_fd = STDERR_FILENO;
	spec.deadline_ms = o.deadline_ms;
	spec.grace_ms = o.grace_ms;
	spec.backend = o.backend;
	spec.limits = o.limits;
	spec.flags = o.flags;

	memset(&ctx, 0, sizeof(ctx));
	rc = o.helper || o.socket ?
	    run_helper(&o, &spec, &r, &root, &enforced, &ctx.signal) :
	    run_here(&spec, &r, &root, &enforced, &ctx.signal);
	if (rc != 0) {
		opts_free(&o);
		return rc;
	}
	result_file = NULL;
	ctx.exe = o.unfound ? o.argv[0] : o.exe;
	ctx.unfound = o.unfound;
	ctx.given = o.relative ? o.argv[0] : NULL;
	ctx.exists = !o.unfound && access(o.exe, F_OK) == 0;
	ctx.cwd = o.cwd ? o.cwd : root;
	ctx.deadline = o.deadline;
	ctx.reads = &o.read;
	ctx.enforced = enforced;

	status = cli_exit_status(&r);
	if (o.verbose || r.outcome != CONFINE_COMPLETED) {
		cli_summary(line, sizeof(line), &r, &ctx, o.verbose);
		fprintf(stderr, "confine-run: %s\n", line);
	}
	if (result != NULL) {
		errno = 0;
		rc = cli_json(result, &r, &o.read, enforced);
		if (result != stdout && fclose(result) != 0)
			rc = -EIO;
		if (rc != 0) {
			/* The job ran, but the caller did not get its result. */
			fprintf(stderr, "confine-run: --result %s: %s\n", o.result,
			    strerror(errno ? errno : EIO));
			status = CLI_EXIT_USAGE;
		}
	}
	free(root);
	free(enforced);
	opts_free(&o);
	return status;
}
