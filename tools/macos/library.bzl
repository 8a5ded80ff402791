"""The library as a Mac would ship it: libconfine.a and libconfine.dylib.

Both hold every object of //src/client, as tools/dist.bzl's Linux library
does, so that linking them proves the whole library resolves against
libSystem, with each internal name renamed confine__NAME as //:confine's
are (tools/dist.bzl's rename_macho). The dylib is named
@rpath/libconfine.0.dylib (Linux's soname is libconfine.so.0). It exports
every external symbol, the confine__ ones too: zig 0.11's linker takes no
-exported_symbols_list, which ld64 would. Both are made by the C
toolchain's own archiver and linker actions; the renaming needs LLVM's nm
and objcopy, which a Mac has only with LLVM installed (unverified there).
"""

load("@bazel_tools//tools/cpp:toolchain_utils.bzl", "find_cpp_toolchain")
load(
    "//tools:dist.bzl",
    "MACHO_ATTRS",
    "check_basenames",
    "objects_and_flags",
    "rename_macho",
    "feature_config",
)

INSTALL_NAME = "@rpath/libconfine.0.dylib"

def _impl(ctx):
    cc_toolchain = find_cpp_toolchain(ctx)
    features = feature_config(ctx, cc_toolchain)
    objects, flags = objects_and_flags(ctx.attr._lib)
    objects = rename_macho(ctx, cc_toolchain, objects)
    check_basenames(objects)

    # Objects, not archives: every one is archived and linked, used or not.
    outputs = cc_common.create_compilation_outputs(
        objects = depset(objects),
        pic_objects = depset(objects),
    )
    context, _ = cc_common.create_linking_context_from_compilation_outputs(
        actions = ctx.actions,
        feature_configuration = features,
        cc_toolchain = cc_toolchain,
        compilation_outputs = outputs,
        name = "confine",
        disallow_dynamic_library = True,
    )
    archive = None
    for linker_input in context.linker_inputs.to_list():
        for library in linker_input.libraries:
            archive = archive or library.static_library or library.pic_static_library
    dylib = cc_common.link(
        actions = ctx.actions,
        name = "confine",
        feature_configuration = features,
        cc_toolchain = cc_toolchain,
        compilation_outputs = outputs,
        user_link_flags = ["-Wl,-install_name," + INSTALL_NAME] + flags,
        output_type = "dynamic_library",
    ).library_to_link
    dylib = dylib.resolved_symlink_dynamic_library or dylib.dynamic_library
    return [DefaultInfo(files = depset([archive, dylib]))]

macos_library = rule(
    implementation = _impl,
    attrs = dict({
        "_lib": attr.label(default = "//src/client", providers = [CcInfo]),
        "_cc_toolchain": attr.label(default = "@bazel_tools//tools/cpp:current_cc_toolchain"),
    }, **MACHO_ATTRS),
    fragments = ["cpp"],
    toolchains = ["@bazel_tools//tools/cpp:toolchain_type"],
)
