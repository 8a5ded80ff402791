#!/bin/sh
# Builds the wire fuzzer with clang's libFuzzer, AddressSanitizer and
# UndefinedBehaviorSanitizer, and runs it.
#
#   libfuzzer.sh ROOT WORKDIR SECONDS [CORPUS...]
#
# ROOT holds src/, include/ and tests/fuzz/; new inputs go to WORKDIR/new,
# the seeds are read, never written. Exits non-zero on a finding.
set -eu
root=$1 work=$2 secs=$3
shift 3
command -v clang >/dev/null 2>&1 || { echo "libfuzzer.sh: clang not found (tools/setup installs it)" >&2; exit 2; }
mkdir -p "$work/new"
clang -g -O1 -std=gnu11 -D_GNU_SOURCE -isystem /usr/include/bsd -DLIBBSD_OVERLAY \
	-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
	-I"$root" -I"$root/include" \
	"$root/tests/fuzz/wire_fuzz.c" "$root/src/wire.c" "$root/src/spec.c" \
	"$root/src/policy.c" "$root/src/names.c" -lbsd -o "$work/wire_fuzz"
exec "$work/wire_fuzz" -max_total_time="$secs" -print_final_stats=1 \
	-max_len=65536 -artifact_prefix="$work/" "$work/new" "$@"
