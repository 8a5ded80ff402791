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
helper/backend:src/client/ helper/engine/ helper/serve helper/evloop
helper/engine:src/client/ helper/serve helper/evloop
helper:src/client/ helper/backend/
'
folders='src/core src/client helper/backend helper/engine helper'

root=${TEST_SRCDIR:-.}/${TEST_WORKSPACE:-confine}
tmp=${TEST_TMPDIR:-/tmp}

# crossings DIR: prints each include across a layer in DIR's tree, and
# the count last. An include is named from the workspace's root, in
# quotes or brackets; one that climbs (..) is a crossing in itself, as
# its layer cannot be told from its name.
crossings() {
	n=0
	for rule in $(echo "$rules" | tr ' ' ','); do
		folder=${rule%%:*}
		for f in "$1/$folder"/*.c "$1/$folder"/*.h; do
			[ -f "$f" ] || continue
			if grep -Eq '^[[:space:]]*#[[:space:]]*include[[:space:]]*["<][^">]*\.\./' "$f"; then
				echo "  ${f#"$1"/} includes a path that climbs (..):" \
				    "$(grep -En '^[[:space:]]*#[[:space:]]*include[[:space:]]*["<][^">]*\.\./' "$f" | head -1)"
				n=$((n + 1))
			fi
			for p in $(echo "${rule#*:}" | tr ',' ' '); do
				re="^[[:space:]]*#[[:space:]]*include[[:space:]]*[\"<]$p"
				if grep -Eq "$re" "$f"; then
					echo "  ${f#"$1"/} includes $p (its folder, $folder, may not):" \
					    "$(grep -En "$re" "$f" | head -1)"
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

out=$(crossings "$root")
echo "$out" | sed '$d'
n=$(echo "$out" | tail -1)
echo "includes_test: $files files in 5 folders, $n includes across a layer"

# Each way of crossing, planted in a copy, alone: each must be caught.
plant() {
	dir=$(mktemp -d "$tmp/includes.XXXXXX")
	mkdir -p "$dir/helper"
	cp -RL "$root/src" "$dir/"
	cp -RL "$root/helper/backend" "$root/helper/engine" "$dir/helper/"
	cp -L "$root"/helper/*.[ch] "$dir/helper/"
	chmod -R u+w "$dir"
	printf '%s\n' "$2" >>"$dir/$1"
	got=$(crossings "$dir")
	if [ "$(echo "$got" | tail -1)" != $((n + 1)) ]; then
		echo "includes_test: $1 with $2 planted was not caught:"
		echo "$got"
		exit 1
	fi
	echo "includes_test: caught, planted in $1: $2"
	rm -rf "$dir"
}
plant helper/backend/ns.c '#include "helper/engine/job.h"'
plant helper/engine/job.c '#include <src/client/launch.h>'
plant helper/serve.c '#include "helper/backend/caps.h"'
plant src/core/fd.c '  #  include "helper/serve.h"'
plant src/client/client.c '#include "../../helper/engine/job.h"'
[ "$n" -eq 0 ]
