"""A C toolchain for macOS targets on a Linux host: zig's clang, its Darwin
libc headers and libSystem stubs. Only for compiling and linking: nothing it
builds runs here. Declared by tools/macos/repo.bzl, chosen by --platforms
(the macos-* configs of .bazelrc).
"""

load(
    "@bazel_tools//tools/cpp:cc_toolchain_config_lib.bzl",
    "artifact_name_pattern",
    "feature",
    "flag_group",
    "flag_set",
    "tool_path",
    "variable_with_value",
)
load("@bazel_tools//tools/build_defs/cc:action_names.bzl", "ACTION_NAMES")

_COMPILE = [
    ACTION_NAMES.assemble,
    ACTION_NAMES.preprocess_assemble,
    ACTION_NAMES.c_compile,
    ACTION_NAMES.cpp_compile,
]

_LINK = [
    ACTION_NAMES.cpp_link_executable,
    ACTION_NAMES.cpp_link_dynamic_library,
    ACTION_NAMES.cpp_link_nodeps_dynamic_library,
]

def _config_impl(ctx):
    cpu = ctx.attr.cpu
    return cc_common.create_cc_toolchain_config_info(
        ctx = ctx,
        toolchain_identifier = "zig-" + ctx.attr.target,
        host_system_name = "x86_64-linux",
        target_system_name = ctx.attr.target,
        target_cpu = "darwin_" + ("arm64" if cpu == "aarch64" else cpu),
        target_libc = "macosx",
        compiler = "clang",
        abi_version = "darwin",
        abi_libc_version = "darwin",
        tool_paths = [
            tool_path(name = "gcc", path = "cc-" + cpu),
            tool_path(name = "ar", path = "ar-" + cpu),
            # Never run for a plain build; there only because Bazel wants them.
            tool_path(name = "ld", path = "/bin/false"),
            tool_path(name = "cpp", path = "/bin/false"),
            tool_path(name = "gcov", path = "/bin/false"),
            tool_path(name = "nm", path = "nm"),
            tool_path(name = "objcopy", path = "objcopy"),
            tool_path(name = "objdump", path = "/bin/false"),
            tool_path(name = "strip", path = "/bin/false"),
        ],
        cxx_builtin_include_directories = ctx.attr.builtin_include_directories,
        artifact_name_patterns = [
            artifact_name_pattern("dynamic_library", "lib", ".dylib"),
        ],
        features = [
            # For target_libc "macosx" Bazel passes libtool's flags; zig has
            # llvm-ar, which takes ar's.
            feature(
                name = "archiver_flags",
                flag_sets = [flag_set(
                    actions = [ACTION_NAMES.cpp_link_static_library],
                    flag_groups = [
                        flag_group(flags = ["rcsD", "%{output_execpath}"]),
                        flag_group(
                            iterate_over = "libraries_to_link",
                            flag_groups = [
                                flag_group(
                                    flags = ["%{libraries_to_link.name}"],
                                    expand_if_equal = variable_with_value(
                                        name = "libraries_to_link.type",
                                        value = "object_file",
                                    ),
                                ),
                                flag_group(
                                    flags = ["%{libraries_to_link.object_files}"],
                                    iterate_over = "libraries_to_link.object_files",
                                    expand_if_equal = variable_with_value(
                                        name = "libraries_to_link.type",
                                        value = "object_file_group",
                                    ),
                                ),
                            ],
                            expand_if_available = "libraries_to_link",
                        ),
                    ],
                )],
            ),
            # Where tools/setup put the cmocka it built for this target, as a
            # Mac's /opt/homebrew would hold it.
            feature(
                name = "macos_cmocka",
                enabled = True,
                flag_sets = [
                    flag_set(
                        actions = _COMPILE,
                        flag_groups = [flag_group(flags = ["-isystem", ctx.attr.include_directory])],
                    ),
                    flag_set(
                        actions = _LINK,
                        flag_groups = [flag_group(flags = ["-L" + ctx.attr.library_directory])],
                    ),
                ],
            ),
        ],
    )

_zig_cc_toolchain_config = rule(
    implementation = _config_impl,
    attrs = {
        "cpu": attr.string(mandatory = True),
        "target": attr.string(mandatory = True),
        "include_directory": attr.string(mandatory = True),
        "library_directory": attr.string(mandatory = True),
        "builtin_include_directories": attr.string_list(mandatory = True),
    },
    provides = [CcToolchainConfigInfo],
)

def zig_macos_toolchain(cpu, target, include_directory, library_directory, builtin_include_directories):
    """The toolchain for one Mac architecture ("aarch64" or "x86_64")."""
    _zig_cc_toolchain_config(
        name = "config-" + cpu,
        cpu = cpu,
        target = target,
        include_directory = include_directory,
        library_directory = library_directory,
        builtin_include_directories = builtin_include_directories,
    )
    native.filegroup(
        name = "tools-" + cpu,
        srcs = ["cc-" + cpu, "ar-" + cpu, "nm", "objcopy"],
    )
    native.cc_toolchain(
        name = "cc-toolchain-" + cpu,
        all_files = ":tools-" + cpu,
        ar_files = ":tools-" + cpu,
        compiler_files = ":tools-" + cpu,
        dwp_files = ":tools-" + cpu,
        linker_files = ":tools-" + cpu,
        objcopy_files = ":tools-" + cpu,
        strip_files = ":tools-" + cpu,
        supports_param_files = True,
        toolchain_config = ":config-" + cpu,
    )
    native.toolchain(
        name = "toolchain-" + cpu,
        exec_compatible_with = [
            "@platforms//os:linux",
            "@platforms//cpu:x86_64",
        ],
        target_compatible_with = [
            "@platforms//os:macos",
            "@platforms//cpu:" + cpu,
        ],
        toolchain = ":cc-toolchain-" + cpu,
        toolchain_type = "@bazel_tools//tools/cpp:toolchain_type",
    )
