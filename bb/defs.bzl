"""Where the Buildbarn runner's targets are built."""

# Linux only: Debian's gRPC and protobuf, openat2's RESOLVE_BENEATH.
LINUX = ["@platforms//os:linux"]

# Linux, and not under ThreadSanitizer, for what runs Debian's gRPC: its
# libraries (gRPC, abseil, protobuf) are not built with ThreadSanitizer,
# which sees none of the orderings they make and reports races in gRPC's
# code and ours alike (tests/bb/BUILD.bazel). Such a target is SKIPPED
# under --config=tsan, counted neither way by tools/test.
NOT_UNDER_TSAN = select({
    "//bb:tsan": ["//bb:never"],
    "//conditions:default": LINUX,
})
