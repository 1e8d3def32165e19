#!/bin/sh
# Runs inside a guest booted by scripts/kernels (busybox sh as /init's
# child): tiexec's checks on one file system, mounted at $1 with the test
# programs in $1/t.  Prints one line per result, "TX FS KEY VALUE...", for
# the host to collect; a check the kernel cannot do says "TX FS KEY n/a WHY".
fs=$1
d=$2/t
T=/tmp/$fs
mkdir -p "$T"
say() { echo "TX $fs $*"; }
# tiexec-stat knows the loader by its file (the installed one, or this):
# an ordinary user's process whose exe is $d/tiexec runs through tiexec.
export TIEXEC_LOADER="$d/tiexec"

# The text of one -v line: "X of Y MiB text on 2 MiB pages (file a, thp b)",
# or where pieces are contiguous blocks (16 KiB pages) "X of Y MiB text on
# 32 MiB pages, Z in 2 MiB contiguous blocks (file a, thp b)".
SUMMARY=' MiB text on [0-9]* MiB pages[^(]*('
placed() {
	sed -n "s/^tiexec: '[^']*': \([0-9.]* of [0-9.]*$SUMMARY[^)]*)\).*/\1/p" "$1" | head -1
}
lib_placed() {
	sed -n "s/^tiexec: '[^']*': library '[^']*': \([0-9.]* of [0-9.]*$SUMMARY[^)]*)\).*/\1/p" "$1" | head -1
}
# The first line of -v that is neither the summary nor about the text cache
# (section 7 has it; the interpreter's window is said before the summary):
# why something fell back.
why() { grep -v -e "$SUMMARY" -e "^tiexec: '[^']*': cache: " -e "^tiexec: '[^']*': interpreter '" "$1" | sed "s/^tiexec: '[^']*': //" | head -1; }
drop() { sync; echo 3 >/proc/sys/vm/drop_caches; }
ms() { sed -n 's/.*, \([0-9.]*\) ms$/\1/p' "$1" | head -1; }

# start CMD...: CMD wait (a bigtext program) in the background, until it
# is ready; its PID in $pid, its standard error in $T/start.err.  stop:
# lets it finish.
start() {
	rm -f "$T/fifo" "$T/rb.out"
	mkfifo "$T/fifo"
	"$@" wait <"$T/fifo" >"$T/rb.out" 2>"$T/start.err" &
	pid=$!
	exec 7>"$T/fifo"
	i=0
	while [ "$(cat "$T/rb.out")" != ready ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i + 1)); done
}
stop() {
	exec 7>&-
	wait $pid
}

# read_bytes CMD...: bytes the program's process read from disk by the
# time it waits.
read_bytes() {
	start "$@"
	sed -n 's/^read_bytes: //p' "/proc/$pid/io"
	stop
}

# anon_kb CMD...: KiB of anonymous memory in the program's executable
# mappings (private copies of text) while it waits.
anon_kb() {
	start "$@"
	awk '/^[0-9a-f]+-[0-9a-f]+ / { x = (substr($2, 3, 1) == "x"); next } x && /^Anonymous:/ { kb += $2 } END { print kb + 0 }' "/proc/$pid/smaps"
	stop
}

say kernel "$(uname -r)"

# 1. Fidelity: argv, environment, auxv, exit status, a signal.
"$d/probe-pie" a 'b c' '' >"$T/direct" 2>&1
"$d/tiexec" --min-text=0 "$d/probe-pie" a 'b c' '' >"$T/via" 2>&1
if cmp -s "$T/direct" "$T/via"; then say fidelity same; else say fidelity differs; diff "$T/direct" "$T/via" | head -5; fi
PROBE_EXIT=7 "$d/tiexec" --min-text=0 "$d/probe-pie" >/dev/null 2>&1
say exit-status "$?"
PROBE_SIGNAL=15 "$d/tiexec" --min-text=0 "$d/probe-pie" >/dev/null 2>&1
say signal-status "$?"
# Nothing of tiexec left mapped executable in the program (its final page
# goes through the munmap gadget): anonymous or memfd code, for a static
# program and (past the hook) a dynamic one.
say leftover "$({ "$d/tiexec" --min-text=0 /bin/busybox cat /proc/self/maps
	"$d/tiexec" --min-text=0 /usr/local/bin/bash -c 'cat /proc/$$/maps; true'; } |
	awk '$2 ~ /x/ && ($6 == "" || $6 ~ /memfd|tiexec/)' | wc -l)"

# 2. Text on 2 MiB pages per strategy, for a PIE (cold cache, then warm),
#    a static program and a program whose code is in a 16 MiB library.
for st in file auto thp; do
	drop
	"$d/tiexec" -v --strategy=$st "$d/big" loop 10 >/dev/null 2>"$T/cold"
	"$d/tiexec" -v --strategy=$st "$d/big" loop 10 >/dev/null 2>"$T/warm"
	say "pie-$st" "$(placed "$T/warm")"
	say "pie-$st-ms" "$(ms "$T/warm")"
	cat "$d/big" >/dev/null
	say "pie-$st-read" "$(read_bytes "$d/tiexec" --strategy=$st "$d/big")"
	say "pie-$st-anon-kb" "$(anon_kb "$d/tiexec" --strategy=$st "$d/big")"
	say "pie-$st-why" "$(why "$T/warm")"
done
cat "$d/big" >/dev/null
say direct-read "$(read_bytes "$d/big")"
"$d/tiexec" -v "$d/big-static" loop 10 >/dev/null 2>"$T/static"
say static-auto "$(placed "$T/static")"
drop
"$d/tiexec" -v "$d/bl" loop 10 >/dev/null 2>"$T/lib"
"$d/tiexec" -v "$d/bl" loop 10 >/dev/null 2>"$T/lib"
say lib-auto "$(lib_placed "$T/lib")"
say lib-auto-why "$(grep "library '[^']*libbl" "$T/lib" | grep -v "$SUMMARY" | sed "s/^tiexec: '[^']*': library '[^']*': //" | head -1)"

# musl (arm64): the same library stage through musl's dynamic linker, whose
# hook is at the program's entry (AT_ENTRY), not a preinit array.
if [ -x "$d/musl/mbl" ]; then
	say musl-direct "$("$d/musl/mbl" loop 10 2>&1)"
	"$d/tiexec" -v "$d/musl/mbl" loop 10 >"$T/musl.out" 2>"$T/musl"
	say musl "$(lib_placed "$T/musl") $(cat "$T/musl.out")"
fi

# 3. tiexec-warm on the PIE, after its cache was dropped.
drop
"$d/tiexec-warm" "$d/big" >"$T/warm.out" 2>&1
say warm "$(sed "s|^$d/||" "$T/warm.out" | head -1)"

# 4. binfmt_misc: the guest's own instance (per-namespace ones need 6.7).
if [ -w /proc/sys/fs/binfmt_misc/register ]; then
	"$d/tiexec-binfmt" register --interpreter "$d/tiexec" >"$T/reg" 2>&1 || cat "$T/reg"
	TIEXEC_VERBOSE=1 "$d/big-s" loop 10 >/dev/null 2>"$T/binfmt"
	say binfmt "$(placed "$T/binfmt")"
	cat "$T/binfmt"
	echo -1 >/proc/sys/fs/binfmt_misc/tiexec 2>/dev/null
else
	say binfmt n/a "binfmt_misc not mounted"
fi

# 5. An ordinary user (uid 65534).
if /usr/local/bin/setpriv --reuid=65534 --regid=65534 --clear-groups "$d/tiexec" -v "$d/big" loop 10 >/dev/null 2>"$T/user"; then
	say user "$(placed "$T/user")"
else
	say user failed "$(head -1 "$T/user")"
fi

# 5b. An ordinary user's forking server (#55 item 2; postgres's backends):
#     its program and its forked child, whose exe names the loader (no
#     opt-in), are named by root's tiexec-stat --check and --prometheus from
#     what the kernel maps, never from the loader's path.  Where the
#     program's entry and headers lie in copied or cached text (arm64's one
#     R+X segment), the program's file mapped beside it.
# fork_start PROG MODE: uid 65534 runs PROG (child-title, child-sparse)
# through tiexec; $pid is the server, $child its forked child, both ready.
# fork_stop ends both (EOF on their stdin).
fork_start() {
	rm -f "$T/fifo" "$T/fork.out"
	mkfifo "$T/fifo"
	/usr/local/bin/setpriv --reuid=65534 --regid=65534 --clear-groups "$d/tiexec" "$1" $2 \
		<"$T/fifo" >"$T/fork.out" 2>/dev/null &
	pid=$!
	exec 7>"$T/fifo"
	i=0
	while ! grep -q '^ready' "$T/fork.out" && [ $i -lt 600 ]; do sleep 0.05; i=$((i + 1)); done
	child=$(sed -n 's/^child //p' "$T/fork.out")
}
fork_stop() {
	exec 7>&-
	wait $pid
}
if [ -x "$d/tiexec-stat" ]; then
	fork_start "$d/big-s" child-title
	fc=
	for p in $pid $child; do
		fc="$fc$(TIEXEC_LOADER="$d/tiexec" "$d/tiexec-stat" --check $p 2>&1 | sed "s|^$p $d/||" | cut -c1-60); "
	done
	say fork-check "$fc"
	say fork-prom "$(TIEXEC_LOADER="$d/tiexec" "$d/tiexec-stat" --prometheus 2>/dev/null | grep '^tiexec_program_processes{' | sed "s|$d/||" | tr '\n' ' ')"
	fork_stop
fi
# 6. MemoryDenyWriteExecute where the kernel has it (6.3).
if "$d/mdwe" prctl true 2>/dev/null; then
	"$d/mdwe" prctl "$d/tiexec" -v --strategy=thp "$d/big" loop 10 >/dev/null 2>"$T/mdwe"
	say mdwe "$(placed "$T/mdwe")"
	say mdwe-why "$(why "$T/mdwe")"
else
	say mdwe n/a "PR_SET_MDWE needs Linux 6.3"
fi
# 7. The shared text cache (/run/tiexec/text, mounted by tiexec-warm):
#    entries where the page cache cannot hold 2 MiB folios, the page cache
#    where it can.  Then what a warm start gets, reads and costs against a
#    direct exec of the same program (medians of 31, or scripts/kernels
#    --runs, interleaved): a start
#    that runs one function (the loader's fixed cost) and one that runs 100
#    of them, spread over the text (what a start that does some work pays
#    for its text: 4 KiB faults directly, 2 MiB pages through tiexec).
mkdir -p /run
chmod 755 /run
# bl: its first library, libbl.so, is planned on arm64 (p_align 64 KiB), so
# tiexec-warm makes its entry when given the program.
"$d/tiexec-warm" "$d/big" "$d/big-static" "$d/libbl.so" "$d/bl" >"$T/cwarm" 2>&1
say cache-warm "$(sed "s|^$d/||" "$T/cwarm" | tr '\n' ';')"
"$d/tiexec" -v "$d/big" loop 10 >/dev/null 2>"$T/cpie"
say cache-pie "$(placed "$T/cpie")"
say cache-pie-anon-kb "$(anon_kb "$d/tiexec" "$d/big")"
say cache-pie-read "$(read_bytes "$d/tiexec" "$d/big")"
"$d/tiexec" -v "$d/big-static" loop 10 >/dev/null 2>"$T/cstatic"
say cache-static "$(placed "$T/cstatic")"
say cache-static-anon-kb "$(anon_kb "$d/tiexec" "$d/big-static")"
# 7b. A forked child of a program whose text the cache serves in 2 MiB
#     blocks (#55 item 7: postgres's backends on 16 KiB kernels), an
#     ordinary user's server.  Fork copies no page-table entry of a file
#     mapping, so the child maps the entry's text as it runs: parent and
#     child measured from outside (full blocks), and tiexec-stat --check
#     of each, once the child has run across all of its text
#     (child-title), and once it has run one function in each 2 MiB
#     (child-sparse: blocks mapped in part).
if [ -x "$d/blocks" ] && [ -x "$d/tiexec-stat" ]; then
	"$d/tiexec-warm" "$d/big-static-s" >/dev/null 2>&1
	fork_server() { # KEY MODE
		fork_start "$d/big-static-s" $2
		say "$1-blocks" "parent $("$d/blocks" $pid) child $("$d/blocks" $child)"
		fc=
		for p in $pid $child; do
			fc="$fc$("$d/tiexec-stat" --check $p 2>&1 | sed "s|^$p $d/||"); "
		done
		say "$1-check" "$fc"
		fork_stop
	}
	fork_server cache-fork child-title
	fork_server cache-sparse child-sparse
fi
# 7c. libc's window: tiexec-warm of big, which needs libc, made libc's
#     window entry; each start maps it over the 2 MiB the plan kept for
#     libc, on one PMD: "KB kB in N of M starts" (KB: ShmemPmdMapped of
#     the window, the least of them; where a PMD is larger than 2 MiB,
#     arm64's 16 KiB pages, the window's whole 2 MiB contiguous blocks,
#     blocks PID .window).  x86-64's libc is page-aligned, its image
#     ending on the window's top; arm64's is in a 64 KiB reservation,
#     starting 0x70000 above a 2 MiB boundary (Debian 12's).  For bl too,
#     whose 16 MiB library comes before libc (libc-window-lib): on
#     x86-64 page-aligned, placed by the kernel from 5.18; on arm64 a
#     reservation the plan places too.  libc-window-maps: in how many
#     starts the window was mapped at all.  Starts: tx_wstarts (5 unless
#     scripts/kernels --window-starts says).
wstarts=$(sed -n 's/.*tx_wstarts=\([0-9]*\).*/\1/p' /proc/cmdline)
windows() {
	local wins=0 wleast= w run=0 maps=0
	while [ $run -lt "${wstarts:-5}" ]; do
		run=$((run + 1))
		start "$d/tiexec" "$1"
		# libc's window: the window entry's mapping right below one of
		# libc's own (ld.so's window lies below ld.so's).
		lw=$(awk '/^[0-9a-f]+-[0-9a-f]+ / { split($1, a, "-"); if (w != "" && $NF ~ /\/libc\.so\.6$/ && a[1] == e) print w; w = ""; if ($NF ~ /\.window$/) { w = $NF; e = a[2] } }' "/proc/$pid/maps")
		w=0
		if [ -z "$lw" ]; then
			:
		elif [ -x "$d/blocks" ] && [ "$(sed -n '/^KernelPageSize:/{s/^KernelPageSize: *\([0-9]*\) kB/\1/p;q}' /proc/self/smaps)" != 4 ]; then
			w=$("$d/blocks" $pid "/${lw##*/}" | sed -n 's/.*blocks-kb=\([0-9]*\).*/\1/p')
		else
			w=$(awk -v p="$lw" '/^[0-9a-f]+-[0-9a-f]+ / { w = $NF == p; next } w && $1 == "ShmemPmdMapped:" { kb += $2 } END { print kb + 0 }' "/proc/$pid/smaps")
		fi
		[ -n "$lw" ] && maps=$((maps + 1))
		stop
		[ "${w:-0}" -gt 0 ] && wins=$((wins + 1))
		[ -n "$wleast" ] && [ "$wleast" -le "${w:-0}" ] || wleast=${w:-0}
	done
	echo "$wleast kB in $wins of ${wstarts:-5} starts" >"$T/win"
	echo "$maps of ${wstarts:-5} starts" >"$T/winmaps"
}
windows "$d/big"
say libc-window "$(cat "$T/win")"
say libc-window-maps "$(cat "$T/winmaps")"
windows "$d/bl"
say libc-window-lib "$(cat "$T/win")"
"$d/tiexec" -v "$d/big" loop 1 2>&1 >/dev/null | grep "libc.so.6'" >"$T/winwhy" || true
say libc-window-why "$(sed -n "1s/^tiexec: '[^']*': library '[^']*': //p" "$T/winwhy")"
# The interpreter's window (interp/load.c): what -v said of it.
"$d/tiexec" -v "$d/big" loop 1 2>&1 >/dev/null | grep "': interpreter '" >"$T/iwin" || true
say interp-window "$(sed -n "1s/^tiexec: '[^']*': interpreter '[^']*': //p" "$T/iwin")"
"$d/tiexec" -v "$d/bl" loop 10 >/dev/null 2>"$T/clib"
say cache-lib "$(lib_placed "$T/clib")"
say cache-lib-why "$(grep "library '[^']*libbl" "$T/clib" | grep -v "$SUMMARY" | sed "s/^tiexec: '[^']*': library '[^']*': //" | head -1)"
# Per start (tx_starts, 20 unless scripts/kernels --starts says): the
# 16 MiB library's text on PMDs shared by every process (from the page
# cache's 2 MiB folios or the text cache's entry) and its private copy,
# from the process's smaps: "G of N starts with >= 14 MiB on shared PMDs
# and < 1 MiB private; least M MiB, most P KiB private".
lib_pmds() { # PID NAME: "PMD_KB ANON_KB" over the library NAME's address range
	# One awk over maps (the library's range: its base, a mapping's start
	# less its offset, as the entry may cover its first pages) and smaps
	# (a shell loop over smaps costs seconds a start under TCG).
	awk -v lib="/$2" '
		function hex(s) { return ("0x" s) + 0 }
		function ends(s, t) { return length(s) >= length(t) && substr(s, length(s) - length(t) + 1) == t }
		FNR == NR {
			if (ends($6, lib)) {
				split($1, r, "-")
				if (lo == "") lo = hex(r[1]) - hex($3)
				hi = hex(r[2])
			}
			next
		}
		/^[0-9a-f]+-[0-9a-f]+ / {
			split($1, r, "-")
			x = lo != "" && hex(r[1]) >= lo && hex(r[1]) < hi && substr($2, 3, 1) == "x"
			next
		}
		x && ($1 == "FilePmdMapped:" || $1 == "ShmemPmdMapped:") { pmd += $2 }
		x && $1 == "Anonymous:" { anon += $2 }
		END { print pmd + 0, anon + 0 }' "/proc/$1/maps" "/proc/$1/smaps"
}
# arm64 with 4 KiB pages only: where the plan serves a 2 MiB entry (x86-64
# places the library itself from 6.1; 16 KiB kernels count blocks).
if [ "$(uname -m)" = aarch64 ] && [ "$(cat /sys/kernel/mm/transparent_hugepage/hpage_pmd_size)" = 2097152 ]; then
	nstarts=$(sed -n 's/.*tx_starts=\([0-9]*\).*/\1/p' /proc/cmdline)
	good=0 least= most=0 run=0
	while [ $run -lt "${nstarts:-20}" ]; do
		run=$((run + 1))
		start "$d/tiexec" "$d/bl"
		r=$(lib_pmds $pid libbl.so)
		pmd=${r% *} anon=${r#* }
		stop
		[ "$pmd" -ge $((14 * 1024)) ] && [ "$anon" -lt 1024 ] && good=$((good + 1))
		[ -n "$least" ] && [ "$least" -le "$pmd" ] || least=$pmd
		[ "$anon" -le "$most" ] || most=$anon
	done
	say cache-lib-plan "$good of ${nstarts:-20} starts with >= 14 MiB on shared PMDs and < 1 MiB private; least $((least / 1024)) MiB, most $most KiB private"
fi
# The same again with address-space randomisation off on both sides:
# TCG translates code again wherever it lands anew, which weighs on a
# randomly placed loader and ld.so at every start.  The whole loop runs
# under `mdwe no-aslr` (the personality is inherited), so that the timed
# execs are the program's and tiexec's alone.  The third time is the
# least a wrapper that execs the program pays: the program exec'd by a
# static program that does only that (xexec).
timed='
	med() { printf "%s\n" "$@" | sort -n | sed -n "$((($# + 1) / 2))p"; }
	d=$1 fs=$2 nr=$3 runs=$4
	for p in "$d/big" "$d/big-static"; do
		for n in 1 100; do
			x=() t=() f=()
			for ((i = 0; i < runs; i++)); do
				a=${EPOCHREALTIME/./}; "$p" loop $n >/dev/null; b=${EPOCHREALTIME/./}
				"$d/tiexec" "$p" loop $n >/dev/null; c=${EPOCHREALTIME/./}
				"$d/xexec" "$p" loop $n >/dev/null; e=${EPOCHREALTIME/./}
				x+=($((b - a))) t+=($((c - b))) f+=($((e - c)))
			done
			k=cache-start; [ $n = 1 ] || k=cache-run
			echo "TX $fs $k$nr-${p##*/} $(med "${t[@]}") $(med "${x[@]}") $(med "${f[@]}")"
		done
	done'
runs=$(sed -n 's/.*tx_runs=\([0-9]*\).*/\1/p' /proc/cmdline)
/usr/local/bin/bash -c "$timed" _ "$d" "$fs" "" "${runs:-31}"
"$d/mdwe" no-aslr /usr/local/bin/bash -c "$timed" _ "$d" "$fs" -nr "${runs:-31}"
n=0
while umount /run/tiexec/text 2>/dev/null && [ $n -lt 5 ]; do n=$((n + 1)); done
# 8. BTI (arm64 only): a BTI-marked static program reports the "bt" flag
#    of its entry's and its 2 MiB-aligned text's mappings, and how much of
#    the latter is on huge pages: directly, mapped by tiexec (the file
#    route, on ext4 4 KiB pages), and copied onto 2 MiB pages.
if [ -x "$d/bti" ]; then
	say bti-direct "$("$d/bti")"
	say bti-mapped "$("$d/tiexec" --strategy=file "$d/bti")"
	say bti-copied "$("$d/tiexec" --strategy=thp "$d/bti")"
fi
# 8b. Contiguous blocks, where a PMD is larger than the 2 MiB piece (arm64
#     with 16 KiB pages: 32 MiB): what tiexec said, and what
#     tests/fixtures/arm64/blocks.c measures from outside (smaps' PMDs;
#     2 MiB pieces of one folio, contiguous and aligned, by pagemap and
#     kpageflags, PMD pieces included).  With the kernel's default THP
#     settings (2 MiB anonymous folios off: PMD pieces only), then with
#     hugepages-2048kB/enabled "always", as root and as uid 65534 (who
#     cannot read frame numbers: "not measured").
if [ -x "$d/blocks" ] && [ "$(cat /sys/kernel/mm/transparent_hugepage/hpage_pmd_size)" -gt 2097152 ]; then
	m=/sys/kernel/mm/transparent_hugepage/hugepages-2048kB/enabled
	was=$(sed 's/.*\[\(.*\)\].*/\1/' $m)
	start "$d/tiexec" -v "$d/big-static"
	say blocks-default "$(placed "$T/start.err") / $("$d/blocks" $pid)"
	say blocks-default-why "$(sed -n "s/^tiexec: '[^']*': \(thp: .*\)/\1/p" "$T/start.err" | head -1)"
	stop
	# tiexec-stat --check of a stamped static program: PMDs and blocks
	# together, measured; as uid 65534 it cannot tell.
	check() { # KEY [setpriv...]
		local k=$1
		shift
		start "$@" "$d/tiexec" "$d/big-static-s"
		"$@" "$d/tiexec-stat" --check $pid >"$T/check" 2>&1
		cs=$?
		say "$k" "$(sed "s|^$pid $d/||" "$T/check"), status $cs"
		stop
	}
	check check-default
	# --advise with those defaults: a copy holds the whole 32 MiB piece
	# alone, and says why.
	say advise-default "$("$d/tiexec-stat" --advise "$d/big-static" | sed -n 's/^  thp *//p' | tr -s ' ')"
	# ... and what turning 2 MiB folios on gives (#55 item 9); "madvise"
	# is enough for tiexec's copies, which ask with MADV_HUGEPAGE.
	say advise-gain "$("$d/tiexec-stat" --advise "$d/big-static" | sed -n 's/^  2 MiB folios: //p')"
	echo madvise >$m
	start "$d/tiexec" -v "$d/big-static"
	say blocks-madvise "$(placed "$T/start.err") / $("$d/blocks" $pid)"
	stop
	echo always >$m
	start "$d/tiexec" -v "$d/big-static"
	say blocks-static "$(placed "$T/start.err") / $("$d/blocks" $pid)"
	# tiexec-stat's totals: PMDs and blocks, as root and as uid 65534.
	total() { sed -n 's/.*"total":{\(.*\)}}$/\1/p' | tr , '\n' | grep -e '^"huge_kb"' -e '^"blocks_kb"' | tr '\n' ' '; }
	say blocks-stat "$("$d/tiexec-stat" --json $pid | total)"
	# --prometheus: the copy's PMD and its blocks, by way.
	prom() { grep -e '^tiexec_text_huge_bytes{way="copy"}' -e '^tiexec_text_blocks_bytes{way="copy"}' -e '^tiexec_processes_blocks_unmeasured' | tr '\n' ' '; }
	say blocks-prom "$("$d/tiexec-stat" --prometheus | prom)"
	# The same under tiexec-metrics.service's capability set, which has
	# no CAP_SYS_ADMIN: the blocks are not measured, and the process
	# counts as unmeasured, not as short, with no least (#55 item 3).
	perprog() { grep -e '^tiexec_program_processes_short{' -e '^tiexec_program_processes_unmeasured{' -e '^tiexec_program_text_huge_min_bytes{' | sed "s|$d/||" | tr '\n' ' '; }
	say blocks-prom-unit "$(/usr/local/bin/setpriv --bounding-set -all,+sys_ptrace,+dac_read_search "$d/tiexec-stat" --prometheus 2>/dev/null | perprog)"
	stop
	# tiexec-warm under tiexec-warm.service's capability set: an entry
	# whose blocks it cannot measure is kept ("present"), not made again
	# at every run, and the run succeeds.
	"$d/tiexec-warm" "$d/big-static" >/dev/null 2>&1
	for k in 1 2; do
		/usr/local/bin/setpriv --bounding-set -all,+dac_read_search,+sys_ptrace,+fowner "$d/tiexec-warm" "$d/big-static" >"$T/uwarm" 2>&1
		ws=$?
	done
	say warm-unit "$(sed "s|^$d/||" "$T/uwarm" | tr '\n' ' ')status $ws"
	n=0
	while umount /run/tiexec/text 2>/dev/null && [ $n -lt 5 ]; do n=$((n + 1)); done
	check check-static
	check check-user /usr/local/bin/setpriv --reuid=65534 --regid=65534 --clear-groups
	start "$d/tiexec" -v "$d/big"
	say blocks-pie "$(placed "$T/start.err") / $("$d/blocks" $pid)"
	stop
	start /usr/local/bin/setpriv --reuid=65534 --regid=65534 --clear-groups "$d/tiexec" -v "$d/big-static"
	say blocks-user "$(placed "$T/start.err") / $("$d/blocks" $pid)"
	say blocks-stat-user "$(/usr/local/bin/setpriv --reuid=65534 --regid=65534 --clear-groups "$d/tiexec-stat" --json $pid | total)"
	say blocks-prom-user "$(/usr/local/bin/setpriv --reuid=65534 --regid=65534 --clear-groups "$d/tiexec-stat" --prometheus 2>/dev/null | prom)"
	stop
	"$d/tiexec" -v "$d/bl" loop 10 >/dev/null 2>"$T/lib"
	say blocks-lib "$(lib_placed "$T/lib")"
	if [ -x "$d/llvmuse" ]; then
		"$d/tiexec" -v "$d/llvmuse" >"$T/llvm.out" 2>"$T/llvm"
		say blocks-llvm "$(sed -n "s/^tiexec: '[^']*': library '[^']*libLLVM[^']*': \([0-9.]* of [0-9.]*$SUMMARY[^)]*)\).*/\1/p" "$T/llvm" | head -1) $(cat "$T/llvm.out")"
	fi
	echo "$was" >$m
fi
# Where ld.so puts the 16 MiB library, modulo 2 MiB, over 20 direct starts:
# how many entry layouts would serve a kernel that does not align it.
: >"$T/bases"
for run in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
	start "$d/bl"
	a=$(awk '$6 ~ /libbl\.so$/ && $3 == "00000000" { split($1, r, "-"); print r[1]; exit }' "/proc/$pid/maps")
	stop
	[ -n "$a" ] && echo $((0x$a % 2097152)) >>"$T/bases"
done
say lib-bases "$(sort -u "$T/bases" | wc -l) distinct of $(wc -l <"$T/bases"), $(grep -cx 0 "$T/bases") aligned"
# The same through tiexec, which plans where ld.so maps the program's first
# library (interp/libplan.c): how many of 20 starts put it on a 2 MiB
# boundary, and how many distinct bases it kept (the plan chooses only the
# residue).  The base is a file mapping's start less its offset: the first
# piece may be a copy now.
: >"$T/bases"
: >"$T/full"
for run in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
	start "$d/tiexec" "$d/bl"
	awk '$6 ~ /libbl\.so$/ { split($1, r, "-"); print r[1], $3; exit }' "/proc/$pid/maps" >"$T/first"
	stop
	read -r a o <"$T/first" && echo $((0x$a - 0x$o)) >>"$T/full"
done
while read -r a; do echo $((a % 2097152)); done <"$T/full" >"$T/bases"
say lib-plan "$(sort -u "$T/full" | wc -l) distinct of $(wc -l <"$T/full"), $(grep -cx 0 "$T/bases") aligned"
# 9. Malformed and odd files (arm64, where the bats suite cannot run them):
#    tests/fixtures/mkbad.c's corpus for this machine, made here and checked
#    as tests/30-malformed.bats does, each key "N files, W wrong" and what
#    differs by name:
#    - corpus-good: the templates exit 42 directly and through tiexec;
#    - corpus-bad: tiexec refuses each with status 126 and one line
#      "tiexec: 'PATH': ..." (wrong otherwise), its message as MANIFEST says
#      ("other message": not); "direct ran": files this kernel runs
#      directly;
#    - corpus-same: tiexec is never killed or stuck where a direct exec is
#      not (wrong otherwise); "differ": files where status or output are
#      not a direct exec's.
if [ -x "$d/mkbad" ]; then
	C=/tmp/corpus-$fs
	"$d/mkbad" "$C" "$(uname -m)" >/dev/null 2>&1
	/usr/local/bin/bash -c '
		d=$1 C=$2 fs=$3 out=/tmp/corpus-$fs.out
		run() { st=0; timeout 60 "$@" >"$out" 2>&1 </dev/null || st=$?; }
		n=0 bad=()
		while read -r name; do
			n=$((n + 1))
			run "$C/$name"; a=$st
			run "$d/tiexec" --min-text=0 "$C/$name"
			[ "$a" = 42 ] && [ "$st" = 42 ] && [ ! -s "$out" ] || bad+=("$name")
		done <"$C/GOOD"
		echo "TX $fs corpus-good $n files, ${#bad[@]} wrong: ${bad[*]}"
		n=0 bad=() other=() ran=()
		while IFS=$'"'"'\t'"'"' read -r name want; do
			n=$((n + 1))
			run "$d/tiexec" --min-text=0 "$C/$name"
			if [ "$st" != 126 ] || [ "$(wc -l <"$out")" != 1 ] || ! grep -q "^tiexec: '"'"'$C/$name'"'"': " "$out"; then
				bad+=("$name")
			elif ! printf "%s\n" "tiexec: '"'"'$C/$name'"'"': $want" | cmp -s - "$out"; then
				other+=("$name")
			fi
			run "$d/xexec" "$C/$name"
			[ "$st" = 126 ] || [ "$st" = 127 ] || [ "$st" -gt 128 ] || ran+=("$name")
		done <"$C/MANIFEST"
		echo "TX $fs corpus-bad $n files, ${#bad[@]} wrong: ${bad[*]}; other message: ${other[*]}; direct ran: ${ran[*]}"
		n=0 bad=() differ=()
		while IFS=$'"'"'\t'"'"' read -r name _ _; do
			n=$((n + 1))
			run "$d/xexec" "$C/$name"; dst=$st dout=$(cat "$out")
			run "$d/tiexec" --min-text=0 "$C/$name"; tout=$(cat "$out"); lines=$(wc -l <"$out")
			if { [ "$st" -gt 128 ] || [ "$st" = 124 ]; } && [ "$st" != "$dst" ]; then
				bad+=("$name")
			elif [ "$dst" -eq 126 ] || [ "$dst" -eq 127 ]; then
				[ "$st" -eq "$dst" ] && [ "$lines" -eq 1 ] && [[ $tout == "tiexec: '"'"'"* ]] || differ+=("$name")
			elif [ "$dst" -gt 128 ] && [ "$st" -eq 126 ] && [ "$lines" -eq 1 ]; then
				:
			elif [ "$st" -ne "$dst" ] || [ "$tout" != "$dout" ]; then
				differ+=("$name")
			fi
		done <"$C/SAME"
		echo "TX $fs corpus-same $n files, ${#bad[@]} wrong: ${bad[*]}; differ: ${differ[*]}"
	' _ "$d" "$C" "$fs"
fi
# 10. A real program (arm64): one whose code is Debian's libLLVM, directly
#     and through tiexec (what its library stage placed of libLLVM's text;
#     private memory of the text mappings while it waits).
if [ -x "$d/llvmuse" ]; then
	say llvm-direct "$("$d/llvmuse" 2>&1 | head -1)"
	"$d/tiexec" -v "$d/llvmuse" >"$T/llvm.out" 2>"$T/llvm"
	say llvm "$(sed -n "s/^tiexec: '[^']*': library '[^']*libLLVM[^']*': \([0-9.]* of [0-9.]*$SUMMARY[^)]*)\).*/\1/p" "$T/llvm" | head -1) $(cat "$T/llvm.out")"
	say llvm-anon-kb "$(anon_kb "$d/tiexec" "$d/llvmuse")"
	# After tiexec-warm llvmuse: libLLVM, planned after libz (p_align
	# 64 KiB), so its entry serves the start: no private copy.  4 KiB
	# pages only (on 16 KiB, section 8b counts blocks).
	if [ "$(cat /sys/kernel/mm/transparent_hugepage/hpage_pmd_size)" = 2097152 ]; then
		"$d/tiexec-warm" "$d/llvmuse" >"$T/lwarm" 2>&1
		"$d/tiexec" -v "$d/llvmuse" >"$T/llvm.out" 2>"$T/llvm"
		say llvm-cache "$(sed -n "s/^tiexec: '[^']*': library '[^']*libLLVM[^']*': \([0-9.]* of [0-9.]*$SUMMARY[^)]*)\).*/\1/p" "$T/llvm" | head -1) $(cat "$T/llvm.out")"
		start "$d/tiexec" "$d/llvmuse"
		say llvm-cache-pmds "$(lib_pmds $pid libLLVM-14.so.1)"
		stop
		n=0
		while umount /run/tiexec/text 2>/dev/null && [ $n -lt 5 ]; do n=$((n + 1)); done
	fi
fi
# 11. tiexec-trace (arm64, where the bats suite cannot run it): its CO-RE
#     reads against this kernel's BTF, and the loader's USDT probes: one
#     start of the 64 MiB PIE through tiexec, recorded with what it placed.
if [ -x "$d/tiexec-trace" ]; then
	if [ -e /sys/kernel/btf/vmlinux ]; then
		"$d/tiexec-trace" --json --duration 120 --loader "$d/tiexec" >"$T/trace.out" 2>"$T/trace.err" &
		tp=$!
		i=0
		while ! grep -qs '^tiexec-trace: tracing' "$T/trace.err" && kill -0 $tp 2>/dev/null && [ $i -lt 600 ]; do
			sleep 0.1
			i=$((i + 1))
		done
		sh -c 'echo $$ >'"$T/trace.pid"'; exec "$0" "$1" loop 1' "$d/tiexec" "$d/big" >/dev/null
		kill -INT $tp
		wait $tp
		tst=$?
		line=$(grep "\"pid\":$(cat "$T/trace.pid")," "$T/trace.out" | head -1)
		say trace "status $tst, $(grep -c '"pid"' "$T/trace.out") events; $(echo "$line" | grep -o '"outcome":"[a-z]*"\|"huge_bytes":[0-9]*\|"text_bytes":[0-9]*' | tr '\n' ' ')"
		[ -n "$line" ] || head -3 "$T/trace.err"
	else
		say trace n/a "no BTF (/sys/kernel/btf/vmlinux)"
	fi
fi
say done 1
