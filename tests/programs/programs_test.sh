#!/bin/sh
# Real programs, confined with confine-run's defaults (tests/programs/
# programs.sh): each completes, writes only inside its scratch root, and
# is refused where it reaches out. A program the machine lacks is a
# failure (tools/setup installs them all), never a skip.
. tests/cli/lib.sh
. tests/programs/programs.sh

job() { "$RUN" -s "$S" -- "$@" </dev/null; }

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
		case $_f in "$W/hello.c" | "$W/three.cc" | "$W/Makefile" | "$W/tree"* | "$W/nums" | "$W/victim") ;;
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
case_write_outside_is_refused() { each write_outside_is_refused; }
case_http_is_refused() { each http_is_refused; }

run_cases
