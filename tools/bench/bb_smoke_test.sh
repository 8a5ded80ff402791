#!/bin/sh
# The Buildbarn runner benchmark as a smoke test: a tiny run starts both
# runners, answers every Run and prints a row per method. No timing is
# asserted.
set -u
fail() { echo "bb_smoke_test: $*"; exit 1; }
out=$(tools/bench/bb --runs 4 --rounds 2 --dir "${TEST_TMPDIR:-/tmp}" 2>&1)
rc=$?
printf '%s\n' "$out"
[ "$rc" -eq 0 ] || fail "the benchmark exited $rc"
for m in "posix_spawn /bin/true" "plain gRPC runner" "confine-bb-runner" \
    "confine-bb-runner --no-tmp"; do
	printf '%s\n' "$out" | grep -Eq "^$m +4 +[0-9]+ +[0-9]+ +[0-9]+ +[0-9]+\$" ||
		fail "no row of 4 runs for $m"
done
printf '%s\n' "$out" | grep -q '^confine-bb-runner over the plain runner: p50 [+-]' ||
	fail "no comparison line"
left=$(ls -d "${TEST_TMPDIR:-/tmp}"/confine-bb-bench.* 2>/dev/null)
[ -z "$left" ] || fail "left behind: $left"
