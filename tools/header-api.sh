#!/bin/sh
# header-api.sh HEADER: the functions HEADER declares, one a line, sorted:
# the names a build of confine may define globally, and must.
grep -E '^[a-z].*confine_[a-z_]+\(' "${1:?usage: header-api.sh HEADER}" |
	grep -oE 'confine_[a-z_]+\(' | tr -d '(' | sort -u
