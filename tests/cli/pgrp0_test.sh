#!/bin/sh
# confine-run from process group 0: in a PID namespace whose group and
# session are outside it (`unshare --pid --fork` without a new session, as
# CI's containers start), where a shepherd that went back to "its own
# group" went back to 0, stayed the job's group's leader, and every job
# settled Uncertain (123). Exactly as the report ran it: as root on each
# path (in namespaces of the job's own, and without them directly and
# under a shepherd), and as nobody (no cgroup of its own). Each job
# completes and leaves no tmp. Unsandboxed: it needs /var/tmp, and a
# cgroup v2 it may write for the direct path.
. "$(dirname "$0")/lib.sh"

# A copy of confine-run where nobody may reach it (the runfiles are not).
setup_pgrp0() {
	command -v unshare >/dev/null && command -v setpriv >/dev/null ||
		fail "unshare and setpriv (util-linux) are needed"
	D=$(mktemp -d /var/tmp/confine-pgrp0.XXXXXX) || fail "no directory"
	chmod 755 "$D"
	cp "$RUN" "$D/confine-run"
	mkdir "$D/root" "$D/nobody" "$D/tmp" "$D/out"
	chown 65534:65534 "$D/nobody"
	chmod 1777 "$D/tmp" "$D/out"
}

# WHO (root or nobody), then the environment's extra words.
run_in_pgrp0() {
	_who=$1
	shift
	if [ "$_who" = root ]; then _as=; else
		_as="setpriv --reuid=65534 --regid=65534 --clear-groups --"; fi
	# shellcheck disable=SC2086
	env TMPDIR="$D/tmp" "$@" unshare --pid --fork --mount-proc $_as sh -c '
		[ "$(ps -o pgid= -p $$ | tr -d " ")" = 0 ] || exit 99
		readlink /proc/self/ns/pid >"$1/out/ns"
		exec "$1/confine-run" -s "$1/$2" --result "$1/out/r.json" \
		    -- /bin/sh -c "echo \$PPID; readlink /proc/self/ns/pid"' \
		sh "$D" "$_who" >"$T/out" 2>"$T/err"
	st=$?
	_ok=1
	[ "$st" -ne 99 ] || { _ok=0; _why="$_who: its process group is not 0"; }
	[ "$_ok" = 0 ] || [ "$st" -eq 0 ] ||
		{ _ok=0; _why="$_who: exit status $st, expected 0"; }
	[ "$_ok" = 0 ] || [ -z "$(ls -A "$D/tmp")" ] ||
		{ _ok=0; _why="$_who: a tmp was left"; }
	[ "$_ok" = 0 ] || { cp "$D/out/r.json" "$T/r.json"
		{ read -r PARENT; read -r JOB_NS; } <"$T/out"
		read -r OUR_NS <"$D/out/ns"; }
	rm -rf "$D"
	[ "$_ok" = 1 ] || fail "$_why"
}

# The job's parent: its init (pid 1 of a PID namespace of its own) with
# namespaces; without, confine-run itself (pid 1 of that namespace)
# without a shepherd, a shepherd with one.
case_root_in_namespaces() {
	setup_pgrp0
	run_in_pgrp0 root
	expect_json "$T/r.json" proof cgroup
	[ "$JOB_NS" != "$OUR_NS" ] || fail "the job is in our PID namespace"
	[ "$PARENT" = 1 ] || fail "the job's parent is $PARENT, not its init"
}

case_root_without_a_shepherd() {
	setup_pgrp0
	run_in_pgrp0 root CONFINE_NO_NAMESPACES=1
	expect_json "$T/r.json" proof cgroup
	[ "$JOB_NS" = "$OUR_NS" ] || fail "the job has a PID namespace of its own"
	[ "$PARENT" = 1 ] || fail "the job's parent is $PARENT: a shepherd's"
}

case_root_with_a_shepherd() {
	setup_pgrp0
	run_in_pgrp0 root CONFINE_NO_NAMESPACES=1 CONFINE_SHEPHERD=1
	expect_json "$T/r.json" proof cgroup
	[ "$JOB_NS" = "$OUR_NS" ] || fail "the job has a PID namespace of its own"
	[ "$PARENT" != 1 ] || fail "the job's parent is confine-run: no shepherd"
}

case_nobody() {
	setup_pgrp0
	run_in_pgrp0 nobody
	expect_json "$T/r.json" outcome completed
}

own_cgroup
run_cases
