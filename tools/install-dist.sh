#!/bin/sh
# Installs a built confine_dist (tools/dist.bzl) beneath $DESTDIR$PREFIX:
#
#   install-dist.sh DIST PREFIX
#
# DIST is the directory the rule laid out; PREFIX must be the one it was
# built for, since the library looks for PREFIX/libexec/confine-helper.
# DESTDIR (optional) stages the tree elsewhere, for packaging. tools/install
# builds DIST and runs this; tests/consumers/install_test.sh runs it too.
set -eu

die() { printf 'install-dist: %s\n' "$*" >&2; exit 1; }

[ $# -eq 2 ] || die "usage: install-dist.sh DIST PREFIX"
dist=$1
prefix=${2%/}
[ -n "$prefix" ] || prefix=/
built=$(cat "$dist/prefix") || die "$dist is not a confine_dist"
[ "$built" = "$prefix" ] ||
	die "this build is for $built, not $prefix (build it with --//tools:prefix=$prefix)"
version=$(sed -n 's/^#define CONFINE_VERSION "\(.*\)"$/\1/p' \
	"$dist/include/confine/confine.h")
[ -n "$version" ] || die "no CONFINE_VERSION in the header"
soname=$(cat "$dist/soname")
libs_private=$(cat "$dist/libs.private")
# The soname's number is the version's major one: an ABI break moves both.
[ "$soname" = "libconfine.so.${version%%.*}" ] ||
	die "soname $soname does not match version $version"

root=${DESTDIR:-}${prefix%/}
lib=$root/lib
install -d "$lib/pkgconfig" "$root/include/confine" "$root/bin" \
	"$root/libexec" "$root/share/man/man1" "$root/share/man/man8"
# Into place by rename, so that a running program never maps half a file.
install -m 0755 "$dist/lib/libconfine.so" "$lib/.libconfine.so.$version.new"
mv -f "$lib/.libconfine.so.$version.new" "$lib/libconfine.so.$version"
ln -sfn "libconfine.so.$version" "$lib/$soname"
ln -sfn "$soname" "$lib/libconfine.so"
install -m 0644 "$dist/lib/libconfine.a" "$lib/libconfine.a"
install -m 0644 "$dist/include/confine/confine.h" "$root/include/confine/confine.h"
install -m 0755 "$dist/bin/confine-run" "$root/bin/confine-run"
install -m 0755 "$dist/libexec/confine-helper" "$root/libexec/confine-helper"
install -m 0644 "$dist/share/man/man1/confine-run.1" "$root/share/man/man1/confine-run.1"
install -m 0644 "$dist/share/man/man8/confine-helper.8" "$root/share/man/man8/confine-helper.8"

pc=$lib/pkgconfig/confine.pc
cat >"$pc.new" <<EOF
prefix=${prefix%/}
exec_prefix=\${prefix}
libdir=\${exec_prefix}/lib
includedir=\${prefix}/include
libexecdir=\${exec_prefix}/libexec
helper=\${libexecdir}/confine-helper

Name: confine
Description: Run untrusted jobs confined, in their own process groups
Version: $version
Cflags: -I\${includedir}
Libs: -L\${libdir} -lconfine
Libs.private: $libs_private
EOF
chmod 0644 "$pc.new"
mv -f "$pc.new" "$pc"
printf 'install-dist: confine %s installed in %s\n' "$version" "$root"
