#!/bin/sh
# Ctrl-C: SIGINT (or SIGTERM, SIGHUP) to confine-run while its job runs
# cancels the job, waits for its settlement, and exits 124 with nothing of
# the job left.
. tests/cli/lib.sh

interrupt() { # SIGNAL
	"$RUN" -s "$S" --result "$T/r.json" -- "$FIX" pid-sleep 60000 \
	    </dev/null >"$T/out" 2>"$T/err" &
	pid=$!
	wait_for_line "$T/out"  # the job runs: it printed its pid
	kill -s "$1" "$pid"
	wait "$pid"
	st=$?
	expect_status 124
	expect_err_lines 1
	expect_err "^confine-run: cancelled: confine-run got SIG$1\$"
	expect_json "$T/r.json" outcome cancelled
	expect_json "$T/r.json" reason cancelled
	# Settled means proven gone: no polling, it must be gone already.
	# Its pid as we see it (the one it printed, in a namespace of its own,
	# is not ours).
	job=$(json "$T/r.json" pid)
	[ "$job" -gt 1 ] || fail "no pid in the result"
	! kill -0 "$job" 2>/dev/null || fail "the job $job is still alive"
	pgid=$(json "$T/r.json" pgid)
	! kill -0 -- "-$pgid" 2>/dev/null || fail "its group $pgid is still there"
}

case_sigint_cancels_the_job() { interrupt INT; }
case_sigterm_cancels_the_job() { interrupt TERM; }
case_sighup_cancels_the_job() { interrupt HUP; }

# A signal to confine-run reaches only confine-run: the job is in a group
# of its own, so a terminal's Ctrl-C to our group does not kill it first.
case_job_is_not_in_our_process_group() {
	cr -s "$S" --result "$T/r.json" -- "$FIX" ids
	expect_status 0
	[ "$(json "$T/r.json" pgid)" != "$(ps -o pgid= -p $$ | tr -d ' ')" ] ||
		fail "the job is in our group"
}

run_cases
