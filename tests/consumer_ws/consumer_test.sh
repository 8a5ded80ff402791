#!/bin/sh
# consumer_test.sh HELLO HELPER: the program of this workspace runs a
# confined job through a forked helper, then through the helper binary
# of @confine, exec'd.
set -u
for mode in fork exec; do
	if [ "$mode" = fork ]; then
		out=$("$1") || { echo "$mode: failed: $out"; exit 1; }
	else
		out=$("$1" "$PWD/$2") || { echo "$mode: failed: $out"; exit 1; }
	fi
	printf '%s: %s\n' "$mode" "$out"
	[ "$out" = "$(printf 'hello from another workspace\ncompleted')" ] ||
		{ echo "$mode: unexpected output"; exit 1; }
done
