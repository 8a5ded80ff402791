"""Compiler and linker options shared by every C target of the project."""

# glibc hides Linux interfaces (O_PATH, pipe2, close_range) without
# _GNU_SOURCE. libbsd in overlay mode gives Linux the BSD interfaces macOS and the BSDs
# have natively (<sys/endian.h> be32enc, closefrom, setproctitle, strlcpy).
BSD_COPTS = select({
    "//:linux": ["-D_GNU_SOURCE", "-isystem", "/usr/include/bsd", "-DLIBBSD_OVERLAY"],
    "//conditions:default": [],
})

BSD_LINKOPTS = select({
    "//:linux": ["-lbsd"],
    "//conditions:default": [],
})

SECCOMP_LINKOPTS = select({
    "//:linux": ["-lseccomp"],
    "//conditions:default": [],
})

# CONFINE_TEST_SWITCHES where the build is for the tests (//:test_switches).
TEST_SWITCHES = select({
    "//:test_switches": ["CONFINE_TEST_SWITCHES"],
    "//conditions:default": [],
})
