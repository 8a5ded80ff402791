/*
 * The Landlock UAPI up to ABI 7, carried here because Debian 12's kernel
 * headers stop at ABI 2. The kernel ABI is stable; names carry an ll_
 * prefix so they never collide with a system <linux/landlock.h>.
 */
#ifndef CONFINE_LANDLOCK_UAPI_H
#define CONFINE_LANDLOCK_UAPI_H

#include <stdint.h>

#define LL_NR_CREATE_RULESET 444
#define LL_NR_ADD_RULE 445
#define LL_NR_RESTRICT_SELF 446

#define LL_CREATE_RULESET_VERSION (1U << 0)

#define LL_RULE_PATH_BENEATH 1

struct ll_ruleset_attr {
	uint64_t handled_access_fs;
	uint64_t handled_access_net;  /* ABI 4 */
	uint64_t scoped;              /* ABI 6 */
};

struct ll_path_beneath_attr {
	uint64_t allowed_access;
	int32_t parent_fd;
} __attribute__((packed));

#define LL_FS_EXECUTE (1ULL << 0)
#define LL_FS_WRITE_FILE (1ULL << 1)
#define LL_FS_READ_FILE (1ULL << 2)
#define LL_FS_READ_DIR (1ULL << 3)
#define LL_FS_REMOVE_DIR (1ULL << 4)
#define LL_FS_REMOVE_FILE (1ULL << 5)
#define LL_FS_MAKE_CHAR (1ULL << 6)
#define LL_FS_MAKE_DIR (1ULL << 7)
#define LL_FS_MAKE_REG (1ULL << 8)
#define LL_FS_MAKE_SOCK (1ULL << 9)
#define LL_FS_MAKE_FIFO (1ULL << 10)
#define LL_FS_MAKE_BLOCK (1ULL << 11)
#define LL_FS_MAKE_SYM (1ULL << 12)
#define LL_FS_REFER (1ULL << 13)      /* ABI 2 */
#define LL_FS_TRUNCATE (1ULL << 14)   /* ABI 3 */
#define LL_FS_IOCTL_DEV (1ULL << 15)  /* ABI 5 */

#define LL_NET_BIND_TCP (1ULL << 0)     /* ABI 4 */
#define LL_NET_CONNECT_TCP (1ULL << 1)  /* ABI 4 */

#define LL_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0)  /* ABI 6 */
#define LL_SCOPE_SIGNAL (1ULL << 1)                /* ABI 6 */

#endif
