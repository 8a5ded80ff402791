#!/bin/sh
# Installs the build of //tests/consumers:dist_for_test into the PREFIX it
# was built for, as tools/install does, then uses it the way a program of
# someone else's would: plain cc and pkg-config, the installed helper found
# by default, the installed confine-run.
#
# That PREFIX is fixed at build time, so it is a fixed path in /tmp: runs
# from other output bases (another engineer's, say) take turns on a lock.
. tests/cli/lib.sh

PREFIX=/tmp/confine-install-test
DIST="$ROOT/tests/consumers/dist_for_test"
VERSION=$(sed -n 's/^#define CONFINE_VERSION "\(.*\)"$/\1/p' \
	"$ROOT/include/confine/confine.h")
export PKG_CONFIG_PATH="$PREFIX/lib/pkgconfig"
unset CONFINE_HELPER PKG_CONFIG_SYSROOT_DIR

exec 9>"$PREFIX.lock"
flock 9 || { echo "cannot lock $PREFIX.lock"; exit 1; }
rm -rf "$PREFIX"
trap 'rm -rf "$PREFIX"' EXIT
sh "$ROOT/tools/install-dist.sh" "$DIST" "$PREFIX" ||
	{ echo "install-dist.sh failed"; exit 1; }

case_every_file_is_in_place() {
	for f in lib/libconfine.so.$VERSION lib/libconfine.a \
	    include/confine/confine.h share/man/man1/confine-run.1 \
	    share/man/man8/confine-helper.8 lib/pkgconfig/confine.pc; do
		[ -f "$PREFIX/$f" ] || fail "no $f"
	done
	for f in bin/confine-run libexec/confine-helper lib/libconfine.so.$VERSION; do
		[ -x "$PREFIX/$f" ] || fail "$f is not executable"
	done
	[ "$(readlink "$PREFIX/lib/libconfine.so.0")" = "libconfine.so.$VERSION" ] ||
		fail "libconfine.so.0 does not point at libconfine.so.$VERSION"
	[ "$(readlink "$PREFIX/lib/libconfine.so")" = libconfine.so.0 ] ||
		fail "libconfine.so does not point at libconfine.so.0"
}

# The functions the installed header declares, one a line.
header_api() {
	sh "$ROOT/tools/header-api.sh" "$PREFIX/include/confine/confine.h"
}

case_library_has_a_soname_and_exports_only_the_api() {
	readelf -d "$PREFIX/lib/libconfine.so.$VERSION" >"$T/dyn"
	grep -q 'Library soname: \[libconfine.so.0\]' "$T/dyn" || fail "no soname"
	! grep -q 'NEEDED.*libasan\|NEEDED.*libubsan\|NEEDED.*libtsan' "$T/dyn" ||
		fail "the installed library needs a sanitizer"
	header_api >"$T/api"
	nm -D --defined-only "$PREFIX/lib/libconfine.so.$VERSION" |
		awk '$2 ~ /^[TDBRW]$/ { sub(/@.*/, "", $3); print $3 }' | sort -u >"$T/exported"
	[ -s "$T/api" ] || fail "no functions found in the header"
	diff "$T/api" "$T/exported" >"$T/out" ||
		fail "exported symbols differ from the header's functions"
	# Every one under the ABI's symbol version.
	objdump -T "$PREFIX/lib/libconfine.so.$VERSION" |
		awk '$NF ~ /^confine_/ { print $(NF-1), $NF }' >"$T/versions"
	[ "$(wc -l <"$T/versions")" -eq "$(wc -l <"$T/api")" ] ||
		fail "objdump -T lists $(wc -l <"$T/versions") of the API"
	! grep -v '^CONFINE_0\.2 ' "$T/versions" >"$T/out" ||
		fail "exported without the symbol version CONFINE_0.2"
}

case_pkg_config_describes_the_install() {
	[ "$(pkg-config --modversion confine)" = "$VERSION" ] || fail "version"
	[ "$(pkg-config --variable=helper confine)" = "$PREFIX/libexec/confine-helper" ] ||
		fail "helper variable"
	pkg-config --cflags confine | grep -q -- "-I$PREFIX/include" || fail "cflags"
	# The library carries the helper; only the helper links libseccomp.
	pkg-config --static --libs confine | grep -q -- "-lbsd" ||
		fail "static libs lack libbsd"
	! pkg-config --static --libs confine | grep -q -- "-lseccomp" ||
		fail "static libs name libseccomp, which the library no longer links"
}

consume() { # PROGRAM [HELPER]
	mkdir "$T/outside"
	"$@" >"$T/out" 2>"$T/err" || fail "$1 failed"
	expect_out "^default helper: $PREFIX/libexec/confine-helper\$"
	expect_out "^helper: $PREFIX/libexec/confine-helper\$"
	expect_out "^consumed\$"
	expect_out "^inside: completed none 0\$"
	expect_out "^outside: failed exit_code 2\$"
	[ ! -e "$T/outside/f" ] || fail "the write outside landed"
}

case_shared_consumer_finds_the_installed_helper_by_default() {
	# shellcheck disable=SC2046
	cc -std=c11 -Wall -Wextra -Werror -pedantic -o "$T/consumer" \
	    "$ROOT/tests/consumers/consumer.c" $(pkg-config --cflags --libs confine) \
	    >"$T/err" 2>&1 || fail "cc failed"
	readelf -d "$T/consumer" | grep -q 'NEEDED.*libconfine.so.0' ||
		fail "not linked against libconfine.so.0"
	# The sized entry points, bound to the version it was linked against.
	readelf -W --dyn-syms "$T/consumer" |
		grep -q ' confine_spawn_sized@CONFINE_0\.2' ||
		fail "confine_spawn is not confine_spawn_sized@CONFINE_0.2"
	LD_LIBRARY_PATH="$PREFIX/lib" consume "$T/consumer" "$S" "$T/outside/f"
}

case_static_consumer_needs_no_libconfine_at_run_time() {
	libs=$(pkg-config --static --libs-only-l confine | sed 's/-lconfine//')
	# shellcheck disable=SC2046,SC2086
	cc -std=c11 -Wall -Wextra -Werror -o "$T/consumer" \
	    "$ROOT/tests/consumers/consumer.c" $(pkg-config --cflags confine) \
	    "$PREFIX/lib/libconfine.a" $libs >"$T/err" 2>&1 || fail "cc failed"
	! readelf -d "$T/consumer" | grep -q 'NEEDED.*libconfine' ||
		fail "linked against libconfine.so"
	consume "$T/consumer" "$S" "$T/outside/f" "$PREFIX/libexec/confine-helper"
}

case_static_archive_defines_only_the_api() {
	header_api >"$T/api"
	nm -g --defined-only "$PREFIX/lib/libconfine.a" |
		awk 'NF == 3 { print $3 }' | sort -u >"$T/global"
	[ -s "$T/api" ] || fail "no functions found in the header"
	diff "$T/api" "$T/global" >"$T/out" ||
		fail "libconfine.a defines names (>) that are not the header's (<)"
}

# Its own serve, fd_socketpair, settle_select...: it links, and the
# library's calls reach the library's own.
case_static_host_with_the_librarys_internal_names_runs_a_job() {
	libs=$(pkg-config --static --libs-only-l confine | sed 's/-lconfine//')
	# shellcheck disable=SC2046,SC2086
	cc -std=c11 -Wall -Wextra -Werror -o "$T/names" \
	    "$ROOT/tests/consumers/names.c" $(pkg-config --cflags confine) \
	    "$PREFIX/lib/libconfine.a" $libs >"$T/err" 2>&1 ||
		fail "cc failed: $(cat "$T/err")"
	"$T/names" "$S" >"$T/out" 2>"$T/err" || fail "names failed: $(cat "$T/err")"
	expect_out "^names: completed\$"
}

case_installed_confine_run_runs_a_job() {
	RUN="$PREFIX/bin/confine-run"
	cr -s "$S" -- /bin/sh -c 'echo ran > f'
	expect_status 0
	[ "$(cat "$S/f")" = ran ] || fail "the job did not run"
	cr -s "$S" --helper "$PREFIX/libexec/confine-helper" -- "$FIX" exit 3
	expect_status 3
	cr --version
	expect_out "^confine-run $VERSION\$"
}

case_install_refuses_another_prefix() {
	sh "$ROOT/tools/install-dist.sh" "$DIST" "$T/elsewhere" >"$T/out" 2>"$T/err" &&
		fail "installed a build for $PREFIX into $T/elsewhere"
	expect_err "this build is for $PREFIX, not $T/elsewhere"
	[ ! -e "$T/elsewhere" ] || fail "something was installed"
}

case_destdir_stages_the_tree() {
	DESTDIR="$T/stage" sh "$ROOT/tools/install-dist.sh" "$DIST" "$PREFIX" \
	    >"$T/out" 2>"$T/err" || fail "staged install failed"
	[ -x "$T/stage$PREFIX/libexec/confine-helper" ] || fail "nothing staged"
	grep -q "^prefix=$PREFIX\$" "$T/stage$PREFIX/lib/pkgconfig/confine.pc" ||
		fail "the staged confine.pc names the stage"
}

# tools/install itself, around install-dist.sh: its Bazel build is a
# stand-in (BAZEL) that notes how it was called and installs the build of
# this test, so what is left to see is its own part: the PREFIX it makes,
# what it refuses, and its check of the install.
fake_bazel() { # [COMMAND to run after installing]
	cat >"$T/bazel" <<-EOF
	#!/bin/sh
	printf '%s\n' "\$*" >>"$T/bazel.args"
	for a; do last=\$a; done
	sh "$ROOT/tools/install-dist.sh" "$DIST" "\$last" && ${1:-:}
	EOF
	chmod +x "$T/bazel"
}

run_install() { # DIR ARG...: tools/install ARG... from DIR
	_dir=$1
	shift
	(cd "$_dir" && BAZEL="$T/bazel" sh "$ROOT/tools/install" "$@") >"$T/out" 2>"$T/err"
	st=$?
}

case_tools_install_makes_a_relative_prefix_absolute_and_checks_it() {
	fake_bazel
	rm -rf "$PREFIX"
	run_install "${PREFIX%/*}" "${PREFIX##*/}"
	expect_status 0
	[ "$(cat "$T/bazel.args")" = "run -c opt --//tools:prefix=$PREFIX //tools:install_dist -- $PREFIX" ] ||
		fail "bazel ran as: $(cat "$T/bazel.args")"
	expect_out "^tools/install: checked: a program built with pkg-config ran a confined job through $PREFIX/libexec/confine-helper\$"
	expect_out "^tools/install: programs linked with -lconfine need LD_LIBRARY_PATH=$PREFIX/lib"
}

case_tools_install_refuses_what_it_cannot_install() {
	fake_bazel
	run_install "$T" "/tmp/two words"
	expect_status 1
	expect_err "^tools/install: PREFIX may hold only letters, digits and /._\\+-: /tmp/two words\$"
	run_install "$T" 'a$b'
	expect_status 1
	expect_err "^tools/install: PREFIX may hold only .*: $T/a\\\$b\$"
	run_install "$T" /a /b
	expect_status 1
	expect_err "^tools/install: usage: tools/install \\[PREFIX\\]\$"
	[ ! -e "$T/bazel.args" ] || fail "it built: $(cat "$T/bazel.args")"
}

case_tools_install_with_destdir_stages_without_a_check() {
	fake_bazel
	DESTDIR="$T/stage" run_install "$T" "$PREFIX"
	expect_status 0
	[ -x "$T/stage$PREFIX/libexec/confine-helper" ] || fail "nothing staged"
	! grep -q checked "$T/out" || fail "it checked a staged install"
}

# Its check has teeth: an install whose helper does not run fails it.
case_tools_install_check_fails_on_a_broken_install() {
	fake_bazel "rm -f $PREFIX/libexec/confine-helper"
	run_install "$T" "$PREFIX"
	expect_status 1
	expect_err "^tools/install: check: a program built against $PREFIX did not run its jobs as it should\$"
	sh "$ROOT/tools/install-dist.sh" "$DIST" "$PREFIX" >/dev/null ||
		fail "cannot install again"
}

run_cases
