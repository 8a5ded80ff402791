#!/bin/sh
# Two trees' benchmarks, built apart and run taking turns on this machine:
#
#   tools/bench/ab.sh [-n PAIRS] OLD NEW [-- BENCH-ARGS...]
#
# OLD and NEW are commits (NEW may be "." for the working tree as it is).
# Each is built with `bazel build -c opt //tools/bench` in a worktree of
# its own under $AB_DIR (default /var/tmp/confine-ab), and its binary and
# runfiles are copied out, so that the runs need no Bazel. Then OLD and
# NEW run PAIRS times each (default 3), OLD first in every pair, with the
# same arguments (default: the latency of start + settle, 1,000 jobs, one
# thread, no host memory, posix_spawn and confine-landlock). Only the
# rows of each run's tables are printed, under a line naming the tree.
#
# This machine's state moves the ratios by more than most changes do
# (docs/benchmarks.md): compare pairs, never runs from different hours.
set -eu

pairs=3
if [ "${1:-}" = "-n" ]; then
	pairs=$2
	shift 2
fi
if [ $# -lt 2 ]; then
	echo "usage: tools/bench/ab.sh [-n PAIRS] OLD NEW [-- BENCH-ARGS...]" >&2
	exit 2
fi
old=$1
new=$2
shift 2
[ "${1:-}" = "--" ] && shift
if [ $# -eq 0 ]; then
	set -- --sections latency --hosts 0 --host-threads 1 --reps 1000 \
	    --methods posix_spawn,confine-landlock
fi

top=$(git rev-parse --show-toplevel)
dir=${AB_DIR:-/var/tmp/confine-ab}
mkdir -p "$dir"

# build NAME REV: the tree's bench, copied to $dir/NAME.
build() {
	name=$1
	rev=$2
	src=$top
	if [ "$rev" != "." ]; then
		src=$dir/src-$name
		git -C "$top" worktree remove --force "$src" 2>/dev/null || true
		git -C "$top" worktree add --quiet --detach "$src" "$rev"
	fi
	(cd "$src" && bazel build -c opt //tools/bench >/dev/null 2>&1) || {
		echo "ab.sh: $rev: the benchmark did not build" \
		    "(bazel build -c opt //tools/bench in $src says why;" \
		    "then bazel shutdown there and git worktree remove --force $src)" >&2
		exit 1
	}
	bin=$(cd "$src" && bazel info -c opt bazel-bin 2>/dev/null)
	rm -rf "${dir:?}/$name"
	mkdir -p "$dir/$name"
	cp -rL "$bin/tools/bench/bench" "$bin/tools/bench/bench.runfiles" \
	    "$dir/$name/"
	if [ "$rev" != "." ]; then
		(cd "$src" && bazel shutdown >/dev/null 2>&1) || true
		git -C "$top" worktree remove --force "$src"
	fi
}

build old "$old"
build new "$new"
i=1
while [ "$i" -le "$pairs" ]; do
	for name in old new; do
		if [ "$name" = old ]; then rev=$old; else rev=$new; fi
		echo "== $name ($rev), pair $i"
		"$dir/$name/bench" "$@" 2>&1 |
		    grep -E '^[a-z][a-z_+-]* +[0-9]+ MiB|^  [a-z-]+ p50:' || true
	done
	i=$((i + 1))
done
