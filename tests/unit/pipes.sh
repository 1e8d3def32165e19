#!/bin/bash
# The project's shell scripts run under `set -o pipefail`, where a reader that
# stops before its input ends (head, grep -q, grep -m, awk '... exit', sed q)
# kills its writer with SIGPIPE whenever the writer writes after it went: the
# pipeline then fails with 141, on some machines and not on others, and
# `set -e` ends the script.  So a reader in such a script drains its input.
# (TAP)
#   1. lint: no early-exiting reader after a pipe, in every script that sets
#      pipefail and in the files they source;
#   2. scripts/lib.sh's apt_unpack under pipefail, against an apt-cache that
#      writes its many lines slowly, finds the version and unpacks;
#   3. a failing command in a script that sources lib.sh is named, with its
#      status, on stderr.
# Usage: pipes.sh [SOURCE-DIR]  (default: the tree this file is in)
set -uo pipefail
. "$(cd "$(dirname "$0")" && pwd)/tap.sh"
root=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$root" || exit 2

# The scripts under pipefail: every bash file of the tree that sets it, and
# what they source (". scripts/lib.sh").
scripts=()
while IFS= read -r f; do
	head -c 200 "$f" | grep '^#!.*\(bash\|sh\)' >/dev/null || continue
	grep -E 'set -[a-zA-Z]*o pipefail|set -o pipefail' "$f" >/dev/null || continue
	scripts+=("$f")
	while IFS= read -r s; do scripts+=("$s"); done < <(sed -n 's/^[[:space:]]*\. \(scripts\/[A-Za-z0-9_.-]*\)[[:space:]]*$/\1/p' "$f")
done < <(find scripts packaging tests .ci -type f ! -name '*.bats' ! -name '*.c' ! -name '*.h' | sort)
mapfile -t scripts < <(printf '%s\n' "${scripts[@]}" | sort -u)

# early FILE: "FILE:LINE: TEXT" for each pipeline whose reader may stop
# before its input ends.  An awk program is read to its closing quote; an
# exit after its END is fine (END runs after all input).
early() {
	awk -v file="$1" '
	function flag(t) { print file ":" start ": " t }
	function check(t,   r, prog, e) {
		if (t ~ /\|&?[[:space:]]*head([[:space:]]|$)/) return flag(t)
		if (t ~ /\|&?[[:space:]]*grep[[:space:]]+(-[A-Za-z]*[qmlL]|--quiet|--max-count|--files-with)/) return flag(t)
		if (t ~ /\|&?[[:space:]]*sed[[:space:]][^|]*([;'"'"'[:space:]0-9$\/}]|^)[qQ]([;'"'"'[:space:]}0-9]|$)/) return flag(t)
		r = t
		while (match(r, /\|&?[[:space:]]*awk[[:space:]]/)) {
			r = substr(r, RSTART + RLENGTH)
			# its program: the first single-quoted word after it
			if (!match(r, /\047[^\047]*\047/)) continue
			prog = substr(r, RSTART, RLENGTH)
			e = index(prog, "exit")
			if (e && !index(substr(prog, 1, e), "END")) return flag(t)
		}
	}
	{
		line = $0
		sub(/^[[:space:]]*#.*/, "", line)
		if (acc != "") {
			acc = acc " " line
			q = gsub(/\047/, "\047", line)
			if (q % 2 == 1) { check(acc); acc = "" }
			next
		}
		start = FNR
		if (match(line, /\|&?[[:space:]]*awk[[:space:]]/)) {
			rest = substr(line, RSTART)
			q = gsub(/\047/, "\047", rest)
			if (q % 2 == 1) { acc = line; next }
		}
		check(line)
	}' "$1"
}

found=()
for f in "${scripts[@]}"; do
	while IFS= read -r l; do found+=("$l"); done < <(early "$f")
done
ok "${#found[@]}" "no reader stops early in the ${#scripts[@]} scripts under pipefail" "${found[@]}" \
	"(let the reader drain its input: sed -n 1p for head -1, grep >/dev/null for grep -q, a flag for awk's exit)"

# apt_unpack against a slow, long apt-cache: the matching line first, then
# 300 more, a pause between them; its apt-get makes a small .deb.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
out=$(cd "$root" && bash -c '
	set -euo pipefail
	. scripts/lib.sh
	APT_OPTS=()
	apt-cache() {
		echo " tx-probe | 1.0-1 | http://deb.debian.org/debian bookworm/main amd64 Packages"
		for i in $(seq 300); do sleep 0.001; echo " tx-probe | 0.$i | http://deb.debian.org/debian bullseye/main amd64 Packages"; done
	}
	apt-get() {
		mkdir -p pkg/DEBIAN pkg/usr/share/tx-probe
		printf "Package: tx-probe\nVersion: 1.0-1\nArchitecture: all\nMaintainer: t <t@t>\nDescription: t\n" >pkg/DEBIAN/control
		echo "$2" >pkg/usr/share/tx-probe/version
		dpkg-deb -b pkg tx-probe.deb >/dev/null
		rm -rf pkg
	}
	apt_unpack "$1" bookworm tx-probe
	cat "$1/usr/share/tx-probe/version"' sh "$tmp/root" 2>&1)
st=$?
[[ $st -eq 0 && $out == "tx-probe=1.0-1" ]]
ok $? "apt_unpack finds the version beside a slow apt-cache under pipefail" \
	"status $st, output: $out"

# A failing command in a script that sources lib.sh names itself.
printf '#!/bin/bash\nset -euo pipefail\n. scripts/lib.sh\nf() { false; }\ntrue\nf\necho unreached\n' >"$tmp/fails"
out=$(bash "$tmp/fails" 2>&1)
st=$?
[[ $st -eq 1 && $out == *"'false'"*"status 1"* && $out != *unreached* ]]
ok $? \
	"a script that fails says which command failed, and its status" "status $st, output: $out"

tap_done
