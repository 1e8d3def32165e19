# Huge-page coverage of the text, read from /proc/PID/smaps by the program
# itself (bigtext `report` touches every 4 KiB of its text first, then prints
# FilePmdMapped, AnonHugePages and hugetlb per executable mapping).
#
# Each test shows what tiexec adds: on this kernel a fixed-address program
# run directly can already get PMD-mapped text when its page cache happens
# to hold 2 MiB folios, so the tests use PIE programs (the kernel does not
# place them congruent to the file) or drop the file's cache first.
load test_helper

setup_file() {
	[ "$(id -u)" = 0 ] || return 0
	D=$BATS_FILE_TMPDIR
	# Private copies: other test files must not share (or evict) their cache.
	cp "$FIXTURES/bigtext-pie" "$D/big-pie"
	cp "$FIXTURES/bigtext-nopie" "$D/big-nopie"
	"$ROOT/tests/fixtures/gentext.sh" "$D/big-nopie-ro" 64 nopie 4
	sync "$D"/big-*
	cat /sys/kernel/mm/transparent_hugepage/enabled >"$D/thp-enabled"
	cat /proc/sys/vm/nr_hugepages >"$D/nr-hugepages"
}

setup() {
	[ "$(id -u)" = 0 ] || skip "needs root: drops page caches, changes THP and hugetlb settings"
	D=$BATS_FILE_TMPDIR
}

teardown() {
	[ "$(id -u)" = 0 ] || return 0
	# Restore whatever a test changed, even when it failed.
	sed -n 's/.*\[\(.*\)\].*/\1/p' "$D/thp-enabled" >/sys/kernel/mm/transparent_hugepage/enabled
	cat "$D/nr-hugepages" >/proc/sys/vm/nr_hugepages
	if mountpoint -q "$D/ramfs" 2>/dev/null; then umount "$D/ramfs"; fi
}

drop_cache() {
	sync "$1"
	dd if="$1" iflag=nocache count=0 status=none
}

# cov OUTPUT PROGRAM: sets SEG_LO SEG_HI (the executable segment as placed,
# from the program headers and the run-time address of tx_text_begin), and
# HUGE_KB: huge-page kB of every executable mapping inside the 2 MiB-rounded
# segment.
cov() {
	local out=$1 prog=$2 tb link vaddr memsz bias lo hi s e fp ah ht
	tb=$(awk '$1 == "text_begin" { print $2 }' <<<"$out")
	link=0x$(nm "$prog" | awk '$3 == "tx_text_begin" { print $1 }')
	read -r vaddr memsz < <(readelf -lW "$prog" | awk '$1 == "LOAD" && / R E / { print $3, $6 }')
	[ -n "$tb" ] && [ -n "$vaddr" ] || { echo "cannot parse: $out" >&2; return 1; }
	bias=$((tb - link))
	SEG_LO=$((vaddr + bias))
	SEG_HI=$((vaddr + memsz + bias))
	lo=$((SEG_LO & -2097152))
	hi=$(((SEG_HI + 2097151) & -2097152))
	HUGE_KB=0
	while read -r _ s e _ _ fp ah ht _; do
		s=$((s)) e=$((e))
		((s >= lo && e <= hi)) || continue
		HUGE_KB=$((HUGE_KB + ${fp#file_pmd_kb=} + ${ah#anon_huge_kb=} + ${ht#hugetlb_kb=}))
	done < <(grep '^map ' <<<"$out")
}

# Every 2 MiB-aligned 2 MiB inside the executable segment, in kB.
inner_kb() {
	echo $((((SEG_HI & -2097152) - ((SEG_LO + 2097151) & -2097152)) / 1024))
}

# The whole executable segment rounded out to 2 MiB, in kB.
outer_kb() {
	echo $((((SEG_HI + 2097151 & -2097152) - (SEG_LO & -2097152)) / 1024))
}

# The program's own result, to compare with a direct run: the copied or
# remapped text must be the same code.
loop_sum() {
	"$@" loop 200000 | awk '$1 == "sum" { print $2 }'
}

@test "auto: a PIE gets every aligned 2 MiB of its text from the page cache (zero copy)" {
	run_t "$D/big-pie" report
	[ "$status" -eq 0 ]
	cov "$output" "$D/big-pie"
	direct_kb=$HUGE_KB
	[ "$direct_kb" -lt "$(inner_kb)" ] # the kernel alone does not do it

	"$TIEXEC" "$D/big-pie" report >/dev/null # warm the cache in 2 MiB folios
	run_t "$TIEXEC" -v "$D/big-pie" report
	[ "$status" -eq 0 ]
	cov "$output" "$D/big-pie"
	[ "$(inner_kb)" -ge 61440 ]
	[ "$HUGE_KB" -eq "$(inner_kb)" ]
	[[ "$output" == *"tiexec: '$D/big-pie': 62.0 of 64.0 MiB text on 2 MiB pages (file 62.0, thp 0.0), 2.0 on 4 KiB, "*" ms"* ]]
	[ "$(loop_sum "$TIEXEC" "$D/big-pie")" = "$(loop_sum "$D/big-pie")" ]
}

@test "auto: a fixed-address program after its cache was dropped" {
	drop_cache "$D/big-nopie"
	run_t "$D/big-nopie" report
	[ "$status" -eq 0 ]
	cov "$output" "$D/big-nopie"
	# Cold cache, no MADV_HUGEPAGE: readahead ramps up to some large
	# folios on its own, but not to all of them.
	[ "$HUGE_KB" -lt "$(inner_kb)" ]

	drop_cache "$D/big-nopie"
	run_t "$TIEXEC" -v "$D/big-nopie" report
	[ "$status" -eq 0 ]
	cov "$output" "$D/big-nopie"
	[ "$HUGE_KB" -eq "$(inner_kb)" ]
	[[ "$output" == *"(file 62.0, thp 0.0)"* ]]
}

@test "file: small folios left by a direct run are evicted and read again in 2 MiB" {
	drop_cache "$D/big-nopie"
	"$D/big-nopie" report >/dev/null # leaves the cache in small folios
	run_t "$TIEXEC" -v --strategy=file "$D/big-nopie" report
	[ "$status" -eq 0 ]
	cov "$output" "$D/big-nopie"
	[ "$HUGE_KB" -eq "$(inner_kb)" ]
	[[ "$output" == *"(file 62.0, thp 0.0)"* ]]
}

@test "file: a PIE with a cold cache, and again with a warm one" {
	drop_cache "$D/big-pie"
	for i in cold warm; do
		run_t "$TIEXEC" -v --strategy=file "$D/big-pie" report
		[ "$status" -eq 0 ]
		cov "$output" "$D/big-pie"
		echo "$i: $HUGE_KB kB of $(inner_kb)"
		[ "$HUGE_KB" -eq "$(inner_kb)" ]
		[[ "$output" == *"(file 62.0, thp 0.0)"* ]]
	done
}

@test "file: --lazy leaves the faults to the program, which gets PMDs from a warm cache" {
	# With a cold cache the folio sizes are then up to the kernel's
	# readahead (README, Limits); a cache read in 2 MiB folios by an
	# earlier run is the case --lazy is for.
	drop_cache "$D/big-pie"
	"$TIEXEC" "$D/big-pie" report >/dev/null
	run_t "$TIEXEC" -v --lazy "$D/big-pie" report
	[ "$status" -eq 0 ]
	cov "$output" "$D/big-pie"
	[ "$HUGE_KB" -eq "$(inner_kb)" ]
	[[ "$output" == *"(file 0.0, thp 0.0, lazy 62.0)"* ]]
}

@test "thp: a PIE's text starts on a 2 MiB boundary and every whole 2 MiB is copied" {
	run_t "$TIEXEC" -v --strategy=thp "$D/big-pie" report
	[ "$status" -eq 0 ]
	cov "$output" "$D/big-pie"
	start=$((SEG_LO & -4096))
	[ $((start % 2097152)) -eq 0 ]
	whole=$((((SEG_HI - start) & -2097152) / 1024))
	[ "$HUGE_KB" -eq "$whole" ]
	[[ "$output" == *"64.0 of 64.0 MiB text on 2 MiB pages (file 0.0, thp 64.0)"* ]]
	anon=$(grep '^map ' <<<"$output" | awk '{ sub("anon_huge_kb=", "", $7); s += $7 } END { print s }')
	[ "$anon" -eq "$whole" ]
	[ "$(loop_sum "$TIEXEC" --strategy=thp "$D/big-pie")" = "$(loop_sum "$D/big-pie")" ]
}

@test "thp: a fixed-address program gets its aligned pieces copied" {
	drop_cache "$D/big-nopie"
	run_t "$TIEXEC" -v --strategy=thp "$D/big-nopie" report
	[ "$status" -eq 0 ]
	cov "$output" "$D/big-nopie"
	[ "$HUGE_KB" -eq "$(inner_kb)" ]
	[[ "$output" == *"(file 0.0, thp 62.0)"* ]]
	[ "$(loop_sum "$TIEXEC" --strategy=thp "$D/big-nopie")" = "$(loop_sum "$D/big-nopie")" ]
}

@test "--round-out: the unaligned head and tail are covered too" {
	for s in auto thp; do
		run_t "$TIEXEC" -v --round-out --strategy=$s "$D/big-nopie-ro" report
		[ "$status" -eq 0 ]
		cov "$output" "$D/big-nopie-ro"
		echo "$s: $HUGE_KB kB of $(outer_kb)"
		[ "$HUGE_KB" -eq "$(outer_kb)" ]
		[[ "$output" == *"64.0 of 64.0 MiB text on 2 MiB pages"*", 0.0 on 4 KiB"* ]]
		[ "$(loop_sum "$TIEXEC" --round-out --strategy=$s "$D/big-nopie-ro")" = \
			"$(loop_sum "$D/big-nopie-ro")" ]
	done
}

@test "--round-out never makes writable data read-only" {
	# big-nopie's data follows its text within the same 2 MiB: that tail
	# piece must stay on 4 KiB pages, and the program must still run.
	run_t "$TIEXEC" -v --round-out --strategy=thp "$D/big-nopie" report
	[ "$status" -eq 0 ]
	cov "$output" "$D/big-nopie"
	[ "$HUGE_KB" -lt "$(outer_kb)" ]
	[ "$HUGE_KB" -gt "$(inner_kb)" ] # the head piece was rounded out
}

@test "hugetlb: copies into the reserved pool (vm.nr_hugepages set, restored)" {
	echo 40 >/proc/sys/vm/nr_hugepages
	[ "$(cat /proc/sys/vm/nr_hugepages)" -ge 33 ] ||
		skip_unsupported "could not reserve 33 huge pages (memory fragmented)"
	run_t "$TIEXEC" -v --strategy=hugetlb "$D/big-pie" report
	[ "$status" -eq 0 ]
	cov "$output" "$D/big-pie"
	ht=$(grep '^map ' <<<"$output" | awk '{ sub("hugetlb_kb=", "", $8); s += $8 } END { print s }')
	[ "$ht" -eq "$HUGE_KB" ]
	[ "$HUGE_KB" -eq $((((SEG_HI - (SEG_LO & -4096)) & -2097152) / 1024)) ]
	[[ "$output" == *"(file 0.0, thp 0.0, hugetlb 64.0)"* ]]
	[ "$(loop_sum "$TIEXEC" --strategy=hugetlb "$D/big-pie")" = "$(loop_sum "$D/big-pie")" ]
}

@test "hugetlb: an empty pool falls back to 4 KiB pages and says why (vm.nr_hugepages set, restored)" {
	echo 0 >/proc/sys/vm/nr_hugepages
	run_t "$TIEXEC" -v --strategy=hugetlb "$D/big-pie" report
	[ "$status" -eq 0 ]
	cov "$output" "$D/big-pie"
	[ "$HUGE_KB" -eq 0 ]
	[[ "$output" == *"tiexec: '$D/big-pie': hugetlb: not enough free pages in the reserved pool (vm.nr_hugepages)"* ]]
	[[ "$output" == *"0.0 of 64.0 MiB text on 2 MiB pages"* ]]
}

@test "THP set to never: thp falls back and says why, file still works (machine-wide THP set, restored)" {
	echo never >/sys/kernel/mm/transparent_hugepage/enabled
	run_t "$TIEXEC" -v --strategy=thp "$D/big-pie" report
	[ "$status" -eq 0 ]
	cov "$output" "$D/big-pie"
	[ "$HUGE_KB" -eq 0 ]
	[[ "$output" == *"tiexec: '$D/big-pie': thp: transparent huge pages are disabled"* ]]
	[ "$(loop_sum "$TIEXEC" --strategy=thp "$D/big-pie")" = "$(loop_sum "$D/big-pie")" ]

	# File-backed PMD mappings do not depend on the anonymous THP switch.
	drop_cache "$D/big-pie"
	run_t "$TIEXEC" -v "$D/big-pie" report
	[ "$status" -eq 0 ]
	cov "$output" "$D/big-pie"
	[ "$HUGE_KB" -eq "$(inner_kb)" ]
}

@test "PR_SET_THP_DISABLE: nothing evicted or read again, and -v names the prctl" {
	cat "$D/big-pie" >/dev/null # the whole text in the cache
	run_t "$FIXTURES/mdwe" thp-disable "$TIEXEC" -v "$D/big-pie" report
	[ "$status" -eq 0 ]
	cov "$output" "$D/big-pie"
	[ "$HUGE_KB" -eq 0 ]
	[[ "$output" == *"tiexec: '$D/big-pie': file: transparent huge pages are disabled for this process (prctl PR_SET_THP_DISABLE)"* ]]
	[[ "$output" != *"page cache kept small pages"* ]]
	local n
	n=$(read_bytes "$FIXTURES/mdwe" thp-disable "$TIEXEC" "$D/big-pie")
	echo "read from disk: $n bytes"
	[ "$n" -lt $((1 << 20)) ]
	[ "$(loop_sum "$FIXTURES/mdwe" thp-disable "$TIEXEC" "$D/big-pie")" = "$(loop_sum "$D/big-pie")" ]
}

@test "a filesystem without large folios (ramfs): file cannot, auto copies" {
	mkdir -p "$D/ramfs"
	mount -t ramfs ramfs "$D/ramfs"
	cp "$D/big-pie" "$D/ramfs/big"

	run_t "$TIEXEC" -v --strategy=file "$D/ramfs/big" report
	[ "$status" -eq 0 ]
	cov "$output" "$D/ramfs/big"
	[ "$HUGE_KB" -eq 0 ]
	[[ "$output" == *"tiexec: '$D/ramfs/big': file: ramfs keeps 4 KiB folios in the page cache on Linux $(uname -r | cut -d. -f1-2): nothing evicted or read again"* ]]

	run_t "$TIEXEC" -v "$D/ramfs/big" report
	[ "$status" -eq 0 ]
	cov "$output" "$D/ramfs/big"
	[ "$HUGE_KB" -eq "$(inner_kb)" ]
	[[ "$output" == *"(file 0.0, thp 62.0)"* ]]
}

@test "--min-text above the text size (--no-libs): run directly, nothing remapped" {
	run_t "$TIEXEC" -v --no-libs --min-text=1G "$D/big-pie" report
	[ "$status" -eq 0 ]
	cov "$output" "$D/big-pie"
	[ "$HUGE_KB" -lt "$(inner_kb)" ]
	[[ "$output" == *"tiexec: '$D/big-pie': 64.0 MiB of text is below --min-text (1024.0 MiB): running it directly"* ]]
}

@test "copied text is named in /proc/PID/maps where the kernel can name it" {
	zcat /proc/config.gz 2>/dev/null | grep -q '^CONFIG_ANON_VMA_NAME=y' ||
		skip "this kernel is built without CONFIG_ANON_VMA_NAME"
	run_t "$TIEXEC" --strategy=thp "$D/big-pie" report
	[ "$status" -eq 0 ]
	[[ "$output" == *"[anon:tiexec:$D/big-pie]"* ]]
}

@test "before Linux 6.7: without PAGEMAP_SCAN and MADV_POPULATE_*, smaps totals verify" {
	# tiexec-compat is the same loader built to behave as on old kernels.
	compat=$BUILD/interp/tiexec-compat
	drop_cache "$D/big-pie"
	"$D/big-pie" report >/dev/null # small folios: the eviction path
	for s in file file thp; do
		run_t "$compat" -v --strategy=$s "$D/big-pie" report
		[ "$status" -eq 0 ]
		cov "$output" "$D/big-pie"
		echo "$s: $HUGE_KB kB"
		[ "$HUGE_KB" -ge "$(inner_kb)" ]
	done
	[ "$(loop_sum "$compat" --strategy=thp "$D/big-pie")" = "$(loop_sum "$D/big-pie")" ]
}
