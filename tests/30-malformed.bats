#!/usr/bin/env bats
# Malformed ELF programs: tiexec refuses each one the kernel refuses (or
# kills the process for) before mapping anything, with status 126 and exactly
# one line naming the file and what is wrong; odd files the kernel runs, it
# runs.  The corpus comes from tests/fixtures/mkbad.c: OUTDIR/MANIFEST has
# "<name>\t<message>" lines; OUTDIR/GOOD lists the unbroken templates;
# OUTDIR/SAME the files that must behave as a direct exec.

bats_require_minimum_version 1.5.0
load test_helper

setup_file() {
	gcc -std=gnu11 -O1 -Wall -Wextra -o "$BATS_FILE_TMPDIR/mkbad" "$ROOT/tests/fixtures/mkbad.c"
	gcc -std=gnu11 -O1 -Wall -Wextra -o "$BATS_FILE_TMPDIR/xexec" "$ROOT/tests/fixtures/xexec.c"
	CORPUS=$BATS_FILE_TMPDIR/corpus
	XEXEC=$BATS_FILE_TMPDIR/xexec
	"$BATS_FILE_TMPDIR/mkbad" "$CORPUS"
	export CORPUS XEXEC
}

# status_of CMD...: runs CMD (60 s at most), output to $out; sets $st.
status_of() {
	st=0
	timeout 60 "$@" >"$out" 2>&1 </dev/null || st=$?
}

@test "the corpus: at least 30 malformed files and the good templates" {
	[ -s "$CORPUS/MANIFEST" ]
	[ "$(wc -l <"$CORPUS/MANIFEST")" -ge 30 ]
	local name want missing=()
	while IFS=$'\t' read -r name want; do
		[ -f "$CORPUS/$name" ] && [ -x "$CORPUS/$name" ] && [ -n "$want" ] || missing+=("$name")
	done <"$CORPUS/MANIFEST"
	while read -r name; do
		[ -x "$CORPUS/$name" ] || missing+=("$name")
	done <"$CORPUS/GOOD"
	if ((${#missing[@]})); then
		printf 'missing or not executable: %s\n' "${missing[@]}"
		return 1
	fi
}

@test "the good templates run directly and under tiexec (exit 42)" {
	local name bad=()
	while read -r name; do
		run_t "$CORPUS/$name"
		[ "$status" -eq 42 ] || bad+=("$name direct: status $status, output '$output'")
		run_t "$TIEXEC" --min-text=0 "$CORPUS/$name"
		[ "$status" -eq 42 ] && [ -z "$output" ] ||
			bad+=("$name via tiexec: status $status, output '$output'")
	done <"$CORPUS/GOOD"
	if ((${#bad[@]})); then
		printf '%s\n' "${bad[@]}"
		return 1
	fi
}

@test "each malformed file: status 126 and one line 'tiexec: PATH: MESSAGE'" {
	local name want file expected status why n=0 bad=()
	local out=$BATS_TEST_TMPDIR/out
	while IFS=$'\t' read -r name want; do
		n=$((n + 1))
		file=$CORPUS/$name
		expected="tiexec: '$file': $want"
		status=0
		timeout 60 "$TIEXEC" --min-text=0 "$file" >"$out" 2>&1 </dev/null || status=$?
		why=
		if [ "$status" -eq 124 ]; then
			why="timed out"
		elif [ "$status" -gt 128 ]; then
			why="killed by signal $((status - 128))"
		elif [ "$status" -ne 126 ]; then
			why="status $status, want 126"
		fi
		# exactly the expected line and its newline, nothing else
		if ! printf '%s\n' "$expected" | cmp -s - "$out"; then
			why+="${why:+; }wrong output"$'\n'"      got:  $(cat -vE "$out" | sed '2,$s/^/            /')"
			why+=$'\n'"      want: $expected\$"
		fi
		# The kernel refuses it too, or kills what it started.
		status_of "$XEXEC" "$file"
		if [ "$st" -ne 126 ] && [ "$st" -ne 127 ] && [ "$st" -le 128 ]; then
			why+="${why:+; }a direct exec ran it (status $st)"
		fi
		[ -z "$why" ] || bad+=("$name: $why")
	done <"$CORPUS/MANIFEST"
	[ "$n" -ge 30 ]
	if ((${#bad[@]})); then
		printf '%d of %d malformed files handled wrongly:\n' "${#bad[@]}" "$n"
		printf '  %s\n' "${bad[@]}"
		return 1
	fi
}

@test "odd files the kernel runs or refuses: the same status and output as a direct exec" {
	# For each file in SAME: run directly (plain execve), then through tiexec.
	# A failed execve (126/127) must give the same status and one tiexec
	# line; a run must give the same status and output; a direct run killed
	# by a signal may instead be refused (126, one line).
	local name file st dst dout n=0 bad=()
	local out=$BATS_TEST_TMPDIR/out
	while IFS=$'\t' read -r name _ _; do
		n=$((n + 1))
		file=$CORPUS/$name
		status_of "$XEXEC" "$file"
		dst=$st dout=$(cat "$out")
		status_of "$TIEXEC" --min-text=0 "$file"
		local tout lines
		tout=$(cat "$out")
		lines=$(wc -l <"$out")
		if [ "$dst" -eq 126 ] || [ "$dst" -eq 127 ]; then
			[ "$st" -eq "$dst" ] && [ "$lines" -eq 1 ] && [[ $tout == "tiexec: '"* ]] ||
				bad+=("$name: direct execve failed ($dst), tiexec: status $st, output '$tout'")
		elif [ "$dst" -gt 128 ] && [ "$st" -eq 126 ] && [ "$lines" -eq 1 ] &&
			[[ $tout == "tiexec: '"* ]]; then
			: # the direct run was killed; refusing is allowed
		elif [ "$st" -ne "$dst" ] || [ "$tout" != "$dout" ]; then
			bad+=("$name: direct status $dst output '$dout'; tiexec status $st output '$tout'")
		fi
	done <"$CORPUS/SAME"
	[ "$n" -ge 30 ]
	if ((${#bad[@]})); then
		printf '%d of %d files behave differently from a direct exec:\n' "${#bad[@]}" "$n"
		printf '  %s\n' "${bad[@]}"
		return 1
	fi
}

@test "a dynamic section in a page past the end of the file: ld.so takes the SIGBUS, as directly, not tiexec" {
	# probe-pie with its writable segment (which holds .dynamic) given no
	# .bss and the file cut at that segment's first page: the kernel maps
	# it all the same, and reading it raises SIGBUS.
	local f=$BATS_TEST_TMPDIR/short out=$BATS_TEST_TMPDIR/out idx off fsz
	cp "$FIXTURES/probe-pie" "$f"
	# Its index among all program headers, offset and file size.
	read -r idx off fsz < <(readelf -lW "$f" | awk '
		/^Program Headers:/ { on = 1; next }
		on && /^ *Type/ { next }
		on && /^$/ { exit }
		on && /^ *\[/ { next }
		on { if ($1 == "LOAD" && $7 ~ /W/) { print i, $2, $5; exit } i++ }')
	[ -n "$idx" ]
	# p_memsz (at e_phoff 64 + 56 * idx + 40) = p_filesz, little-endian.
	perl -e 'print pack("Q<", hex($ARGV[0]))' "$fsz" |
		dd of="$f" bs=1 seek=$((64 + 56 * idx + 40)) conv=notrunc status=none
	truncate -s $((off & ~4095)) "$f"
	readelf -lW "$f" 2>/dev/null | grep -q "LOAD.*$(printf '0x%06x 0x%06x' $((fsz)) $((fsz))) RW"
	status_of "$f" a
	local dst=$st
	[ "$dst" -eq 135 ] # SIGBUS, in ld.so
	run --separate-stderr timeout 60 "$TIEXEC" -v "$f" a
	[ "$status" -eq "$dst" ]
	# tiexec got as far as ld.so, and said why there is no stage after it.
	[[ "$stderr" == *"'$f': libraries left as ld.so maps them: the program has no writable dynamic section for tiexec's hook"* ]]
}

@test "a nonexistent program: status 127 and a message naming it" {
	run -127 timeout 60 "$TIEXEC" --min-text=0 /nonexistent/x
	[ "${#lines[@]}" -eq 1 ]
	[[ "$output" == "tiexec: '/nonexistent/x': "* ]]
}

@test "a program without execute permission: status 126, Permission denied" {
	local file=$BATS_TEST_TMPDIR/noexec
	cp "$CORPUS/good-exec" "$file"
	chmod 0644 "$file"
	run_t "$TIEXEC" --min-text=0 "$file"
	[ "$status" -eq 126 ]
	[ "${#lines[@]}" -eq 1 ]
	[[ "$output" == "tiexec: '$file': "*"Permission denied"* ]]
}

@test "a fixed-address program whose .bss would cover the loader and the stack: 126" {
	# good-exec's third program header (GNU_STACK, at file offset 176)
	# becomes a writable PT_LOAD at 0x402000 with no file bytes and a
	# p_memsz reaching the top of the user address space.
	f=$BATS_TEST_TMPDIR/collide
	cp "$CORPUS/good-exec" "$f"
	printf '\001\000\000\000\006\000\000\000%b%b%b%b%b%b' \
		'\0\0\0\0\0\0\0\0' '\0\040\100\0\0\0\0\0' '\0\040\100\0\0\0\0\0' \
		'\0\0\0\0\0\0\0\0' '\0\320\277\377\377\177\0\0' '\0\020\0\0\0\0\0\0' |
		dd of="$f" bs=1 seek=176 conv=notrunc status=none
	readelf -lW "$f" | grep -q 'LOAD.*0x000000 0x0000000000402000 .* 0x7fffffbfd000 RW'
	run_t "$TIEXEC" --min-text=0 "$f"
	[ "$status" -eq 126 ]
	[ "$output" = "tiexec: '$f': fixed load address 0x400000-0x7ffffffff000 overlaps memory already in use (the loader or the stack)" ]
}
