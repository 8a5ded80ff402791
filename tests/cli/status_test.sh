#!/bin/sh
# confine-run's exit statuses, one per way a job can settle or be refused,
# and the one line it prints when the outcome is not Completed.
. tests/cli/lib.sh

case_completed_is_0_and_silent() {
	cr -s "$S" -- "$FIX" exit 0
	expect_status 0
	expect_no_err
	[ ! -s "$T/out" ] || fail "stdout not empty"
}

case_exit_code_is_the_jobs() {
	for n in 1 3 42 255; do
		cr -s "$S" -- "$FIX" exit "$n"
		expect_status "$n"
		expect_err_lines 1
		expect_err "^confine-run: failed: exit code $n\$"
	done
}

case_signal_is_128_plus_its_number() {
	cr -s "$S" -- "$FIX" signal 15
	expect_status 143
	expect_err_lines 1
	expect_err "^confine-run: failed: killed by signal 15 "
	cr -s "$S" -- "$FIX" signal 9
	expect_status 137
}

case_missing_program_is_127() {
	cr -s "$S" -- "$S/no-such-program"
	expect_status 127
	expect_err_lines 1
	expect_err "cannot run $S/no-such-program: exec: No such file or directory\$"
}

case_program_not_in_path_is_127() {
	PATH="$T" "$RUN" -s "$S" -- no-such-program-anywhere >"$T/out" 2>"$T/err"
	st=$?
	expect_status 127
	expect_err "no-such-program-anywhere: exec: not found in PATH; give its absolute path"
}

case_program_that_cannot_run_is_126() {
	printf 'not a program\n' >"$T/plain"
	chmod 0644 "$T/plain"
	cr -s "$S" -- "$T/plain"
	expect_status 126
	expect_err "cannot run $T/plain: exec: Permission denied; the job's user may not execute it: chmod [+]x it"
}

# Not 127: the program exists, the directory it was to start in does not.
case_missing_cwd_is_126() {
	cr -s "$S" -C "$S/no-such-dir" -- "$FIX" exit 0
	expect_status 126
	expect_err "cannot run $FIX: cwd $S/no-such-dir: No such file or directory; -C must name a directory"
}

case_deadline_is_124() {
	cr -s "$S" -t 300ms -- "$FIX" sleep 60000
	expect_status 124
	expect_err_lines 1
	expect_err "^confine-run: cancelled: the deadline of 300ms passed\$"
}

# In a PID namespace of its own the pid it prints is not ours, and none
# of that namespace is left; without one, that pid is gone.
case_descendant_left_behind_is_123_and_killed() {
	cr -s "$S" -- /bin/sh -c 'readlink /proc/self/ns/pid; exec "$1" detach 600000' \
	    sh "$FIX"
	expect_status 123
	expect_err_lines 1
	expect_err "^confine-run: uncertain: something the job started outlived it"
	{ read -r ns; read -r child; } <"$T/out"
	[ -n "$child" ] || fail "the fixture printed no pid"
	if [ "$ns" != "$(readlink /proc/self/ns/pid)" ]; then
		[ "$PATH_EXPECTED" = init ] || fail "a PID namespace of its own"
		_left=$(ns_empty "$ns") || fail "left in its namespace: $_left"
	else
		[ "$PATH_EXPECTED" != init ] || fail "no PID namespace of its own"
		gone "$child" || fail "the descendant $child is still alive"
	fi
}

# confine-run SIGKILLed under a running job it runs itself: the job does
# not outlive it. Its shepherd ends it, or without one its guard, which
# kills confine-run's cgroups when confine-run is gone.
case_confine_run_killed_leaves_no_job() {
	"$RUN" -s "$S" -- "$FIX" pid-sleep 600000 </dev/null >"$T/out" 2>"$T/err" &
	pid=$!
	wait_for_line "$T/out"
	job=$(host_pid "$pid" "$(head -n 1 "$T/out")") || fail "no job seen"
	kill -KILL "$pid"
	wait "$pid"
	st=$?
	expect_status 137
	gone "$job" || fail "the job $job outlived confine-run"
}

# Nothing confine-run starts outlives it: its job, and the guard (or the
# shepherd) that would end the job if confine-run were killed.
case_nothing_of_confine_run_outlives_it() {
	"$RUN" -s "$S" -- "$FIX" pid-sleep 1000 </dev/null >"$T/out" 2>"$T/err" &
	pid=$!
	wait_for_line "$T/out"
	kids=$(cat "/proc/$pid/task/$pid/children")
	[ -n "$kids" ] || fail "confine-run has no children while its job runs"
	wait "$pid"
	st=$?
	expect_status 0
	for k in $kids; do
		gone "$k" || fail "$k, a child of confine-run, outlived it"
	done
}

# Nor is anything of it left to whoever reaps its orphans, even ended: its
# guard and its job's init are reaped by confine-run itself (under a PID 1
# that reaps none, each would be a zombie for good). We are that reaper
# here, a child subreaper: an orphan of confine-run's is our child as soon
# as confine-run has exited, before its exit is seen. Confined, and not.
case_nothing_of_it_is_left_to_a_reaper() {
	python3 - "$RUN" "$S" >"$T/out" 2>"$T/err" <<'PY' || fail "left behind"
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
assert libc.prctl(36, 1, 0, 0, 0) == 0  # PR_SET_CHILD_SUBREAPER
run, scratch = sys.argv[1], sys.argv[2]
for extra in (["-s", scratch], ["--backend", "none"]) * 3:
    pid = os.fork()
    if pid == 0:
        os.execv(run, [run] + extra + ["--", "/bin/true"])
    _, st = os.waitpid(pid, 0)
    assert os.WIFEXITED(st) and os.WEXITSTATUS(st) == 0, (extra, st)
    try:
        left = os.waitpid(-1, os.WNOHANG)
    except ChildProcessError:
        continue
    print("left behind by", extra, ":", "one running" if left[0] == 0
          else "pid %d" % left[0])
    sys.exit(1)
PY
}

# A helper given (--helper) SIGKILLed under a running job: confine-run
# reports the job Uncertain(helper lost), never Completed, and the job
# does not outlive its helper.
helper_lost() { # --helper PATH
	"$RUN" -s "$S" "$@" --result "$T/r.json" -- "$FIX" pid-sleep 600000 \
	    </dev/null >"$T/out" 2>"$T/err" &
	pid=$!
	wait_for_line "$T/out"  # the job runs, so its helper does
	job=$(host_pid "$pid" "$(head -n 1 "$T/out")") || fail "no job seen"
	# confine-run's one child, the wrapper given as --helper, says so.
	read -r helper others <"/proc/$pid/task/$pid/children"
	[ -n "$helper" ] && [ -z "$others" ] || fail "confine-run's children: $helper $others"
	[ "$(cat "$T/helper.pid")" = "$helper" ] ||
		fail "confine-run's child $helper is not the helper $(cat "$T/helper.pid")"
	kill -KILL "$helper" || fail "no helper to kill"
	wait "$pid"
	st=$?
	expect_status 123
	expect_err_lines 1
	expect_err "^confine-run: uncertain: the helper died\$"
	expect_json "$T/r.json" outcome uncertain
	expect_json "$T/r.json" reason helper_lost
	gone "$job" || fail "the job $job outlived its helper"
}

case_helper_given_lost_is_123() {
	cat >"$T/helper" <<-EOF
	#!/bin/sh
	echo \$\$ >"$T/helper.pid"
	exec "$HELPER" "\$@"
	EOF
	chmod +x "$T/helper"
	helper_lost --helper "$T/helper"
	[ -s "$T/helper.pid" ] || fail "the helper given did not run"
}

case_missing_scratch_root_is_125() {
	cr -s "$S/no-such-dir" -- "$FIX" write "$S/no-such-dir/f"
	expect_status 125
	expect_err_lines 1
	expect_err "^confine-run: refused: .*scratch root"
}

case_relative_scratch_root_is_125() {
	mkdir "$T/rel"
	cr -s rel -- "$FIX" exit 0
	expect_status 125
	expect_err "^confine-run: refused: scratch root must be an absolute path"
}

case_unsupported_backend_is_125() {
	# Linux has no sandbox-exec: Seatbelt cannot be applied, so nothing runs.
	[ ! -e /usr/bin/sandbox-exec ] || fail "this host has sandbox-exec"
	cr -s "$S" --backend seatbelt -- "$FIX" write "$S/f"
	expect_status 125
	expect_err "^confine-run: refused: .*launcher"
	[ ! -e "$S/f" ] || fail "the job ran"
}

case_helper_that_cannot_start_is_125() {
	cr -s "$S" --helper "$T/no-such-helper" -- "$FIX" exit 0
	expect_status 125
	expect_err "^confine-run: cannot start a helper: .*no-such-helper"
}

# A refusal names the layer that could not be applied, the call and its
# errno, and what to do, on stderr and as --result's one line, which is
# shaped like no settlement. Here: in a stand-in of a default Docker
# container (tests/standin/container.c), where no namespace can be made.
case_a_refusal_names_the_layer_the_call_and_the_errno() {
	"$CONTAINER" -- "$RUN" -s "$S" --result "$T/r.json" -- "$FIX" exit 0 \
		<"${STDIN:-/dev/null}" >"$T/out" 2>"$T/err"
	st=$?
	expect_status 125
	expect_err "^confine-run: refused: .*unshare\(CLONE_NEWUSER\|CLONE_NEWNS\) failed: Operation not permitted"
	python3 - "$T/r.json" <<'PY' || fail "the refusal's JSON: $(cat "$T/r.json")"
import json, sys
lines = open(sys.argv[1]).read().splitlines()
assert len(lines) == 1, lines
d = json.loads(lines[0])
assert list(d) == ["refused"], d
r = d["refused"]
assert r["layer"] == "user namespace", r
assert r["call"] == "unshare(CLONE_NEWUSER|CLONE_NEWNS)", r
assert r["errno"] == 1, r
assert "outcome" not in r
PY
}

# A spec refused before anything runs: no layer, the refusal's errno.
case_a_bad_spec_is_refused_with_its_errno() {
	cr -s rel --result "$T/r.json" -- "$FIX" exit 0
	expect_status 125
	python3 - "$T/r.json" <<'PY' || fail "the refusal's JSON: $(cat "$T/r.json")"
import json, sys
d = json.loads(open(sys.argv[1]).read())
r = d["refused"]
assert r["layer"] is None and r["call"] is None, r
assert r["errno"] == 22, r
assert "absolute" in r["message"], r
PY
}

# The job's own 124 or 125 cannot be told from ours by the status alone;
# the JSON result can.
case_result_tells_a_jobs_125_from_ours() {
	cr -s "$S" --result "$T/r.json" -- "$FIX" exit 125
	expect_status 125
	expect_json "$T/r.json" outcome failed
	expect_json "$T/r.json" exit_code 125
}

run_cases
