# The shell tests' harness: every function case_NAME of the test script is
# one case, run in a subshell in a fresh directory, reported in cmocka's
# words so that tools/test counts cases:
#   [ RUN      ] NAME / [       OK ] NAME / [  FAILED  ] NAME
# A case fails by calling fail (or any assertion below), which exits its
# subshell; the script fails when any case did. The helpers' own variables
# start with _, so that a case's loop variable survives them.
set -u

ROOT=$PWD
RUN="$ROOT/tools/confine-run"
FIX="$ROOT/tests/fixture"
HELPER="$ROOT/helper/confine-helper"
TMP=${TEST_TMPDIR:-${TMPDIR:-/tmp}}
# The helpers confine-run starts make the jobs' private tmps in their
# TMPDIR: the test's, so that one an Uncertain job keeps goes with it.
export TMPDIR="$TMP"

fail() {
	printf 'FAIL: %s\n' "$*"
	for _f in out err; do
		[ -s "$T/$_f" ] && { printf -- '--- %s:\n' "$_f"; cat "$T/$_f"; }
	done
	exit 1
}

# confine-run with ARGS; its stdout, stderr and status in $T/out, $T/err, $st.
cr() {
	"$RUN" "$@" <"${STDIN:-/dev/null}" >"$T/out" 2>"$T/err"
	st=$?
}

expect_status() {
	[ "$st" -eq "$1" ] || fail "exit status $st, expected $1"
}

# grep -E PATTERN in $T/out (or $T/err).
expect_out() { grep -Eq -- "$1" "$T/out" || fail "stdout lacks /$1/"; }
expect_err() { grep -Eq -- "$1" "$T/err" || fail "stderr lacks /$1/"; }
expect_no_err() { [ ! -s "$T/err" ] || fail "stderr not empty"; }
expect_err_lines() {
	_n=$(wc -l <"$T/err")
	[ "$_n" -eq "$1" ] || fail "stderr has $_n lines, expected $1"
}

# One field of the JSON object on the last line of FILE, as Python prints
# it (strings bare, null as None); fails unless that line is valid JSON.
json() { # FILE KEY
	tail -n 1 "$1" | python3 -c '
import json, sys
d = json.loads(sys.stdin.read())
print(d[sys.argv[1]])' "$2" || fail "no JSON field $2 in $1"
}

expect_json() { # FILE KEY VALUE
	_v=$(json "$1" "$2")
	[ "$_v" = "$3" ] || fail "JSON $2 is $_v, expected $3"
}

# Polls until FILE has a line (a job's pid, "ready"): the bound is only
# there so that a broken run fails instead of hanging.
wait_for_line() {
	_i=0
	until [ -s "$1" ] && [ "$(wc -l <"$1")" -ge 1 ]; do
		_i=$((_i + 1))
		[ "$_i" -le 1200 ] || fail "nothing in $1 after a minute"
		sleep 0.05
	done
}

# True once kill -0 says PID is gone, for up to a minute: a killed process
# is reaped by whoever inherited it, a moment after its group was killed.
gone() {
	_i=0
	while kill -0 "$1" 2>/dev/null; do
		_i=$((_i + 1))
		[ "$_i" -le 1200 ] || return 1
		sleep 0.05
	done
}

run_cases() {
	passed=0 failed=0
	for c in $(sed -n 's/^\(case_[a-z0-9_]*\)() *{.*/\1/p' "$0"); do
		T=$(mktemp -d "$TMP/${c#case_}.XXXXXX")
		S="$T/scratch"
		mkdir "$S"
		printf '[ RUN      ] %s\n' "${c#case_}"
		if (cd "$T" && "$c"); then
			printf '[       OK ] %s\n' "${c#case_}"
			passed=$((passed + 1))
		else
			printf '[  FAILED  ] %s\n' "${c#case_}"
			failed=$((failed + 1))
		fi
	done
	printf '%d passed, %d failed\n' "$passed" "$failed"
	[ "$passed" -gt 0 ] && [ "$failed" -eq 0 ]
}
