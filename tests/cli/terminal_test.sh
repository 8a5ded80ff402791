#!/bin/sh
# confine-run on a terminal: the job's stdio is the user's terminal (a
# pty whose slave is the controlling terminal of confine-run's session,
# as a shell's is), which stays the user's. Interactive programs run:
# Python's REPL and a shell read it and write it; a job that tries to take
# its foreground is refused (it leads a session of its own), and the
# user's Ctrl-C still reaches confine-run, which cancels the job (124).
. "$(dirname "$0")/lib.sh"

# pty.py ARGV... with the bytes to type on stdin, one write per line
# after a pause; prints what the terminal showed, exits with the status.
pty_run() {
	/usr/bin/python3 - "$@" <<'PY'
import os, pty, select, sys, time
script = sys.stdin.buffer.read() if False else None
argv = sys.argv[1:]
inputs = [l.encode().decode("unicode_escape").encode("latin-1")
          for l in os.environ["TYPE"].split("|") if l]
pid, fd = pty.fork()
if pid == 0:
    os.execv(argv[0], argv)
out, last = b"", time.time()
deadline = time.time() + 60
while time.time() < deadline:
    r, _, _ = select.select([fd], [], [], 0.1)
    if r:
        try:
            d = os.read(fd, 4096)
        except OSError:
            break
        if not d:
            break
        out += d
        last = time.time()
    elif inputs and time.time() - last > 0.5:
        os.write(fd, inputs.pop(0))
        last = time.time()
else:
    os.kill(pid, 9)
_, st = os.waitpid(pid, 0)
sys.stdout.buffer.write(out)
sys.exit(os.waitstatus_to_exitcode(st) & 0xff)
PY
}

# TYPE="a|b|..." then the command; its screen in $T/out, status in $st.
on_terminal() {
	pty_run "$@" >"$T/out" 2>"$T/err"
	st=$?
}

case_pythons_repl_runs() {
	TYPE='print(6*7)\n|import os; print("own", os.getsid(0) == os.getpid())\n|exit()\n' \
		on_terminal "$RUN" -s "$S" -- /usr/bin/python3 -i
	expect_status 0
	expect_out '^42'
	expect_out '^own True'
}

case_a_shell_runs() {
	TYPE='echo hi-$((1+2))\n|exit 3\n' on_terminal "$RUN" -s "$S" -- /bin/sh -i
	expect_status 3
	expect_out '^hi-3'
}

# The job asks for the foreground and is refused (ENOTTY: not its
# terminal); the user's Ctrl-C is confine-run's, which cancels it.
case_ctrl_c_is_still_the_users() {
	TYPE='\x03' on_terminal "$RUN" -s "$S" -- /bin/sh -c \
		"\"$FIX\" tty fg; echo fg=\$?; exec \"$FIX\" sleep 60000"
	expect_status 124
	expect_out 'fg=25'
	expect_out 'cancelled'
}

run_cases
