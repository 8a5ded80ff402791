#!/bin/sh
# Where no namespace at all can be made: in a stand-in of a default Docker
# container (tests/standin/container.c: Docker's capabilities and the
# namespace part of its seccomp profile) as root, and as uid 65534 where
# user namespaces are disabled (--no-userns). A job is refused there
# unless the metadata is waived by name (CONFINE_WAIVE_METADATA, --waive
# metadata); with the waiver it runs with Landlock and the shared seccomp
# filter, a root job as uid 65534, and the result says so. Each confined
# attempt is paired with the same one unconfined (--backend none, in the
# same stand-in), its effect checked on the files here; and what the
# waiver gives up is shown too: it is not a claim. Unsandboxed: it needs
# /var/tmp and a cgroup it may write.
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/listen_once.sh"

# D: a directory nobody may reach, with copies of confine-run and the
# fixture; S a scratch root and O a directory outside it, both 65534's;
# R a file of root's outside, 0644, and W one of root's anyone may write.
setup_bare() {
	D=$(mktemp -d /var/tmp/confine-bare.XXXXXX) || fail "no directory"
	chmod 755 "$D"
	cp "$RUN" "$D/confine-run" && cp "$FIX" "$D/fixture" || fail "no copies"
	mkdir "$D/s" "$D/o" "$D/tmp" && chmod 1777 "$D/tmp" &&
	    chown 65534:65534 "$D/s" "$D/o" || fail "no scratch root"
	echo root >"$D/root-file" && chmod 644 "$D/root-file"
	echo anyone >"$D/anyones" && chmod 666 "$D/anyones"
	S=$D/s O=$D/o R=$D/root-file W=$D/anyones
}

teardown_bare() {
	rm -rf "$D"
}

# In the stand-in as WHO (root, or nobody without user namespaces):
# confine-run with ARGS; $st, $T/out, $T/err as cr's.
bare() { # WHO ARGS...
	_who=$1
	shift
	if [ "$_who" = root ]; then
		TMPDIR="$D/tmp" "$CONTAINER" -- "$D/confine-run" "$@" \
		    </dev/null >"$T/out" 2>"$T/err"
	else
		(cd "$D" && TMPDIR="$D/tmp" setpriv --reuid=65534 --regid=65534 \
		    --clear-groups -- "$CONTAINER" --no-userns -- \
		    "$D/confine-run" "$@" </dev/null >"$T/out" 2>"$T/err")
	fi
	st=$?
}

# Confined with the waiver, and unconfined, in the stand-in as WHO.
waived() { _w=$1; shift; bare "$_w" -s "$S" --waive metadata "$@"; }
unconfined() { _w=$1; shift; bare "$_w" --backend none "$@"; }

refused_without_the_waiver() { # WHO
	bare "$1" -s "$S" --result "$D/tmp/r.json" -- "$D/fixture" write "$S/ran"
	expect_status 125
	expect_err "^confine-run: refused: no namespace can be made here.*--waive metadata"
	[ ! -e "$S/ran" ] || fail "the job ran"
	python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))["refused"]
assert r["layer"] in ("user namespace", "mount namespace"), r
assert r["errno"] in (1, 28), r  # EPERM, ENOSPC' "$D/tmp/r.json" ||
		fail "the refusal: $(cat "$D/tmp/r.json")"
}

case_root_in_a_container_is_refused_without_the_waiver() {
	setup_bare
	refused_without_the_waiver root
	teardown_bare
}

case_nobody_without_user_namespaces_is_refused_without_the_waiver() {
	setup_bare
	refused_without_the_waiver nobody
	teardown_bare
}

# A root job runs as 65534: a scratch root of root's is refused, saying
# the fix; one of 65534's is written, as 65534; the result says all of it.
case_a_root_job_runs_as_65534_and_says_so() {
	setup_bare
	mkdir "$D/roots"
	bare root -s "$D/roots" --waive metadata -- "$D/fixture" write "$D/roots/f"
	expect_status 125
	expect_err "^confine-run: refused: .*runs as uid and gid 65534.*chown 65534:65534"
	[ ! -e "$D/roots/f" ] || fail "the job wrote"
	waived root --result "$T/r.json" -- "$D/fixture" write "$S/f"
	expect_status 0
	[ "$(stat -c %u:%g "$S/f")" = 65534:65534 ] ||
		fail "written as $(stat -c %u:%g "$S/f")"
	abi=$(python3 -c 'import ctypes; print(ctypes.CDLL(None).syscall(444, None, 0, 1))')
	python3 - "$T/r.json" "$abi" <<'PY' || fail "enforced: $(cat "$T/r.json")"
import json, sys
e = json.load(open(sys.argv[1]))["enforced"]
want = {"backend": "landlock", "landlock": sys.argv[2], "namespaces": "none",
        "sockets": "refused", "seccomp": "shared", "view": "none",
        "waived": "metadata", "uid": "65534", "gid": "65534"}
assert all(e.get(k) == v for k, v in want.items()), e
PY
	teardown_bare
}

# Writes, truncation and modes outside; signals and sockets out: each
# reached unconfined, each refused with its errno confined, the host's
# files as they were.
held() { # WHO
	_w=$1
	unconfined "$_w" -- "$D/fixture" write "$O/u"
	expect_status 0
	[ -e "$O/u" ] || fail "$_w: unconfined, nothing was written"
	waived "$_w" -- "$D/fixture" write "$O/f"
	expect_status 13  # EACCES: Landlock
	[ ! -e "$O/f" ] || fail "$_w: the write outside landed"
	waived "$_w" -- "$D/fixture" truncate "$W"
	expect_status 13
	[ "$(cat "$W")" = anyone ] || fail "$_w: truncated"
	[ "$_w" = root ] && {
		unconfined root -- "$D/fixture" chmod "$R"
		expect_status 0
		chmod 644 "$R"
	}
	waived "$_w" -- "$D/fixture" chmod "$R"
	expect_status 1   # EPERM: not its file (a root job is 65534)
	[ "$(stat -c %a "$R")" = 644 ] || fail "$_w: the mode changed"
	sleep 60 &
	_p=$!
	[ "$_w" = root ] && { unconfined root -- "$D/fixture" kill "$_p" 0
		expect_status 0; }
	waived "$_w" -- "$D/fixture" kill "$_p" 0
	expect_status 1   # EPERM: Landlock's scope (and another uid's)
	kill "$_p"
	listen_once "$D/port" || fail "no listener"
	_l=$listener
	_port=$(head -n 1 "$D/port")
	waived "$_w" -- "$D/fixture" connect "$_port"
	expect_status 1   # EPERM: no socket at all
	unconfined "$_w" -- "$D/fixture" connect "$_port"
	expect_status 0
	wait "$_l"
	grep -qx accepted "$D/port" || fail "$_w: the listener saw nothing"
}

case_root_writes_modes_signals_and_sockets_are_held() {
	setup_bare
	held root
	teardown_bare
}

case_nobody_writes_modes_signals_and_sockets_are_held() {
	setup_bare
	held nobody
	teardown_bare
}

# What the waiver gives up, shown rather than claimed away: the times and
# a user extended attribute of a file outside that anyone may write, and
# the mode of a file outside the job's user owns, change.
case_what_the_waiver_gives_up() {
	setup_bare
	touch -d 2001-01-01 "$W"
	waived nobody -- "$D/fixture" utime "$W"
	expect_status 0
	[ "$(stat -c %Y "$W")" -gt 978307200 ] || fail "the times did not change"
	echo o >"$O/own" && chown 65534:65534 "$O/own" && chmod 644 "$O/own"
	waived nobody -- "$D/fixture" chmod "$O/own"
	expect_status 0
	[ "$(stat -c %a "$O/own")" = 600 ] || fail "the mode did not change"
	teardown_bare
}

# Settlement as anywhere: a deadline cancels, a descendant left behind is
# Uncertain (and killed), a real compiler builds a program that runs,
# its temporary files in the job's own tmp (TMPDIR: /tmp is not its).
case_deadlines_descendants_and_a_compiler() {
	setup_bare
	waived root -t 2s -- /bin/sleep 60
	expect_status 124
	waived root -- /bin/sh -c 'sleep 60 & exit 0'
	expect_status 123
	printf '#include <stdio.h>\nint main(void) { puts("hello"); return 0; }\n' >"$D/h.c"
	chmod 644 "$D/h.c"
	waived nobody -- /usr/bin/cc -o "$S/h" "$D/h.c"
	expect_status 0
	waived nobody -- "$S/h"
	expect_status 0
	expect_out "^hello\$"
	teardown_bare
}

run_cases "$@"
