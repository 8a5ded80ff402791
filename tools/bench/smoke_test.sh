#!/bin/sh
# The benchmark as a smoke test: every section runs, tiny (--smoke), and
# prints sane numbers: each figure there, positive where it must be. No
# timing is asserted. bubblewrap is part of the benchmark: without it this
# fails, saying so.
set -u
out=${TEST_TMPDIR:-/tmp}/bench-smoke.tsv
log=$(tools/bench/bench --smoke --out "$out" 2>&1)
rc=$?
printf '%s\n' "$log"
fail() { echo "bench_smoke_test: $*"; exit 1; }
[ "$rc" -eq 0 ] || fail "the benchmark exited $rc"
[ -s "$out" ] || fail "no results file"
head -1 "$out" | grep -q '^section	method	variant	host_mib	threads	jobs	n	p50	p90	p99	min	max	mean	unit$' ||
	fail "the TSV header changed"
awk -F'\t' 'NR > 1 && NF != 14 { bad = 1 } END { exit bad }' "$out" ||
	fail "a TSV row without 14 columns"

# rows SECTION METHOD VARIANT: how many rows, each with n > 0 and p50 > 0.
positive() {
	n=$(awk -F'\t' -v s="$1" -v m="$2" -v v="$3" '
		$1 == s && $2 == m && (v == "" || $3 == v) {
			if ($7 > 0 && $8 > 0 && $10 >= $8) ok++; else bad++ }
		END { print bad ? -1 : ok + 0 }' "$out")
	[ "$n" -gt 0 ] || fail "$1 $2 $3: missing, or not positive"
}
for m in fork+exec posix_spawn confine-landlock confine-none bwrap floor-server \
    floor-shepherd floor-vfork floor-confined; do
	positive latency "$m" ""
done
positive phase confine-landlock spawn
positive throughput confine-landlock ""
positive throughput posix_spawn ""
positive throughput floor-vfork ""
positive throughput floor-confined ""
positive deadline host-observed single
positive deadline host-observed spread
positive deadline host-observed burst
positive memory helper idle-fresh
positive memory helper inflight
positive memory shepherd rss
positive cpu helper self
positive cpu job own
[ "$(grep -c '^target	' "$out")" -eq 9 ] || fail "not 9 target rows"
printf '%s\n' "$log" | grep -q '^== issue 14 targets' || fail "no targets table"
echo "bench_smoke_test: ok"
