"""The library as a Mac would ship it: libconfine.a and libconfine.dylib.

Both hold every object of //:confine, as tools/dist.bzl's Linux library
does, so that linking them proves the whole library resolves against
libSystem. The dylib is named @rpath/libconfine.0.dylib (Linux's soname is
libconfine.so.0). It exports every external symbol, not only confine_*:
zig 0.11's linker takes no -exported_symbols_list, which ld64 would.
"""

load("@bazel_tools//tools/cpp:toolchain_utils.bzl", "find_cpp_toolchain")

INSTALL_NAME = "@rpath/libconfine.0.dylib"

def _impl(ctx):
    cc_toolchain = find_cpp_toolchain(ctx)
    objects, flags = [], []
    for linker_input in ctx.attr._lib[CcInfo].linking_context.linker_inputs.to_list():
        for flag in linker_input.user_link_flags:
            if flag not in flags:
                flags.append(flag)
        for library in linker_input.libraries:
            objects.extend(library.pic_objects or library.objects)

    # ar keys members by basename: two of one name would silently be one.
    seen = {}
    for o in objects:
        if o.basename in seen:
            fail("two objects named %s: %s and %s" % (o.basename, seen[o.basename], o.path))
        seen[o.basename] = o.path
    tools = cc_toolchain.all_files

    archive = ctx.actions.declare_file("libconfine.a")
    ctx.actions.run(
        executable = cc_toolchain.ar_executable,
        arguments = ["rcsD", archive.path] + [o.path for o in objects],
        inputs = depset(objects, transitive = [tools]),
        outputs = [archive],
        mnemonic = "ConfineMacArchive",
        progress_message = "Archiving " + archive.short_path,
    )

    dylib = ctx.actions.declare_file("libconfine.dylib")
    ctx.actions.run(
        executable = cc_toolchain.compiler_executable,
        arguments = ["-shared", "-o", dylib.path, "-Wl,-install_name," + INSTALL_NAME] +
                    [o.path for o in objects] + flags,
        inputs = depset(objects, transitive = [tools]),
        outputs = [dylib],
        mnemonic = "ConfineMacDylib",
        progress_message = "Linking " + dylib.short_path,
    )
    return [DefaultInfo(files = depset([archive, dylib]))]

macos_library = rule(
    implementation = _impl,
    attrs = {
        "_lib": attr.label(default = "//:confine", providers = [CcInfo]),
        "_cc_toolchain": attr.label(default = "@bazel_tools//tools/cpp:current_cc_toolchain"),
    },
    fragments = ["cpp"],
    toolchains = ["@bazel_tools//tools/cpp:toolchain_type"],
)
