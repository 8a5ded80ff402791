#!/bin/sh
# The benchmark as a smoke test: every section runs, tiny (--smoke), and
# prints sane numbers: each figure there, positive where it must be; each
# helper's path said; the memory section again with --shepherd. No timing
# is asserted. bubblewrap is part of the benchmark: without it this
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
    floor-shepherd floor-vfork floor-confined floor-view; do
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
positive deadline floor-burst burst
positive memory helper idle-fresh
positive memory helper inflight
positive cpu helper self
positive cpu job own
positive latency confine-shepherd ""
positive phase confine-shepherd spawn
positive latency confine-unprepared ""
positive latency floor-ns ""
positive latency floor-tmp ""
positive latency floor-prepared ""
positive phase confine-unprepared spawn
positive memory processes per-job
positive cpu confine in-all

# paths LOG TSV HELPER...: each helper's path line and row; the processes
# per job in flight as the main helper's path has them (the job, and its
# shepherd), a stray one at the most.
paths() {
	l=$1 t=$2
	shift 2
	for w in "$@"; do
		printf '%s\n' "$l" | grep -Eq "^path: $w +\(pid [0-9]+\) (direct|shepherd):" ||
			fail "no path line for $w"
		awk -F'\t' -v w="$w" '$1 == "path" && $2 == w &&
		    ($3 == "direct" || $3 == "shepherd") { ok = 1 } END { exit !ok }' "$t" ||
			fail "no path row for $w"
	done
	awk -F'\t' '$1 == "path" && $2 == "helper" { want = $3 == "direct" ? 1 : 2 }
		$1 == "memory" && $2 == "processes" && $3 == "per-job" { per = $8 }
		END { exit !(want && per >= want && per < want + 1) }' "$t" ||
		fail "processes per job in flight not those of the path"
}
paths "$log" "$out" helper confine-shepherd confine-unprepared
printf '%s\n' "$log" | grep -q "^jobs' tmp: in /.*, mounted at /" ||
	fail "no mount for the jobs' tmp"
[ "$(grep -c '^target	' "$out")" -eq 12 ] || fail "not 12 target rows"
printf '%s\n' "$log" | grep -q '^== issue 14 targets' || fail "no targets table"
printf '%s\n' "$log" | grep -q '^== issue 35 targets' || fail "no issue 35 targets table"

# --shepherd: the main helper on the shepherd path, whatever the machine.
out=${TEST_TMPDIR:-/tmp}/bench-smoke-shepherd.tsv
log=$(tools/bench/bench --smoke --shepherd --sections memory --methods posix_spawn \
    --out "$out" 2>&1) || { printf '%s\n' "$log"; fail "--shepherd: the benchmark failed"; }
printf '%s\n' "$log" | grep -q '^path: helper .* shepherd:' ||
	{ printf '%s\n' "$log"; fail "--shepherd: not the shepherd path"; }
paths "$log" "$out" helper
positive memory shepherd rss
echo "bench_smoke_test: ok"
