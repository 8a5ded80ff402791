#!/bin/sh
# The layers' folders (docs/architecture.md) hold for #include too, not
# only for Bazel's deps: a header reached through another target's deps
# is still a dependency. Each rule: a folder's files include nothing
# from the folders it names. First a copy with one include planted that
# breaks a rule must be caught, then the tree itself must be clean.
set -eu

# FOLDER:FORBIDDEN...  (each a prefix of an include's path)
rules='
src/core:src/client/ helper/
src/client:helper/
helper/backend:helper/engine/ helper/serve helper/evloop
helper/engine:helper/serve helper/evloop
helper:helper/backend/
'
folders='src/core src/client helper/backend helper/engine helper'

root=${TEST_SRCDIR:-.}/${TEST_WORKSPACE:-confine}
tmp=${TEST_TMPDIR:-/tmp}

# crossings DIR: prints each include across a layer in DIR's tree, and
# the count last.
crossings() {
	n=0
	for rule in $(echo "$rules" | tr ' ' ','); do
		folder=${rule%%:*}
		for f in "$1/$folder"/*.c "$1/$folder"/*.h; do
			[ -f "$f" ] || continue
			for p in $(echo "${rule#*:}" | tr ',' ' '); do
				if grep -q "^#include \"$p" "$f"; then
					echo "  ${f#"$1"/} includes $p (its folder, $folder, may not):" \
					    "$(grep -n "^#include \"$p" "$f" | head -1)"
					n=$((n + 1))
				fi
			done
		done
	done
	echo "$n"
}

files=0
for folder in $folders; do
	k=$(ls "$root/$folder"/*.[ch] 2>/dev/null | wc -l)
	[ "$k" -gt 0 ] || { echo "includes_test: no sources in $root/$folder" >&2; exit 1; }
	files=$((files + k))
done

plant=$(mktemp -d "$tmp/includes.XXXXXX")
mkdir -p "$plant/helper"
cp -RL "$root/src" "$plant/"
cp -RL "$root/helper/backend" "$root/helper/engine" "$plant/helper/"
printf '#include "helper/engine/job.h"\n' >>"$plant/helper/backend/ns.c"
out=$(crossings "$plant")
if [ "$(echo "$out" | tail -1)" != 1 ]; then
	echo "includes_test: the planted include was not caught:"
	echo "$out"
	exit 1
fi
echo "includes_test: a planted include is caught:"
echo "$out" | sed '$d'

out=$(crossings "$root")
echo "$out" | sed '$d'
n=$(echo "$out" | tail -1)
echo "includes_test: $files files in 5 folders, $n includes across a layer"
[ "$n" -eq 0 ]
