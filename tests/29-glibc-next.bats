#!/usr/bin/env bats
# The library plan against another glibc's ld.so: Debian experimental's
# libc6 (2.44, with the glibc.elf.thp tunable) bound over the machine's in
# a mount namespace of its own (scripts/glibc-next).  The plan replays the
# requests ld.so makes (interp/libplan.c, ldplan.c); a glibc whose
# sequence differs must still run every program as directly, and where
# the plan lands, it lands as with the machine's glibc.

bats_require_minimum_version 1.5.0
load test_helper

WARM=$BUILD/warm/tiexec-warm

setup_file() {
	[ "$(id -u)" = 0 ] && [ "$(uname -m)" = x86_64 ] && [ -x "$FIXTURES/bl-lld" ] || return 0
	C=$(mktemp -d /run/tiexec-glibc-test.XXXXXX)
	chmod 755 "$C"
	echo "$C" >"$BATS_FILE_TMPDIR/c"
	printf 'cache %s/text\n' "$C" >"$C/warm.conf"
	mkdir "$C/fx"
	cp "$FIXTURES/bl-lld" "$FIXTURES/libbl-lld.so" "$C/fx/"
	chmod -R a+rX "$C/fx"
	cat /sys/kernel/mm/transparent_hugepage/enabled >"$C/thp"
}

teardown_file() {
	[ -f "$BATS_FILE_TMPDIR/c" ] || return 0
	C=$(cat "$BATS_FILE_TMPDIR/c")
	# THP as it was (the second test sets "always").
	local was
	was=$(sed -n 's/.*\[\(.*\)\].*/\1/p' "$C/thp")
	[ -z "$was" ] || echo "$was" >/sys/kernel/mm/transparent_hugepage/enabled
	rm -rf "$C"
	true
}

setup() {
	[ "$(uname -m)" = x86_64 ] || skip "libc's window is for a page-aligned libc (x86-64)"
	[ "$(id -u)" = 0 ] || skip "needs root: binds a C library over the machine's in a mount namespace"
	[ -x "$FIXTURES/bl-lld" ] || skip_unsupported "lld is not installed: no lld-linked fixtures"
	C=$(cat "$BATS_FILE_TMPDIR/c")
}

# inside MODE: run in glibc-next's namespace (the cache tiexec-warm mounts
# there ends with it); prints "key value" lines.
inside() {
	cat >"$BATS_TEST_TMPDIR/in.sh" <<-'SH'
		set -euo pipefail
		T=$1 W=$2 C=$3 FX=$4 R=$5
		ld=/lib64/ld-linux-x86-64.so.2
		echo "version $("$ld" --version | sed -n '1s/.* version \([0-9.]*\)\.$/\1/p')"
		echo "tunable $("$ld" --list-tunables | grep -c '^glibc.elf.thp:' || true)"
		same() { a=$("$@" 2>&1 | md5sum) b=$("$T" "$@" 2>&1 | md5sum); [ "$a" = "$b" ] && echo same || echo differ; }
		echo "ls $(same ls -la /usr/lib)"
		# bl-64k: its 16 MiB library (p_align 64 KiB) placed 2 MiB-aligned
		# (from the build directory: its page cache has 2 MiB folios).
		echo "run-bl-64k $(same "$FX/bl-64k" loop 100)"
		n=0
		for i in $(seq 20); do
			TIEXEC_CACHE= "$T" "$FX/bl-64k" report |
				awk '/ r-xp / && /libbl-64k.so$/ { for (i = 1; i <= NF; i++) if ($i ~ /^file_pmd_kb=/) { split($i, a, "="); k = a[2] } } END { exit !(k >= 6144) }' &&
				n=$((n + 1))
		done
		echo "bl-64k $n of 20"
		echo "missed-bl-64k $(TIEXEC_CACHE= "$T" -v "$FX/bl-64k" loop 1 2>&1 >/dev/null | grep -c "libbl-64k.so': planned before ld.so, missed: ld.so mapped it elsewhere" || true)"
		"$W" --config "$C/warm.conf" /bin/cat "$C/fx/bl-lld" >/dev/null
		export TIEXEC_CACHE=$C/text
		echo "run-bl-lld $(same "$C/fx/bl-lld" loop 100)"
		echo "missed-bl-lld $("$T" -v "$C/fx/bl-lld" loop 1 2>&1 >/dev/null | grep -c "libc.so.6': planned before ld.so, missed: ld.so mapped it elsewhere" || true)"
		echo "plan-ls $("$T" -v /bin/ls / 2>&1 >/dev/null | grep -c "libc.so.6': planned before ld.so: its read-only image in a 2 MiB window of its own, mapped" || true)"
		n=0
		for i in $(seq 50); do
			"$T" /bin/cat /proc/self/smaps |
				awk '/^[0-9a-f]+-[0-9a-f]+ / { w = index($0, ".window") > 0; next } w && $1 == "ShmemPmdMapped:" && $2 == 2048 { f = 1 } END { exit !f }' &&
				n=$((n + 1))
		done
		echo "cat $n of 50"
		read -r _ win _ < <(python3 "$R/tests/window-starts.py" "$T" "$C/fx/bl-lld" 20)
		echo "bl-lld $win of 20"
	SH
	run --separate-stderr timeout 600 "$ROOT/scripts/glibc-next" -- bash "$BATS_TEST_TMPDIR/in.sh" "$TIEXEC" "$WARM" "$C" "$FIXTURES" "$ROOT"
	echo "$stderr" | tail -5
	echo "$output"
	[ "$status" -eq 0 ]
}

# What holds: every program as directly; libc's window where libc is the
# first library (cat: ld.so.cache, then libc, in both glibcs' order).
# What does not yet (reported, not asserted; #54): 2.44's ld.so maps
# ld.so.cache and a second page of its malloc before a library found in
# the program's RUNPATH, where 2.36's maps them after it, so the plan's
# replay of bl-lld (its 16 MiB library, then libc) misses libc's window;
# bl-64k's library (p_align 64 KiB) is not mapped where the holds put it
# either.  Both run as directly, and -v says the plan missed.
assert_rows() {
	grep -qx 'ls same' <<<"$output"
	grep -qx 'run-bl-64k same' <<<"$output"
	grep -qx 'run-bl-lld same' <<<"$output"
	grep -qx 'plan-ls 1' <<<"$output"
	local n k
	for k in "bl-64k 20" "cat 50" "bl-lld 20"; do
		n=$(sed -n "s/^${k% *} \([0-9]*\) of ${k#* }$/\1/p" <<<"$output")
		echo "# $1: ${k% *}: $n of ${k#* } starts as planned" >&3
		# Where the plan misses, -v says so (it said "planned" before).
		[ "${k% *}" = cat ] || [ "${n:-0}" -ge 19 ] || grep -qx "missed-${k% *} 1" <<<"$output"
	done
	n=$(sed -n 's/^cat \([0-9]*\) of 50$/\1/p' <<<"$output")
	[ "${n:-0}" -ge 49 ]
}

@test "glibc 2.44's ld.so: every program as directly; libc's window where libc comes first" {
	inside
	grep -qx 'version 2\.4[4-9]' <<<"$output" || grep -qE '^version 2\.(4[4-9]|[5-9][0-9])$' <<<"$output"
	grep -qx 'tunable 1' <<<"$output"
	assert_rows "glibc 2.44"
}

# glibc.elf.thp=1 maps a library's first PT_LOAD 2 MiB-aligned where it
# is read-only, at least 2 MiB long and aligned in file and address, and
# only with THP "always": ld.so's requests differ there.  The plan and the
# tunable together: every program still as directly, the plan as above.
@test "glibc 2.44 with glibc.elf.thp=1 and THP always: as directly; libc's window where libc comes first" {
	echo always >/sys/kernel/mm/transparent_hugepage/enabled
	GLIBC_TUNABLES=glibc.elf.thp=1 inside
	assert_rows "glibc 2.44, glibc.elf.thp=1"
}
