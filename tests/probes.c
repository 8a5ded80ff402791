/*
 * The fixture's probes of what could reach past a job (Linux): the
 * metadata of files, the machine's own state, kernel interfaces, device
 * nodes, datagrams and other processes. Each attempt is harmless when it
 * works (it sets what is already set, or names what does not exist, so
 * that the kernel answers ENOENT, EBADF or EINVAL once past its
 * permission checks), and like every probe of the fixture it exits 0 on
 * success and with the errno otherwise.
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/io.h>
#include <sys/ipc.h>
#include <sys/klog.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/personality.h>
#include <sys/quota.h>
#include <sys/resource.h>
#include <sys/shm.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/swap.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/timex.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "tests/probes.h"

#ifndef SYS_fchmodat2
#define SYS_fchmodat2 452
#endif
#define KEYCTL_GET_KEYRING_ID 0
#define KEY_SPEC_PROCESS_KEYRING (-2)
#define IOPRIO_WHO_PROCESS 1
#define IOPRIO_WHO_USER 3
#define KCMP_VM 1

/* linux/sched/types.h's, whose header clashes with the C library's. */
struct sched_attr {
	uint32_t size, sched_policy;
	uint64_t sched_flags;
	int32_t sched_nice;
	uint32_t sched_priority;
	uint64_t sched_runtime, sched_deadline, sched_period;
	uint32_t sched_util_min, sched_util_max;
};

struct op {
	const char *name;
	long (*fn)(const char *arg);
};

static int
errno_of(long rc, const char *what)
{
	int err = errno;

	if (rc >= 0)
		return 0;
	fprintf(stderr, "fixture: %s: %s\n", what, strerror(err));
	return err > 0 && err < 126 ? err : 125;
}

/* argv[2] names the op; argv[argi], if there, is its argument. */
static int
run(const struct op *ops, size_t n, int argc, char **argv, int argi)
{
	size_t i;

	if (argc < 3)
		return 125;
	for (i = 0; i < n; i++)
		if (strcmp(argv[2], ops[i].name) == 0) {
			errno = 0;
			return errno_of(ops[i].fn(argc > argi ? argv[argi] :
			    NULL), ops[i].name);
		}
	return 125;
}

#define RUN(ops, argc, argv, argi) \
	run((ops), sizeof(ops) / sizeof((ops)[0]), (argc), (argv), (argi))

/* ---- meta OP PATH: an inode's metadata, by name and by descriptor ---- */

static long
opened(const char *path, int flags, long (*fn)(int fd))
{
	int fd = path ? open(path, flags | O_CLOEXEC) : -1;
	long rc;

	if (fd < 0)
		return -1;
	rc = fn(fd);
	close(fd);
	return rc;
}

static long m_chmod(const char *p) { return chmod(p, 0600); }
static long m_suid(const char *p) { return chmod(p, 04755); }
static long m_chown(const char *p) { return chown(p, getuid(), getgid()); }
static long m_utime(const char *p) { return utimensat(AT_FDCWD, p, NULL, 0); }
static long m_setx(const char *p) { return setxattr(p, "user.confine", "x", 1, 0); }
static long m_rmx(const char *p) { return removexattr(p, "user.confine"); }
static long f_chmod(int fd) { return fchmod(fd, 0600); }
static long f_chown(int fd) { return fchown(fd, getuid(), getgid()); }
static long f_utime(int fd) { return futimens(fd, NULL); }
static long f_setx(int fd) { return fsetxattr(fd, "user.confine", "x", 1, 0); }
static long p_chown(int fd) { return fchownat(fd, "", getuid(), getgid(), AT_EMPTY_PATH); }
static long p_chmod(int fd) { return syscall(SYS_fchmodat2, fd, "", 0600, AT_EMPTY_PATH); }

static long
p_proc(int fd)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	return chmod(path, 0600);
}

static long m_fchmod(const char *p) { return opened(p, O_RDONLY, f_chmod); }
static long m_fchown(const char *p) { return opened(p, O_RDONLY, f_chown); }
static long m_futimens(const char *p) { return opened(p, O_RDONLY, f_utime); }
static long m_fsetx(const char *p) { return opened(p, O_RDONLY, f_setx); }
static long m_pchown(const char *p) { return opened(p, O_PATH, p_chown); }
static long m_pchmod(const char *p) { return opened(p, O_PATH, p_chmod); }
static long m_pproc(const char *p) { return opened(p, O_PATH, p_proc); }

int
probe_meta(int argc, char **argv)
{
	static const struct op ops[] = {
		{ "chmod", m_chmod }, { "suid", m_suid }, { "chown", m_chown },
		{ "utime", m_utime }, { "setxattr", m_setx },
		{ "removexattr", m_rmx }, { "fchmod", m_fchmod },
		{ "fchown", m_fchown }, { "futimens", m_futimens },
		{ "fsetxattr", m_fsetx }, { "path-chown", m_pchown },
		{ "path-chmod", m_pchmod }, { "proc-chmod", m_pproc },
	};

	return RUN(ops, argc, argv, 3);
}

/*
 * ---- setid OP PATH: a setuid or setgid file made, by each call that
 * sets a mode. PATH must not exist, but for the chmod family, which sets
 * the bits on an existing file. ----
 */

#ifndef SYS_openat2
#define SYS_openat2 437
#endif

/* linux/openat2.h's, which Debian 12's headers lack. */
struct open_how_ {
	uint64_t flags, mode, resolve;
};

static long
made(int fd)
{
	if (fd < 0)
		return -1;
	close(fd);
	return 0;
}

static long s_chmod_u(const char *p) { return chmod(p, 04755); }
static long s_chmod_g(const char *p) { return chmod(p, 02755); }
static long s_fchmod_fd(int fd) { return fchmod(fd, 06755); }
static long s_fchmod(const char *p) { return opened(p, O_RDONLY, s_fchmod_fd); }
static long s_fchmodat(const char *p) { return fchmodat(AT_FDCWD, p, 04755, 0); }
static long s_fchmodat2(const char *p) { return syscall(SYS_fchmodat2, AT_FDCWD, p, 02755, 0); }
static long s_open(const char *p) { return made(open(p, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 04755)); }
static long s_openat(const char *p) { return made(openat(AT_FDCWD, p, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 02755)); }
static long s_creat(const char *p) { return made(creat(p, 06755)); }
static long s_mknod(const char *p) { return mknod(p, S_IFREG | 04755, 0); }
static long s_mknodat(const char *p) { return mknodat(AT_FDCWD, p, S_IFREG | 02755, 0); }

static long
s_openat2(const char *p)
{
	struct open_how_ how = { .flags = O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC,
		.mode = 04755 };

	return made((int)syscall(SYS_openat2, AT_FDCWD, p, &how, sizeof(how)));
}

/* Not refused: the kernel keeps only the permission and sticky bits. */
static long s_mkdir(const char *p) { return mkdir(p, 06777); }

/* An O_TMPFILE with the bits, then named. */
static long
s_tmpfile(const char *p)
{
	char dir[4096], proc[64];
	const char *slash = strrchr(p, '/');
	int fd;
	long rc;

	if (slash == NULL || (size_t)(slash - p) >= sizeof(dir))
		return (errno = EINVAL, -1);
	memcpy(dir, p, (size_t)(slash - p));
	dir[slash - p] = '\0';
	fd = open(dir, O_TMPFILE | O_WRONLY | O_CLOEXEC, 04755);
	if (fd < 0)
		return -1;
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	rc = linkat(AT_FDCWD, proc, AT_FDCWD, p, AT_SYMLINK_FOLLOW);
	close(fd);
	return rc;
}

int
probe_setid(int argc, char **argv)
{
	static const struct op ops[] = {
		{ "chmod-u", s_chmod_u }, { "chmod-g", s_chmod_g },
		{ "fchmod", s_fchmod }, { "fchmodat", s_fchmodat },
		{ "fchmodat2", s_fchmodat2 }, { "open", s_open },
		{ "openat", s_openat }, { "creat", s_creat },
		{ "mknod", s_mknod }, { "mknodat", s_mknodat },
		{ "openat2", s_openat2 }, { "mkdir", s_mkdir },
		{ "tmpfile", s_tmpfile },
	};

	return RUN(ops, argc, argv, 3);
}

/* ---- host OP: the machine's own state, set to what it already is ---- */

static long
h_hostname(const char *a)
{
	char name[256];

	(void)a;
	if (gethostname(name, sizeof(name)) != 0)
		return -1;
	return sethostname(name, strlen(name));
}

static long
h_domainname(const char *a)
{
	char name[256];

	(void)a;
	if (getdomainname(name, sizeof(name)) != 0)
		return -1;
	return setdomainname(name, strlen(name));
}

static long
h_settimeofday(const char *a)
{
	struct timeval tv;

	(void)a;
	gettimeofday(&tv, NULL);
	return settimeofday(&tv, NULL);
}

static long
h_clock_settime(const char *a)
{
	struct timespec ts;

	(void)a;
	clock_gettime(CLOCK_REALTIME, &ts);
	return clock_settime(CLOCK_REALTIME, &ts);
}

/* modes 0: only reads the clock's state, and still refused. */
static long
h_adjtimex(const char *a)
{
	struct timex tx;

	(void)a;
	memset(&tx, 0, sizeof(tx));
	return adjtimex(&tx);
}

static long
h_clock_adjtime(const char *a)
{
	struct timex tx;

	(void)a;
	memset(&tx, 0, sizeof(tx));
	return syscall(SYS_clock_adjtime, CLOCK_REALTIME, &tx);
}

/* Wrong magic: EINVAL, once the capability was checked. */
static long h_reboot(const char *a) { (void)a; return syscall(SYS_reboot, 0, 0, 0, NULL); }
static long h_swapon(const char *a) { (void)a; return swapon("/nonexistent-confine", 0); }
static long h_swapoff(const char *a) { (void)a; return swapoff("/nonexistent-confine"); }
static long h_init_module(const char *a) { (void)a; return syscall(SYS_init_module, NULL, 0, ""); }
static long h_finit_module(const char *a) { (void)a; return syscall(SYS_finit_module, -1, "", 0); }
static long h_delete_module(const char *a) { (void)a; return syscall(SYS_delete_module, "confine_none", O_NONBLOCK); }
static long h_acct(const char *a) { (void)a; return acct(NULL); }
/* QCMD(Q_SYNC, USRQUOTA), without the macro's signed overflow. */
static long h_quotactl(const char *a) { (void)a; return quotactl((int)((unsigned)Q_SYNC << 8 | USRQUOTA), NULL, 0, NULL); }
static long h_mount(const char *a) { (void)a; return mount("/nonexistent-a", "/nonexistent-b", NULL, MS_BIND, NULL); }
static long h_umount(const char *a) { (void)a; return umount2("/nonexistent-confine", 0); }
static long h_pivot_root(const char *a) { (void)a; return syscall(SYS_pivot_root, "/nonexistent-a", "/nonexistent-b"); }
static long h_fsopen(const char *a) { (void)a; return syscall(SYS_fsopen, "confine-none", 0); }
static long h_open_tree(const char *a) { (void)a; return syscall(SYS_open_tree, AT_FDCWD, "/nonexistent-confine", 0); }
static long h_open_by_handle(const char *a) { (void)a; return syscall(SYS_open_by_handle_at, -1, NULL, 0); }
static long h_iopl(const char *a) { (void)a; return syscall(SYS_iopl, 0); }
static long h_ioperm(const char *a) { (void)a; return ioperm(0, 1, 0); }
static long h_chroot(const char *a) { (void)a; return chroot("/"); }
static long h_syslog(const char *a) { (void)a; return klogctl(10, NULL, 0); }

/* handle_bytes 0: EOVERFLOW, with the size it would need. */
static long
h_name_to_handle(const char *a)
{
	struct file_handle fh = { .handle_bytes = 0 };
	int mnt;

	(void)a;
	return name_to_handle_at(AT_FDCWD, "/", &fh, &mnt, 0);
}

int
probe_host(int argc, char **argv)
{
	static const struct op ops[] = {
		{ "sethostname", h_hostname }, { "setdomainname", h_domainname },
		{ "settimeofday", h_settimeofday },
		{ "clock_settime", h_clock_settime }, { "adjtimex", h_adjtimex },
		{ "clock_adjtime", h_clock_adjtime }, { "reboot", h_reboot },
		{ "swapon", h_swapon }, { "swapoff", h_swapoff },
		{ "init_module", h_init_module },
		{ "finit_module", h_finit_module },
		{ "delete_module", h_delete_module }, { "acct", h_acct },
		{ "quotactl", h_quotactl }, { "mount", h_mount },
		{ "umount2", h_umount }, { "pivot_root", h_pivot_root },
		{ "fsopen", h_fsopen }, { "open_tree", h_open_tree },
		{ "open_by_handle_at", h_open_by_handle },
		{ "name_to_handle_at", h_name_to_handle }, { "iopl", h_iopl },
		{ "ioperm", h_ioperm }, { "chroot", h_chroot },
		{ "syslog", h_syslog },
	};

	return RUN(ops, argc, argv, 3);
}

/* ---- surface OP: kernel interfaces a job has no use for ---- */

static long s_add_key(const char *a) { (void)a; return syscall(SYS_add_key, "user", "confine-probe", "x", 1, KEY_SPEC_PROCESS_KEYRING); }
/* No type: EFAULT, as ENOKEY (126) would not fit an exit status. */
static long s_request_key(const char *a) { (void)a; return syscall(SYS_request_key, NULL, "confine-none", NULL, 0); }
static long s_keyctl(const char *a) { (void)a; return syscall(SYS_keyctl, KEYCTL_GET_KEYRING_ID, KEY_SPEC_PROCESS_KEYRING, 1); }
/* An unknown command: EINVAL once past the capability check. */
static long s_bpf(const char *a) { (void)a; return syscall(SYS_bpf, 1000, NULL, 0); }
static long s_unshare(const char *a) { (void)a; return unshare(CLONE_NEWUTS); }
static long s_setns(const char *a) { (void)a; return setns(-1, 0); }
static long s_persona(const char *a) { (void)a; return personality(ADDR_NO_RANDOMIZE); }
static long s_persona_query(const char *a) { (void)a; return personality(0xffffffff); }
static long s_persona_linux(const char *a) { (void)a; return personality(PER_LINUX); }
static long s_userfaultfd(const char *a) { (void)a; return syscall(SYS_userfaultfd, O_CLOEXEC); }

static long
s_perf(const char *a)
{
	unsigned char attr[128];
	uint32_t size = sizeof(attr), type = 1 /* PERF_TYPE_SOFTWARE */;
	uint64_t config = 9 /* PERF_COUNT_SW_DUMMY */;
	uint64_t flags = 0x60; /* exclude_kernel, exclude_hv: allowed to users */

	(void)a;
	memset(attr, 0, sizeof(attr));
	memcpy(attr, &type, 4);
	memcpy(attr + 4, &size, 4);
	memcpy(attr + 8, &config, 8);
	memcpy(attr + 40, &flags, 8);
	return syscall(SYS_perf_event_open, attr, 0, -1, -1, 0);
}

/* Into and out of this process's own memory. */
static long
s_vm(int write)
{
	char here[8] = "here", there[8] = "there";
	struct iovec l = { here, sizeof(here) }, r = { there, sizeof(there) };

	return write ? process_vm_writev(getpid(), &l, 1, &r, 1, 0) :
	    process_vm_readv(getpid(), &l, 1, &r, 1, 0);
}

static long s_vm_write(const char *a) { (void)a; return s_vm(1); }
static long s_vm_read(const char *a) { (void)a; return s_vm(0); }

static long
waited(long pid)
{
	int status;

	if (pid == 0)
		_exit(0);
	if (pid < 0)
		return -1;
	return waitpid((pid_t)pid, &status, 0) < 0 ? -1 : 0;
}

static long s_clone_newuser(const char *a) { (void)a; return waited(syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, 0, 0, 0, 0)); }
static long s_fork(const char *a) { (void)a; return waited(fork()); }

static long
s_clone3(const char *a)
{
	uint64_t args[11];

	(void)a;
	memset(args, 0, sizeof(args));
	args[4] = SIGCHLD;  /* exit_signal */
	return waited(syscall(SYS_clone3, args, sizeof(args)));
}

static long
s_modify_ldt(const char *a)
{
	char buf[16];

	(void)a;
	return syscall(SYS_modify_ldt, 0, buf, sizeof(buf));
}

int
probe_surface(int argc, char **argv)
{
	static const struct op ops[] = {
		{ "add_key", s_add_key }, { "request_key", s_request_key },
		{ "keyctl", s_keyctl }, { "bpf", s_bpf },
		{ "perf_event_open", s_perf }, { "userfaultfd", s_userfaultfd },
		{ "unshare", s_unshare }, { "setns", s_setns },
		{ "personality", s_persona },
		{ "personality-query", s_persona_query },
		{ "personality-linux", s_persona_linux },
		{ "process_vm_writev", s_vm_write },
		{ "process_vm_readv", s_vm_read },
		{ "clone-newuser", s_clone_newuser }, { "clone3", s_clone3 },
		{ "fork", s_fork }, { "modify_ldt", s_modify_ldt },
	};

	return RUN(ops, argc, argv, 3);
}

/* ---- proc OP TARGET: another process's limits and scheduling ---- */

static pid_t target;

static long
c_prlimit(const char *a)
{
	struct rlimit rl;

	(void)a;
	if (prlimit(target, RLIMIT_NOFILE, NULL, &rl) != 0)
		return -1;
	rl.rlim_cur = 64;
	return prlimit(target, RLIMIT_NOFILE, &rl, NULL);
}

static long
c_setpriority(const char *a)
{
	int prio;

	(void)a;
	errno = 0;
	prio = getpriority(PRIO_PROCESS, (id_t)target);
	if (prio == -1 && errno != 0)
		return -1;
	return setpriority(PRIO_PROCESS, (id_t)target, prio < 19 ? prio + 1 : 19);
}

/*
 * A uid no process has, given, never 0 nor absent (that would reach
 * every process of the caller's uid): ESRCH once past the check.
 */
static long
c_by_user(const char *a, int io)
{
	long uid = a != NULL ? atol(a) : 0;

	if (uid <= 0) {
		errno = EINVAL;
		return -1;
	}
	return io ? syscall(SYS_ioprio_set, IOPRIO_WHO_USER, uid, 0) :
	    setpriority(PRIO_USER, (id_t)uid, 10);
}

static long c_prio_user(const char *a) { return c_by_user(a, 0); }
static long c_ioprio_user(const char *a) { return c_by_user(a, 1); }

static long
c_affinity(const char *a)
{
	cpu_set_t set;

	(void)a;
	if (sched_getaffinity(target, sizeof(set), &set) != 0)
		return -1;
	return sched_setaffinity(target, sizeof(set), &set);
}

static long
c_scheduler(const char *a)
{
	struct sched_param sp;
	int policy = sched_getscheduler(target);

	(void)a;
	if (policy < 0 || sched_getparam(target, &sp) != 0)
		return -1;
	return sched_setscheduler(target, policy, &sp);
}

static long
c_setparam(const char *a)
{
	struct sched_param sp;

	(void)a;
	if (sched_getparam(target, &sp) != 0)
		return -1;
	return sched_setparam(target, &sp);
}

static long
c_setattr(const char *a)
{
	struct sched_attr sa;

	(void)a;
	memset(&sa, 0, sizeof(sa));
	if (syscall(SYS_sched_getattr, target, &sa, sizeof(sa), 0) != 0)
		return -1;
	return syscall(SYS_sched_setattr, target, &sa, 0);
}

static long
c_ioprio(const char *a)
{
	long prio = syscall(SYS_ioprio_get, IOPRIO_WHO_PROCESS, target);

	(void)a;
	if (prio < 0)
		return -1;
	return syscall(SYS_ioprio_set, IOPRIO_WHO_PROCESS, target, prio);
}

/* From node 0 to node 0: nothing moves, once access was granted. */
static long
c_migrate(const char *a)
{
	unsigned long nodes = 1;

	(void)a;
	return syscall(SYS_migrate_pages, target, 8 * sizeof(nodes), &nodes,
	    &nodes);
}

static long c_move_pages(const char *a) { (void)a; return syscall(SYS_move_pages, target, 0, NULL, NULL, NULL, 0); }
static long c_kcmp(const char *a) { (void)a; return syscall(SYS_kcmp, getpid(), target, KCMP_VM, 0, 0); }

static long
c_madvise(const char *a)
{
	struct iovec iov = { NULL, 0 };
	int fd = (int)syscall(SYS_pidfd_open, target, 0);
	long rc;

	(void)a;
	if (fd < 0)
		return -1;
	rc = syscall(SYS_process_madvise, fd, &iov, 1, MADV_COLD, 0);
	close(fd);
	return rc;
}

int
probe_proc(int argc, char **argv)
{
	static const struct op ops[] = {
		{ "prlimit", c_prlimit }, { "setpriority", c_setpriority },
		{ "prio-user", c_prio_user }, { "ioprio-user", c_ioprio_user },
		{ "affinity", c_affinity }, { "scheduler", c_scheduler },
		{ "setparam", c_setparam }, { "setattr", c_setattr },
		{ "ioprio", c_ioprio }, { "migrate_pages", c_migrate },
		{ "move_pages", c_move_pages }, { "kcmp", c_kcmp },
		{ "process_madvise", c_madvise },
	};
	pid_t child = 0;
	int rc, status;

	if (argc < 4)
		return 125;
	/* self: pid 0; child: one of the job's own; else an outside pid. */
	if (strcmp(argv[3], "self") == 0) {
		target = 0;
	} else if (strcmp(argv[3], "child") == 0) {
		child = fork();
		if (child == 0) {
			pause();
			_exit(0);
		}
		if (child < 0)
			return errno_of(-1, "fork");
		target = child;
	} else {
		target = (pid_t)atol(argv[3]);
	}
	rc = RUN(ops, argc, argv, 4);
	if (child > 0) {
		kill(child, SIGKILL);
		waitpid(child, &status, 0);
	}
	return rc;
}

/* ---- what the job holds: caps, and creds ---- */

/* Prints CapInh CapPrm CapEff CapBnd CapAmb, one hex word each. */
int
probe_caps(int argc, char **argv)
{
	char line[256];
	FILE *f = fopen("/proc/self/status", "r");
	int n = 0;

	(void)argc;
	(void)argv;
	if (f == NULL)
		return errno_of(-1, "/proc/self/status");
	while (fgets(line, sizeof(line), f) != NULL)
		if (strncmp(line, "Cap", 3) == 0 && strchr(line, '\t') != NULL) {
			line[strcspn(line, "\n")] = '\0';
			printf("%s%s", n++ ? " " : "", strchr(line, '\t') + 1);
		}
	printf("\n");
	fclose(f);
	return n == 5 ? 0 : 125;
}

/* Prints "uid euid gid egid ngroups" and each group. */
int
probe_creds(int argc, char **argv)
{
	gid_t groups[64];
	int n = getgroups(64, groups), i;

	(void)argc;
	(void)argv;
	if (n < 0)
		return errno_of(-1, "getgroups");
	printf("%ld %ld %ld %ld %d", (long)getuid(), (long)geteuid(),
	    (long)getgid(), (long)getegid(), n);
	for (i = 0; i < n; i++)
		printf(" %ld", (long)groups[i]);
	printf("\n");
	return 0;
}

/* ---- sockets: datagrams, pairs, passing descriptors ---- */

static socklen_t
unix_addr(const char *path, struct sockaddr_un *sun)
{
	memset(sun, 0, sizeof(*sun));
	sun->sun_family = AF_UNIX;
	if (path == NULL || strlen(path) >= sizeof(sun->sun_path))
		return 0;
	strcpy(sun->sun_path, path);
	if (path[0] != '@')
		return sizeof(*sun);
	sun->sun_path[0] = '\0';
	return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + strlen(path));
}

/* m's control (room for one descriptor), passing fd (SCM_RIGHTS). */
static void
with_fd(struct msghdr *m, int fd)
{
	struct cmsghdr *c;

	memset(m->msg_control, 0, m->msg_controllen);
	c = CMSG_FIRSTHDR(m);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(int));
}

static long
k_pair(int type)
{
	int sv[2];

	return socketpair(AF_UNIX, type | SOCK_CLOEXEC, 0, sv);
}

static long k_dgram(const char *a) { (void)a; return k_pair(SOCK_DGRAM); }
/* The kernel makes a SOCK_RAW unix pair a datagram one. */
static long k_raw(const char *a) { (void)a; return k_pair(SOCK_RAW); }
static long k_seqpacket(const char *a) { (void)a; return k_pair(SOCK_SEQPACKET); }
static long k_stream(const char *a) { (void)a; return k_pair(SOCK_STREAM); }

/* A datagram pair of its own, then one datagram to a socket by name. */
static long
k_dgram_send(const char *path)
{
	struct sockaddr_un sun;
	socklen_t len = unix_addr(path, &sun);
	int sv[2];

	if (len == 0 || socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sv))
		return -1;
	return sendto(sv[0], "hi", 2, 0, (struct sockaddr *)&sun, len);
}

/*
 * A SOCK_RAW pair of its own, then one datagram by sendmsg to a socket by
 * name, with a descriptor (SCM_RIGHTS): what the host's socket would get.
 */
static long
k_raw_sendmsg(const char *path)
{
	char cbuf[CMSG_SPACE(sizeof(int))], hi[2] = { 'h', 'i' };
	struct iovec iov = { hi, 2 };
	struct sockaddr_un sun;
	struct msghdr m = { .msg_name = &sun, .msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cbuf, .msg_controllen = sizeof(cbuf) };
	int sv[2], fd = 0;  /* stdin: not the pipe the test reads to its end */

	if ((m.msg_namelen = unix_addr(path, &sun)) == 0 ||
	    socketpair(AF_UNIX, SOCK_RAW | SOCK_CLOEXEC, 0, sv) != 0)
		return -1;
	with_fd(&m, fd);
	return sendmsg(sv[0], &m, 0);
}

/* A name (pathname or @abstract) bound to one end of a pair of its own. */
static long
k_bind(const char *path)
{
	struct sockaddr_un sun;
	socklen_t len = unix_addr(path, &sun);
	int sv[2];

	if (len == 0 || socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
		return -1;
	return bind(sv[0], (struct sockaddr *)&sun, len);
}

/*
 * A connect whose unix address is longer than any (sockaddr_storage's
 * 128 bytes, no NUL): the kernel's EINVAL, whoever makes the call.
 */
static long
k_long_connect(const char *a)
{
	struct sockaddr_storage ss;
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	(void)a;
	if (fd < 0)
		return -1;
	memset(&ss, 'a', sizeof(ss));
	ss.ss_family = AF_UNIX;
	return connect(fd, (struct sockaddr *)&ss, sizeof(ss));
}

/* A descriptor through a stream pair of its own: SCM_RIGHTS. */
static long
k_pass(const char *a)
{
	char b = 'x', cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { &b, 1 };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cbuf, .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *c;
	int sv[2], fd = 1;

	(void)a;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
		return -1;
	with_fd(&m, fd);
	if (sendmsg(sv[0], &m, 0) != 1)
		return -1;
	m.msg_controllen = sizeof(cbuf);
	if (recvmsg(sv[1], &m, 0) != 1)
		return -1;
	c = CMSG_FIRSTHDR(&m);
	return c != NULL && c->cmsg_type == SCM_RIGHTS ? 0 : (errno = EPROTO, -1);
}

int
probe_pair(int argc, char **argv)
{
	static const struct op ops[] = {
		{ "dgram", k_dgram }, { "seqpacket", k_seqpacket },
		{ "stream", k_stream }, { "dgram-send", k_dgram_send },
		{ "pass", k_pass }, { "raw", k_raw },
		{ "raw-sendmsg", k_raw_sendmsg }, { "bind", k_bind },
		{ "long-connect", k_long_connect },
	};

	return RUN(ops, argc, argv, 3);
}

/*
 * ---- ipc OP ARG: the IPC namespace's objects and the terminals' ----
 * A SysV segment by its key (hex), a POSIX message queue by its name:
 * found, or made (0666, left for whoever looks). A pty of its own.
 */

static key_t ipc_key(const char *a) { return (key_t)strtoul(a, NULL, 16); }
static long i_shm_find(const char *a) { return shmget(ipc_key(a), 0, 0); }
static long i_shm_make(const char *a) { return shmget(ipc_key(a), 4096, IPC_CREAT | IPC_EXCL | 0666); }
static long i_mq_find(const char *a) { return syscall(SYS_mq_open, a, O_RDONLY | O_CLOEXEC, 0, NULL); }
static long i_mq_make(const char *a) { return syscall(SYS_mq_open, a, O_RDONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666, NULL); }

static long
i_pty(const char *a)
{
	int m, s;

	(void)a;
	if ((m = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC)) < 0)
		return -1;
	if (grantpt(m) != 0 || unlockpt(m) != 0 ||
	    (s = open(ptsname(m), O_RDWR | O_NOCTTY | O_CLOEXEC)) < 0)
		return -1;
	return write(m, "x\n", 2) == 2 ? 0 : -1;
}

int
probe_ipc(int argc, char **argv)
{
	static const struct op ops[] = {
		{ "shm-find", i_shm_find }, { "shm-make", i_shm_make },
		{ "mq-find", i_mq_find }, { "mq-make", i_mq_make },
		{ "pty", i_pty },
	};

	return RUN(ops, argc, argv, 3);
}

/*
 * ---- loop KIND [ADDR]: a server and a client of the job's own ----
 * tcp, tcp6, udp, udp6 on the loopback (port 0: the kernel's pick), unix
 * PATH and abstract NAME (stream): bound, listening, connected to (or,
 * for udp, sent to with sendto) from another thread, one byte accepted
 * and read back. backlog PATH: a listener whose backlog (0) is full, so
 * that a second blocking connect waits until the first is accepted.
 * 0, or the errno of the first call that failed.
 */

struct loop {
	int family, type;
	struct sockaddr_storage addr;
	socklen_t len;
	int err;
};

static int
loop_addr(struct loop *l, const char *kind, const char *arg)
{
	struct sockaddr_in *in = (struct sockaddr_in *)&l->addr;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&l->addr;
	struct sockaddr_un *un = (struct sockaddr_un *)&l->addr;

	memset(l, 0, sizeof(*l));
	l->type = SOCK_STREAM;
	if (strncmp(kind, "udp", 3) == 0)
		l->type = SOCK_DGRAM;
	if (strcmp(kind, "tcp") == 0 || strcmp(kind, "udp") == 0) {
		l->family = in->sin_family = AF_INET;
		in->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		l->len = sizeof(*in);
	} else if (strcmp(kind, "tcp6") == 0 || strcmp(kind, "udp6") == 0) {
		l->family = in6->sin6_family = AF_INET6;
		in6->sin6_addr = in6addr_loopback;
		l->len = sizeof(*in6);
	} else if ((strcmp(kind, "unix") == 0 || strcmp(kind, "abstract") == 0 ||
	    strcmp(kind, "backlog") == 0) && arg != NULL &&
	    strlen(arg) < sizeof(un->sun_path)) {
		l->family = un->sun_family = AF_UNIX;
		strcpy(un->sun_path + (kind[0] == 'a'), arg);
		l->len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) +
		    (kind[0] == 'a') + strlen(arg) + (kind[0] != 'a'));
	} else {
		return -1;
	}
	return 0;
}

static void *
loop_client(void *arg)
{
	struct loop *l = arg;
	int fd = socket(l->family, l->type | SOCK_CLOEXEC, 0);

	if (fd < 0 || (l->type == SOCK_DGRAM ? sendto(fd, "x", 1, 0,
	    (struct sockaddr *)&l->addr, l->len) != 1 :
	    connect(fd, (struct sockaddr *)&l->addr, l->len) != 0 ||
	    write(fd, "x", 1) != 1))
		l->err = errno ? errno : EIO;
	/* Left open: the server reads before we are gone. */
	return NULL;
}

#define LOOP_TRY(call) do { if ((call) < 0) return errno_of(-1, #call); } while (0)

static int
loop_run(const char *kind, const char *arg)
{
	struct loop l, l2;
	pthread_t t, t2;
	int s, a, a2;
	char c;

	if (loop_addr(&l, kind, arg) != 0)
		return 125;
	LOOP_TRY(s = socket(l.family, l.type | SOCK_CLOEXEC, 0));
	LOOP_TRY(bind(s, (struct sockaddr *)&l.addr, l.len));
	LOOP_TRY(getsockname(s, (struct sockaddr *)&l.addr, &l.len));
	if (l.type == SOCK_STREAM)
		LOOP_TRY(listen(s, strcmp(kind, "backlog") == 0 ? 0 : 4));
	if (strcmp(kind, "backlog") == 0) {
		/* The first fills the queue; the second waits for room. */
		l2 = l;
		loop_client(&l);
		if (l.err != 0)
			return errno_of(-1, "first connect");
		if (pthread_create(&t2, NULL, loop_client, &l2) != 0)
			return 125;
		usleep(100 * 1000);
		LOOP_TRY(a = accept(s, NULL, NULL));
		LOOP_TRY(a2 = accept(s, NULL, NULL));
		pthread_join(t2, NULL);
		if (l2.err != 0) {
			errno = l2.err;
			return errno_of(-1, "second connect");
		}
		LOOP_TRY(read(a2, &c, 1));
		return c == 'x' ? 0 : EIO;
	}
	if (pthread_create(&t, NULL, loop_client, &l) != 0)
		return 125;
	if (l.type == SOCK_STREAM) {
		LOOP_TRY(a = accept(s, NULL, NULL));
		LOOP_TRY(read(a, &c, 1));
	} else {
		LOOP_TRY(recv(s, &c, 1, 0));
	}
	pthread_join(t, NULL);
	if (l.err != 0) {
		errno = l.err;
		return errno_of(-1, "client");
	}
	return c == 'x' ? 0 : EIO;
}

/*
 * dgram PATH|@NAME: a unix datagram server of its own, and a client in
 * another thread sending to it by name: by sendto ('a'), by sendmsg with
 * a descriptor ('b', SCM_RIGHTS), by sendmmsg ('c' and 'd', each counted),
 * then DGRAM_BURST more by sendmsg than the server's queue holds
 * (net.unix.max_dgram_qlen: 10) before it reads: the later sends wait for
 * room. 0, or the errno of the first call that failed.
 */
#define DGRAM_BURST 24

static void *
dgram_client(void *arg)
{
	struct loop *l = arg;
	char cbuf[CMSG_SPACE(sizeof(int))], b[4] = "bcde";
	struct iovec iov[3] = { { &b[0], 1 }, { &b[1], 1 }, { &b[2], 1 } };
	struct msghdr m = { .msg_name = &l->addr, .msg_namelen = l->len,
		.msg_iov = iov, .msg_iovlen = 1, .msg_control = cbuf,
		.msg_controllen = sizeof(cbuf) };
	struct mmsghdr mm[2];
	int fd, i;

	if ((fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0)) < 0 ||
	    sendto(fd, "a", 1, 0, (struct sockaddr *)&l->addr, l->len) != 1) {
		l->err = errno;
		return NULL;
	}
	with_fd(&m, 1);
	if (sendmsg(fd, &m, 0) != 1) {
		l->err = errno;
		return NULL;
	}
	memset(mm, 0, sizeof(mm));
	for (i = 0; i < 2; i++) {
		mm[i].msg_hdr = m;
		mm[i].msg_hdr.msg_iov = &iov[1 + i];
		mm[i].msg_hdr.msg_control = NULL;
		mm[i].msg_hdr.msg_controllen = 0;
	}
	if (sendmmsg(fd, mm, 2, 0) != 2 || mm[0].msg_len != 1 ||
	    mm[1].msg_len != 1) {
		l->err = errno ? errno : EIO;
		return NULL;
	}
	iov[0].iov_base = &b[3];
	m.msg_control = NULL;
	m.msg_controllen = 0;
	for (i = 0; i < DGRAM_BURST; i++)
		if (sendmsg(fd, &m, 0) != 1) {
			l->err = errno;
			return NULL;
		}
	return NULL;
}

static int
dgram_run(const char *arg)
{
	char c, want[] = "abcd", cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { &c, 1 };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct cmsghdr *cm;
	struct loop l;
	struct timeval limit = { 10, 0 };
	pthread_t t;
	int s, i, rc = 0;

	if (arg == NULL || loop_addr(&l, arg[0] == '@' ? "abstract" : "unix",
	    arg + (arg[0] == '@')) != 0)
		return 125;

	LOOP_TRY(s = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0));
	LOOP_TRY(bind(s, (struct sockaddr *)&l.addr, l.len));
	/* A client that failed sends no more: then the server waits no more. */
	LOOP_TRY(setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof(limit)));
	if (pthread_create(&t, NULL, dgram_client, &l) != 0)
		return 125;
	/* Time for the client to fill the queue and wait. */
	usleep(100 * 1000);
	for (i = 0; rc == 0 && i < 4 + DGRAM_BURST; i++) {
		m.msg_control = cbuf;
		m.msg_controllen = sizeof(cbuf);
		cm = NULL;
		if (recvmsg(s, &m, 0) < 0)
			rc = errno_of(-1, "recvmsg");
		else if (c != (i < 4 ? want[i] : 'e'))
			rc = EIO;
		else if ((cm = CMSG_FIRSTHDR(&m)) != NULL)
			close(*(int *)(void *)CMSG_DATA(cm));
		if (rc == 0 && (i == 1) != (cm != NULL &&
		    cm->cmsg_type == SCM_RIGHTS))
			rc = EPROTO;
	}
	pthread_join(t, NULL);
	if (l.err != 0) {
		errno = l.err;
		return errno_of(-1, "client");
	}
	return rc;
}

/*
 * creds-seen @NAME: a datagram to a server of its own that asks for its
 * sender's credentials (SO_PASSCRED): 0 when the pid it sees is ours,
 * ESRCH when another's. creds-sent @NAME: a datagram that names our own
 * credentials (SCM_CREDENTIALS): 0, or the errno of its send. creds-root
 * @NAME: one that names pid 1 and root's: what only root, or pid 1 of a
 * PID namespace of root's, may send.
 */
static int
creds_run(const char *kind, const char *arg)
{
	char c = 'x', cbuf[CMSG_SPACE(sizeof(struct ucred))];
	struct iovec iov = { &c, 1 };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cbuf, .msg_controllen = sizeof(cbuf) };
	struct ucred u = { getpid(), getuid(), getgid() };
	struct cmsghdr *cm;
	struct loop l;
	int s, t, on = 1;

	if (arg == NULL || arg[0] != '@' || loop_addr(&l, "abstract",
	    arg + 1) != 0)
		return 125;
	if (strcmp(kind, "creds-root") == 0)
		u = (struct ucred){ 1, 0, 0 };
	LOOP_TRY(s = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0));
	LOOP_TRY(bind(s, (struct sockaddr *)&l.addr, l.len));
	LOOP_TRY(setsockopt(s, SOL_SOCKET, SO_PASSCRED, &on, sizeof(on)));
	LOOP_TRY(t = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0));
	m.msg_name = &l.addr;
	m.msg_namelen = l.len;
	memset(cbuf, 0, sizeof(cbuf));
	cm = CMSG_FIRSTHDR(&m);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_CREDENTIALS;
	cm->cmsg_len = CMSG_LEN(sizeof(u));
	memcpy(CMSG_DATA(cm), &u, sizeof(u));
	if (strcmp(kind, "creds-seen") != 0) {
		LOOP_TRY(sendmsg(t, &m, 0));
		return 0;
	}
	LOOP_TRY(sendto(t, "x", 1, 0, (struct sockaddr *)&l.addr, l.len));
	m.msg_name = NULL;
	m.msg_namelen = 0;
	memset(cbuf, 0, sizeof(cbuf));
	LOOP_TRY(recvmsg(s, &m, 0));
	if ((cm = CMSG_FIRSTHDR(&m)) == NULL ||
	    cm->cmsg_type != SCM_CREDENTIALS)
		return EPROTO;
	memcpy(&u, CMSG_DATA(cm), sizeof(u));
	return u.pid == getpid() ? 0 : ESRCH;
}

int
probe_loop(int argc, char **argv)
{
	if (argc > 3 && strcmp(argv[2], "dgram") == 0)
		return dgram_run(argv[3]);
	if (argc > 3 && strncmp(argv[2], "creds-", 6) == 0)
		return creds_run(argv[2], argv[3]);
	return argc < 3 ? 125 : loop_run(argv[2], argc > 3 ? argv[3] : NULL);
}
