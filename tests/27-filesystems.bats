#!/usr/bin/env bats
# File systems programs live on, each made by the test and removed by it:
# btrfs and squashfs on loop devices, a FUSE mount (squashfuse, bindfs) and
# an overlay.  Where the page cache cannot hold 2 MiB folios (btrfs,
# squashfs, FUSE on this kernel), tiexec evicts and reads nothing: auto
# copies the text from the cache, a warm start reads nothing from disk.
bats_require_minimum_version 1.5.0
load test_helper

setup() {
	[ "$(id -u)" = 0 ] || skip_unsupported "needs root: mounts file systems"
	T=$BATS_TEST_TMPDIR
	MOUNTS=()
	KV=$(uname -r | cut -d. -f1-2)
}

teardown() {
	local i
	for ((i = ${#MOUNTS[@]} - 1; i >= 0; i--)); do
		umount "${MOUNTS[i]}" 2>/dev/null || umount -l "${MOUNTS[i]}" 2>/dev/null || true
	done
}

need() {
	command -v "$1" >/dev/null || skip_unsupported "$1 is not installed (Debian package $2)"
}

# mounted DIR: remember DIR for teardown.
mounted() {
	MOUNTS+=("$1")
}

# no_waste DIR NAME: bigtext-pie in DIR, on a file system the loader calls
# NAME: -v says nothing is evicted, auto copies the aligned text, the
# output is the direct run's, and a warm start reads (almost) nothing.
no_waste() {
	local p=$1/big
	cat "$p" >/dev/null
	run --separate-stderr timeout 60 "$TIEXEC" -v "$p" loop 1000
	echo "$stderr"
	[ "$status" -eq 0 ]
	[ "$output" = "$("$p" loop 1000)" ]
	[[ "$stderr" == *"tiexec: '$p': file: $2 keeps 4 KiB folios in the page cache on Linux $KV: nothing evicted or read again"* ]]
	[[ "$stderr" == *"tiexec: '$p': 62.0 of 64.0 MiB text on 2 MiB pages (file 0.0, thp 62.0)"* ]]
	[[ "$stderr" != *"kept small pages"* ]]
	local direct via
	direct=$(read_bytes "$p")
	via=$(read_bytes "$TIEXEC" "$p")
	echo "warm start, bytes read from disk: direct $direct, tiexec $via"
	[ "$via" -le $((direct + (1 << 20))) ]
}

@test "btrfs: nothing evicted; libraries placed (their device as maps shows it)" {
	need mkfs.btrfs btrfs-progs
	truncate -s 400M "$T/btrfs.img"
	mkfs.btrfs -q "$T/btrfs.img"
	mkdir "$T/b"
	mount -o loop "$T/btrfs.img" "$T/b"
	mounted "$T/b"
	cp "$FIXTURES/bigtext-pie" "$T/b/big"
	"$ROOT/tests/fixtures/gentext.sh" "$T/b/bl" 16 lib 2>/dev/null
	sync
	no_waste "$T/b" btrfs
	run --separate-stderr timeout 60 "$TIEXEC" -v "$T/b/bl" loop 1000
	echo "$stderr"
	[ "$status" -eq 0 ]
	[[ "$stderr" == *"library '$T/b/libbl.so': 14.0 of 16.0 MiB text on 2 MiB pages (file 0.0, thp 14.0)"* ]]
	[[ "$stderr" != *"replaced since"* ]]
	# tiexec-warm says why, and evicts nothing either.
	run_t "$BUILD/warm/tiexec-warm" -v "$T/b/big"
	echo "$output"
	[ "$status" -eq 1 ]
	[[ "$output" == *"$T/b/big: 0.0 of 62.0 MiB warm (0.0 before), left alone: btrfs keeps 4 KiB folios in the page cache on Linux $KV"* ]]
	[[ "$output" != *evicted* ]]
}

@test "squashfs (loop): nothing evicted, the text copied from the cache" {
	need mksquashfs squashfs-tools
	mkdir "$T/src" "$T/s"
	cp "$FIXTURES/bigtext-pie" "$T/src/big"
	mksquashfs "$T/src" "$T/sq.img" -quiet -noappend >/dev/null
	mount -o loop -t squashfs "$T/sq.img" "$T/s"
	mounted "$T/s"
	no_waste "$T/s" squashfs
}

@test "FUSE (squashfuse, bindfs): nothing evicted, the text copied from the cache" {
	need squashfuse squashfuse
	need bindfs bindfs
	mkdir "$T/src" "$T/sf" "$T/bf"
	cp "$FIXTURES/bigtext-pie" "$T/src/big"
	mksquashfs "$T/src" "$T/sq.img" -quiet -noappend >/dev/null
	squashfuse "$T/sq.img" "$T/sf"
	mounted "$T/sf"
	no_waste "$T/sf" FUSE
	bindfs "$T/src" "$T/bf"
	mounted "$T/bf"
	no_waste "$T/bf" FUSE
}

@test "overlayfs: a program just written into the overlay gets its text from the page cache, as on its own file system" {
	mkdir -p "$T/ov/lower" "$T/ov/upper" "$T/ov/work" "$T/ov/m"
	mount -t overlay overlay -o "lowerdir=$T/ov/lower,upperdir=$T/ov/upper,workdir=$T/ov/work" "$T/ov/m"
	mounted "$T/ov/m"
	"$ROOT/tests/fixtures/gentext.sh" "$T/ov/m/big" 16 pie
	run --separate-stderr timeout 60 "$TIEXEC" -v "$T/ov/m/big" loop 1000
	echo "$stderr"
	[ "$status" -eq 0 ]
	[[ "$stderr" == *"tiexec: '$T/ov/m/big': 14.0 of 16.0 MiB text on 2 MiB pages (file 14.0, thp 0.0)"* ]]
}
