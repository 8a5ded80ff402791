#!/bin/sh
# roles.sh [-n JOBS] [-m METHOD] [BENCH]: where the machine's CPU goes,
# per job, by role, while the benchmark starts and settles one confined
# /bin/true after another (its latency section, one method alone).
#
# perf samples every CPU (4 kHz, no call chains: little overhead), and
# each sample is put to a role by its process:
#   job, before exec   a pid that later runs /bin/true ("true"), before
#   job, after exec    the same pid as "true": the program and its exit
#   helper             the helper's own pid, as the benchmark prints it
#   prepared inits     "confine-prep": an init being made ahead
#   inits and others   the rest of the helper's processes (an init that
#                      took a job, its teardown; a guard)
#   kernel workers     kworker threads: a network namespace's cleanup,
#                      the block layer, deferred frees
#   softirq, rcu       ksoftirqd, rcu_* threads
#   idle               no task: what the machine had to spare
# The figures are µs of CPU per job, summed over every CPU, so they add up
# to the CPUs' count times the wall time per job. perf's own cost slows
# everything a little; compare runs of this script, not with bench's.
#
# BENCH defaults to the opt build's (bazel build -c opt //tools/bench).
# Needs perf (linux-perf) and root, or perf_event_paranoid at -1.
set -eu

jobs=1000
method=confine-landlock
while getopts n:m: o; do
	case $o in
	n) jobs=$OPTARG ;;
	m) method=$OPTARG ;;
	*) echo "usage: roles.sh [-n JOBS] [-m METHOD] [BENCH]" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
if [ $# -gt 0 ]; then
	bench=$1
else
	bench=$(bazel info -c opt bazel-bin 2>/dev/null)/tools/bench/bench
fi
[ -x "$bench" ] || { echo "roles.sh: no benchmark at $bench" >&2; exit 1; }
command -v perf >/dev/null || { echo "roles.sh: perf is not installed (apt-get install linux-perf)" >&2; exit 1; }

tmp=$(mktemp -d /var/tmp/confine-roles.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
perf record -q -a -F 4000 -o "$tmp/perf.data" -- "$bench" \
    --sections latency --methods "$method" --hosts 0 --host-threads 1 \
    --reps "$jobs" --out "$tmp/bench.tsv" >"$tmp/bench.out" 2>&1
helper=$(sed -n 's/^helper: pid \([0-9]*\).*/\1/p' "$tmp/bench.out")
[ -n "$helper" ] || { cat "$tmp/bench.out" >&2; echo "roles.sh: the benchmark named no helper" >&2; exit 1; }
grep -E "^$method|p50:" "$tmp/bench.out" || true
perf script -i "$tmp/perf.data" -F comm,pid 2>/dev/null |
awk -v helper="$helper" -v hz=4000 '
{
	# "COMM PID": COMM may hold spaces; PID is the last field.
	pid = $NF; comm = $0; sub(/[ \t]+[0-9]+[ \t]*$/, "", comm); sub(/^[ \t]+/, "", comm)
	n++; c[n] = comm; p[n] = pid
	if (comm == "true") job[pid] = 1
}
END {
	for (i = 1; i <= n; i++) {
		comm = c[i]; pid = p[i]
		if (pid in job) r = comm == "true" ? "job, after exec" : "job, before exec"
		else if (comm == "swapper") r = "idle"
		else if (pid == helper) r = "helper"
		else if (comm == "confine-prep") r = "prepared inits"
		else if (comm ~ /^kworker/) r = "kernel workers"
		else if (comm ~ /^(ksoftirqd|rcu)/) r = "softirq, rcu"
		else if (comm == "bench") r = "benchmark (the host)"
		else if (comm ~ /^perf/) r = "perf"
		else r = "inits and others"
		us[r]++
	}
	for (j in job) jobs++
	if (jobs == 0) { print "roles.sh: no job ran /bin/true" > "/dev/stderr"; exit 1 }
	printf "%d jobs; CPU per job, µs, all CPUs:\n", jobs
	for (r in us) printf "%8.0f  %s\n", us[r] / jobs / hz * 1000000, r | "sort -rn"
}'
