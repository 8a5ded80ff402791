# Real programs as confined jobs, each as a function prog_NAME that runs
# `job PROGRAM ARGS...` (the caller defines job: confine-run, or bwrap for
# the comparison of tools/programs) with the sources in $W, outside the
# scratch root $S, and checks what it made. A prog_ function returns
# nonzero, with a word on stderr, when the program did not do its work.
# Each expects the environment confine-run gives by default: PATH, HOME
# the scratch root, TMPDIR a private /tmp.

say() { printf '%s\n' "$*" >&2; }

prog_cc() {
	printf '#include <stdio.h>\nint main(void) { puts("hello"); return 0; }\n' \
	    >"$W/hello.c"
	job /usr/bin/cc -O1 -o "$S/hello" "$W/hello.c" || return 1
	[ "$(job "$S/hello")" = hello ] || { say "the program did not say hello"; return 1; }
}

prog_cxx() {
	printf '#include <iostream>\n#include <vector>\nint main() { std::vector<int> v{1, 2, 3}; std::cout << v.size() << "\\n"; }\n' \
	    >"$W/three.cc"
	job /usr/bin/c++ -o "$S/three" "$W/three.cc" || return 1
	[ "$(job "$S/three")" = 3 ] || { say "the program did not say 3"; return 1; }
}

# tempfile spills to TMPDIR; the file written goes to HOME.
prog_python3_tempfile() {
	job /usr/bin/python3 -c '
import os, tempfile
with tempfile.NamedTemporaryFile() as t:
    t.write(b"x" * 100000)
    t.flush()
    assert os.path.dirname(t.name) == tempfile.gettempdir()
with open(os.path.join(os.environ["HOME"], "py.txt"), "w") as f:
    f.write("ok")' || return 1
	[ "$(cat "$S/py.txt")" = ok ] || { say "no py.txt"; return 1; }
}

prog_python3_venv() {
	job /usr/bin/python3 -m venv "$S/venv" || return 1
	job "$S/venv/bin/python" -c 'import sys; print(sys.prefix)' >"$W/prefix" ||
		return 1
	[ "$(cat "$W/prefix")" = "$S/venv" ] || { say "wrong prefix: $(cat "$W/prefix")"; return 1; }
}

prog_git() {
	git -c init.defaultBranch=main init -q --bare "$W/bare.git" &&
	git -C "$W" -c init.defaultBranch=main init -q seed &&
	echo seed >"$W/seed/README" &&
	git -C "$W/seed" add README &&
	git -C "$W/seed" -c user.name=t -c user.email=t@t commit -qm seed &&
	git -C "$W/seed" push -q "$W/bare.git" HEAD:main || { say "setup"; return 1; }
	job /bin/sh -c '
set -e
cd "$HOME"
git -c init.defaultBranch=main init -q repo
cd repo
echo a >a
git add a
git -c user.name=n -c user.email=n@n commit -qm first
git log --oneline | grep -q first
cd "$HOME"
git clone -q "$1" clone
test "$(cat clone/README)" = seed' sh "$W/bare.git"
}

prog_make() {
	printf 'all: %s/out.txt\n%s/out.txt:\n\techo built > $@\n' "$S" "$S" >"$W/Makefile"
	job /usr/bin/make -s -f "$W/Makefile" || return 1
	[ "$(cat "$S/out.txt")" = built ] || { say "nothing built"; return 1; }
}

prog_tar() {
	mkdir -p "$W/tree/d" && echo t >"$W/tree/d/f"
	job /bin/sh -c 'tar cf "$HOME/t.tar" -C "$1" tree && mkdir "$HOME/x" &&
	    tar xf "$HOME/t.tar" -C "$HOME/x" && cp -p "$HOME/x/tree/d/f" "$HOME/g"' \
	    sh "$W" || return 1
	[ "$(cat "$S/x/tree/d/f")" = t ] && [ -e "$S/g" ] || { say "not extracted"; return 1; }
}

# A buffer far smaller than the input: sort spills its runs to TMPDIR.
prog_sort_spills() {
	seq 1 200000 >"$W/nums"
	job /bin/sh -c 'sort -n -r -S 64K "$1" >"$HOME/sorted"' sh "$W/nums" ||
		return 1
	[ "$(head -n 1 "$S/sorted")" = 200000 ] && [ "$(wc -l <"$S/sorted")" -eq 200000 ] ||
		{ say "not sorted"; return 1; }
}

prog_node() {
	job /usr/bin/node -e 'require("fs").writeFileSync(process.env.HOME + "/n.txt", "ok")' ||
		return 1
	[ "$(cat "$S/n.txt")" = ok ] || { say "no n.txt"; return 1; }
	job /usr/bin/npm --version >/dev/null || { say "npm --version failed"; return 1; }
}

prog_perl() {
	job /usr/bin/perl -e 'open(my $f, ">", "$ENV{HOME}/p.txt") or die; print $f "ok";' ||
		return 1
	[ "$(cat "$S/p.txt")" = ok ] || { say "no p.txt"; return 1; }
}

prog_shell_pipeline() {
	[ "$(job /bin/sh -c 'seq 1 1000 | grep 7 | wc -l')" = 271 ] ||
		{ say "wrong count"; return 1; }
}

# Python's multiprocessing: a pool (pipes and a POSIX semaphore in
# /dev/shm), a queue, and a manager (a server on a unix socket in TMPDIR).
prog_python3_multiprocessing() {
	[ "$(job /usr/bin/python3 -c '
import multiprocessing as mp
def sq(x): return x * x
if __name__ == "__main__":
    with mp.Pool(2) as p:
        a = sum(p.map(sq, range(10)))
    q = mp.Queue(); q.put(a); b = q.get()
    with mp.Manager() as m:
        d = m.dict(); d["v"] = b
        print(d["v"])')" = 285 ] || { say "multiprocessing did not sum"; return 1; }
}

# asyncio's unix transports: a server on a socket in HOME, and a client.
prog_python3_asyncio_unix() {
	[ "$(job /usr/bin/python3 -c '
import asyncio, os
async def main():
    os.chdir(os.environ["HOME"])
    path = "a.sock"  # relative: a socket path holds 108 bytes at most
    async def echo(r, w):
        w.write(await r.read(5)); await w.drain(); w.close()
    srv = await asyncio.start_unix_server(echo, path)
    r, w = await asyncio.open_unix_connection(path)
    w.write(b"hello"); await w.drain()
    print((await r.read(5)).decode()); w.close(); srv.close()
asyncio.run(main())')" = hello ] || { say "no echo"; return 1; }
}

# Unix datagrams of its own: logging's syslog handler to a socket the job
# bound (its init connects it), then a descriptor with a datagram by name
# (sendmsg with SCM_RIGHTS and an address).
prog_python3_unix_datagrams() {
	[ "$(job /usr/bin/python3 -c '
import array, logging, logging.handlers, os, socket
os.chdir(os.environ["HOME"])
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind("log.sock")
log = logging.getLogger("confine")
log.addHandler(logging.handlers.SysLogHandler(address="log.sock"))
log.warning("hello")
said = s.recv(100).rstrip(b"\0").decode()
c = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
r, w = os.pipe()
c.sendmsg([b"fd"], [(socket.SOL_SOCKET, socket.SCM_RIGHTS,
    array.array("i", [w]))], 0, "log.sock")
msg, fds, _, _ = socket.recv_fds(s, 10, 1)
os.write(fds[0], b"!")
print(said.split(">")[-1], msg.decode(), os.read(r, 1).decode())')" = "hello fd !" ] ||
		{ say "no datagram"; return 1; }
}

# UDP on its own loopback from node (libuv's sends): an echo to itself.
prog_node_udp() {
	[ "$(job /usr/bin/node -e '
const s = require("dgram").createSocket("udp4");
s.on("message", (m) => { console.log(m.toString()); s.close(); });
s.bind(0, "127.0.0.1", () => s.send("hello", s.address().port, "127.0.0.1"));')" = hello ] ||
		{ say "no echo"; return 1; }
}

# A pty of its own: script(1) runs a command on one.
prog_pty() {
	job /usr/bin/script -qec 'tty' /dev/null >"$W/tty" || return 1
	grep -q '^/dev/pts/' "$W/tty" || { say "no pty: $(cat "$W/tty")"; return 1; }
}

# A loopback of its own: an HTTP server and curl, both in the job (the
# server waited for: something of it left would make the job Uncertain).
prog_http_on_its_loopback() {
	job /bin/sh -c '
/usr/bin/python3 -m http.server --bind 127.0.0.1 8765 --directory "$HOME" \
    >/dev/null 2>&1 &
i=0
until /usr/bin/curl -fs -o /dev/null http://127.0.0.1:8765/; do
	i=$((i + 1)); [ $i -le 100 ] || exit 1; sleep 0.1
done
kill $!
wait' || { say "no server of its own"; return 1; }
}

# Reaching out: a write outside, and HTTP to a server on the host's
# loopback (not the job's own).
prog_write_outside_is_refused() {
	echo orig >"$W/victim"
	if job /bin/sh -c 'echo x >"$1"' sh "$W/victim" 2>/dev/null; then
		say "the write outside succeeded"
		return 1
	fi
	[ "$(cat "$W/victim")" = orig ] || { say "the victim changed"; return 1; }
}

prog_http_is_refused() {
	port=$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	(cd "$W" && exec /usr/bin/python3 -m http.server --bind 127.0.0.1 "$port" \
	    >/dev/null 2>&1) &
	server=$!
	i=0
	until /usr/bin/curl -fs -o /dev/null "http://127.0.0.1:$port/"; do
		i=$((i + 1))
		[ "$i" -le 100 ] || { kill "$server"; say "no server"; return 1; }
		sleep 0.1
	done
	rc=0
	if job /usr/bin/curl -fs -o /dev/null "http://127.0.0.1:$port/" 2>/dev/null; then
		say "curl reached the server"
		rc=1
	fi
	if job /usr/bin/python3 -c 'import sys, urllib.request
urllib.request.urlopen(sys.argv[1], timeout=5)' "http://127.0.0.1:$port/" 2>/dev/null; then
		say "urllib reached the server"
		rc=1
	fi
	kill "$server"
	wait "$server" 2>/dev/null
	return "$rc"
}
