#!/bin/sh
# The kernel matrix: tests/kernels/matrix.sh's cases inside each of
# Debian's kernels (tools/kernels boots them under qemu), with what each
# must give. Run by tools/test (the "kernels" configuration); the kernels
# come from tools/setup (tools/kernels fetch).
#
#   tests/kernels/run.sh [KERNEL...]     default: 5.10 6.1 6.12
set -u
cd "$(dirname "$0")/../.." || exit 2

# What each kernel must give: its enforcement words, or its refusal. As
# root the job's /tmp has the host's beneath it (tmp=over-hosts) on each;
# nobody-tmp= says what nobody's has (matrix.sh takes that word out).
expect() {
	case $1 in
	# No Landlock (5.13), no mount_setattr (5.12: the classic API makes
	# the view), no supervised sockets (5.19): its namespaces hold. No
	# overlay in a user namespace (5.11): nobody's /tmp is private.
	5.10) echo "landlock=off namespaces=pid,mount,net,ipc,uts sockets=refused nobody-tmp=private" ;;
	6.1) echo "landlock=2 landlock-rights=write,refer namespaces=pid,mount,net,ipc,uts sockets=supervised nobody-tmp=over-hosts" ;;
	6.12) echo "landlock=6 landlock-rights=write,refer,truncate,ioctl-dev,tcp,signal,abstract-unix namespaces=pid,mount,net,ipc,uts sockets=supervised nobody-tmp=over-hosts" ;;
	*) echo "unknown" ;;
	esac
}

bazel build //tools:confine-run //tests:fixture >/dev/null 2>&1 ||
	{ echo "kernels: bazel build failed"; exit 1; }
# What the guest runs, copied in (tools/kernels -f): the checkout may lie
# where the guest sees its own /tmp, /var/tmp or /run.
stage=$(mktemp -d) || exit 1
trap 'rm -rf "$stage"' EXIT
cp bazel-bin/tools/confine-run bazel-bin/tests/fixture tests/kernels/matrix.sh \
    tests/listen_once.sh tools/demo.sh "$stage/" || exit 1
F=/mnt/files
status=0
for k in ${*:-5.10 6.1 6.12}; do
	printf 'kernels: %s\n' "$k"
	tools/kernels run -t 1200 -f "$stage" "$k" -- sh "$F/matrix.sh" \
	    "$F/confine-run" "$F/fixture" "$(expect "$k")" "$F/demo.sh" ||
	    status=1
done
exit "$status"
