"""What tools/install installs, built in a configuration of its own.

confine_dist lays out, beneath a directory named after the target, what
goes beneath PREFIX: lib/libconfine.so (with a soname) and lib/libconfine.a
holding every object of //src/client as one (only confine_* names global), bin/confine-run, libexec/confine-helper,
the header and the manual pages; beside them the files prefix, soname and
libs.private that tools/install-dist.sh reads. Its configuration drops any
sanitizer (an installed library is linked by plain cc) and compiles the
helper's installed path in, as the library's default.
"""

load("@bazel_tools//tools/cpp:toolchain_utils.bzl", "find_cpp_toolchain")

SONAME = "libconfine.so.0"

_PREFIX = "//tools:prefix"
_COPT = "//command_line_option:copt"
_LINKOPT = "//command_line_option:linkopt"

PrefixInfo = provider(fields = ["value"])

def _prefix_flag_impl(ctx):
    return [PrefixInfo(value = ctx.build_setting_value)]

# --//tools:prefix=PATH, set by tools/install.
prefix_flag = rule(
    implementation = _prefix_flag_impl,
    build_setting = config.string(flag = True),
)

def _checked_prefix(prefix):
    # It ends up in a C string and a pkg-config file: nothing to quote.
    if not prefix.startswith("/"):
        fail("the prefix %r is not an absolute path" % prefix)
    for c in prefix.elems():
        if not (c.isalnum() or c in "/._+-"):
            fail("the prefix %r has a %r: only letters, digits and /._+- are taken" % (prefix, c))
    return prefix.rstrip("/")

def _unsanitized(flags):
    return [f for f in flags if not f.startswith("-fsanitize") and not f.startswith("-fno-sanitize")]

def _dist_transition_impl(settings, attr):
    prefix = _checked_prefix(attr.prefix or settings[_PREFIX])
    helper = prefix + "/libexec/confine-helper"
    return {
        # Every C file gets the define; only src/client/client.c reads it.
        _COPT: _unsanitized(settings[_COPT]) + ["-DCONFINE_HELPER_DEFAULT=\"%s\"" % helper],
        _LINKOPT: _unsanitized(settings[_LINKOPT]),
    }

_dist_transition = transition(
    implementation = _dist_transition_impl,
    inputs = [_PREFIX, _COPT, _LINKOPT],
    outputs = [_COPT, _LINKOPT],
)

def objects_and_flags(lib):
    """Every object beneath lib (PIC: the archive goes into PIE programs)."""
    objects, flags = [], []
    for linker_input in lib[CcInfo].linking_context.linker_inputs.to_list():
        for flag in linker_input.user_link_flags:
            if flag not in flags:
                flags.append(flag)
        for library in linker_input.libraries:
            objects.extend(library.pic_objects or library.objects)
    return objects, flags

def check_basenames(objects):
    """Fails on two objects of one name: ar keys members by basename."""
    seen = {}
    for o in objects:
        if o.basename in seen:
            fail("two objects named %s: %s and %s" % (o.basename, seen[o.basename], o.path))
        seen[o.basename] = o.path

def _archive(ctx, cc_toolchain, objects, out):
    check_basenames(objects)
    ctx.actions.run(
        executable = cc_toolchain.ar_executable,
        arguments = ["rcsD", out.path] + [o.path for o in objects],
        inputs = depset(objects, transitive = [cc_toolchain.all_files]),
        outputs = [out],
        mnemonic = "ConfineArchive",
        progress_message = "Archiving " + out.short_path,
    )

def feature_config(ctx, cc_toolchain):
    """The toolchain's features, as the rule asks for them."""
    return cc_common.configure_features(
        ctx = ctx,
        cc_toolchain = cc_toolchain,
        requested_features = ctx.features,
        unsupported_features = ctx.disabled_features,
    )

def localize(ctx, cc_toolchain, objects, out):
    """Archives objects as one, where only confine_* names stay global.

    ld -r binds the library's own references to each other; objcopy then
    makes every other defined name local, so a host's own serve, fd_close
    or job_start can neither collide with the library's nor be called by it.
    """
    merged = ctx.actions.declare_file(out.basename + ".merged.o", sibling = out)
    local = ctx.actions.declare_file("confine.o", sibling = out)
    tools = depset(objects, transitive = [cc_toolchain.all_files])
    ctx.actions.run(
        executable = cc_toolchain.ld_executable,
        arguments = ["-r", "-o", merged.path] + [o.path for o in objects],
        inputs = tools,
        outputs = [merged],
        mnemonic = "ConfineMerge",
        progress_message = "Merging the objects of " + out.short_path,
    )
    ctx.actions.run(
        executable = cc_toolchain.objcopy_executable,
        arguments = ["--wildcard", "--keep-global-symbol=confine_*", merged.path, local.path],
        inputs = depset([merged], transitive = [cc_toolchain.all_files]),
        outputs = [local],
        mnemonic = "ConfineLocalize",
        progress_message = "Localizing the internal names of " + out.short_path,
    )
    _archive(ctx, cc_toolchain, [local], out)

def rename_macho(ctx, cc_toolchain, objects):
    """The objects, each internal name renamed confine__NAME (Mach-O).

    zig 0.11 links no relocatable Mach-O (ld -r), so localize cannot run
    for the Macs: tools/macos/localize-macho.sh renames instead, with
    LLVM's nm and objcopy, definitions and references alike. Every global
    name is then confine_*: the API's, or internal under the reserved
    confine__ prefix. Returns the renamed objects, in order.
    """
    where = ctx.label.name + ".macho/"
    renamed = [ctx.actions.declare_file(where + o.basename) for o in objects]
    names = ctx.actions.declare_file(where + "renamed.txt")
    ctx.actions.run(
        executable = ctx.executable._localize_macho,
        arguments = [
            cc_toolchain.nm_executable,
            cc_toolchain.objcopy_executable,
            names.path,
            renamed[0].dirname,
        ] + [o.path for o in objects],
        inputs = depset(objects, transitive = [cc_toolchain.all_files]),
        outputs = renamed + [names],
        mnemonic = "ConfineRename",
        progress_message = "Renaming the internal names of " + ctx.label.name,
    )
    return renamed

MACHO_ATTRS = {
    "_localize_macho": attr.label(
        default = "//tools/macos:localize-macho.sh",
        executable = True,
        cfg = "exec",
        allow_single_file = True,
    ),
}

def _local_library_impl(ctx):
    cc_toolchain = find_cpp_toolchain(ctx)
    objects, flags = objects_and_flags(ctx.attr.lib)
    archive = ctx.actions.declare_file("lib%s.a" % ctx.label.name)
    if ctx.attr.macho:
        _archive(ctx, cc_toolchain, rename_macho(ctx, cc_toolchain, objects), archive)
    else:
        localize(ctx, cc_toolchain, objects, archive)
    features = feature_config(ctx, cc_toolchain)
    library = cc_common.create_library_to_link(
        actions = ctx.actions,
        feature_configuration = features,
        cc_toolchain = cc_toolchain,
        static_library = archive,
    )
    linker_input = cc_common.create_linker_input(
        owner = ctx.label,
        libraries = depset([library]),
        user_link_flags = depset(flags),
    )
    return [
        DefaultInfo(files = depset([archive]), runfiles = ctx.runfiles(files = [archive])),
        CcInfo(
            compilation_context = ctx.attr.lib[CcInfo].compilation_context,
            linking_context = cc_common.create_linking_context(
                linker_inputs = depset([linker_input]),
            ),
        ),
    ]

# lib, linked as one object whose only global names are confine_*.
confine_local_library = rule(
    implementation = _local_library_impl,
    attrs = dict({
        "lib": attr.label(mandatory = True, providers = [CcInfo]),
        # Mach-O: renamed (rename_macho) rather than merged and localized.
        "macho": attr.bool(default = False),
        "_cc_toolchain": attr.label(default = "@bazel_tools//tools/cpp:current_cc_toolchain"),
    }, **MACHO_ATTRS),
    fragments = ["cpp"],
    toolchains = ["@bazel_tools//tools/cpp:toolchain_type"],
)

def _link(ctx, cc_toolchain, objects, flags):
    features = feature_config(ctx, cc_toolchain)
    out = cc_common.link(
        actions = ctx.actions,
        name = "confine_" + ctx.label.name,
        feature_configuration = features,
        cc_toolchain = cc_toolchain,
        # Objects, not archives: every one is linked, used or not.
        compilation_outputs = cc_common.create_compilation_outputs(
            objects = depset(objects),
            pic_objects = depset(objects),
        ),
        user_link_flags = [
            "-Wl,-soname," + SONAME,
            # Only the API: the header's confine_* and nothing else.
            "-Wl,--version-script," + ctx.file._version_script.path,
            "-Wl,--as-needed",
        ] + flags,
        additional_inputs = [ctx.file._version_script],
        output_type = "dynamic_library",
    )
    lib = out.library_to_link
    return lib.resolved_symlink_dynamic_library or lib.dynamic_library

def _place(ctx, outs, path, target):
    f = ctx.actions.declare_file(ctx.label.name + "/" + path)
    ctx.actions.symlink(output = f, target_file = target)
    outs.append(f)

def _write(ctx, outs, path, content):
    f = ctx.actions.declare_file(ctx.label.name + "/" + path)
    ctx.actions.write(f, content + "\n")
    outs.append(f)

def _dist_impl(ctx):
    cc_toolchain = find_cpp_toolchain(ctx)
    objects, flags = objects_and_flags(ctx.attr._lib)
    archive = ctx.actions.declare_file(ctx.label.name + "/lib/libconfine.a")
    localize(ctx, cc_toolchain, objects, archive)
    outs = [archive]
    _place(ctx, outs, "lib/libconfine.so", _link(ctx, cc_toolchain, objects, flags))
    _place(ctx, outs, "bin/confine-run", ctx.executable._run)
    _place(ctx, outs, "libexec/confine-helper", ctx.executable._helper)
    _place(ctx, outs, "include/confine/confine.h", ctx.file._header)
    for page in ctx.files._man:
        _place(ctx, outs, "share/man/man%s/%s" % (page.extension, page.basename), page)
    prefix = _checked_prefix(ctx.attr.prefix or ctx.attr._prefix[PrefixInfo].value)
    _write(ctx, outs, "prefix", prefix or "/")
    _write(ctx, outs, "soname", SONAME)
    _write(ctx, outs, "libs.private", " ".join(flags))
    return [DefaultInfo(files = depset(outs), runfiles = ctx.runfiles(files = outs))]

confine_dist = rule(
    implementation = _dist_impl,
    cfg = _dist_transition,
    attrs = {
        # Empty: --//tools:prefix decides.
        "prefix": attr.string(),
        # The client's own objects: //:confine is them, localized.
        "_lib": attr.label(default = "//src/client", providers = [CcInfo]),
        "_run": attr.label(default = "//tools:confine-run", executable = True, cfg = "target"),
        "_helper": attr.label(default = "//helper:confine-helper", executable = True, cfg = "target"),
        "_header": attr.label(default = "//:include/confine/confine.h", allow_single_file = [".h"]),
        "_man": attr.label_list(default = [
            "//docs/man:confine-helper.8",
            "//docs/man:confine-run.1",
        ], allow_files = True),
        "_version_script": attr.label(default = "//tools:libconfine.map", allow_single_file = True),
        "_prefix": attr.label(default = _PREFIX),
        "_cc_toolchain": attr.label(default = "@bazel_tools//tools/cpp:current_cc_toolchain"),
        "_allowlist_function_transition": attr.label(
            default = "@bazel_tools//tools/allowlists/function_transition_allowlist",
        ),
    },
    fragments = ["cpp"],
    toolchains = ["@bazel_tools//tools/cpp:toolchain_type"],
)
