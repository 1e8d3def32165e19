#!/usr/bin/env bats
# The text cache's trust chain (warm/trust.h, warm/textentry.c): tiexec-warm
# runs as root over files others wrote and fills a cache every user reads.
# Each test is one way an ordinary user (uid 65534) could try to steer it.
# Everything lives under this file's own directory in /run (root's, 0755),
# with caches this file mounts and unmounts.

load test_helper

WARM=$BUILD/warm/tiexec-warm
STAMP=$BUILD/stamp/tiexec-stamp
LIB=$FIXTURES/libbl-lld.so # 16 MiB of text not congruent to its offset: the cache's route

setup_file() {
	[ "$(id -u)" = 0 ] && [ -x "$FIXTURES/bl-lld" ] || return 0
	C=$(mktemp -d /run/tiexec-trust.XXXXXX)
	chmod 755 "$C"
	echo "$C" >"$BATS_FILE_TMPDIR/c"
	mkdir -m 755 "$C/pub"
	printf 'cache %s/text\n' "$C" >"$C/warm.conf"
	for f in holdwrite dupseg; do
		gcc -O2 -Wall -Wextra -o "$C/$f" "$ROOT/tests/fixtures/$f.c"
	done
}

teardown_file() {
	[ -f "$BATS_FILE_TMPDIR/c" ] || return 0
	C=$(cat "$BATS_FILE_TMPDIR/c")
	findmnt -rn -o TARGET | grep "^$C" | sort -r | while read -r m; do
		umount "$(printf '%b' "$m")" || true
	done
	rm -rf "$C"
}

setup() {
	[ "$(id -u)" = 0 ] || skip "needs root: tiexec-warm mounts its cache and reads others' files"
	[ -x "$FIXTURES/bl-lld" ] || skip_unsupported "lld is not installed: no lld-linked fixtures"
	C=$(cat "$BATS_FILE_TMPDIR/c")
	export TIEXEC_CACHE=$C/text
}

teardown() {
	cg_remove
	if [ -n "${HOLD:-}" ]; then
		exec {HW[1]}>&-
		wait "$HOLD" || true
		HOLD=
	fi
}

warm() {
	"$WARM" --config "$C/warm.conf" "$@"
}

# A copy of the lld library, readable by everyone: pub NAME.
pub() {
	cp "$LIB" "$C/pub/$1"
	chmod 644 "$C/pub/$1"
	echo "$C/pub/$1"
}

# kB used on the tmpfs at DIR (this file's own cache, nobody else's).
used_kb() {
	df --output=used -k "$1" | tail -1
}

@test "trust 1: a file not everyone may read gets no entry; appended data is not copied; .source is root's" {
	mkdir -m 700 "$C/priv"
	cp "$LIB" "$C/priv/lib.so"
	chmod 600 "$C/priv/lib.so"
	printf 'SECRET-%s' "$RANDOM" >>"$C/priv/lib.so"
	run_t "$WARM" --config "$C/warm.conf" "$C/priv/lib.so"
	[ "$status" -eq 1 ]
	[[ "$output" == *"not in the text cache (refused: '$C/priv/lib.so' is not readable by everyone (mode 0600), and an entry would be)"* ]]
	[ ! -e "$C/text/$(entry_of "$C/priv/lib.so")" ]
	chmod 644 "$C/priv/lib.so"
	run_t "$WARM" --config "$C/warm.conf" "$C/priv/lib.so"
	[ "$status" -eq 1 ]
	[[ "$output" == *"(refused: '$C/priv' is not searchable by everyone (mode 0700), and an entry would be)"* ]]
	[ ! -e "$C/text/$(entry_of "$C/priv/lib.so")" ]
	# Readable along its path but not by its group: the same.
	cp "$LIB" "$C/pub/g.so"
	chmod 604 "$C/pub/g.so"
	run_t "$WARM" --config "$C/warm.conf" "$C/pub/g.so"
	[[ "$output" == *"refused: '$C/pub/g.so' is not readable by everyone (mode 0604)"* ]]
	# Everyone may read it: an entry, without what lies past its content.
	# (past the page the file's tail shares with its text, which a direct
	# exec maps too: lld puts the section headers right after the text)
	f=$(pub app.so)
	head -c 8192 /dev/zero >>"$f"
	printf 'APPENDED-%s' "$RANDOM" >>"$f"
	run_t "$WARM" --config "$C/warm.conf" "$f"
	[ "$status" -eq 0 ]
	entry=$C/text/$(entry_of "$f")
	[ -f "$entry" ]
	! grep -q APPENDED "$entry" || false
	[ "$(stat -c %a "$entry.source")" = 400 ]
	run setpriv --reuid=65534 --regid=65534 --clear-groups cat "$entry.source"
	[ "$status" -ne 0 ]
	# And the entry still serves: the program runs from it.
	mkdir -p "$C/app"
	cp "$FIXTURES/bl-lld" "$LIB" "$C/app/"
	chmod -R a+rX "$C/app"
	warm "$C/app/libbl-lld.so" >/dev/null
	run_t "$TIEXEC" -v "$C/app/bl-lld" loop 1000
	[ "$status" -eq 0 ]
	[[ "$output" == *"(file 0.0, cache 14.0, thp 0.0)"* ]]
}

@test "trust 2: a FIFO or a device a stamped program names is never opened; tiexec-warm ends" {
	command -v strace >/dev/null || skip_unsupported "strace is not installed"
	S=$C/stamped2
	mkdir -m 755 "$S" "$C/u2"
	chown 65534 "$C/u2"
	for need in "$C/u2/fifo" /dev/zero; do
		n=$(basename "$need")
		gcc -shared -fPIC -Wl,-soname,"$need" -o "$BATS_TEST_TMPDIR/lib$n.so" -x c - <<<'int f(void) { return 1; }'
		gcc -o "$S/prog-$n" -x c - -x none "$BATS_TEST_TMPDIR/lib$n.so" <<<'int f(void); int main(void) { return f(); }'
		"$STAMP" "$S/prog-$n" >/dev/null
		readelf -dW "$S/prog-$n" | grep -q "NEEDED.*\[$need\]"
	done
	setpriv --reuid=65534 --regid=65534 --clear-groups mkfifo "$C/u2/fifo"
	printf 'cache off\nstamped %s\n' "$S" >"$C/s2.conf"
	run timeout 30 strace -f -qq -e trace=openat,open -o "$BATS_TEST_TMPDIR/trace" "$WARM" --config "$C/s2.conf"
	echo "$output"
	[ "$status" -ne 124 ]
	# Looked at through O_PATH only, never opened.
	! grep -E "\"($C/u2/fifo|/dev/zero)\"" "$BATS_TEST_TMPDIR/trace" | grep -v O_PATH || false
	grep -q "\"$C/u2/fifo\".*O_PATH" "$BATS_TEST_TMPDIR/trace"
}

@test "trust 3: in a stamped DIR, a subdirectory or a library someone else could change is skipped, with why" {
	S=$C/opt3
	mkdir -m 755 "$S" "$S/user" "$C/ulib3"
	mkdir -m 700 "$C/rootlib3"
	chown 65534 "$S/user" "$C/ulib3"
	gcc -shared -fPIC -Wl,-soname,libsecret.so -o "$C/rootlib3/libsecret.so" -x c - <<<'int f(void) { return 1; }'
	gcc -shared -fPIC -Wl,-soname,libu.so -o "$C/ulib3/libu.so" -x c - <<<'int g(void) { return 1; }'
	# A user's program, in the user's subdirectory, naming root's library.
	gcc -o "$S/user/prog" -x c - -x none -L"$C/rootlib3" -lsecret -Wl,-rpath,"$C/rootlib3" \
		<<<'int f(void); int main(void) { return f(); }'
	# Root's program, naming a library in a user's directory.
	gcc -o "$S/prog" -x c - -x none -L"$C/ulib3" -lu -Wl,-rpath,"$C/ulib3" <<<'int g(void); int main(void) { return g(); }'
	"$STAMP" "$S/user/prog" >/dev/null
	"$STAMP" "$S/prog" >/dev/null
	chown 65534 "$S/user/prog"
	printf 'cache off\nstamped %s\n' "$S" >"$C/s3.conf"
	run_t "$WARM" -v --config "$C/s3.conf"
	echo "$output"
	[ "$status" -eq 1 ]
	[[ "$output" != *libsecret* ]]
	[[ "$output" == *"tiexec-warm: '$S/user': skipped: '$S/user' is owned by uid 65534, not only by root"* ]]
	[[ "$output" == *"tiexec-warm: '$C/ulib3/libu.so': skipped: '$C/ulib3' is owned by uid 65534, not only by root"* ]]
	[[ "$output" == *"$S/prog: skipped"* ]] # root's program itself is looked at
}

@test "trust 4: a POSIX ACL that lets a user write the configuration is refused; the loader refuses such a cache" {
	command -v setfacl >/dev/null || skip_unsupported "setfacl is not installed (Debian: acl)"
	cp "$C/warm.conf" "$C/acl.conf"
	chmod 644 "$C/acl.conf"
	setfacl -m u:65534:rw "$C/acl.conf"
	[ "$(stat -c %a "$C/acl.conf")" = 664 ] # the group bits are the ACL's mask
	run_t "$WARM" --config "$C/acl.conf" "$(pub acl.so)"
	[ "$status" -eq 3 ]
	[[ "$output" == *"'$C/acl.conf': refused: '$C/acl.conf' is writable by uid 65534 (an ACL entry), not only by root"* ]]
	# Root's group alone may write: accepted, as before.
	setfacl -b "$C/acl.conf"
	chmod 664 "$C/acl.conf"
	run_t "$WARM" --config "$C/acl.conf" "$C/pub/acl.so"
	[ "$status" -eq 0 ]
	# The loader: a cache directory with such an entry is not used.
	mkdir -m 755 "$C/aclcache"
	warm "$(pub acl2.so)" >/dev/null
	cp -a "$C/text/." "$C/aclcache/"
	setfacl -m u:65534:rwx "$C/aclcache"
	run_t env TIEXEC_CACHE="$C/aclcache" "$TIEXEC" -v "$FIXTURES/bl-lld" loop 10
	[ "$status" -eq 0 ]
	[[ "$output" == *"cache: a directory on the way to the cache is writable by others than root"* ]]
}

@test "trust 5: what is opened is what was checked: a link in a user's directory is resolved once" {
	command -v strace >/dev/null || skip_unsupported "strace is not installed"
	mkdir -m 755 "$C/u5"
	f=$(pub five.so)
	ln -s "$f" "$C/u5/link"
	chown -h 65534 "$C/u5" "$C/u5/link"
	printf 'cache %s/text\n%s\n' "$C" "$C/u5/link" >"$C/five.conf"
	run_t strace -f -qq -e trace=openat,open -o "$BATS_TEST_TMPDIR/trace" "$WARM" --config "$C/five.conf"
	[ "$status" -eq 0 ]
	[[ "$output" == "$f: 16.0 MiB of text in the text cache (made now"* ]]
	# Never opened by the name the user controls.
	! grep -q "\"$C/u5/link\"" "$BATS_TEST_TMPDIR/trace" || false
	[ "$(cat "$C/text/$(entry_of "$f").source")" = "$f" ]
}

@test "trust 6: a cache line through a user's directory or symbolic link is refused; nothing is mounted" {
	mkdir -m 755 "$C/v6" "$C/victim6"
	mkdir -m 755 "$C/v6/cache"
	ln -s "$C/victim6" "$C/v6/cache/text"
	chown -h 65534 "$C/v6/cache" "$C/v6/cache/text"
	printf 'cache %s/v6/cache/text\n' "$C" >"$C/six.conf"
	run_t "$WARM" --config "$C/six.conf" "$(pub six.so)"
	[ "$status" -eq 3 ]
	[[ "$output" == *"'$C/v6/cache/text': the text cache: '$C/v6/cache' is owned by uid 65534, not root"* ]]
	# The file's own line blames the cache, not the file.
	[[ "$output" == *" of text not in the text cache (failed: the text cache is not usable, as said above), which it needs: its text is not congruent"* ]]
	! mountpoint -q "$C/victim6" || false
	# Root's own symbolic link: refused all the same.
	chown -h 0 "$C/v6/cache" "$C/v6/cache/text"
	run_t "$WARM" --config "$C/six.conf" "$C/pub/six.so"
	[[ "$output" == *"the text cache: '$C/v6/cache/text' is a symbolic link"* ]]
	! mountpoint -q "$C/victim6"
}

@test "trust 9: no entry while a process maps the file shared and writable; --check and --prune compare the text" {
	f=$(pub nine.so)
	coproc HW { exec "$C/holdwrite" "$f" $((2 << 20)); }
	HOLD=$HW_PID
	read -r ready <&"${HW[0]}"
	[ "$ready" = ready ]
	run_t "$WARM" --config "$C/warm.conf" "$f"
	[ "$status" -eq 1 ]
	[[ "$output" == *"(refused: PID $HOLD maps it shared and writable)"* ]]
	[ ! -e "$C/text/$(entry_of "$f")" ]
	exec {HW[1]}>&-
	wait "$HOLD"
	HOLD=
	sleep 0.05
	run_t "$WARM" --config "$C/warm.conf" "$f"
	[ "$status" -eq 0 ]
	[[ "$output" == *"(made now, "* ]]
	# Text that differs from the file's, with the same name: stale.
	entry=$C/text/$(entry_of "$f")
	off=$(readelf -lW "$entry" | awk '$1 == "LOAD" && $NF == "0x1000" && $(NF - 1) == "E" { print $2; exit }')
	printf '\xcc' | dd of="$entry" bs=1 seek=$((off + 4096)) conv=notrunc status=none
	run_t "$WARM" --config "$C/warm.conf" --check "$f"
	[ "$status" -eq 1 ]
	[[ "$output" == *"not in the text cache (its entry's text differs from the file's)"* ]]
	run_t "$WARM" --config "$C/warm.conf" --prune
	[[ "$output" == *"$entry: removed (its text differs from its source's: $f)"* ]]
	[ ! -e "$entry" ]
}

@test "trust 10: overlapping executable segments are refused; the cache does not grow" {
	"$C/dupseg" "$LIB" "$C/pub/dup.so" 8
	chmod 644 "$C/pub/dup.so"
	warm "$(pub ten-first.so)" >/dev/null # the cache mounted
	before=$(used_kb "$C/text")
	run_t "$WARM" --config "$C/warm.conf" "$C/pub/dup.so"
	[ "$status" -eq 3 ]
	[[ "$output" == *"'$C/pub/dup.so': cannot make its text cache entry in '$C/text': laying it out: an executable segment overlaps another loadable segment"* ]]
	[ ! -e "$C/text/$(entry_of "$C/pub/dup.so")" ]
	[ "$(used_kb "$C/text")" -le $((before + 2048)) ]
	# An entry is no bigger than the file's content.
	f=$(pub ten.so)
	warm "$f" >/dev/null
	[ "$(du -k "$C/text/$(entry_of "$f")" | cut -f1)" -le $(($(du -k "$f" | cut -f1) + 4096)) ]
}

@test "trust 11: in a 10 MiB memory cgroup, a 16 MiB text is reported as not fitting, not OOM-killed" {
	warm "$(pub eleven-first.so)" >/dev/null # the cache mounted
	f=$(pub eleven.so)
	cg_make $((10 << 20))
	run_t sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$CG" "$WARM" --config "$C/warm.conf" "$f"
	echo "$output"
	[ "$status" -eq 1 ] # not 137
	[[ "$output" == *"the text cache is full (raise cache-size); not cached, biggest first: $f (16.0 MiB)"* ]]
	[ ! -e "$C/text/$(entry_of "$f")" ]
}

@test "trust 12: under a root umask of 027 the directories tiexec-warm makes are 0755, and users get the cache" {
	mkdir -p "$C/app12"
	cp "$FIXTURES/bl-lld" "$LIB" "$C/app12/"
	chmod -R a+rX "$C/app12"
	printf 'cache %s/um/a/text\n' "$C" >"$C/um.conf"
	run_t sh -c 'umask 027 && exec "$@"' sh "$WARM" --config "$C/um.conf" "$C/app12/libbl-lld.so"
	[ "$status" -eq 0 ]
	[ "$(stat -c %a "$C/um" "$C/um/a" "$C/um/a/text" | sort -u)" = 755 ]
	cp "$TIEXEC" "$C/tiexec"
	chmod 755 "$C/tiexec"
	run_t setpriv --reuid=65534 --regid=65534 --clear-groups env TIEXEC_CACHE="$C/um/a/text" \
		"$C/tiexec" -v "$C/app12/bl-lld" loop 10
	[ "$status" -eq 0 ]
	[[ "$output" == *"(file 0.0, cache 14.0, thp 0.0)"* ]]
}

@test "trust 13: a cache path with a space is found mounted: one mount however many runs" {
	printf 'cache %s/with space/text\n' "$C" >"$C/sp.conf"
	f=$(pub sp.so)
	for _ in 1 2 3; do
		run_t "$WARM" --config "$C/sp.conf" "$f"
		[ "$status" -eq 0 ]
	done
	[ "$(findmnt -rn -o TARGET | grep -c "^$C/with\\\\x20space/text$")" -eq 1 ]
}

@test "trust 14: an entry made from a relative path records its absolute path, and --prune keeps it" {
	f=$(pub rel.so)
	run_t sh -c 'cd "$0/pub" && exec "$@"' "$C" "$WARM" --config "$C/warm.conf" ./rel.so
	[ "$status" -eq 0 ]
	entry=$C/text/$(entry_of "$f")
	[ "$(cat "$entry.source")" = "$f" ]
	run_t "$WARM" --config "$C/warm.conf" --prune
	[[ "$output" != *"$entry"* ]]
	[ -e "$entry" ]
}
