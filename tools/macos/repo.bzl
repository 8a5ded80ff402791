"""The macOS cross toolchain's repository: zig's clang, found where tools/setup put it.

tools/setup installs zig from the npm registry beneath .cache/zig and builds
cmocka for each Mac architecture beneath .cache/macos. This rule only points
at them: it writes a wrapper per architecture and the BUILD file declaring the
toolchains (tools/macos/cc_toolchain.bzl), with absolute paths, since Bazel's
header check wants every system header directory absolute. Nothing is
fetched; a missing zig makes each compile fail, saying so.
"""

def _pins(ctx):
    """toolchain.env's NAME=VALUE lines, the pins tools/macos/setup installs."""
    pins = {}
    for line in ctx.read(Label("//tools/macos:toolchain.env")).splitlines():
        if line and not line.startswith("#"):
            name, _, value = line.partition("=")
            pins[name] = value
    return pins

# Bazel's cpu constraint, zig's -target.
ARCHS = {
    "aarch64": "aarch64-macos",
    "x86_64": "x86_64-macos",
}

def _impl(ctx):
    pins = _pins(ctx)
    dot_cache = ctx.path(str(ctx.path(Label("//:WORKSPACE")).dirname) + "/.cache")

    # Resolved, as zig names the headers it reads: .cache may be a symlink
    # (one zig for several work trees).
    if dot_cache.exists:
        dot_cache = dot_cache.realpath
    zig_home = "%s/zig/node_modules/%s" % (dot_cache, pins["ZIG_PACKAGE"])
    cache = "%s/zig-cache" % dot_cache
    sysroot = "%s/macos" % dot_cache
    build = ['load("@//tools/macos:cc_toolchain.bzl", "zig_macos_toolchain")', ""]

    # LLVM's nm and objcopy read and rewrite Mach-O (zig 0.11 has neither
    # for it): they rename the library's internal names (tools/dist.bzl).
    for tool in ["nm", "objcopy"]:
        found = ctx.which("llvm-%s-14" % tool) or ctx.which("llvm-" + tool)
        ctx.file(tool, "\n".join([
            "#!/bin/sh",
            "# llvm-%s for the Macs, found by tools/macos/repo.bzl." % tool,
            "exec '%s' \"$@\"" % found if found else
            "echo 'no llvm-%s (Debian: llvm-14; tools/setup installs it)' >&2; exit 1" % tool,
            "",
        ]), executable = True)
    for cpu, target in ARCHS.items():
        for tool in ["cc", "ar"]:
            ctx.template(
                "%s-%s" % (tool, cpu),
                Label("//tools/macos:zig.sh.tpl"),
                substitutions = {
                    "%{tool}": tool,
                    "%{zig}": zig_home + "/zig",
                    "%{zig_version}": pins["ZIG_VERSION"],
                    "%{target}": target,
                    "%{cache}": cache,
                },
                executable = True,
            )
        build.append("zig_macos_toolchain(")
        build.append("    cpu = %r," % cpu)
        build.append("    target = %r," % target)
        build.append("    library_directory = %r," % ("%s/%s/lib" % (sysroot, target)))
        build.append("    include_directory = %r," % (sysroot + "/include"))
        build.append("    builtin_include_directories = %r," % [
            zig_home + "/lib/include",
            zig_home + "/lib/libc/include",
            sysroot + "/include",
        ])
        build.append(")")
        build.append("")
    ctx.file("BUILD.bazel", "\n".join(build))

zig_macos_repository = repository_rule(
    implementation = _impl,
    local = True,
)
