#!/usr/bin/python3
# confine-bb-runner end to end, through gRPC, from a client of its own:
# Python's grpcio (Debian's python3-grpcio: /usr/bin/python3, not the first
# python3 on PATH) with stubs that protoc's gRPC Python plugin made from the
# same bb/proto files (//bb:proto_py). bb_worker itself never runs here.
#
# Every function case_NAME is one case, with a runner of its own, reported
# in cmocka's words so that tools/test counts them:
#   [ RUN      ] NAME / [       OK ] NAME / [  FAILED  ] NAME
# A case fails by raising; the script fails when any case did.
import errno
import os
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import threading
import time
import traceback

ROOT = os.getcwd()
sys.path.insert(0, os.path.join(ROOT, "bb", "proto"))

import grpc  # noqa: E402
import resourceusage_pb2  # noqa: E402
import runner_pb2  # noqa: E402
import runner_pb2_grpc  # noqa: E402

RUNNER = os.path.join(ROOT, "bb", "confine-bb-runner")
TMP = os.environ.get("TEST_TMPDIR") or tempfile.gettempdir()
PATH = "/usr/bin:/bin"
USAGE_URL = "type.googleapis.com/buildbarn.resourceusage.POSIXResourceUsage"

# Bounds, so that a broken run fails instead of hanging: never measures.
MINUTE = 60.0


class Failure(Exception):
    pass


def fail(msg):
    raise Failure(msg)


def expect(cond, msg):
    if not cond:
        fail(msg)


def poll(what, cond, limit=MINUTE):
    end = time.monotonic() + limit
    while not cond():
        if time.monotonic() > end:
            fail("%s: not after %d s" % (what, limit))
        time.sleep(0.02)


def alive(pid):
    """kill(pid, 0) succeeds: pid exists (a zombie too)."""
    try:
        os.kill(pid, 0)
        return True
    except ProcessLookupError:
        return False


def in_ns(ns):
    """Host pids of the processes of the PID namespace whose
    /proc/self/ns/pid link is ns."""
    found = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                if os.readlink("/proc/%s/ns/pid" % d) == ns:
                    found.append(int(d))
            except OSError:
                pass
    return found


# A job writes its pid as it sees it, and (NS, below) the link of its PID
# namespace: in one of its own (the library's default here) that pid is
# not ours. Every script starts so.
NS = "readlink /proc/self/ns/pid > ns; "
OUR_NS = os.readlink("/proc/self/ns/pid")


def pid_there(p):
    """Host pid p's pid in its own PID namespace, or None once gone."""
    try:
        with open("/proc/%d/status" % p) as f:
            for line in f:
                if line.startswith("NSpid:"):
                    return int(line.split()[-1])
    except (OSError, ValueError):
        pass
    return None


def ns_pid(ns, pid):
    """The host pid of the process that is pid in namespace ns, or None."""
    if ns == OUR_NS:
        return pid if alive(pid) else None
    for p in in_ns(ns):
        if pid_there(p) == pid:
            return p
    return None


def job_alive(ns, pid):
    """Whether the process the job saw as pid is alive: in a namespace of
    its own, whether anything of the job is (its init, pid 1 there, is
    confine's own, not the job's)."""
    if ns == OUR_NS:
        return alive(pid)
    return any(pid_there(p) not in (None, 1) for p in in_ns(ns))


def group_alive(pgid):
    try:
        os.killpg(pgid, 0)
        return True
    except ProcessLookupError:
        return False


class Runner:
    """confine-bb-runner on a socket of its own, for one case."""

    def __init__(self, *flags):
        self.dir = tempfile.mkdtemp(prefix="runner.", dir=TMP)
        self.build = os.path.join(self.dir, "build")
        os.mkdir(self.build)
        # A unix socket's path has 107 bytes: TEST_TMPDIR may be longer.
        self.sockdir = tempfile.mkdtemp(prefix="cbb.", dir="/tmp")
        self.sock = os.path.join(self.sockdir, "s")
        self.logpath = os.path.join(self.dir, "log")
        self.log = open(self.logpath, "w")
        # The jobs' private tmps in a directory of this runner's own.
        self.tmp = os.path.join(self.dir, "tmp")
        os.mkdir(self.tmp)
        env = dict(os.environ, TMPDIR=self.tmp)
        self.proc = subprocess.Popen(
            [RUNNER, "--listen", self.sock, "--build-directory", self.build]
            + list(flags),
            stdin=subprocess.DEVNULL, stdout=self.log, stderr=self.log,
            env=env)

        # A channel that fails to connect backs off for a second and more:
        # made only once the runner has bound its socket.
        def bound():
            if self.proc.poll() is not None:
                fail("the runner exited %d:\n%s" % (self.proc.returncode,
                                                    self.logtext()))
            return os.path.exists(self.sock)
        self.channel = None
        self.stopped = False

        def ready():
            if self.proc.poll() is not None:
                fail("the runner exited %d:\n%s" % (self.proc.returncode,
                                                    self.logtext()))
            try:
                self.stub.CheckReadiness(
                    runner_pb2.CheckReadinessRequest(path=""), timeout=5)
                return True
            except grpc.RpcError:
                return False
        try:
            poll("the runner's socket", bound)
            self.channel = grpc.insecure_channel("unix:" + self.sock)
            self.stub = runner_pb2_grpc.RunnerStub(self.channel)
            poll("the runner ready", ready)
        except BaseException:
            self.__exit__(Failure, None, None)
            raise

    def logtext(self):
        with open(self.logpath) as f:
            return f.read()

    def stop(self):
        """SIGTERM: it stops, exit status 0, its socket gone."""
        if self.stopped:
            return
        self.stopped = True
        self.channel.close()
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            rc = self.proc.wait(MINUTE)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            fail("the runner did not stop on SIGTERM:\n" + self.logtext())
        self.log.close()
        expect(rc == 0, "the runner exited %d:\n%s" % (rc, self.logtext()))
        expect(not os.path.exists(self.sock), "its socket is still there")
        shutil.rmtree(self.sockdir, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, kind, value, tb):
        if kind is None:
            self.stop()
        else:
            if self.channel is not None:
                self.channel.close()
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()
            self.log.close()
            print("--- the runner's log:\n" + self.logtext())
            shutil.rmtree(self.sockdir, ignore_errors=True)
        return False

    # ---- actions laid out as bb_worker lays them out ----

    def action(self, name, files=None, dirs=()):
        """<build>/NAME/{root,tmp,server_logs}, FILES written in root."""
        base = os.path.join(self.build, name)
        for d in ("root", "tmp", "server_logs"):
            os.makedirs(os.path.join(base, d))
        for d in dirs:
            os.makedirs(os.path.join(base, "root", d), exist_ok=True)
        for rel, data in (files or {}).items():
            path = os.path.join(base, "root", rel)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            mode = "wb" if isinstance(data, bytes) else "w"
            with open(path, mode) as f:
                f.write(data)
        return base

    def request(self, name, argv, wd="", env=None):
        return runner_pb2.RunRequest(
            arguments=argv,
            environment_variables={"PATH": PATH} if env is None else env,
            working_directory=wd,
            stdout_path=name + "/stdout",
            stderr_path=name + "/stderr",
            input_root_directory=name + "/root",
            temporary_directory=name + "/tmp",
            server_logs_directory=name + "/server_logs")

    def run(self, req, timeout=MINUTE * 5):
        return self.stub.Run(req, timeout=timeout)

    def read(self, name, rel):
        with open(os.path.join(self.build, name, rel)) as f:
            return f.read()

    def root(self, name, rel=""):
        return os.path.join(self.build, name, "root", rel)

    def line_in(self, name, rel):
        """The line a job wrote to a file in its root, once written."""
        path = self.root(name, rel)

        def written():
            try:
                with open(path) as f:
                    return f.read().endswith("\n")
            except FileNotFoundError:
                return False
        poll("a line in " + path, written)
        with open(path) as f:
            return f.read().strip()

    def pid_in(self, name, rel):
        """The pid a job wrote in its root, once it has written it."""
        return int(self.line_in(name, rel))

    def ns_in(self, name):
        """The PID namespace the job wrote (NS), once it has written it."""
        return self.line_in(name, "ns")


def status_of(call):
    """A call's gRPC error as (code, details); fails when it succeeded."""
    try:
        resp = call()
    except grpc.RpcError as e:
        return e.code(), e.details()
    fail("answered OK, exit code %d" % resp.exit_code)


def usage_of(resp):
    expect(len(resp.resource_usage) == 1, "not one resource usage")
    any_ = resp.resource_usage[0]
    expect(any_.type_url == USAGE_URL, "resource usage is " + any_.type_url)
    usage = resourceusage_pb2.POSIXResourceUsage()
    expect(any_.Unpack(usage), "resource usage does not unpack")
    return usage


def ok(resp, code, r=None, name=None):
    if resp.exit_code != code:
        extra = ""
        if r is not None:
            extra = "\nstdout: %r\nstderr: %r" % (r.read(name, "stdout"),
                                                  r.read(name, "stderr"))
        fail("exit code %d, expected %d%s" % (resp.exit_code, code, extra))


def tree(path):
    """Every entry beneath path with its type, size and mtime."""
    out = []
    for d, dirs, files in os.walk(path):
        for n in sorted(dirs + files):
            p = os.path.join(d, n)
            st = os.lstat(p)
            out.append((p, stat.S_IFMT(st.st_mode), st.st_size,
                        st.st_mtime_ns))
    return sorted(out)


# ---- the cases ----

HELLO_C = r"""
#include <stdio.h>
#include <string.h>
#include "hello.h"

int
main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "fail") == 0)
		return HELLO_FAILED;
	printf("hello, %s\n", argc > 1 ? argv[1] : "nobody");
	return 0;
}
"""


def case_a_c_program_compiled_linked_and_tested_in_three_actions():
    """A small real build as bb_worker runs it: one action each, outputs
    carried to the next action's input root as the CAS would."""
    with Runner() as r:
        r.action("compile", {"src/hello.c": HELLO_C,
                             "src/include/hello.h": "#define HELLO_FAILED 7\n"},
                 dirs=["out"])
        resp = r.run(r.request("compile", [
            "cc", "-Isrc/include", "-c", "src/hello.c", "-o", "out/hello.o"]))
        ok(resp, 0, r, "compile")
        usage = usage_of(resp)
        cpu = (usage.user_time.ToMicroseconds()
               + usage.system_time.ToMicroseconds())
        expect(cpu > 0, "the compiler took no CPU time: %s" % usage)
        expect(usage.maximum_resident_set_size > 1 << 20,
               "the compiler's peak memory: %d bytes"
               % usage.maximum_resident_set_size)
        expect(usage.termination_signal == "", "a signal: " +
               usage.termination_signal)

        with open(r.root("compile", "out/hello.o"), "rb") as f:
            obj = f.read()
        r.action("link", {"out/hello.o": obj})
        ok(r.run(r.request("link", ["cc", "-o", "out/hello", "out/hello.o"])),
           0, r, "link")

        with open(r.root("link", "out/hello"), "rb") as f:
            exe = f.read()
        r.action("test", {"out/hello": exe})
        os.chmod(r.root("test", "out/hello"), 0o755)
        # argv[0] with a slash: from the working directory.
        ok(r.run(r.request("test", ["./hello", "world"], wd="out")), 0,
           r, "test")
        expect(r.read("test", "stdout") == "hello, world\n",
               "stdout: %r" % r.read("test", "stdout"))
        expect(r.read("test", "stderr") == "", "stderr not empty")

        # The same test failing: an exit code, answered OK, as bb_runner.
        r.action("test2", {"out/hello": exe})
        os.chmod(r.root("test2", "out/hello"), 0o755)
        ok(r.run(r.request("test2", ["out/hello", "fail"])), 7)


def case_the_environment_is_exactly_the_requests():
    with Runner() as r:
        r.action("env")
        env = {"PATH": PATH, "LANG": "C.UTF-8", "EMPTY": "", "A_B": "x=y z"}
        ok(r.run(r.request("env", ["env"], env=env)), 0)
        got = sorted(r.read("env", "stdout").splitlines())
        want = sorted(["%s=%s" % kv for kv in env.items()]
                      + ["TMPDIR=" + os.path.join(r.build, "env", "tmp")])
        expect(got == want, "environment %r, expected %r" % (got, want))


def case_exit_codes_and_signal_deaths_as_bb_runner_reports_them():
    with Runner() as r:
        r.action("exit")
        ok(r.run(r.request("exit", ["sh", "-c", "exit 3"])), 3)
        r.action("segv")
        resp = r.run(r.request("segv", ["sh", "-c", "kill -SEGV $$"]))
        ok(resp, -1)
        expect(usage_of(resp).termination_signal == "SEGV",
               "termination_signal %r" % usage_of(resp).termination_signal)


def case_a_timeout_leaves_no_grandchild():
    """The action runs out of time with children, grandchildren and a
    daemon of its own session: bb_runner kills only the child (#250);
    here the answer comes once none of them is left."""
    script = (NS + "sh -c 'sleep 600 & echo $! > grandkid; "
              "setsid sleep 600 & echo $! > daemon; wait' & "
              "echo $! > kid; echo $$ > pid; wait")
    with Runner("--deadline-margin", "3s") as r:
        r.action("slow")
        t0 = time.monotonic()
        code, details = status_of(lambda: r.run(
            r.request("slow", ["sh", "-c", script]), timeout=6))
        took = time.monotonic() - t0
        # Ours, before the client's own deadline: the job's deadline is
        # the call's less the margin.
        expect(code == grpc.StatusCode.DEADLINE_EXCEEDED, "status %s" % code)
        expect("confine killed it, and nothing of it is left" in details,
               "not the runner's answer (%.1f s): %s" % (took, details))
        ns = r.ns_in("slow")
        for f in ("pid", "kid", "grandkid", "daemon"):
            pid = r.pid_in("slow", f)
            # Answered means gone: no polling.
            expect(not job_alive(ns, pid), "%s %d is alive" % (f, pid))


def case_a_cancelled_call_cancels_its_job():
    script = NS + "sleep 600 & echo $! > kid; echo $$ > pid; wait"
    with Runner("--concurrency", "1") as r:
        r.action("c")
        call = r.stub.Run.future(r.request("c", ["sh", "-c", script]),
                                 timeout=MINUTE * 5)
        # As we see them, while they run.
        ns = r.ns_in("c")
        pid = ns_pid(ns, r.pid_in("c", "pid"))
        kid = ns_pid(ns, r.pid_in("c", "kid"))
        expect(pid is not None and kid is not None, "the job is not seen")
        with open("/proc/%d/stat" % pid) as f:
            pgid = int(f.read().rsplit(")", 1)[1].split()[2])
        expect(call.cancel(), "the call could not be cancelled")
        # The runner says so once the job has settled, and no sooner.
        poll("the runner's word on the cancel",
             lambda: "CANCELLED: cancelled: the call was cancelled" in
             r.logtext())
        expect(not alive(pid), "the job %d is alive" % pid)
        expect(not alive(kid), "its child %d is alive" % kid)
        expect(not group_alive(pgid), "its group %d is there" % pgid)
        # Its one slot is free again.
        r.action("next")
        ok(r.run(r.request("next", ["true"]), timeout=MINUTE), 0)


def case_writes_outside_the_build_directory_are_refused():
    outside = tempfile.mkdtemp(prefix="outside.", dir=TMP)
    victim = os.path.join(outside, "victim")
    with open(victim, "w") as f:
        f.write("original\n")
    before = os.stat(victim)
    with Runner() as r:
        r.action("other", {"file": "other's\n"})
        other = tree(os.path.join(r.build, "other"))
        r.action("w")
        script = ("echo in > inside && echo inside: written; "
                  "for f in %s %s/new %s %s; do "
                  "  if (echo bad > $f) 2>/dev/null; then echo $f: written; "
                  "  else echo $f: refused; fi; "
                  "done" % (victim, outside, r.root("other", "file"),
                            r.root("other", "new")))
        ok(r.run(r.request("w", ["sh", "-c", script])), 0, r, "w")
        out = r.read("w", "stdout")
        expect(out.startswith("inside: written\n"), "stdout: %r" % out)
        expect(out.count(": refused\n") == 4, "stdout: %r" % out)
        expect(r.read("w", "root/inside") == "in\n", "inside not written")
    with open(victim) as f:
        expect(f.read() == "original\n", "the victim changed")
    after = os.stat(victim)
    expect(after.st_mtime_ns == before.st_mtime_ns, "the victim was touched")
    expect(os.listdir(outside) == ["victim"], "something made beside it")
    expect(tree(os.path.join(r.build, "other")) == other,
           "another action's directory changed")


PROBE = """
import errno, socket, sys
try:
    socket.create_connection(("127.0.0.1", int(sys.argv[1])), 10).close()
    print("connected")
except OSError as e:
    print("refused", errno.errorcode.get(e.errno, e.errno))
    sys.exit(1)
"""


def case_a_tcp_connect_to_loopback_is_refused():
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    listener.settimeout(10)
    port = listener.getsockname()[1]
    try:
        # The same probe, unconfined, reaches the listener: the refusal
        # below is the confinement's.
        out = subprocess.run(["/usr/bin/python3", "-c", PROBE, str(port)],
                             capture_output=True, text=True, timeout=MINUTE)
        expect(out.stdout == "connected\n", "unconfined: %r" % out.stdout)
        listener.accept()[0].close()
        with Runner() as r:
            r.action("net")
            resp = r.run(r.request("net", ["/usr/bin/python3", "-c", PROBE,
                                           str(port)]))
            ok(resp, 1, r, "net")
            out = r.read("net", "stdout")
            expect(out.startswith("refused E"), "confined: %r" % out)
        listener.settimeout(0.5)
        try:
            listener.accept()
            fail("the listener saw a connection")
        except socket.timeout:
            pass
    finally:
        listener.close()


def case_bad_requests_are_invalid_argument_and_touch_nothing():
    with Runner() as r:
        r.action("bad", {"data": "not a program\n"})
        sh = ["sh", "-c", "echo x > made"]
        cases = []

        def bad(why, **fields):
            req = r.request("bad", sh)
            for k, v in fields.items():
                if k == "arguments":
                    del req.arguments[:]
                    req.arguments.extend(v)
                else:
                    setattr(req, k, v)
            cases.append((why, req))

        bad("Insufficient number of command arguments", arguments=[])
        bad("arguments[0] is empty", arguments=[""])
        bad("working_directory \"../..\" climbs", working_directory="../..")
        bad("input_root_directory \"../x/root\" climbs",
            input_root_directory="../x/root")
        bad("input_root_directory \"/etc\" is absolute",
            input_root_directory="/etc")
        bad("stdout_path \"/tmp/cbb-test-stdout\" is absolute",
            stdout_path="/tmp/cbb-test-stdout")
        bad("stderr_path \"bad/../../stderr\" climbs",
            stderr_path="bad/../../stderr")
        bad("temporary_directory \"/tmp\" is absolute",
            temporary_directory="/tmp")
        bad("Cannot find executable \"no-such-tool\"",
            arguments=["no-such-tool"])
        bad("Failed to start process", arguments=["./no-such-tool"])
        bad("Failed to start process", arguments=["./data"])
        bad("holds a NUL byte", arguments=["sh", "-c", "echo\0x"])
        bad("Failed to resolve working directory",
            working_directory="no/such")
        for why, req in cases:
            before = tree(r.build)
            code, details = status_of(lambda: r.run(req))
            expect(code == grpc.StatusCode.INVALID_ARGUMENT,
                   "%s: %s %s" % (why, code, details))
            expect(why in details, "%r does not say %r" % (details, why))
            expect(tree(r.build) == before,
                   "%s: the build directory changed" % why)
        expect(not os.path.exists("/tmp/cbb-test-stdout"), "/tmp touched")


def case_something_left_running_is_uncertain_never_ok():
    with Runner() as r:
        r.action("u")
        code, details = status_of(lambda: r.run(r.request("u", [
            "sh", "-c", NS + "(sleep 600 & echo $! > left); exit 0"])))
        expect(code == grpc.StatusCode.INTERNAL, "status %s" % code)
        expect(details.startswith("uncertain: a process of the action "
                                  "outlived it (it exited 0)"), details)
        left = r.pid_in("u", "left")
        expect(not job_alive(r.ns_in("u"), left),
               "what it left, %d, is alive" % left)


def case_check_readiness():
    with Runner() as r:
        r.action("a")
        r.stub.CheckReadiness(runner_pb2.CheckReadinessRequest(path="a/root"),
                              timeout=MINUTE)
        code, details = status_of(lambda: r.stub.CheckReadiness(
            runner_pb2.CheckReadinessRequest(path="a/missing"),
            timeout=MINUTE))
        expect(code == grpc.StatusCode.INTERNAL, "status %s" % code)
        expect("Failed to check existence" in details, details)


def fds(pid):
    return len(os.listdir("/proc/%d/fd" % pid))


def case_a_hundred_runs_at_once_none_lost_none_leaked():
    """100 Runs at once through one helper, 16 at a time: every one
    answered with its own output, none overlapping more than the slots
    allow, and nothing of any left: no process, no descriptor of the
    runner's, no private tmp (but the prepared inits' own, empty, until
    it stops)."""
    n, slots = 100, 16
    script = (NS + "date +%s%N > start; echo $$ > pid; echo \"$0\"; "
              "sleep 0.3; date +%s%N > end")
    with Runner("--concurrency", str(slots)) as r:
        r.action("warm")
        ok(r.run(r.request("warm", ["true"])), 0)
        fds_before = fds(r.proc.pid)
        names = ["a%03d" % i for i in range(n)]
        for name in names:
            r.action(name)
        calls = [r.stub.Run.future(
            r.request(name, ["sh", "-c", script, name]), timeout=MINUTE * 10)
            for name in names]
        answers = {}
        for name, call in zip(names, calls):
            try:
                answers[name] = call.result()
            except grpc.RpcError as e:
                fail("%s: %s %s" % (name, e.code(), e.details()))
        expect(len(answers) == n, "%d answers of %d" % (len(answers), n))
        intervals = []
        for name in names:
            ok(answers[name], 0, r, name)
            expect(r.read(name, "stdout") == name + "\n",
                   "%s printed %r" % (name, r.read(name, "stdout")))
            pid = r.pid_in(name, "pid")
            expect(not job_alive(r.ns_in(name), pid),
                   "%s's job %d is alive" % (name, pid))
            intervals.append((int(r.read(name, "root/start")),
                              int(r.read(name, "root/end"))))
        # The most jobs running at one instant, from their own clocks.
        events = sorted([(s, 1) for s, _ in intervals]
                        + [(e, -1) for _, e in intervals])
        most = running = 0
        for _, d in events:
            running += d
            most = max(most, running)
        expect(most <= slots, "%d ran at once, with %d slots" % (most, slots))
        expect(most >= 2, "they ran one at a time")
        expect(fds(r.proc.pid) == fds_before,
               "the runner has %d descriptors, %d before"
               % (fds(r.proc.pid), fds_before))
        # Each prepared init of the helper's holds a private tmp for its
        # job (helper/engine/prepared.h): nothing of a job's is in one.
        def tmps():
            return [e for e in os.listdir(r.tmp)
                    if e.startswith("confine-tmp.")]
        for e in tmps():
            layers = os.path.join(r.tmp, e)
            try:
                seen = sorted(os.listdir(layers))
                if seen == ["u", "w"]:
                    seen += os.listdir(os.path.join(layers, "u"))
            except FileNotFoundError:
                continue  # taken and removed meanwhile
            expect(seen == ["u", "w"], "a private tmp left: %s %s"
                   % (e, seen))
        r.stop()
        poll("no private tmp left", lambda: tmps() == [])
        print("  %d runs, at most %d at once" % (n, most))


def case_a_live_socket_is_never_taken_over():
    with Runner() as r:
        second = subprocess.run(
            [RUNNER, "--listen", r.sock, "--build-directory", r.build],
            stdin=subprocess.DEVNULL, capture_output=True, text=True,
            timeout=MINUTE)
        expect(second.returncode == 1, "a second runner exited %d: %s"
               % (second.returncode, second.stderr))
        expect("something already listens there" in second.stderr,
               second.stderr)
        r.action("still")
        ok(r.run(r.request("still", ["true"]), timeout=MINUTE), 0)
        mode = stat.S_IMODE(os.stat(r.sock).st_mode)
        expect(mode == 0o600, "the socket's mode is %o" % mode)


def case_stopping_the_runner_cancels_what_runs():
    r = Runner()
    try:
        r.action("s")
        call = r.stub.Run.future(
            r.request("s", ["sh", "-c", NS + "echo $$ > pid; exec sleep 600"]),
            timeout=MINUTE * 5)
        ns = r.ns_in("s")
        pid = ns_pid(ns, r.pid_in("s", "pid"))
        expect(pid is not None, "the job is not seen")
        r.proc.send_signal(signal.SIGTERM)
        rc = r.proc.wait(MINUTE)
        expect(rc == 0, "the runner exited %d" % rc)
        expect(not alive(pid), "its job %d is alive" % pid)
        try:
            call.result(timeout=MINUTE)
            fail("the call was answered OK")
        except grpc.RpcError as e:
            expect(e.code() in (grpc.StatusCode.CANCELLED,
                                grpc.StatusCode.UNAVAILABLE),
                   "status %s" % e.code())
        expect("SIGTERM: cancelling what runs" in r.logtext(), r.logtext())
    finally:
        if r.proc.poll() is None:
            r.proc.kill()
            r.proc.wait()
        r.channel.close()
        shutil.rmtree(r.sockdir, ignore_errors=True)


def case_the_manual_has_every_option_of_help():
    import re
    out = subprocess.run([RUNNER, "--help"], capture_output=True, text=True,
                         timeout=MINUTE)
    expect(out.returncode == 0, "--help exited %d" % out.returncode)
    expect(out.stdout.startswith("usage: confine-bb-runner --listen SOCKET "
                                 "--build-directory DIR [OPTIONS]\n"),
           out.stdout)
    with open(os.path.join(ROOT, "docs", "man", "confine-bb-runner.8")) as f:
        man = f.read().replace("\\-", "-")
    man = man[man.index(".SH OPTIONS"):man.index(".SH ENVIRONMENT")]
    helped = set(re.findall(r"--[a-z][a-z-]+", out.stdout))
    documented = set(re.findall(r"--[a-z][a-z-]+", man))
    expect(len(helped) >= 20, "help lists only %s" % sorted(helped))
    expect(helped == documented, "only in --help: %s; only in the manual: %s"
           % (sorted(helped - documented), sorted(documented - helped)))
    bad = subprocess.run([RUNNER, "--listen", "/nonexistent/s"],
                         capture_output=True, text=True, timeout=MINUTE)
    expect(bad.returncode == 2, "bad usage exited %d" % bad.returncode)
    expect(bad.stderr.count("\n") == 1, "bad usage said: %r" % bad.stderr)


def main():
    cases = [(n[len("case_"):], f) for n, f in globals().items()
             if n.startswith("case_")]
    passed = failed = 0
    for name, fn in cases:
        print("[ RUN      ] " + name, flush=True)
        try:
            fn()
            print("[       OK ] " + name, flush=True)
            passed += 1
        except Exception:
            traceback.print_exc(file=sys.stdout)
            print("[  FAILED  ] " + name, flush=True)
            failed += 1
    print("%d passed, %d failed" % (passed, failed))
    return 0 if passed > 0 and failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
