#!/bin/sh
# zig %{tool} for %{target}: Bazel's macOS compiler or archiver, written by
# tools/macos/repo.bzl. The cache is shared by every action, so that zig
# builds compiler-rt and libSystem's stubs once.
zig='%{zig}'
if [ ! -x "$zig" ]; then
	echo "zig %{zig_version} is not installed at $zig: run tools/setup" >&2
	exit 1
fi
ZIG_GLOBAL_CACHE_DIR='%{cache}'
ZIG_LOCAL_CACHE_DIR='%{cache}'
export ZIG_GLOBAL_CACHE_DIR ZIG_LOCAL_CACHE_DIR
case '%{tool}' in
cc) exec "$zig" cc -target '%{target}' "$@" ;;
# A Mac's linker wants BSD archives, with their symbol table.
ar) exec "$zig" ar --format=darwin "$@" ;;
esac
exit 1
