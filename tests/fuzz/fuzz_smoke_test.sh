#!/bin/sh
# A short real libFuzzer run from the seed corpus; fails on any finding,
# and when the fuzzer did not actually run inputs.
set -u
root=$PWD
out=$(sh "$root/tests/fuzz/libfuzzer.sh" "$root" "$TEST_TMPDIR" 10 \
	"$root/tests/fuzz/corpus/wire" 2>&1)
rc=$?
printf '%s\n' "$out" | tail -15
[ "$rc" -eq 0 ] || { echo "fuzz_smoke_test: the fuzzer failed ($rc)"; exit 1; }
runs=$(printf '%s\n' "$out" | sed -n 's/^stat::number_of_executed_units: *//p')
[ -n "$runs" ] && [ "$runs" -gt 1000 ] || { echo "fuzz_smoke_test: only '$runs' inputs run"; exit 1; }
echo "fuzz_smoke_test: $runs inputs, no finding"
