#!/bin/sh
# localize-macho.sh NM OBJCOPY MAP OUTDIR OBJECT...
#
# The Mach-O form of tools/dist.bzl's localize, for zig 0.11 has no ld -r
# for Mach-O: every global name the objects define that is not the API's
# (_confine_*) is renamed _confine__NAME, in the definitions and in every
# reference, and each object is written beneath OUTDIR under its own
# name. A host's serve, fd_close or job_start then meets none of them.
# MAP keeps the renaming, for the record.
set -eu
nm=$1 objcopy=$2 map=$3 out=$4
shift 4
"$nm" -g --defined-only "$@" |
	awk 'NF == 3 && $3 !~ /^_confine_/ { print $3, "_confine__" substr($3, 2) }' |
	sort -u >"$map"
[ -s "$map" ] || { echo "localize-macho.sh: no internal name found" >&2; exit 1; }
for o in "$@"; do
	"$objcopy" --redefine-syms="$map" "$o" "$out/${o##*/}"
done
