#!/bin/sh
# The README's main job: `tools/demo.sh CONFINE_RUN` runs five confined jobs
# with confine-run and shows how each settled, checking each against what
# it must be. tools/demo builds confine-run and runs this; the test suite
# runs it as //tools:demo_test.
set -u
run=$1
# A job that ends Uncertain keeps its private tmp, in its helper's TMPDIR:
# under Bazel, the test's directory, not the machine's /tmp.
[ -n "${TEST_TMPDIR:-}" ] && export TMPDIR="$TEST_TMPDIR"
scratch=$(mktemp -d /tmp/confine-demo-scratch.XXXXXX) || exit 125
# Not in /tmp: a job's /tmp is its own, the host's out of its sight, and a
# write there would land in its own. (Under Bazel, its test directory.)
outside=$(mktemp -d "${TEST_TMPDIR:-/var/tmp}/confine-demo-outside.XXXXXX") ||
	exit 125
out=$scratch.out
trap 'rm -rf "$scratch" "$outside" "$out"' EXIT
failures=0

# job TITLE STATUS PATTERN ARG...: runs confine-run -v ARG..., shows what
# it said, and checks both its status and that what it said matches the
# extended regular expression PATTERN: a status alone may not tell a
# confined run from an unconfined one.
job() {
	title=$1 want=$2 pattern=$3
	shift 3
	printf '%s\n  $ confine-run -v' "$title"
	for a in "$@"; do
		case $a in
		*[\ \&\>\<]*) printf " '%s'" "$a" ;;
		*) printf ' %s' "$a" ;;
		esac
	done
	printf '\n'
	"$run" -v "$@" >"$out" 2>&1
	st=$?
	sed 's/^/  | /' "$out"
	printf '  exit status %d' "$st"
	if [ "$st" -ne "$want" ]; then
		printf ', expected %d\n\n' "$want"
		failures=$((failures + 1))
	elif ! grep -Eq -- "$pattern" "$out"; then
		printf ', but nothing said /%s/\n\n' "$pattern"
		failures=$((failures + 1))
	else
		printf '\n\n'
	fi
}

printf 'confine demo: %s; scratch root %s\n\n' "$("$run" --version)" "$scratch"

job "1. A write inside the scratch root succeeds" 0 "^hello\$" \
	-s "$scratch" -- sh -c 'echo hello > note.txt && cat note.txt'

job "2. A write outside it is denied" 2 "escaped: Read-only file system" \
	-s "$scratch" -- sh -c "echo escape > $outside/escaped"
if [ -e "$outside/escaped" ]; then
	printf '  !! %s/escaped EXISTS: confinement failed\n\n' "$outside"
	failures=$((failures + 1))
fi

# Namespaces of its own: it is pid 2 of its PID namespace, under its init
# (unconfined, it is one more process of the host's).
job "3. Its processes are its own: it is pid 2, the host's out of sight" 0 \
	"^pid 2\$" -s "$scratch" -- sh -c 'echo pid $$'

job "4. A deadline of 500ms cancels a sleeper" 124 \
	"^confine-run: cancelled: the deadline of 500ms passed" \
	-s "$scratch" -t 500ms -- sleep 30

job "5. A descendant left behind makes the job Uncertain, and is killed" 123 \
	'"reason":"group_still_present"' \
	-s "$scratch" --result - -- sh -c 'sleep 30 & exit 0'

if [ "$failures" -eq 0 ]; then
	echo "demo: every job settled as expected"
else
	echo "demo: $failures did not settle as expected"
	exit 1
fi
