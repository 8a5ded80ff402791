#!/bin/sh
# listen_once.sh FILE: a TCP listener on 127.0.0.1, in the background, that
# writes its port to FILE once it listens, then "accepted" when a
# connection came (within 60 s). Returns when the port is there; its pid
# is in $listener. For the shell tests that pair a connect unconfined
# (reached: "accepted") with the same confined (refused).
# Sourced: listen_once FILE.
listen_once() {
	python3 -c '
import socket
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen()
print(s.getsockname()[1], flush=True)
s.settimeout(60); c, _ = s.accept(); print("accepted", flush=True)
' >"$1" &
	listener=$!
	_n=0
	until [ -s "$1" ]; do
		_n=$((_n + 1))
		[ $_n -lt 600 ] || return 1
		sleep 0.1
	done
}
