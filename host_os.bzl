"""The host's operating system, for targets that exist only on one.

MACOS_TESTS says whether tests/macos defines its tests: on a Mac, and where
CONFINE_MACOS_TESTS=1 asks for them (the macos config of .bazelrc sets it,
so that the macOS build check builds them too; there they are marked
macOS-only, so a Linux build still skips them).
"""

def _host_os_impl(ctx):
    ctx.file("BUILD.bazel", "")
    macos = ctx.os.name.startswith("mac") or ctx.os.environ.get("CONFINE_MACOS_TESTS") == "1"
    ctx.file("os.bzl", "HOST_OS = %r\nMACOS_TESTS = %r\n" % (ctx.os.name, macos))

host_os = repository_rule(
    implementation = _host_os_impl,
    environ = ["CONFINE_MACOS_TESTS"],
    local = True,
)
