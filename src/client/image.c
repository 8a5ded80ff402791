#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include "src/core/fd.h"
#include "src/client/image.h"

#ifndef MFD_EXEC
#define MFD_EXEC 0x0010U
#endif

/*
 * Written, then sealed: no one, not even this process, may change what
 * the helper runs. Made for each start, and closed after it: a
 * descriptor kept for the next start would be the host's to close or
 * reuse by mistake, and that start would exec whatever was there.
 */
int
image_open(char path[IMAGE_PATH_LEN], int *fd)
{
	size_t off = 0;
	ssize_t n;
	int mfd, high, rc;

	mfd = memfd_create("confine-helper", MFD_CLOEXEC | MFD_ALLOW_SEALING |
	    MFD_EXEC);
	if (mfd < 0 && errno == EINVAL)  /* before Linux 6.3: no MFD_EXEC */
		mfd = memfd_create("confine-helper", MFD_CLOEXEC |
		    MFD_ALLOW_SEALING);
	if (mfd < 0)
		return -errno;
	while (off < image_len) {
		n = write(mfd, image_bytes + off, image_len - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			rc = n < 0 ? -errno : -EIO;
			close(mfd);
			return rc;
		}
		off += (size_t)n;
	}
	if (fcntl(mfd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE |
	    F_SEAL_SEAL) != 0 || (high = fcntl(mfd, F_DUPFD_CLOEXEC, 10)) < 0) {
		rc = -errno;
		close(mfd);
		return rc;
	}
	close(mfd);
	snprintf(path, IMAGE_PATH_LEN, "/proc/self/fd/%d", high);
	*fd = high;
	return 0;
}
