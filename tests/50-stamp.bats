#!/usr/bin/env bats
# tiexec-stamp: stamp, check, re-stamp, remove (byte-identical), the programs
# still run directly, what is kept (mode, owner, extended attributes), every
# refusal, and what survives strip.
bats_require_minimum_version 1.5.0
load test_helper

DEFAULT_POLICY='stamped: strategy=auto min-text=default round-out=no lazy=no'

setup() {
	STAMP=$BUILD/stamp/tiexec-stamp
	CLEAN=$FIXTURES/clean
	T=$BATS_TEST_TMPDIR
	[ -x "$STAMP" ] || { echo "no $STAMP: build first" >&2; return 1; }
	export STAMP CLEAN T
}

teardown() {
	# An immutable or append-only file would stop bats cleaning up.
	chattr -i -a "$BATS_TEST_TMPDIR"/* 2>/dev/null || true
	if [ -n "${OTHER_DIR:-}" ]; then rm -rf "$OTHER_DIR"; fi
}

# poke FILE OFFSET PACK-FORMAT VALUE: writes VALUE (decimal; perl pack) at
# OFFSET.
poke() {
	perl -e 'print pack($ARGV[0], $ARGV[1])' "$3" "$4" |
		dd of="$1" bs=1 seek="$2" conv=notrunc status=none
}

# output_of DIR NAME: what ./NAME prints (both streams) and its status, run
# from DIR with a clean environment.
output_of() {
	(cd "$1" && timeout 60 "$CLEAN" "./$2" 2>&1; echo "status $?")
}

# no_temp_left DIR: tiexec-stamp left no temporary file behind.
no_temp_left() {
	local left
	left=$(find "$1" -maxdepth 1 -name '.tiexec-stamp.*')
	[ -z "$left" ] || { echo "left behind: $left"; return 1; }
}

# no_gain_warning FILE TEXT: TEXT is tiexec-stamp's warning that FILE has no
# whole 2 MiB piece of text.
no_gain_warning() {
	[[ "$2" =~ ^"tiexec-stamp: '$1': warning: no whole 2 MiB piece of text ("[0-9.]+" "(bytes|KiB|MiB)" of text): it runs on 4 KiB pages unless stamped with --round-out"$ ]] ||
		{ echo "not the no-gain warning: $2"; return 1; }
}

# roundtrip SOURCE [dynamic] [noshdr]: a copy of SOURCE stamped; --check says
# so; it runs directly with the same output as the original; ldd works
# (dynamic); readelf shows the note; --remove gives back the original byte
# for byte.
roundtrip() {
	local src=$1 kind=" ${*:2} " n
	n=$(basename "$src")
	mkdir -p "$T/o" "$T/s"
	cp "$src" "$T/o/$n"
	cp "$src" "$T/s/$n"

	run --separate-stderr "$STAMP" "$T/s/$n"
	[ "$status" -eq 0 ] && [ -z "$output" ] || { echo "stamp: $status $stderr"; return 1; }
	# Small fixtures: at most the warning that they have nothing to gain.
	[ -z "$stderr" ] || no_gain_warning "$T/s/$n" "$stderr"
	! cmp -s "$T/o/$n" "$T/s/$n" || false
	[ "$(od -An -tx1 -j70 -N1 "$T/s/$n" | tr -d ' ')" = 40 ]
	no_temp_left "$T/s"

	run "$STAMP" --check "$T/s/$n"
	[ "$status" -eq 0 ]
	same "$T/s/$n: $DEFAULT_POLICY" "$output"

	same "$(output_of "$T/o" "$n")" "$(output_of "$T/s" "$n")"

	if [[ "$kind" == *" dynamic "* ]]; then
		run ldd "$T/s/$n"
		[ "$status" -eq 0 ]
		same "$(ldd "$T/o/$n" | sed 's/ (0x[0-9a-f]*)//')" "$(sed 's/ (0x[0-9a-f]*)//' <<<"$output")"
	fi

	# (With section headers made from scratch, readelf misses a .dynamic
	# section for the dynamic segment; it says so, and goes on.)
	run --separate-stderr readelf -n -W "$T/s/$n"
	[ "$status" -eq 0 ]
	[ -z "$(grep -v 'no .dynamic section' <<<"$stderr")" ]
	[[ "$output" == *"Displaying notes found in: .note.tiexec"*"tiexec               0x00000030"* ]]
	run --separate-stderr readelf -S -W "$T/s/$n"
	[ "$status" -eq 0 ]
	[ -z "$(grep -v 'no .dynamic section' <<<"$stderr")" ]
	[[ "$output" =~ \]\ \.note\.tiexec\ +NOTE\ +0+\ [0-9a-f]+\ 000044\ 00\ +0\ +0\ +4 ]]
	# readelf finds nothing new to complain about anywhere.
	[[ "$kind" == *" noshdr "* ]] ||
		same "$(readelf -a -W "$T/o/$n" 2>&1 >/dev/null)" "$(readelf -a -W "$T/s/$n" 2>&1 >/dev/null)"

	run --separate-stderr "$STAMP" --remove "$T/s/$n"
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	cmp "$T/o/$n" "$T/s/$n"
	no_temp_left "$T/s"
}

@test "probe-pie: stamp, check, run, ldd, readelf, remove" { roundtrip "$FIXTURES/probe-pie" dynamic; }
@test "probe-nopie: stamp, check, run, ldd, readelf, remove" { roundtrip "$FIXTURES/probe-nopie" dynamic; }
@test "probe-static: stamp, check, run, readelf, remove" { roundtrip "$FIXTURES/probe-static"; }
@test "probe-static-pie: stamp, check, run, readelf, remove" { roundtrip "$FIXTURES/probe-static-pie"; }
@test "cxx-pie: stamp, check, run, ldd, readelf, remove" { roundtrip "$FIXTURES/cxx-pie" dynamic; }
@test "cxx-static: stamp, check, run, readelf, remove" { roundtrip "$FIXTURES/cxx-static"; }
@test "go-static (CGO_ENABLED=0): stamp, check, run, readelf, remove" { roundtrip "$FIXTURES/go-static"; }
@test "go-cgo (CGO_ENABLED=1): stamp, check, run, ldd, readelf, remove" { roundtrip "$FIXTURES/go-cgo" dynamic; }

@test "rust-pie: stamp, check, run, ldd, readelf, remove" {
	[ -e "$FIXTURES/rust-pie" ] || skip_unsupported "no rust-pie fixture (no rustc)"
	roundtrip "$FIXTURES/rust-pie" dynamic
}

@test "programs stripped before stamping" {
	mkdir "$T/src"
	for n in probe-pie go-cgo cxx-static; do
		strip -o "$T/src/$n" "$FIXTURES/$n"
	done
	roundtrip "$T/src/probe-pie" dynamic
	roundtrip "$T/src/go-cgo" dynamic
	roundtrip "$T/src/cxx-static"
}

@test "a program without section headers: a table made from scratch, removed exactly" {
	mkdir "$T/src"
	for n in probe-nopie probe-static; do
		cp "$FIXTURES/$n" "$T/src/$n"
		poke "$T/src/$n" 40 'Q<' 0   # e_shoff
		poke "$T/src/$n" 60 'L<' 0   # e_shnum, e_shstrndx
	done
	[[ "$(readelf -S "$T/src/probe-nopie")" == *"There are no sections in this file."* ]]
	roundtrip "$T/src/probe-nopie" dynamic noshdr
	roundtrip "$T/src/probe-static" noshdr
}

@test "a big program (bigtext-pie): stamp, remove" {
	cp "$FIXTURES/bigtext-pie" "$T/big"
	"$STAMP" --min-text=4M "$T/big"
	run "$STAMP" --check "$T/big"
	[ "$status" -eq 0 ]
	same "$T/big: stamped: strategy=auto min-text=4M round-out=no lazy=no" "$output"
	"$STAMP" --remove "$T/big"
	cmp "$FIXTURES/bigtext-pie" "$T/big"
}

@test "stamping twice equals stamping once" {
	cp "$FIXTURES/probe-pie" "$T/once"
	cp "$FIXTURES/probe-pie" "$T/twice"
	"$STAMP" --strategy=thp "$T/once"
	"$STAMP" --strategy=thp "$T/twice"
	"$STAMP" --strategy=thp "$T/twice"
	cmp "$T/once" "$T/twice"
}

@test "a new policy replaces the old one; remove is still exact" {
	cp "$FIXTURES/go-static" "$T/p"
	"$STAMP" --strategy=hugetlb --min-text=1536K --round-out --lazy "$T/p"
	run "$STAMP" --check "$T/p"
	[ "$status" -eq 0 ]
	same "$T/p: stamped: strategy=hugetlb min-text=1536K round-out=yes lazy=yes" "$output"
	size=$(stat -c %s "$T/p")

	"$STAMP" --round-out "$T/p"
	run "$STAMP" --check "$T/p"
	[ "$status" -eq 0 ]
	same "$T/p: stamped: strategy=auto min-text=default round-out=yes lazy=no" "$output"
	[ "$(stat -c %s "$T/p")" -eq "$size" ]

	"$STAMP" --strategy=file --min-text=2G "$T/p"
	run "$STAMP" --check "$T/p"
	same "$T/p: stamped: strategy=file min-text=2G round-out=no lazy=no" "$output"

	"$STAMP" --remove "$T/p"
	cmp "$FIXTURES/go-static" "$T/p"
}

@test "the descriptor is what common/mark.h says" {
	cp "$FIXTURES/probe-pie" "$T/p"
	"$STAMP" --strategy=off --min-text=8M --lazy "$T/p"
	size=$(stat -c %s "$FIXTURES/probe-pie")
	run readelf -n -W "$T/p"
	# version 1, size 48, strategy 4, flags LAZY, min_text 8M, orig_size ...
	want="01 00 00 00 30 00 00 00 04 00 00 00 02 00 00 00 00 00 80 00 00 00 00 00 "
	want+=$(perl -e 'print join(" ", map { sprintf "%02x", $_ } unpack("C8", pack("Q<", $ARGV[0]))), " "' "$size")
	[[ "$output" == *"description data: $want"* ]]
}

@test "stamping keeps the mode, the owner and extended attributes" {
	command -v setfattr >/dev/null || skip_unsupported "no setfattr (package attr)"
	[ "$(id -u)" = 0 ] || skip_unsupported "changing the owner needs root"
	cp "$FIXTURES/probe-pie" "$T/p"
	chown 1234:5678 "$T/p"
	chmod 0751 "$T/p"
	setfattr -n user.test -v hello "$T/p"
	setfattr -n trusted.test -v there "$T/p"
	attrs() { getfattr -d -m - --absolute-names "$1" | sed 1d; }
	before=$(attrs "$T/p")
	[[ "$before" == *'user.test="hello"'* ]]
	[[ "$before" == *'trusted.test="there"'* ]]

	"$STAMP" "$T/p"
	same "751 1234 5678" "$(stat -c '%a %u %g' "$T/p")"
	same "$before" "$(attrs "$T/p")"

	"$STAMP" --remove "$T/p"
	same "751 1234 5678" "$(stat -c '%a %u %g' "$T/p")"
	same "$before" "$(attrs "$T/p")"
	cmp "$FIXTURES/probe-pie" "$T/p"
}

@test "refused: file capabilities (setcap), as the loader refuses them" {
	command -v setcap >/dev/null || skip_unsupported "no setcap (package libcap2-bin)"
	[ "$(id -u)" = 0 ] || skip_unsupported "setcap needs root"
	cp "$FIXTURES/probe-pie" "$T/fcap"
	setcap cap_net_raw+ep "$T/fcap"
	refused "$T/fcap" "file capabilities: tiexec cannot run it with those privileges"
	[[ "$(getcap "$T/fcap")" == *"cap_net_raw=ep"* ]]
}

@test "--remove keeps a capability given after stamping (setcap)" {
	command -v setcap >/dev/null || skip_unsupported "no setcap (package libcap2-bin)"
	[ "$(id -u)" = 0 ] || skip_unsupported "setcap needs root"
	cp "$FIXTURES/probe-pie" "$T/p"
	"$STAMP" --lazy "$T/p"
	setcap cap_net_bind_service+ep "$T/p"
	"$STAMP" --remove "$T/p"
	[[ "$(getcap "$T/p")" == *"cap_net_bind_service=ep"* ]]
	cmp "$FIXTURES/probe-pie" "$T/p"
}

@test "a symbolic link: the file it points to is stamped, the link stays" {
	cp "$FIXTURES/probe-pie" "$T/p"
	ln -s p "$T/link"
	"$STAMP" "$T/link"
	[ -L "$T/link" ]
	run "$STAMP" --check "$T/p"
	[ "$status" -eq 0 ]
	"$STAMP" --remove "$T/link"
	[ -L "$T/link" ]
	cmp "$FIXTURES/probe-pie" "$T/p"
}

# refused FILE MESSAGE: stamping FILE fails with status 2 and exactly
# "tiexec-stamp: 'FILE': MESSAGE", and leaves it as it was.
refused() {
	local keep=
	if [ -f "$1" ]; then
		keep=$T/keep.$$
		cp -p "$1" "$keep"
	fi
	run --separate-stderr "$STAMP" "$1"
	[ "$status" -eq 2 ] || { echo "status $status: $stderr"; return 1; }
	[ -z "$output" ]
	same "tiexec-stamp: '$1': $2" "$stderr"
	if [ -n "$keep" ]; then
		cmp "$keep" "$1"
		rm -f "$keep"
	fi
	no_temp_left "$(dirname "$1")"
}

# A cross build stamps at build time (#55): the x86-64 tiexec-stamp stamps,
# checks and unstamps an arm64 program, byte for byte as the arm64 one
# would (the stamp is the same bytes on every machine).  The arm64 rows of
# tests/98-kernels.bats run such a program through the rule in the guests.
@test "another machine's program (arm64): stamped, checked and unstamped exactly, as on that machine" {
	cp "$FIXTURES/probe-pie" "$T/arm"
	poke "$T/arm" 18 'S<' 183   # EM_AARCH64: the stamp reads no code
	cp "$T/arm" "$T/arm.orig"
	run "$STAMP" --strategy=thp --min-text=0 "$T/arm"
	[ "$status" -eq 0 ]
	same "$T/arm: stamped: strategy=thp min-text=0 round-out=no lazy=no" "$("$STAMP" --check "$T/arm")"
	# the same bytes as this machine's program stamped with the same policy
	cp "$FIXTURES/probe-pie" "$T/x"
	"$STAMP" --strategy=thp --min-text=0 "$T/x" >/dev/null
	poke "$T/x" 18 'S<' 183
	cmp "$T/x" "$T/arm"
	"$STAMP" --remove "$T/arm"
	cmp "$T/arm.orig" "$T/arm"
}

@test "refused: not ELF, not a machine tiexec runs on, a library, an object file, a core-type file" {
	printf '#!/bin/sh\necho hi\n' >"$T/script"
	refused "$T/script" "not an ELF file"
	: >"$T/empty"
	refused "$T/empty" "not an ELF file"

	cp "$FIXTURES/probe-pie" "$T/elf32"
	poke "$T/elf32" 4 C 1   # ELFCLASS32
	refused "$T/elf32" "not an x86-64 or arm64 program"
	cp "$FIXTURES/probe-pie" "$T/be"
	poke "$T/be" 5 C 2   # ELFDATA2MSB
	refused "$T/be" "not an x86-64 or arm64 program"
	cp "$FIXTURES/probe-pie" "$T/ppc"
	poke "$T/ppc" 18 'S<' 21   # EM_PPC64
	refused "$T/ppc" "not an x86-64 or arm64 program"

	echo 'int f(void) { return 1; }' >"$T/l.c"
	gcc -shared -fPIC -o "$T/l.so" "$T/l.c"
	refused "$T/l.so" "a shared library, not a program"
	gcc -c -o "$T/l.o" "$T/l.c"
	refused "$T/l.o" "not an executable"
	cp "$FIXTURES/probe-static" "$T/core"
	poke "$T/core" 16 'S<' 4   # ET_CORE
	refused "$T/core" "not an executable"
}

@test "refused: set-user-ID, set-group-ID" {
	cp "$FIXTURES/probe-pie" "$T/suid"
	chmod u+s "$T/suid"
	refused "$T/suid" "set-user-ID or set-group-ID: tiexec cannot run it with those privileges"
	cp "$FIXTURES/probe-pie" "$T/sgid"
	chmod g+s "$T/sgid"
	refused "$T/sgid" "set-user-ID or set-group-ID: tiexec cannot run it with those privileges"
}

@test "refused: program headers elsewhere (e_phoff != 64)" {
	local size phnum pad
	cp "$FIXTURES/probe-pie" "$T/phoff"
	# A copy of the program headers at the (8-aligned) end, pointed at.
	size=$(stat -c %s "$T/phoff")
	phnum=$(od -An -tu2 -j56 -N2 "$T/phoff" | tr -d ' ')
	pad=$(((8 - size % 8) % 8))
	head -c "$pad" /dev/zero >>"$T/phoff"
	dd if="$FIXTURES/probe-pie" bs=1 skip=64 count=$((phnum * 56)) status=none >>"$T/phoff"
	poke "$T/phoff" 32 'Q<' $((size + pad))
	readelf -l "$T/phoff" >/dev/null
	refused "$T/phoff" "program headers not right after the ELF header (e_phoff != 64)"
}

@test "refused: extended section numbering" {

	cp "$FIXTURES/probe-pie" "$T/xnum"
	poke "$T/xnum" 60 'S<' 0   # e_shnum 0, e_shoff set
	refused "$T/xnum" "extended section numbering (e_shnum == 0): not supported"
	cp "$FIXTURES/probe-pie" "$T/xndx"
	poke "$T/xndx" 62 'S<' 65535   # SHN_XINDEX
	refused "$T/xndx" "extended section numbering (e_shstrndx == SHN_XINDEX): not supported"
}

@test "refused: not a regular file, missing" {
	mkdir "$T/dir"
	refused "$T/dir" "not a regular file"
	mkfifo "$T/fifo"
	refused "$T/fifo" "not a regular file"
	refused "$T/missing" "No such file or directory"
}

@test "refused: a file one may not write or read" {
	OTHER_DIR=$(mktemp -d /tmp/tiexec-stamp-test.XXXXXX)
	chmod 0777 "$OTHER_DIR"
	cp "$FIXTURES/probe-pie" "$OTHER_DIR/ro"
	chmod 0555 "$OTHER_DIR/ro"
	cp "$FIXTURES/probe-pie" "$OTHER_DIR/wo"
	chmod 0200 "$OTHER_DIR/wo"
	as_user=()
	if [ "$(id -u)" = 0 ]; then
		command -v setpriv >/dev/null || skip_unsupported "no setpriv to drop root"
		# Another user: the files are root's (and /work may not be
		# searchable: run a copy).
		cp "$STAMP" "$OTHER_DIR/tiexec-stamp"
		chmod 0755 "$OTHER_DIR/tiexec-stamp"
		as_user=(setpriv --reuid=65534 --regid=65534 --clear-groups "$OTHER_DIR/tiexec-stamp")
	else
		as_user=("$STAMP")
	fi
	run --separate-stderr "${as_user[@]}" "$OTHER_DIR/ro"
	[ "$status" -eq 2 ]
	same "tiexec-stamp: '$OTHER_DIR/ro': cannot write: Permission denied" "$stderr"
	cmp "$FIXTURES/probe-pie" "$OTHER_DIR/ro"
	run --separate-stderr "${as_user[@]}" "$OTHER_DIR/wo"
	[ "$status" -eq 2 ]
	same "tiexec-stamp: '$OTHER_DIR/wo': cannot read: Permission denied" "$stderr"
	no_temp_left "$OTHER_DIR"
}

@test "refused: a read-only file system" {
	mkdir "$T/mnt"
	cp "$FIXTURES/probe-pie" "$T/orig"
	# A private mount namespace (as root or in a user namespace).
	run --separate-stderr unshare --user --map-root-user --mount sh -c '
		mount -t tmpfs tmpfs "$1" || exit 99
		cp "$2" "$1/p" && mount -o remount,ro "$1" || exit 99
		"$3" "$1/p"
		echo "status $?"
		cmp "$2" "$1/p" && echo unchanged' sh "$T/mnt" "$T/orig" "$STAMP"
	[ "$status" -ne 99 ] || skip_unsupported "cannot mount a tmpfs in a private namespace: $stderr"
	same "tiexec-stamp: '$T/mnt/p': cannot write: Read-only file system" "$stderr"
	same $'status 2\nunchanged' "$output"
}

@test "refused: an immutable file, an append-only file (chattr)" {
	cp "$FIXTURES/probe-pie" "$T/imm"
	chattr +i "$T/imm" 2>/dev/null || skip_unsupported "chattr +i does not work here (file system, CAP_LINUX_IMMUTABLE)"
	refused "$T/imm" "cannot write: Operation not permitted"
	chattr -i "$T/imm"
	cp "$FIXTURES/probe-pie" "$T/app"
	chattr +a "$T/app"
	refused "$T/app" "cannot replace it: Operation not permitted"
}

@test "several files: each is done, the status is the worst" {
	cp "$FIXTURES/probe-pie" "$T/a"
	cp "$FIXTURES/probe-static" "$T/b"
	printf 'text\n' >"$T/txt"
	run --separate-stderr "$STAMP" "$T/a" "$T/txt" "$T/b"
	[ "$status" -eq 2 ]
	same "tiexec-stamp: '$T/txt': not an ELF file" "$(grep -v ': warning: no whole 2 MiB' <<<"$stderr")"

	run "$STAMP" --check "$T/a" "$T/b"
	[ "$status" -eq 0 ]
	same "$T/a: $DEFAULT_POLICY"$'\n'"$T/b: $DEFAULT_POLICY" "$output"

	cp "$FIXTURES/probe-pie" "$T/c"
	run "$STAMP" --check "$T/a" "$T/c" "$T/txt"
	[ "$status" -eq 1 ]
	same "$T/a: $DEFAULT_POLICY"$'\n'"$T/c: not stamped"$'\n'"$T/txt: not an ELF file" "$output"

	run --separate-stderr "$STAMP" --check "$T/a" "$T/missing"
	[ "$status" -eq 2 ]
	same "$T/a: $DEFAULT_POLICY" "$output"
	same "tiexec-stamp: '$T/missing': No such file or directory" "$stderr"
}

@test "--check: marked without a note; --remove clears a lone bit; unstamped: nothing to do" {
	cp "$FIXTURES/probe-pie" "$T/bit"
	poke "$T/bit" 70 C 64
	run "$STAMP" --check "$T/bit"
	[ "$status" -eq 1 ]
	[[ "$output" == "$T/bit: stamped, but its tiexec note is gone "* ]]
	"$STAMP" --remove "$T/bit"
	cmp "$FIXTURES/probe-pie" "$T/bit"

	cp "$FIXTURES/probe-pie" "$T/plain"
	touch -d @1000000000 "$T/plain"
	run --separate-stderr "$STAMP" --remove "$T/plain"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	[ -z "$stderr" ]
	[ "$(stat -c %Y "$T/plain")" = 1000000000 ]   # not even rewritten
}

# After strip-like tools the note and the bit are still there (both are
# kept by strip/objcopy); --remove then cannot truncate (the layout is
# gone) and drops the note's section header instead.
@test "strip after stamp: bit and note survive; --remove drops the note; re-stamp works" {
	for tool in "strip" "strip -s" "objcopy --strip-all" "strip --strip-unneeded" "strip --strip-debug"; do
		for n in probe-pie go-cgo; do
			rm -rf "$T/o" "$T/s" && mkdir "$T/o" "$T/s"
			cp "$FIXTURES/$n" "$T/o/$n"
			cp "$FIXTURES/$n" "$T/s/$n"
			"$STAMP" --strategy=thp --lazy "$T/s/$n"
			$tool "$T/s/$n"
			run "$STAMP" --check "$T/s/$n"
			[ "$status" -eq 0 ] || { echo "$tool $n: $output"; return 1; }
			same "$T/s/$n: stamped: strategy=thp min-text=default round-out=no lazy=yes" "$output"
			[ "$(od -An -tx1 -j70 -N1 "$T/s/$n" | tr -d ' ')" = 40 ]
			same "$(output_of "$T/o" "$n")" "$(output_of "$T/s" "$n")"

			# Removing: no bit, no note section, still runs, readelf content.
			"$STAMP" --remove "$T/s/$n"
			run "$STAMP" --check "$T/s/$n"
			[ "$status" -eq 1 ]
			same "$T/s/$n: not stamped" "$output"
			! readelf -S -W "$T/s/$n" | grep -q tiexec || false
			[ -z "$(readelf -a -W "$T/s/$n" 2>&1 >/dev/null)" ]
			same "$(output_of "$T/o" "$n")" "$(output_of "$T/s" "$n")"
			# The same as the stripped original, but for the section
			# name table (".note.tiexec" stays in it) and offsets.
			cp "$FIXTURES/$n" "$T/o/stripped"
			$tool "$T/o/stripped"
			same "$(readelf -W -s "$T/o/stripped")" "$(readelf -W -s "$T/s/$n")"
			same "$(readelf -W -S "$T/o/stripped" | awk '/^  \[/ {print $2, $3, $4}')" \
				"$(readelf -W -S "$T/s/$n" | awk '/^  \[/ {print $2, $3, $4}')"

			"$STAMP" "$T/s/$n"
			run "$STAMP" --check "$T/s/$n"
			same "$T/s/$n: $DEFAULT_POLICY" "$output"
		done
	done
}

@test "strip after re-stamp over strip: --remove still gives a clean program" {
	cp "$FIXTURES/probe-pie" "$T/p"
	"$STAMP" "$T/p"
	strip "$T/p"
	"$STAMP" --lazy "$T/p"   # the note is found and rewritten in place
	run "$STAMP" --check "$T/p"
	same "$T/p: stamped: strategy=auto min-text=default round-out=no lazy=yes" "$output"
	"$STAMP" --remove "$T/p"
	cp "$FIXTURES/probe-pie" "$T/stripped"
	strip "$T/stripped"
	same "$(readelf -W -l "$T/stripped")" "$(readelf -W -l "$T/p")"
}

# The marker bit is tiexec's: a marked file without a note is a stamp whose
# note was stripped (llvm-strip, llvm-objcopy --strip-all drop non-allocated
# notes; GNU strip keeps them).  --check says so; stamping again repairs
# it, and --remove then gives the stripped file back, bit cleared.
@test "a note removed by hand (strip -R .note.tiexec): --check says so, stamping again repairs it" {
	cp "$FIXTURES/probe-pie" "$T/p"
	"$STAMP" "$T/p"
	strip -R .note.tiexec "$T/p"
	cp "$T/p" "$T/p.stripped"
	run "$STAMP" --check "$T/p"
	[ "$status" -eq 1 ]
	same "$T/p: stamped, but its tiexec note is gone (llvm-strip and llvm-objcopy --strip-all drop it): the defaults apply; stamp it again to give it its policy back" "$output"
	run "$STAMP" --lazy "$T/p"
	[ "$status" -eq 0 ]
	[[ "$output" == *"$T/p: its tiexec note was gone (stripped by an LLVM tool?): stamped again"* ]]
	run "$STAMP" --check "$T/p"
	same "$T/p: stamped: strategy=auto min-text=default round-out=no lazy=yes" "$output"
	"$STAMP" --remove "$T/p"
	poke "$T/p.stripped" 70 C 0 # the bit, cleared: what --remove gives
	cmp "$T/p" "$T/p.stripped"
}

@test "llvm-strip and llvm-objcopy --strip-all: the policy is lost, --check says so, a re-stamp restores it" {
	command -v llvm-strip >/dev/null && command -v llvm-objcopy >/dev/null ||
		skip_unsupported "llvm-strip and llvm-objcopy are not installed"
	local how
	for how in "llvm-strip" "llvm-objcopy --strip-all"; do
		cp "$FIXTURES/probe-pie" "$T/p"
		"$STAMP" --strategy=thp --min-text=0 "$T/p" 2>/dev/null
		# shellcheck disable=SC2086 # the tool and its option
		$how "$T/p"
		run "$STAMP" --check "$T/p"
		echo "$how: $output"
		[[ "$output" == *"stamped, but its tiexec note is gone"* ]]
		"$STAMP" --strategy=thp --min-text=0 "$T/p" 2>/dev/null
		run "$STAMP" --check "$T/p"
		[ "$status" -eq 0 ]
		same "$T/p: stamped: strategy=thp min-text=0 round-out=no lazy=no" "$output"
		[ "$("$T/p" | head -n 1)" = "argc 1" ]
	done
}

@test "a debug file (objcopy --only-keep-debug) of a stamped program is no program to either tool" {
	cp "$FIXTURES/probe-pie" "$T/p"
	"$STAMP" --min-text=0 "$T/p" 2>/dev/null
	objcopy --only-keep-debug "$T/p" "$T/p.debug"
	local what="a separate debug file (objcopy --only-keep-debug): its text is not in it"
	run "$STAMP" --check "$T/p.debug"
	[ "$status" -eq 1 ]
	same "$T/p.debug: not a program: $what" "$output"
	run --separate-stderr "$STAMP" "$T/p.debug"
	[ "$status" -eq 2 ]
	same "tiexec-stamp: '$T/p.debug': $what" "$stderr"
	run "$BUILD/stat/tiexec-stat" --check "$T/p.debug"
	[ "$status" -eq 1 ]
	same "$T/p.debug: cannot tell: $what" "$output"
	# The program itself still reads as stamped.
	run "$STAMP" --check "$T/p"
	[ "$status" -eq 0 ]
}

@test "the no-gain warning gives a small text in bytes, not as 0 KiB" {
	printf 'int main(void) { return 0; }\n' | gcc -O2 -x c -o "$T/tiny" -
	run --separate-stderr "$STAMP" "$T/tiny"
	[ "$status" -eq 0 ]
	no_gain_warning "$T/tiny" "$stderr"
	[[ "$stderr" =~ \(([0-9]+)" bytes of text)" ]]
	[ "${BASH_REMATCH[1]}" -gt 0 ]
	[ "${BASH_REMATCH[1]}" -lt 1024 ]
}

@test "usage: bad options, --help, --version" {
	run --separate-stderr "$STAMP" --strategy=fast "$T/x"
	[ "$status" -eq 2 ]
	[[ "$stderr" == "tiexec-stamp: --strategy: 'fast': not auto, file, thp, hugetlb or off"* ]]
	run --separate-stderr "$STAMP" --min-text=2X "$T/x"
	[ "$status" -eq 2 ]
	[[ "$stderr" == "tiexec-stamp: --min-text: '2X': not a size"* ]]
	# 2^64 - 1 is what a note holds for "unset": not a size to write.
	run --separate-stderr "$STAMP" --min-text=18446744073709551615 "$T/x"
	[ "$status" -eq 2 ]
	[[ "$stderr" == "tiexec-stamp: --min-text: '18446744073709551615': not a size"* ]]
	run --separate-stderr "$STAMP" --check --lazy "$T/x"
	[ "$status" -eq 2 ]
	run --separate-stderr "$STAMP" --check --remove "$T/x"
	[ "$status" -eq 2 ]
	run --separate-stderr "$STAMP"
	[ "$status" -eq 2 ]
	[[ "$stderr" == "tiexec-stamp: no FILE given"* ]]
	run --separate-stderr "$STAMP" --bogus "$T/x"
	[ "$status" -eq 2 ]
	[[ "$stderr" == "tiexec-stamp: bad option: '--bogus'"* ]]
	run "$STAMP" --help
	[ "$status" -eq 0 ]
	[[ "$output" == Usage:\ tiexec-stamp* ]]
	run "$STAMP" --version
	[ "$status" -eq 0 ]
	[[ "$output" =~ ^tiexec-stamp\ [0-9]+\.[0-9]+\.[0-9]+$ ]]
}

@test "guard rails: a library with DT_SONAME is refused unless --force, even when it runs" {
	local libc
	libc=$(ldd "$FIXTURES/probe-pie" | awk '$1 == "libc.so.6" { print $3 }')
	[ -n "$libc" ]
	cp "$libc" "$T/libc.so.6"
	readelf -l "$T/libc.so.6" | grep -q 'Requesting program interpreter' # it runs as a program
	refused "$T/libc.so.6" "declares a shared-library name (DT_SONAME libc.so.6): a library, even if it also runs as a program; --force stamps it anyway"
	run --separate-stderr "$STAMP" --force "$T/libc.so.6"
	[ "$status" -eq 0 ]
	run "$STAMP" --check "$T/libc.so.6"
	[ "$status" -eq 0 ]
	same "$T/libc.so.6: $DEFAULT_POLICY" "$output"
}

# The dpkg-owned program is stamped only inside a private mount namespace,
# on an overlay over its directory: the machine's file never changes.
@test "guard rails: a file dpkg owns is refused; --dry-run changes nothing; --force stamps" {
	command -v dpkg-query >/dev/null || skip "no dpkg here"
	local prog=/usr/bin/true owner before
	owner=$(dpkg-query -S "$prog" 2>/dev/null | sed -n 's/: .*//p' | head -1)
	[ -z "$owner" ] && owner=$(dpkg-query -S "${prog#/usr}" 2>/dev/null | sed -n 's/: .*//p' | head -1)
	[ -n "$owner" ] || { [ "${CI:-}" != true ] || false; skip "dpkg owns no $prog here"; }
	before=$(sha256sum "$prog")
	mkdir -p "$T/up" "$T/work"
	run --separate-stderr unshare --mount --propagation private sh -c '
		mount -t overlay overlay -o "lowerdir=/usr/bin,upperdir=$1/up,workdir=$1/work" /usr/bin || exit 99
		"$2" /usr/bin/true; echo "plain $?"
		"$2" --dry-run /usr/bin/true; echo "dry $?"
		"$2" --dry-run --force /usr/bin/true; echo "dry-force $?"
		cmp -s /usr/bin/true "$3" && echo unchanged
		"$2" --force /usr/bin/true; echo "force $?"
		"$2" --check /usr/bin/true' sh "$T" "$STAMP" "$prog"
	[ "$status" -eq 0 ] || { echo "$status $output $stderr"; false; }
	local refusal="tiexec-stamp: '/usr/bin/true': belongs to the Debian package $owner: its next upgrade drops the stamp and dpkg --verify flags the change; use tiexec-keep (a stamped copy that follows upgrades), or --force"
	same "plain 2
dry 2
/usr/bin/true: would be stamped: ${DEFAULT_POLICY#stamped: }
dry-force 0
unchanged
force 0
/usr/bin/true: $DEFAULT_POLICY" "$output"
	same "$refusal
$refusal" "$(grep -v ': warning: no whole 2 MiB' <<<"$stderr")"
	same "$before" "$(sha256sum "$prog")"
}

@test "nothing to gain: a warning for text without a whole 2 MiB piece, none for bigtext or --round-out" {
	cp "$FIXTURES/probe-pie" "$T/small"
	cp "$FIXTURES/bigtext-pie" "$T/big"
	run --separate-stderr "$STAMP" "$T/small"
	[ "$status" -eq 0 ]
	no_gain_warning "$T/small" "$stderr"
	run --separate-stderr "$STAMP" --round-out "$T/small"
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	run --separate-stderr "$STAMP" "$T/big"
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
}

@test "--dry-run: stamping and removing say what they would do and write nothing" {
	cp "$FIXTURES/bigtext-pie" "$T/p"
	cp "$T/p" "$T/orig"
	run --separate-stderr "$STAMP" --dry-run --strategy=thp "$T/p"
	[ "$status" -eq 0 ]
	same "$T/p: would be stamped: strategy=thp min-text=default round-out=no lazy=no" "$output"
	cmp "$T/orig" "$T/p"
	run "$STAMP" --dry-run --remove "$T/p"
	[ "$status" -eq 0 ]
	same "$T/p: not stamped" "$output"
	"$STAMP" "$T/p"
	cp "$T/p" "$T/stamped"
	run "$STAMP" --dry-run "$T/p"
	same "$T/p: stamped so already: ${DEFAULT_POLICY#stamped: }" "$output"
	run "$STAMP" --dry-run --remove "$T/p"
	[ "$status" -eq 0 ]
	same "$T/p: would be unstamped" "$output"
	cmp "$T/stamped" "$T/p"
	run --separate-stderr "$STAMP" --check --dry-run "$T/p"
	[ "$status" -eq 2 ]
}
