#!/bin/sh
# The helper under valgrind memcheck (the plain build: valgrind and the
# sanitizers do not mix) serving one job of each outcome: no memory error
# and no definite leak in the helper or in any of its shepherds.
set -u
command -v valgrind >/dev/null 2>&1 || { echo "valgrind not found (tools/setup installs it)"; exit 1; }
dir=$(mktemp -d /tmp/confine-vg.XXXXXX)
sock=$dir/h.sock
mkdir "$dir/scratch"
valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite \
	--show-leak-kinds=definite --log-file="$TEST_TMPDIR/vg.%p" \
	helper/plain-confine-helper --listen "$sock" &
vg=$!
i=0
while [ ! -S "$sock" ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
[ -S "$sock" ] || { echo "the helper did not start under valgrind"; exit 1; }
tests/valgrind_client "$sock" "$PWD/tests/plain_fixture" "$dir/scratch"
client=$?
kill -TERM $vg
wait $vg
helper=$?
rm -rf "$dir"
cat "$TEST_TMPDIR"/vg.* 2>/dev/null
logs=$(ls "$TEST_TMPDIR"/vg.* 2>/dev/null | wc -l)
errors=$(cat "$TEST_TMPDIR"/vg.* 2>/dev/null | grep -cE "Invalid|uninitialised|definitely lost|Mismatched|overlap")
echo "client exit $client, helper exit $helper, $logs valgrind logs, $errors findings"
[ "$client" -eq 0 ] && [ "$helper" -eq 0 ] && [ "$errors" -eq 0 ] && [ "$logs" -ge 1 ]
