#!/bin/bash
# Sizes a reader can take in (TAP): no C file of the loader (interp/) over
# 500 lines, and no function of the product's C (the loader, the shared
# layer, the tools, the BPF program) over 80, counted from the first line
# of its definition to its closing brace.  The code's style puts a
# function's braces in column 0, which is what is counted here.
# Usage: sizes.sh [SOURCE-DIR]
set -uo pipefail
. "$(cd "$(dirname "$0")" && pwd)/tap.sh"
root=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$root" || exit 2
FILE_MAX=500 FUNC_MAX=80
long_files=() long_funcs=()
while IFS= read -r f; do
	lines=$(wc -l <"$f")
	[ "$lines" -le $FILE_MAX ] || long_files+=("$f: $lines lines")
done < <(find interp -name '*.c' | sort)
while IFS= read -r line; do
	long_funcs+=("$line")
done < <(find interp common stat warm stamp bpf arch -name '*.c' | sort | xargs awk -v max=$FUNC_MAX '
	FNR == 1 { top = 0; start = 0 }
	/^[A-Za-z_]/ && !/^[A-Za-z_][A-Za-z0-9_]*:/ { top = FNR; sig = $0 }
	/^\{/ { start = top; name = sig }
	/^\}/ && start { n = FNR - start + 1; if (n > max) printf "%s:%d: %d lines: %s\n", FILENAME, start, n, name; start = 0 }
')
ok "${#long_files[@]}" "no file of the loader is over $FILE_MAX lines" "${long_files[@]}"
ok "${#long_funcs[@]}" "no function is over $FUNC_MAX lines" "${long_funcs[@]}"
tap_done
