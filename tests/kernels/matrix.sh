#!/bin/sh
# The contract's core cases on one kernel, run inside it by
# tests/kernels/run.sh (tools/kernels boots it): as root, then as uid
# 65534, each case paired with the same attempt unconfined, each reported
# in cmocka's words so that tools/test counts it. The guest's /tmp and
# /var/tmp are its own tmpfs; the host's root is read-only.
#
#   matrix.sh CONFINE_RUN FIXTURE EXPECT DEMO
#
# DEMO is tools/demo.sh: the README's quick start, run once as root.
#
# EXPECT says what this kernel must give: "landlock=N sockets=supervised"
# (the words its enforcement line must hold), or "refused:TEXT" (every
# job refused, saying TEXT). Where it has Landlock ABI 6, the cases run a
# third time, as uid 65534 with user namespaces disabled
# (user.max_user_namespaces=0): no namespace at all, the metadata waived
# (--waive metadata), Landlock's errnos where the view's were.
set -u
RUN_SRC=$1 FIX_SRC=$2 EXPECT=$3 DEMO=${4:-}
B=/var/tmp/kmatrix
RUN=$B/bin/confine-run FIX=$B/bin/fixture
passed=0 failed=0

fail() { printf 'FAIL: %s\n' "$*"; exit 1; }
# One case: NAME, run as AS (root or nobody) in a subshell.
case_() { # AS NAME
	printf '[ RUN      ] %s: %s\n' "$(uname -r) $1" "$2"
	if (as "$1" "case_$2"); then
		printf '[       OK ] %s: %s\n' "$(uname -r) $1" "$2"
		passed=$((passed + 1))
	else
		printf '[  FAILED  ] %s: %s\n' "$(uname -r) $1" "$2"
		failed=$((failed + 1))
	fi
}
# In a directory of its own W: the scratch root S, and O outside it. As
# nobody, this script again, its functions only (MATRIX_LIB).
as() { # WHO FUNCTION
	W=$(mktemp -d "$B/w.XXXXXX") && S="$W/s" && O="$W/outside" &&
	    mkdir "$S" "$O" && chmod 777 "$W" "$S" "$O" &&
	    echo root >"$W/rootfile" && chmod 644 "$W/rootfile" || return 1
	export W S O
	if [ "$1" = root ]; then
		(cd "$W" && "$2")
	else
		chown 65534:65534 "$S"
		(cd "$W" && MATRIX_LIB=1 setpriv --reuid=65534 --regid=65534 \
		    --clear-groups -- sh -c '. "$0"; "$4"' "$MATRIX" "$RUN_SRC" \
		    "$FIX_SRC" "$EXPECT" "$2")
	fi
}
# shellcheck disable=SC2086
cr() { "$RUN" -s "$S" $WAIVE "$@" </dev/null >"$W/out" 2>"$W/err"; st=$?; }
un() { "$RUN" --backend none "$@" </dev/null >"$W/out" 2>"$W/err"; st=$?; }
want() { [ "$st" -eq "$1" ] || fail "status $st, expected $1: $(cat "$W/err")"; }

case_refused() {
	cr --result "$W/r.json" -- "$FIX" write "$S/f"
	want 125
	grep -q "${EXPECT#refused:}" "$W/err" || fail "not refused as said: $(cat "$W/err")"
	[ ! -e "$S/f" ] || fail "the job ran"
}

case_enforced() {
	cr -v -- "$FIX" exit 0
	want 0
	for w in ${EXPECT}; do
		grep -q "enforced: .*$w" "$W/err" || fail "not enforced: $w: $(cat "$W/err")"
	done
}

case_writes_inside_and_not_outside() {
	un -- "$FIX" write "$O/f"
	want 0
	[ -e "$O/f" ] && rm -f "$O/f" || fail "unconfined, nothing was written"
	cr -- "$FIX" write "$S/f"
	want 0
	cr -- "$FIX" write "$O/f"
	want "$E_OUT"  # EROFS: the view; EACCES: Landlock alone
	[ ! -e "$O/f" ] || fail "the write outside landed"
}

# Without a view (bare) it is not the job's to change as it is not its
# user's: a file of root's, which 65534 cannot change unconfined either.
case_metadata_outside_is_read_only() {
	if [ "$MODE" = bare ]; then
		f=$W/rootfile
	else
		f=$O/m
		echo x >"$f" && chmod 644 "$f"
		un -- "$FIX" chmod "$f"
		want 0
		chmod 644 "$f"
	fi
	cr -- "$FIX" chmod "$f"
	want "$E_META"
	[ "$(stat -c %a "$f")" = 644 ] || fail "the mode changed"
}

case_renames_inside_work() {
	mkdir "$S/a" "$S/b" && echo x >"$S/a/f"
	cr -- "$FIX" rename "$S/a/f" "$S/b/f"
	want 0
	[ -e "$S/b/f" ] || fail "not renamed"
}

# A host process of ours: unconfined the job signals it, confined it is
# not there to name.
case_signals_stay_inside() {
	sleep 60 &
	p=$!
	un -- "$FIX" kill "$p" 0
	want 0
	cr -- "$FIX" kill "$p" 0
	want "$E_SIG"  # ESRCH: its PID namespace; EPERM: Landlock's scope
	kill "$p"
}

# The host's listener: unconfined reached, confined not (its loopback is
# its own); its own server works (where its sockets are supervised).
case_network() {
	listen_once "$W/port" || fail "no listener"
	l=$listener
	port=$(head -n 1 "$W/port")
	cr -- "$FIX" connect "$port"
	case $EXPECT in
	*sockets=supervised*) want 111 ;;  # ECONNREFUSED
	*) want 1 ;;                       # EPERM: socket() refused
	esac
	un -- "$FIX" connect "$port"
	want 0
	wait "$l"
	grep -qx accepted "$W/port" || fail "the host's listener saw nothing"
	case $EXPECT in
	*sockets=supervised*) cr -- "$FIX" loop tcp; want 0 ;;
	esac
}

case_deadline_cancels() {
	cr -t 2s -- /bin/sleep 60
	want 124
}

case_a_descendant_left_is_uncertain() {
	cr -- /bin/sh -c 'sleep 60 & exit 0'
	want 123
}

# The README's quick start (tools/demo: five jobs, each settled as it
# must be), as a user of this kernel would run it.
case_the_readmes_demo() {
	sh "$DEMO" "$RUN" >"$W/out" 2>"$W/err" </dev/null ||
		fail "the demo failed: $(tail -n 5 "$W/out") $(cat "$W/err")"
	grep -q '^demo: every job settled as expected$' "$W/out" ||
		fail "the demo said: $(tail -n 3 "$W/out")"
}

# The host's /tmp read where it lies (TMPW: over-hosts, beneath the
# job's own), or out of sight (private), or the host's own (none: no
# view at all, Landlock alone); its file unchanged either way.
case_the_hosts_tmp() {
	H=$(mktemp /tmp/hosts.XXXXXX) && echo host >"$H" && chmod 644 "$H" ||
		fail "no file in the host's /tmp"
	un -- /bin/cat "$H"
	want 0
	[ "$(cat "$W/out")" = host ] || fail "unconfined, it read $(cat "$W/out")"
	# shellcheck disable=SC2016
	cr -v -- /bin/sh -c 'cat "$0" && echo job >"$0"' "$H"
	case $TMPW in
	over-hosts) want 0 ;;
	private) want 1 ;;
	none) [ "$st" -ne 0 ] || fail "the host's file was written" ;;
	esac
	if [ "$TMPW" = none ]; then
		! grep -q "enforced: .* tmp=" "$W/err" || fail "a tmp said: $(cat "$W/err")"
	else
		grep -q "enforced: .* tmp=$TMPW " "$W/err" ||
			fail "not tmp=$TMPW: $(cat "$W/err")"
	fi
	case $TMPW in
	private) [ ! -s "$W/out" ] || fail "it read $(cat "$W/out")" ;;
	*) [ "$(head -n 1 "$W/out")" = host ] || fail "it read $(cat "$W/out")" ;;
	esac
	[ "$(cat "$H")" = host ] || fail "the host's file is now $(cat "$H")"
	rm -f "$H"
}

case_a_compiler_runs() {
	printf '#include <stdio.h>\nint main(void) { puts("hello"); return 0; }\n' >"$O/h.c"
	cr -- /usr/bin/cc -o "$S/h" "$O/h.c"
	want 0
	cr -- "$S/h"
	want 0
	[ "$(cat "$W/out")" = hello ] || fail "it said $(cat "$W/out")"
}

main() {
	mkdir -p "$B/bin" && chmod 755 "$B" "$B/bin" &&
	    cp "$RUN_SRC" "$B/bin/confine-run" && cp "$FIX_SRC" "$B/bin/fixture" &&
	    cp "$0" "$B/matrix.sh" && chmod 755 "$B/matrix.sh" &&
	    cp "$(dirname "$0")/listen_once.sh" "$B/bin/listen_once.sh" &&
	    . "$B/bin/listen_once.sh" ||
		{ echo "matrix: cannot copy the binaries"; exit 1; }
	MATRIX=$B/matrix.sh
	WAIVE= MODE=ns E_OUT=30 E_META=30 E_SIG=3
	NOBODY_TMP=${EXPECT##*nobody-tmp=}
	NOBODY_TMP=${NOBODY_TMP%% *}
	EXPECT=$(echo "$EXPECT" | sed 's/ *nobody-tmp=[^ ]*//')
	export WAIVE MODE E_OUT E_META E_SIG
	whos="root nobody"
	case $EXPECT in *landlock=6*) whos="root nobody bare" ;; esac
	for who in $whos; do
		case $EXPECT in
		refused:*) case_ "$who" refused; continue ;;
		esac
		if [ "$who" = bare ]; then
			sysctl -qw user.max_user_namespaces=0 ||
				{ echo "matrix: cannot disable user namespaces"; exit 1; }
			WAIVE="--waive metadata" MODE=bare E_OUT=13 E_META=1 E_SIG=1
			EXPECT="${EXPECT%% *} namespaces=none sockets=refused view=none waived=metadata"
		fi
		case $who in
		root) TMPW=over-hosts ;;
		nobody) TMPW=$NOBODY_TMP ;;
		bare) TMPW=none ;;
		esac
		export TMPW
		for c in enforced writes_inside_and_not_outside \
		    metadata_outside_is_read_only renames_inside_work \
		    signals_stay_inside network deadline_cancels \
		    a_descendant_left_is_uncertain the_hosts_tmp \
		    a_compiler_runs; do
			case_ "$who" "$c"
		done
		[ "$who" = root ] && [ -n "$DEMO" ] && case_ root the_readmes_demo
	done
	printf '%d passed, %d failed\n' "$passed" "$failed"
	[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
}

if [ -n "${MATRIX_LIB:-}" ]; then
	. "$B/bin/listen_once.sh"
else
	main
fi
