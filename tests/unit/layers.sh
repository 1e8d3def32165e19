#!/bin/bash
# The loader's layers, checked on its object files with nm (TAP):
#   1. no mutable variable defined in one file is used by another;
#   2. no cycle between files (tsort);
#   3. dependencies point down: driver (main) -> stages -> facilities; a
#      stage never calls the driver or another stage, a facility never
#      calls either (interp/exec.h).
# Usage: layers.sh OBJDIR   (build/interp/tiexec.p)
set -uo pipefail
objdir=${1:?usage: layers.sh OBJDIR}
stages=" launch load stack final libs "
n=0 failed=0

ok() { # ok COND-STATUS DESC [DETAIL...]
	local st=$1 desc=$2
	shift 2
	n=$((n + 1))
	if [ "$st" -eq 0 ]; then
		echo "ok $n - $desc"
	else
		echo "not ok $n - $desc"
		failed=$((failed + 1))
		printf '#   %s\n' "$@"
	fi
}

layer() {
	case $1 in
	main) echo 0 ;;
	*) if [[ $stages == *" $1 "* ]]; then echo 1; else echo 2; fi ;;
	esac
}

shopt -s nullglob
objs=("$objdir"/*.c.o)
if [ ${#objs[@]} -lt 5 ]; then
	echo "1..1"
	echo "not ok 1 - object files in $objdir (found ${#objs[@]})"
	exit 1
fi

# sym file type, for every global a file defines.
declare -A def_file def_type
for o in "${objs[@]}"; do
	f=$(basename "$o" .c.o)
	while read -r _ t s; do
		def_file[$s]=$f
		def_type[$s]=$t
	done < <(nm -g --defined-only "$o")
done

shared=() edges=() wrong=()
declare -A seen
for o in "${objs[@]}"; do
	f=$(basename "$o" .c.o)
	while read -r _ s; do
		g=${def_file[$s]:-}
		[ -n "$g" ] && [ "$g" != "$f" ] || continue
		case ${def_type[$s]} in
		[BDCGSbdgs]) shared+=("$f uses $g's variable $s") ;;
		esac
		if [ -z "${seen[$f $g]:-}" ]; then
			seen[$f $g]=1
			edges+=("$f $g")
			lf=$(layer "$f") lg=$(layer "$g")
			if [ "$lg" -lt "$lf" ] || { [ "$lf" -eq 1 ] && [ "$lg" -eq 1 ]; }; then
				wrong+=("$f calls $g ($s)")
			fi
		fi
	done < <(nm -u "$o")
done

ok "${#shared[@]}" "no mutable variable crosses a file boundary" "${shared[@]}"
mapfile -t loop < <(printf '%s\n' "${edges[@]}" | tsort 2>&1 >/dev/null)
ok "${#loop[@]}" "no cycle between files" "${loop[@]}"
ok "${#wrong[@]}" "driver -> stages -> facilities, never up or sideways between stages" "${wrong[@]}"
echo "1..$n"
[ "$failed" -eq 0 ]
