#!/usr/bin/env bats
# Debuggers and tracers on stamped programs, compared with the direct exec:
# gdb and ltrace starting a stamped program through binfmt_misc (tiexec
# steps aside when traced from exec, interp/aside.h), as root and as uid
# 65534 in a private binfmt_misc instance; gcore of a process whose text
# tiexec copied.
bats_require_minimum_version 1.5.0
load test_helper

setup_file() {
	[ "$(id -u)" = 0 ] || return 0
	workdir_make tiexec-debug
	printf '#include <stdio.h>\n#include <stdlib.h>\nint main(void)\n{\n\tputs("hello");\n\treturn getenv("NOPE") != NULL;\n}\n' >"$W/hello.c"
	gcc -g -O0 -o "$W/hello" "$W/hello.c"
	cp "$W/hello" "$W/hello-s"
	"$BUILD/stamp/tiexec-stamp" --min-text=0 "$W/hello-s" >/dev/null
	mkdir -m 1777 "$W/tmp"
	# gdb, a breakpoint far from tiexec's image (issue: `break X`, `run`
	# under the rule): programs of every kind, each unstamped (the direct
	# reference) and stamped (-s).
	local f
	for f in bigtext-pie bigtext-nopie bigtext-static probe-static-pie perfhot-lib libperfhot.so go-static rust-pie; do
		[ -e "$FIXTURES/$f" ] && cp "$FIXTURES/$f" "$W/"
	done
	for f in bigtext-pie bigtext-nopie bigtext-static probe-static-pie perfhot-lib go-static rust-pie; do
		[ -e "$W/$f" ] && cp "$W/$f" "$W/$f-s" && "$BUILD/stamp/tiexec-stamp" --min-text=0 "$W/$f-s" >/dev/null 2>&1
	done
	# Where uid 65534 can read and run them (the build directory may be
	# private: a clone under mktemp -d).
	cp "$ROOT/packaging/gdb/tiexec.py" "$TIEXEC" "$W/"
	chmod -R a+rX "$W"
}

teardown_file() {
	workdir_remove
}

setup() {
	[ "$(id -u)" = 0 ] || skip_unsupported "needs root: private binfmt_misc instances"
	workdir_find
	cd "$W"
}

# in_ns USER SCRIPT: bash -c SCRIPT in $W with tiexec registered in a
# private binfmt_misc, as USER (root or nobody), TMPDIR=$W/tmp.
in_ns() {
	local t=$BATS_TEST_TMPDIR
	status=0
	TMPDIR=$W/tmp "$ROOT/scripts/binfmt-ns" --user "$1" --interpreter "$TIEXEC" --dir "$W" "$2" \
		>"$t/ns.out" 2>"$t/ns.err" || status=$?
	output=$(cat "$t/ns.out")
	echo "in_ns $1: status $status, stderr: $(cat "$t/ns.err")"
	[ "$status" -ne 90 ] || skip_unsupported "cannot mount a private binfmt_misc (needs Linux >= 6.7)"
}

GDB_SCRIPT='gdb -q -batch -ex "break main" -ex run -ex bt "$0" 2>&1 | grep -E "^Breakpoint 1,|^#0|exited"'

@test "gdb starting a stamped program through binfmt_misc stops at main, as directly (root and uid 65534)" {
	command -v gdb >/dev/null || skip_unsupported "gdb is not installed"
	local who want got
	for who in root nobody; do
		# Untraced it goes through tiexec; traced, it stops as directly.
		in_ns "$who" "TIEXEC_VERBOSE=1 ./hello-s && bash -c '$GDB_SCRIPT' ./hello && echo === &&
			bash -c '$GDB_SCRIPT' ./hello-s"
		[ "$status" -eq 0 ]
		[[ "$output" == "hello"$'\n'* ]]
		want=$(sed -n '2,/^===$/p' <<<"$output" | grep -v '^===$')
		got=$(sed -n '/^===$/,$p' <<<"$output" | grep -v '^===$')
		[[ "$want" == *"Breakpoint 1, main () at "*"hello.c:5"* ]]
		[[ "$want" == *"#0  main () at "*"hello.c:5"* ]]
		same "$want" "$got"
		grep -q "tiexec: './hello-s': 0.0 of 0.0 MiB text" "$BATS_TEST_TMPDIR/ns.err"
	done
}

@test "ltrace and strace of a stamped program through binfmt_misc trace the program's calls, as directly" {
	command -v ltrace >/dev/null || skip_unsupported "ltrace is not installed"
	command -v strace >/dev/null || skip_unsupported "strace is not installed"
	local who
	for who in root nobody; do
		in_ns "$who" 'for p in ./hello ./hello-s; do
				ltrace -e getenv+puts "$p" 2>&1 >/dev/null | grep -c -e "->puts(" -e "->getenv("
				strace -f -e trace=write "$p" 2>&1 >/dev/null | grep -c "write(1, \"hello\\\\n\""
			done'
		same $'2\n1\n2\n1' "$output"
	done
}

# The copies are bounded: one per program path, replaced when the program
# is rebuilt; a program that is gone loses its copy when the next one is
# made.
@test "a traced start reuses its copy while the program is unchanged, replaces it after a rebuild; gone programs' go" {
	command -v strace >/dev/null || skip_unsupported "strace is not installed"
	rm -rf "$W/tmp/tiexec-aside-0"
	in_ns root 'strace -f -o /dev/null ./hello-s; strace -f -o /dev/null ./hello-s; ls tmp/tiexec-aside-0'
	[ "$(wc -l <<<"$output")" -eq 3 ] # hello, hello, one copy
	[ "$(stat -c %a "$W/tmp/tiexec-aside-0")" = 700 ]
	local c=$W/tmp/tiexec-aside-0/${output##*$'\n'} ino
	ino=$(stat -c %i "$c/hello-s")
	# Unchanged: the same copy.  Rebuilt: still one copy, a new file.
	in_ns root 'strace -f -o /dev/null ./hello-s'
	[ "$(stat -c %i "$c/hello-s")" = "$ino" ]
	cp hello-s hello-s.new
	printf 'x' >>hello-s.new # another build
	mv hello-s.new hello-s
	in_ns root 'strace -f -o /dev/null ./hello-s; ls tmp/tiexec-aside-0 | wc -l'
	same $'hello\n1' "$output"
	[ "$(stat -c %i "$c/hello-s")" != "$ino" ]
	# The copy is unstamped, otherwise the file, and has the program's
	# name (the kernel makes it the process's name, comm).
	run "$BUILD/stamp/tiexec-stamp" --check "$c/hello-s"
	[[ "$output" == *"not stamped"* ]]
	cmp <(tail -c +100 hello-s) <(tail -c +100 "$c/hello-s")
	# A second program; then the first is gone: its copy goes when the
	# next copy is made.
	cp hello-s hello2-s
	in_ns root 'strace -f -o /dev/null ./hello2-s; ls tmp/tiexec-aside-0 | wc -l'
	same $'hello\n2' "$output"
	mv hello-s hello-s.kept
	cp hello2-s hello3-s
	in_ns root 'strace -f -o /dev/null ./hello3-s; ls tmp/tiexec-aside-0 | wc -l'
	mv hello-s.kept hello-s
	rm -f hello2-s hello3-s
	same $'hello\n2' "$output"
	[ ! -e "$c" ]
	# A program named like a copy's record file (.source beside it) gets a
	# copy of its own, which runs.
	cp hello-s source
	local p
	p=$(TMPDIR=$W/tmp "$TIEXEC" --aside-copy ./source)
	rm -f source
	[ "$(basename "$p")" = source ]
	cmp <(tail -c +100 hello-s) <(tail -c +100 "$p")
	[ "$("$p")" = hello ]
	grep -qx "$W/source" "$(dirname "$p")/.source"
}

# A hostile stamped file costs whoever traces it no more than it has on
# disk: the copy keeps its holes (a 256 MiB sparse program, some blocks on
# disk, copied to $TMPDIR or, where that cannot be had, to a memfd), and a
# file with more data past its ELF content than a small trailer gets no
# copy (it then runs as usual, -v says why).  The stamped program is
# stat(1), which tells what its own /proc/self/exe costs: the copy.
@test "the tracer's copy of a sparse program keeps its holes (file and memfd); 20 MiB past its content: no copy (root and uid 65534)" {
	command -v strace >/dev/null || skip_unsupported "strace is not installed"
	cp "$(command -v stat)" stat-s
	"$BUILD/stamp/tiexec-stamp" --min-text=0 stat-s >/dev/null
	cp stat-s stat-t
	truncate -s 256M stat-s
	head -c 20M /dev/urandom >>stat-t
	chmod a+rx stat-s stat-t
	local who blocks
	for who in root nobody; do
		# The file copy, then the memfd (no directory of copies can be had
		# under a TMPDIR that is not writable).
		in_ns "$who" 'strace -f -o /dev/null ./stat-s -L -c "%b %B %s" /proc/self/exe &&
			TMPDIR=/proc strace -f -o /dev/null ./stat-s -L -c "%b %B %s" /proc/self/exe &&
			TMPDIR=/proc strace -f -o /dev/null ./stat-s -c "%N" /proc/self/exe'
		[ "$status" -eq 0 ]
		echo "$output"
		local l b u
		mapfile -t l <<<"$output"
		[[ "${l[0]}" == *" 268435456" ]]
		[[ "${l[1]}" == *" 268435456" ]]
		[[ "${l[2]}" == *"/memfd:stat-s"* ]]
		for blocks in "${l[0]}" "${l[1]}"; do
			read -r b u _ <<<"$blocks"
			[ $((b * u)) -le $((4 << 20)) ] # stat's own size, about 100 KiB, not 256 MiB
		done
		in_ns "$who" 'TIEXEC_VERBOSE=1 strace -f -o /dev/null ./stat-t -c %s stat-t'
		[ "$status" -eq 0 ]
		grep -F "tiexec: './stat-t': traced, but no unstamped copy: it holds more than 16 MiB of data past its ELF content, which no direct exec reads: loading it as usual" \
			"$BATS_TEST_TMPDIR/ns.err"
		[ -z "$(find tmp -name stat-t)" ]
	done
	rm -f stat-s stat-t
}

@test "gcore of copied text: unreadable by default (MADV_DONTDUMP), whole with 'set dump-excluded-mappings on'" {
	command -v gdb >/dev/null || skip_unsupported "gdb is not installed"
	coproc P { exec "$TIEXEC" --strategy=thp "$FIXTURES/perfhot" 30; }
	local pid=$P_PID ready
	read -r ready <&"${P[0]}"
	[ "$ready" = ready ]
	gdb -q -batch -p "$pid" -ex "gcore $BATS_TEST_TMPDIR/core.default" >/dev/null 2>&1
	gdb -q -batch -p "$pid" -ex 'set dump-excluded-mappings on' -ex "gcore $BATS_TEST_TMPDIR/core.full" \
		>/dev/null 2>&1
	kill "$pid"
	wait "$pid" || true
	run gdb -q -batch "$FIXTURES/perfhot" "$BATS_TEST_TMPDIR/core.default" -ex bt
	echo "$output"
	[[ "$output" == *"Cannot access memory"* ]]
	run gdb -q -batch "$FIXTURES/perfhot" "$BATS_TEST_TMPDIR/core.full" -ex bt
	echo "$output"
	[[ "$output" == *"#0  perfhot_spin () at "* ]]
	[[ "$output" == *"in main ("*"perfhot_main.c:"* ]]
	[[ "$output" != *"Cannot access memory"* ]]
}

# The far end of a 64 MiB text (PIE, fixed-address, static), a static
# PIE's main, a library's function, Go's main.main and Rust's main: `gdb PROG`, `break X`, `run`
# stops there as directly, with packaging/gdb/tiexec.py (what the packages
# install in /etc/gdb/gdbinit.d), as root and as uid 65534.  Without it,
# every breakpoint outside tiexec's image fails to insert.
@test "gdb PROG, break X far from tiexec, run: stops at X as directly (PIE, fixed, static, static PIE, library, Go, Rust)" {
	command -v gdb >/dev/null || skip_unsupported "gdb is not installed"
	local cases=("bigtext-pie tx_text_last loop 100000" "bigtext-nopie tx_text_last loop 100000"
		"bigtext-static tx_text_last loop 100000" "probe-static-pie main" "perfhot-lib perfhot_spin 1")
	[ -e "$W/go-static" ] && cases+=("go-static main.main")
	# No debug information: Rust's main by its symbol (rbreak, hash and all).
	[ -e "$W/rust-pie" ] && cases+=("rust-pie rusty::main::h")
	local script='for c in "$@"; do
		set -- $c; p=$1 b=$2; shift 2
		cmd="break $b"
		case $b in *::h) cmd="rbreak ^$b" ;; esac
		for v in "$p" "$p-s"; do
			echo "== $v"
			LD_LIBRARY_PATH=$PWD gdb -nx -q -batch -x ./tiexec.py \
				-ex "set breakpoint pending on" -ex "$cmd" -ex run -ex "bt 1" --args "./$v" "$@" 2>&1 |
				grep -E "Breakpoint 1, |^#0 |Cannot insert|Cannot access|exited with" |
				sed -e "s/ ([^)]*)//g" -e "s/^Thread 1 \"[^\"]*\" hit /Thread 1 hit /"
		done
	done'
	for who in root nobody; do
		local t=$BATS_TEST_TMPDIR
		status=0
		TMPDIR=$W/tmp "$ROOT/scripts/binfmt-ns" --user "$who" --interpreter "$W/tiexec" --dir "$W" "$script" \
			_ "${cases[@]}" >"$t/ns.out" 2>"$t/ns.err" || status=$?
		output=$(cat "$t/ns.out")
		echo "$who: status $status"
		echo "$output"
		[ "$status" -ne 90 ] || skip_unsupported "cannot mount a private binfmt_misc (needs Linux >= 6.7)"
		[ "$status" -eq 0 ]
		[[ "$output" != *"Cannot "* ]]
		local c p b
		for c in "${cases[@]}"; do
			read -r p b _ <<<"$c"
			direct=$(sed -n "/^== $p\$/,/^== /p" <<<"$output" | grep -v '^== ' || true)
			stamped=$(sed -n "/^== $p-s\$/,/^== /p" <<<"$output" | grep -v '^== ' || true)
			[[ "$direct" == *"Breakpoint 1, "*"$b"* ]]
			same "$direct" "$stamped"
		done
	done
}
