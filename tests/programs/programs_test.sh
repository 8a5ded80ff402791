#!/bin/sh
# Real programs, confined with confine-run's defaults (tests/programs/
# programs.sh): each completes, writes only inside its scratch root, and
# is refused where it reaches out; and again with reads narrowed to the
# system trees and the sources (--read-system --read $W). A program the
# machine lacks is a failure (tools/setup installs them all), never a skip.
. tests/cli/lib.sh
. tests/programs/programs.sh

NARROW=
job() {
	if [ -n "$NARROW" ]; then
		"$RUN" -s "$S" --read-system --read "$W" -- "$@" </dev/null
	else
		"$RUN" -s "$S" -- "$@" </dev/null
	fi
}
narrowed() { NARROW=1; each "$1"; NARROW=; }

# Sources outside the scratch root, and nothing written there but by us.
each() {
	W="$T/work"
	mkdir "$W" && touch "$T/stamp" || fail "setup"
	"prog_$1" >"$T/out" 2>"$T/err" || fail "$1 did not do its work"
	_new=$(find "$W" -newer "$T/stamp" -path "$W/*" ! -path "$W/bare.git*" \
	    ! -path "$W/seed*" ! -name prefix 2>/dev/null | head -n 5)
	for _f in $_new; do
		# What this script made after the stamp is listed by name above;
		# anything else is the job's.
		case $_f in "$W/hello.c" | "$W/three.cc" | "$W/Makefile" | "$W/tree"* | "$W/nums" | "$W/victim" | "$W/tty") ;;
		*) fail "something was written outside the scratch root: $_f" ;;
		esac
	done
}

case_cc() { each cc; }
case_cxx() { each cxx; }
case_python3_tempfile() { each python3_tempfile; }
case_python3_venv() { each python3_venv; }
case_git() { each git; }
case_make() { each make; }
case_tar() { each tar; }
case_sort_spills() { each sort_spills; }
case_node() { each node; }
case_perl() { each perl; }
case_shell_pipeline() { each shell_pipeline; }
case_python3_multiprocessing() { each python3_multiprocessing; }
case_python3_asyncio_unix() { each python3_asyncio_unix; }
case_python3_unix_datagrams() { each python3_unix_datagrams; }
case_node_udp() { each node_udp; }
case_pty() { each pty; }
case_http_on_its_loopback() { each http_on_its_loopback; }
case_write_outside_is_refused() { each write_outside_is_refused; }
case_http_is_refused() { each http_is_refused; }

case_narrowed_cc() { narrowed cc; }
case_narrowed_cxx() { narrowed cxx; }
case_narrowed_python3_tempfile() { narrowed python3_tempfile; }
case_narrowed_python3_venv() { narrowed python3_venv; }
case_narrowed_git() { narrowed git; }
case_narrowed_make() { narrowed make; }
case_narrowed_tar() { narrowed tar; }
case_narrowed_sort_spills() { narrowed sort_spills; }
case_narrowed_node() { narrowed node; }
case_narrowed_perl() { narrowed perl; }
case_narrowed_shell_pipeline() { narrowed shell_pipeline; }
case_narrowed_python3_multiprocessing() { narrowed python3_multiprocessing; }
case_narrowed_python3_asyncio_unix() { narrowed python3_asyncio_unix; }
case_narrowed_python3_unix_datagrams() { narrowed python3_unix_datagrams; }
case_narrowed_node_udp() { narrowed node_udp; }
case_narrowed_pty() { narrowed pty; }
case_narrowed_http_on_its_loopback() { narrowed http_on_its_loopback; }
case_narrowed_write_outside_is_refused() { narrowed write_outside_is_refused; }

# What no tree names: read by the same job with reads wide, denied narrowed.
case_narrowed_a_secret_stays_unread() {
	W="$T/work"
	mkdir -p "$W" "$T/secret" && echo hidden >"$T/secret/key" || fail "setup"
	[ "$("$RUN" -s "$S" -- /bin/cat "$T/secret/key" </dev/null)" = hidden ] ||
		fail "wide, the secret was not read: the pair proves nothing"
	if "$RUN" -s "$S" --read-system --read "$W" -- /bin/cat "$T/secret/key" \
	    </dev/null >"$T/out" 2>"$T/err"; then
		fail "narrowed, the secret was read: $(cat "$T/out")"
	fi
	grep -q "Permission denied" "$T/err" || fail "not EACCES: $(cat "$T/err")"
	! grep -q hidden "$T/out" || fail "the secret came out"
}

run_cases
