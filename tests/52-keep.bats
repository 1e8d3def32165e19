#!/usr/bin/env bats
# tiexec-keep: a list of programs kept stamped.  Files no package owns are
# stamped in place (and again when replaced); a file a Debian package owns is
# diverted and replaced by a stamped copy, with dpkg --verify clean, made
# again after an upgrade and given back by remove.  The dpkg cases run in a
# private mount namespace with overlays over /usr and /var (a test package
# installed there): the machine's packages and dpkg database never change.
# The trigger and a real Debian server package: tests/95-package.bats.
bats_require_minimum_version 1.5.0
load test_helper

setup() {
	KEEP=$BUILD/packaging/tiexec-keep
	T=$BATS_TEST_TMPDIR
	export TIEXEC_KEEP_LIST=$T/keep.list TIEXEC_STAMP=$BUILD/stamp/tiexec-stamp
}

stamped() {
	"$TIEXEC_STAMP" --check "$1" >/dev/null
}

@test "a file no package owns: stamped in place, again after it was replaced, unstamped by remove" {
	cp "$FIXTURES/bigtext-pie" "$T/server"
	run "$KEEP" add --strategy=thp "$T/server"
	[ "$status" -eq 0 ]
	same "$T/server: stamped in place (no package owns it)" "$output"
	same "$T/server --strategy=thp" "$(grep -v '^#' "$TIEXEC_KEEP_LIST")"
	same "$T/server: stamped: strategy=thp min-text=default round-out=no lazy=no" "$("$TIEXEC_STAMP" --check "$T/server")"
	run "$KEEP" status
	[ "$status" -eq 0 ]
	same "$T/server: stamped in place" "$output"

	# A vendor's installer puts a new, unstamped file in its place.
	cp "$FIXTURES/bigtext-pie" "$T/server.new"
	mv "$T/server.new" "$T/server"
	run --separate-stderr "$KEEP" status
	[ "$status" -eq 1 ]
	same "tiexec-keep: '$T/server': not stamped: run tiexec-keep sync" "$stderr"
	run "$KEEP" sync
	[ "$status" -eq 0 ]
	stamped "$T/server"
	run "$KEEP" sync --quiet
	[ "$status" -eq 0 ]
	[ -z "$output" ]

	run "$KEEP" remove "$T/server"
	[ "$status" -eq 0 ]
	same "$T/server: stamp removed" "$output"
	cmp "$FIXTURES/bigtext-pie" "$T/server"
	! grep -v '^#' "$TIEXEC_KEEP_LIST" | grep -q . || false
}

@test "what cannot be kept is reported and not listed; the others are done" {
	cp "$FIXTURES/bigtext-pie" "$T/good"
	printf 'text\n' >"$T/text"
	run --separate-stderr "$KEEP" add "$T/text" "$T/missing" "$T/good"
	[ "$status" -eq 1 ]
	same "tiexec-stamp: '$T/text': not an ELF file
tiexec-keep: '$T/missing': not a regular file" "$stderr"
	same "$T/good: stamped in place (no package owns it)" "$output"
	same "$T/good" "$(grep -v '^#' "$TIEXEC_KEEP_LIST")"
	run --separate-stderr "$KEEP" remove "$T/text"
	[ "$status" -eq 1 ]
	same "tiexec-keep: '$T/text': not in $TIEXEC_KEEP_LIST" "$stderr"
}

@test "usage: bad commands and options, --help, --version" {
	run --separate-stderr "$KEEP"
	[ "$status" -eq 2 ]
	[[ "$stderr" == "tiexec-keep: missing command"$'\n'"Usage: tiexec-keep add"* ]]
	run --separate-stderr "$KEEP" add --force /bin/true
	[ "$status" -eq 2 ]
	[[ "$stderr" == "tiexec-keep: unknown option to add: --force"* ]]
	run --separate-stderr "$KEEP" frob
	[ "$status" -eq 2 ]
	run "$KEEP" --help
	[ "$status" -eq 0 ]
	[[ "$output" == "Usage: tiexec-keep add"* ]]
	run "$KEEP" --version
	[[ "$output" =~ ^tiexec-keep\ [0-9]+\.[0-9]+\.[0-9]+$ ]]
}

# in_overlay 'BASH CODE': as root, in a private mount namespace whose /usr
# and /var are overlays (writes go to $T/ov), with $T/deb/*.deb at hand.
in_overlay() {
	[ "$(id -u)" = 0 ] || skip_unsupported "needs root (dpkg in a private mount namespace)"
	command -v dpkg-divert >/dev/null || skip "no dpkg here"
	local d
	for d in usr var; do mkdir -p "$T/ov/$d.up" "$T/ov/$d.work"; done
	run --separate-stderr timeout 120 unshare --mount --propagation private bash -c '
		set -e
		for d in usr var; do
			mount -t overlay overlay -o "lowerdir=/$d,upperdir=$T/ov/$d.up,workdir=$T/ov/$d.work" "/$d" || exit 91
		done
		'"$1"
	echo "status $status"$'\n'"stdout: $output"$'\n'"stderr: $stderr"
	[ "$status" -ne 91 ] || skip_unsupported "cannot mount overlayfs over /usr and /var"
}

# fake_deb VERSION PROG: build $T/deb/keeptest_VERSION.deb holding PROG as
# /usr/lib/tiexec-keeptest/server.
fake_deb() {
	local p=$T/pkg.$1
	mkdir -p "$p/DEBIAN" "$p/usr/lib/tiexec-keeptest" "$T/deb"
	cp "$2" "$p/usr/lib/tiexec-keeptest/server"
	cat >"$p/DEBIAN/control" <<EOF
Package: tiexec-keeptest
Version: $1
Architecture: amd64
Maintainer: tiexec tests <tests@invalid>
Description: a program for tests/52-keep.bats
EOF
	dpkg-deb -b "$p" "$T/deb/keeptest_$1.deb" >/dev/null
}

@test "a file a Debian package owns: diverted and replaced by a stamped copy; upgrade, sync, remove" {
	command -v dpkg-deb >/dev/null || skip "no dpkg here"
	fake_deb 1 "$FIXTURES/bigtext-pie"
	fake_deb 2 "$FIXTURES/bigtext-static"
	export KEEP T
	in_overlay '
		P=/usr/lib/tiexec-keeptest/server
		dpkg -i "$T/deb/keeptest_1.deb" >/dev/null
		"$TIEXEC_STAMP" "$P" 2>&1 | sed "s/^/refused: /" || true
		"$KEEP" add "$P"
		echo "divert: $(dpkg-divert --listpackage "$P") $(dpkg-divert --truename "$P")"
		dpkg --verify tiexec-keeptest && echo "verify clean"
		"$TIEXEC_STAMP" --check "$P"
		"$TIEXEC_STAMP" --remove --dry-run "$P"
		"$KEEP" status
		# An upgrade writes the diverted name; the copy is stale until sync.
		dpkg -i "$T/deb/keeptest_2.deb" >/dev/null
		cmp -s "$P.tiexec-orig" "$FIXTURES/bigtext-static" && echo "upgrade went to the diverted name"
		"$KEEP" status || echo "status $?"
		"$KEEP" sync
		cp "$P" "$T/copy" && "$TIEXEC_STAMP" --remove "$T/copy" && cmp -s "$T/copy" "$FIXTURES/bigtext-static" && echo "the copy is of version 2"
		"$KEEP" status
		"$KEEP" remove "$P"
		echo "divert after remove: $(dpkg-divert --listpackage "$P")"
		cmp -s "$P" "$FIXTURES/bigtext-static" && echo "the package file is back"
		dpkg --verify tiexec-keeptest && echo "verify clean"
		# Kept again, then the package removed: sync drops copy and diversion.
		"$KEEP" add "$P" >/dev/null
		dpkg -r tiexec-keeptest >/dev/null
		"$KEEP" sync
		ls "$P"* 2>/dev/null | wc -l
		echo "divert at the end: $(dpkg-divert --list "$P" | wc -l)"'
	[ "$status" -eq 0 ]
	local P=/usr/lib/tiexec-keeptest/server
	same "refused: tiexec-stamp: '$P': belongs to the Debian package tiexec-keeptest: its next upgrade drops the stamp and dpkg --verify flags the change; use tiexec-keep (a stamped copy that follows upgrades), or --force
$P: stamped copy of $P.tiexec-orig (dpkg-divert)
divert: tiexec $P.tiexec-orig
verify clean
$P: stamped: strategy=auto min-text=default round-out=no lazy=no
$P: would be unstamped
$P: stamped copy of $P.tiexec-orig, up to date
upgrade went to the diverted name
status 1
$P: stamped copy of $P.tiexec-orig, made again (the package changed it)
the copy is of version 2
$P: stamped copy of $P.tiexec-orig, up to date
$P: the package's file is back
divert after remove: 
the package file is back
verify clean
$P: its package removed it: the copy and the diversion are gone
0
divert at the end: 0" "$output"
	# (dpkg -r finds the copy still in the package's directory, and says so.)
	same "tiexec-keep: '$P': the package changed $P.tiexec-orig since the copy was made: run tiexec-keep sync" \
		"$(grep -v "^dpkg: warning: while removing tiexec-keeptest, directory '/usr/lib/tiexec-keeptest' not empty" <<<"$stderr")"
	# Nothing of it outside the namespace.
	[ ! -e "$P" ]
	! dpkg-divert --list | grep -q tiexec-keeptest || false
}

# Root's sync, remove and restore act on the list's paths: a path another
# user could change (an application account owning its directory) is
# refused with the reason, and a symbolic link is never followed, so that
# user cannot point root at a root-owned program to rewrite.
@test "a listed path another user could change, or a link: refused; the file a link names is left alone" {
	[ "$(id -u)" = 0 ] || skip "needs root: another user's directory"
	local d victim
	d=$(mktemp -d /tmp/tiexec-keep.XXXXXX)
	chmod 755 "$d"
	mkdir "$d/app" "$d/root"
	cp "$FIXTURES/bigtext-pie" "$d/app/server"
	chown -R 65534:65534 "$d/app"
	victim=$d/root/prog
	cp "$FIXTURES/bigtext-pie" "$victim"
	echo "$d/app/server" >"$TIEXEC_KEEP_LIST"
	# The account swaps its program for a link to root's.
	setpriv --reuid=65534 --regid=65534 --clear-groups ln -sf "$victim" "$d/app/server"
	local cmd
	for cmd in sync status "remove $d/app/server" restore; do
		cp "$FIXTURES/bigtext-pie" "$victim"
		[ "$cmd" = sync ] || "$TIEXEC_STAMP" "$victim" >/dev/null
		cp "$victim" "$T/before"
		echo "$d/app/server" >"$TIEXEC_KEEP_LIST"
		# shellcheck disable=SC2086 # the command and its argument
		run --separate-stderr "$KEEP" $cmd
		echo "$cmd: $status: $stderr"
		[ "$status" -eq 1 ]
		cmp "$T/before" "$victim"
	done
	run --separate-stderr "$KEEP" sync
	[[ "$stderr" == "tiexec-stamp: '$d/app/server': a symbolic link: with --root-only, name the file itself" ]]
	# A file of root's, no link, in the account's directory: refused all the
	# same (the account could swap it at any time), with who could.
	rm "$d/app/server"
	cp "$FIXTURES/bigtext-pie" "$d/app/server"
	run --separate-stderr "$KEEP" add "$d/app/server"
	[ "$status" -eq 1 ]
	same "tiexec-stamp: '$d/app/server': '$d/app' is owned by uid 65534, not only by root: refused (--root-only)" "$stderr"
	run "$TIEXEC_STAMP" --check "$d/app/server"
	[ "$status" -eq 1 ]
	# Root's own link, in root's directory: not followed either.
	ln -s "$victim" "$d/root/link"
	run --separate-stderr "$KEEP" add "$d/root/link"
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"'$d/root/link': a symbolic link"* ]]
	rm -rf "$d"
}
