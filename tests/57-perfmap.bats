#!/usr/bin/env bats
# Profilers and debuggers on copied text.  tiexec --strategy=thp copies text
# into anonymous memory; perf, attached to a running process (-p, -a), sees
# that memory as anonymous and prints raw addresses unless
# /tmp/perf-PID.map names them: tiexec-stat --perf-map writes that file from
# the symbol tables of the files the copies came from.  The fixture perfhot
# spins in perfhot_spin, a function inside 12 MiB of text, in the program
# itself (perfhot) or in a library (perfhot-lib, libperfhot.so).
bats_require_minimum_version 1.5.0
load test_helper

setup() {
	STAT=$BUILD/stat/tiexec-stat
	CPID=
	MAPS=()
	command -v perf >/dev/null || skip_unsupported "perf is not installed (Debian: linux-perf)"
}

# Nothing started may outlive a test, nor any map file it wrote.
teardown() {
	if [ -n "${CPID:-}" ]; then
		kill "$CPID" 2>/dev/null || true
		wait "$CPID" 2>/dev/null || true
	fi
	local m
	for m in "${MAPS[@]}"; do rm -f "$m"; done
	# shellcheck disable=SC2086 # one or more mktemp directories
	[ -z "${OTHER:-}" ] || rm -rf $OTHER
}

# start CMD...: runs CMD as a coprocess (pid in $CPID, map file to remove
# in $MAP), until it prints "ready".
start() {
	coproc P { exec "$@" 3>&-; }
	CPID=$P_PID
	MAP=/tmp/perf-$CPID.map
	MAPS+=("$MAP")
	rm -f "$MAP"
	local ready=
	read -r -t 60 ready <&"${P[0]}" || true
	[ "$ready" = ready ] || { echo "no 'ready' from $*"; return 1; }
}

# bias PID FILE: FILE's load address (its mapping of file offset 0).
bias() {
	awk -v f="$2" '$6 == f && $3 == "00000000" { split($1, a, "-"); print a[1]; exit }' "/proc/$1/maps"
}

# hot_top DATA: perf report's first line: "PERCENT SYMBOL".
hot_top() {
	timeout 60 perf report -i "$1" --stdio --sort sym 2>/dev/null |
		awk '!/^#/ && NF { sub(/%$/, "", $1); print $1, $NF; exit }'
}

# profile_copy PROG FILE: PROG (through tiexec --strategy=thp) spins in
# perfhot_spin, which lies in FILE's copied text; perf record -p names a raw
# address; tiexec-stat --perf-map writes the map; now perf report names
# perfhot_spin.
profile_copy() {
	local prog=$1 file=$2 data=$BATS_TEST_TMPDIR/perf.data
	start "$TIEXEC" --strategy=thp "$FIXTURES/$prog" 20
	# the hot function really is in a copy (else the test would prove nothing)
	local base spin
	base=$(bias "$CPID" "$file")
	spin=$(nm "$file" | awk '$3 == "perfhot_spin" { print $1 }')
	[ -n "$base" ]
	[ -n "$spin" ]
	local hot
	hot=$(printf '%x' $((0x$base + 0x$spin)))
	local snap ok=
	for _ in $(seq 20); do
		snap=$(cat "/proc/$CPID/maps")
		# (compared as strings: "563630e00000" would read as a number in
		# scientific notation)
		if awk -v h="$hot" '{ split($1, a, "-") }
			$2 == "r-xp" && NF == 5 && length(a[1]) == length(h) && "x" a[1] <= "x" h && "x" h < "x" a[2] { f = 1 }
			END { exit !f }' <<<"$snap"; then
			ok=1
			break
		fi
		sleep 0.1
	done
	[ -n "$ok" ] || { echo "hot $hot (base $base + $spin) not in a copy:"; echo "$snap"; return 1; }

	run_t perf record -q -e cpu-clock -o "$data" -p "$CPID" -- sleep 0.5
	[ "$status" -eq 0 ]
	# without a map: a raw address, the hot function not named
	local top
	top=$(hot_top "$data")
	echo "without the map: $top"
	[[ "$top" =~ ^[0-9.]+\ 0x[0-9a-f]+$ ]]

	run_t "$STAT" --perf-map "$CPID"
	echo "$output"
	[ "$status" -eq 0 ]
	same "PID $CPID: $MAP" "${lines[0]}"
	[[ "$output" =~ \ $file:\ [0-9]+\ functions ]]
	# the line for perfhot_spin: its address in the file plus the load bias
	grep -qx "$hot a perfhot_spin" "$MAP"
	# owned by the process's user, readable by anyone (perf report runs as
	# whoever profiles)
	same "$(stat -c %u "/proc/$CPID")" "$(stat -c %u "$MAP")"
	same 644 "$(stat -c %a "$MAP")"

	top=$(hot_top "$data")
	echo "with the map: $top"
	[[ "$top" =~ ^([0-9.]+)\ perfhot_spin$ ]]
	awk -v p="${BASH_REMATCH[1]}" 'BEGIN { exit !(p >= 50) }'
}

@test "perf -p on copied program text: a raw address, named with tiexec-stat --perf-map" {
	profile_copy perfhot "$FIXTURES/perfhot"
}

@test "perf -p on a library's copied text: a raw address, named with tiexec-stat --perf-map" {
	profile_copy perfhot-lib "$FIXTURES/libperfhot.so"
}

@test "perf record around tiexec: named without a map (mremap reports no new mapping)" {
	local data=$BATS_TEST_TMPDIR/perf.data
	run_t perf record -q -e cpu-clock -o "$data" -- "$TIEXEC" --strategy=thp -v "$FIXTURES/perfhot" 0.5
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"(file 0.0, thp "* ]]
	local top
	top=$(hot_top "$data")
	echo "$top"
	[[ "$top" =~ ^([0-9.]+)\ perfhot_spin$ ]]
}

@test "gdb on copied text: backtrace, symbol, breakpoint (program and library)" {
	command -v gdb >/dev/null || skip_unsupported "gdb is not installed"
	local prog
	for prog in perfhot perfhot-lib; do
		start "$TIEXEC" --strategy=thp "$FIXTURES/$prog" 20
		[ "$(awk '$2 == "r-xp" && NF == 5' "/proc/$CPID/maps" | wc -l)" -ge 1 ]
		run_t gdb -nx -batch -p "$CPID" -ex 'bt 2' -ex 'info symbol $pc' \
			-ex 'break perfhot_spin' -ex continue -ex 'bt 1'
		echo "$output"
		[[ "$output" == *"#0  "*"perfhot_spin ()"* ]]
		[[ "$output" == *"#1  "*" in main ("* ]]
		[[ "$output" =~ perfhot_spin\ \+\ [0-9]+\ in\ section\ .text\ of\ $FIXTURES/(lib)?perfhot ]]
		[[ "$output" == *"Breakpoint 1, "*"perfhot_spin ()"* ]]
		kill "$CPID"
		wait "$CPID" || true
		CPID=
	done
}

@test "--perf-map: no copies, nothing written; a rerun adds nothing; a JIT's lines are kept" {
	# run directly: no copies
	start "$FIXTURES/perfhot" 20
	run_t "$STAT" --perf-map "$CPID"
	[ "$status" -eq 0 ]
	same "PID $CPID: $MAP
  no copied text" "$output"
	[ ! -e "$MAP" ]
	kill "$CPID"
	wait "$CPID" || true

	start "$TIEXEC" --strategy=thp "$FIXTURES/perfhot" 20
	# a JIT's own map, of the process's user, is appended to
	printf '10000 20 jitted_thing\n' >"$MAP"
	run_t "$STAT" --perf-map "$CPID"
	[ "$status" -eq 0 ]
	local once
	once=$(cat "$MAP")
	same "10000 20 jitted_thing" "${once%%$'\n'*}"
	grep -q ' perfhot_spin$' "$MAP"
	run_t "$STAT" --perf-map "$CPID"
	[ "$status" -eq 0 ]
	same "$once" "$(cat "$MAP")"
}

@test "--perf-map: another user's process: the map is theirs, written by root or by them" {
	[ "$(id -u)" = 0 ] || skip "needs root to run a process as another user"
	local nobody=(setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all --)
	# Copies another user can reach: neither the clone nor bats' own
	# temporary directories need be searchable by others.
	local o
	o=$(mktemp -d /tmp/tiexec-perfmap.XXXXXX)
	chmod 0755 "$o"
	cp "$TIEXEC" "$FIXTURES/perfhot" "$o/"
	OTHER=$o
	start "${nobody[@]}" "$o/tiexec" --strategy=thp "$o/perfhot" 20
	local who
	for who in root nobody; do
		rm -f "$MAP"
		if [ "$who" = root ]; then
			run_t "$STAT" --perf-map "$CPID"
		else
			run_t "${nobody[@]}" "$STAT" --perf-map "$CPID"
		fi
		echo "$output"
		[ "$status" -eq 0 ]
		[[ "${lines[1]}" == *" $o/perfhot: "*" functions" ]]
		same "65534 65534 644" "$(stat -c '%u %g %a' "$MAP")"
		grep -q ' perfhot_spin$' "$MAP"
	done
}

@test "--perf-map: a stripped program's functions from its debug file (by build ID)" {
	[ "$(id -u)" = 0 ] || skip "needs root for a private mount on /usr/lib/debug"
	local d=$BATS_TEST_TMPDIR id
	cp "$FIXTURES/perfhot" "$d/stripped"
	objcopy --only-keep-debug "$d/stripped" "$d/stripped.debug"
	strip "$d/stripped"
	id=$(readelf -n "$d/stripped" | awk '/Build ID:/ { print $3 }')
	[ -n "$id" ]
	# stripped, nothing to name; a debug file for it only in the process's
	# own mount namespace (so the machine's /usr/lib/debug is left alone)
	start "$TIEXEC" --strategy=thp "$d/stripped" 20
	run_t "$STAT" --perf-map "$CPID"
	[[ "${lines[1]}" == *" $d/stripped: 0 functions" ]]
	kill "$CPID"
	wait "$CPID" || true
	start unshare --mount --propagation private sh -c '
		mount -t tmpfs tmpfs /usr/lib/debug && mkdir -p "/usr/lib/debug/.build-id/$1" &&
		cp "$2" "/usr/lib/debug/.build-id/$1/$3.debug" && shift 3 && exec "$@"' \
		sh "${id:0:2}" "$d/stripped.debug" "${id:2}" "$TIEXEC" --strategy=thp "$d/stripped" 20
	run_t "$STAT" --perf-map "$CPID"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "${lines[1]}" == *" $d/stripped: 5 functions (from its debug file)" ]]
	grep -q ' perfhot_spin$' "$MAP"
}

@test "--perf-map: a planted link or another user's file is refused" {
	start "$TIEXEC" --strategy=thp "$FIXTURES/perfhot" 20
	local victim=$BATS_TEST_TMPDIR/victim
	echo keep >"$victim"
	ln -s "$victim" "$MAP"
	run_t "$STAT" --perf-map "$CPID"
	echo "$output"
	[ "$status" -eq 1 ]
	same "tiexec-stat: $CPID: $MAP: Too many levels of symbolic links" "${lines[-1]}"
	same keep "$(cat "$victim")"
	rm -f "$MAP"
	if [ "$(id -u)" = 0 ]; then
		echo other >"$MAP"
		chown 65534 "$MAP"
		run_t "$STAT" --perf-map "$CPID"
		[ "$status" -eq 1 ]
		same "tiexec-stat: $CPID: $MAP: exists and is not a plain file of the process's user" "${lines[-1]}"
		same other "$(cat "$MAP")"
	fi
}

@test "--perf-map: usage" {
	run_t "$STAT" --perf-map --json "$$"
	[ "$status" -eq 2 ]
	same "tiexec-stat: --json, --perf-map, --advise and --check do not go together
Try 'tiexec-stat --help'." "$output"
	run_t "$STAT" --perf-map
	[ "$status" -eq 2 ]
	run_t "$STAT" --help
	[[ "$output" == *"tiexec-stat --perf-map [--children|--follow] PID..."* ]]
}

@test "--perf-map under --round-out: the copied head and tail are named" {
	# auto --round-out on a congruent program: the text on 2 MiB folios of
	# the file, the pieces around its head and tail copied (thp).
	start "$TIEXEC" -v --round-out "$FIXTURES/bigtext-pie" wait
	run_t "$STAT" --perf-map "$CPID"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "${lines[1]}" =~ ^\ \ 0x[0-9a-f]+-0x[0-9a-f]+\ $FIXTURES/bigtext-pie:\ [1-9][0-9]*\ functions$ ]]
	[ -s "$MAP" ]
}

@test "--perf-map --children and --follow: a forking program's workers get their maps" {
	# perfhot 6 2: ready, then after 0.5 s two children that spin in the
	# copied text.  --follow started before they exist writes theirs.
	start "$TIEXEC" --strategy=thp "$FIXTURES/perfhot" 6 2
	"$STAT" --perf-map --follow "$CPID" >"$BATS_TEST_TMPDIR/follow" 2>&1 &
	local fpid=$! kids=() line k
	for k in 1 2; do
		read -r -t 30 line <&"${P[0]}"
		[[ "$line" =~ ^child\ ([0-9]+)$ ]] || { echo "not a child line: $line"; return 1; }
		kids+=("${BASH_REMATCH[1]}")
		MAPS+=("/tmp/perf-${BASH_REMATCH[1]}.map")
	done
	for k in "${kids[@]}"; do
		for _ in $(seq 50); do [ -s "/tmp/perf-$k.map" ] && break; sleep 0.1; done
		grep -q ' perfhot_spin$' "/tmp/perf-$k.map"
	done
	kill -TERM "$fpid"
	wait "$fpid" || true
	cat "$BATS_TEST_TMPDIR/follow"
	grep -q "^PID $CPID: $MAP$" "$BATS_TEST_TMPDIR/follow"
	for k in "${kids[@]}"; do grep -q "^PID $k: /tmp/perf-$k.map$" "$BATS_TEST_TMPDIR/follow"; done

	# --children: the tree as it is now, once.
	rm -f "$MAP" "/tmp/perf-${kids[0]}.map" "/tmp/perf-${kids[1]}.map"
	run_t "$STAT" --perf-map --children "$CPID"
	echo "$output"
	[ "$status" -eq 0 ]
	for k in "$CPID" "${kids[@]}"; do grep -q ' perfhot_spin$' "/tmp/perf-$k.map"; done
	run_t "$STAT" --children "$CPID"
	[ "$status" -eq 2 ]
}

# A user controls the debug directory of a process of theirs in its own
# user and mount namespace (unshare -Urm).  Root's --perf-map neither blocks
# on a FIFO put there nor follows a link there out to a file the user may
# not read: it opens the debug file as the process's owner could, inside
# the process's root, and only a regular file.
@test "--perf-map: a user's FIFO or link for the debug file: no hang, nothing the user may not read (uid 65534)" {
	[ "$(id -u)" = 0 ] || skip "needs root: root's tiexec-stat against a user's process"
	local o secret id
	o=$(mktemp -d /tmp/tiexec-perfmap.XXXXXX)
	secret=$(mktemp -d /tmp/tiexec-secret.XXXXXX) # 0700, root's
	OTHER="$o $secret"
	chmod 0755 "$o"
	cp "$TIEXEC" "$FIXTURES/perfhot" "$o/"
	objcopy --only-keep-debug "$o/perfhot" "$secret/perfhot.debug"
	strip "$o/perfhot"
	id=$(readelf -n "$o/perfhot" | awk '/Build ID:/ { print $3 }')
	[ -n "$id" ]
	unshare --user --map-root-user true 2>/dev/null || skip_unsupported "no user namespaces here"
	local how
	for how in fifo link; do
		start setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all -- \
			unshare --user --map-root-user --mount sh -c '
			mount -t tmpfs tmpfs /usr/lib/debug && mkdir -p "/usr/lib/debug/.build-id/$1" || exit 1
			f=/usr/lib/debug/.build-id/$1/$2.debug
			if [ "$3" = fifo ]; then mkfifo "$f"; else ln -s "$4/perfhot.debug" "$f"; fi
			shift 4 && exec "$@"' sh "${id:0:2}" "${id:2}" "$how" "$secret" "$o/tiexec" --strategy=thp "$o/perfhot" 20
		run_t timeout 30 "$STAT" --perf-map "$CPID"
		echo "$how: $output"
		[ "$status" -eq 0 ]
		[[ "${lines[1]}" == *" $o/perfhot: 0 functions" ]]
		[ -z "$(grep perfhot_spin "$MAP")" ]
		kill "$CPID"
		wait "$CPID" || true
		CPID=
	done
}
