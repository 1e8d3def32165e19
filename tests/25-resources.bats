# Hardened and limited environments: MemoryDenyWriteExecute, a memory
# cgroup's limit, per-size THP switches, zero fill in the text, core dumps,
# and many starts of the same program at once.  Each test checks that the
# program runs as it does directly, and what tiexec says (-v) about what it
# could not do and why.
load test_helper

THP=/sys/kernel/mm/transparent_hugepage
THP2M=$THP/hugepages-2048kB/enabled
# Settings a test may change; teardown puts them back.
SAVED=("$THP2M" "$THP/shmem_enabled" "$THP/hugepages-2048kB/shmem_enabled" /proc/sys/vm/nr_hugepages)

setup_file() {
	[ "$(id -u)" = 0 ] || return 0
	D=$BATS_FILE_TMPDIR
	for h in zerofill peakrss; do
		gcc -O2 -Wall -Wextra -o "$D/$h" "$ROOT/tests/fixtures/$h.c"
	done
	# Private copies: other test files must not share (or evict) their cache.
	cp "$FIXTURES/bigtext-pie" "$D/big-pie"
	cp "$FIXTURES/bigtext-pie" "$D/big-cold"
	"$ROOT/tests/fixtures/gentext.sh" "$D/big256" 256 pie
	"$D/zerofill" "$D/zerofill-1g" 1024
	chmod +x "$D/zerofill-1g"
	sync "$D"/big*
	local i
	for i in "${!SAVED[@]}"; do
		if [ -f "${SAVED[$i]}" ]; then cat "${SAVED[$i]}" >"$D/saved.$i"; fi
	done
}

setup() {
	[ "$(id -u)" = 0 ] || skip "needs root: memory cgroups, THP settings, page caches"
	D=$BATS_FILE_TMPDIR
	CG=
	CPID=
}

teardown() {
	[ "$(id -u)" = 0 ] || return 0
	# Restore whatever a test changed, even when it failed.
	local i
	for i in "${!SAVED[@]}"; do
		[ -f "$D/saved.$i" ] || continue
		# "always [madvise] never" -> madvise; a number stays a number
		sed 's/.*\[\(.*\)\].*/\1/' "$D/saved.$i" >"${SAVED[$i]}"
	done
	if [ -n "${CPID:-}" ]; then
		kill "$CPID" 2>/dev/null || true
		wait "$CPID" 2>/dev/null || true
	fi
	cg_remove
	if mountpoint -q "$D/ramfs" 2>/dev/null; then umount "$D/ramfs"; fi
}

drop_cache() {
	sync "$1"
	dd if="$1" iflag=nocache count=0 status=none
}

# The program's own result, to compare runs: the same code must run.
sum_of() {
	awk '$1 == "sum" { print $2 }' <<<"$1"
}

# ---- MemoryDenyWriteExecute --------------------------------------------------

mdwe_supported() {
	"$FIXTURES/mdwe" "$1" true 2>/dev/null ||
		skip_unsupported "cannot set MemoryDenyWriteExecute by $1 (PR_SET_MDWE is Linux 6.3)"
}

# shmem_off: no 2 MiB folios for shmem, so that the memfd route is closed too.
shmem_off() {
	echo never >"$THP/shmem_enabled"
	if [ -f "$THP/hugepages-2048kB/shmem_enabled" ]; then
		echo inherit >"$THP/hugepages-2048kB/shmem_enabled"
	fi
}

@test "MemoryDenyWriteExecute: thp names it before copying anything, the program runs" {
	shmem_off
	want=$(sum_of "$("$D/big-pie" loop 10)")
	for how in prctl seccomp; do
		mdwe_supported $how
		run_t "$FIXTURES/mdwe" $how "$D/peakrss" "$TIEXEC" -v --strategy=thp "$D/big-pie" loop 10
		echo "$how: status $status"
		case $how in
		prctl) by="PR_SET_MDWE" ;;
		seccomp) by="seccomp or LSM" ;;
		esac
		[[ "$output" == *"tiexec: '$D/big-pie': thp: MemoryDenyWriteExecute ($by) forbids executable copies; shmem THP is off (transparent_hugepage/shmem_enabled)"* ]]
		[[ "$output" != *"cannot read the program file"* ]]
		[[ "$output" == *"0.0 of 64.0 MiB text on 2 MiB pages (file 0.0, thp 0.0)"* ]]
		# No copy was made: the peak stays far below the 64 MiB of text.
		echo "peak: $(peak_kb "$output") kB"
		[ "$(peak_kb "$output")" -lt 32768 ]
		[ "$(sum_of "$output")" = "$want" ]
		[ "$status" -eq 0 ]
	done
}

@test "MemoryDenyWriteExecute: hugetlb, and thp where shmem THP is allowed, copy through a memfd (machine settings set, restored)" {
	want=$(sum_of "$("$D/big-pie" loop 2000)")
	echo 40 >/proc/sys/vm/nr_hugepages
	[ "$(cat /proc/sys/vm/nr_hugepages)" -ge 33 ] ||
		skip_unsupported "could not reserve 33 huge pages (memory fragmented)"
	echo advise >"$THP/shmem_enabled"
	for how in prctl seccomp; do
		mdwe_supported $how
		for s in hugetlb thp; do
			run_t "$FIXTURES/mdwe" $how "$TIEXEC" -v --strategy=$s "$D/big-pie" loop 2000
			echo "$how $s: status $status"
			[[ "$output" != *"MemoryDenyWriteExecute"* ]]
			[[ "$output" != *"copy: "* ]]
			[[ "$output" == *"tiexec: '$D/big-pie': 64.0 of 64.0 MiB text on 2 MiB pages"* ]]
			[ "$(sum_of "$output")" = "$want" ]
			[ "$status" -eq 0 ]
		done
	done
}

@test "MemoryDenyWriteExecute: the default strategy still maps the page cache's 2 MiB folios" {
	want=$(sum_of "$("$D/big-pie" loop 2000)")
	"$TIEXEC" "$D/big-pie" loop 1 >/dev/null # the cache in 2 MiB folios
	for how in prctl seccomp; do
		mdwe_supported $how
		run_t "$FIXTURES/mdwe" $how "$TIEXEC" -v "$D/big-pie" loop 2000
		echo "$how: status $status"
		[[ "$output" == *"tiexec: '$D/big-pie': 62.0 of 64.0 MiB text on 2 MiB pages (file 62.0, thp 0.0)"* ]]
		[[ "$output" != *"MemoryDenyWriteExecute"* ]] # nothing was left to copy
		[ "$(sum_of "$output")" = "$want" ]
		[ "$status" -eq 0 ]
	done
}

# ---- a memory cgroup's limit -------------------------------------------------

# in_cg CMD...: run CMD inside $CG (with a timeout, like run_t).
in_cg() {
	run timeout 60 sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$CG" "$@"
}

@test "a 200 MiB memory cgroup: 256 MiB of text is copied only as far as the limit allows" {
	cg_make $((200 << 20))
	in_cg "$D/big256" loop 20000
	[ "$status" -eq 0 ]
	want=$(sum_of "$output")
	[ -n "$want" ]

	in_cg "$TIEXEC" -v --strategy=thp "$D/big256" loop 20000
	echo "thp: status $status"
	[ "$status" -eq 0 ] # not OOM-killed (137)
	[ "$(sum_of "$output")" = "$want" ]
	[[ "$output" == *"tiexec: '$D/big256': thp: the memory cgroup's limit (memory.limit_in_bytes) leaves no room for more copies"* ]]

	# Where the page cache cannot give 2 MiB pages (ramfs), auto copies:
	# the same limit applies.
	mkdir -p "$D/ramfs"
	mount -t ramfs ramfs "$D/ramfs"
	cp "$D/big256" "$D/ramfs/big"
	in_cg "$TIEXEC" -v "$D/ramfs/big" loop 20000
	echo "auto on ramfs: status $status"
	[ "$status" -eq 0 ]
	[ "$(sum_of "$output")" = "$want" ]
	[[ "$output" == *"tiexec: '$D/ramfs/big': file: ramfs keeps 4 KiB folios in the page cache"* ]]
	[[ "$output" == *"tiexec: '$D/ramfs/big': thp: the memory cgroup's limit (memory.limit_in_bytes) leaves no room for more copies"* ]]
	# Some of it was copied all the same: the limit bounds, not forbids.
	[[ "$output" =~ \(file\ 0\.0,\ thp\ [1-9][0-9]*\.0\) ]]
}

# ---- per-size THP switches ----------------------------------------------------

@test "2 MiB THP disabled per size: thp names the switch and copies nothing (machine-wide THP set, restored)" {
	[ -f "$THP2M" ] || skip "no per-size THP switches (mTHP, Linux 6.8)"
	echo never >"$THP2M"
	run_t "$D/peakrss" "$TIEXEC" -v --strategy=thp "$D/big-pie" loop 10
	[ "$status" -eq 0 ]
	[[ "$output" == *"tiexec: '$D/big-pie': thp: transparent huge pages of 2 MiB are disabled (transparent_hugepage/hugepages-2048kB/enabled is never)"* ]]
	[[ "$output" != *"fragmented"* ]]
	[[ "$output" == *"(file 0.0, thp 0.0)"* ]]
	[ "$(peak_kb "$output")" -lt 32768 ]
}

# ---- zero fill in the text -------------------------------------------------------

@test "zero fill of a read+execute segment is writable, as the kernel maps it" {
	"$D/zerofill" "$D/zerofill-w" 4 write
	chmod +x "$D/zerofill-w"
	run_t "$D/zerofill-w"
	[ "$status" -eq 43 ]
	for s in auto off; do
		run_t "$TIEXEC" --min-text=0 --strategy=$s "$D/zerofill-w"
		[ "$status" -eq 43 ]
	done
}

@test "1 GiB of zero fill after 16 bytes of text costs no more than a direct exec" {
	run_t "$D/peakrss" "$D/zerofill-1g"
	[ "$status" -eq 42 ]
	direct=$(peak_kb "$output")
	for s in auto thp file; do
		run_t "$D/peakrss" "$TIEXEC" -v --strategy=$s "$D/zerofill-1g"
		echo "$s: $output"
		[ "$status" -eq 42 ]
		# tiexec's own mappings add a little; a copy of the zero fill
		# would add a GiB.
		[ "$(peak_kb "$output")" -lt $((direct + 8192)) ]
		[[ "$output" == *"(file 0.0, thp 0.0)"* ]]
	done
}

# ---- core dumps --------------------------------------------------------------------

# start DIR CMD...: runs `CMD wait` in DIR as a coprocess with a 20 MiB core
# size limit (pid in $CPID), until "ready".
start() {
	local dir=$1
	shift
	# SIGQUIT's default action (a core dump), even where the suite was
	# started with it ignored (from a background job: a shell cannot
	# reset what it inherited ignored, env can).
	coproc P { cd "$dir" && ulimit -c 20480 && exec env --default-signal=QUIT "$@" wait 3>&-; }
	CPID=$P_PID
	local ready=
	read -r -t 60 ready <&"${P[0]}" || true
	[ "$ready" = ready ] || { echo "no 'ready' from $*"; return 1; }
}

# copied_ranges PID: "start-end VmFlags" of each executable mapping holding
# anonymous huge pages (the copies).
copied_ranges() {
	awk '/^[0-9a-f]+-[0-9a-f]+ / { r = $1; x = ($2 ~ /x/) }
	     $1 == "AnonHugePages:" { ah = $2 }
	     $1 == "VmFlags:" { if (x && ah > 0) { $1 = ""; print r $0 } }' "/proc/$1/smaps"
}

@test "core dumps: copies are left out, like the file-backed text of a direct exec" {
	mkdir -p "$D/core-direct" "$D/core-thp"
	start "$D/core-thp" "$TIEXEC" --strategy=thp "$D/big-pie"
	ranges=$(copied_ranges "$CPID")
	echo "$ranges"
	[ -n "$ranges" ]
	while read -r r flags; do
		[[ " $flags " == *" dd "* ]] || { echo "$r is dumped: $flags"; return 1; }
	done <<<"$ranges"

	case $(cat /proc/sys/kernel/core_pattern) in
	'|'* | /*) return 0 ;; # a core handler or a fixed place: smaps above is the check
	esac
	quit() {
		kill -QUIT "$CPID"
		timeout 60 tail --pid="$CPID" -f /dev/null || { echo "SIGQUIT did not end $CPID"; return 1; }
		wait "$CPID" || true
		CPID=
	}
	quit
	start "$D/core-direct" "$D/big-pie"
	quit
	direct=$(stat -c %s "$D"/core-direct/core*)
	via=$(stat -c %s "$D"/core-thp/core*)
	echo "core: direct $direct, through tiexec $via bytes"
	# Without the flag the 64 MiB copy fills the 20 MiB limit.
	[ "$via" -lt $((direct + (4 << 20))) ]
}

# ---- many starts at once -------------------------------------------------------

@test "20 simultaneous cold starts share one conversion of the page cache" {
	drop_cache "$D/big-cold"
	local i pids=()
	for i in $(seq 20); do
		timeout 60 "$TIEXEC" -v "$D/big-cold" loop 10 >"$D/cold.$i.out" 2>"$D/cold.$i.err" &
		pids+=($!)
	done
	for i in "${!pids[@]}"; do
		wait "${pids[$i]}" || { echo "start $((i + 1)) failed"; return 1; }
	done
	thp=0
	for i in $(seq 20); do
		line=$(grep -o '(file [0-9.]*, thp [0-9.]*)' "$D/cold.$i.err")
		echo "$i: $line"
		[[ "$line" =~ \(file\ ([0-9]+)\.[0-9],\ thp\ ([0-9]+)\.[0-9]\) ]]
		[ "${BASH_REMATCH[1]}" -ge 56 ] # at least 90% of the 62 MiB
		thp=$((thp + BASH_REMATCH[2]))
	done
	# Before: each start copied 58 MiB.  Now at most one start's worth.
	[ "$thp" -le 62 ]
}
