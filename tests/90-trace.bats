#!/usr/bin/env bats
# bpf/tiexec-trace: the eBPF recorder.  Each test starts the tracer in the
# background on $TIEXEC (--loader), waits for its "tiexec-trace: tracing"
# line, runs programs, stops it with a signal and reads its JSON lines.
# The loader traced is a private copy of $TIEXEC ($LOADER): a rebuild of
# $TIEXEC while the tests run (a new inode) cannot disturb them, and other
# programs' tiexec execs do not show up; still, every assertion picks the
# events by pid or ppid.
# binfmt_misc registrations happen only in a private binfmt_misc instance
# (a fresh user + mount namespace, Linux >= 6.7), never in the machine's.
bats_require_minimum_version 1.5.0
load test_helper

TRACE=$BUILD/bpf/tiexec-trace
THP=/sys/kernel/mm/transparent_hugepage/enabled
BM=/proc/sys/fs/binfmt_misc

setup_file() {
	local t=$BATS_FILE_TMPDIR
	[ -e "$THP" ] && cat "$THP" >"$t/thp-enabled"
	mkdir "$t/m" "$t/bin"
	cp "$TIEXEC" "$t/bin/tiexec"
	# A marked copy (byte 70 |= 0x40: p_flags of program header 0).
	cp "$FIXTURES/probe-pie" "$t/m/probe-pie"
	printf '\x40' | dd of="$t/m/probe-pie" bs=1 seek=70 conv=notrunc status=none
	# A loader without USDT probes.
	objcopy --remove-section .note.stapsdt "$t/bin/tiexec" "$t/tiexec-noprobes" 2>/dev/null || :
	# bl: a PIE whose 16 MiB of code is in libbl.so beside it; nolib/bl
	# the same program without its library (ld.so exits 127).
	mkdir "$t/lib" "$t/nolib"
	"$ROOT/tests/fixtures/gentext.sh" "$t/lib/bl" 16 lib 2>/dev/null
	cp "$t/lib/bl" "$t/nolib/bl"
}

setup() {
	[ -x "$TRACE" ] || skip_unsupported "tiexec-trace is not built (meson configure -Dbpf=enabled; needs clang, bpftool, libbpf-dev)"
	[ "$(id -u)" = 0 ] || skip_unsupported "needs root to load eBPF programs"
	[ -e /sys/kernel/btf/vmlinux ] || skip_unsupported "the kernel has no BTF"
	O=$BATS_TEST_TMPDIR
	LOADER=$BATS_FILE_TMPDIR/bin/tiexec
	export LOADER
	TRACE_PID=
	S=
}

teardown() {
	[ -z "${S:-}" ] || rm -rf "$S"
	if [ -n "${TC:-}" ]; then
		mountpoint -q "$TC/text" && umount "$TC/text"
		rm -rf "$TC"
	fi
	if [ -n "${TRACE_PID:-}" ] && kill -0 "$TRACE_PID" 2>/dev/null; then
		kill -KILL "$TRACE_PID" 2>/dev/null || :
		wait "$TRACE_PID" 2>/dev/null || :
	fi
	if [ -s "$BATS_FILE_TMPDIR/thp-enabled" ]; then
		sed -n 's/.*\[\(.*\)\].*/\1/p' "$BATS_FILE_TMPDIR/thp-enabled" >"$THP" 2>/dev/null || :
	fi
}

# start_trace [ARGS...]: the tracer in the background (stdout $O/out, stderr
# $O/err), once it is ready.  --duration bounds it if a test dies.
start_trace() {
	# The files of an earlier tracer go first: its "tracing" line would
	# otherwise pass the wait below before this one has even started.
	rm -f "$O/out" "$O/err"
	"$TRACE" --duration 120 "$@" >"$O/out" 2>"$O/err" 3>&- &
	TRACE_PID=$!
	local i
	for ((i = 0; i < 300; i++)); do
		grep -qs '^tiexec-trace: tracing' "$O/err" && return 0
		kill -0 "$TRACE_PID" 2>/dev/null || break
		sleep 0.1
	done
	echo "the tracer did not start:" >&2
	cat "$O/err" >&2
	return 1
}

# stop_trace [SIGNAL]: stops it; it must exit 0.
stop_trace() {
	local st=0
	kill "-${1:-INT}" "$TRACE_PID"
	wait "$TRACE_PID" || st=$?
	TRACE_PID=
	if [ "$st" -ne 0 ]; then
		echo "the tracer exited with $st:" >&2
		cat "$O/err" >&2
		return 1
	fi
}

# events_of KEY VALUE: the JSON lines with "KEY":VALUE (a number).
events_of() {
	grep -E "\"$1\":$2[,}]" "$O/out" || :
}

# field NAME LINE: a field of one JSON line (strings without their quotes).
field() {
	sed -n -E 's/.*"'"$1"'":("([^"\\]|\\.)*"|[^,}]*).*/\1/p' <<<"$2" | sed -E 's/^"(.*)"$/\1/'
}

# libs_of LINE: the objects of a JSON line's "libs" array, one a line.
libs_of() {
	sed -n -E 's/.*"libs":\[(.*)\],"libs_us".*/\1/p' <<<"$1" | sed 's/},{/}\n{/g'
}

# libs_of_start FILE: the "libs" objects of the start whose pid FILE holds.
libs_of_start() {
	libs_of "$(events_of pid "$(first_line "$1")")"
}

# first_line FILE: the pid a command printed first.
first_line() {
	head -n 1 "$1"
}

@test "trace: as nobody, says it needs root and exits 1" {
	command -v setpriv >/dev/null || skip_unsupported "setpriv (util-linux) is not installed"
	run_t setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all "$TRACE" --loader "$LOADER"
	[ "$status" -eq 1 ]
	same "tiexec-trace: needs root (or CAP_BPF and CAP_PERFMON) to load eBPF programs" "$output"
}

@test "trace: usage errors exit 2" {
	run_t "$TRACE" --duration x
	[ "$status" -eq 2 ]
	[[ "$output" == *"--duration: not a positive number of seconds: x"* ]]
	run_t "$TRACE" --loader "$O/missing" --duration 1
	[ "$status" -eq 1 ]
	same "tiexec-trace: $O/missing: No such file or directory" "$output"
	# "Usage:", as every other tiexec tool says it.
	run_t "$TRACE" --help
	[ "$status" -eq 0 ]
	[[ "${lines[0]}" == "Usage: tiexec-trace [--json]"* ]]
}

@test "trace: command-line execs: one event each, with path, pid and huge bytes; none for direct execs" {
	start_trace --json --loader "$LOADER"
	sh -c 'echo $$; exec "$LOADER" "$FIXTURES/bigtext-pie" loop 1' >"$O/big"
	sh -c 'echo $$; exec "$LOADER" --min-text=0 "$FIXTURES/probe-pie"' >"$O/small"
	sh -c 'echo $$; exec "$FIXTURES/probe-pie"' >"$O/direct"
	stop_trace INT
	local big small direct line
	big=$(first_line "$O/big") small=$(first_line "$O/small") direct=$(first_line "$O/direct")

	[ "$(events_of pid "$big" | wc -l)" -eq 1 ]
	line=$(events_of pid "$big")
	[ "$(field program "$line")" = "$FIXTURES/bigtext-pie" ]
	[ "$(field via "$line")" = command-line ]
	[ "$(field outcome "$line")" = loaded ]
	[ "$(field uid "$line")" = 0 ]
	[ "$(field huge_bytes "$line")" -gt 0 ]
	[ "$(field text_bytes "$line")" -ge $((60 << 20)) ]
	[ $(($(field huge_bytes "$line") + $(field small_bytes "$line"))) -eq "$(field text_bytes "$line")" ]
	[ "$(field note "$line")" = null ]

	[ "$(events_of pid "$small" | wc -l)" -eq 1 ]
	line=$(events_of pid "$small")
	[ "$(field program "$line")" = "$FIXTURES/probe-pie" ]
	[ "$(field outcome "$line")" = loaded ]
	[ "$(field strategy "$line")" = auto ]
	[ "$(field huge_bytes "$line")" -eq 0 ]
	[ "$(field text_bytes "$line")" -gt 0 ]

	[ -z "$(events_of pid "$direct")" ]
	tail -n 1 "$O/out" | grep -qE '^\{"dropped":[0-9]+\}$'
}

@test "trace: the table: header and a row in MiB and ms" {
	start_trace --loader "$LOADER"
	sh -c 'echo $$; exec "$LOADER" "$FIXTURES/bigtext-pie" loop 1' >"$O/big"
	stop_trace TERM
	local big
	big=$(first_line "$O/big")
	same "TIME      PID     UID   VIA          STRATEGY    HUGE      4K       LOADER  PROGRAM (NOTE)" \
		"$(head -n 1 "$O/out")"
	grep -E "^[0-9]{2}:[0-9]{2}:[0-9]{2}  $big +0 +command-line +[a-z:]+ +[0-9]+\.[0-9]MiB +([0-9]+\.[0-9]MiB|<0\.1MiB|0) +[0-9]+\.[0-9]ms +${FIXTURES//./\\.}/bigtext-pie$" "$O/out"
	grep -qE '^tiexec-trace: [0-9]+ events, 0 dropped$' "$O/err"
}

@test "trace: THP set to never with --strategy=thp: the fallback reason (machine-wide THP set, restored)" {
	[ -w "$THP" ] || skip_unsupported "cannot change $THP"
	start_trace --json --loader "$LOADER"
	echo never >"$THP"
	sh -c 'echo $$; exec "$LOADER" --strategy=thp "$FIXTURES/bigtext-pie" loop 1' >"$O/big"
	sed -n 's/.*\[\(.*\)\].*/\1/p' "$BATS_FILE_TMPDIR/thp-enabled" >"$THP"
	stop_trace INT
	local line
	line=$(events_of pid "$(first_line "$O/big")")
	[ "$(wc -l <<<"$line")" -eq 1 ]
	[ "$(field strategy "$line")" = thp ]
	[ "$(field huge_bytes "$line")" -eq 0 ]
	[[ "$(field note "$line")" == "fallback: thp: transparent huge pages are disabled"* ]]
}

@test "trace: binfmt_misc (a private registration): the event says binfmt" {
	unshare --user --map-root-user --mount sh -c "mount -t binfmt_misc binfmt_misc $BM && test -e $BM/register" \
		|| skip_unsupported "no private binfmt_misc instance (Linux >= 6.7 with user namespaces)"
	start_trace --json --loader "$LOADER"
	(cd "$BATS_FILE_TMPDIR/m" && unshare --user --map-root-user --mount sh -c '
		mount -t binfmt_misc binfmt_misc '"$BM"' &&
		"$BUILD/packaging/tiexec-binfmt" register --interpreter "$LOADER" >/dev/null &&
		sh -c "echo \$\$; exec ./probe-pie"') >"$O/marked"
	stop_trace INT
	local line
	line=$(events_of pid "$(first_line "$O/marked")")
	[ "$(wc -l <<<"$line")" -eq 1 ]
	[ -n "$line" ]
	[ "$(field via "$line")" = binfmt ]
	[ "$(field outcome "$line")" = loaded ]
	[[ "$(field program "$line")" == *probe-pie ]]
	[ "$(field comm "$line")" = probe-pie ]
}

@test "trace: --all also shows direct execs, marked; the loader's direct runs say why" {
	start_trace --json --all --loader "$LOADER"
	sh -c 'echo $$; exec "$FIXTURES/probe-pie"' >"$O/direct"
	# (--no-libs: with the libraries stage a small dynamic program is
	# loaded all the same, for its libraries.)
	sh -c 'echo $$; exec "$LOADER" --no-libs /bin/true' >"$O/below"
	stop_trace INT
	local line
	# (The shell's own exec shows up too, as /bin/sh.)
	line=$(events_of pid "$(first_line "$O/direct")" | grep -v '"program":"[^"]*/sh"')
	[ "$(wc -l <<<"$line")" -eq 1 ]
	[ "$(field program "$line")" = "$FIXTURES/probe-pie" ]
	[ "$(field via "$line")" = none ]
	[ "$(field note "$line")" = "not through tiexec" ]
	# Below --min-text the loader execs the program plainly: one event,
	# not a second "not through tiexec" one for its execve.
	line=$(events_of pid "$(first_line "$O/below")" | grep -v '"program":"[^"]*/sh"')
	[ "$(wc -l <<<"$line")" -eq 1 ]
	[ "$(field program "$line")" = /bin/true ]
	[ "$(field outcome "$line")" = direct ]
	[ "$(field note "$line")" = "direct: below min-text" ]
}

@test "trace: a program whose code is in a 16 MiB library: the event lists it with its bytes per strategy" {
	local L=$BATS_FILE_TMPDIR/lib
	start_trace --json --loader "$LOADER"
	sh -c 'echo $$; exec "$LOADER" "$1/bl" loop 1' sh "$L" >"$O/bl"
	sh -c 'echo $$; exec "$LOADER" --strategy=off "$1/bl" loop 1' sh "$L" >"$O/off"
	sh -c 'echo $$; exec "$LOADER" --no-libs "$1/bl" loop 1' sh "$L" >"$O/nolibs"
	stop_trace INT
	local line lib
	line=$(events_of pid "$(first_line "$O/bl")")
	[ "$(wc -l <<<"$line")" -eq 1 ]
	[ "$(field program "$line")" = "$L/bl" ]
	[ "$(field outcome "$line")" = loaded ]
	[ "$(field libs_us "$line")" -gt 0 ]
	[ "$(field libs_note "$line")" = null ]
	lib=$(libs_of "$line")
	[ "$(wc -l <<<"$lib")" -eq 1 ]
	[ "$(field path "$lib")" = "$L/libbl.so" ]
	[ "$(field text_bytes "$lib")" -ge $((16 << 20)) ]
	[ "$(field huge_bytes "$lib")" -ge $((12 << 20)) ]
	[ $(($(field huge_bytes "$lib") + $(field small_bytes "$lib"))) -eq "$(field text_bytes "$lib")" ]
	[ $(($(field file_bytes "$lib") + $(field thp_bytes "$lib") + $(field hugetlb_bytes "$lib"))) -ge "$(field huge_bytes "$lib")" ]
	[[ "$(field used "$lib")" == @(file|thp) ]]
	[ "$(field planned "$lib")" = null ] # page-aligned: ld.so's own placement
	[ "$(field note "$lib")" = null ]
	# No libraries stage: null, not an empty list.
	line=$(events_of pid "$(first_line "$O/off")")
	[ "$(field strategy "$line")" = off ]
	[[ "$line" == *'"libs":null,"libs_us":null,"libs_note":null}' ]]
	line=$(events_of pid "$(first_line "$O/nolibs")")
	[[ "$line" == *'"libs":null,"libs_us":null,"libs_note":null}' ]]
}

@test "trace: a library whose placement tiexec planned before ld.so (p_align 64 KiB) says so" {
	start_trace --json --loader "$LOADER"
	sh -c 'echo $$; exec "$LOADER" "$1" loop 1' sh "$FIXTURES/bl-64k" >"$O/p"
	stop_trace INT
	local lib
	lib=$(libs_of_start "$O/p")
	echo "$lib"
	[ "$(field path "$lib")" = "$FIXTURES/libbl-64k.so" ]
	[ "$(field planned "$lib")" = "placed before ld.so" ]
}

@test "trace: a library mapped from the shared text cache: used cache, its bytes as cache_bytes" {
	[ -x "$FIXTURES/bl-lld" ] || skip_unsupported "lld is not installed: no lld-linked fixtures"
	TC=$(mktemp -d /run/tiexec-trace-test.XXXXXX)
	chmod 755 "$TC"
	mkdir "$TC/text"
	mount -t tmpfs -o mode=0755,huge=always tmpfs "$TC/text"
	# Where everyone may read them, as a file must be to get an entry.
	mkdir -m 755 "$TC/fx"
	cp "$FIXTURES/bl-lld" "$FIXTURES/libbl-lld.so" "$TC/fx/"
	chmod a+rX "$TC/fx"/*
	TIEXEC_CACHE=$TC/text "$BUILD/warm/tiexec-warm" "$TC/fx/libbl-lld.so" >/dev/null
	start_trace --json --loader "$LOADER"
	sh -c 'echo $$; exec env TIEXEC_CACHE="$2" "$LOADER" "$1/bl-lld" loop 1' sh "$TC/fx" "$TC/text" >"$O/c"
	stop_trace INT
	local line lib
	line=$(events_of pid "$(first_line "$O/c")")
	lib=$(libs_of "$line")
	echo "$lib"
	[ "$(field path "$lib")" = "$TC/fx/libbl-lld.so" ]
	[ "$(field used "$lib")" = cache ]
	[ "$(field cache_bytes "$lib")" -eq $((14 << 20)) ]
	[ "$(field thp_bytes "$lib")" -eq 0 ]
}

# #54 item 4: libc's window is listed among the libraries: its read-only
# image on one 2 MiB page from the text cache (used cache), "planned": "a
# 2 MiB window of its own".  Before, a start mapping the window showed no
# line for libc at all.
@test "trace: libc in a 2 MiB window of its own from the text cache is listed, planned as such" {
	[ "$(uname -m)" = x86_64 ] || skip_unsupported "windows are for a page-aligned libc (x86-64)"
	TC=$(mktemp -d /run/tiexec-trace-test.XXXXXX)
	chmod 755 "$TC"
	mkdir "$TC/text"
	mount -t tmpfs -o mode=0755,huge=always tmpfs "$TC/text"
	TIEXEC_CACHE=$TC/text "$BUILD/warm/tiexec-warm" /bin/true >/dev/null
	ls "$TC"/text/*.window
	start_trace --json --loader "$LOADER"
	sh -c 'echo $$; exec env TIEXEC_CACHE="$1" "$LOADER" /bin/true' sh "$TC/text" >"$O/w"
	sh -c 'echo $$; exec env TIEXEC_CACHE="$1" "$LOADER" --no-windows /bin/true' sh "$TC/text" >"$O/nw"
	stop_trace INT
	local line lib
	lib=$(libs_of_start "$O/w")
	echo "$lib"
	[ "$(wc -l <<<"$lib")" -eq 1 ]
	[[ "$(field path "$lib")" == */libc.so.6 ]]
	[ "$(field used "$lib")" = cache ]
	[ "$(field planned "$lib")" = "a 2 MiB window of its own" ]
	[ "$(field text_bytes "$lib")" -ge $((1 << 20)) ]
	[ "$(field huge_bytes "$lib")" -eq "$(field text_bytes "$lib")" ]
	[ "$(field cache_bytes "$lib")" -eq "$(field text_bytes "$lib")" ]
	[ "$(field libs_note "$(events_of pid "$(first_line "$O/w")")")" = null ]
	# --no-windows: no line for libc (nothing of it is placed).
	line=$(events_of pid "$(first_line "$O/nw")")
	echo "$line"
	[[ "$line" != *libc.so.6* ]]
}

@test "trace: a library left alone (its file deleted once ld.so mapped it) is listed, with the reason" {
	local L=$BATS_FILE_TMPDIR/gone
	mkdir -p "$L"
	cp "$BATS_FILE_TMPDIR/lib/bl" "$BATS_FILE_TMPDIR/lib/libbl.so" "$L/"
	start_trace --json --loader "$LOADER"
	sh -c 'echo $$; exec env LD_AUDIT="$2/libgone.so" GONE_UNLINK="$1/libbl.so" "$LOADER" "$1/bl" loop 1' \
		sh "$L" "$FIXTURES" >"$O/gone"
	stop_trace INT
	local line lib
	line=$(events_of pid "$(first_line "$O/gone")")
	echo "$line"
	[ "$(field libs_note "$line")" = null ] # none lost: the count includes it
	lib=$(libs_of "$line")
	[ "$(wc -l <<<"$lib")" -eq 1 ]
	[ "$(field path "$lib")" = "$L/libbl.so (deleted)" ]
	[ "$(field huge_bytes "$lib")" -eq 0 ]
	[ "$(field note "$lib")" = "fallback: deleted or replaced since ld.so mapped it" ]
}

@test "trace: the table: a line per library under its exec's" {
	local L=$BATS_FILE_TMPDIR/lib
	start_trace --loader "$LOADER"
	sh -c 'echo $$; exec "$LOADER" --strategy=thp "$1/bl" loop 1' sh "$L" >"$O/bl"
	stop_trace TERM
	local pid
	pid=$(first_line "$O/bl")
	cat "$O/out"
	grep -A1 -E "^[0-9]{2}:[0-9]{2}:[0-9]{2}  $pid +0 +command-line +thp .* ${L//./\\.}/bl( |$)" "$O/out" >"$O/rows"
	[ "$(wc -l <"$O/rows")" -eq 2 ]
	grep -qE "^ {10}$pid +0 +thp +1[0-9]\.[0-9]MiB +[0-9]+\.[0-9]MiB +- +\+ ${L//./\\.}/libbl\.so$" "$O/rows"
}

@test "trace: why a library is not on huge pages: THP never with --strategy=thp, ld.so failing" {
	[ -w "$THP" ] || skip_unsupported "cannot change $THP"
	start_trace --json --loader "$LOADER"
	echo never >"$THP"
	sh -c 'echo $$; exec "$LOADER" --strategy=thp "$1/lib/bl" loop 1' sh "$BATS_FILE_TMPDIR" >"$O/bl"
	sed -n 's/.*\[\(.*\)\].*/\1/p' "$BATS_FILE_TMPDIR/thp-enabled" >"$THP"
	sh -c 'echo $$; exec "$LOADER" "$1/nolib/bl" loop 1' sh "$BATS_FILE_TMPDIR" >"$O/nolib" 2>/dev/null || :
	stop_trace INT
	local line lib
	line=$(events_of pid "$(first_line "$O/bl")")
	[ "$(wc -l <<<"$line")" -eq 1 ]
	lib=$(libs_of "$line")
	[ "$(wc -l <<<"$lib")" -eq 1 ]
	[ "$(field path "$lib")" = "$BATS_FILE_TMPDIR/lib/libbl.so" ]
	[ "$(field huge_bytes "$lib")" -eq 0 ]
	[ "$(field used "$lib")" = null ]
	same "fallback: thp: transparent huge pages are disabled (transparent_hugepage/enabled is never)" \
		"$(field note "$lib")"
	[ "$(field libs_note "$line")" = null ]
	# ld.so cannot find libbl.so: the exec, loaded, and why no library.
	line=$(events_of pid "$(first_line "$O/nolib")")
	[ "$(wc -l <<<"$line")" -eq 1 ]
	[ "$(field outcome "$line")" = loaded ]
	[[ "$line" == *'"libs":[],"libs_us":null,'* ]]
	same "libraries: not placed (exit status 127 first)" "$(field libs_note "$line")"
}

@test "trace: 40 execs at once, each with its library: every event lists its own" {
	local L=$BATS_FILE_TMPDIR/lib i pids=()
	start_trace --json --loader "$LOADER"
	for ((i = 0; i < 40; i++)); do
		sh -c 'echo $$; exec "$LOADER" --strategy=file "$1/bl" loop 1' sh "$L" >"$O/p$i" &
		pids+=($!)
	done
	wait "${pids[@]}" # (not the tracer)
	stop_trace INT
	local line lib
	for ((i = 0; i < 40; i++)); do
		line=$(events_of pid "$(first_line "$O/p$i")")
		[ "$(wc -l <<<"$line")" -eq 1 ]
		echo "$line"
		[ "$(field libs_note "$line")" = null ]
		lib=$(libs_of "$line")
		[ "$(wc -l <<<"$lib")" -eq 1 ]
		[ "$(field path "$lib")" = "$L/libbl.so" ]
	done
}

@test "trace: a loader that fails before loading is reported with its status" {
	start_trace --json --loader "$LOADER"
	sh -c 'echo $$; exec "$LOADER" "$1"' sh "$O/does-not-exist" >"$O/fail" 2>/dev/null || :
	stop_trace INT
	local line
	line=$(events_of pid "$(first_line "$O/fail")")
	[ "$(wc -l <<<"$line")" -eq 1 ]
	[ "$(field outcome "$line")" = failed ]
	[ "$(field note "$line")" = "loader failed: exit status 127" ]
	[ "$(field program "$line")" = "$O/does-not-exist" ]
}

@test "trace: a burst of 1000 execs through tiexec: 1000 events, or the dropped ones counted" {
	start_trace --json --loader "$LOADER"
	bash -c 'echo $$; for i in $(seq 1000); do "$LOADER" --strategy=off /bin/true || exit 1; done' >"$O/burst"
	stop_trace TERM
	local parent n dropped
	parent=$(first_line "$O/burst")
	n=$(events_of ppid "$parent" | grep -c '"program":"/bin/true","via":"command-line","outcome":"loaded","strategy":"off"' || :)
	dropped=$(sed -n 's/^{"dropped":\([0-9]*\)}$/\1/p' "$O/out")
	echo "events $n, dropped $dropped"
	[ -n "$dropped" ]
	[ "$n" -le 1000 ]
	if [ "$dropped" -eq 0 ]; then
		[ "$n" -eq 1000 ]
	else
		# Each exec makes two records (exec, loaded); losing both loses the event.
		[ $((n + dropped)) -ge 1000 ]
	fi
}

@test "trace: without USDT probes in the loader: execs still reported, the reason said once" {
	[ -s "$BATS_FILE_TMPDIR/tiexec-noprobes" ] || skip_unsupported "objcopy could not strip the probes"
	local L=$BATS_FILE_TMPDIR/tiexec-noprobes
	start_trace --json --loader "$L"
	sh -c 'echo $$; exec "$1" --strategy=off /bin/true' sh "$L" >"$O/np"
	stop_trace INT
	[ "$(grep -c 'cannot attach to the tiexec:loaded probe' "$O/err")" -eq 1 ]
	local line
	line=$(events_of pid "$(first_line "$O/np")")
	[ "$(wc -l <<<"$line")" -eq 1 ]
	[ "$(field program "$line")" = /bin/true ]
	[ "$(field outcome "$line")" = unknown ]
	[ "$(field strategy "$line")" = null ]
}

@test "trace: the classic tracepoint works too (--tracepoint classic)" {
	# Classic tracepoints need tracefs: mount it in a private mount namespace.
	unshare --mount --propagation private sh -c '
		mountpoint -q /sys/kernel/tracing || mount -t tracefs tracefs /sys/kernel/tracing' ||
		skip_unsupported "cannot mount tracefs"
	unshare --mount --propagation private sh -c '
		mountpoint -q /sys/kernel/tracing || mount -t tracefs tracefs /sys/kernel/tracing
		exec "$0" --duration 120 --json --tracepoint classic --loader "$1"' "$TRACE" "$LOADER" \
		>"$O/out" 2>"$O/err" 3>&- &
	TRACE_PID=$!
	local i
	for ((i = 0; i < 300; i++)); do
		grep -qs '^tiexec-trace: tracing' "$O/err" && break
		sleep 0.1
	done
	grep -q '^tiexec-trace: tracing' "$O/err" || { cat "$O/err"; false; }
	sh -c 'echo $$; exec "$LOADER" "$FIXTURES/bigtext-pie" loop 1' >"$O/big"
	stop_trace INT
	local line
	line=$(events_of pid "$(first_line "$O/big")")
	[ "$(wc -l <<<"$line")" -eq 1 ]
	[ "$(field program "$line")" = "$FIXTURES/bigtext-pie" ]
	[ "$(field via "$line")" = command-line ]
	[ "$(field huge_bytes "$line")" -gt 0 ]
}

@test "trace: a burst while the tracer is stopped, with a 1 MiB buffer: the dropped records are counted" {
	start_trace --json --buffer-mib 1 --loader "$LOADER"
	kill -STOP "$TRACE_PID"
	bash -c 'echo $$; for i in $(seq 1000); do "$LOADER" --strategy=off /bin/true || exit 1; done' >"$O/burst"
	kill -CONT "$TRACE_PID"
	stop_trace TERM
	local parent n dropped
	parent=$(first_line "$O/burst")
	# An exec whose "loaded" record was dropped still shows, as "unknown".
	n=$(events_of ppid "$parent" | grep -c '"program":"/bin/true"' || :)
	dropped=$(sed -n 's/^{"dropped":\([0-9]*\)}$/\1/p' "$O/out")
	echo "events $n, dropped $dropped"
	[ "$dropped" -gt 0 ]
	[ "$n" -lt 1000 ]
	[ $((n + dropped)) -ge 1000 ]
	grep -qE "^tiexec-trace: [0-9]+ events, $dropped dropped$" "$O/err"
}

@test "trace: --version; long and relative program paths: made absolute, the columns stay put" {
	run "$TRACE" --version
	[ "$status" -eq 0 ]
	[[ "$output" =~ ^tiexec-trace\ [0-9]+\.[0-9]+\.[0-9]+$ ]]
	local deep=$O/a-directory-with-a-long-name/and-another-one-below-it/and-a-third-to-make-it-long
	mkdir -p "$deep"
	cp "$FIXTURES/probe-pie" "$deep/probe"
	cp "$FIXTURES/probe-pie" "$O/rel"
	start_trace --loader "$LOADER"
	"$LOADER" "$deep/probe" >/dev/null
	(cd "$O" && "$LOADER" ./rel >/dev/null)
	stop_trace TERM
	cat "$O/out"
	# Every column before the program starts where the header's does.
	local at
	at=$(head -n 1 "$O/out" | awk '{ print index($0, "PROGRAM") }')
	[ "$(grep -c " $deep/probe" "$O/out")" -eq 1 ]
	[ "$(grep " $deep/probe" "$O/out" | awk '{ print index($0, "/") }')" -eq "$at" ]
	[ "$(grep -c " $O/rel" "$O/out")" -eq 1 ]
	[ "$(grep " $O/rel" "$O/out" | awk '{ print index($0, "/") }')" -eq "$at" ]
}

@test "trace: filters -u, -p, -n and -x pick the rows" {
	command -v setpriv >/dev/null || skip_unsupported "setpriv (util-linux) is not installed"
	# Where uid 65534 can reach: a directory under /tmp (bats' are private).
	S=$(mktemp -d /tmp/tiexec-trace.XXXXXX)
	chmod 755 "$S"
	cp "$LOADER" "$S/tiexec"
	cp "$FIXTURES/probe-pie" "$S/alpha"
	cp "$FIXTURES/probe-pie" "$S/beta"
	# run_all ARGS: "PROGRAM OUTCOME" of the rows the tracer with ARGS shows
	# for the same four execs: root's alpha and beta, nobody's alpha, and
	# bigtext with transparent huge pages disabled for it (a fallback whatever
	# the machine has: a hugetlb pool would serve --strategy=hugetlb).
	run_all() {
		start_trace --json --loader "$S/tiexec" "$@"
		"$S/tiexec" "$S/alpha" >/dev/null
		"$S/tiexec" "$S/beta" >/dev/null
		setpriv --reuid=65534 --regid=65534 --clear-groups "$S/tiexec" "$S/alpha" >/dev/null
		TIEXEC_CACHE= "$FIXTURES/mdwe" thp-disable "$S/tiexec" "$FIXTURES/bigtext-pie" report >/dev/null
		stop_trace TERM
		grep -v dropped "$O/out" | sed -E 's/.*"uid":([0-9]+).*"program":"([^"]*)".*"outcome":"([^"]*)".*/\2 \3 \1/' | LC_ALL=C sort
	}
	local big=$FIXTURES/bigtext-pie
	run run_all
	same "$(printf '%s\n' "$big loaded 0" "$S/alpha loaded 0" "$S/alpha loaded 65534" "$S/beta loaded 0" | LC_ALL=C sort)" "$output"
	run run_all -u 65534
	same "$S/alpha loaded 65534" "$output"
	run run_all --uid nobody
	same "$S/alpha loaded 65534" "$output"
	run run_all -n beta
	same "$S/beta loaded 0" "$output"
	run run_all -x
	same "$big loaded 0" "$output"
	# -p: the process and its children, not its grandchildren.
	start_trace --json --loader "$S/tiexec" -p "$$"
	"$S/tiexec" "$S/beta" >/dev/null
	sh -c '"$1" "$2"' sh "$S/tiexec" "$S/alpha" >/dev/null
	stop_trace TERM
	[ "$(grep -c '"program"' "$O/out")" -eq 1 ]
	grep -q "\"program\":\"$S/beta\"" "$O/out"
	run "$TRACE" --pid x
	[ "$status" -eq 2 ]
	run "$TRACE" -u no-such-user-here
	[ "$status" -eq 2 ]
}

@test "trace: the loader replaced under it (an upgrade): said, and followed" {
	local L=$O/bin/tiexec
	mkdir -p "$O/bin"
	cp "$LOADER" "$L"
	start_trace --json --loader "$L"
	sh -c 'echo $$; exec "$1" "$2"' sh "$L" "$FIXTURES/probe-pie" >"$O/before"
	cp "$LOADER" "$L.new"
	mv "$L.new" "$L"
	local i
	for ((i = 0; i < 50; i++)); do
		grep -q "is a new file" "$O/err" && break
		sleep 0.1
	done
	sh -c 'echo $$; exec "$1" "$2"' sh "$L" "$FIXTURES/probe-pie" >"$O/after"
	stop_trace TERM
	cat "$O/err"
	grep -qE "^tiexec-trace: the loader $L is a new file \(inode [0-9]+, was a reinstall or an upgrade\?\): following it too$" "$O/err"
	for f in before after; do
		local line
		line=$(events_of pid "$(first_line "$O/$f")")
		[ -n "$line" ] || { echo "no event for $f"; return 1; }
		[ "$(field outcome "$line")" = loaded ]
	done
}
