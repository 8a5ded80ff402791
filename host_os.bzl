"""The host's operating system, for targets that exist only on one."""

def _host_os_impl(ctx):
    ctx.file("BUILD.bazel", "")
    ctx.file("os.bzl", "HOST_OS = %r\n" % ctx.os.name)

host_os = repository_rule(
    implementation = _host_os_impl,
    local = True,
)
