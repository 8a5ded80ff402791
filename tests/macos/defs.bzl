"""The real Seatbelt tests, defined only when Bazel runs on macOS (or when
the macOS build check asks for them, to compile and link them)."""

load("@host_os//:os.bzl", "MACOS_TESTS")
load("//:copts.bzl", "BSD_COPTS")

def macos_tests():
    if not MACOS_TESTS:
        return
    native.cc_test(
        name = "seatbelt_real_test",
        size = "medium",
        srcs = ["seatbelt_real_test.c"],
        copts = BSD_COPTS,
        data = ["//tests:fixture"],
        linkopts = ["-lcmocka"],
        target_compatible_with = ["@platforms//os:macos"],
        deps = ["//tests:contract"],
    )
