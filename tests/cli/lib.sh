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
CONTAINER="$ROOT/tests/container"
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

# True once PID is gone or dead (a zombie: whoever inherited it may not
# reap it), for up to a minute: a moment after its group was killed.
gone() {
	_i=0
	while kill -0 "$1" 2>/dev/null &&
	    [ "$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -c1)" != Z ]; do
		_i=$((_i + 1))
		[ "$_i" -le 1200 ] || return 1
		sleep 0.05
	done
}

# The pid, as we see it, of the process that sees itself as PRINTED among
# the running descendants of ROOT (a job prints its pid as it sees it: in
# a PID namespace of its own, not ours). Polls for up to a minute.
host_pid() { # ROOT PRINTED
	_i=0
	while :; do
		_todo=$1
		while [ -n "$_todo" ]; do
			_p=${_todo%% *}
			[ "$_p" = "$_todo" ] && _todo= || _todo=${_todo#* }
			_ns=$(sed -n 's/^NSpid:[[:space:]]*//p' "/proc/$_p/status" 2>/dev/null)
			if [ -n "$_ns" ] && [ "${_ns##*[[:space:]]}" = "$2" ]; then
				echo "$_p"
				return 0
			fi
			for _k in $(cat /proc/"$_p"/task/*/children 2>/dev/null); do
				_todo="${_todo:+$_todo }$_k"
			done
		done
		_i=$((_i + 1))
		[ "$_i" -le 1200 ] || return 1
		sleep 0.05
	done
}

# The PID namespace (its /proc/self/ns/pid link) of which no process is
# left, for up to a minute.
ns_empty() { # LINK
	_i=0
	while :; do
		_left=
		for _d in /proc/[0-9]*; do
			[ "$(readlink "$_d/ns/pid" 2>/dev/null)" != "$1" ] ||
				_left="$_left ${_d#/proc/}"
		done
		[ -n "$_left" ] || return 0
		_i=$((_i + 1))
		[ "$_i" -le 1200 ] || { echo "$_left"; return 1; }
		sleep 0.05
	done
}

# The settlement path this target is for (its first argument: init,
# shepherd or direct; tests/cli/BUILD.bazel), checked against a job: it
# leads its own session and group on each. With namespaces (init) it is
# pid 2 of a PID namespace of its own, its init's (pid 1) child, and the
# result gives its pid as we see it; without (CONFINE_NO_NAMESPACES=1) it
# is confine-run's own child, or a shepherd's, and sees the pid we do.
# Without that argument, no path is claimed.
PATH_EXPECTED=${1:-}
case_runs_on_the_path_it_is_named_for() {
	"$RUN" -s "$S" --result "$T/r.json" -- "$FIX" ids >"$T/out" 2>"$T/err" &
	_cr=$!
	wait "$_cr"
	st=$?
	expect_status 0
	_pid=$(json "$T/r.json" pid)
	_pgid=$(json "$T/r.json" pgid)
	[ "$_pgid" = "$_pid" ] || fail "pid $_pid, pgid $_pgid: not its own group"
	read -r _jpid _jpgid _jsid _jppid <"$T/out" || fail "no ids printed"
	case $PATH_EXPECTED in
	init) [ "$_jpid $_jpgid $_jsid $_jppid" = "2 2 2 1" ] ||
		fail "printed $_jpid $_jpgid $_jsid $_jppid: not its init's own session"
		[ "$_pid" != 2 ] || fail "the result gives its pid as it sees it" ;;
	direct|shepherd) [ "$_jpid $_jpgid $_jsid" = "$_pid $_pid $_pid" ] ||
		fail "pid $_pid, printed $_jpid $_jpgid $_jsid: not its own session" ;;
	*) fail "no such path: $PATH_EXPECTED" ;;
	esac
	case $PATH_EXPECTED in
	direct) [ "$_jppid" = "$_cr" ] ||
		fail "its parent is $_jppid, not confine-run ($_cr): a shepherd ran it" ;;
	shepherd) [ "$_jppid" != "$_cr" ] ||
		fail "its parent is confine-run ($_cr): no shepherd ran it" ;;
	esac
}

# A cgroup v2 of our own, beneath ours, for us and what we start: a
# confine-run starting elsewhere (another test's) ends what confine-runs
# that died left in their cgroups beside it, and would do the work a
# case here is to prove is done without it. Left, emptied, at exit.
own_cgroup() {
	_mnt=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/self/mounts)
	_cur=$(sed -n 's/^0:://p' /proc/self/cgroup)
	[ -n "$_mnt" ] && [ -n "$_cur" ] || fail "no cgroup v2 here"
	_parent="$_mnt${_cur%/}"
	OWN_CGROUP="$_parent/cli-test.$$"
	mkdir "$OWN_CGROUP" && echo $$ >"$OWN_CGROUP/cgroup.procs" ||
		fail "cannot make $OWN_CGROUP a cgroup of ours"
	trap 'echo $$ >"$_parent/cgroup.procs";
	    find "$OWN_CGROUP" -depth -type d -exec rmdir {} + 2>/dev/null' EXIT
}

run_cases() {
	[ "$PATH_EXPECTED" != direct ] || own_cgroup
	passed=0 failed=0
	for c in $( { [ -z "$PATH_EXPECTED" ] || echo case_runs_on_the_path_it_is_named_for; }
	    sed -n 's/^\(case_[a-z0-9_]*\)() *{.*/\1/p' "$0"); do
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
