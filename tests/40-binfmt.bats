#!/usr/bin/env bats
# tiexec as a binfmt_misc interpreter (flags POF), in a PRIVATE binfmt_misc
# instance: every test runs in its own user + mount namespace with its own
# binfmt_misc mount (Linux >= 6.7), so nothing is registered on the machine.
#
# The rule matches only test copies of the fixtures that carry a marker no
# real binary has: bit 0x00400000 in p_flags of program header 0 (file byte
# 70 = 0x40; the kernel and the loaders look only at PF_R|PF_W|PF_X), on top
# of the ELF magic.  Unmarked copies of the same programs stay unaffected.
bats_require_minimum_version 1.5.0
load test_helper

RULE=tiexec-test

setup_file() {
	local t=$BATS_FILE_TMPDIR n

	# m/: marked copies (go through tiexec), u/: unmarked copies.
	mkdir "$t/m" "$t/u"
	for n in probe-pie probe-static probe-nopie probe-static-pie go-static go-cgo cxx-static bigtext-pie; do
		cp "$FIXTURES/$n" "$t/m/$n"
		cp "$FIXTURES/$n" "$t/u/$n"
		# The marker byte must be free (zero) in the original.
		[ "$(od -An -tx1 -j70 -N1 "$t/m/$n" | tr -d ' ')" = 00 ]
		printf '\x40' | dd of="$t/m/$n" bs=1 seek=70 conv=notrunc status=none
	done
	cp /bin/cat "$t/m/cat"
	[ "$(od -An -tx1 -j70 -N1 "$t/m/cat" | tr -d ' ')" = 00 ]
	printf '\x40' | dd of="$t/m/cat" bs=1 seek=70 conv=notrunc status=none

	# magic: "\x7fELF" at 0 and 0x40 at 70; mask: only those 5 bytes.
	local magic mask i
	magic=$(printf '\\x%02x' 0x7f 0x45 0x4c 0x46)
	mask='\xff\xff\xff\xff'
	for i in $(seq 4 69); do
		magic+='\x00'
		mask+='\x00'
	done
	magic+='\x40'
	mask+='\xff'
	printf ':%s:M:0:%s:%s:%s:POF' "$RULE" "$magic" "$mask" "$TIEXEC" >"$t/register"

	# Can this machine give us a private binfmt_misc instance?
	unshare --user --map-root-user --mount sh -c '
		mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc &&
		cat "$0" >/proc/sys/fs/binfmt_misc/register &&
		grep -qx enabled /proc/sys/fs/binfmt_misc/'"$RULE" "$t/register" \
		>"$t/ns-check" 2>&1 || echo "failed" >>"$t/ns-check"
}

setup() {
	if grep -q failed "$BATS_FILE_TMPDIR/ns-check"; then
		skip_unsupported "no private binfmt_misc instance (needs Linux >= 6.7 and unprivileged user namespaces): $(head -c 300 "$BATS_FILE_TMPDIR/ns-check" | tr '\n' ' ')"
	fi
	CLEAN=$FIXTURES/clean
	M=$BATS_FILE_TMPDIR/m
	U=$BATS_FILE_TMPDIR/u
	O=$BATS_TEST_TMPDIR
	export CLEAN M U O TIEXEC RULE
}

# in_ns 'SHELL CODE': run bash code in a fresh user + mount namespace with
# a private binfmt_misc that has our rule registered.  The code can use
#   on / off             enable / disable the rule
#   cap NAME CMD...      run CMD, leaving NAME.out, NAME.err, NAME.st in $O
# Asserts that the namespace was set up (status 0 from the code).
in_ns() {
	run --separate-stderr timeout 120 unshare --user --map-root-user --mount bash -c '
		set -u
		mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc || exit 90
		cat "$0" >/proc/sys/fs/binfmt_misc/register || exit 91
		on() { echo 1 >/proc/sys/fs/binfmt_misc/$RULE; }
		off() { echo 0 >/proc/sys/fs/binfmt_misc/$RULE; }
		cap() {
			local name=$1 st=0
			shift
			"$@" >"$O/$name.out" 2>"$O/$name.err" || st=$?
			echo "$st" >"$O/$name.st"
		}
		'"$1" "$BATS_FILE_TMPDIR/register"
	echo "in_ns status $status, stderr: $stderr"
	[ "$status" -eq 0 ]
}

# got NAME: load $O/NAME.{out,err,st} into $out, $err, $st.
# The marked copies carry the marker bit but no policy note (tiexec-stamp's
# job, tested in 50-stamp.bats): tiexec says so in verbose mode; that line
# is counted in $no_note and left out of $err.
NO_NOTE="marked, but without a readable tiexec note: defaults"
got() {
	out=$(cat "$O/$1.out")
	err=$(grep -v -- "': $NO_NOTE\$" "$O/$1.err" || true)
	no_note=$(grep -c -- "': $NO_NOTE\$" "$O/$1.err" || true)
	st=$(cat "$O/$1.st")
}

SMALL_LINE="loaded without remapping (SIZE of text, below --min-text 2.0 MiB)"
LOADED_RE='^tiexec: .*: [0-9.]+ of [0-9.]+ MiB text on 2 MiB pages \(file [0-9.]+, thp [0-9.]+\), [0-9.]+ on 4 KiB, [0-9.]+ ms$'

# off_on CMD [MORE]: in the namespace, from $M, runs the shell words CMD
# (under $CLEAN, with TIEXEC_VERBOSE=1) with the rule off, captured as
# "direct", and on, as "via"; then the script MORE.
off_on() {
	in_ns "cd \"\$M\"
		off; cap direct \"\$CLEAN\" TIEXEC_VERBOSE=1 $1
		on;  cap via    \"\$CLEAN\" TIEXEC_VERBOSE=1 $1
		${2:-}"
}

# same_both STATUS: both runs of off_on ended with STATUS and printed the
# same; the direct one said nothing on stderr.  Leaves the binfmt run in
# $out, $err, $st.
same_both() {
	got direct
	local d_out=$out
	[ "$st" -eq "$1" ]
	[ -z "$err" ]
	[ "$no_note" -eq 0 ]
	got via
	[ "$st" -eq "$1" ]
	same "$d_out" "$out"
}

# compare_marked PROG ARGS...: run $M/PROG with the rule off and on; reports
# must be identical, and the binfmt run show tiexec's line.
compare_marked() {
	local prog=$1
	shift
	off_on "PROBE_A=x 'PROBE_B=y z' ./$prog $(printf '%q ' "$@")"
	got direct
	same_both "$st"
	same_off "tiexec: './$prog': $SMALL_LINE" "$err"
	[ "$no_note" -eq 1 ]
}

@test "binfmt: marked probe-pie runs through tiexec with the same report" {
	compare_marked probe-pie a 'b c' ''
	[ "$st" -eq 0 ]
	[[ "$out" == $'argc 4\nargv[0] ./probe-pie\nargv[1] a\nargv[2] b c\nargv[3] \n'* ]]
	[[ "$out" == *$'\nAT_EXECFD absent\n'* ]]
	[[ "$out" == *$'\nAT_FLAGS 0x0\n'* ]]
	[[ "$out" == *$'\nAT_EXECFN ./probe-pie\n'* ]]
	[[ "$out" == *$'\nfds 0 1 2\n'* ]]
	[[ "$out" == *$'\ncomm probe-pie\n'* ]]
	[[ "$out" == *$'\ncmdline ./probe-pie|a|b c||\n'* ]]
}

@test "binfmt: marked probe-static runs through tiexec with the same report" {
	compare_marked probe-static a '' 'b c'
	[ "$st" -eq 0 ]
	[[ "$out" == *$'\nAT_EXECFD absent\n'* ]]
	[[ "$out" == *$'\nAT_FLAGS 0x0\n'* ]]
	[[ "$out" == *$'\nfds 0 1 2\n'* ]]
}

@test "binfmt: marked probe-nopie runs through tiexec with the same report" {
	compare_marked probe-nopie x
	[ "$st" -eq 0 ]
	[[ "$out" == *$'\nAT_EXECFD absent\n'* ]]
	[[ "$out" == *$'\nAT_FLAGS 0x0\n'* ]]
}

@test "binfmt: marked probe-static-pie runs through tiexec with the same report" {
	compare_marked probe-static-pie x
	[ "$st" -eq 0 ]
	[[ "$out" == *$'\nAT_EXECFD absent\n'* ]]
	[[ "$out" == *$'\nAT_FLAGS 0x0\n'* ]]
}

@test "binfmt: marked go-static and go-cgo: args, env, exit code" {
	for g in go-static go-cgo; do
		off_on "PROBE_GO=hi PROBE_EXIT=4 ./$g one 'two 2' ''"
		same_both 4
		[[ "$out" == "args ./$g one two 2 "$'\nPROBE_GO hi\n'*$'\ngoroutines ok' ]]
		same_off "tiexec: './$g': $SMALL_LINE" "$err"
	done
}

@test "binfmt: marked cxx-static: exceptions and threads" {
	in_ns 'cd "$M"; cap via "$CLEAN" TIEXEC_VERBOSE=1 ./cxx-static'
	got via
	[ "$st" -eq 0 ]
	same $'exceptions ok\nthreads ok' "$out"
	same_off "tiexec: './cxx-static': $SMALL_LINE" "$err"
}

@test "binfmt: exec -a keeps the original argv[0]" {
	off_on 'bash -c "exec -a myname ./probe-pie x \"\""'
	same_both 0
	[[ "$out" == $'argc 3\nargv[0] myname\nargv[1] x\nargv[2] \n'* ]]
	[[ "$out" == *$'\ncmdline myname|x||\n'* ]]
	# bash's exec passes the program as an absolute path.
	[[ "$out" == *$'\nAT_EXECFN '"$M"$'/probe-pie\n'* ]]
	same_off "tiexec: '$M/probe-pie': $SMALL_LINE" "$err"
}

@test "binfmt: argv[0] unrelated to the path, absolute path" {
	off_on 'bash -c "exec -a \"\" \"$M/probe-static\" -v --strategy=x --"'
	same_both 0
	# No option parsing in binfmt mode: everything reaches the program.
	[[ "$out" == $'argc 4\nargv[0] \nargv[1] -v\nargv[2] --strategy=x\nargv[3] --\n'* ]]
	[[ "$out" == *$'\nAT_EXECFN '"$M"$'/probe-static\n'* ]]
	same_off "tiexec: '$M/probe-static': $SMALL_LINE" "$err"
}

@test "binfmt: through sh -c and a PATH lookup" {
	off_on '"PATH=$M:/usr/bin:/bin" sh -c "probe-pie \"a b\" c"' \
		'on; cap envp "$CLEAN" TIEXEC_VERBOSE=1 "PATH=$M:/usr/bin:/bin" probe-nopie z'
	same_both 0
	[[ "$out" == $'argc 3\nargv[0] probe-pie\nargv[1] a b\nargv[2] c\n'* ]]
	[[ "$out" == *$'\nAT_EXECFN '"$M"$'/probe-pie\n'* ]]
	same_off "tiexec: '$M/probe-pie': $SMALL_LINE" "$err"
	got envp
	[ "$st" -eq 0 ]
	[[ "$out" == $'argc 2\nargv[0] probe-nopie\nargv[1] z\n'* ]]
	same_off "tiexec: '$M/probe-nopie': $SMALL_LINE" "$err"
}

@test "binfmt: exit status passes through" {
	in_ns 'cd "$M"
		on; cap pie "$CLEAN" TIEXEC_VERBOSE=1 PROBE_EXIT=7 ./probe-pie
		on; cap static "$CLEAN" TIEXEC_VERBOSE=1 PROBE_EXIT=9 ./probe-static'
	got pie
	[ "$st" -eq 7 ]
	[[ "$out" == *$'\nenv PROBE_EXIT=7\n'* ]]
	same_off "tiexec: './probe-pie': $SMALL_LINE" "$err"
	got static
	[ "$st" -eq 9 ]
	[[ "$out" == *$'\nenv PROBE_EXIT=9\n'* ]]
	same_off "tiexec: './probe-static': $SMALL_LINE" "$err"
}

@test "binfmt: death by signal passes through" {
	in_ns 'cd "$M"
		on; cap term "$CLEAN" TIEXEC_VERBOSE=1 PROBE_SIGNAL=15 ./probe-pie
		on; cap abrt "$CLEAN" TIEXEC_VERBOSE=1 PROBE_SIGNAL=6 ./probe-static'
	got term
	[ "$st" -eq 143 ]
	[[ "$out" == *$'\nmalloc-big ok' ]]
	same_off "tiexec: './probe-pie': $SMALL_LINE" "$err"
	got abrt
	[ "$st" -eq 134 ]
	[[ "$out" == *$'\nmalloc-big ok' ]]
	same_off "tiexec: './probe-static': $SMALL_LINE" "$err"
}

@test "binfmt: inherited fds are kept and the AT_EXECFD descriptor is closed" {
	off_on 'sh -c "exec 5</dev/null 8>/dev/null; exec ./probe-pie"'
	same_both 0
	[[ "$out" == *$'\nfds 0 1 2 5 8\n'* ]]
	[[ "$out" == *$'\nAT_EXECFD absent\n'* ]]
	same_off "tiexec: './probe-pie': $SMALL_LINE" "$err"
}

@test "binfmt: stdin and stdout pipes" {
	in_ns 'cd "$M"
		on; cap via bash -c "printf \"in 1\nin 2\n\" | \"\$CLEAN\" TIEXEC_VERBOSE=1 PROBE_STDIN=1 ./probe-pie | tail -n 3"'
	got via
	[ "$st" -eq 0 ]
	same $'malloc-big ok\nin 1\nin 2' "$out"
	same_off "tiexec: './probe-pie': $SMALL_LINE" "$err"
}

@test "binfmt: the program keeps the pid the shell exec'd" {
	# A marked copy of /bin/cat (small dynamic PIE) prints its own
	# /proc/self/stat, whose first field is its pid.
	in_ns 'cd "$M"
		on; cap via "$CLEAN" TIEXEC_VERBOSE=1 TIEXEC_MIN_TEXT=0 sh -c "echo \$\$; exec ./cat /proc/self/stat"'
	got via
	[ "$st" -eq 0 ]
	local pid=${out%%$'\n'*} stat=${out#*$'\n'}
	[[ "$pid" =~ ^[0-9]+$ ]]
	[[ "$stat" == "$pid (cat) "* ]]
	[[ "$err" =~ $LOADED_RE ]]
	[[ "$err" == "tiexec: './cat': "* ]]
}

@test "binfmt: TIEXEC_MIN_TEXT=0 remaps even a small program, still no execve loop" {
	off_on 'TIEXEC_MIN_TEXT=0 ./probe-nopie q' \
		'on; cap big "$CLEAN" TIEXEC_VERBOSE=1 TIEXEC_MIN_TEXT=1G ./probe-nopie q'
	same_both 0
	local d_out=$out
	[[ "$err" =~ $LOADED_RE ]]
	[[ "$err" == "tiexec: './probe-nopie': "* ]]
	got big
	[ "$st" -eq 0 ]
	same "$d_out" "$out"
	same_off "tiexec: './probe-nopie': loaded without remapping (SIZE of text, below --min-text 1024.0 MiB)" "$err"
}

@test "binfmt: TIEXEC_STRATEGY and a bad setting" {
	in_ns 'cd "$M"
		on; cap off "$CLEAN" TIEXEC_VERBOSE=1 TIEXEC_MIN_TEXT=0 TIEXEC_STRATEGY=off ./probe-pie
		on; cap bad "$CLEAN" TIEXEC_STRATEGY=bogus ./probe-pie'
	got off
	[ "$st" -eq 0 ]
	[[ "$out" == $'argc 1\nargv[0] ./probe-pie\n'* ]]
	same_off "tiexec: './probe-pie': loaded without remapping (--strategy=off)" "$err"
	got bad
	[ "$st" -eq 0 ]
	[[ "$out" == $'argc 1\nargv[0] ./probe-pie\n'* ]]
	same "tiexec: ignoring bad setting TIEXEC_STRATEGY=bogus" "$err"
}

@test "binfmt: an unmarked copy does not go through tiexec" {
	in_ns 'on; cap pie "$CLEAN" TIEXEC_VERBOSE=1 "$U/probe-pie" a
		on; cap big "$CLEAN" TIEXEC_VERBOSE=1 "$U/bigtext-pie" report
		on; cap marked "$CLEAN" TIEXEC_VERBOSE=1 "$M/probe-pie" a'
	got pie
	[ "$st" -eq 0 ]
	[[ "$out" == $'argc 2\nargv[0] '"$U"$'/probe-pie\nargv[1] a\n'* ]]
	[ -z "$err" ]
	got big
	[ "$st" -eq 0 ]
	[[ "$out" == text_begin* ]]
	[ -z "$err" ]
	# ... while in the same namespace the marked one does.
	got marked
	[ "$st" -eq 0 ]
	same_off "tiexec: '$M/probe-pie': $SMALL_LINE" "$err"
}

@test "binfmt: large text of a marked bigtext-pie is on huge pages" {
	in_ns 'cd "$M"; on; cap via "$CLEAN" TIEXEC_VERBOSE=1 ./bigtext-pie report'
	got via
	[ "$st" -eq 0 ]
	[[ "$err" =~ $LOADED_RE ]]
	[[ "$err" == "tiexec: './bigtext-pie': "* ]]
	local line
	line=$(grep -E '^map .* r-xp .*/bigtext-pie$' <<<"$out")
	echo "text mapping: $line"
	[[ "$line" =~ (file_pmd_kb|anon_huge_kb)=[1-9] ]]
	# The program's own check of its text is fine.
	[[ "$out" == text_begin* ]]
}

@test "binfmt: bigtext-pie computes the same through binfmt" {
	off_on './bigtext-pie loop 20000'
	same_both 0
	[[ "$out" == sum* ]]
	[[ "$err" =~ $LOADED_RE ]]
}

@test "binfmt: stdin closed: AT_EXECFD 0 is the program, closed before it runs" {
	# The kernel's O flag puts the program on the lowest free descriptor:
	# 0 when the caller closed stdin.  The program must find fd 0 closed,
	# as after a direct exec.
	off_on 'bash -c "exec ./probe-pie x <&-"'
	same_both 0
	[[ "$out" == *$'\nfds 1 2\n'* ]]
	[[ "$out" == *$'\nAT_EXECFD absent\n'* ]]
	same_off "tiexec: '$M/probe-pie': $SMALL_LINE" "$err"
}

@test "binfmt: fexecve (execveat AT_EMPTY_PATH): comm is the file's name, as directly" {
	off_on "\"$FIXTURES/fexec\" ./probe-pie x"
	same_both 0
	[[ "$out" == *$'\ncomm probe-pie\n'* ]]
	[[ "$out" == *$'\nAT_EXECFN /dev/fd/'* ]]
}

@test "binfmt: fexecve of an O_CLOEXEC descriptor: the kernel's binfmt_misc says ENOENT" {
	# Documented kernel behaviour (README, Limits): binfmt_misc refuses a
	# program whose only name is a descriptor closed on exec.
	off_on "\"$FIXTURES/fexec\" --cloexec ./probe-pie x"
	got direct
	[ "$st" -eq 0 ]
	got via
	[ "$st" -eq 127 ]
	[[ "$err" == *"fexec: execveat: No such file or directory"* ]]
}

@test "binfmt: RLIMIT_NOFILE 4 (one descriptor above stdio, taken by the O flag)" {
	off_on 'bash -c "ulimit -n 4; exec ./probe-pie x"'
	same_both 0
	[[ "$out" == *$'\nfds 0 1 2\n'* ]]
	# No descriptor is left to read the libraries with, so none is
	# planned (interp/libwalk.c), and -v says so after the loader's line.
	local plan="tiexec: '$M/probe-pie': libraries from 'libc.so.6' on not planned before ld.so: cannot open it: Too many open files"
	[ "$(tail -n 1 <<<"$err")" = "$plan" ]
	same_off "tiexec: '$M/probe-pie': $SMALL_LINE" "$(grep -vxF "$plan" <<<"$err")"
}

@test "binfmt: RLIMIT_NOFILE 3: the kernel itself cannot hand over the program (SIGSEGV, documented)" {
	off_on 'bash -c "ulimit -n 3; exec ./go-static a"'
	got direct
	[ "$st" -eq 0 ]
	[[ "$out" == "args ./go-static a"$'\n'* ]]
	got via
	[ "$st" -eq 139 ]
	[ -z "$out" ]
}
