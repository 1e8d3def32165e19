#!/bin/bash
# The layers, checked on the object files with nm (TAP).  For each program
# (the loader and each tool), over its own object files and the shared
# layer's (common/):
#   1. no mutable variable defined in one file is used by another;
#   2. no cycle between files (tsort);
#   3. dependencies point down.  The loader: driver (main) -> stages ->
#      facilities -> the shared layer -> the runtime (rt.c); a stage never calls the driver or
#      another stage (interp/exec.h).  A tool: its main file -> its other
#      files -> the shared layer.  The shared layer never calls up.
#   4. the loader's placement layer (huge.c, place-*.c) calls only itself,
#      the shared layer, the runtime and proc.c's clock: no stage, no
#      other facility (it never prints: its notes go back to the stages).
# Usage: layers.sh NAME=OBJDIR[,OBJDIR...]...
#   e.g. loader=build/interp/tiexec.p,build/common/libtiexec-common-loader.a.p
# The first NAME is the loader (its stages are known by name); in the others
# the file named like the tool (tiexec-stat.c, stamp.c) is the main file.
set -uo pipefail
[ $# -ge 1 ] || { echo "usage: layers.sh NAME=OBJDIR[,OBJDIR...]..." >&2; exit 2; }
stages=" launch load libplan stack final libs "

. "$(dirname "$0")/tap.sh"

# layer KIND FILE: 0 the main file, 1 a loader stage, 2 any other file of the
# program, 3 the shared layer, 4 the loader's runtime (common/mem.c: memcpy
# and the like, which the tools take from their C library; rt.c: errno
# texts and the message buffer).
layer() {
	case $2 in
	common/mem | loader/rt) echo 4 ;;
	common/*) echo 3 ;;
	*/main | */tiexec-* | */stamp) echo 0 ;;
	*) if [ "$1" = loader ] && [[ $stages == *" ${2#*/} "* ]]; then echo 1; else echo 2; fi ;;
	esac
}

check() { # check KIND NAME OBJDIR...
	local kind=$1 name=$2 o f g s t lf lg d
	shift 2
	local objs=()
	shopt -s nullglob
	for d in "$@"; do objs+=("$d"/*.c.o); done
	if [ ${#objs[@]} -lt 3 ]; then
		ok 1 "$name: object files in $* (found ${#objs[@]})"
		return
	fi
	# Each object is named DIR/FILE: common/ for the shared layer.
	local -A def_file def_type seen
	local -a shared=() edges=() wrong=() placed=()
	id() { case $1 in *common*) echo "common/$(basename "$1" .c.o)" ;; *) echo "$name/$(basename "$1" .c.o)" ;; esac; }
	for o in "${objs[@]}"; do
		f=$(id "$o")
		while read -r _ t s; do
			def_file[$s]=$f
			def_type[$s]=$t
		done < <(nm -g --defined-only "$o")
	done
	for o in "${objs[@]}"; do
		f=$(id "$o")
		while read -r _ s; do
			g=${def_file[$s]:-}
			[ -n "$g" ] && [ "$g" != "$f" ] || continue
			case ${def_type[$s]} in
			[BDCGSbdgs]) shared+=("$f uses $g's variable $s") ;;
			esac
			if [ -z "${seen[$f $g]:-}" ]; then
				seen[$f $g]=1
				edges+=("$f $g")
				lf=$(layer "$kind" "$f") lg=$(layer "$kind" "$g")
				if [ "$lg" -lt "$lf" ] || { [ "$lf" -eq 1 ] && [ "$lg" -eq 1 ]; }; then
					wrong+=("$f calls $g ($s)")
				fi
				case $kind:$f:$g in
				loader:loader/huge:* | loader:loader/place-*:*)
					case $g in
					loader/huge | loader/place-* | loader/rt | loader/proc | common/*) ;;
					*) placed+=("$f calls $g ($s)") ;;
					esac
					;;
				esac
			fi
		done < <(nm -u "$o")
	done
	ok "${#shared[@]}" "$name: no mutable variable crosses a file boundary" "${shared[@]}"
	local -a loop
	mapfile -t loop < <(printf '%s\n' "${edges[@]}" | tsort 2>&1 >/dev/null)
	ok "${#loop[@]}" "$name: no cycle between files" "${loop[@]}"
	ok "${#wrong[@]}" "$name: dependencies point down (main -> files -> common/)" "${wrong[@]}"
	if [ "$kind" = loader ]; then
		ok "${#placed[@]}" "$name: the placement layer calls only itself, common/, rt and proc's clock" "${placed[@]}"
	fi
}

# The includes: the arch layer (arch/) and the shared layer sit below the
# loader and the tools, so neither the shared layer nor a tool takes a
# header from the loader's directory, by include path or by a relative
# #include.
src=$(cd "$(dirname "$0")/../.." && pwd)
up=()
for d in common stamp stat warm; do
	while IFS= read -r l; do up+=("$l"); done < <(grep -Hn -E "include_directories\([^)]*interp|['\"]\.\./interp" "$src/$d/meson.build" |
		sed "s|^$src/||")
	while IFS= read -r l; do up+=("$l"); done < <(grep -Hn -E '^#include ["<](\.\./)*interp/' "$src/$d"/*.[ch] | sed "s|^$src/||")
done
ok "${#up[@]}" "the shared layer and the tools include nothing from interp/" "${up[@]}"

kind=loader
for arg in "$@"; do
	IFS=, read -r -a dirs <<<"${arg#*=}"
	check "$kind" "${arg%%=*}" "${dirs[@]}"
	kind=tool
done
tap_done
