#!/usr/bin/env bats
# The shared text cache (common/textcache.h, warm/textentry.c): tiexec-warm
# writes entries to a tmpfs mounted huge=always, the loader and the stage
# after ld.so map them where the page cache cannot give 2 MiB folios.  Each
# file gets its own cache under /run (root-owned, as the loader demands),
# mounted by tiexec-warm and unmounted again in teardown_file.

bats_require_minimum_version 1.5.0
load test_helper

WARM=$BUILD/warm/tiexec-warm
STAT=$BUILD/stat/tiexec-stat

setup_file() {
	[ -x "$FIXTURES/bl-lld" ] && [ "$(id -u)" = 0 ] || return 0
	C=$(mktemp -d /run/tiexec-cache-test.XXXXXX)
	chmod 755 "$C"
	echo "$C" >"$BATS_FILE_TMPDIR/c"
	printf 'cache %s/text\n' "$C" >"$C/warm.conf"
	# A file system whose page cache keeps 4 KiB folios, on every kernel.
	mkdir "$C/ramfs"
	mount -t ramfs ramfs "$C/ramfs"
	cp "$FIXTURES/bigtext-pie" "$C/ramfs/big"
	chmod 755 "$C/ramfs" "$C/ramfs/big"
	# The loader where uid 65534 can run it (the build directory may be
	# private: a clone under mktemp -d).
	cp "$TIEXEC" "$C/tiexec"
	chmod 755 "$C/tiexec"
	# The lld-linked fixtures where everyone may read them: tiexec-warm
	# makes entries only for such files (the build directory may be
	# private: a clone under mktemp -d).
	mkdir "$C/fx"
	for f in bl-lld libbl-lld.so perfhot-lld libperfhot-lld.so hdr-lld libhdr-lld.so; do
		cp "$FIXTURES/$f" "$C/fx/"
	done
	chmod -R a+rX "$C/fx"
}

teardown_file() {
	[ -f "$BATS_FILE_TMPDIR/c" ] || return 0
	C=$(cat "$BATS_FILE_TMPDIR/c")
	for m in "$C/text" "$C/small/text" "$C/tiny" "$C/split" "$C/ramfs"; do
		mountpoint -q "$m" && umount "$m"
	done
	rm -rf "$C" /var/lib/tiexec-cache-test.* /tmp/tiexec-cache-user.*
	true
}

setup() {
	[ -x "$FIXTURES/bl-lld" ] || skip_unsupported "lld is not installed: no lld-linked fixtures"
	[ "$(id -u)" = 0 ] || skip "needs root: a text cache of its own in /run, a ramfs mount, memory cgroups"
	C=$(cat "$BATS_FILE_TMPDIR/c")
	FX=$C/fx
	export TIEXEC_CACHE=$C/text
}

teardown() {
	cg_remove
}

warm() {
	"$WARM" --config "$C/warm.conf" "$@"
}

# text_kb PID FIELD [PART]: FIELD (kB) summed over PID's executable mappings
# whose line contains PART, libc's window entry aside (window_kb).
text_kb() {
	awk -v f="$2:" -v p="${3:-}" '
		/^[0-9a-f]+-[0-9a-f]+ / { x = substr($2, 3, 1) == "x" && index($0, p) > 0 && index($0, ".window") == 0; next }
		x && $1 == f { kb += $2 }
		END { print kb + 0 }' "/proc/$1/smaps"
}

# window_kb PID FIELD: FIELD (kB) of PID's mappings of window entries
# (libc's, ld.so's).
window_kb() {
	awk -v f="$2:" '
		/^[0-9a-f]+-[0-9a-f]+ / { x = index($0, ".window") > 0; next }
		x && $1 == f { kb += $2 }
		END { print kb + 0 }' "/proc/$1/smaps"
}

# start CMD...: CMD wait in the background until it is ready; its PID in
# $pid.  stop: lets it finish, and fails if it did not.
start() {
	coproc W { exec "$@" wait 2>/dev/null; }
	pid=$W_PID
	local ready
	read -r ready <&"${W[0]}"
	[ "$ready" = ready ]
}

stop() {
	exec {W[1]}>&-
	wait "$pid"
}

@test "warm mounts the cache (tmpfs huge=always, root, 0755) and writes an lld library's entry" {
	run_t "$WARM" --config "$C/warm.conf" "$FX/libbl-lld.so"
	[ "$status" -eq 0 ]
	[[ "$output" == "$FX/libbl-lld.so: 16.0 MiB of text in the text cache (made now, "*" MiB in memory): its text is not congruent to its file offset modulo 2 MiB" ]]
	run findmnt -n -o FSTYPE,OPTIONS "$C/text"
	[[ "$output" == tmpfs*huge=always* ]]
	[ "$(stat -c '%U %a' "$C/text")" = "root 755" ]
	entry=$(entry_of "$FX/libbl-lld.so")
	[ "$(stat -c '%U %a' "$C/text/$entry")" = "root 444" ]
	# The entry is the library but for its text's offsets, now congruent
	# to its addresses (program and section headers alike).
	text_load() { readelf -lW "$1" | awk '$1 == "LOAD" && $8 == "E" { print $2, $3 }'; }
	text_section() { readelf -SW "$1" | sed -n 's/.* \.text *PROGBITS *\([0-9a-f]*\) \([0-9a-f]*\) .*/0x\2 0x\1/p'; }
	apart() { echo $((($1 - $2) % 2097152)); }
	[ "$(apart $(text_load "$FX/libbl-lld.so"))" != 0 ]
	[ "$(apart $(text_load "$C/text/$entry"))" = 0 ]
	[ "$(apart $(text_section "$C/text/$entry"))" = 0 ]
	[ "$(text_section "$C/text/$entry" | cut -d' ' -f2)" = "$(text_section "$FX/libbl-lld.so" | cut -d' ' -f2)" ]
	cmp <(readelf -sW "$FX/libbl-lld.so") <(readelf -sW "$C/text/$entry")
	cmp <(readelf -nW "$FX/libbl-lld.so") <(readelf -nW "$C/text/$entry")
	run_t "$WARM" --config "$C/warm.conf" "$FX/libbl-lld.so"
	[[ "$output" == *"(present, "* ]]
	run_t "$WARM" --config "$C/warm.conf" --check --json "$FX/libbl-lld.so"
	[ "$status" -eq 0 ]
	[[ "$output" == *'"route":"cache"'*'"cache":"present"'* ]]
}

# lld --no-rosegment: the ELF header and the program headers lie in the
# text that moves.  Its old place is mapped by nobody, so the entry's
# headers are rewritten there (before, EINVAL, and the message named no
# step).
@test "an lld library whose ELF header lies in its text gets an entry; the entry's text is the file's" {
	readelf -lW "$FX/libhdr-lld.so" | awk '$1 == "LOAD" && $8 == "E" { exit !($2 == "0x000000") }'
	run_t "$WARM" --config "$C/warm.conf" "$FX/libhdr-lld.so"
	[ "$status" -eq 0 ]
	[[ "$output" == "$FX/libhdr-lld.so: 4.0 MiB of text in the text cache (made now, "* ]]
	entry=$(entry_of "$FX/libhdr-lld.so")
	local off vaddr
	read -r off vaddr < <(readelf -lW "$C/text/$entry" | awk '$1 == "LOAD" && $8 == "E" { print $2, $3 }')
	[ $(((off - vaddr) % 2097152)) = 0 ]
	# No program header points outside its segment (PT_PHDR followed).
	[ -z "$(readelf -lW "$C/text/$entry" 2>&1 >/dev/null)" ]
	# The text as the loader maps it from the entry holds the file's own
	# ELF header, byte for byte.
	cmp <(head -c 4096 "$FX/libhdr-lld.so") <(tail -c +$((off + 1)) "$C/text/$entry" | head -c 4096)
	same "$(cd / && "$FX/hdr-lld" loop 100)" "$(cd / && TIEXEC_CACHE=$C/text "$TIEXEC" "$FX/hdr-lld" loop 100)"
}

@test "an lld library that ld.so put 2 MiB-aligned runs from its entry: no anonymous text, same output" {
	warm "$FX/libbl-lld.so" >/dev/null
	direct=$("$FX/bl-lld" loop 100000)
	run_t "$TIEXEC" -v "$FX/bl-lld" loop 100000
	[ "$status" -eq 0 ]
	[[ "$output" == *"library '$FX/libbl-lld.so': 14.0 of 16.0 MiB text on 2 MiB pages (file 0.0, cache 14.0, thp 0.0)"* ]]
	[[ "$output" == *"$direct"* ]]
	start "$TIEXEC" "$FX/bl-lld"
	[ "$(text_kb "$pid" Anonymous)" -eq 0 ]
	[ "$(text_kb "$pid" ShmemPmdMapped "$C/text/")" -ge $((14 * 1024)) ]
	stop
}

@test "a program on a file system without large folios (ramfs) runs from its entry, nothing evicted or copied" {
	run_t "$WARM" --config "$C/warm.conf" "$C/ramfs/big"
	[ "$status" -eq 0 ]
	[[ "$output" == "$C/ramfs/big: 64.0 MiB of text in the text cache (made now, "*"): ramfs keeps 4 KiB folios in the page cache on Linux "* ]]
	direct=$("$C/ramfs/big" loop 100000)
	run_t "$TIEXEC" -v "$C/ramfs/big" loop 100000
	[ "$status" -eq 0 ]
	[[ "$output" == *"'$C/ramfs/big': 62.0 of 64.0 MiB text on 2 MiB pages (file 0.0, cache 62.0, thp 0.0), 2.0 on 4 KiB"* ]]
	[[ "$output" == *"$direct"* ]]
	# As on Linux 5.10 (no MADV_POPULATE_READ, MADV_COLLAPSE or PAGEMAP_SCAN):
	# one read a piece, and each piece's last page in pagemap tells; smaps,
	# which weighs every 4 KiB page of a huge folio, is not read.
	run_t strace -f -e trace=openat -o "$BATS_TEST_TMPDIR/st" "$BUILD/interp/tiexec-compat" -v "$C/ramfs/big" loop 100000
	[[ "$output" == *"(file 0.0, cache 62.0, thp 0.0)"* ]]
	grep -q '/proc/self/pagemap' "$BATS_TEST_TMPDIR/st"
	run grep smaps "$BATS_TEST_TMPDIR/st"
	[ "$status" -eq 1 ]
	start "$TIEXEC" "$C/ramfs/big"
	[ "$(text_kb "$pid" Anonymous)" -eq 0 ]
	[ "$(text_kb "$pid" ShmemPmdMapped "$C/text/")" -eq $((62 * 1024)) ]
	# tiexec-stat names the cache's share: the program's 62 MiB, libc's
	# window and ld.so's (made by the same warm: the program needs both).
	run "$STAT" --json "$pid"
	[[ "$output" == *'"cache_kb":67584}'* ]]
	run "$STAT" "$pid"
	[[ "$output" == *" (text cache: $C/ramfs/big)"* ]]
	stop
}

# The program's first library, linked with p_align 64 KiB (every arm64
# library GNU ld links): tiexec plans where ld.so maps it (interp/libplan.c),
# so an entry serves every start.  tiexec-warm, given the program, makes
# the entry for that library too (warm/warm-targets.c).
@test "tiexec-warm PROG: its first library (p_align 64 KiB) gets an entry, which every start maps with PMDs" {
	cp "$FIXTURES/bl-64k" "$FIXTURES/libbl-64k.so" "$C/ramfs/"
	chmod 755 "$C/ramfs/bl-64k" "$C/ramfs/libbl-64k.so"
	run_t "$WARM" --config "$C/warm.conf" "$C/ramfs/bl-64k"
	[ "$status" -eq 0 ]
	[[ "$output" == *"$C/ramfs/libbl-64k.so: "*" MiB of text in the text cache (made now, "* ]]
	local i on=0 anon=0 pmd kb bases=
	want=$("$C/ramfs/bl-64k" loop 100)
	run_t "$TIEXEC" -v "$C/ramfs/bl-64k" loop 100
	[[ "$output" == *"$want"* ]]
	[[ "$output" == *"libbl-64k.so': "*" MiB text on 2 MiB pages (file 0.0, cache "[1-9]** ]]
	for i in $(seq 50); do
		start "$TIEXEC" "$C/ramfs/bl-64k"
		pmd=$(text_kb "$pid" ShmemPmdMapped "$C/text/")
		kb=$(text_kb "$pid" Anonymous)
		bases+="$(awk '/libbl-64k\.so$/ { print $1; exit }' "/proc/$pid/maps") "
		stop
		[ "$pmd" -ge 6144 ] && [ "$kb" -lt 1024 ] && on=$((on + 1))
	done
	echo "the library's text from its entry on PMDs, under 1 MiB private, in $on of 50 starts" >&3
	[ "$on" -ge 49 ]
	[ "$(tr ' ' '\n' <<<"$bases" | sort -u | grep -c .)" -ge 48 ]
	# Named alone, the library is not a program's first: no entry.
	run_t "$WARM" --config "$C/warm.conf" "$FX/libbl-lld.so" "$C/ramfs/libbl-64k.so"
	[[ "$output" == *"libbl-64k.so: skipped: glibc's ld.so places it at its p_align (64 KiB), 2 MiB-aligned about one start in 32, unless tiexec plans it for a program: name the program"* ]]
}

# The same for a planned library after the first (interp/libwalk.c): two
# needs a small library first, then libbl-64k.so.
@test "tiexec-warm PROG: a planned library after its first gets an entry too, which every start maps" {
	mkdir -p "$C/ramfs/two"
	cp "$FIXTURES/libbl-64k.so" "$C/ramfs/two/"
	printf 'int small(void) { return 1; }\n' >"$BATS_TEST_TMPDIR/sm.c"
	gcc -O2 -shared -fPIC -Wl,-z,max-page-size=0x10000 -o "$C/ramfs/two/libsm.so" "$BATS_TEST_TMPDIR/sm.c"
	printf '#include <stdio.h>\n#include <unistd.h>\nint main(int c, char **v) { char b[8]; if (c > 1) { puts("ready"); fflush(stdout); while (read(0, b, 8) > 0) ; } puts("two"); return 0; }\n' >"$BATS_TEST_TMPDIR/two.c"
	gcc -O2 -o "$C/ramfs/two/two" "$BATS_TEST_TMPDIR/two.c" -L"$C/ramfs/two" -Wl,--no-as-needed -lsm -lbl-64k -Wl,-rpath,'$ORIGIN'
	chmod -R a+rX "$C/ramfs/two"
	run_t "$WARM" --config "$C/warm.conf" "$C/ramfs/two/two"
	[ "$status" -eq 0 ]
	[[ "$output" == *"$C/ramfs/two/libbl-64k.so: "*" MiB of text in the text cache (made now, "* ]]
	[[ "$output" != *"libsm.so"* ]]
	local i on=0
	for i in $(seq 20); do
		start "$TIEXEC" "$C/ramfs/two/two"
		# two runs none of the library's code: the entry's mapping, not
		# its faulted PMDs (the test above runs it).
		[ "$(text_kb "$pid" Size "$C/text/")" -ge 6144 ] && [ "$(text_kb "$pid" Anonymous)" -lt 1024 ] && on=$((on + 1))
		stop
	done
	echo "# mapped from its entry, under 1 MiB private, in $on of 20 starts" >&3
	[ "$on" -ge 19 ]
}

@test "a start checks one piece of the entry: RSS counts the pieces it ran, and a split entry is checked whole" {
	warm "$C/ramfs/big" >/dev/null
	run_peak "$C/ramfs/big" loop 1
	[ "$status" -eq 0 ]
	direct=$PEAK_KB
	run_peak "$TIEXEC" -v "$C/ramfs/big" loop 1
	[ "$status" -eq 0 ]
	[[ "$output" == *"(file 0.0, cache 62.0, thp 0.0)"* ]]
	echo "peak RSS: direct $direct kB, through tiexec $PEAK_KB kB" >&2
	# Faulting the whole entry in would count its 62 MiB.
	[ "$PEAK_KB" -lt $((direct + 16 * 1024)) ]
	# The same entry on a tmpfs that keeps 4 KiB pages: the piece checked
	# is not huge, so every piece is, and the text is copied instead.
	mkdir -p "$C/split"
	mount -t tmpfs -o mode=0755,huge=never tmpfs "$C/split"
	mkdir -m 0755 "$C/split/text"
	entry=$(entry_of "$C/ramfs/big")
	cp "$C/text/$entry" "$C/split/text/$entry"
	chmod 0444 "$C/split/text/$entry"
	want=$("$C/ramfs/big" loop 1000)
	TIEXEC_CACHE=$C/split/text run_t "$TIEXEC" -v "$C/ramfs/big" loop 1000
	umount "$C/split"
	[ "$status" -eq 0 ]
	[[ "$output" == *"cache: part of the entry is not in 2 MiB pages"* ]]
	[[ "$output" == *"(file 0.0, thp 62.0)"* ]]
	[[ "$output" == *"$want"* ]]
}

@test "an entry split into 4 KiB pages: --check says how much is left in 2 MiB pages and fails, warm makes it again" {
	warm "$C/ramfs/big" >/dev/null
	entry=$(entry_of "$C/ramfs/big")
	run_t "$WARM" --config "$C/warm.conf" --check "$C/ramfs/big"
	[ "$status" -eq 0 ]
	[[ "$output" == *"(present, 62.0 of 62.0 MiB in 2 MiB pages, "* ]]
	# A hole punched in a piece splits its 2 MiB page and loses its text
	# (only root can write an entry): --check compares every byte.
	fallocate -p -o $((8 << 20)) -l 4096 "$C/text/$entry"
	run_t "$WARM" --config "$C/warm.conf" --check --json "$C/ramfs/big"
	[ "$status" -eq 1 ]
	[[ "$output" == *'"cache":"stale",'* ]]
	# The text written back: the same bytes, the page still split.
	dd if="$C/ramfs/big" of="$C/text/$entry" bs=4096 skip=2048 seek=2048 count=1 conv=notrunc status=none
	run_t "$WARM" --config "$C/warm.conf" --check --json "$C/ramfs/big"
	[ "$status" -eq 1 ]
	[[ "$output" == *'"cache":"present",'*'"huge_kb":61440,"aligned_kb":63488,'* ]]
	run_t "$WARM" --config "$C/warm.conf" "$C/ramfs/big"
	[ "$status" -eq 0 ]
	[[ "$output" == *"(made now, 62.0 of 62.0 MiB in 2 MiB pages, "* ]]
	want=$("$C/ramfs/big" loop 100000)
	run_t "$TIEXEC" -v "$C/ramfs/big" loop 100000
	[[ "$output" == *"(file 0.0, cache 62.0, thp 0.0)"* ]]
	[[ "$output" == *"$want"* ]]
}

@test "20 processes of one program hold its text once: one entry in shared memory, no copies" {
	warm "$C/ramfs/big" >/dev/null
	# What this file's own cache holds (not the machine's Shmem, which
	# any other tmpfs writer moves).
	used() { df --output=used -k "$C/text" | tail -1; }
	before=$(used)
	mkfifo "$BATS_TEST_TMPDIR/f"
	pids=()
	for i in $(seq 20); do
		"$TIEXEC" "$C/ramfs/big" wait <"$BATS_TEST_TMPDIR/f" >"$BATS_TEST_TMPDIR/out.$i" 2>&1 &
		pids+=($!)
	done
	exec {hold}>"$BATS_TEST_TMPDIR/f"
	for i in $(seq 20); do
		for _ in $(seq 600); do
			[ "$(cat "$BATS_TEST_TMPDIR/out.$i")" = ready ] && break
			sleep 0.05
		done
	done
	anon=0 pmd=0 win=0
	for p in "${pids[@]}"; do
		anon=$((anon + $(text_kb "$p" Anonymous)))
		pmd=$((pmd + $(text_kb "$p" ShmemPmdMapped "$C/text/")))
		win=$((win + $(window_kb "$p" ShmemPmdMapped)))
	done
	after=$(used)
	exec {hold}>&-
	for p in "${pids[@]}"; do wait "$p"; done
	echo "anonymous text ${anon} kB, PMD-mapped ${pmd} kB, libc's windows ${win} kB, the cache grew $((after - before)) kB" >&2
	[ "$anon" -eq 0 ]
	[ "$pmd" -eq $((20 * 62 * 1024)) ]
	# libc's read-only image too, from its window entry (made by the
	# same warm: the program needs libc), and ld.so's: one PMD each in
	# each.
	[ "$win" -eq $((20 * 2 * 2048)) ]
	[ "$after" -eq "$before" ] # the entry was there before: nothing per process
}

@test "a 32 MiB memory cgroup: a 64 MiB program runs from its entry, which is charged to whoever wrote it" {
	warm "$C/ramfs/big" >/dev/null
	cg_make $((32 << 20))
	in_cg() { run_t sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$CG" "$@"; }
	in_cg "$C/ramfs/big" loop 100000
	[ "$status" -eq 0 ]
	local want=$output
	in_cg "$TIEXEC" -v "$C/ramfs/big" loop 100000
	[ "$status" -eq 0 ] # not OOM-killed (137)
	[[ "$output" == *"'$C/ramfs/big': 62.0 of 64.0 MiB text on 2 MiB pages (file 0.0, cache 62.0, thp 0.0)"* ]]
	[[ "$output" == *"$want"* ]]
	# The group never held the text: its peak stays far below 62 MiB.
	local peak
	peak=$(cat "$CG/memory.max_usage_in_bytes")
	echo "peak $peak bytes"
	[ "$peak" -lt $((16 << 20)) ]
	# A copy is what the limit bounds.
	in_cg "$TIEXEC" -v --strategy=thp "$C/ramfs/big" loop 100000
	[ "$status" -eq 0 ]
	[[ "$output" == *"thp: the memory cgroup's limit (memory.limit_in_bytes) leaves no room for more copies"* ]]
}

@test "trust: a cache the user could write, a symbolic link, a non-tmpfs directory, a foreign entry: refused, the program runs" {
	warm "$C/ramfs/big" >/dev/null
	entry=$(entry_of "$C/ramfs/big")
	direct=$("$C/ramfs/big" loop 1000)
	# uid 65534's own directory, holding a copy of the entry under its name.
	U=$(mktemp -d /tmp/tiexec-cache-user.XXXXXX)
	cp "$C/text/$entry" "$U/"
	chown -R 65534:65534 "$U"
	# A symbolic link to the real cache.
	ln -s "$C/text" "$C/link"
	# A root-owned directory on a disk file system.
	D=$(mktemp -d /var/lib/tiexec-cache-test.XXXXXX)
	chmod 755 "$D"
	cp "$C/text/$entry" "$D/"
	# A tmpfs entry owned by uid 65534.
	mkdir -p "$C/small/text"
	mount -t tmpfs -o huge=always,mode=0755 tmpfs "$C/small/text"
	cp "$C/text/$entry" "$C/small/text/"
	chown 65534 "$C/small/text/$entry"
	for case in "$U|a directory on the way to the cache is" "$C/link|a symbolic link on the way to the cache" \
		"$D|the cache is not on a tmpfs" "$C/small/text|the entry is not owned by root"; do
		dir=${case%%|*} why=${case#*|}
		run_t setpriv --reuid=65534 --regid=65534 --clear-groups env TIEXEC_CACHE="$dir" "$C/tiexec" -v "$C/ramfs/big" loop 1000
		echo "$dir: $output" >&2
		[ "$status" -eq 0 ]
		[[ "$output" == *"'$C/ramfs/big': cache: $why"* ]]
		[[ "$output" != *"cache 62.0"* ]]
		[[ "$output" == *"$direct"* ]]
	done
	rm -rf "$U"
	# The user can neither add nor replace an entry.
	run setpriv --reuid=65534 --regid=65534 --clear-groups cp "$C/ramfs/big" "$C/text/x"
	[ "$status" -ne 0 ]
	run setpriv --reuid=65534 --regid=65534 --clear-groups mv "$C/text/$entry" "$C/text/y"
	[ "$status" -ne 0 ]
	# And as uid 65534 the real cache is used.
	run_t setpriv --reuid=65534 --regid=65534 --clear-groups "$C/tiexec" -v "$C/ramfs/big" loop 1000
	[[ "$output" == *"cache 62.0"* ]]
}

@test "a changed program finds no entry (its key), runs correctly, and --prune removes the stale entry; a running user keeps it" {
	cp "$FIXTURES/bigtext-pie" "$C/ramfs/big2"
	warm "$C/ramfs/big2" >/dev/null
	old=$(entry_of "$C/ramfs/big2")
	[ "$(cat "$C/text/$old.source")" = "$C/ramfs/big2" ]
	start "$TIEXEC" "$C/ramfs/big2"
	[ "$(text_kb "$pid" ShmemPmdMapped "$C/text/")" -eq $((62 * 1024)) ]
	touch "$C/ramfs/big2" # a new mtime and ctime: another key
	run_t "$TIEXEC" -v "$C/ramfs/big2" loop 1000
	[ "$status" -eq 0 ]
	[[ "$output" == *"cache: no entry for this file in $C/text (tiexec-warm makes one)"* ]]
	[[ "$output" == *"$("$C/ramfs/big2" loop 1000)"* ]]
	run_t "$WARM" --config "$C/warm.conf" --check "$C/ramfs/big2"
	[ "$status" -eq 1 ]
	[[ "$output" == *"not in the text cache (no entry)"* ]]
	n=$(ls "$C/text" | grep -vc "\.source$")
	[ -e "$C/text/$old.plan" ] # its plan record (it needs libc)
	run_t "$WARM" --config "$C/warm.conf" --prune
	[ "$status" -eq 0 ]
	[[ "$output" == *"$old: removed (its source changed: $C/ramfs/big2)"* ]]
	[[ "$output" == *"$old.plan: removed (its source changed: $C/ramfs/big2)"* ]]
	[ "$(ls "$C/text" | grep -vc "\.source$")" -eq $((n - 2)) ]
	[ ! -e "$C/text/$old.source" ]
	[ ! -e "$C/text/$old.plan.source" ]
	# The process that mapped it still runs from it, to the end.
	[ "$(text_kb "$pid" ShmemPmdMapped "(deleted)")" -eq $((62 * 1024)) ]
	stop
	rm "$C/ramfs/big2"
}

@test "a full cache: what did not fit is reported biggest first, and still runs" {
	S=$C/small-conf
	mkdir -p "$S"
	printf 'cache %s/tiny\ncache-size 8m\n' "$C" >"$S/warm.conf"
	run_t "$WARM" --config "$S/warm.conf" "$FX/libbl-lld.so" "$C/ramfs/big"
	[ "$status" -eq 1 ]
	[[ "$output" == *"the text cache is full (raise cache-size); not cached, biggest first: $C/ramfs/big (64.0 MiB), $FX/libbl-lld.so (16.0 MiB)"* ]]
	[ -z "$(ls "$C/tiny" | grep -v '\.window\|\.plan')" ] # no partial entry (libc's window and big's plan record fit)
	umount "$C/tiny"
	run_t env TIEXEC_CACHE="$C/tiny" "$TIEXEC" "$C/ramfs/big" loop 1000
	[ "$status" -eq 0 ]
	[ "$output" = "$("$C/ramfs/big" loop 1000)" ]
}

# Without cache-size, the cache tiexec-warm mounts holds a quarter of
# memory (a tmpfs's own default is half), and no more than tiexec-warm's
# memory cgroup has room for: its entries are charged there.
@test "no cache-size: a quarter of memory, within tiexec-warm's memory cgroup" {
	S=$C/dflt-conf
	mkdir -p "$S"
	printf 'cache %s/dflt\n' "$C" >"$S/warm.conf"
	run_t "$WARM" --config "$S/warm.conf" "$FX/libbl-lld.so"
	local kb quarter
	kb=$(df -k --output=size "$C/dflt" | tail -n 1)
	umount "$C/dflt"
	quarter=$(($(sed -n 's/^MemTotal: *\([0-9]*\) kB$/\1/p' /proc/meminfo) / 4))
	echo "cache ${kb} kB, a quarter of memory ${quarter} kB"
	[ "$kb" -le "$quarter" ]
	[ "$kb" -gt $((quarter - 2048)) ]
	cg_make $((96 << 20))
	run_t sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$CG" "$WARM" --config "$S/warm.conf" "$FX/libbl-lld.so"
	kb=$(df -k --output=size "$C/dflt" | tail -n 1)
	umount "$C/dflt"
	cg_remove
	echo "in a 96 MiB cgroup: cache ${kb} kB"
	[ "$kb" -le $((96 * 1024)) ]
	[ "$kb" -ge $((64 * 1024)) ]
}

@test "cache off in warm.conf: the page cache route as before, nothing mounted" {
	printf 'cache off\n' >"$C/off.conf"
	run_t "$WARM" --config "$C/off.conf" "$FX/libbl-lld.so"
	[[ "$output" != *"text cache"* ]]
	run_t env TIEXEC_CACHE= "$TIEXEC" -v "$FX/bl-lld" loop 1000
	[ "$status" -eq 0 ]
	# (The path itself, under /run/tiexec-cache-test.*, says "cache".)
	[[ "$output" != *"cache:"* && "$output" != *", cache "* ]]
}

# libc's window (common/textcache.h, interp/libplan.c, interp/libwindow.c):
# the plan puts libc where its read-only image ends on a 2 MiB boundary,
# the rest of that 2 MiB free, and the stage after ld.so maps libc's window
# entry there.  libc_ro_end LIBC: the end of its read-only image (its
# writable segment's first page), from readelf.
libc_ro_end() {
	local v
	v=$(readelf -lW "$1" | awk '$1 == "LOAD" && / RW / && !v { v = $3 } END { print v }')
	echo $((v - v % 4096))
}

@test "libc's window: tiexec-warm PROG makes its entry; each start maps it with one PMD, one page for all" {
	[ "$(uname -m)" = x86_64 ] || skip_unsupported "windows are for a page-aligned libc (x86-64); arm64's is in a reservation"
	local libc starts=200 pmd=0 bases direct
	libc=$(readlink -f /lib/x86_64-linux-gnu/libc.so.6)
	# Its read-only image fits in 2 MiB (1.81 MiB in Debian 12's).
	[ "$(libc_ro_end "$libc")" -le $((0x200000)) ]
	# No entry yet (earlier tests' warms of programs made one: gone): libc
	# is not placed at all (a window gains nothing).
	rm -f "$C"/text/*.window "$C"/text/*.window.source
	mkdir -p "$C/text" # a cache here (run alone, no earlier test made it): -v says what is missing
	run_t "$TIEXEC" -v /bin/ls /
	[[ "$output" != *"libc.so.6': planned"* ]]
	[[ "$output" == *"libc.so.6': no window: no window entry in the text cache (tiexec-warm PROG makes one)"* ]]
	run_t "$WARM" --config "$C/warm.conf" /bin/ls
	[ "$status" -eq 0 ]
	[[ "$output" == *"$libc: its read-only image (1."?" MiB) in a 2 MiB window entry of the text cache (made now, 2.0 MiB in memory)"* ]]
	run_t "$WARM" --config "$C/warm.conf" --check /bin/ls
	[ "$status" -eq 0 ]
	[[ "$output" == *"$libc: its read-only image ("*" MiB) in a 2 MiB window entry of the text cache (present"* ]]
	# Fidelity: the same output; -v says what the window costs.
	direct=$(ls -la /usr/lib)
	run --separate-stderr timeout 60 "$TIEXEC" -v ls -la /usr/lib
	[ "$status" -eq 0 ]
	same "$direct" "$output"
	[[ "$stderr" == *"libc.so.6': planned before ld.so: its read-only image in a 2 MiB window of its own, mapped from the text cache: one 2 MiB page shared by every process (its headers and read-only data executable)"* ]]
	# ld.so's too (tiexec maps it, and placed it for its window entry,
	# which the same warm made: interp/load.c).
	[[ "$stderr" == *"interpreter '/lib64/ld-linux-x86-64.so.2': its read-only image in a 2 MiB window of its own, mapped from the text cache: one 2 MiB page shared by every process (its headers and read-only data executable)"* ]]
	# And what planning cost, by the loader's own clock (scripts/bench
	# takes its median).
	[[ "$stderr" =~ "libraries planned before ld.so: "[0-9]+" requests replayed, 1 of 1 target held where it is wanted, in "[0-9]+" µs" ]]
	# 200 starts (cat needs libc only): the window at libc's start less
	# the residue, 2 MiB on one PMD; the base still random.  Each window
	# is the one whose next mapping is its library's: libc's writable
	# part follows its window directly (its read-only image ends on the
	# window's 2 MiB boundary), ld.so's follows its own.
	for i in $(seq $starts); do
		"$TIEXEC" /bin/cat /proc/self/smaps >"$BATS_TEST_TMPDIR/s"
		awk '
			/^[0-9a-f]+-[0-9a-f]+ / {
				split($1, a, "-")
				if (w && $NF ~ /\/libc\.so\.6$/ && a[1] == e && pmd == 2048) print base
				if (w && $NF ~ /\/ld-linux-x86-64\.so\.2$/ && a[1] == e && pmd == 2048) print "interp" >"/dev/stderr"
				w = index($0, ".window") > 0; if (w) { base = a[1]; e = a[2]; pmd = 0 }
				next
			}
			w && $1 == "ShmemPmdMapped:" { pmd = $2 }' "$BATS_TEST_TMPDIR/s" >>"$BATS_TEST_TMPDIR/bases" 2>>"$BATS_TEST_TMPDIR/interp"
	done
	pmd=$(grep -c . "$BATS_TEST_TMPDIR/bases")
	bases=$(sort -u "$BATS_TEST_TMPDIR/bases" | grep -c .)
	echo "# libc's window on one PMD, libc's data right above it, in $pmd of $starts starts, $bases distinct bases; ld.so's in $(grep -c interp "$BATS_TEST_TMPDIR/interp")" >&3
	[ "$pmd" -ge $((starts - 1)) ]
	[ "$bases" -ge $((starts - 10)) ]
	[ "$(grep -c interp "$BATS_TEST_TMPDIR/interp")" -eq "$starts" ]
	# The stage after ld.so places libraries around the window, never the
	# window as one (it is on a 2 MiB page already): bl-64k's 16 MiB
	# library (p_align 64 KiB) and libc after it are both planned.
	run --separate-stderr timeout 60 "$TIEXEC" -v "$FIXTURES/bl-64k" loop 1000
	[ "$status" -eq 0 ]
	[[ "$stderr" == *"libc.so.6': planned before ld.so: its read-only image in a 2 MiB window of its own, mapped"* ]]
	[[ "$stderr" != *".window'"* ]]
	# Where a page-aligned library of 2 MiB or more comes before libc
	# (lld's libbl-lld.so here; libstdc++ in every C++ program, clang-14's
	# libraries), the kernel places it from Linux 5.18, asking 2 MiB more
	# than its length: the plan replays it from its own file and keeps its
	# holds out of that span (interp/ldplan.c).  Before, the plan stopped
	# there and libc had no window (0 of 10 starts).  100 starts, each
	# read from outside while the program waits: the window on one PMD,
	# the base still random.
	run --separate-stderr timeout 60 "$TIEXEC" -v "$FX/bl-lld" loop 10
	[ "$status" -eq 0 ]
	[[ "$stderr" == *"libc.so.6': planned before ld.so: its read-only image in a 2 MiB window of its own, mapped"* ]]
	run timeout 300 python3 "$ROOT/tests/window-starts.py" "$TIEXEC" "$FX/bl-lld" 100
	read -r starts win bases <<<"$output"
	echo "# behind a kernel-placed 16 MiB library: libc's window on one PMD in $win of $starts starts, $bases distinct bases" >&3
	[ "$win" -ge $((starts - 1)) ]
	[ "$bases" -ge $((starts - 10)) ]
	# With no window asked for, nothing is said of one.
	run --separate-stderr timeout 60 "$TIEXEC" -v --no-windows "$FX/bl-lld" loop 10
	[[ "$stderr" != *"window"* ]]
	# Two processes map the same physical page (pagemap, as root).
	"$TIEXEC" /bin/sleep 30 &
	local p1=$!
	"$TIEXEC" /bin/sleep 30 &
	local p2=$!
	sleep 1
	frame() {
		python3 - "$1" <<-'PY'
			import struct, sys
			pid = sys.argv[1]
			for line in open(f"/proc/{pid}/maps"):  # libc's and ld.so's
			    if line.rstrip().endswith(".window"):
			        a = int(line.split("-")[0], 16)
			        with open(f"/proc/{pid}/pagemap", "rb") as f:
			            f.seek(a // 4096 * 8)
			            e = struct.unpack("<Q", f.read(8))[0]
			        print(e & ((1 << 55) - 1) if e >> 63 else "absent")
		PY
	}
	f1=$(frame "$p1") f2=$(frame "$p2")
	kill "$p1" "$p2"
	wait "$p1" "$p2" || true
	echo "# frames: $f1 $f2" >&3
	[ "$(grep -c '^[1-9][0-9]*$' <<<"$f1")" -eq 2 ]
	[ "$f1" = "$f2" ]
	# Off: --no-windows, TIEXEC_WINDOWS=0, a stamp's --no-windows: libc
	# as ld.so maps it.
	run_t "$TIEXEC" --no-windows /bin/cat /proc/self/maps
	[[ "$output" != *.window* ]]
	run_t env TIEXEC_WINDOWS=0 "$TIEXEC" /bin/cat /proc/self/maps
	[[ "$output" != *.window* ]]
	cp /bin/cat "$BATS_TEST_TMPDIR/cat"
	"$BUILD/stamp/tiexec-stamp" --no-windows "$BATS_TEST_TMPDIR/cat" >/dev/null
	run_t "$BUILD/stamp/tiexec-stamp" --check "$BATS_TEST_TMPDIR/cat"
	[[ "$output" == *" windows=no"* ]]
	run_t "$TIEXEC" "$BATS_TEST_TMPDIR/cat" /proc/self/maps
	[[ "$output" != *.window* ]]
	run_t "$TIEXEC" /bin/cat /proc/self/maps
	[[ "$output" == *.window* ]]
	# --prune keeps it while libc is unchanged.
	run_t "$WARM" --config "$C/warm.conf" --prune
	[ "$status" -eq 0 ]
	ls "$C"/text/*.window
}

# tiexec-warm's plan record (common/planrec.h): the walk of a program's
# libraries kept in the cache, so that a start checks each library up to
# the last it may place by one statx instead of opening and reading it.
# bl-64k: a 16 MiB library of p_align 64 KiB found through $ORIGIN, then
# libc.
@test "plan record: tiexec-warm PROG keeps the walk; starts check it; a changed library, directory or record is not used" {
	command -v strace >/dev/null || skip_unsupported "strace is not installed"
	local d=$C/rec rec n
	rm -rf "$d"
	mkdir -p "$d/other"
	cp "$FIXTURES/bl-64k" "$FIXTURES/libbl-64k.so" "$d/"
	# The same program in another directory (a link changes its ctime,
	# which the record's name holds: made before tiexec-warm runs).
	cp "$d/libbl-64k.so" "$d/other/"
	ln "$d/bl-64k" "$d/other/bl-64k"
	chmod -R a+rX "$d"
	run --separate-stderr timeout 60 "$TIEXEC" -v "$d/bl-64k" loop 10
	[ "$status" -eq 0 ]
	[[ "$stderr" == *"libbl-64k.so': planned before ld.so: it starts congruent"* ]]
	[[ "$stderr" == *" µs (ld.so's libraries read from their files)"* ]]
	run_t "$WARM" --config "$C/warm.conf" -v "$d/bl-64k"
	[ "$status" -eq 0 ]
	[[ "$output" == *"$d/bl-64k: the plan record of its 2 libraries in ld.so's order in the text cache (made now)"* ]]
	for f in "$C"/text/*.plan; do
		[ "$(cat "$f.source")" != "$d/bl-64k" ] || rec=$f
	done
	[ "$(stat -c %U:%a "$rec")" = root:444 ]
	run_t "$WARM" --config "$C/warm.conf" -v "$d/bl-64k"
	[[ "$output" == *"$d/bl-64k: the plan record of its 2 libraries in ld.so's order in the text cache (present)"* ]]
	# With it: planned as before; before ld.so (its first search of the
	# RUNPATH, glibc-hwcaps first) the loader opens no library to read
	# it (its walk opens them O_NONBLOCK), it asks statx.
	strace -f -e trace=openat,statx -o "$BATS_TEST_TMPDIR/st" "$TIEXEC" -v "$d/bl-64k" loop 10 \
		>/dev/null 2>"$BATS_TEST_TMPDIR/err"
	grep -q "libbl-64k.so': planned before ld.so: it starts congruent" "$BATS_TEST_TMPDIR/err"
	grep -q " µs (ld.so's libraries from tiexec-warm's plan record)" "$BATS_TEST_TMPDIR/err"
	before_ldso() {
		awk -v p="$1" '/glibc-hwcaps/ { exit } index($0, p) { n++ } END { print n + 0 }' "$BATS_TEST_TMPDIR/st"
	}
	[ "$(before_ldso "libbl-64k.so\", O_RDONLY|O_NONBLOCK")" = 0 ]
	[ "$(before_ldso "statx(AT_FDCWD, \"$d/libbl-64k.so\"")" = 1 ]
	# Every start of 50 placed from the record.
	n=0
	for i in $(seq 50); do
		"$TIEXEC" -v "$d/bl-64k" loop 10 2>&1 >/dev/null | grep -q "libbl-64k.so': planned before ld.so: it starts congruent" &&
			n=$((n + 1))
	done
	echo "# from the record: placed in $n of 50 starts" >&3
	[ "$n" -eq 50 ]
	# Through another directory: its RUNPATH says $ORIGIN, so the record
	# (made for $d) is not used.
	run --separate-stderr timeout 60 "$TIEXEC" -v "$d/other/bl-64k" loop 10
	[ "$status" -eq 0 ]
	[[ "$stderr" == *"plan record not used: made for the program in another directory (its search path says \$ORIGIN))"* ]]
	[[ "$stderr" == *"libbl-64k.so': planned before ld.so: it starts congruent"* ]]
	# A library changed since (a new file, as an upgrade writes it):
	# walked again, placed all the same.
	cp "$d/libbl-64k.so" "$d/new.so"
	mv "$d/new.so" "$d/libbl-64k.so"
	run --separate-stderr timeout 60 "$TIEXEC" -v "$d/bl-64k" loop 10
	[ "$status" -eq 0 ]
	[[ "$stderr" == *" µs (ld.so's libraries read from their files: one changed since tiexec-warm's plan record)"* ]]
	[[ "$stderr" == *"libbl-64k.so': planned before ld.so: it starts congruent"* ]]
	# warm makes it again; --prune removes a record whose program changed.
	run_t "$WARM" --config "$C/warm.conf" -v "$d/bl-64k"
	[[ "$output" == *"the plan record of its 2 libraries in ld.so's order in the text cache (made now)"* ]]
	# A record someone else could write is not used.
	chmod 666 "$rec"
	run --separate-stderr timeout 60 "$TIEXEC" -v "$d/bl-64k" loop 10
	[[ "$stderr" == *"plan record not used: the entry is writable by others than root)"* ]]
	chmod 444 "$rec"
	touch "$d/bl-64k"
	run_t "$WARM" --config "$C/warm.conf" --prune
	[[ "$output" == *"$(basename "$rec"): removed (its source changed: $d/bl-64k)"* ]]
	[ ! -e "$rec" ]
}

# The window where the loader's other placements are tested: as uid 65534
# (an ordinary user maps root's entry read-only), under MDWE (prctl and a
# seccomp filter like systemd's: the entry is mapped read+execute from a
# file, never made executable), and in a memory cgroup of 16 MiB (the page
# is the cache's, charged once to whoever wrote it).  Each: the window on
# one PMD and cat's output as directly.
@test "libc's window as uid 65534, under MDWE and in a small memory cgroup" {
	[ "$(uname -m)" = x86_64 ] || skip_unsupported "windows are for a page-aligned libc (x86-64)"
	run_t "$WARM" --config "$C/warm.conf" /bin/cat
	[ "$status" -eq 0 ]
	ls "$C"/text/*.window
	local direct
	direct=$(cat /etc/os-release)
	# win CMD...: ShmemPmdMapped (kB) of each window (libc's, ld.so's) in
	# cat's own smaps, cat run by CMD; cat's first output must be the
	# file's, as directly.
	win() {
		run_t "$@" /bin/cat /etc/os-release /proc/self/smaps
		[ "$status" -eq 0 ] || return 1
		[[ "$output" == "$direct"* ]] || return 1
		awk '/^[0-9a-f]+-[0-9a-f]+ / { w = index($0, ".window") > 0; next } w && $1 == "ShmemPmdMapped:" { printf "%s%s", s, $2; s = " " } END { print "" }' <<<"$output"
	}
	[ "$(win setpriv --reuid=65534 --regid=65534 --clear-groups "$C/tiexec")" = "2048 2048" ]
	if "$FIXTURES/mdwe" prctl /bin/true 2>/dev/null; then
		[ "$(win "$FIXTURES/mdwe" prctl "$C/tiexec")" = "2048 2048" ]
	elif [ "${CI:-}" = true ] && [ "$(printf '%s\n' 6.3 "$(uname -r | cut -d- -f1)" | sort -V | sed -n 1p)" = 6.3 ]; then
		false # PR_SET_MDWE is there from Linux 6.3
	fi
	[ "$(win "$FIXTURES/mdwe" seccomp "$C/tiexec")" = "2048 2048" ]
	cg_make $((16 << 20))
	[ "$(win sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$CG" "$C/tiexec")" = "2048 2048" ]
}

# #54 item 4: tiexec-stat says where libc's window is and why there is
# none: the table names the library a window (or any entry) holds, from the
# process's own mapping of that file; --check PID and PROG count it;
# --advise says it, or why not.
@test "tiexec-stat: libc's window named in the table, counted by --check, explained by --advise" {
	[ "$(uname -m)" = x86_64 ] || skip_unsupported "windows are for a page-aligned libc (x86-64); arm64's is in a reservation"
	local stat=$BUILD/stat/tiexec-stat libc w=$BATS_TEST_TMPDIR
	libc=$(readlink -f /lib/x86_64-linux-gnu/libc.so.6)
	run_t "$WARM" --config "$C/warm.conf" /bin/sleep
	ls "$C"/text/*.window
	cp /bin/sleep "$w/slp"
	"$BUILD/stamp/tiexec-stamp" "$w/slp" 2>/dev/null
	"$TIEXEC" "$w/slp" 30 &
	local p=$!
	sleep 1
	run "$stat" "$p"
	echo "$output"
	# Named by libc's own mapping in the process (ld.so's path for it).
	grep -E '^  0x[0-9a-f]+ +0x[0-9a-f]+ +r-xp +2\.0 +2\.0 +2\.0  /.*\.window \(text cache: the window of /.*libc\.so\.6\)$' <<<"$output"
	grep -E '^  0x[0-9a-f]+ +0x[0-9a-f]+ +r-xp +2\.0 +2\.0 +2\.0  /.*\.window \(text cache: the window of /.*ld-linux-x86-64\.so\.2\)$' <<<"$output"
	run "$stat" --check "$p"
	echo "$output"
	[ "$status" -eq 0 ]
	same "$p $w/slp: ok: 0.0 MiB of its text on 2 MiB pages, and 4.0 MiB of its libraries' (4.0 MiB of that: libc.so.6's and ld-linux-x86-64.so.2's read-only images in their 2 MiB windows)" "$output"
	kill "$p"
	wait "$p" || true
	# Without the window (--no-windows): no such words.
	"$TIEXEC" --no-windows "$w/slp" 30 &
	p=$!
	sleep 1
	run "$stat" "$p"
	[[ "$output" != *window* ]]
	run "$stat" --check "$p"
	echo "$output"
	[[ "$output" != *window* ]]
	kill "$p"
	wait "$p" || true

	# --advise: the window, or why none.
	run "$stat" --advise "$w/slp"
	echo "$output"
	grep -E "^  window: /.*libc\.so\.6: its read-only image \(1\.[0-9] MiB\) on one 2 MiB page of the text cache, shared by every process" <<<"$output"
	"$BUILD/stamp/tiexec-stamp" --no-windows "$w/slp" 2>/dev/null
	run "$stat" --advise "$w/slp"
	grep -E "^  window: /.*libc\.so\.6: none: its stamp says --no-windows$" <<<"$output"
	"$BUILD/stamp/tiexec-stamp" --windows "$w/slp" 2>/dev/null
	# --check PROG (a rule in a private binfmt_misc): the window is said,
	# and so is a missing entry, which tiexec-warm makes.
	local check='mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc || exit 90
		"$1/packaging/tiexec-binfmt" register --interpreter "$2" >/dev/null || exit 91
		"$1/stat/tiexec-stat" --check "$3"'
	run --separate-stderr timeout 60 unshare --user --map-root-user --mount bash -c "$check" _ "$BUILD" "$TIEXEC" "$w/slp"
	echo "$output"
	[ "$status" -ne 90 ] || skip_unsupported "no private binfmt_misc instance (needs Linux >= 6.7)"
	[ "$status" -eq 0 ]
	[[ "$output" == "$w/slp: ok; libc.so.6's read-only image (1."?" MiB) in a 2 MiB window; its own text stays on 4 KiB pages ("* ]]
	mkdir "$w/aside"
	mv "$C"/text/*.window* "$w/aside/"
	run --separate-stderr timeout 60 unshare --user --map-root-user --mount bash -c "$check" _ "$BUILD" "$TIEXEC" "$w/slp"
	mv "$w/aside/"* "$C/text/"
	echo "$output"
	[ "$status" -eq 1 ]
	[[ "$output" == "$w/slp: would run on 4 KiB pages: "*"; libc.so.6 has no window: no window entry in the text cache (tiexec-warm PROG makes one)" ]]
	run "$stat" --advise "$w/slp"
	grep -E "^  window: /.*libc\.so\.6: its read-only image" <<<"$output"

	# --prometheus: the windows' bytes and processes, and tiexec-warm's
	# window route for libc (configured through a program that needs it).
	printf 'cache %s\n/bin/sleep\n' "$C/text" >"$w/warm.conf"
	printf '#!/bin/sh\nexec "%s" --config "%s" "$@"\n' "$WARM" "$w/warm.conf" >"$w/warm"
	chmod +x "$w/warm"
	"$TIEXEC" "$w/slp" 30 &
	p=$!
	sleep 1
	run --separate-stderr env TIEXEC_WARM="$w/warm" "$stat" --prometheus
	kill "$p"
	wait "$p" || true
	echo "$output" | grep -E 'window'
	[ "$status" -eq 0 ]
	[ "$(awk '$1 == "tiexec_processes_window" { print $2 }' <<<"$output")" -ge 1 ]
	[ "$(awk '$1 == "tiexec_text_window_bytes" { print $2 }' <<<"$output")" -ge $((2 << 20)) ]
	grep -E "^tiexec_warm_text_bytes\{path=\"$libc\",route=\"window\",state=\"warm\"\} 1[0-9]{6}$" <<<"$output"
	! command -v promtool >/dev/null || promtool check metrics <<<"$output"
}

# scripts/hugeshare (#54's figure): the share of a program's user-space
# samples in text on 2 MiB pages, from perf's samples and what tiexec -v
# said it placed: nearly all of perfhot's, whose time is in its library's
# hot function, from the text cache; none run directly.
@test "scripts/hugeshare: perf samples in text on 2 MiB pages, through tiexec and directly" {
	command -v perf >/dev/null || skip_unsupported "perf is not installed (Debian: linux-perf)"
	warm "$FX/libperfhot-lld.so" >/dev/null
	run --separate-stderr "$ROOT/scripts/hugeshare" -- "$TIEXEC" "$FX/perfhot-lld" 1
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "${lines[0]}" =~ ^([0-9]+)\ of\ ([0-9]+)\ user-space\ samples\ of\ \'perfhot-lld\'\ in\ its\ program\'s\ and\ libraries\'\ text\ \(([0-9.]+)%\)\ on\ 2\ MiB\ pages(;\ .*)?$ ]]
	[ "${BASH_REMATCH[2]}" -ge 1000 ]
	[ "${BASH_REMATCH[1]}" -ge $((BASH_REMATCH[2] * 9 / 10)) ]
	run --separate-stderr "$ROOT/scripts/hugeshare" -- "$FX/perfhot-lld" 1
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "${lines[0]}" == "0 of "*" user-space samples of 'perfhot-lld' in its program's and libraries' text (0.0%) on 2 MiB pages"* ]]
	run "$ROOT/scripts/hugeshare" --comm nosuch -- "$FX/perfhot-lld" 0
	[ "$status" -eq 1 ]
	[[ "$output" == *"no user-space samples of processes named 'nosuch' in the text of files"* ]]
}

@test "perf and gdb name the functions that run from a cache entry" {
	command -v perf >/dev/null || skip_unsupported "perf is not installed (Debian: linux-perf)"
	command -v gdb >/dev/null || skip_unsupported "gdb is not installed"
	lib=$FX/libperfhot-lld.so
	warm "$lib" >/dev/null
	coproc P { exec "$TIEXEC" "$FX/perfhot-lld" 20; }
	cpid=$P_PID
	read -r -t 60 ready <&"${P[0]}"
	[ "$ready" = ready ]
	# The library's text is the entry's, and what of it runs is PMD-mapped
	# (the rest is left to fault on first touch).
	entry=$C/text/$(entry_of "$lib")
	[ "$(text_kb "$cpid" Size "$entry")" -ge 8192 ]
	pmd=$(text_kb "$cpid" ShmemPmdMapped "$entry")
	[ "$pmd" -ge 2048 ]
	[ "$pmd" -eq "$(text_kb "$cpid" Rss "$entry")" ]
	run_t perf record -q -e cpu-clock -o "$BATS_TEST_TMPDIR/perf.data" -p "$cpid" -- sleep 0.5
	[ "$status" -eq 0 ]
	top=$(timeout 60 perf report -i "$BATS_TEST_TMPDIR/perf.data" --stdio --sort sym 2>/dev/null |
		awk '!/^#/ && NF { sub(/%$/, "", $1); print $1, $NF; exit }')
	echo "perf: $top" >&2
	[[ "$top" =~ ^([0-9.]+)\ perfhot_spin$ ]]
	run_t gdb -nx -batch -p "$cpid" -ex 'bt 1' -ex 'break perfhot_spin' -ex continue -ex 'bt 1'
	echo "$output" >&2
	[[ "$output" == *"#0  "*"perfhot_spin ()"* ]]
	[[ "$output" == *"Breakpoint 1, "*"perfhot_spin ()"* ]]
	kill "$cpid"
	wait "$cpid" || true
}

@test "without TIEXEC_CACHE the loader looks at /run/tiexec/text, and -v says it is not there" {
	[ ! -e /run/tiexec/text ] || skip "this machine has a text cache at /run/tiexec/text"
	run_t env -u TIEXEC_CACHE "$TIEXEC" -v "$FX/bl-lld" loop 1000
	[ "$status" -eq 0 ]
	[[ "$output" == *"library '$FX/libbl-lld.so': cache: there is no cache directory (tiexec-warm makes it)"* ]]
	[ ! -e /run/tiexec/text ]
}
