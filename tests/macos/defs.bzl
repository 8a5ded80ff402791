"""The real Seatbelt tests, defined only when Bazel runs on macOS."""

load("@host_os//:os.bzl", "HOST_OS")
load("//:copts.bzl", "BSD_COPTS")

def macos_tests():
    if not HOST_OS.startswith("mac"):
        return
    native.cc_test(
        name = "seatbelt_real_test",
        size = "medium",
        srcs = ["seatbelt_real_test.c"],
        copts = BSD_COPTS,
        data = ["//tests:fixture"],
        linkopts = ["-lcmocka"],
        deps = ["//tests:contract"],
    )
