#!/usr/bin/env bats
# tiexec-binfmt and binfmt.d/tiexec.conf as the build makes them
# (common/meson.build): registering the binfmt_misc rule.  Every registration happens in a PRIVATE
# binfmt_misc instance: each test runs its code in a fresh user + mount + pid
# namespace with its own binfmt_misc mount (Linux >= 6.7 gives each user
# namespace its own), so nothing is registered on the machine and nothing a
# test starts outlives it.
bats_require_minimum_version 1.5.0
load test_helper

BM=/proc/sys/fs/binfmt_misc

# Byte at OFFSET of FILE, as two hex digits.
byte_at() {
	od -An -tx1 -j"$2" -N1 "$1" | tr -d ' \n'
}

# poke FILE OFFSET HEX: overwrite one byte.
poke() {
	printf '%b' "\\x$3" | dd of="$1" bs=1 seek="$2" conv=notrunc status=none
}

setup_file() {
	local t=$BATS_FILE_TMPDIR n

	# u/: unmarked copies, m/: marked copies (byte 70 |= 0x40),
	# x/: marked copies the rule must not match.
	mkdir "$t/u" "$t/m" "$t/x"
	for n in probe-pie probe-nopie probe-static; do
		cp "$FIXTURES/$n" "$t/u/$n"
		cp "$FIXTURES/$n" "$t/m/$n"
		# The marker byte must be free (zero) in the original.
		[ "$(byte_at "$t/m/$n" 70)" = 00 ]
		poke "$t/m/$n" 70 40
	done
	# Wrong machine (EM_AARCH64) and 32-bit class, marker kept.
	cp "$t/m/probe-pie" "$t/x/aarch64"
	[ "$(byte_at "$t/x/aarch64" 18)" = 3e ]
	poke "$t/x/aarch64" 18 b7
	cp "$t/m/probe-pie" "$t/x/class32"
	[ "$(byte_at "$t/x/class32" 4)" = 02 ]
	poke "$t/x/class32" 4 01

	# The rule as docs/reference.md specifies it, written out here on its
	# own: bytes 0..70, with the machine (bytes 18-19) of the loader itself.
	local magic=() mask=() i
	for i in $(seq 0 70); do magic[i]=00 mask[i]=00; done
	magic[0]=7f magic[1]=45 magic[2]=4c magic[3]=46 # "\177ELF"
	magic[4]=02 magic[5]=01 magic[6]=01             # 64-bit, LSB, version 1
	magic[16]=02 mask[16]=fe                        # ET_EXEC or ET_DYN
	magic[18]=$(byte_at "$TIEXEC" 18) magic[19]=$(byte_at "$TIEXEC" 19)
	magic[32]=40 magic[54]=38 magic[70]=40          # e_phoff, e_phentsize, the mark
	for i in 0 1 2 3 4 5 6 17 18 19 32 33 34 35 36 37 38 39 54 55; do mask[i]=ff; done
	mask[70]=40
	{
		echo tiexec
		echo POF
		printf '\\x%s' "${magic[@]}"
		echo
		printf '\\x%s' "${mask[@]}"
		echo
	} >"$t/mark.txt"

	# Can this machine give us a private binfmt_misc instance?
	unshare --user --map-root-user --mount sh -c \
		"mount -t binfmt_misc binfmt_misc $BM && test -e $BM/register" \
		>"$t/ns-check" 2>&1 || echo "failed" >>"$t/ns-check"
}

setup() {
	SCRIPT=$BUILD/packaging/tiexec-binfmt
	CLEAN=$FIXTURES/clean
	U=$BATS_FILE_TMPDIR/u
	M=$BATS_FILE_TMPDIR/m
	X=$BATS_FILE_TMPDIR/x
	O=$BATS_TEST_TMPDIR
	export SCRIPT CLEAN U M X O BM H_MAGIC H_MASK TIEXEC
	{
		read -r H_NAME
		read -r H_FLAGS
		read -r H_MAGIC
		read -r H_MASK
	} <"$BATS_FILE_TMPDIR/mark.txt"
	# As the kernel shows them: hex digits without "\x".
	H_MAGIC_HEX=${H_MAGIC//\\x/}
	H_MASK_HEX=${H_MASK//\\x/}
}

ns_unsupported() {
	skip_unsupported "no private binfmt_misc instance (needs Linux >= 6.7 and unprivileged user namespaces): $*"
}

# The code given to in_ns / in_bare_ns can use
#   cap NAME CMD...   run CMD, leaving NAME.out, NAME.err, NAME.st in $O
#   tb ARGS...        scripts/tiexec-binfmt ARGS...
NS_LIB='
set -u
cap() {
	local name=$1 st=0
	shift
	"$@" >"$O/$name.out" 2>"$O/$name.err" || st=$?
	echo "$st" >"$O/$name.st"
}
tb() { "$SCRIPT" "$@"; }
'

# in_bare_ns 'BASH CODE': run the code as root of a fresh user + mount + pid
# namespace (with its own /proc; binfmt_misc not mounted).  The pid
# namespace ends, and every process in it is killed, when the code returns.
# Asserts that the code returned 0.
in_bare_ns() {
	run --separate-stderr timeout 120 \
		unshare --user --map-root-user --mount --pid --fork --kill-child --mount-proc \
		bash -c "$NS_LIB$1"
	echo "namespace status $status, stdout: $output, stderr: $stderr"
	if [ "$status" -eq 90 ]; then
		ns_unsupported "$stderr"
	fi
	[ "$status" -eq 0 ]
}

# in_ns 'BASH CODE': the same, with a private binfmt_misc mounted at $BM.
in_ns() {
	if grep -q failed "$BATS_FILE_TMPDIR/ns-check"; then
		ns_unsupported "$(head -c 300 "$BATS_FILE_TMPDIR/ns-check" | tr '\n' ' ')"
	fi
	in_bare_ns "mount -t binfmt_misc binfmt_misc $BM || exit 90
		$1"
}

# got NAME: load $O/NAME.{out,err,st} into $out, $err, $st.
got() {
	out=$(cat "$O/$1.out")
	err=$(cat "$O/$1.err")
	st=$(cat "$O/$1.st")
}

# The status report of our rule registered with interpreter $1.
want_status() {
	printf '%s\n' "tiexec: registered" enabled "interpreter $1" "flags POF" "offset 0" \
		"magic $H_MAGIC_HEX" "mask $H_MASK_HEX"
}

# What the kernel shows in $BM/tiexec for our rule with interpreter $1.
want_entry() {
	printf '%s\n' enabled "interpreter $1" "flags: POF" "offset 0" \
		"magic $H_MAGIC_HEX" "mask $H_MASK_HEX"
}

VIA_RE="^tiexec: '"

@test "register: rule name, flags and magic/mask of common/mark.h" {
	same tiexec "$H_NAME"
	same POF "$H_FLAGS"
	in_ns 'cap reg tb register --interpreter "$TIEXEC"
		cap status tb status
		cap entry cat "$BM/tiexec"
		cap ls ls "$BM"'
	got reg
	[ "$st" -eq 0 ]
	same "tiexec: registered, interpreter $TIEXEC, flags POF" "$out"
	[ -z "$err" ]
	got status
	[ "$st" -eq 0 ]
	same "$(want_status "$TIEXEC")" "$out"
	[ -z "$err" ]
	got entry
	same "$(want_entry "$TIEXEC")" "$out"
	got ls
	same $'register\nstatus\ntiexec' "$out"
}

@test "register twice: still one rule with the same content" {
	in_ns 'cap one tb register --interpreter "$TIEXEC"
		cap entry1 cat "$BM/tiexec"
		cap two tb register --interpreter "$TIEXEC"
		cap entry2 cat "$BM/tiexec"
		cap ls ls "$BM"'
	got one
	[ "$st" -eq 0 ]
	got entry1
	local e1=$out
	got two
	[ "$st" -eq 0 ]
	same "tiexec: registered, interpreter $TIEXEC, flags POF" "$out"
	[ -z "$err" ]
	got entry2
	same "$e1" "$out"
	same "$(want_entry "$TIEXEC")" "$out"
	got ls
	same $'register\nstatus\ntiexec' "$out"
}

@test "register replaces a changed or disabled rule" {
	in_ns 'cap one tb register --interpreter "$FIXTURES/probe-static"
		echo 0 >"$BM/tiexec"
		cap s1 tb status
		cap two tb register --interpreter "$TIEXEC"
		cap s2 tb status'
	got one
	[ "$st" -eq 0 ]
	got s1
	[ "$st" -eq 0 ]
	same "$(want_status "$FIXTURES/probe-static" | sed 's/^enabled$/disabled/')" "$out"
	got two
	[ "$st" -eq 0 ]
	got s2
	[ "$st" -eq 0 ]
	same "$(want_status "$TIEXEC")" "$out"
}

@test "another rule survives register, unregister and re-register untouched" {
	in_ns 'printf "%s" ":other:M::\x7fOTHER::/bin/cat:" >"$BM/register"
		cap before cat "$BM/other"
		cap reg1 tb register --interpreter "$TIEXEC"
		cap after1 cat "$BM/other"
		cap unreg tb unregister
		cap after2 cat "$BM/other"
		cap reg2 tb register --interpreter "$TIEXEC"
		cap reg3 tb register --interpreter "$TIEXEC"
		cap after3 cat "$BM/other"
		cap ls ls "$BM"
		cap global cat "$BM/status"'
	got before
	local want=$out
	same $'enabled\ninterpreter /bin/cat\nflags: \noffset 0\nmagic 7f4f54484552' "$want"
	for n in reg1 unreg reg2 reg3; do
		got $n
		[ "$st" -eq 0 ]
	done
	for n in after1 after2 after3; do
		got $n
		same "$want" "$out"
	done
	got ls
	same $'other\nregister\nstatus\ntiexec' "$out"
	got global
	same enabled "$out"
}

@test "unregister removes the rule, a second unregister is harmless" {
	in_ns 'cap reg tb register --interpreter "$TIEXEC"
		cap un1 tb unregister
		cap ls ls "$BM"
		cap un2 tb unregister
		cap status tb status'
	got reg
	[ "$st" -eq 0 ]
	got un1
	[ "$st" -eq 0 ]
	same "tiexec: unregistered" "$out"
	[ -z "$err" ]
	got ls
	same $'register\nstatus' "$out"
	got un2
	[ "$st" -eq 0 ]
	same "tiexec: not registered, nothing to do" "$out"
	[ -z "$err" ]
	got status
	[ "$st" -eq 3 ]
	same "tiexec: not registered" "$out"
	[ -z "$err" ]
}

@test "status when nothing is registered exits 3" {
	in_ns 'cap status tb status'
	got status
	[ "$st" -eq 3 ]
	same "tiexec: not registered" "$out"
	[ -z "$err" ]
}

@test "binfmt_misc not mounted: status and unregister say how to mount it; register mounts it" {
	# A fresh namespace's /proc/sys/fs/binfmt_misc is an empty directory of
	# procfs, binfmt_misc is not mounted there.
	in_bare_ns 'umount "$BM" 2>/dev/null
		cap fstype stat -f -c %T "$BM"
		cap ls ls -A "$BM"
		cap status tb status
		cap unreg tb unregister
		cap nodir env TIEXEC_BINFMT_DIR="$O/nodir" "$SCRIPT" register --interpreter "$TIEXEC"
		cap reg tb register --interpreter "$TIEXEC"
		cap status2 tb status'
	got fstype
	same proc "$out"
	got ls
	[ -z "$out" ]
	for n in status unreg; do
		got $n
		[ "$st" -eq 1 ]
		[ -z "$out" ]
		same "tiexec-binfmt: binfmt_misc is not mounted at $BM: mount it with 'mount -t binfmt_misc binfmt_misc $BM' (as root)" "$err"
	done
	got nodir
	[ "$st" -eq 1 ]
	[ -z "$out" ]
	[[ "$err" == "tiexec-binfmt: binfmt_misc is not mounted at $O/nodir and cannot be mounted here ("*"): as root, run 'mount -t binfmt_misc binfmt_misc $O/nodir'" ]]
	got reg
	if grep -q failed "$BATS_FILE_TMPDIR/ns-check"; then
		# No private instance on this kernel: the mount is refused.
		[ "$st" -eq 1 ]
		[[ "$err" == "tiexec-binfmt: binfmt_misc is not mounted at $BM and cannot be mounted here ("* ]]
		return 0
	fi
	[ "$st" -eq 0 ]
	same "binfmt_misc: mounted at $BM
tiexec: registered, interpreter $TIEXEC, flags POF" "$out"
	got status2
	[ "$st" -eq 0 ]
	same "$(want_status "$TIEXEC")" "$out"
	[ -z "$err" ]
}

@test "status warns about a rule registered without O or F (as binfmt-support does)" {
	in_ns 'printf "%s" ":tiexec:M:0:$H_MAGIC:$H_MASK:$TIEXEC:PF" >"$BM/register" || exit 1
		cap pf tb status
		echo -1 >"$BM/tiexec"
		printf "%s" ":tiexec:M:0:$H_MAGIC:$H_MASK:$TIEXEC:PO" >"$BM/register" || exit 1
		cap po tb status'
	got pf
	[ "$st" -eq 0 ]
	same "$(want_status "$TIEXEC" | sed 's/^flags POF$/flags PF/')" "$out"
	same "tiexec-binfmt: warning: flags PF, without O (binfmt-support registers the rule so): a stamped program that its caller may execute but not read (mode 0711) fails with 'Permission denied'; 'tiexec-binfmt register' registers it with POF" "$err"
	got po
	[ "$st" -eq 0 ]
	same "tiexec-binfmt: warning: flags PO, without F: stamped programs in containers and chroots without $TIEXEC fail; 'tiexec-binfmt register' registers it with POF" "$err"
}

@test "--version: the project's version, from the built script" {
	run "$BUILD/packaging/tiexec-binfmt" --version
	[ "$status" -eq 0 ]
	[[ "$output" =~ ^tiexec-binfmt\ [0-9]+\.[0-9]+\.[0-9]+$ ]]
}

@test "register/status without write access: one-line error, status 1" {
	# A stand-in for binfmt_misc on a read-only tmpfs (root could write
	# the real one anywhere): TIEXEC_BINFMT_DIR points the script at it.
	in_bare_ns 'mkdir "$O/ro" && mount -t tmpfs tmpfs "$O/ro" &&
		touch "$O/ro/register" "$O/ro/status" &&
		mount -o remount,ro "$O/ro" || exit 1
		export TIEXEC_BINFMT_DIR=$O/ro
		cap reg tb register --interpreter "$TIEXEC"
		cap status tb status'
	got reg
	[ "$st" -eq 1 ]
	[ -z "$out" ]
	same "tiexec-binfmt: cannot write $O/ro/register (run as root)" "$err"
	got status
	[ "$st" -eq 3 ]
}

@test "bad --interpreter: exact messages and statuses, nothing registered" {
	local t=$BATS_TEST_TMPDIR
	mkdir "$t/dir"
	cp "$TIEXEC" "$t/noexec"
	chmod -x "$t/noexec"
	printf '#!/bin/sh\n' >"$t/script"
	chmod +x "$t/script"
	cp "$TIEXEC" "$t/a:b"
	export t
	in_ns 'cap rel tb register --interpreter build/interp/tiexec
		cap colon tb register --interpreter "$t/a:b"
		cap newline tb register --interpreter "/tmp/a
b"
		cap empty tb register --interpreter ""
		cap noarg tb register --interpreter
		cap missing tb register --interpreter /nonexistent/tiexec
		cap dir tb register --interpreter "$t/dir"
		cap noexec tb register --interpreter "$t/noexec"
		cap script tb register --interpreter "$t/script"
		cap dynamic tb register --interpreter "$FIXTURES/probe-pie"
		cap default tb register
		cap ls ls "$BM"'
	local usage=$'Usage: tiexec-binfmt register [--interpreter PATH]\n       tiexec-binfmt unregister\n       tiexec-binfmt status'
	local n msg
	while IFS='|' read -r n msg; do
		got "$n"
		echo "case $n: status $st, stderr: $err"
		[ "$st" -eq 2 ]
		[ -z "$out" ]
		same "tiexec-binfmt: $msg"$'\n'"$usage" "$err"
	done <<-EOF
		rel|interpreter must be an absolute path: build/interp/tiexec
		colon|interpreter path must not contain ':' or a newline: $t/a:b
		empty|--interpreter needs a path
		noarg|--interpreter needs a path
	EOF
	got newline
	[ "$st" -eq 2 ]
	same "tiexec-binfmt: interpreter path must not contain ':' or a newline: /tmp/a"$'\n'"b"$'\n'"$usage" "$err"
	while IFS='|' read -r n msg; do
		got "$n"
		echo "case $n: status $st, stderr: $err"
		[ "$st" -eq 1 ]
		[ -z "$out" ]
		same "tiexec-binfmt: $msg" "$err"
	done <<-EOF
		missing|interpreter does not exist: /nonexistent/tiexec
		dir|interpreter is not a regular file: $t/dir
		noexec|interpreter is not executable: $t/noexec
		script|interpreter is not an ELF file: $t/script
		dynamic|interpreter is not statically linked: $FIXTURES/probe-pie
		default|interpreter does not exist: /usr/libexec/tiexec/tiexec
	EOF
	got ls
	same $'register\nstatus' "$out"
}

@test "usage errors: unknown command, extra arguments, no command" {
	local usage=$'Usage: tiexec-binfmt register [--interpreter PATH]\n       tiexec-binfmt unregister\n       tiexec-binfmt status'
	run --separate-stderr "$SCRIPT" frobnicate
	[ "$status" -eq 2 ]
	[ -z "$output" ]
	same "tiexec-binfmt: unknown command: frobnicate"$'\n'"$usage" "$stderr"
	run --separate-stderr "$SCRIPT"
	[ "$status" -eq 2 ]
	same "tiexec-binfmt: missing command"$'\n'"$usage" "$stderr"
	run --separate-stderr "$SCRIPT" register --force
	[ "$status" -eq 2 ]
	same "tiexec-binfmt: unknown argument to register: --force"$'\n'"$usage" "$stderr"
	run --separate-stderr "$SCRIPT" status now
	[ "$status" -eq 2 ]
	same "tiexec-binfmt: status takes no arguments"$'\n'"$usage" "$stderr"
	run --separate-stderr "$SCRIPT" unregister all
	[ "$status" -eq 2 ]
	same "tiexec-binfmt: unregister takes no arguments"$'\n'"$usage" "$stderr"
	run --separate-stderr "$SCRIPT" --help
	[ "$status" -eq 0 ]
	same "$usage" "$output"
}

@test "consistency: the built script and binfmt.d/tiexec.conf hold the specified rule" {
	local script=$SCRIPT conf=$BUILD/packaging/binfmt.d/tiexec.conf
	# The script's MAGIC and MASK, evaluated from their assignments.
	local MAGIC MASK NAME FLAGS
	eval "$(grep -E "^(MAGIC|MASK)\+?='[^']*'\$|^(NAME|FLAGS)=[A-Za-z]+\$" "$script")"
	same "$H_NAME" "$NAME"
	same "$H_FLAGS" "$FLAGS"
	same "$H_MAGIC" "$MAGIC"
	same "$H_MASK" "$MASK"
	# binfmt.d: comments and exactly one rule.
	local rules
	rules=$(grep -v -e '^#' -e '^;' -e '^[[:space:]]*$' "$conf")
	[ "$(wc -l <<<"$rules")" -eq 1 ]
	same ":$H_NAME:M:0:$H_MAGIC:$H_MASK:/usr/libexec/tiexec/tiexec:$H_FLAGS" "$rules"
	# No trailing blanks (systemd-binfmt would pass them on).
	run grep -c '[[:space:]]$' "$conf"
	[ "$output" = 0 ]
}

@test "consistency: the binfmt.d line, written as-is, registers the script's rule" {
	# What systemd-binfmt does (with our interpreter in place of
	# /usr/libexec/tiexec/tiexec, which F needs to exist).
	grep -v '^#' "$BUILD/packaging/binfmt.d/tiexec.conf" |
		sed "s|:/usr/libexec/tiexec/tiexec:|:$TIEXEC:|" | tr -d '\n' >"$BATS_TEST_TMPDIR/rule"
	export RULE=$BATS_TEST_TMPDIR/rule
	in_ns 'cat "$RULE" >"$BM/register"
		cap conf cat "$BM/tiexec"
		cap reg tb register --interpreter "$TIEXEC"
		cap script cat "$BM/tiexec"'
	got conf
	same "$(want_entry "$TIEXEC")" "$out"
	local c=$out
	got script
	same "$c" "$out"
}

@test "end to end: a marked probe-pie goes through tiexec, an unmarked one does not" {
	in_ns 'cap reg tb register --interpreter "$TIEXEC"
		cd "$FIXTURES"; cap orig "$CLEAN" TIEXEC_VERBOSE=1 ./probe-pie a "b c" ""
		cd "$M"; cap marked "$CLEAN" TIEXEC_VERBOSE=1 ./probe-pie a "b c" ""
		cd "$U"; cap unmarked "$CLEAN" TIEXEC_VERBOSE=1 ./probe-pie a "b c" ""
		cap nopie "$CLEAN" TIEXEC_VERBOSE=1 "$M/probe-nopie"
		cap static "$CLEAN" TIEXEC_VERBOSE=1 "$M/probe-static"
		cap unreg tb unregister
		cd "$M"; cap after "$CLEAN" TIEXEC_VERBOSE=1 ./probe-pie a "b c" ""'
	got reg
	[ "$st" -eq 0 ]
	got orig
	local want=$out
	[ "$st" -eq 0 ]
	[ -z "$err" ]
	[[ "$want" == $'argc 4\nargv[0] ./probe-pie\nargv[1] a\nargv[2] b c\nargv[3] \n'* ]]
	got marked
	[ "$st" -eq 0 ]
	same "$want" "$out"
	[[ "$err" =~ $VIA_RE ]]
	[[ "$err" == "tiexec: './probe-pie': "* ]]
	got unmarked
	[ "$st" -eq 0 ]
	same "$want" "$out"
	[ -z "$err" ]
	# ET_EXEC programs (e_type 2) match as well as ET_DYN (3).
	got nopie
	[ "$st" -eq 0 ]
	[[ "$err" == "tiexec: '$M/probe-nopie': "* ]]
	got static
	[ "$st" -eq 0 ]
	[[ "$err" == "tiexec: '$M/probe-static': "* ]]
	# Unregistered: the marked copy runs directly, the kernel ignores the bit.
	got unreg
	[ "$st" -eq 0 ]
	got after
	[ "$st" -eq 0 ]
	same "$want" "$out"
	[ -z "$err" ]
}

@test "end to end: a marked file for another machine or ELF class is not matched" {
	in_ns 'cap reg tb register --interpreter "$TIEXEC"
		cap ls ls "$BM"
		cd "$X"
		cap aarch64 "$CLEAN" TIEXEC_VERBOSE=1 bash -c "./aarch64"
		cap class32 "$CLEAN" TIEXEC_VERBOSE=1 bash -c "./class32"'
	got ls
	same $'register\nstatus\ntiexec' "$out"
	got aarch64
	[ "$st" -eq 126 ]
	[ -z "$out" ]
	[[ "$err" == *"./aarch64: cannot execute binary file: Exec format error" ]]
	[[ "$err" != *"tiexec: '"* ]]
	# With ELFCLASS32 in e_ident the rule does not match either, but the
	# kernel's ELF loader does not look at EI_CLASS: the copy runs directly.
	got class32
	[ "$st" -eq 0 ]
	[[ "$out" == $'argc 1\nargv[0] ./class32\n'* ]]
	[ -z "$err" ]
}

@test "end to end: F pins the interpreter at registration" {
	# Register a copy of tiexec, then delete the copy: the kernel kept it
	# open, so marked programs still run through it.
	mkdir "$BATS_TEST_TMPDIR/pin"
	cp "$TIEXEC" "$BATS_TEST_TMPDIR/pin/tiexec"
	export PIN=$BATS_TEST_TMPDIR/pin/tiexec
	in_ns 'cap reg tb register --interpreter "$PIN"
		rm "$PIN"
		cap status tb status
		cd "$M"; cap via "$CLEAN" TIEXEC_VERBOSE=1 ./probe-pie x'
	got reg
	[ "$st" -eq 0 ]
	got status
	[ "$st" -eq 0 ]
	same "$(want_status "$PIN")" "$out"
	got via
	[ "$st" -eq 0 ]
	[[ "$out" == $'argc 2\nargv[0] ./probe-pie\nargv[1] x\n'* ]]
	[[ "$err" == "tiexec: './probe-pie': "* ]]
}
