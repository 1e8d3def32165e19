#!/bin/bash
# Every reason of common/reason.h is one the code can give (TAP): each
# row's name (REASONS) is named in a C file of the loader or the shared
# layer besides the table (common/reason.c).  With
# test-facilities.c, which prints every row, a row nobody can reach or read
# fails a test.
# Usage: reasons.sh [SOURCE-DIR]
set -uo pipefail
. "$(cd "$(dirname "$0")" && pwd)/tap.sh"
root=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$root" || exit 2
values=$(sed -nE 's/^\tX\((R_[A-Z0-9_]+), .*/\1/p' common/reason.h)
uses=$(find interp common -name '*.c' ! -path common/reason.c -exec cat {} + | grep -oE '\bR_[A-Z0-9_]+\b' | sort -u)
unused=()
for v in $values; do
	grep -qx "$v" <<<"$uses" || unused+=("$v")
done
ok "$([ "$(wc -w <<<"$values")" -ge 30 ] && echo 0 || echo 1)" "common/reason.h lists the reasons ($(wc -w <<<"$values"))"
ok "${#unused[@]}" "every reason is given somewhere in the code" "${unused[@]/#/never given: }"
tap_done
