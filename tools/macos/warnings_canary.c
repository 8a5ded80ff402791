/*
 * Never compiles, on purpose. tools/test macos builds it for each Mac
 * after //... and passes only when zig's clang refuses it for every
 * warning an "expect:" comment names, each as an error: proof that the
 * warnings of .bazelrc reach the Macs' compile lines with -Werror, and
 * that code only a Mac compiles (an #ifdef __APPLE__ branch, as here) is
 * held to them. A warning turned off again (-Wno-...) fails that check.
 * Only warnings clang gives as it goes: the ones it gives at the end of a
 * file (-Wunused-function) it leaves out once there was an error.
 */
#ifdef __APPLE__
#include <stddef.h>

int canary_parameter(int fd);
int canary_compare(int n, size_t len);
int canary_shadow(int n);
int canary_fallthrough(int n);

int
canary_parameter(int fd)	/* expect: -Wunused-parameter (-Wextra) */
{
	return 0;
}

int
canary_compare(int n, size_t len)
{
	return n < len;	/* expect: -Wsign-compare (-Wextra) */
}

int
canary_shadow(int n)
{
	int m = n;

	{
		int n = m + 1;	/* expect: -Wshadow */

		return n;
	}
}

int
canary_fallthrough(int n)
{
	switch (n) {
	case 0:
		n++;
	case 1:	/* expect: -Wimplicit-fallthrough */
		return n;
	}
	return 0;
}

int
canary_unprototyped(void)	/* expect: -Wmissing-prototypes */
{
	return 0;
}
#endif
