#!/usr/bin/env bats
# The loader's contract: a program run through tiexec sees exactly what a
# direct exec would give it (argv, env, auxv, /proc/self state, pid, exit
# status), and tiexec's own options, settings and errors behave as
# documented.  Most tests diff the probe fixture's report direct vs through
# tiexec.  The probes are small, so --min-text=0 forces the loader to load
# them (otherwise it would just execve them).
bats_require_minimum_version 1.5.0
load test_helper

setup_file() {
	local t=$BATS_FILE_TMPDIR src=$ROOT/tests/fixtures/probe.c
	# PT_GNU_STACK with PF_X: the stack must be executable both ways.
	gcc -O2 -z execstack -o "$t/probe-execstack" "$src"
	gcc -O2 -static -z execstack -o "$t/probe-execstack-static" "$src"
	# PT_INTERP naming an interpreter that does not exist.
	gcc -O2 -Wl,--dynamic-linker=/x/ld.so -o "$t/badinterp" "$src"
	printf '#!/bin/sh\necho "script $0 [$1] [$2]"\nexit 5\n' >"$t/script.sh"
	chmod +x "$t/script.sh"
	cp "$FIXTURES/probe-pie" "$t/noexec"
	chmod 644 "$t/noexec"
	mkdir "$t/adir"
	# A name longer than the 15 characters comm keeps.
	cp "$FIXTURES/probe-pie" "$t/probe-with-a-rather-long-name"
}

setup() {
	CLEAN=$FIXTURES/clean
	cd "$FIXTURES"
}

# run_s: run_t with stdout and stderr captured separately.
run_s() {
	local st=()
	if [[ "$1" == -[0-9]* ]]; then st=("$1"); shift; fi
	run "${st[@]}" --separate-stderr timeout 60 "$@"
}

# same TEXT_A TEXT_B: fail with a diff unless equal.
LOADED_RE='^tiexec: .*: [0-9.]+ of [0-9.]+ MiB text on 2 MiB pages \(file [0-9.]+, thp [0-9.]+\), [0-9.]+ on 4 KiB, [0-9.]+ ms$'

# without_hint PROBE-REPORT: the report of a program tiexec loaded, as a
# direct exec's would read.  An ordinary user's program gets
# TIEXEC_EXE=PID:PATH in its environment (README, "What it promises"): its
# one difference, taken out of what the probe counts.  Root's: unchanged.
without_hint() {
	if [ "$(id -u)" = 0 ]; then
		echo "$1"
	else
		awk '/^env TIEXEC_EXE=/ { next } /^envcount / { $2 = $2 - 1 } { print }' <<<"$1"
	fi
}

# compare_probe EXPECT_STATUS LOADER_ARGS -- ENV... PROG ARGS...
# Runs ENV PROG ARGS directly and as ENV tiexec -v LOADER_ARGS PROG ARGS
# (both clean), requires EXPECT_STATUS both times, identical stdout, an
# empty stderr for the direct run and exactly one verbose line from tiexec.
# Leaves the tiexec run's stderr in $via_stderr.
compare_probe() {
	local want=$1 largs=() envs=()
	shift
	while [ "$1" != -- ]; do largs+=("$1"); shift; done
	shift
	while [[ "$1" == *=* ]]; do envs+=("$1"); shift; done
	run_s "$CLEAN" "${envs[@]}" "$@"
	[ "$status" -eq "$want" ]
	[ -z "$stderr" ]
	[ -n "$output" ]
	local direct=$output
	run_s "$CLEAN" "${envs[@]}" "$TIEXEC" -v "${largs[@]}" "$@"
	echo "tiexec stderr: $stderr"
	[ "$status" -eq "$want" ]
	[[ "$stderr" == *": running it directly" ]] || output=$(without_hint "$output")
	same "$direct" "$output"
	[ "${#stderr_lines[@]}" -eq 1 ]
	via_stderr=$stderr
}

probe_args=(a 'b c' '' '  lead and trail  ' '' '*' 'x=y')
probe_env=(PROBE_A=1 'PROBE_SPACES=some value' PROBE_EMPTY= HOME=/nonexistent LANG=C)

loaded_variant() {
	compare_probe 0 --min-text=0 -- "${probe_env[@]}" "./probe-$1" "${probe_args[@]}"
	[[ "$via_stderr" =~ $LOADED_RE ]]
	[[ "$via_stderr" == "tiexec: './probe-$1': "* ]]
	[[ "$output" == "argc 8"$'\n'* ]]
	[[ "$output" == *$'\nargv[3] \n'* ]]
	[[ "$output" == *$'\nenv PROBE_SPACES=some value\n'* ]]
	[[ "$output" == *$'\nenvcount 5\n'* ]]
}

off_variant() {
	compare_probe 0 --strategy=off -- "${probe_env[@]}" "./probe-$1" "${probe_args[@]}"
	same_off "tiexec: './probe-$1': loaded without remapping (--strategy=off)" "$via_stderr"
	[[ "$output" == "argc 8"$'\n'* ]]
}

@test "probe-static: same report direct and through tiexec" {
	loaded_variant static
}

@test "probe-static-pie: same report direct and through tiexec" {
	loaded_variant static-pie
}

@test "probe-pie: same report direct and through tiexec" {
	loaded_variant pie
}

@test "probe-nopie: same report direct and through tiexec" {
	loaded_variant nopie
}

@test "probe-static: same report under --strategy=off" {
	off_variant static
}

@test "probe-static-pie: same report under --strategy=off" {
	off_variant static-pie
}

@test "probe-pie: same report under --strategy=off" {
	off_variant pie
}

@test "probe-nopie: same report under --strategy=off" {
	off_variant nopie
}

@test "probe with no arguments and an empty environment" {
	compare_probe 0 --min-text=0 -- ./probe-pie
	[[ "$via_stderr" =~ $LOADED_RE ]]
	[[ "$output" == "argc 1"$'\n'"argv[0] ./probe-pie"$'\n'"envcount 0"$'\n'* ]]
}

@test "exit status passes through (PROBE_EXIT=7)" {
	for v in static pie; do
		compare_probe 7 --min-text=0 -- PROBE_EXIT=7 "./probe-$v" x
		[[ "$via_stderr" =~ $LOADED_RE ]]
		[[ "$output" == *$'\nmalloc-big ok' ]]
	done
}

@test "death by SIGTERM passes through (status 143)" {
	for v in static static-pie pie nopie; do
		compare_probe 143 --min-text=0 -- PROBE_SIGNAL=15 "./probe-$v"
		[[ "$via_stderr" =~ $LOADED_RE ]]
	done
}

@test "death by SIGABRT passes through (status 134)" {
	for v in static pie; do
		compare_probe 134 --min-text=0 -- PROBE_SIGNAL=6 "./probe-$v"
		[[ "$via_stderr" =~ $LOADED_RE ]]
	done
}

@test "stdin and stdout pipes work" {
	local direct
	run_s bash -c 'printf "data 1\ndata 2\n" | "$0" PROBE_STDIN=1 ./probe-pie | cat' "$CLEAN"
	[ "$status" -eq 0 ]
	[[ "$output" == *$'\nmalloc-big ok\ndata 1\ndata 2' ]]
	direct=$output
	run_s bash -c 'printf "data 1\ndata 2\n" | "$0" PROBE_STDIN=1 "$1" --min-text=0 ./probe-pie | cat' "$CLEAN" "$TIEXEC"
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	same "$direct" "$(without_hint "$output")"
}

@test "stdin larger than a pipe buffer is copied intact" {
	run_s bash -c 'head -c 1000000 /dev/zero | tr "\0" x | "$0" PROBE_STDIN=1 "$1" -v --min-text=0 ./probe-static | tail -c 1000000 | tr -d x | wc -c' "$CLEAN" "$TIEXEC"
	[ "$status" -eq 0 ]
	[ "$output" = 0 ]
	[[ "$stderr" =~ $LOADED_RE ]]
	run_s bash -c 'head -c 1000000 /dev/zero | "$0" PROBE_STDIN=1 "$1" -v --min-text=0 ./probe-static | wc -c' "$CLEAN" "$TIEXEC"
	[ "$status" -eq 0 ]
	[ "$output" -gt 1000000 ]
	[[ "$stderr" =~ $LOADED_RE ]]
}

@test "cxx-pie: exceptions and threads work" {
	compare_probe 0 --min-text=0 -- ./cxx-pie
	[[ "$via_stderr" =~ $LOADED_RE ]]
	same $'exceptions ok\nthreads ok' "$output"
}

@test "cxx-static: exceptions and threads work" {
	compare_probe 0 --min-text=0 -- ./cxx-static
	[[ "$via_stderr" =~ $LOADED_RE ]]
	same $'exceptions ok\nthreads ok' "$output"
}

go_variant() {
	compare_probe 3 --min-text=0 -- 'PROBE_GO=hello go' PROBE_EXIT=3 "./go-$1" one 'two words' ''
	[[ "$via_stderr" =~ $LOADED_RE ]]
	[[ "$output" == "args ./go-$1 one two words "$'\n'"PROBE_GO hello go"$'\n'* ]]
}

@test "go-static: args, env and exit code" {
	go_variant static
	[[ "$output" == *$'\ncgo disabled\ngoroutines ok' ]]
}

@test "go-cgo: args, env and exit code" {
	go_variant cgo
	[[ "$output" == *$'\ncgo 42\ngoroutines ok' ]]
}

@test "rust-pie: arguments, a caught panic, threads and exit code" {
	[ -x "$FIXTURES/rust-pie" ] || skip_unsupported "no rustc to build the Rust fixture"
	compare_probe 4 --min-text=0 -- PROBE_RUST=r PROBE_EXIT=4 ./rust-pie one 'two words'
	[[ "$via_stderr" =~ $LOADED_RE ]]
	same $'args ./rust-pie one two words\nPROBE_RUST r\npanic caught true\nthreads 2997000' "$output"
}

@test "bigtext: remapped text computes the same result" {
	for v in pie nopie static; do
		run_s "$CLEAN" "./bigtext-$v" loop 20000
		[ "$status" -eq 0 ]
		[[ "$output" == sum* ]]
		local direct=$output
		run_s "$CLEAN" "$TIEXEC" -v "./bigtext-$v" loop 20000
		[ "$status" -eq 0 ]
		same "$direct" "$output"
		[[ "$stderr" =~ $LOADED_RE ]]
	done
}

@test "a start asks about each file it runs once and gives no address space back" {
	# Every system call of the loader is a cost of every start (under
	# qemu's TCG a statx of a descriptor is ~10 us, a mapping change 30 to
	# 60): the program's descriptor is asked statx once (ld.so's once)
	# and its file system once (for the text cache and for the page
	# cache, with a cache configured), and the program and ld.so are
	# reserved as they are mapped, with no padding to trim before the
	# final stage.
	command -v strace >/dev/null || skip_unsupported "strace is not installed"
	local st=$BATS_TEST_TMPDIR/st v want
	for v in static:1 nopie:2 pie:2; do
		want=${v#*:}
		v=${v%:*}
		run_t env TIEXEC_CACHE="$BATS_TEST_TMPDIR/cache" \
			strace -o "$st" -e trace=statx,fstatfs,munmap,memfd_create "$TIEXEC" "./bigtext-$v" loop 10
		[ "$status" -eq 0 ]
		sed -n '1,/^memfd_create/p' "$st" >"$st.pre"
		grep -q '^memfd_create' "$st.pre"
		[ "$(grep -c '^statx([0-9]*, ""' "$st.pre")" -eq "$want" ]
		[ "$(grep -c '^fstatfs(' "$st.pre")" -eq 1 ]
		run grep -c '^munmap' "$st.pre"
		[ "$output" = 0 ]
	done
}

@test "PATH lookup: AT_EXECFN, comm and cmdline as for a direct execvp" {
	compare_probe 0 --min-text=0 -- "PATH=$FIXTURES:/usr/bin:/bin" probe-pie 'x y'
	[[ "$via_stderr" =~ $LOADED_RE ]]
	[[ "$output" == *$'\nAT_EXECFN '"$FIXTURES"$'/probe-pie\n'* ]]
	[[ "$output" == *$'\ncmdline probe-pie|x y|\n'* ]]
	[[ "$output" == *$'\ncomm probe-pie\n'* ]]
}

@test "PATH lookup: later PATH element, static program" {
	compare_probe 0 --min-text=0 -- "PATH=/nonexistent:/usr/bin:$FIXTURES" probe-static
	[[ "$via_stderr" =~ $LOADED_RE ]]
	[[ "$output" == *$'\nAT_EXECFN '"$FIXTURES"$'/probe-static\n'* ]]
}

@test "PATH lookup: an empty element means the current directory, as in execvp" {
	# execvp tries "" + "probe-pie" = "probe-pie" for an empty element, so a
	# direct exec sees AT_EXECFN "probe-pie" (not "./probe-pie").
	compare_probe 0 --min-text=0 -- PATH=/nonexistent::/usr/bin probe-pie
	[[ "$output" == *$'\nAT_EXECFN probe-pie\n'* ]]
}

@test "PATH lookup: a non-executable match is skipped for a later one" {
	local d=$BATS_TEST_TMPDIR/pathdir
	mkdir "$d"
	cp probe-pie "$d/probe-pie"
	chmod 644 "$d/probe-pie"
	compare_probe 0 --min-text=0 -- "PATH=$d:$FIXTURES" probe-pie
	[[ "$output" == *$'\nAT_EXECFN '"$FIXTURES"$'/probe-pie\n'* ]]
}

@test "PATH lookup: only a non-executable match gives Permission denied, 126" {
	local d=$BATS_TEST_TMPDIR/pathdir
	mkdir "$d"
	cp probe-pie "$d/probe-pie"
	chmod 644 "$d/probe-pie"
	run_s "$CLEAN" "PATH=$d" "$TIEXEC" --min-text=0 probe-pie
	[ "$status" -eq 126 ]
	[ -z "$output" ]
	same "tiexec: 'probe-pie': Permission denied" "$stderr"
}

@test "comm is truncated like a direct exec for a long program name" {
	local p=$BATS_FILE_TMPDIR/probe-with-a-rather-long-name
	compare_probe 0 --min-text=0 -- "$p" arg
	[[ "$via_stderr" =~ $LOADED_RE ]]
	[[ "$output" == *$'\ncomm probe-with-a-ra\n'* ]]
	[[ "$output" == *$'\ncmdline '"$p"$'|arg|\n'* ]]
}

# hexof FILE: the bytes of FILE as one hex string.
hexof() {
	od -An -tx1 -v "$1" | tr -d ' \n'
}

# start_waiting NAME CMD...: start CMD (a bigtext "wait") in the background
# with stdin on a FIFO we hold open; sets $pid once it has printed "ready".
start_waiting() {
	local name=$1 i
	shift
	mkfifo "$BATS_TEST_TMPDIR/$name.fifo"
	exec 5<>"$BATS_TEST_TMPDIR/$name.fifo"
	"$CLEAN" "$@" <"$BATS_TEST_TMPDIR/$name.fifo" >"$BATS_TEST_TMPDIR/$name.out" 2>&1 &
	pid=$!
	for i in $(seq 300); do
		grep -q ready "$BATS_TEST_TMPDIR/$name.out" && return 0
		sleep 0.1
	done
	return 1
}

# stop_waiting: close the FIFO (EOF) and collect the exit status in $wstatus.
stop_waiting() {
	exec 5>&-
	wstatus=0
	wait "$pid" || wstatus=$?
}

@test "/proc/PID/cmdline, comm and pid seen from outside equal a direct run" {
	local direct_cmd direct_comm via_cmd via_comm pid wstatus
	start_waiting direct ./bigtext-pie wait '' 'a b' ''
	direct_cmd=$(hexof "/proc/$pid/cmdline")
	direct_comm=$(cat "/proc/$pid/comm")
	stop_waiting
	[ "$wstatus" -eq 0 ]
	# Default settings: the 64 MiB text is really remapped.
	start_waiting via "$TIEXEC" -v ./bigtext-pie wait '' 'a b' ''
	via_cmd=$(hexof "/proc/$pid/cmdline")
	via_comm=$(cat "/proc/$pid/comm")
	stop_waiting
	[ "$wstatus" -eq 0 ]
	same "$direct_cmd" "$via_cmd"
	same "$direct_comm" "$via_comm"
	[ "$via_comm" = bigtext-pie ]
	# Exactly the argv strings, each with its NUL, nothing after.
	[ "$via_cmd" = "$(printf './bigtext-pie\0wait\0\0a b\0\0' | hexof -)" ]
	run cat "$BATS_TEST_TMPDIR/via.out"
	[[ "${lines[0]}" =~ $LOADED_RE ]]
	[ "${lines[1]}" = ready ]
}

@test "process title: short PROBE_TITLE gives the same title-cmdline" {
	compare_probe 0 --min-text=0 -- PROBE_TITLE=short ./probe-pie a 'b c' ''
	[[ "$via_stderr" =~ $LOADED_RE ]]
	[[ "$output" == *$'\ntitle-cmdline short|||||'* ]]
}

@test "process title: long PROBE_TITLE overwriting argv and environ" {
	local long
	long=$(printf 'T%.0s' {1..400})
	compare_probe 0 --min-text=0 -- "PROBE_TITLE=$long" PROBE_PAD=padding ./probe-static a 'b c' ''
	[[ "$via_stderr" =~ $LOADED_RE ]]
	# The title runs over argv into the contiguous environ strings.
	[[ "$output" =~ $'\n'title-cmdline\ T{100,}\|+$ ]]
	compare_probe 0 --min-text=0 -- "PROBE_TITLE=$long" PROBE_PAD=padding ./probe-pie a 'b c' ''
	[[ "$output" =~ $'\n'title-cmdline\ T{100,}\|+$ ]]
}

@test "no extra fd is left open in the program" {
	for args in --min-text=0 --strategy=off; do
		run_s "$CLEAN" "$TIEXEC" -v $args ./probe-pie
		[ "$status" -eq 0 ]
		[[ "$output" == *$'\nfds 0 1 2\n'* ]]
		[ "${#stderr_lines[@]}" -eq 1 ]
		[[ "$stderr" == "tiexec: './probe-pie': "*" 2 MiB pages "* || "$stderr" == *"loaded without remapping"* ]]
	done
	run_s "$CLEAN" "$TIEXEC" -v --min-text=0 ./probe-static
	[ "$status" -eq 0 ]
	[[ "$output" == *$'\nfds 0 1 2\n'* ]]
	[[ "$stderr" =~ $LOADED_RE ]]
	# Inherited fds stay open (no CLOEXEC sweep).
	run_s "$CLEAN" /bin/sh -c 'exec 7</dev/null 9>/dev/null; exec "$0" -v --min-text=0 ./probe-pie' "$TIEXEC"
	[ "$status" -eq 0 ]
	[[ "$output" == *$'\nfds 0 1 2 7 9\n'* ]]
	[[ "$stderr" =~ $LOADED_RE ]]
}

@test "same PID: the program runs in tiexec's own process" {
	run_s "$CLEAN" /bin/sh -c 'echo $$; exec "$0" -v --min-text=0 /bin/sh -c "echo \$\$"' "$TIEXEC"
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -eq 2 ]
	[[ "${lines[0]}" =~ ^[0-9]+$ ]]
	[ "${lines[0]}" = "${lines[1]}" ]
	[[ "$stderr" =~ $LOADED_RE ]]
	[[ "$stderr" == "tiexec: '/bin/sh': "* ]]
}

@test "same PID: /proc/self/stat read by a loaded /bin/cat" {
	# The probe does not print its pid: let /bin/cat (loaded by tiexec)
	# read /proc/self/stat, whose first field is the pid.
	run_s "$CLEAN" /bin/sh -c 'echo $$; exec "$0" -v --min-text=0 /bin/cat /proc/self/stat' "$TIEXEC"
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -eq 2 ]
	[ "${lines[1]%% *}" = "${lines[0]}" ]
	[[ "${lines[1]}" == "${lines[0]} (cat) "* ]]
	[[ "$stderr" =~ $LOADED_RE ]]
	[[ "$stderr" == "tiexec: '/bin/cat': "* ]]
}

@test "PT_GNU_STACK executable: dynamic program gets an executable stack both ways" {
	compare_probe 0 --min-text=0 -- "$BATS_FILE_TMPDIR/probe-execstack" x
	[[ "$via_stderr" =~ $LOADED_RE ]]
	[[ "$output" == *$'\nstack-exec yes\n'* ]]
}

@test "PT_GNU_STACK executable: static program gets an executable stack both ways" {
	compare_probe 0 --min-text=0 -- "$BATS_FILE_TMPDIR/probe-execstack-static" x
	[[ "$via_stderr" =~ $LOADED_RE ]]
	[[ "$output" == *$'\nstack-exec yes\n'* ]]
}

@test "a normal program's stack is not executable" {
	compare_probe 0 --min-text=0 -- ./probe-nopie
	[[ "$output" == *$'\nstack-exec no\n'* ]]
}

# --- tiexec's own interface ---

@test "--help prints usage on stdout and exits 0" {
	run_s "$TIEXEC" --help
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	[ "${lines[0]}" = "Usage: tiexec [OPTIONS] PROG [ARGS...]" ]
	[[ "$output" == *--strategy=* ]]
	[[ "$output" == *--min-text=SIZE* ]]
	[[ "$output" == *"--libs, --no-libs"* ]]
	[[ "$output" == *TIEXEC_LIBS* ]]
	run_s "$TIEXEC" -h
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "Usage: tiexec [OPTIONS] PROG [ARGS...]" ]
}

@test "--version prints the version" {
	run_s "$TIEXEC" --version
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	[ "$output" = "tiexec 0.1.0" ]
}

@test "options stop at --" {
	compare_probe 0 --min-text=0 -- ./probe-pie --version -v
	run_s "$CLEAN" "$TIEXEC" --min-text=0 -- ./probe-pie --help -v --
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	[[ "$output" == $'argc 4\nargv[0] ./probe-pie\nargv[1] --help\nargv[2] -v\nargv[3] --\n'* ]]
	# After --, a PROG that looks like an option is a program name.
	run_s -127 "$CLEAN" "$TIEXEC" -- --help
	[ "$status" -eq 127 ]
	[ -z "$output" ]
	same "tiexec: '--help': command not found" "$stderr"
}

@test "options stop at the first non-option" {
	run_s "$CLEAN" "$TIEXEC" -v --min-text=0 ./probe-pie --min-text=5 --bogus -v
	[ "$status" -eq 0 ]
	[[ "$stderr" =~ $LOADED_RE ]]
	[[ "$output" == $'argc 4\nargv[0] ./probe-pie\nargv[1] --min-text=5\nargv[2] --bogus\nargv[3] -v\n'* ]]
}

@test "--strategy VALUE as a separate argument" {
	run_s "$CLEAN" "$TIEXEC" --strategy off -v --min-text=0 ./probe-pie
	[ "$status" -eq 0 ]
	[[ "$output" == $'argc 1\n'* ]]
	same_off "tiexec: './probe-pie': loaded without remapping (--strategy=off)" "$stderr"
	for s in auto file thp hugetlb; do
		run_s "$CLEAN" "$TIEXEC" --strategy "$s" -v --min-text=0 ./probe-pie
		[ "$status" -eq 0 ]
		[[ "$output" == $'argc 1\n'* ]]
		[[ "$stderr" =~ $LOADED_RE ]]
	done
}

@test "--min-text: below it the program is run directly (static, or --no-libs)" {
	run_s "$CLEAN" "$TIEXEC" -v ./probe-static
	[ "$status" -eq 0 ]
	[[ "$output" == $'argc 1\n'* ]]
	[[ "$stderr" =~ ^"tiexec: './probe-static': "[0-9]+" bytes of text is below --min-text (2.0 MiB): running it directly"$ ]]
	run_s "$CLEAN" "$TIEXEC" -v --no-libs ./probe-pie
	[ "$status" -eq 0 ]
	[[ "$output" == $'argc 1\n'* ]]
	same "tiexec: './probe-pie': SIZE of text is below --min-text (2.0 MiB): running it directly" "$(no_size "$stderr")"
	run_s "$CLEAN" "$TIEXEC" -v --no-libs --min-text=1G ./probe-pie
	[ "$status" -eq 0 ]
	same "tiexec: './probe-pie': SIZE of text is below --min-text (1024.0 MiB): running it directly" "$(no_size "$stderr")"
	run_s "$CLEAN" "$TIEXEC" -v --no-libs --min-text=1K ./probe-pie
	[ "$status" -eq 0 ]
	[[ "$stderr" =~ $LOADED_RE ]]
	run_s "$CLEAN" TIEXEC_LIBS=0 "$TIEXEC" -v --min-text=1M ./probe-pie
	[ "$status" -eq 0 ]
	same "tiexec: './probe-pie': SIZE of text is below --min-text (1.0 MiB): running it directly" "$(no_size "$stderr")"
	# A direct execve still gives the same report.
	compare_probe 0 --no-libs -- ./probe-pie a '' 'b c'
}

@test "--min-text: a dynamic program below it is still loaded, for its libraries" {
	compare_probe 0 -- ./probe-pie a '' 'b c'
	same_off "tiexec: './probe-pie': loaded without remapping (SIZE of text, below --min-text 2.0 MiB)" "$via_stderr"
}

@test "--lazy and --round-out keep the report identical" {
	compare_probe 0 --min-text=0 --lazy --round-out -- ./probe-pie a
	[[ "$via_stderr" =~ $LOADED_RE ]]
	compare_probe 0 --min-text=0 --lazy -- ./probe-static a
	[[ "$via_stderr" =~ $LOADED_RE ]]
}

@test "TIEXEC_VERBOSE=1 produces the verbose line" {
	run_s "$CLEAN" TIEXEC_VERBOSE=1 TIEXEC_MIN_TEXT=0 "$TIEXEC" ./probe-pie
	[ "$status" -eq 0 ]
	[[ "$output" == $'argc 1\n'* ]]
	[[ "$stderr" =~ $LOADED_RE ]]
	# Not verbose without it.
	run_s "$CLEAN" TIEXEC_MIN_TEXT=0 "$TIEXEC" ./probe-pie
	[ "$status" -eq 0 ]
	[[ "$output" == $'argc 1\n'* ]]
	[ -z "$stderr" ]
}

@test "TIEXEC_* environment settings are honoured and passed on" {
	compare_probe 0 -- TIEXEC_STRATEGY=off TIEXEC_MIN_TEXT=0 TIEXEC_LAZY=1 TIEXEC_ROUND_OUT=1 ./probe-pie
	same_off "tiexec: './probe-pie': loaded without remapping (--strategy=off)" "$via_stderr"
	[[ "$output" == *$'\nenvcount 4\n'* ]]
}

@test "the command line wins over TIEXEC_* settings" {
	run_s "$CLEAN" TIEXEC_STRATEGY=off TIEXEC_MIN_TEXT=1G "$TIEXEC" -v --strategy=auto --min-text=0 ./probe-pie
	[ "$status" -eq 0 ]
	[[ "$output" == $'argc 1\n'* ]]
	[[ "$stderr" =~ $LOADED_RE ]]
	run_s "$CLEAN" TIEXEC_MIN_TEXT=0 TIEXEC_LIBS=1 "$TIEXEC" -v --min-text=2M --no-libs ./probe-pie
	[ "$status" -eq 0 ]
	same "tiexec: './probe-pie': SIZE of text is below --min-text (2.0 MiB): running it directly" "$(no_size "$stderr")"
}

@test "a bad TIEXEC_* value warns and the program still runs" {
	run_s "$CLEAN" TIEXEC_STRATEGY=bogus "$TIEXEC" --min-text=0 ./probe-pie a
	[ "$status" -eq 0 ]
	[[ "$output" == $'argc 2\nargv[0] ./probe-pie\nargv[1] a\n'* ]]
	same "tiexec: ignoring bad setting TIEXEC_STRATEGY=bogus" "$stderr"
	run_s "$CLEAN" TIEXEC_MIN_TEXT=junk "$TIEXEC" ./probe-pie
	[ "$status" -eq 0 ]
	[[ "$output" == $'argc 1\n'* ]]
	same "tiexec: ignoring bad setting TIEXEC_MIN_TEXT=junk" "$stderr"
}

# --- errors: one line on stderr, nothing run ---

@test "unknown option: 125" {
	run_s "$TIEXEC" --bogus ./probe-pie
	[ "$status" -eq 125 ]
	[ -z "$output" ]
	same "tiexec: --bogus: unknown option (see tiexec --help)" "$stderr"
}

@test "bad --strategy value: 125" {
	run_s "$TIEXEC" --strategy=x ./probe-pie
	[ "$status" -eq 125 ]
	[ -z "$output" ]
	same "tiexec: --strategy=x: must be auto, file, thp, hugetlb or off (see tiexec --help)" "$stderr"
}

@test "bad --min-text value: 125" {
	run_s "$TIEXEC" --min-text=bogus ./probe-pie
	[ "$status" -eq 125 ]
	[ -z "$output" ]
	same "tiexec: --min-text=bogus: must be a size such as 4M or 2097152 (see tiexec --help)" "$stderr"
}

@test "missing program: 125" {
	run_s "$TIEXEC"
	[ "$status" -eq 125 ]
	[ -z "$output" ]
	same "tiexec: missing program (see tiexec --help)" "$stderr"
	run_s "$TIEXEC" -v --min-text=0 --
	[ "$status" -eq 125 ]
	[ -z "$output" ]
	same "tiexec: missing program (see tiexec --help)" "$stderr"
}

@test "command not found in PATH: 127" {
	run_s -127 "$CLEAN" PATH=/usr/bin:/bin "$TIEXEC" nosuchcmd
	[ "$status" -eq 127 ]
	[ -z "$output" ]
	same "tiexec: 'nosuchcmd': command not found" "$stderr"
}

@test "no such file: 127" {
	run_s -127 "$TIEXEC" ./nope
	[ "$status" -eq 127 ]
	[ -z "$output" ]
	same "tiexec: './nope': No such file or directory" "$stderr"
	run_s -127 "$TIEXEC" --min-text=0 /nonexistent/dir/prog
	[ "$status" -eq 127 ]
	same "tiexec: '/nonexistent/dir/prog': No such file or directory" "$stderr"
}

@test "no execute permission: 126" {
	for a in --min-text=0 --strategy=auto; do
		run_s "$TIEXEC" "$a" "$BATS_FILE_TMPDIR/noexec"
		[ "$status" -eq 126 ]
		[ -z "$output" ]
		same "tiexec: '$BATS_FILE_TMPDIR/noexec': Permission denied" "$stderr"
	done
}

@test "a directory: 126" {
	for a in --min-text=0 --strategy=auto; do
		run_s "$TIEXEC" "$a" "$BATS_FILE_TMPDIR/adir"
		[ "$status" -eq 126 ]
		[ -z "$output" ]
		same "tiexec: '$BATS_FILE_TMPDIR/adir': Is a directory" "$stderr"
	done
}

@test "missing ELF interpreter: 127" {
	local p=$BATS_FILE_TMPDIR/badinterp
	run_s -127 "$TIEXEC" --min-text=0 "$p"
	[ "$status" -eq 127 ]
	[ -z "$output" ]
	same "tiexec: '$p': interpreter '/x/ld.so': No such file or directory" "$stderr"
	run_s -127 "$TIEXEC" --strategy=off "$p"
	[ "$status" -eq 127 ]
	same "tiexec: '$p': interpreter '/x/ld.so': No such file or directory" "$stderr"
	# Below --min-text the program is exec'd directly; the kernel's ENOENT
	# is still reported as the interpreter's.
	run_s -127 "$TIEXEC" "$p"
	[ "$status" -eq 127 ]
	same "tiexec: '$p': interpreter '/x/ld.so': No such file or directory" "$stderr"
}

# --- programs run with a plain execve ---

@test "a #! script is run with execve" {
	local s=$BATS_FILE_TMPDIR/script.sh
	run_s "$CLEAN" "$s" 'a b' ''
	[ "$status" -eq 5 ]
	[ "$output" = "script $s [a b] []" ]
	run_s "$CLEAN" "$TIEXEC" -v --min-text=0 "$s" 'a b' ''
	[ "$status" -eq 5 ]
	[ "$output" = "script $s [a b] []" ]
	same "tiexec: '$s': a script: running it directly" "$stderr"
}

privileged_variant() {
	local p=$BATS_TEST_TMPDIR/priv
	cp probe-pie "$p"
	"$@" "$p"
	compare_probe 0 --min-text=0 -- "$p" a
	same "tiexec: '$p': privileged (set-user-ID, set-group-ID or capabilities): running it directly" "$via_stderr"
}

@test "a set-user-ID program is run with execve" {
	privileged_variant chmod u+s
}

@test "a set-group-ID program is run with execve" {
	privileged_variant chmod g+s
}

@test "a program with file capabilities is run with execve" {
	command -v setcap >/dev/null || skip_unsupported "setcap (libcap2-bin) is not installed"
	[ "$(id -u)" = 0 ] || skip "needs root: setcap"
	privileged_variant setcap cap_net_raw+ep
}

@test "an execute-only (unreadable) program is run with execve" {
	command -v setpriv >/dev/null || skip_unsupported "setpriv (util-linux) is not installed"
	local p=$BATS_TEST_TMPDIR/xonly
	cp probe-pie "$p"
	chmod 111 "$p"
	# Root reads anything: drop the DAC override capabilities for the run.
	local drop=(setpriv --inh-caps=-dac_override,-dac_read_search
		--bounding-set=-dac_override,-dac_read_search)
	run_s "$CLEAN" "${drop[@]}" cat "$p"
	[ "$status" -ne 0 ]
	[[ "$stderr" == *"Permission denied"* ]]
	run_s "$CLEAN" "${drop[@]}" "$p" a
	[ "$status" -eq 0 ]
	local direct=$output
	run_s "$CLEAN" "${drop[@]}" "$TIEXEC" -v --min-text=0 "$p" a
	[ "$status" -eq 0 ]
	same "$direct" "$output"
	same "tiexec: '$p': not readable (execute-only): running it directly" "$stderr"
}
