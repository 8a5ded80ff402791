#!/bin/sh
# Every option of confine-run, each shown to change what the job gets.
. tests/cli/lib.sh

case_scratch_is_the_only_writable_tree() {
	mkdir "$T/outside"
	cr -s "$S" -- "$FIX" write "$S/inside"
	expect_status 0
	[ "$(cat "$S/inside")" = confined ] || fail "the write inside did not land"
	cr --scratch "$S" -- "$FIX" write "$T/outside/f"
	expect_status 30  # EROFS: outside the root, the job's view is read-only
	expect_err "Read-only file system"
	[ ! -e "$T/outside/f" ] || fail "the write outside landed"
}

# A host's listener on the loopback: the job's loopback is its own, where
# nothing listens (a kernel whose init supervises its sockets, Linux 5.19),
# or its socket() is refused.
case_the_hosts_listener_is_out_of_reach() {
	python3 -c '
import socket, sys, time
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen()
print(s.getsockname()[1], flush=True)
s.settimeout(30)
c, _ = s.accept()
print("accepted", flush=True)
' >"$T/port" &
	_l=$!
	wait_for_line "$T/port"
	port=$(head -n 1 "$T/port")
	cr -s "$S" -- "$FIX" connect "$port"
	case $(uname -r) in
	[0-4].* | 5.[0-9].* | 5.1[0-8].*)
		expect_status 1
		expect_err "socket: Operation not permitted" ;;
	*)
		expect_status 111
		expect_err "connect: Connection refused" ;;
	esac
	# Unconfined, the same connect is the listener's.
	cr --backend none -- "$FIX" connect "$port"
	expect_status 0
	wait "$_l"
	grep -qx accepted "$T/port" || fail "the host's listener saw nothing"
}

case_backend_none_is_unconfined_and_needs_no_scratch() {
	mkdir "$T/outside"
	cr --backend none --result "$T/r.json" -- "$FIX" write "$T/outside/f"
	expect_status 0
	[ -e "$T/outside/f" ] || fail "the unconfined write did not land"
	expect_json "$T/r.json" backend none
}

# confine-run ARGS around a job that waits for us: what confine-run's
# children are meanwhile, each "PID-NAMESPACE COMM" in $T/kids, as we see
# them; then the job released, and its status in $st.
children_while_held() {
	mkfifo "$S/go"
	"$RUN" "$@" -- /bin/sh -c 'echo up >"$1"; read x <"$2"' sh "$S/up" \
	    "$S/go" </dev/null >"$T/out" 2>"$T/err" &
	_p=$!
	wait_for_line "$S/up"
	readlink "/proc/$_p/ns/pid" >"$T/ns"
	: >"$T/kids"
	for _c in $(cat /proc/"$_p"/task/*/children); do
		printf '%s %s\n' "$(readlink "/proc/$_c/ns/pid")" \
		    "$(cat "/proc/$_c/comm")" >>"$T/kids"
	done
	echo go >"$S/go"
	wait "$_p"
	st=$?
	rm -f "$S/go" "$S/up"
}

# Nothing made for confinement that a job of backend none will not have:
# beside its job, confine-run holds no init in namespaces of its own. The
# pair: beside a confined job it does, its job's init.
case_backend_none_prepares_no_init() {
	children_while_held -s "$S" --backend none
	expect_status 0
	[ -s "$T/kids" ] || fail "confine-run had no children"
	while read -r ns comm; do
		[ "$ns" = "$(cat "$T/ns")" ] ||
			fail "a child ($comm) in another PID namespace: $ns"
	done <"$T/kids"
	children_while_held -s "$S"
	expect_status 0
	grep -qv "^$(cat "$T/ns") " "$T/kids" ||
		fail "no init of a PID namespace of its own beside a confined job"
}

case_backend_auto_and_landlock_confine_with_landlock() {
	for b in auto landlock; do
		cr -s "$S" --backend "$b" --result "$T/r.json" -- "$FIX" exit 0
		expect_status 0
		expect_json "$T/r.json" backend landlock
	done
	cr -s "$S" --result "$T/r.json" -- "$FIX" exit 0
	expect_json "$T/r.json" backend landlock
}

case_unknown_backend_is_125() {
	cr -s "$S" --backend chroot -- "$FIX" write "$S/f"
	expect_status 125
	expect_err_lines 1
	expect_err "^confine-run: unknown backend chroot \\(auto, landlock, seatbelt or none\\)\$"
	[ ! -e "$S/f" ] || fail "the job ran"
}

case_scratch_is_required_unless_backend_none() {
	cr -- "$FIX" exit 0
	expect_status 125
	expect_err "^confine-run: --scratch DIR is required unless --backend none\$"
}

case_deadline_cancels() {
	cr -s "$S" --deadline 200ms --result "$T/r.json" -- "$FIX" sleep 60000
	expect_status 124
	expect_json "$T/r.json" reason deadline
	cr -s "$S" -t 1m -- "$FIX" exit 0
	expect_status 0
}

case_bad_durations_are_125_and_named() {
	for d in 10 10x 1.5s -5s "" 99999999999999999999s; do
		cr -s "$S" -t "$d" -- "$FIX" write "$S/f"
		expect_status 125
		expect_err_lines 1
		expect_err "^confine-run: --deadline $d: "
		cr -s "$S" --grace "$d" -- "$FIX" write "$S/f"
		expect_status 125
		expect_err "^confine-run: --grace $d: "
	done
	[ ! -e "$S/f" ] || fail "a job ran"
	cr -s "$S" -t 10 -- "$FIX" exit 0
	expect_err "no unit \\(ms, s, m or h\\)"
	cr -s "$S" -t 5parsecs -- "$FIX" exit 0
	expect_err "unknown unit"
}

# A job that traps SIGTERM, cancelled by a signal to confine-run: with
# --grace it gets SIGTERM first and cleans up, without it only SIGKILL.
grace_run() { # [--grace DUR]
	sh_script='trap "echo term; exit 7" TERM; "$1" sleep 60000 & echo ready; wait'
	"$RUN" -s "$S" "$@" -- /bin/sh -c "$sh_script" sh "$FIX" \
	    </dev/null >"$T/out" 2>"$T/err" &
	pid=$!
	wait_for_line "$T/out"
	kill -INT "$pid"
	wait "$pid"
	st=$?
}

case_grace_sends_sigterm_first() {
	grace_run --grace 60s
	expect_status 124
	expect_out "^term\$"
}

case_without_grace_sigkill_at_once() {
	grace_run
	expect_status 124
	! grep -q term "$T/out" || fail "the job saw SIGTERM"
}

# Ours, never the caller's: a PATH, and TMPDIR and HOME where it may write.
case_environment_is_confine_runs_own_by_default() {
	export CONFINE_TEST_VAR=1
	cr -s "$S" -- "$FIX" env
	expect_status 3
	[ "$(cat "$T/out")" = "$(printf 'PATH=/usr/local/bin:/usr/bin:/bin\nTMPDIR=/tmp\nHOME=%s' "$S")" ] ||
		fail "wrong environment: $(cat "$T/out")"
}

case_empty_env_is_empty() {
	export CONFINE_TEST_VAR=1
	cr -s "$S" --empty-env -- "$FIX" env
	expect_status 0
	[ ! -s "$T/out" ] || fail "the job saw variables"
}

# What -e gives wins over what confine-run would have given.
case_env_replaces_confine_runs_own() {
	cr -s "$S" -e PATH=/x -e HOME=/h -e TMPDIR=/t -- "$FIX" env
	expect_status 3
	[ "$(cat "$T/out")" = "$(printf 'PATH=/x\nHOME=/h\nTMPDIR=/t')" ] ||
		fail "wrong environment: $(cat "$T/out")"
}

case_env_sets_exactly_the_variables_given() {
	cr -s "$S" --empty-env -e A=1 --env "B=two words" -e C= -- "$FIX" env
	expect_status 3  # the fixture exits with the number of variables
	[ "$(cat "$T/out")" = "$(printf 'A=1\nB=two words\nC=')" ] ||
		fail "wrong environment"
}

case_later_env_replaces_earlier() {
	cr -s "$S" --empty-env -e A=1 -e AB=2 -e A=3 -- "$FIX" env
	expect_status 2
	[ "$(cat "$T/out")" = "$(printf 'A=3\nAB=2')" ] || fail "wrong environment"
}

case_pass_env_passes_our_own_when_set() {
	unset CONFINE_TEST_UNSET
	CONFINE_TEST_VAR='x=y z' "$RUN" -s "$S" --empty-env --pass-env CONFINE_TEST_VAR \
	    --pass-env CONFINE_TEST_UNSET -- "$FIX" env >"$T/out" 2>"$T/err"
	st=$?
	expect_status 1
	[ "$(cat "$T/out")" = "CONFINE_TEST_VAR=x=y z" ] || fail "wrong environment"
}

case_bad_env_is_125() {
	for e in NOEQUALS =value; do
		cr -s "$S" -e "$e" -- "$FIX" exit 0
		expect_status 125
		expect_err "^confine-run: --env $e: not NAME=VALUE\$"
	done
	for e in A=B ""; do
		cr -s "$S" --pass-env "$e" -- "$FIX" exit 0
		expect_status 125
		expect_err "^confine-run: --pass-env $e: not a variable name\$"
	done
}

case_cwd_defaults_to_the_scratch_root() {
	cr -s "$S" -- "$FIX" cwd
	expect_status 0
	[ "$(cat "$T/out")" = "$(cd "$S" && pwd -P)" ] || fail "cwd is $(cat "$T/out")"
}

case_cwd_sets_the_working_directory() {
	mkdir "$S/sub" "$T/elsewhere"
	cr -s "$S" -C "$S/sub" -- "$FIX" cwd
	expect_status 0
	[ "$(cat "$T/out")" = "$(cd "$S/sub" && pwd -P)" ] || fail "cwd is $(cat "$T/out")"
	# Outside the scratch root too: it is only where the job starts.
	cr -s "$S" --cwd "$T/elsewhere" -- "$FIX" cwd
	expect_status 0
	[ "$(cat "$T/out")" = "$(cd "$T/elsewhere" && pwd -P)" ] || fail "cwd is $(cat "$T/out")"
}

case_relative_cwd_is_125() {
	mkdir "$S/sub"
	cr -s "$S" -C sub -- "$FIX" cwd
	expect_status 125
	expect_err "^confine-run: refused: cwd must be an absolute path"
}

case_device_makes_a_node_writable() {
	cr -s "$S" -- "$FIX" write /dev/zero
	expect_status 13
	cr -s "$S" --device /dev/zero -- "$FIX" write /dev/zero
	expect_status 0
	cr -s "$S" --device /dev/zero -- "$FIX" write /dev/full
	expect_status 13
}

case_helper_execs_the_binary_given() {
	# A wrapper that leaves a mark: the helper is spawned with an empty
	# environment, so everything it needs is spelt out.
	cat >"$T/helper" <<-EOF
	#!/bin/sh
	echo "\$@" >"$T/helper-ran"
	exec "$HELPER" "\$@"
	EOF
	chmod +x "$T/helper"
	cr -s "$S" --helper "$T/helper" -- "$FIX" exit 0
	expect_status 0
	grep -q -- "--fd 3" "$T/helper-ran" || fail "the helper given did not run"
	cr -s "$S" --helper helper/confine-helper -- "$FIX" exit 0
	expect_status 125
	expect_err "not absolute"
}

case_connect_uses_the_helper_listening_there() {
	d=$(mktemp -d /tmp/confine-cli.XXXXXX)
	sock="$d/helper.sock"
	cr -s "$S" --connect "$sock" -- "$FIX" exit 0
	expect_status 125
	expect_err "^confine-run: cannot start a helper: connect $sock"
	"$HELPER" --listen "$sock" 2>"$T/helper.err" &
	hpid=$!
	i=0
	until [ -S "$sock" ]; do
		i=$((i + 1))
		[ "$i" -le 1200 ] || { kill "$hpid"; fail "no socket"; }
		sleep 0.05
	done
	cr -s "$S" --connect "$sock" -- "$FIX" write "$S/f"
	st1=$st
	# The same helper named by CONFINE_SOCKET: two peers admitted in all.
	CONFINE_SOCKET=$sock "$RUN" -s "$S" -- "$FIX" write "$S/g" </dev/null \
	    >"$T/out" 2>"$T/err"
	st2=$?
	kill -TERM "$hpid"
	wait "$hpid"
	hst=$?
	rm -rf "$d"
	st=$st1
	expect_status 0
	st=$st2
	expect_status 0
	[ -e "$S/f" ] && [ -e "$S/g" ] || fail "the jobs did not run"
	[ "$(grep -c ': admitted$' "$T/helper.err")" -eq 2 ] ||
		fail "not both through the listening helper: $(cat "$T/helper.err")"
	[ "$hst" -eq 0 ] || fail "the helper exited $hst"
}

case_helper_and_connect_exclude_each_other() {
	cr -s "$S" --helper "$HELPER" --connect /tmp/x.sock -- "$FIX" exit 0
	expect_status 125
	expect_err "^confine-run: --helper and --connect exclude each other\$"
}

case_result_file_holds_every_field_in_order() {
	cr -s "$S" --result "$T/r.json" -- "$FIX" exit 0
	expect_status 0
	keys=$(python3 -c 'import json, sys
print(" ".join(json.load(open(sys.argv[1]))))' "$T/r.json") || fail "not JSON"
	[ "$keys" = "outcome reason exit_code signal errno step pid pgid backend proof scratch_kept tmp_kept wall_ms user_ms sys_ms max_rss_kib enforced reads" ] ||
		fail "keys: $keys"
	[ "$(wc -l <"$T/r.json")" -eq 1 ] || fail "not one line"
	expect_json "$T/r.json" outcome completed
	expect_json "$T/r.json" reason None
	expect_json "$T/r.json" exit_code 0
	expect_json "$T/r.json" step None
	expect_json "$T/r.json" scratch_kept False
	expect_json "$T/r.json" reads everywhere
	[ "$(json "$T/r.json" pid)" -gt 0 ] || fail "no pid"
	[ "$(json "$T/r.json" pgid)" -gt 0 ] || fail "no pgid"
	[ "$(json "$T/r.json" proof)" != None ] || fail "no proof for a completed job"
	[ ! -s "$T/out" ] || fail "the result went to stdout too"
}

case_result_of_each_outcome() {
	cr -s "$S" --result "$T/r.json" -- "$FIX" signal 10
	expect_json "$T/r.json" outcome failed
	expect_json "$T/r.json" reason signal
	expect_json "$T/r.json" signal 10
	expect_json "$T/r.json" exit_code -1
	cr -s "$S" --result "$T/r.json" -- "$S/no-such-program"
	expect_json "$T/r.json" reason exec
	expect_json "$T/r.json" errno 2
	expect_json "$T/r.json" step exec
	cr -s "$S" -t 100ms --result "$T/r.json" -- "$FIX" sleep 60000
	expect_json "$T/r.json" outcome cancelled
	cr -s "$S" --result "$T/r.json" -- "$FIX" detach 60000
	expect_json "$T/r.json" outcome uncertain
	expect_json "$T/r.json" reason group_still_present
}

case_result_dash_is_stdout_after_the_jobs_output() {
	cr -s "$S" --result - -- "$FIX" pid-sleep 0
	expect_status 0
	[ "$(wc -l <"$T/out")" -eq 2 ] || fail "not the job's line, then ours"
	# Its pid as it sees it, then the result's (as we see it: in a PID
	# namespace of its own the two differ).
	head -n 1 "$T/out" | grep -Eqx '[0-9]+' || fail "the job's line is not first"
	[ "$(json "$T/out" pid)" -gt 1 ] || fail "no pid in the result"
}

# What was in force, in the result: backend, Landlock's ABI, namespaces,
# sockets, filter, view, identity. Here, with namespaces: the machine's
# own Landlock ABI, read from the kernel.
case_result_says_what_was_enforced() {
	cr -s "$S" --result "$T/r.json" -- "$FIX" exit 0
	expect_status 0
	abi=$(python3 -c 'import ctypes; print(ctypes.CDLL(None).syscall(444, None, 0, 1))')
	python3 - "$T/r.json" "$abi" "$(id -u)" <<'PY' || fail "enforced: $(cat "$T/r.json")"
import json, sys
e = json.loads(open(sys.argv[1]).read())["enforced"]
assert e["backend"] == "landlock", e
assert e["landlock"] == sys.argv[2], e
# The rights of each ABI (helper/backend/landlock.c), as this kernel has them.
rights = ["write"] + ["refer"] * (int(sys.argv[2]) >= 2) + \
    ["truncate"] * (int(sys.argv[2]) >= 3) + \
    ["ioctl-dev"] * (int(sys.argv[2]) >= 5) + ["tcp"] * (int(sys.argv[2]) >= 4) + \
    ["signal", "abstract-unix"] * (int(sys.argv[2]) >= 6)
assert e["landlock-rights"] == ",".join(rights), e
assert e["namespaces"].startswith("pid,mount,net,ipc,uts"), e
assert e["seccomp"] in ("own", "own-net"), e
assert e["view"] == "ro,nodev,proc,dev", e
assert e["uid"] == sys.argv[3], e
assert e["reads"] == "everywhere", e
PY
	cr -s "$S" -v --read-system --read "$(dirname "$(readlink -f "$FIX")")" -- "$FIX" exit 0
	expect_status 0
	expect_err "landlock-rights=[a-z,-]+,read "
	cr -s "$S" -v -- "$FIX" exit 0
	expect_err "; enforced: backend=landlock landlock=$abi landlock-rights=[a-z,-]+ namespaces=pid,"
	cr --backend none --result "$T/r.json" -- "$FIX" exit 0
	expect_json "$T/r.json" backend none
	python3 -c 'import json,sys; e = json.load(open(sys.argv[1]))["enforced"]
assert e["backend"] == "none" and "landlock" not in e, e' "$T/r.json" ||
		fail "enforced without a backend: $(cat "$T/r.json")"
}

# A minimum demanded: met here; refused, saying why, where it cannot be.
case_a_requirement_is_met_or_the_job_refused() {
	cr -s "$S" --require namespaces --require landlock -- "$FIX" exit 0
	expect_status 0
	cr --backend none --require landlock -- "$FIX" exit 0
	expect_status 125
	expect_err "^confine-run: refused: backend none confines nothing"
	cr -s "$S" --require nothing -- "$FIX" exit 0
	expect_status 125
	expect_err "unknown requirement nothing"
	# In a stand-in of a default Docker container: no namespace at all.
	"$CONTAINER" -- "$RUN" -s "$S" --require namespaces --result "$T/r.json" \
	    -- "$FIX" write "$S/ran" </dev/null >"$T/out" 2>"$T/err"
	st=$?
	expect_status 125
	expect_err "^confine-run: refused: namespaces of its own were required"
	[ ! -e "$S/ran" ] || fail "the job ran"
	python3 -c 'import json,sys; r = json.load(open(sys.argv[1]))["refused"]
assert r["layer"] == "pid namespace", r' "$T/r.json" ||
		fail "the refusal: $(cat "$T/r.json")"
}

# When nothing runs, FILE holds why, as one line shaped like no
# settlement: {"refused": ...}, never an earlier run's.
expect_refused() { # FILE
	[ "$(wc -l <"$1")" -eq 1 ] || fail "$(cat "$1"): not one line"
	python3 -c '
import json, sys
d = json.loads(open(sys.argv[1]).read())
assert list(d) == ["refused"] and "message" in d["refused"], d' "$1" ||
		fail "$(cat "$1"): not a refusal"
}

case_result_is_emptied_when_nothing_runs() {
	echo stale >"$T/r.json"
	cr -s "$S/no-such-dir" --result "$T/r.json" -- "$FIX" exit 0
	expect_status 125
	expect_refused "$T/r.json"
}

# FILE is emptied before anything else is checked: after a usage error
# (wherever --result stands among the options) it holds no earlier run's,
# but the refusal.
case_result_is_emptied_on_a_usage_error() {
	for args in "-t 10x --result $T/r.json" "--result $T/r.json -t 10x" \
	    "--no-such-option --result $T/r.json" "--result=$T/r.json --backend chroot" \
	    "--result $T/r.json --helper $HELPER --connect /x.sock" \
	    "-e =x --result $T/r.json"; do
		echo stale >"$T/r.json"
		# shellcheck disable=SC2086
		cr -s "$S" $args -- "$FIX" write "$S/f"
		expect_status 125
		expect_err_lines 1
		expect_refused "$T/r.json"
	done
	echo stale >"$T/r.json"
	cr -s "$S" --result "$T/r.json"
	expect_status 125
	expect_err "no program to run"
	expect_refused "$T/r.json"
	[ ! -e "$S/f" ] || fail "a job ran"
}

# A name found nowhere along PATH fails as a missing path does: 127, and
# the same settlement, field for field (but the ids and the times).
case_result_of_a_program_not_in_path_is_a_failed_exec() {
	cr -s "$S" --result "$T/path.json" -- "$S/no-such-program"
	expect_status 127
	echo stale >"$T/r.json"
	PATH="/nonexistent:$T" "$RUN" -s "$S" --result "$T/r.json" -- \
	    no-such-program </dev/null >"$T/out" 2>"$T/err"
	st=$?
	expect_status 127
	expect_err_lines 1
	expect_err "^confine-run: failed: cannot run no-such-program: exec: not found in PATH; give its absolute path, or put its directory in confine-run's PATH\$"
	for k in outcome reason exit_code signal errno step backend proof scratch_kept; do
		[ "$(json "$T/r.json" "$k")" = "$(json "$T/path.json" "$k")" ] ||
			fail "$k: $(json "$T/r.json" "$k"), by path $(json "$T/path.json" "$k")"
	done
	expect_json "$T/r.json" outcome failed
	expect_json "$T/r.json" reason exec
	expect_json "$T/r.json" errno 2
	expect_json "$T/r.json" step exec
	[ "$(json "$T/r.json" pid)" -gt 0 ] || fail "no pid"
}

case_result_that_cannot_be_written_refuses_the_job() {
	cr -s "$S" --result "$T/no-such-dir/r.json" -- "$FIX" write "$S/f"
	expect_status 125
	expect_err "^confine-run: --result $T/no-such-dir/r.json: No such file or directory\$"
	[ ! -e "$S/f" ] || fail "the job ran"
}

# --read and --read-system: the job reads what they say, and -v and the
# JSON say so too.
case_read_narrows_what_the_job_reads() {
	mkdir "$T/src" "$T/secret" && echo s >"$T/src/f" && echo k >"$T/secret/key"
	FIXDIR=$(dirname "$(readlink -f "$FIX")")
	cr -s "$S" -v --read-system --read "$FIXDIR" --read "$T/src" \
	    --result "$T/r.json" -- "$FIX" read "$T/src/f"
	expect_status 0
	expect_err "; reads its own trees, system, $FIXDIR, $T/src; enforced: .* reads=narrowed\$"
	python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))["reads"]
sys.exit(r != ["system", sys.argv[2], sys.argv[3]])' "$T/r.json" "$FIXDIR" "$T/src" ||
		fail "reads: $(cat "$T/r.json")"
	cr -s "$S" --read-system --read "$FIXDIR" -- "$FIX" read "$T/secret/key"
	expect_status 13
	cr -s "$S" --read "$T/nowhere" -- "$FIX" exit 0
	expect_status 125
	expect_err "^confine-run: refused: a readable tree must exist"
	cr -s "$S" --read relative -- "$FIX" exit 0
	expect_status 125
	expect_err "readable trees must be absolute paths"
}

case_verbose_says_how_a_completed_job_settled() {
	for v in -v --verbose; do
		cr -s "$S" "$v" -- "$FIX" exit 0
		expect_status 0
		expect_err_lines 1
		expect_err "^confine-run: completed; pid [0-9]+, pgid [0-9]+, landlock, wall [0-9.]+ ms, user [0-9.]+ ms, sys [0-9.]+ ms, max rss [0-9]+ KiB; reads everywhere; enforced: backend=landlock .* reads=everywhere\$"
	done
	cr -s "$S" -v -- "$FIX" exit 4
	expect_err_lines 1
	expect_err "^confine-run: failed: exit code 4; pid "
}

case_options_after_the_program_are_its_own() {
	cr -s "$S" "$FIX" exit 3 -v --result /
	expect_status 3
	expect_err "^confine-run: failed: exit code 3\$"
}

case_job_has_our_stdin_stdout_and_stderr() {
	printf 'to the job\n' >"$T/in"
	STDIN="$T/in" cr -s "$S" -- "$FIX" cat
	expect_status 0
	[ "$(cat "$T/out")" = "to the job" ] || fail "stdin/stdout not passed"
	[ "$(cat "$T/err")" = "err" ] || fail "stderr not passed"
}

case_job_gets_no_other_descriptor() {
	cr -s "$S" --result "$T/r.json" -- "$FIX" fds
	expect_status 0
	[ ! -s "$T/out" ] || fail "extra descriptors: $(cat "$T/out")"
}

case_program_is_found_like_a_shell_finds_it() {
	mkdir "$T/bin"
	ln -s "$FIX" "$T/bin/fx"
	PATH="/nonexistent:$T/bin" "$RUN" -s "$S" fx exit 5 >"$T/out" 2>"$T/err"
	st=$?
	expect_status 5
	"$RUN" -s "$S" bin/fx exit 6 >"$T/out" 2>"$T/err"
	st=$?
	expect_status 6
}

case_version_is_the_headers() {
	want=$(sed -n 's/^#define CONFINE_VERSION "\(.*\)"$/\1/p' "$ROOT/include/confine/confine.h")
	[ -n "$want" ] || fail "no version in the header"
	cr --version
	expect_status 0
	[ "$(cat "$T/out")" = "confine-run $want" ] || fail "version: $(cat "$T/out")"
}

case_bounds_are_hit_as_the_matching_status() {
	PLAIN="$ROOT/tests/plain_fixture"
	cr -s "$S" --cpu 1s -t 1m -- "$PLAIN" spin
	expect_status 152  # 128 + SIGXCPU
	cr -s "$S" --open-files 16 -- "$PLAIN" open-many 100
	expect_status 24   # EMFILE
	cr -s "$S" --file-size 1M -- "$PLAIN" write-big "$S/big" 4194304
	expect_status 153  # 128 + SIGXFSZ
	cr -s "$S" --address-space 128M -- "$PLAIN" alloc 512
	expect_status 12   # ENOMEM
	cr -s "$S" --open-files 64 --address-space 1G -- "$PLAIN" open-many 10
	expect_status 0
}

# In Bazel's sandbox there is no cgroup to create: refused, never unbounded.
# (bounds_test, unsandboxed, shows them hit.)
case_bounds_that_need_a_cgroup_are_refused_here() {
	cr -s "$S" --memory 64M -- "$FIX" write "$S/f"
	expect_status 125
	expect_err "^confine-run: refused: a memory bound needs a memory cgroup"
	if [ "$(id -u)" -eq 0 ]; then
		cr -s "$S" --processes 10 -- "$FIX" write "$S/f"
		expect_status 125
		expect_err "^confine-run: refused: a process bound for root"
	fi
	[ ! -e "$S/f" ] || fail "a job ran"
}

case_bad_bounds_are_125_and_named() {
	for v in 0 -5 10X 1.5M "" 99999999999999999999; do
		cr -s "$S" --memory "$v" -- "$FIX" write "$S/f"
		expect_status 125
		expect_err_lines 1
		expect_err "^confine-run: --memory $v: "
		cr -s "$S" --processes "$v" -- "$FIX" write "$S/f"
		expect_status 125
		expect_err "^confine-run: --processes $v: "
	done
	cr -s "$S" --cpu 1500ms -- "$FIX" write "$S/f"
	expect_status 125
	expect_err "whole number of seconds"
	[ ! -e "$S/f" ] || fail "a job ran"
}

case_fresh_scratch_is_made_and_removed() {
	cr -s "$S" --fresh-scratch --result "$T/r.json" -- "$FIX" cwd
	expect_status 0
	case $(cat "$T/out") in
	"$S"/confine.*) ;;
	*) fail "the job ran in $(cat "$T/out"), not a fresh root in $S" ;;
	esac
	expect_json "$T/r.json" scratch_kept False
	[ -z "$(ls -A "$S")" ] || fail "the fresh root was left in $S"
	cr -s "$S" --fresh-scratch --result "$T/r.json" -- "$FIX" detach 30000
	expect_status 123
	expect_json "$T/r.json" scratch_kept True
	[ -n "$(ls -A "$S")" ] || fail "the fresh root of an uncertain job was removed"
}

# Both ways: every option of --help has its entry in the manual's OPTIONS,
# and every entry there is in --help, each short option with its long one.
case_help_and_the_manual_name_every_option() {
	for h in -h --help; do
		cr "$h"
		expect_status 0
		expect_out "^usage: confine-run \\[OPTIONS\\] \\[--\\] EXE \\[ARG...\\]\$"
	done
	sed -n '/^\.SH OPTIONS/,/^\.SH EXIT/p' "$ROOT/docs/man/confine-run.1" |
		sed 's/\\-/-/g' >"$T/man"
	grep -oE -- '--[a-z][a-z-]+' "$T/out" | sort -u >"$T/help.long"
	grep -oE -- '--[a-z][a-z-]+' "$T/man" | sort -u >"$T/man.long"
	[ "$(wc -l <"$T/help.long")" -ge 21 ] || fail "help lists only: $(cat "$T/help.long")"
	diff "$T/help.long" "$T/man.long" >"$T/err" ||
		fail "options of --help (<) and of the manual (>) differ"
	sed -n 's/^  \(-[a-zA-Z]\), \(--[a-z-]*\).*/\1 \2/p' "$T/out" | sort >"$T/help.short"
	sed -n 's/^\.BR \(-[a-zA-Z]\) ", " \(--[a-z-]*\).*/\1 \2/p' "$T/man" |
		sort >"$T/man.short"
	[ "$(wc -l <"$T/help.short")" -ge 6 ] || fail "help has only: $(cat "$T/help.short")"
	diff "$T/help.short" "$T/man.short" >"$T/err" ||
		fail "short options of --help (<) and of the manual (>) differ"
}

# As the manual says: a duration of 0s is no deadline (and no grace), not
# one that has passed already.
case_zero_deadline_is_none() {
	cr -s "$S" -t 0s --grace 0s --result "$T/r.json" -- "$FIX" sleep 300
	expect_status 0
	expect_json "$T/r.json" outcome completed
	cr -s "$S" --deadline 0ms --result "$T/r.json" -- "$FIX" exit 0
	expect_status 0
}

case_bad_usage_is_125_with_one_line() {
	cr --no-such-option -s "$S" -- "$FIX" exit 0
	expect_status 125
	expect_err_lines 1
	expect_err "^confine-run: unknown option --no-such-option"
	cr -x -s "$S" -- "$FIX" exit 0
	expect_status 125
	expect_err "^confine-run: unknown option -x"
	cr -s
	expect_status 125
	expect_err "^confine-run: -s needs a value"
	cr -s "$S"
	expect_status 125
	expect_err "^confine-run: no program to run"
}

run_cases
