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

def both_paths(test, name, tags = [], env = {}, **kwargs):
    """test (helper_test, core_test) three times, one target a path a job takes.

    NAME_init: each job under an init of its own in namespaces of its own
    (helper/backend/ns.h), the path wherever they can be made: unsandboxed, with
    the cgroups a helper makes where it may. NAME_direct and
    NAME_shepherd: where no namespace can be made (CONFINE_NO_NAMESPACES=1,
    a switch of the tests' build): the helper (or the test, through the
    core) starts each job itself, which needs a writable cgroup v2, so
    unsandboxed; or every job under a shepherd (CONFINE_SHEPHERD=1).
    CONFINE_TEST_PATH says which to the test, which fails unless its jobs
    show it (tu_path_setup, then jr_on_its_path or hu_on_its_path first).
    NAME runs the three.
    """
    unsandboxed = tags + ([] if "no-sandbox" in tags else ["no-sandbox"])
    test(
        name = name + "_init",
        env = dict(env, CONFINE_TEST_PATH = "init"),
        tags = unsandboxed,
        **kwargs
    )
    test(
        name = name + "_direct",
        env = dict(env, CONFINE_TEST_PATH = "direct", CONFINE_NO_NAMESPACES = "1"),
        tags = unsandboxed,
        **kwargs
    )
    test(
        name = name + "_shepherd",
        env = dict(env, CONFINE_TEST_PATH = "shepherd", CONFINE_NO_NAMESPACES = "1",
                   CONFINE_SHEPHERD = "1"),
        tags = tags,
        **kwargs
    )
    native.test_suite(
        name = name,
        tests = [name + "_init", name + "_direct", name + "_shepherd"],
    )
