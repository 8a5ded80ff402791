#!/bin/sh
# The helper under valgrind memcheck (the plain build: valgrind and the
# sanitizers do not mix) serving one job of each outcome, with every
# process it starts traced too (--trace-children=yes): its shepherds, each
# job's process between fork and exec, and the jobs themselves (the plain
# fixture). No memory error and no definite leak in any of them.
#
# An error shows three ways. valgrind's --error-exitcode: the helper's exit
# status, and each job's exit code, which the client checks exactly. The
# logs, for the processes whose status nobody reads (the shepherds, a job
# between fork and exec): valgrind's reports, matched without regard to
# case. %n keeps a job's log from before its exec apart from the program's
# after it: they share a pid, and the second would overwrite the first.
#
# The Landlock job is refused (-ENOTSUP): valgrind does not know the
# Landlock system calls (docs/reliability.md), so no confined child runs here.
set -u
command -v valgrind >/dev/null 2>&1 || { echo "valgrind not found (tools/setup installs it)"; exit 1; }
dir=$(mktemp -d /tmp/confine-vg.XXXXXX)
logs=$TEST_TMPDIR/vg
sock=$dir/h.sock
mkdir "$dir/scratch" "$dir/tmp" "$logs"
# The jobs' tmps beneath $dir, removed with it: the Uncertain job's is
# kept for its client (tmp_kept), which this client does not remove. No
# gdbserver pipes left in /tmp (--vgdb=no).
TMPDIR=$dir/tmp valgrind --vgdb=no --error-exitcode=99 --trace-children=yes \
	--leak-check=full \
	--errors-for-leak-kinds=definite --show-leak-kinds=definite \
	--log-file="$logs/vg.%p.%n" \
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
for f in "$logs"/vg.*; do
	printf '==== %s\n' "${f##*/}"
	cat "$f"
done
n=$(find "$logs" -name 'vg.*' | wc -l)
summaries=$(cat "$logs"/vg.* | grep -c 'ERROR SUMMARY: 0 errors')
# What memcheck reports, and the fatal ends valgrind announces.
findings=$(cat "$logs"/vg.* | grep -ciE 'invalid (read|write|free|address)|jump to the invalid address|uninitialised|are definitely lost|definitely lost: [1-9]|mismatched|overlap|process terminating|syscall param|illegal|bad permissions|ERROR SUMMARY: [1-9]')
# Calls valgrind does not know fail with ENOSYS under it: said, not failed.
unknown=$(cat "$logs"/vg.* | sed -n 's/.*WARNING: unhandled .* syscall: \([0-9]*\).*/\1/p' | sort -nu | tr '\n' ' ')
echo "client exit $client, helper exit $helper; $n valgrind logs, $summaries of them clean to the end; $findings findings; system calls unknown to valgrind: ${unknown:-none}"
[ "$client" -eq 0 ] && [ "$helper" -eq 0 ] && [ "$findings" -eq 0 ] && [ "$summaries" -ge 2 ]
