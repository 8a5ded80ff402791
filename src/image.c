#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include "src/fd.h"
#include "src/image.h"

#ifndef MFD_EXEC
#define MFD_EXEC 0x0010U
#endif

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int image_err;
static char path_buf[32];

/*
 * Written once, then sealed: no one, not even this process, may change
 * what the next helper runs.
 */
static int
make(void)
{
	size_t off = 0;
	ssize_t n;
	int fd, high;

	fd = memfd_create("confine-helper", MFD_CLOEXEC | MFD_ALLOW_SEALING |
	    MFD_EXEC);
	if (fd < 0 && errno == EINVAL)  /* before Linux 6.3: no MFD_EXEC */
		fd = memfd_create("confine-helper", MFD_CLOEXEC |
		    MFD_ALLOW_SEALING);
	if (fd < 0)
		return -errno;
	while (off < image_len) {
		n = write(fd, image_bytes + off,
		    image_len - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			fd_closep(&fd);
			return n < 0 ? -errno : -EIO;
		}
		off += (size_t)n;
	}
	if (fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE |
	    F_SEAL_SEAL) != 0 || (high = fcntl(fd, F_DUPFD_CLOEXEC, 10)) < 0) {
		fd_closep(&fd);
		return -errno;
	}
	close(fd);
	snprintf(path_buf, sizeof(path_buf), "/proc/self/fd/%d", high);
	return 0;
}

static void
make_once(void)
{
	image_err = make();
}

int
image_path(const char **path)
{
	pthread_once(&once, make_once);
	if (image_err != 0)
		return image_err;
	*path = path_buf;
	return 0;
}
