#!/bin/sh
# Runs the API example and checks each of its four settlements.
set -u
out=$(examples/hello) || { echo "hello failed: $out"; exit 1; }
printf '%s\n' "$out"
check() {
	printf '%s\n' "$out" | grep -q -- "$1" || { echo "missing: $1"; exit 1; }
}
check "hello$"
check "echo escape .*-> failed (exit_code) exit 2"
check "sleep 10 .*-> cancelled (deadline)"
check "exit 3 .*-> failed (exit_code) exit 3"
[ ! -e /var/tmp/confine-hello-escape ] || { echo "the escape was written"; exit 1; }
