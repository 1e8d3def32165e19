# tiexec-stat: the executable mappings of a process, how much of each is on
# 2 MiB pages and how much could be; checked against /proc/PID/smaps read
# independently (awk), on bigtext-pie (64 MiB of text) run through tiexec
# --strategy=thp and run directly, in both output formats, and its errors.
bats_require_minimum_version 1.5.0
load test_helper

setup_file() {
	# A directory an unprivileged user can reach, with a copy of tiexec-stat.
	workdir_make tiexec-stat
	cp "$BUILD/stat/tiexec-stat" "$W/tiexec-stat"
}

teardown_file() {
	workdir_remove
}

setup() {
	workdir_find
	STAT=$W/tiexec-stat
	CPID=
}

# Nothing started may outlive a test.
teardown() {
	if [ -n "${CPID:-}" ]; then
		kill "$CPID" 2>/dev/null || true
		wait "$CPID" 2>/dev/null || true
	fi
}

# start CMD...: runs `CMD wait` as a coprocess (pid in $CPID), until "ready".
start() {
	coproc P { exec "$@" wait 3>&-; }
	CPID=$P_PID
	local ready=
	read -r -t 60 ready <&"${P[0]}" || true
	[ "$ready" = ready ] || { echo "no 'ready' from $*"; return 1; }
}

# stop: EOF on the coprocess's stdin, then wait for it.
stop() {
	exec {P[1]}>&-
	wait "$CPID"
	CPID=
}

# smaps_huge_kb PID: AnonHugePages + FilePmdMapped + ShmemPmdMapped + *_Hugetlb over the
# executable mappings, straight from /proc/PID/smaps.
smaps_huge_kb() {
	awk '/^[0-9a-f]+-[0-9a-f]+ / { x = substr($2, 3, 1) == "x"; next }
	     x && /^(AnonHugePages|FilePmdMapped|ShmemPmdMapped|Private_Hugetlb|Shared_Hugetlb):/ { kb += $2 }
	     END { print kb + 0 }' "/proc/$1/smaps"
}

# exec_maps PID: "0xSTART 0xEND PERMS NAME" for each executable mapping in
# /proc/PID/maps, the way tiexec-stat writes them.
exec_maps() {
	awk 'substr($2, 3, 1) == "x" {
		split($1, a, "-")
		for (i = 1; i <= 2; i++) { sub(/^0+/, "", a[i]); if (a[i] == "") a[i] = "0" }
		print "0x" a[1], "0x" a[2], $2, (NF >= 6 ? $6 : "(anonymous)")
	}' "/proc/$1/maps"
}

# The rows of a human report: "START END PERMS NAME".
rows() {
	awk '$1 ~ /^0x/ { print $1, $2, $3, $NF }' <<<"$1"
}

# total_col OUTPUT N: column N of the total line (2 size, 3 huge, 4 aligned).
total_col() {
	awk -v n="$2" '$1 == "total" { print $n }' <<<"$1"
}

mib() {
	awk -v kb="$1" 'BEGIN { printf "%.1f\n", kb / 1024 }'
}

# check_against_smaps PID: runs tiexec-stat on PID and checks its huge total
# against smaps (retrying if khugepaged changed smaps meanwhile); leaves the
# report in $output.
check_against_smaps() {
	local before after try
	for try in 1 2 3 4 5; do
		before=$(smaps_huge_kb "$1")
		run_t "$STAT" "$1"
		after=$(smaps_huge_kb "$1")
		[ "$before" = "$after" ] && break
	done
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$before" = "$after" ]
	HUGE_KB=$after
	same "$(mib "$HUGE_KB")" "$(total_col "$output" 3)"
}

@test "through tiexec --strategy=thp: the huge total is smaps', >= 62 MiB, the text listed" {
	start "$TIEXEC" --strategy=thp "$FIXTURES/bigtext-pie"
	check_against_smaps "$CPID"
	[ "$HUGE_KB" -ge $((62 * 1024)) ]
	# the header line, then every executable mapping of /proc/PID/maps, in order
	[[ "${lines[0]}" == "PID $CPID (bigtext-pie) "* ]]
	[[ "${lines[1]}" =~ ^\ +START\ +END\ +PERM\ +SIZE\ MiB\ +HUGE\ MiB\ +ALIGNED\ MiB\ +MAPPING$ ]]
	same "$(exec_maps "$CPID")" "$(rows "$output")"
	# the text's copy: anonymous, >= 62 MiB of it on 2 MiB pages
	awk '$1 ~ /^0x/ && ($NF == "(anonymous)" || $NF ~ /^\[anon:tiexec:/) && $5 >= 62 { f = 1 }
	     END { exit !f }' <<<"$output"
	stop
}

@test "run directly: the program's text could be huge, and is less so" {
	start "$FIXTURES/bigtext-pie"
	check_against_smaps "$CPID"
	same "$(exec_maps "$CPID")" "$(rows "$output")"
	# the program's largest executable mapping: HUGE < ALIGNED, ALIGNED >= 60 MiB
	local row
	row=$(awk -v p="$FIXTURES/bigtext-pie" '$1 ~ /^0x/ && $NF == p && $4 > max { max = $4; r = $0 }
		END { print r }' <<<"$output")
	echo "row: $row"
	read -r _ _ _ size huge aligned _ <<<"$row"
	awk -v h="$huge" -v a="$aligned" -v s="$size" 'BEGIN { exit !(h < a && a >= 60 && a <= s) }'
	stop
}

@test "the columns line up" {
	start "$FIXTURES/bigtext-pie"
	run_t "$STAT" "$CPID"
	stop
	[ "$status" -eq 0 ]
	# Every row and the total end each number column where the header does.
	local hdr=${lines[1]} ends=() line k
	for k in "SIZE MiB" "HUGE MiB" "ALIGNED MiB"; do
		local pre=${hdr%%"$k"*}
		ends+=($((${#pre} + ${#k})))
	done
	for line in "${lines[@]:2}"; do
		for k in 0 1 2; do
			local e=${ends[$k]}
			[[ "${line:e-2:2}" =~ ^\.[0-9]$ && "${line:e:1}" == " " ]] ||
				[[ "${line:e-2:2}" =~ ^\.[0-9]$ && k -eq 2 && "${line:0:7}" == "  total" ]] ||
				{ echo "column $k does not end at $e: '$line'"; return 1; }
		done
	done
	[ "${#lines[@]}" -ge 4 ]
}

@test "--json: parses, one object per process, the same totals as the human output" {
	start "$TIEXEC" --strategy=thp "$FIXTURES/bigtext-pie"
	run_t "$STAT" "$CPID"
	[ "$status" -eq 0 ]
	local human=$output
	run_t "$STAT" --json "$CPID" "$$"
	[ "$status" -eq 0 ]
	local json=$output pid=$CPID
	stop
	[ "${#lines[@]}" -eq 2 ]
	local want got
	want="$(total_col "$human" 2) $(total_col "$human" 3) $(total_col "$human" 4) $(rows "$human" | wc -l)"
	if command -v python3 >/dev/null && python3 -c 'import json' 2>/dev/null; then
		got=$(python3 -c '
import json, sys
objs = [json.loads(l) for l in sys.stdin.read().splitlines()]
assert len(objs) == 2, objs
for o in objs:
    assert set(o) >= {"pid", "comm", "exe", "mappings", "total"}, o.keys()
    for m in o["mappings"]:
        assert "x" in m["perms"], m
        assert m["huge_kb"] == m["file_pmd_kb"] + m["shmem_pmd_kb"] + m["anon_huge_kb"] + m["hugetlb_kb"], m
        assert int(m["start"], 16) < int(m["end"], 16), m
    for k in ("size_kb", "huge_kb", "aligned_kb"):
        assert o["total"][k] == sum(m[k] for m in o["mappings"]), k
o = objs[0]
assert o["pid"] == int(sys.argv[1]) and o["comm"] == "bigtext-pie", o
t = o["total"]
print("%.1f %.1f %.1f %d" % (t["size_kb"] / 1024, t["huge_kb"] / 1024, t["aligned_kb"] / 1024,
                             len(o["mappings"])))
' "$pid" <<<"$json")
	else
		# no python3: the shape, and the totals by grep
		local first=${lines[0]}
		[[ "$first" == "{\"pid\":$pid,\"comm\":\"bigtext-pie\","*"\"mappings\":[{"*"}],\"total\":{"*"}}" ]]
		[[ "${lines[1]}" == "{\"pid\":$$,"* ]]
		local tot=${first##*\"total\":}
		got="$(mib "$(grep -o '"size_kb":[0-9]*' <<<"$tot" | cut -d: -f2)")"
		got+=" $(mib "$(grep -o '"huge_kb":[0-9]*' <<<"$tot" | cut -d: -f2)")"
		got+=" $(mib "$(grep -o '"aligned_kb":[0-9]*' <<<"$tot" | cut -d: -f2)")"
		got+=" $(grep -o '"start":' <<<"$first" | wc -l)"
	fi
	same "$want" "$got"
}

@test "a process that does not exist: status 1, one line" {
	sh -c 'exit 0' &
	local dead=$!
	wait "$dead"
	[ ! -e "/proc/$dead" ]
	run_t "$STAT" "$dead"
	[ "$status" -eq 1 ]
	same "tiexec-stat: $dead: no such process" "$output"
	# with others: each reported, status 1
	run_t "$STAT" --json "$$" "$dead" "$$"
	[ "$status" -eq 1 ]
	[ "${#lines[@]}" -eq 3 ]
	[[ "${lines[0]}" == "{\"pid\":$$,"* ]]
	same "tiexec-stat: $dead: no such process" "${lines[1]}"
	[[ "${lines[2]}" == "{\"pid\":$$,"* ]]
}

@test "another user's process: status 1, permission denied" {
	[ "$(id -u)" = 0 ] || skip "needs root to run tiexec-stat as another user"
	start "$FIXTURES/bigtext-pie"
	local pid=$CPID
	run_t setpriv --reuid=65534 --regid=65534 --clear-groups "$STAT" "$pid"
	stop
	[ "$status" -eq 1 ]
	same "tiexec-stat: $pid: permission denied" "$output"
}

@test "usage errors: status 2 and a message; --help" {
	local try=$'\nTry \'tiexec-stat --help\'.'
	run_t "$STAT"
	[ "$status" -eq 2 ]
	same "tiexec-stat: no PID given$try" "$output"
	run_t "$STAT" --json
	[ "$status" -eq 2 ]
	same "tiexec-stat: no PID given$try" "$output"
	for bad in abc 12x '' 0 ' 1' +1 99999999999; do
		run_t "$STAT" "$$" "$bad"
		[ "$status" -eq 2 ]
		same "tiexec-stat: '$bad': not a process ID$try" "$output"
	done
	for bad in --bogus -x --json=1; do
		run_t "$STAT" "$bad" "$$"
		[ "$status" -eq 2 ]
		same "tiexec-stat: bad option: '$bad'$try" "$output"
	done
	run_t "$STAT" --help
	[ "$status" -eq 0 ]
	[[ "${lines[0]}" == "Usage: tiexec-stat [--json] PID..." ]]
	run_t "$STAT" --version
	[ "$status" -eq 0 ]
	[[ "$output" == "tiexec-stat "[0-9]* ]]
}

@test "text from tmpfs on 2 MiB pages (ShmemPmdMapped) counts as huge" {
	[ "$(id -u)" = 0 ] || skip_unsupported "needs root: mounts a tmpfs"
	local T=$BATS_TEST_TMPDIR/shm
	mkdir "$T"
	mount -t tmpfs -o huge=always,size=128m tiexec-test "$T"
	cp "$FIXTURES/bigtext-lib.so" "$T/lib.so"
	coproc P { exec "$FIXTURES/mapfile" "$T/lib.so" hold; }
	CPID=$P_PID
	local line ready
	read -r -t 60 line <&"${P[0]}"
	read -r -t 60 ready <&"${P[0]}"
	echo "mapfile: $line / $ready"
	local shmem
	shmem=$(awk -v f="$T/lib.so" '/^[0-9a-f]+-[0-9a-f]+ / { x = ($NF == f && substr($2, 3, 1) == "x"); next }
		x && /^ShmemPmdMapped:/ { kb += $2 } END { print kb + 0 }' "/proc/$CPID/smaps")
	run "$STAT" --json "$CPID"
	local stat_status=$status json=$output
	run "$STAT" "$CPID"
	stop
	umount "$T"
	[ "$stat_status" -eq 0 ]
	echo "ShmemPmdMapped: $shmem kB"
	[ "$shmem" -ge $((60 * 1024)) ]
	# The mapping's row: HUGE is the smaps figure, in MiB.
	local row
	row=$(grep -F "$T/lib.so" <<<"$output")
	echo "$row"
	[ "$(awk '{ print $5 }' <<<"$row")" = "$(awk -v k="$shmem" 'BEGIN { printf "%.1f", k / 1024 }')" ]
	[[ "$json" == *"\"shmem_pmd_kb\":$shmem,"* ]]
}

# loader_result PROG: "WAY HUGE" of what `tiexec -v` placed for PROG's own
# text: the mechanism with the most bytes (or none) and the MiB on 2 MiB pages.
loader_result() {
	TIEXEC_CACHE= "$TIEXEC" -v "$1" report 2>&1 >/dev/null |
		sed -n -E "s/^tiexec: '[^']*': ([0-9.]+) of [0-9.]+ MiB text on 2 MiB pages \(file ([0-9.]+)(, cache ([0-9.]+))?, thp ([0-9.]+).*/\1 \2 \5/p" |
		awk '{ w = "none"; if ($2 > 0) w = "file"; else if ($3 > 0) w = "thp"; print w, $1 }'
}

@test "--advise: what each strategy gives; auto's choice and amount are the loader's" {
	local out huge way
	run --separate-stderr env TIEXEC_CACHE= "$STAT" --advise "$FIXTURES/bigtext-pie"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "${lines[0]}" == "$FIXTURES/bigtext-pie: 64.0 MiB of text, 62.0 MiB in whole 2 MiB pieces (66.0 MiB of pieces with --round-out); not stamped" ]]
	[[ "${lines[1]}" =~ ^\ \ STRATEGY\ +HUGE\ MiB\ +MEMORY\ +NOTE$ ]]
	grep -qE '^  cache +0\.0  - +no text cache \(TIEXEC_CACHE is empty\)$' <<<"$output"
	read -r way huge < <(loader_result "$FIXTURES/bigtext-pie")
	echo "the loader: $way $huge"
	[ "$way" != none ]
	grep -qE "^  auto: $way;" <<<"$output"
	grep -qE "^  $way +$huge +" <<<"$output"
	if [ "$way" = thp ]; then
		grep -qE "^  thp +62\.0  62\.0 MiB anonymous per process" <<<"$output"
	else
		grep -qE "^  file +62\.0  none \(the page cache, shared\)" <<<"$output"
	fi
	# The geometry it was worked out for, as the kernel says it.
	local page pmd
	page=$(getconf PAGESIZE) pmd=$(cat /sys/kernel/mm/transparent_hugepage/hpage_pmd_size)
	grep -qE "^  kernel: $((page / 1024)) KiB pages, $((pmd >> 20)) MiB PMD; transparent huge pages of .*$((pmd >> 20)) MiB\$" <<<"$output"
	# A program with less than one whole piece: nothing, whatever the way.
	run env TIEXEC_CACHE= "$STAT" --advise "$FIXTURES/probe-pie"
	[ "$status" -eq 0 ]
	grep -qE '^  auto: 4 KiB pages' <<<"$output"
	run --separate-stderr "$STAT" --advise "$W/missing"
	[ "$status" -eq 1 ]
	same "tiexec-stat: '$W/missing': No such file or directory" "$stderr"
	# A FIFO: refused at once, not waited on.
	mkfifo "$W/fifo"
	run --separate-stderr timeout 10 "$STAT" --advise "$W/fifo"
	rm -f "$W/fifo"
	[ "$status" -eq 1 ]
	same "tiexec-stat: '$W/fifo': not a regular file" "$stderr"
}

# in_rule_ns 'CODE': CODE as root of a fresh user + mount namespace with
# binfmt_misc mounted and tiexec's rule registered (interpreter $TIEXEC).
in_rule_ns() {
	run --separate-stderr env STAT="$STAT" W="$W" timeout 120 unshare --user --map-root-user --mount bash -c '
		mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc || exit 90
		"$1/packaging/tiexec-binfmt" register --interpreter "$2" >/dev/null || exit 91
		'"$1" _ "$BUILD" "$TIEXEC"
	[ "$status" -ne 90 ] || skip_unsupported "no private binfmt_misc instance (needs Linux >= 6.7)"
}

# #40 nit 7: an lld-linked PIE's text is not congruent to its file offset
# at its p_vaddr, but the loader places the PIE congruent to its file; the
# prediction comes from the loader's arithmetic (layout_file_huge).
@test "--advise: an lld-linked PIE gets the page cache's 2 MiB folios, as the loader places it" {
	command -v ld.lld >/dev/null || skip_unsupported "lld is not installed"
	GENTEXT_LD=lld "$ROOT/tests/fixtures/gentext.sh" "$W/lldpie" 8 pie
	readelf -lW "$W/lldpie" | awk '$1 == "LOAD" && $8 == "E" { exit !($2 != $3) }' # incongruent p_vaddr
	local way huge
	read -r way huge < <(loader_result "$W/lldpie")
	echo "the loader: $way $huge"
	run env TIEXEC_CACHE= "$STAT" --advise "$W/lldpie"
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$way" = file ] || [ "$way" = thp ] # file where the page cache gives 2 MiB folios
	grep -qE "^  auto: $way;" <<<"$output"
	grep -qE "^  $way +$huge +" <<<"$output"
	[ "$way" != file ] || grep -qE "^  file +6\.0  none \(the page cache, shared\)" <<<"$output"
}

@test "--check PROG: not stamped, no rule, no gain, --strategy=off fail; a stamped program with the rule passes" {
	cp "$FIXTURES/bigtext-pie" "$W/big"
	cp "$FIXTURES/probe-pie" "$W/small"
	run env TIEXEC_CACHE= "$STAT" --check "$W/big"
	[ "$status" -eq 1 ]
	same "$W/big: not stamped: it runs on 4 KiB pages (a package upgrade replaced it? tiexec-keep sync)" "$output"
	"$BUILD/stamp/tiexec-stamp" "$W/big"
	"$BUILD/stamp/tiexec-stamp" "$W/small" 2>/dev/null
	# A fresh mount namespace: binfmt_misc is not mounted there.
	run unshare --user --map-root-user --mount sh -c 'umount /proc/sys/fs/binfmt_misc 2>/dev/null; TIEXEC_CACHE= "$1" --check "$2"' _ "$STAT" "$W/big"
	[ "$status" -eq 1 ]
	same "$W/big: stamped, but binfmt_misc is not mounted, so no rule is registered (tiexec-binfmt register): it runs on 4 KiB pages" "$output"
	local way huge
	read -r way huge < <(loader_result "$W/big")
	in_rule_ns 'export TIEXEC_CACHE=
		"$STAT" --check "$W/big"; echo "status $?"
		"$STAT" --check "$W/small"; echo "status $?"
		"$BUILD/stamp/tiexec-stamp" --strategy=off "$W/big"
		"$STAT" --check "$W/big"; echo "status $?"'
	echo "$output"
	same "$W/big: ok: $huge of 64.0 MiB of its text would be on 2 MiB pages ($way)
status 0
$W/small: would run on 4 KiB pages: SIZE of text is below its min-text (2.0 MiB)
status 1
$W/big: would run on 4 KiB pages: its stamp says --strategy=off
status 1" "$(no_size "$output")"
}

# A dynamic program below its min-text is still loaded, for its libraries
# (#55: clang's 130 KiB program, its 150 MiB of libraries): --check by path
# and by PID say what its libraries get.  perfhot-lib keeps its 12 MiB of
# text in libperfhot.so.
@test "--check PROG and PID: a small program's libraries count, as the loader places them" {
	cp "$FIXTURES/perfhot-lib" "$FIXTURES/libperfhot.so" "$W/"
	"$BUILD/stamp/tiexec-stamp" "$W/perfhot-lib" 2>/dev/null
	in_rule_ns 'export TIEXEC_CACHE=
		"$STAT" --check "$W/perfhot-lib"; echo "status $?"'
	echo "$output"
	[[ "${lines[0]}" == "$W/perfhot-lib: ok: "[1-9]*".0 MiB of its libraries' text in whole 2 MiB pieces, placed after ld.so maps them; its own text stays on 4 KiB pages ("*"below its min-text"* ]]
	[ "${lines[1]}" = "status 0" ]
	start env TIEXEC_CACHE= "$TIEXEC" "$W/perfhot-lib" 60
	run env TIEXEC_CACHE= "$STAT" --check "$CPID"
	echo "$output"
	[[ "$output" == "$CPID $W/perfhot-lib: ok: 0.0 MiB of its text on 2 MiB pages, and "[1-9]*" MiB of its libraries'" ]]
	# It spins its 60 s unless stopped (stop's EOF it does not read).
	kill "$CPID"
	wait "$CPID" || true
	CPID=
}

@test "--check PID: through tiexec passes, a stamped program run plainly and an unstamped one fail" {
	cp "$FIXTURES/bigtext-pie" "$W/big"
	"$BUILD/stamp/tiexec-stamp" "$W/big"
	start env TIEXEC_CACHE= "$TIEXEC" "$W/big"
	run env TIEXEC_CACHE= "$STAT" --check "$CPID"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" =~ ^"$CPID $W/big: ok: "[1-9][0-9.]*" MiB of its text on 2 MiB pages"$ ]]
	stop
	# Run plainly (no rule in this namespace): its text is on 4 KiB pages,
	# once the 2 MiB folios tiexec's file way left in the page cache are
	# dropped (a plain exec maps those too: ../shared/FACTS.md).
	dd if=/dev/null of="$W/big" oflag=nocache conv=notrunc,fdatasync count=0 2>/dev/null
	start "$W/big"
	run env TIEXEC_CACHE= "$STAT" --check "$CPID"
	echo "$output"
	[ "$status" -eq 1 ]
	[[ "$output" =~ ^"$CPID $W/big: "0\.0" of "[1-9][0-9.]*" MiB of its aligned text on 2 MiB pages"$ ]]
	stop
	start "$FIXTURES/bigtext-pie"
	run env TIEXEC_CACHE= "$STAT" --check "$CPID"
	[ "$status" -eq 1 ]
	[[ "$output" == "$CPID $FIXTURES/bigtext-pie: not stamped: "* ]]
	stop
	# An ordinary user's: /proc/PID/exe names the loader (TIEXEC_LOADER: a
	# copy uid 65534 can run); its aux vector's entry point tells.
	cp "$TIEXEC" "$W/tiexec"
	start setpriv --reuid=65534 --regid=65534 --clear-groups env TIEXEC_CACHE= "$W/tiexec" "$W/big"
	[[ "$(readlink "/proc/$CPID/exe")" == "$W/tiexec" ]]
	run env TIEXEC_CACHE= TIEXEC_LOADER="$W/tiexec" "$STAT" --check "$CPID"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == "$CPID $W/big: ok: "* ]]
	# The report's header names the program, and the loader it runs
	# through (#55).
	run env TIEXEC_CACHE= TIEXEC_LOADER="$W/tiexec" "$STAT" "$CPID"
	[[ "${lines[0]}" == "PID $CPID ("*") $W/big (through $W/tiexec)" ]]
	stop
	# Its headers and entry point in the text, copied (arm64's layout:
	# one R+X segment from offset 0): neither AT_ENTRY nor AT_PHDR lies in
	# a file mapping; the program is the file mapped beside its copy (#55).
	CC="gcc -Wl,-z,noseparate-code" "$ROOT/tests/fixtures/gentext.sh" "$W/onex" 8 pie 2>/dev/null
	chmod a+rx "$W/onex"
	start setpriv --reuid=65534 --regid=65534 --clear-groups env TIEXEC_CACHE= "$W/tiexec" --strategy=thp "$W/onex"
	grep -q '^[0-9a-f]*-[0-9a-f]* r-xp 00000000 00:00 0 ' "/proc/$CPID/maps" # the copied head, entry and headers
	run env TIEXEC_CACHE= TIEXEC_LOADER="$W/tiexec" "$STAT" --check "$CPID"
	echo "$output"
	[[ "$output" == "$CPID $W/onex: "* ]]
	stop
}

@test "--check PID: an ordinary user's forked child that wrote a process title over its environment" {
	# postgres's backends: forked, not executed, each writing its title over
	# argv and environ (TIEXEC_EXE included); /proc/PID/exe names tiexec.
	cp "$FIXTURES/bigtext-pie" "$W/big"
	"$BUILD/stamp/tiexec-stamp" "$W/big"
	cp "$TIEXEC" "$W/tiexec"
	coproc P { exec setpriv --reuid=65534 --regid=65534 --clear-groups env TIEXEC_CACHE= "$W/tiexec" "$W/big" child-title 3>&-; }
	CPID=$P_PID
	local line ready child
	read -r -t 60 line <&"${P[0]}" || true
	[[ "$line" =~ ^child\ ([0-9]+)$ ]]
	child=${BASH_REMATCH[1]}
	read -r -t 60 ready <&"${P[0]}" || true
	[ "$ready" = ready ]
	[ "$(readlink "/proc/$child/exe")" = "$W/tiexec" ]
	! tr '\0' '\n' <"/proc/$child/environ" | grep -q '^TIEXEC_EXE=' || false
	[[ "$(tr '\0' ' ' <"/proc/$child/cmdline")" == "bigtext: child title"* ]]
	for pid in "$child" "$CPID"; do
		run env TIEXEC_CACHE= TIEXEC_LOADER="$W/tiexec" "$STAT" --check "$pid"
		echo "$output"
		[ "$status" -eq 0 ]
		[[ "$output" == "$pid $W/big: ok: "[1-9]*" MiB of its text on 2 MiB pages" ]]
	done
	exec {P[1]}>&-
	wait "$CPID"
	CPID=
}
