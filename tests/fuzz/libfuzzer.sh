#!/bin/sh
# Builds one fuzz target with clang's libFuzzer, AddressSanitizer and
# UndefinedBehaviorSanitizer, and runs it.
#
#   libfuzzer.sh ROOT WORKDIR SECONDS TARGET [CORPUS...]
#
# TARGET: wire (tests/fuzz/wire_fuzz.c: the wire decoders, the spec and
# policy checks) or cli (tests/fuzz/cli_fuzz.c: confine-run's parsers and
# output). ROOT holds src/, include/, tools/ and tests/fuzz/; new inputs go
# to WORKDIR/new, the seeds are read, never written. Exits non-zero on a
# finding.
set -eu
root=$1 work=$2 secs=$3 target=$4
shift 4
case $target in
wire) srcs="src/core/wire.c src/core/spec.c helper/backend/policy.c src/core/names.c" ;;
cli) srcs="tools/cli.c src/core/names.c" ;;
*) echo "libfuzzer.sh: no fuzz target $target (wire or cli)" >&2; exit 2 ;;
esac
command -v clang >/dev/null 2>&1 || { echo "libfuzzer.sh: clang not found (tools/setup installs it)" >&2; exit 2; }
mkdir -p "$work/new"
objs=
for s in $srcs; do
	objs="$objs $root/$s"
done
# shellcheck disable=SC2086
clang -g -O1 -std=gnu11 -D_GNU_SOURCE -isystem /usr/include/bsd -DLIBBSD_OVERLAY \
	-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
	-I"$root" -I"$root/include" \
	"$root/tests/fuzz/${target}_fuzz.c" $objs -lbsd -o "$work/${target}_fuzz"
exec "$work/${target}_fuzz" -max_total_time="$secs" -print_final_stats=1 \
	-max_len=65536 -artifact_prefix="$work/" "$work/new" "$@"
