#!/usr/bin/env bats
# Where the kernel's rules for ELF files and their interpreters decide
# (fs/binfmt_elf.c, fs/exec.c, Linux 6.18): each test compares tiexec with a
# plain execve of the same file (tests/fixtures/xexec.c), not with a
# hard-coded result.

bats_require_minimum_version 1.5.0
load test_helper

setup_file() {
	D=$BATS_FILE_TMPDIR
	gcc -std=gnu11 -O1 -Wall -Wextra -o "$D/xexec" "$ROOT/tests/fixtures/xexec.c"
	printf '#include <stdio.h>\nint main(void) { puts("hello"); return 7; }\n' >"$D/hello.c"
}

setup() {
	D=$BATS_FILE_TMPDIR
	T=$BATS_TEST_TMPDIR
}

# both PROG ARGS...: runs PROG directly and through tiexec; sets dst/dout and
# tst/tout (status, stdout+stderr).
both() {
	dst=0 tst=0
	dout=$(timeout 20 "$D/xexec" "$@" 2>&1 </dev/null) || dst=$?
	tout=$(timeout 20 "$TIEXEC" --min-text=0 "$@" 2>&1 </dev/null) || tst=$?
	echo "direct: $dst '$dout'; tiexec: $tst '$tout'"
}

# A dynamically linked hello (exit 7) whose PT_INTERP is $2.
hello_with_interp() {
	gcc -O1 -o "$1" "$D/hello.c" -Wl,--dynamic-linker="$2"
	readelf -lW "$1" | grep -qF "[Requesting program interpreter: $2]"
}

@test "a FIFO as PT_INTERP: refused at once (EACCES) like a direct exec, never opened" {
	mkfifo "$T/fifo"
	hello_with_interp "$T/prog" "$T/fifo"
	both "$T/prog"
	[ "$dst" -eq 126 ]
	[ "$tst" -eq "$dst" ]
	[ "$tout" = "tiexec: '$T/prog': interpreter '$T/fifo': Permission denied" ]
}

@test "a character device as PT_INTERP: refused like a direct exec" {
	hello_with_interp "$T/prog" /dev/zero
	both "$T/prog"
	[ "$dst" -eq 126 ]
	[ "$tst" -eq "$dst" ]
	[ "$tout" = "tiexec: '$T/prog': interpreter '/dev/zero': Permission denied" ]
}

@test "an interpreter without execute permission: refused like a direct exec; with it, runs" {
	cp /lib64/ld-linux-x86-64.so.2 "$T/ld.so"
	chmod 0644 "$T/ld.so"
	hello_with_interp "$T/prog" "$T/ld.so"
	both "$T/prog"
	[ "$dst" -eq 126 ]
	[ "$tst" -eq "$dst" ]
	[ "$tout" = "tiexec: '$T/prog': interpreter '$T/ld.so': Permission denied" ]
	chmod 0755 "$T/ld.so"
	both "$T/prog"
	[ "$dst" -eq 7 ]
	[ "$dout" = hello ]
	[ "$tst" -eq "$dst" ]
	[ "$tout" = "$dout" ]
}

@test "an interpreter on a noexec mount: refused like a direct exec" {
	mkdir "$T/mnt"
	hello_with_interp "$T/prog" "$T/mnt/ld.so"
	# A private mount namespace: the tmpfs goes away with it (an ordinary
	# user's needs a user namespace of its own to mount in).
	local ns=(unshare -m)
	[ "$(id -u)" = 0 ] || ns=(unshare -Urm)
	run_t "${ns[@]}" sh -c '
		mount -t tmpfs -o noexec,mode=0755 none "$1/mnt" || exit 99
		cp /lib64/ld-linux-x86-64.so.2 "$1/mnt/ld.so"
		s=0; "$2" "$1/prog" >/dev/null 2>&1 || s=$?; echo "direct $s"
		s=0; "$3" --min-text=0 "$1/prog" 2>&1 || s=$?; echo "tiexec $s"' sh "$T" "$D/xexec" "$TIEXEC"
	[ "$status" -ne 99 ] || skip_unsupported "cannot mount a tmpfs in a private namespace"
	[ "${lines[0]}" = "direct 126" ]
	[ "${lines[1]}" = "tiexec: '$T/prog': interpreter '$T/mnt/ld.so': Permission denied" ]
	[ "${lines[2]}" = "tiexec 126" ]
}

@test "PT_INTERP followed by NUL padding (rewritten in place): runs like a direct exec" {
	# Link with a longer interpreter name, then write the real one over it.
	local long=/lib64/ld-linux-x86-64.so.2.padded.padded
	hello_with_interp "$T/prog" "$long"
	local off
	off=$(readelf -lW "$T/prog" | awk '$1 == "INTERP" { print $2 }')
	printf '/lib64/ld-linux-x86-64.so.2\0' | dd of="$T/prog" bs=1 seek=$((off)) conv=notrunc status=none
	head -c $((off + ${#long} + 1)) "$T/prog" | tail -c $((${#long} - 27)) | od -An -c | grep -q '\\0'
	both "$T/prog"
	[ "$dst" -eq 7 ]
	[ "$dout" = hello ]
	[ "$tst" -eq "$dst" ]
	[ "$tout" = "$dout" ]
}

@test "p_align above 2 MiB (4 MiB variable): the load bias honours it, PIE and static PIE" {
	gcc -O1 -fPIE -pie -o "$T/a-pie" "$ROOT/tests/fixtures/aligned.c"
	gcc -O1 -fPIE -static-pie -o "$T/a-static" "$ROOT/tests/fixtures/aligned.c"
	readelf -lW "$T/a-pie" | grep -q 'LOAD .* 0x400000$'
	local p i bad=()
	for p in a-pie a-static; do
		for i in $(seq 12); do
			both "$T/$p" >/dev/null
			[ "$dout" = aligned ] || bad+=("$p: direct: $dout")
			[ "$tst" -eq "$dst" ] && [ "$tout" = "$dout" ] || bad+=("$p run $i: tiexec: $tout")
		done
	done
	if ((${#bad[@]})); then
		printf '%s\n' "${bad[@]}"
		return 1
	fi
}

@test "p_align 64 KiB with --strategy=off: the load bias honours it" {
	gcc -O1 -fPIE -pie -DALIGN=65536 -o "$T/a64k" "$ROOT/tests/fixtures/aligned.c"
	local i out bad=()
	for i in $(seq 12); do
		[ "$("$D/xexec" "$T/a64k")" = aligned ]
		out=$(timeout 20 "$TIEXEC" --strategy=off "$T/a64k" 2>&1) || bad+=("run $i: status $?")
		[ "$out" = aligned ] || bad+=("run $i: $out")
	done
	if ((${#bad[@]})); then
		printf '%s\n' "${bad[@]}"
		return 1
	fi
}

@test "AT_PHDR when the program headers lie outside every PT_LOAD: the kernel's value (load bias)" {
	gcc -O1 -nostdlib -static-pie -fPIE -o "$T/phdr" "$ROOT/tests/fixtures/phdr-aux.c"
	# Copy the program header table to the end of the file, past every
	# segment's file bytes, and point e_phoff there.
	python3 - "$T/phdr" "$T/moved" <<'PY'
import struct, sys
b = bytearray(open(sys.argv[1], 'rb').read())
phoff, = struct.unpack_from('<Q', b, 32)
phnum, = struct.unpack_from('<H', b, 56)
table = b[phoff:phoff + 56 * phnum]
b += bytes(-len(b) % 8)
struct.pack_into('<Q', b, 32, len(b))
b += table
for i in range(phnum):  # the table must lie in no PT_LOAD's file bytes
	t, _, off, _, _, fsz = struct.unpack_from('<IIQQQQ', table, 56 * i)
	assert t != 1 or off + fsz <= len(b) - len(table)
open(sys.argv[2], 'wb').write(b)
PY
	chmod +x "$T/moved"
	both "$T/phdr"
	[ "$dst" -eq 0 ]
	[ "$tst" -eq 0 ]
	[ "$tout" = "$dout" ]
	both "$T/moved"
	[ "$dst" -eq 0 ]
	[ "$dout" = 0 ]
	[ "$tst" -eq 0 ]
	[ "$tout" = "$dout" ]
}

@test "under ulimit -v: a 256 MiB-text program runs through tiexec with at most 1 MiB more than directly" {
	"$ROOT/tests/fixtures/gentext.sh" "$T/big" 256 pie
	# The smallest limit (KiB, to 64 KiB) at which the direct run works.
	runs_under() { # LIMIT_KIB CMD...
		local l=$1
		shift
		(ulimit -v "$l" && exec "$@" loop 1000 >/dev/null 2>&1)
	}
	local lo=65536 hi=4194304 mid
	runs_under "$hi" "$D/xexec" "$T/big"
	! runs_under "$lo" "$D/xexec" "$T/big" || false
	while ((hi - lo > 64)); do
		mid=$(((lo + hi) / 2))
		if runs_under "$mid" "$D/xexec" "$T/big"; then hi=$mid; else lo=$mid; fi
	done
	echo "direct run needs ${hi} KiB of address space"
	local want got
	want=$("$D/xexec" "$T/big" loop 1000)
	got=$(ulimit -v $((hi + 1024)) && timeout 60 "$TIEXEC" -v "$T/big" loop 1000 2>"$T/err") || {
		cat "$T/err"
		return 1
	}
	cat "$T/err"
	[ "$got" = "$want" ]
}

@test "under ulimit -v: a dynamic program starts through tiexec at the smallest limit a direct exec starts at" {
	local p
	for p in /bin/true "$FIXTURES/probe-pie"; do
		local lo=256 hi=65536 mid
		while ((hi - lo > 4)); do
			mid=$(((lo + hi) / 2))
			if (ulimit -v "$mid" && exec "$D/xexec" "$p" >/dev/null 2>&1); then hi=$mid; else lo=$mid; fi
		done
		echo "$p: a direct exec needs ${hi} KiB"
		run --separate-stderr bash -c 'ulimit -v "$1" && exec "$2" -v "$3"' _ "$hi" "$TIEXEC" "$p"
		echo "$stderr"
		[ "$status" -eq 0 ]
		[[ "$stderr" == *"libraries left as ld.so maps them: RLIMIT_AS (ulimit -v) is set"* ]]
	done
}

@test "text whose p_filesz runs past EOF: runs like a direct exec; past EOF still SIGBUS, not a copy" {
	# ET_EXEC at 0x400000, one R+X segment of 8 MiB file bytes in a 3 MiB
	# file.  "touch" reads a byte 6 MiB in (past EOF: SIGBUS directly),
	# "quiet" exits 42 at once.  With huge pages, tiexec must neither copy
	# nor fault in anything past EOF.
	python3 - "$T" <<'PY'
import struct, sys
def prog(path, touch):
    code = b''
    if touch:
        code += b'\xa0' + struct.pack('<Q', 0x400000 + 0x600000)  # movabs al, [addr]
    code += b'\xbf\x2a\x00\x00\x00\xb8\x3c\x00\x00\x00\x0f\x05'   # exit(42)
    eh = b'\x7fELF' + bytes([2, 1, 1]) + bytes(9)
    eh += struct.pack('<HHIQQQIHHHHHH', 2, 62, 1, 0x401000, 64, 0, 0, 64, 56, 2, 64, 0, 0)
    ph = struct.pack('<IIQQQQQQ', 1, 5, 0, 0x400000, 0x400000, 8 << 20, 8 << 20, 0x200000)
    ph += struct.pack('<IIQQQQQQ', 0x6474e551, 6, 0, 0, 0, 0, 0, 16)
    b = bytearray(3 << 20)
    b[0:len(eh + ph)] = eh + ph
    b[0x1000:0x1000 + len(code)] = code
    open(path, 'wb').write(b)
prog(sys.argv[1] + '/quiet', False)
prog(sys.argv[1] + '/touch', True)
PY
	chmod +x "$T/quiet" "$T/touch"
	local p s out
	for p in quiet touch; do
		both "$T/$p"
		[ "$tst" -eq "$dst" ]
		[ "$tout" = "$dout" ]
		for s in thp file; do
			out=$(timeout 20 "$TIEXEC" --strategy=$s "$T/$p" 2>&1) && st=0 || st=$?
			echo "$p --strategy=$s: $st '$out'"
			[ "$st" -eq "$dst" ]
			[ "$out" = "$dout" ]
		done
	done
	[ "$dst" -eq 135 ] # the touch: SIGBUS
}

@test "setarch -R: addresses repeat from run to run through tiexec, and differ from the direct exec's (documented)" {
	command -v setarch >/dev/null || skip_unsupported "setarch (util-linux) is not installed"
	printf '#include <stdio.h>\nint main(void) { int local; printf("%%p %%p %%p\\n", (void *)main, (void *)printf, (void *)&local); return 0; }\n' >"$T/addr.c"
	gcc -O0 -o "$T/addr" "$T/addr.c"
	local d1 d2 t1 t2
	d1=$(setarch -R "$T/addr")
	d2=$(setarch -R "$T/addr")
	t1=$(setarch -R "$TIEXEC" --min-text=0 "$T/addr")
	t2=$(setarch -R "$TIEXEC" --min-text=0 "$T/addr")
	echo "direct: $d1 / $d2; tiexec: $t1 / $t2"
	[ "$d1" = "$d2" ]
	[ "$t1" = "$t2" ]
	[ "$t1" != "$d1" ]
}
