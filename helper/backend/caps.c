#include <errno.h>
#include <linux/capability.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "helper/backend/caps.h"

int
caps_drop_bounding(void)
{
	int cap, in;

	/* Up to the last capability this kernel knows: then EINVAL. */
	for (cap = 0; (in = prctl(PR_CAPBSET_READ, cap, 0, 0, 0)) >= 0; cap++)
		if (in == 1 && prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0)
			return -errno;
	return errno == EINVAL && cap > 0 ? 0 : -errno;
}

int
caps_clear(void)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3,
		.pid = 0,
	};
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3];

	memset(data, 0, sizeof(data));
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0)
		return -errno;
	if (syscall(SYS_capset, &hdr, data) != 0)
		return -errno;
	return 0;
}
