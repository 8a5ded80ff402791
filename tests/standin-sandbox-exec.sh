#!/bin/sh
# Stand-in for /usr/bin/sandbox-exec on Linux. It checks the shape of the
# arguments confine passes (-p PROFILE, -D NAME=VALUE..., --, COMMAND...),
# records them next to itself ($0.profile, $0.params, $0.argv, each value
# NUL-terminated) and runs the command unconfined. It enforces nothing: it
# exists so the Seatbelt backend's plumbing runs on a machine without macOS.
fail() {
	printf 'stand-in sandbox-exec: %s\n' "$1" >&2
	exit 90
}
[ "$1" = "-p" ] || fail "expected -p PROFILE first"
[ $# -ge 2 ] || fail "-p without a profile"
profile=$2
shift 2
: > "$0.params" || fail "cannot record parameters"
while [ "$1" = "-D" ]; do
	case $2 in
	?*=*) ;;
	*) fail "-D without NAME=VALUE" ;;
	esac
	printf '%s\0' "$2" >> "$0.params"
	shift 2
done
[ "$1" = "--" ] || fail "expected -- before the command"
shift
[ $# -ge 1 ] || fail "no command"
case $1 in
/*) ;;
*) fail "the command is not an absolute path" ;;
esac
printf '%s' "$profile" > "$0.profile"
printf '%s\0' "$@" > "$0.argv"
# sh exports a PWD of its own; sandbox-exec passes the environment as is.
unset PWD
exec "$@"
