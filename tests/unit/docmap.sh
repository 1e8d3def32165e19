#!/bin/bash
# docs/hacking.md's map of the source against the tree (TAP): every C file
# of the loader, the shared layer and the tools is named there (a header
# counts through its .c file of the same name), and every file it names
# in `backquotes` exists.  So the map a newcomer reads stays true.
# Usage: docmap.sh [SOURCE-DIR]
set -uo pipefail
. "$(cd "$(dirname "$0")" && pwd)/tap.sh"
root=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$root" || exit 2
doc=docs/hacking.md
# Names the map may use that are not files of the tree: libbpf's header.
foreign=" bpf_tracing.h vmlinux.h "
missing=() gone=()
while IFS= read -r f; do
	b=${f##*/}
	[[ $f == *.h && -e ${f%.h}.c ]] && continue
	grep -qF "$b" "$doc" || missing+=("$f")
done < <(find arch interp common stat warm stamp bpf -name '*.[ch]' | sort)
while IFS= read -r n; do
	[[ $foreign == *" ${n##*/} "* ]] && continue
	[ -n "$(find arch interp common stat warm stamp bpf packaging scripts tests -name "${n##*/}" -print)" ] || gone+=("$n")
done < <(grep -o '`[A-Za-z0-9_./-]*\.[ch]`' "$doc" | tr -d '`' | sort -u)
ok "${#missing[@]}" "every source file is in $doc" "${missing[@]/#/not named: }"
ok "${#gone[@]}" "every file $doc names exists" "${gone[@]/#/no such file: }"
tap_done
