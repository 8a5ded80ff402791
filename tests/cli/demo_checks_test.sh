#!/bin/sh
# tools/demo.sh's checks (//tools:demo_test runs it confined) must catch a
# job that ran unconfined: run through a confine-run that adds
# --backend none, the write outside and the pid must be its failures.
. tests/cli/lib.sh

case_demo_fails_when_the_jobs_run_unconfined() {
	cat >"$T/unconfined" <<-EOF2
	#!/bin/sh
	exec "$RUN" --backend none "\$@"
	EOF2
	chmod +x "$T/unconfined"
	sh "$ROOT/tools/demo.sh" "$T/unconfined" >"$T/out" 2>"$T/err"
	st=$?
	expect_status 1
	expect_out "^demo: 3 did not settle as expected\$"
	expect_out "escaped EXISTS: confinement failed"
	expect_out "exit status 0, but nothing said /\\^pid 2\\\$/"
}

run_cases
