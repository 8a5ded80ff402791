#!/bin/sh
# No job leaves a setuid or setgid file behind, whatever makes it: the
# report's own command (cp, then chmod 6755), install -m, cp -p of a
# setuid program, tar extracting one. Each paired: with --backend none
# the host sees the bit, confined the tool fails and no file in the
# scratch root has it. As root and as nobody, and as nobody through a root
# helper that serves it (--listen --allow-uid). Unsandboxed: it needs a
# second real uid, and a directory nobody may reach.
. "$(dirname "$0")/lib.sh"

# The scripts the jobs run, each in its scratch root: a setid file made.
TOOLS='
report:cp /usr/bin/id suid-id && chmod 6755 suid-id
install:install -m 4755 /usr/bin/id inst
cp-p:cp -p /usr/bin/passwd passwd
tar:tar -xpf "$1"
'

# A tar holding a setuid-root file, made by root on the host.
make_tar() { # DIR
	mkdir "$1/t" && cp /usr/bin/id "$1/t/x" && chmod 4755 "$1/t/x" &&
		tar -C "$1/t" -cf "$1/setid.tar" x && chmod 644 "$1/setid.tar" ||
		fail "no tar"
}

# Setid files beneath DIR, as the host sees them.
setid_in() { find "$1" -perm /6000 -type f 2>/dev/null; }

setup() {
	D=$(mktemp -d /var/tmp/confine-setid.XXXXXX) || fail "no directory"
	chmod 755 "$D"
	cp "$RUN" "$D/confine-run"
	make_tar "$D"
	mkdir -m 1777 "$D/tmp"
}

# WHO (root, nobody, or nobody-via-helper) BACKEND: each tool in a fresh
# scratch root of WHO's; OK says whether a setid file may be left.
try_all() {
	_who=$1 _backend=$2 _ok=$3
	printf '%s\n' "$TOOLS" | while IFS=: read -r _name _cmd; do
		[ -n "$_name" ] || continue
		# cp -p by a user not the file's owner clears the bits itself.
		[ "$_who" = root ] || [ "$_name" != cp-p ] || continue
		_s="$D/$_who-$_backend-$_name"
		mkdir "$_s"
		[ "$_who" = root ] || chown 65534:65534 "$_s"
		case $_who in
		root) _pre= ;;
		nobody) _pre="setpriv --reuid=65534 --regid=65534 --clear-groups --" ;;
		helper) _pre="setpriv --reuid=65534 --regid=65534 --clear-groups --"
			_conn="--connect $D/h.sock" ;;
		esac
		# shellcheck disable=SC2086
		TMPDIR="$D/tmp" $_pre "$D/confine-run" ${_conn:-} -s "$_s" \
			--backend "$_backend" -e PATH=/usr/bin:/bin -- \
			/bin/sh -c "$_cmd" sh "$D/setid.tar" >"$T/out" 2>"$T/err"
		_st=$?
		_left=$(setid_in "$_s")
		if [ "$_ok" = yes ]; then
			[ "$_st" -eq 0 ] && [ -n "$_left" ] ||
				{ echo "$_who $_backend $_name: status $_st, left '$_left'"; exit 1; }
		else
			[ "$_st" -ne 0 ] && [ -z "$_left" ] ||
				{ echo "$_who $_backend $_name: status $_st, left '$_left'"; exit 1; }
		fi
	done
}

case_as_root() {
	setup
	try_all root none yes >"$T/why" && try_all root landlock no >"$T/why"
	_rc=$?
	rm -rf "$D"
	[ "$_rc" -eq 0 ] || fail "$(cat "$T/why")"
}

case_as_nobody() {
	setup
	try_all nobody none yes >"$T/why" && try_all nobody landlock no >"$T/why"
	_rc=$?
	rm -rf "$D"
	[ "$_rc" -eq 0 ] || fail "$(cat "$T/why")"
}

# A root helper serving nobody: its jobs run as nobody, confined.
case_as_nobody_through_a_root_helper() {
	setup
	"$HELPER" --listen "$D/h.sock" --allow-uid 65534 >"$T/helper.log" 2>&1 &
	_h=$!
	_i=0
	while [ ! -S "$D/h.sock" ] && [ "$_i" -lt 600 ]; do sleep 0.05; _i=$((_i + 1)); done
	chmod 666 "$D/h.sock"
	try_all helper landlock no >"$T/why"
	_rc=$?
	kill "$_h"
	wait "$_h"
	rm -rf "$D"
	[ "$_rc" -eq 0 ] || fail "$(cat "$T/why")"
}

own_cgroup
run_cases
