#!/bin/sh
# symbols_test.sh ARCHIVE HEADER HEADER_API: the names ARCHIVE (the Bazel
# library's own archive, //:client_local) defines globally are exactly the
# functions of the header (as HEADER_API, tools/header-api.sh, lists
# them); every other name of the library is local.
archive=$1 header=$2 header_api=$3
T=${TEST_TMPDIR:?}
sh "$header_api" "$header" >"$T/api"
nm -g --defined-only "$archive" | awk 'NF == 3 { print $3 }' | sort -u >"$T/global"
[ -s "$T/api" ] || { echo "no functions found in $header"; exit 1; }
[ -s "$T/global" ] || { echo "$archive defines no global name"; exit 1; }
if ! diff "$T/api" "$T/global"; then
	echo "$archive: its global names (>) are not the header's functions (<)"
	exit 1
fi
# And the internal ones are there, local: the archive is the library.
nm --defined-only "$archive" | grep -q ' t fd_socketpair$' ||
	{ echo "$archive: no local fd_socketpair: not the client's objects?"; exit 1; }
echo "symbols: $(wc -l <"$T/global") global, all the header's"
