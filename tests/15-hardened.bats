#!/usr/bin/env bats
# Hardened and unusual environments, each compared with a direct exec of
# the same program under the same conditions: MemoryDenyWriteExecute
# (prctl and a systemd-like seccomp filter), a small RLIMIT_STACK with a
# large argument list, low RLIMIT_NOFILE, FIFOs and long paths.
bats_require_minimum_version 1.5.0
load test_helper

setup() {
	CLEAN=$FIXTURES/clean
	MDWE=$FIXTURES/mdwe
	cd "$FIXTURES"
}

# direct_vs_loader EXPECT CMD...: runs CMD... with "@" replaced by nothing
# (direct) and by "$TIEXEC -v --min-text=0" (through tiexec); same status
# and stdout.  The loader's stderr is left in $via_err.
direct_vs_loader() {
	local want=$1 direct=() via=()
	shift
	for w in "$@"; do
		if [ "$w" = @ ]; then
			via+=("$TIEXEC" -v --min-text=0)
		else
			direct+=("$w")
			via+=("$w")
		fi
	done
	run --separate-stderr timeout 60 "${direct[@]}"
	[ "$status" -eq "$want" ] || { echo "direct: status $status, $stderr"; return 1; }
	local d_out=$output
	run --separate-stderr timeout 60 "${via[@]}"
	echo "tiexec: status $status, stderr: $stderr"
	[ "$status" -eq "$want" ]
	same "$d_out" "$output"
	via_err=$stderr
}

@test "MemoryDenyWriteExecute (PR_SET_MDWE): programs run, the final stage included" {
	"$MDWE" prctl true || skip_unsupported "PR_SET_MDWE refused (Linux >= 6.3)"
	for p in probe-pie probe-static probe-nopie probe-static-pie; do
		direct_vs_loader 0 "$MDWE" prctl @ "./$p" a 'b c'
		[[ "$via_err" == "tiexec: './$p': "*" ms" ]]
	done
	direct_vs_loader 0 "$MDWE" prctl @ ./go-static x
	direct_vs_loader 0 "$MDWE" prctl @ ./cxx-pie
}

@test "MemoryDenyWriteExecute (seccomp filter, as systemd installs): programs run" {
	for p in probe-pie probe-static; do
		direct_vs_loader 0 "$MDWE" seccomp @ "./$p" a 'b c'
	done
	direct_vs_loader 0 "$MDWE" seccomp @ ./go-cgo x
}

@test "MemoryDenyWriteExecute as root: /proc/self/exe is still set to the program" {
	run_t "$MDWE" prctl "$TIEXEC" --min-text=0 ./reexec
	[ "$status" -eq 7 ]
	[[ "$output" == "parent exe=reexec "* ]]
}

@test "11,000 arguments under ulimit -s 200: runs as directly" {
	# The kernel accepts 128 KiB of arguments whatever the stack limit;
	# the stack tiexec builds must not need more than that.
	local args
	args=$(printf 'x %.0s' $(seq 1 11000))
	direct_vs_loader 0 bash -c "ulimit -s 200; exec \"\$@\"" _ @ "$FIXTURES/probe-pie" $args
	[[ "$output" == "argc 11001"$'\n'* ]]
	direct_vs_loader 0 bash -c "ulimit -s 200; exec \"\$@\"" _ @ "$FIXTURES/probe-static" $args
}

@test "RLIMIT_NOFILE 3 (soft and hard): the program still runs, directly" {
	direct_vs_loader 0 "$CLEAN" bash -c 'ulimit -n 3; exec "$@"' _ @ "$FIXTURES/go-static" a
	same "tiexec: '$FIXTURES/go-static': no free file descriptor (RLIMIT_NOFILE): running it directly" "$via_err"
}

@test "RLIMIT_NOFILE 4: no descriptor for the interpreter, run directly; soft 4: loaded, limit restored" {
	direct_vs_loader 0 "$CLEAN" bash -c 'ulimit -n 4; exec "$@"' _ @ "$FIXTURES/probe-pie" a
	same "tiexec: '$FIXTURES/probe-pie': no free file descriptor (RLIMIT_NOFILE): running it directly" "$via_err"
	# Soft limit only: tiexec borrows up to the hard limit, gives it back.
	direct_vs_loader 0 "$CLEAN" bash -c 'ulimit -Sn 4; exec "$@"' _ @ "$FIXTURES/probe-pie" a
	[[ "$via_err" == "tiexec: '$FIXTURES/probe-pie': "*" ms" ]]
	[[ "$via_err" != *"running it directly"* ]]
	run_t "$CLEAN" bash -c 'ulimit -Sn 4; exec "$1" --min-text=0 /bin/sh -c "ulimit -Sn; ulimit -Hn"' _ "$TIEXEC"
	same "4
$(ulimit -Hn)" "$output"
}

@test "a FIFO as the program: EACCES at once, as directly, never opened" {
	mkfifo "$BATS_TEST_TMPDIR/fifo"
	chmod 755 "$BATS_TEST_TMPDIR/fifo"
	run -126 timeout 10 env "$BATS_TEST_TMPDIR/fifo"
	[[ "$output" == *"Permission denied"* ]]
	run -126 timeout 10 "$TIEXEC" "$BATS_TEST_TMPDIR/fifo"
	same "tiexec: '$BATS_TEST_TMPDIR/fifo': Permission denied" "$output"
}

@test "a 1,100-character path: one line, cut in the middle, the reason kept" {
	local long=/nonexistent
	while [ ${#long} -lt 1100 ]; do long+=/abcdefghijklmnopqrstuvwxyz; done
	long+=/the-program
	run -127 --separate-stderr "$TIEXEC" "$long"
	[ "${#stderr_lines[@]}" -eq 1 ]
	[[ "$stderr" == "tiexec: '/nonexistent/abcdef"*"..."*"abcdefghijklmnopqrstuvwxyz/the-program': No such file or directory" ]]
	[ ${#stderr} -lt 400 ]
	# The newline is there (run strips it; check the raw bytes).
	"$TIEXEC" "$long" 2>&1 | tail -c1 | od -An -c | grep -q '\\n'
}

@test "a chroot without /proc and /sys: programs run as directly, -v says why their text stays on 4 KiB pages" {
	[ "$(id -u)" = 0 ] || skip_unsupported "needs root: chroot"
	local R=$BATS_TEST_TMPDIR/root
	mkdir -p "$R/lib/x86_64-linux-gnu" "$R/lib64"
	cp "$TIEXEC" "$R/tiexec"
	cp "$FIXTURES/bigtext-static" "$R/big-static"
	cp "$FIXTURES/bigtext-pie" "$R/big-pie"
	cp "$FIXTURES/bigtext-lib.so" "$R/lib/x86_64-linux-gnu/"
	cp /lib/x86_64-linux-gnu/libc.so.6 "$R/lib/x86_64-linux-gnu/"
	cp /lib64/ld-linux-x86-64.so.2 "$R/lib64/"
	local p
	for p in big-static big-pie; do
		run --separate-stderr chroot "$R" "/$p" loop 1000
		local want=$output
		run --separate-stderr chroot "$R" /tiexec -v "/$p" loop 1000
		echo "$stderr"
		[ "$status" -eq 0 ]
		same "$want" "$output"
		[[ "$stderr" == *"tiexec: '/$p': file: /proc is not mounted here (a chroot?): which pages are huge cannot be checked"* ]]
		[[ "$stderr" == *"tiexec: '/$p': thp: /sys is not mounted here (a chroot?): the THP settings cannot be read"* ]]
	done
	# (chroot itself, outside, cannot preload it and says so.)
	run --separate-stderr env LD_PRELOAD=/lib/x86_64-linux-gnu/bigtext-lib.so chroot "$R" /tiexec -v /big-pie loop 1000
	[ "$status" -eq 0 ]
	[[ "$stderr" == *"tiexec: '/big-pie': libraries left as ld.so mapped them: /proc/self/maps cannot be read (/proc not mounted?)"* ]]
}

# A seccomp filter refusing one system call, as container runtimes and
# systemd's SystemCallFilter do.  Every system call tiexec makes (strace'd
# here, so a new one is covered as soon as it is made) is refused in turn,
# with EPERM and then ENOSYS; each program must behave as its direct exec
# under the same filter: the same status and output (a program the filter
# breaks directly breaks the same way).  tests/fixtures/deny.c.
DENY_PROGS=("bigtext-static loop 3" "bigtext-nopie loop 3" "probe-pie")

# deny_setup DIR: DIR/deny built, DIR/nums the system calls tiexec makes
# for DENY_PROGS ("NAME NUMBER" lines).
deny_setup() {
	local D=$1 p
	command -v strace >/dev/null || skip_unsupported "strace is not installed"
	gcc -O2 -Wall -Wextra -o "$D/deny" "$ROOT/tests/fixtures/deny.c"
	for p in "${DENY_PROGS[@]}"; do
		# shellcheck disable=SC2086 # the program and its arguments
		strace -f -qq -o "$D/st" "$TIEXEC" $FIXTURES/$p >/dev/null 2>&1
		sed -nE 's/^[0-9]+ +([a-z0-9_]+)\(.*/\1/p' "$D/st" >>"$D/names"
	done
	{
		echo '#include <sys/syscall.h>'
		sort -u "$D/names" | grep -vx execve | sed 's/.*/& SYS_&/'
	} | gcc -E -P - | grep -E '^[a-z0-9_]+ [0-9]+$' >"$D/nums"
	echo "$(wc -l <"$D/nums") system calls: $(cut -d' ' -f1 "$D/nums" | tr '\n' ' ')"
	[ "$(wc -l <"$D/nums")" -ge 25 ]
	grep -q '^statx ' "$D/nums" && grep -q '^fcntl ' "$D/nums" && grep -q '^mmap ' "$D/nums"
}

@test "seccomp refusing any one system call tiexec makes (EPERM, ENOSYS): as the direct exec" {
	local D=$BATS_TEST_TMPDIR p n nr e bad=0
	deny_setup "$D"
	for p in "${DENY_PROGS[@]}"; do
		for e in 1 38; do
			while read -r n nr; do
				# shellcheck disable=SC2086
				d=$(cd / && timeout 30 "$D/deny" "$nr" "$e" $FIXTURES/$p 2>/dev/null; echo "status $?")
				# shellcheck disable=SC2086
				t=$(cd / && timeout 30 "$D/deny" "$nr" "$e" "$TIEXEC" $FIXTURES/$p 2>/dev/null; echo "status $?")
				if [ "$d" != "$t" ]; then
					echo "$p, $n refused ($e): direct: $(tail -c 100 <<<"$d" | tr '\n' ' ') tiexec: $(tail -c 100 <<<"$t" | tr '\n' ' ')"
					bad=$((bad + 1))
				fi
			done <"$D/nums"
		done
	done
	[ "$bad" -eq 0 ]
}

# Through binfmt_misc a plain execve would come back to tiexec: there the
# program runs from an unstamped copy (interp/aside.h), whose path
# AT_EXECFN then names.  Lines of the probe's that may differ: AT_EXECFN,
# and for uid 65534 the TIEXEC_EXE tiexec adds (README, /proc/self/exe).
# uid 65534 takes the same code path; it is tried with EPERM on two
# programs, to keep the run short.
@test "seccomp refusing any one system call, stamped programs through binfmt_misc: as the direct exec (root, 65534)" {
	local W p who out st want
	W=$(mktemp -d /tmp/tiexec-deny.XXXX)
	chmod 755 "$W"
	mkdir -m 777 "$W/tmp"
	mkdir "$W/plain"
	deny_setup "$W"
	for p in "${DENY_PROGS[@]}"; do
		p=${p%% *}
		cp "$FIXTURES/$p" "$W/plain/$p"
		cp "$FIXTURES/$p" "$W/$p"
		"$BUILD/stamp/tiexec-stamp" --min-text=0 "$W/$p" >/dev/null
	done
	printf '%s\n' "${DENY_PROGS[@]}" >"$W/progs.root"
	printf '%s\n' "${DENY_PROGS[0]}" "${DENY_PROGS[2]}" >"$W/progs.nobody"
	chmod -R a+rX "$W"
	# shellcheck disable=SC2016 # expanded in the namespace
	local script='while read -r p; do for e in $1; do while read -r n nr; do
		d=$(cd plain && timeout 30 ../deny $nr $e ./$p 2>/dev/null | grep -Ev "^(AT_EXECFN|envcount|env TIEXEC_EXE=)"; echo "status $?")
		t=$(timeout 30 ./deny $nr $e ./$p 2>/dev/null | grep -Ev "^(AT_EXECFN|envcount|env TIEXEC_EXE=)"; echo "status $?")
		[ "$d" = "$t" ] || echo "DIFF $p, $n refused ($e): direct: $(tail -c 100 <<<"$d" | tr "\n" " ") tiexec: $(tail -c 100 <<<"$t" | tr "\n" " ")"
		echo case
	done <nums; done; done <progs.$2'
	for who in root nobody; do
		st=0
		if [ "$who" = root ]; then set -- "1 38" 6; else set -- 1 2; fi
		want=$(($2 * $(wc -l <"$W/nums")))
		TMPDIR=$W/tmp "$ROOT/scripts/binfmt-ns" --user "$who" --interpreter "$TIEXEC" --dir "$W" "$script" \
			_ "$1" "$who" >"$W/out" 2>"$W/err" || st=$?
		[ "$st" -ne 90 ] || { rm -rf "$W"; skip_unsupported "cannot mount a private binfmt_misc (needs Linux >= 6.7)"; }
		[ "$st" -eq 0 ] || { cat "$W/err"; rm -rf "$W"; false; }
		out=$(cat "$W/out")
		echo "$who: $(grep -c '^case' <<<"$out") cases of $want"
		grep '^DIFF' <<<"$out" || true
		[ "$(grep -c '^case' <<<"$out")" -eq "$want" ] || { rm -rf "$W"; false; }
		! grep -q '^DIFF' <<<"$out" || { rm -rf "$W"; false; }
	done
	rm -rf "$W"
}
