#!/bin/sh
# A short real libFuzzer run of each fuzz target from its seed corpus;
# fails on any finding, and when the fuzzer did not actually run inputs.
set -u
root=$PWD
status=0

smoke() { # TARGET SECONDS
	out=$(sh "$root/tests/fuzz/libfuzzer.sh" "$root" "$TEST_TMPDIR/$1" "$2" "$1" \
		"$root/tests/fuzz/corpus/$1" 2>&1)
	rc=$?
	printf '%s\n' "$out" | tail -15
	if [ "$rc" -ne 0 ]; then
		echo "fuzz_smoke_test: $1: the fuzzer failed ($rc)"
		status=1
		return
	fi
	runs=$(printf '%s\n' "$out" | sed -n 's/^stat::number_of_executed_units: *//p')
	if [ -z "$runs" ] || [ "$runs" -le 1000 ]; then
		echo "fuzz_smoke_test: $1: only '$runs' inputs run"
		status=1
		return
	fi
	echo "fuzz_smoke_test: $1: $runs inputs in $2 s, no finding"
}

smoke wire 10
smoke cli 5
exit "$status"
