#!/bin/sh
# --memory and --processes hit for real, which flags_test cannot show:
# in Bazel's sandbox cgroupfs is read-only and both are refused. This
# target runs unsandboxed, as root on a writable cgroup hierarchy (as
# //tests:cgroup_test does), and fails, never skips, where there is none.
. tests/cli/lib.sh
PLAIN="$ROOT/tests/plain_fixture"

case_memory_bound_is_the_oom_killer() {
	cr -s "$S" --memory 64M --result "$T/r.json" -- "$PLAIN" alloc 512
	expect_status 137  # 128 + SIGKILL
	expect_json "$T/r.json" reason signal
	expect_json "$T/r.json" signal 9
	cr -s "$S" --memory 256M -- "$PLAIN" alloc 16
	expect_status 0
}

# pids.max binds root too, where RLIMIT_NPROC would not.
case_process_bound_is_a_failed_fork_even_for_root() {
	[ "$(id -u)" -eq 0 ] || fail "run as uid $(id -u): this case is about root"
	cr -s "$S" --processes 10 -- "$PLAIN" fork-many 50
	expect_status 11  # EAGAIN
	cr -s "$S" --processes 10 -- "$PLAIN" fork-many 5
	expect_status 0
}

run_cases
