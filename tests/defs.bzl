"""Test rules shared by the tests that run jobs through a helper."""

load("//:copts.bzl", "BSD_COPTS")

def helper_test(name, srcs, deps = [], data = [], size = "medium", linkopts = [], **kwargs):
    """A cmocka test that runs the fixture through confine-helper (Linux)."""
    native.cc_test(
        name = name,
        size = size,
        srcs = srcs,
        copts = BSD_COPTS,
        data = [
            "//tests:fixture",
            "//helper:confine-helper",
        ] + data,
        linkopts = ["-lcmocka", "-lpthread"] + linkopts,
        target_compatible_with = ["@platforms//os:linux"],
        deps = ["//tests:helperutil"] + deps,
        **kwargs
    )

def core_test(name, srcs, deps = [], data = [], size = "medium", **kwargs):
    """A cmocka test that runs the fixture through the core directly (Linux)."""
    native.cc_test(
        name = name,
        size = size,
        srcs = srcs,
        copts = BSD_COPTS,
        data = ["//tests:fixture"] + data,
        linkopts = ["-lcmocka"],
        target_compatible_with = ["@platforms//os:linux"],
        deps = ["//tests:jobrun"] + deps,
        **kwargs
    )
