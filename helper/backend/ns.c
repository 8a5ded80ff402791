#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "helper/backend/ns.h"
#include "src/core/fd.h"
#include "src/core/sigpipe.h"

/* Decimal digits of v into buf (no allocation, no locale: after fork). */
static size_t
put_uint(char *buf, unsigned long v)
{
	char tmp[24];
	size_t n = 0, i;

	do
		tmp[n++] = (char)('0' + v % 10);
	while ((v /= 10) != 0);
	for (i = 0; i < n; i++)
		buf[i] = tmp[n - 1 - i];
	return n;
}

static int
write_file(const char *path, const char *text, size_t len)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), rc = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, text, len) != (ssize_t)len)
		rc = -errno;
	close(fd);
	return rc;
}

/* "ID ID 1": the one id, mapped to itself. */
static int
map_one(const char *path, unsigned long id)
{
	char line[64];
	size_t n;

	n = put_uint(line, id);
	line[n++] = ' ';
	n += put_uint(line + n, id);
	memcpy(line + n, " 1", 2);
	return write_file(path, line, n + 2);
}

int
ns_map_self(uid_t uid, gid_t gid, enum op *op)
{
	int rc, dumpable;

	*op = OP_ID_MAP;
	/*
	 * A process that changed its uid without exec since (a host that
	 * dropped root, then forked its helper) is not dumpable, and its
	 * /proc/self is root's, whom the new namespace does not map: dumpable
	 * just for the three writes.
	 */
	dumpable = prctl(PR_GET_DUMPABLE, 0, 0, 0, 0);
	if (dumpable == 0 && prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) != 0)
		return -errno;
	rc = write_file("/proc/self/setgroups", "deny", 4);
	if (rc == 0)
		rc = map_one("/proc/self/uid_map", uid);
	if (rc == 0)
		rc = map_one("/proc/self/gid_map", gid);
	if (dumpable == 0 && prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0 && rc == 0)
		rc = -errno;
	if (rc == 0)
		*op = OP_NONE;
	return rc;
}

pid_t
ns_clone_init(bool userns)
{
	return sigpipe_clone(CLONE_NEWPID | (userns ? CLONE_NEWUSER : 0));
}

/* The loopback interface up: the namespace's one network. */
static int
lo_up(void)
{
	struct ifreq ifr;
	int s, rc = 0;

	s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		return -errno;
	memset(&ifr, 0, sizeof(ifr));
	memcpy(ifr.ifr_name, "lo", 3);
	if (ioctl(s, SIOCGIFFLAGS, &ifr) != 0)
		rc = -errno;
	ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
	if (rc == 0 && ioctl(s, SIOCSIFFLAGS, &ifr) != 0)
		rc = -errno;
	close(s);
	return rc;
}

int
ns_enter(enum op *op)
{
	int rc;

	*op = OP_UNSHARE_NS;
	if (unshare(CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS) != 0)
		return -errno;
	*op = OP_LO_UP;
	if ((rc = lo_up()) != 0)
		return rc;
	*op = OP_NONE;
	return 0;
}
