# The distribution packages: built by scripts/package (reused from build/pkg
# when newer than every source file), checked with lintian, the RPM's file
# list against the .deb's, and then installed on this machine with apt-get:
# the rule is registered, a stamped program started by path runs through the
# packaged loader on huge pages and tiexec-stat shows it; apt-get purge
# removes the rule and every file, and the program runs plainly again; an
# upgrade leaves a running stamped program alone.  The RPMs are installed
# and erased in private namespaces (overlay /usr, own binfmt_misc).
#
# This is the one test that touches the machine's own binfmt_misc and
# packages.  It refuses to start if tiexec is already installed or
# registered, and its teardown puts back what it found however the test
# ends: purges the packages it installed, removes the tiexec rule, and
# unmounts binfmt_misc if it mounted it.  Needs root.
bats_require_minimum_version 1.5.0
load test_helper

BINFMT=/proc/sys/fs/binfmt_misc
PKG=$ROOT/build/pkg

# present PKG: dpkg knows PKG in any state but "not installed".
present() {
	local s
	s=$(dpkg-query -W -f='${db:Status-Abbrev}' "$1" 2>/dev/null) || return 1
	[ -n "$s" ] && [ "${s:1:1}" != n ]
}

# sources_newer_than FILE: a source file (not build/, not .git) is newer.
sources_newer_than() {
	[ -n "$(find "$ROOT" \( -path "$ROOT/build" -o -path "$ROOT/.git" \) -prune -o \
		-type f -newer "$1" -print -quit)" ]
}

setup_file() {
	[ "$(id -u)" = 0 ] || return 0
	local deb rpm trace
	deb=$(ls "$PKG"/tiexec_*_amd64.deb 2>/dev/null | head -n1)
	rpm=$(ls "$PKG"/tiexec-[0-9]*.x86_64.rpm 2>/dev/null | head -n1)
	# Both packages of each kind (not a TIEXEC_PKG_NOBPF=1 build).
	trace=$(ls "$PKG"/tiexec-trace_*_amd64.deb "$PKG"/tiexec-trace-[0-9]*.x86_64.rpm 2>/dev/null | wc -l)
	if [ -z "$deb" ] || [ -z "$rpm" ] || [ "$trace" -ne 2 ] ||
		sources_newer_than "$deb" || sources_newer_than "$rpm"; then
		# The unit tests ran already (scripts/test): nocheck.
		DEB_BUILD_OPTIONS=nocheck "$ROOT/scripts/package" all >"$BATS_FILE_TMPDIR/package.log" 2>&1 || {
			cat "$BATS_FILE_TMPDIR/package.log" >&2
			return 1
		}
	fi
}

setup() {
	[ "$(id -u)" = 0 ] || skip_unsupported "needs root (installs packages, registers binfmt_misc rules)"
	DEB=$(ls "$PKG"/tiexec_*_amd64.deb)
	TRACE_DEB=$(ls "$PKG"/tiexec-trace_*_amd64.deb 2>/dev/null || true)
	STATE=$BATS_TEST_TMPDIR/state
	mkdir -p "$STATE"
	CPID=
	PGDIR=
}

# Everything the install test changed goes back, whatever happened.
teardown() {
	if [ -n "${HOLD:-}" ]; then
		kill "$HOLD" 2>/dev/null || true
		wait "$HOLD" 2>/dev/null || true
	fi
	if [ -n "${CPID:-}" ]; then
		kill "$CPID" 2>/dev/null || true
		wait "$CPID" 2>/dev/null || true
	fi
	[ -n "${STATE:-}" ] && [ -e "$STATE/touched" ] || return 0
	export DEBIAN_FRONTEND=noninteractive
	local p
	for p in tiexec-trace tiexec; do
		if present "$p"; then
			apt-get -o DPkg::Lock::Timeout=300 purge -y -qq "$p" >/dev/null 2>&1 || dpkg --purge --force-all "$p" >/dev/null 2>&1 || true
		fi
	done
	# The distribution-packaged server: stopped, its package's file back.
	if [ -n "${PGDIR:-}" ] && [ -e "$PGDIR/data/postmaster.pid" ]; then
		runuser -u postgres -- "$PGBIN/pg_ctl" -D "$PGDIR/data" -m immediate stop >/dev/null 2>&1 || true
	fi
	[ -z "${PGDIR:-}" ] || rm -rf "$PGDIR"
	local d
	for d in $(dpkg-divert --list 2>/dev/null | awk '$NF == "tiexec" { print $3 }'); do
		rm -f "$d"
		dpkg-divert --quiet --package tiexec --rename --remove "$d" || true
	done
	# The rule, whoever left it (the package's prerm should have).
	if [ -e "$BINFMT/tiexec" ]; then
		echo -1 >"$BINFMT/tiexec" || true
	fi
	[ -e /var/lib/binfmts/tiexec ] && update-binfmts --package tiexec --unimport tiexec >/dev/null 2>&1 || true
	if [ -e "$STATE/run-tiexec" ]; then
		umount /run/tiexec/text 2>/dev/null || true
		rm -rf /run/tiexec
	fi
	# Unmount only what we mounted, and only after the rule is gone (rules
	# outlive an unmount of the root namespace's binfmt_misc).
	if [ -e "$STATE/mounted" ] && mountpoint -q "$BINFMT"; then
		umount "$BINFMT" || true
	fi
}

# deb_files DEB...: the files and links of the packages (no directories),
# with the man pages' .gz dropped, without /usr/share/doc (per distribution)
# and /usr/share/lintian (Debian's).
deb_files() {
	local d
	for d in "$@"; do dpkg-deb -c "$d"; done |
		awk '$1 !~ /^d/ { print $6 }' | sed -e 's|^\./|/|' -e 's|^\(/usr/share/man/.*\)\.gz$|\1|' |
		grep -Ev '^/usr/share/(doc|lintian)/' | sort
}

# rpm_files RPM...: the same for RPM packages (%doc and %license live in
# /usr/share/doc/NAME-VERSION and /usr/share/licenses there).
rpm_files() {
	rpm -qp --qf '[%{FILEMODES:perms} %{FILENAMES}\n]' "$@" 2>/dev/null |
		awk '$1 !~ /^d/ { print $2 }' | sed -e 's|^\(/usr/share/man/.*\)\.gz$|\1|' |
		grep -Ev '^/usr/share/(doc|licenses)/' | sort
}

@test "lintian: no errors, no warnings that are not overridden" {
	run lintian --fail-on error,warning -EvIL +pedantic --tag-display-limit 0 "$PKG"/*.deb
	echo "$output"
	[ "$status" -eq 0 ]
	if grep -E '^[EW]: ' <<<"$output"; then return 1; fi
}

# The Debian build installs its units where tiexec.install says, also on a
# build machine without systemd.pc (#55: a cross build's had none, and
# dh_install stopped on lib/systemd/system/... missing).  Configured as
# debian/rules configures it, with every .pc file but systemd's.
@test "the units go where tiexec.install names them, with or without systemd.pc" {
	local pc=$BATS_TEST_TMPDIR/pc args f
	mkdir "$pc"
	for f in $(pkg-config --variable pc_path pkg-config | tr : ' '); do
		[ -d "$f" ] && find "$f" -maxdepth 1 -name '*.pc' ! -name 'systemd.pc' -exec ln -sf {} "$pc/" \;
	done
	! PKG_CONFIG_LIBDIR=$pc pkg-config --exists systemd || false
	args=$(sed -n 's/^\tdh_auto_configure -- //p' "$ROOT/packaging/debian/rules" | sed 's/\$(BPF)/disabled/')
	[[ "$args" == *-Dsystemdunitdir=* ]]
	# shellcheck disable=SC2086 # the rules' words
	PKG_CONFIG_LIBDIR=$pc meson setup --prefix=/usr $args -Dman=disabled "$BATS_TEST_TMPDIR/b" "$ROOT" >/dev/null
	meson introspect --installed "$BATS_TEST_TMPDIR/b" >"$BATS_TEST_TMPDIR/installed.json"
	local unit n=0
	for unit in $(grep '^usr/lib/systemd/system/' "$ROOT/packaging/debian/tiexec.install"); do
		grep -qF "\"/$unit\"" "$BATS_TEST_TMPDIR/installed.json"
		n=$((n + 1))
	done
	[ "$n" -eq 5 ]
}

# One place for the units, whichever Debian built the packages: Debian 12's
# debhelper put them in /lib/systemd/system, a directory no package of
# Debian 13 owns, so purging there warned "directory '/lib/systemd/system'
# not empty" (#55).  Its dh_installsystemd finds units only there; the
# scripts it writes must still enable the timers and the service.
@test "the .debs hold their units in /usr/lib/systemd/system only, and their scripts enable them" {
	local d units
	for d in "$PKG"/tiexec_*_amd64.deb "$PKG"/tiexec-trace_*_amd64.deb; do
		[ -e "$d" ] || continue
		if dpkg-deb -c "$d" | awk '{ print $6 }' | grep '^\./lib/'; then return 1; fi
	done
	units=$(dpkg-deb -c "$PKG"/tiexec_*_amd64.deb | awk '{ print $6 }' | sed -n 's|^\./usr/lib/systemd/system/\(.\)|\1|p' | sort | tr '\n' ' ')
	same "run-tiexec-text.mount tiexec-metrics.service tiexec-metrics.timer tiexec-warm.service tiexec-warm.timer " "$units"
	dpkg-deb -I "$PKG"/tiexec_*_amd64.deb postinst >"$BATS_TEST_TMPDIR/postinst"
	grep -q "deb-systemd-helper enable 'tiexec-warm.timer'" "$BATS_TEST_TMPDIR/postinst"
	grep -q "deb-systemd-helper enable 'tiexec-metrics.timer'" "$BATS_TEST_TMPDIR/postinst"
	grep -q "deb-systemd-helper enable 'tiexec-warm.service'" "$BATS_TEST_TMPDIR/postinst"
	# tiexec-metrics.service is run by its timer, never enabled.
	! grep -q "deb-systemd-helper enable 'tiexec-metrics.service'" "$BATS_TEST_TMPDIR/postinst" || false
}

@test "the RPMs hold the same files as the .debs" {
	local debs rpms
	debs=$(deb_files "$PKG"/tiexec_*_amd64.deb "$PKG"/tiexec-trace_*_amd64.deb)
	rpms=$(rpm_files "$PKG"/tiexec-[0-9]*.x86_64.rpm "$PKG"/tiexec-trace-[0-9]*.x86_64.rpm)
	[ -n "$debs" ]
	same "$debs" "$rpms"
	# And what the issue asks for is there.
	for f in /usr/libexec/tiexec/tiexec /usr/bin/tiexec /usr/bin/tiexec-stamp /usr/bin/tiexec-stat \
		/usr/sbin/tiexec-binfmt /usr/sbin/tiexec-trace /usr/lib/binfmt.d/tiexec.conf \
		/usr/share/binfmts/tiexec /usr/share/man/man1/tiexec.1 /usr/share/man/man1/tiexec-stamp.1 \
		/usr/share/man/man1/tiexec-stat.1 /usr/share/man/man8/tiexec-binfmt.8 \
		/usr/share/man/man8/tiexec-trace.8 /etc/gdb/gdbinit.d/tiexec.py; do
		grep -qx "$f" <<<"$debs" || { echo "missing: $f"; return 1; }
	done
	dpkg-deb -c "$DEB" | grep -q '^l.* \./usr/bin/tiexec -> \.\./libexec/tiexec/tiexec$'
	dpkg-deb -c "$DEB" | grep -q ' \./usr/share/doc/tiexec/copyright$'
	dpkg-deb -c "$DEB" | grep -q ' \./usr/share/doc/tiexec/README.md'
	dpkg-deb -c "$DEB" | grep -q ' \./usr/share/doc/tiexec/operators.md'
	dpkg-deb -c "$DEB" | grep -q ' \./usr/share/doc/tiexec/reference.md'
}

@test "the binfmt-support format file is the binfmt.d rule" {
	local rule fmt
	rule=$(grep '^:tiexec:' "$BUILD/packaging/binfmt.d/tiexec.conf")
	fmt=$BUILD/packaging/binfmts/tiexec
	IFS=: read -r _ name type offset magic mask interp flags <<<"$rule"
	[ "$name" = tiexec ]
	[ "$type" = M ]
	[ "$flags" = POF ]
	same "package tiexec
interpreter $interp
magic $magic
offset $offset
mask $mask
credentials no
preserve yes
fix_binary yes" "$(grep -v '^#' "$fmt")"
}

# take_machine: refuse a machine that has tiexec already; from here on the
# teardown restores; mount binfmt_misc if it is not.
# take_machine [leave-mount]: refuses a machine with tiexec on it; mounts
# binfmt_misc where it is not, unless asked to leave that to the package
# (teardown unmounts it all the same).
take_machine() {
	export DEBIAN_FRONTEND=noninteractive
	if present tiexec || present tiexec-trace || [ -e "$BINFMT/tiexec" ]; then
		skip_unsupported "tiexec is already installed or registered on this machine"
	fi
	touch "$STATE/touched"
	if ! mountpoint -q "$BINFMT"; then
		[ "${1:-}" = leave-mount ] || mount -t binfmt_misc binfmt_misc "$BINFMT"
		touch "$STATE/mounted"
	fi
}

# start_waiting PROG: runs `PROG wait` as a coprocess (pid in $CPID) until it
# says "ready".
start_waiting() {
	coproc P { exec "$1" wait 3>&-; }
	CPID=$P_PID
	local ready=
	read -r -t 60 ready <&"${P[0]}" || true
	[ "$ready" = ready ] || { echo "no 'ready' from $1"; return 1; }
}

# stop_waiting: EOF on its stdin; it exits 0.
stop_waiting() {
	exec {P[1]}>&-
	wait "$CPID"
	CPID=
	PGDIR=
}

@test "apt-get install registers the rule, stamped programs run on huge pages; purge removes it all" {
	take_machine leave-mount
	local own_mount=
	mountpoint -q "$BINFMT" || own_mount=1
	# Which way the postinst registers: systemd-binfmt (POF), binfmt-support
	# (its format file cannot say O: PF), else tiexec-binfmt (POF).
	local flags=POF
	if [ ! -d /run/systemd/system ] && command -v update-binfmts >/dev/null; then
		flags=PF
	fi

	# Directories that exist before: the packages must not remove them, and
	# must remove the others they create.
	local pkgs=("$DEB") f d
	[ -n "$TRACE_DEB" ] && pkgs+=("$TRACE_DEB")
	for d in "${pkgs[@]}"; do dpkg-deb -c "$d"; done | awk '$1 ~ /^d/ { print $6 }' |
		sed -e 's|^\./|/|' -e 's|/$||' | while read -r f; do
		[ -z "$f" ] || [ -d "$f" ] || echo "$f"
	done >"$STATE/new-dirs"
	for d in "${pkgs[@]}"; do dpkg-deb -c "$d"; done | awk '$1 !~ /^d/ { print $6 }' |
		sed 's|^\./|/|' >"$STATE/files"

	# Without systemd: an empty /run/tiexec/text that was there before,
	# which purge must leave (the text cache is mounted on it below).
	local cached=
	if [ ! -e /run/tiexec ] && [ ! -d /run/systemd/system ] && [ -x "$FIXTURES/bl-lld" ]; then
		cached=1
		mkdir -m 755 /run/tiexec /run/tiexec/text
		touch "$STATE/run-tiexec"
	fi

	run apt-get -o DPkg::Lock::Timeout=300 install -y "${pkgs[@]}"
	echo "$output"
	[ "$status" -eq 0 ]

	# The rule: the packaged loader, the expected flags.
	[ -e "$BINFMT/tiexec" ]
	grep -qx enabled "$BINFMT/tiexec"
	grep -qx 'interpreter /usr/libexec/tiexec/tiexec' "$BINFMT/tiexec"
	grep -qx "flags: $flags" "$BINFMT/tiexec"
	while read -r f; do [ -e "$f" ] || [ -L "$f" ] || { echo "not installed: $f"; return 1; }; done <"$STATE/files"
	[ "$(readlink -f /usr/bin/tiexec)" = /usr/libexec/tiexec/tiexec ]
	/usr/bin/tiexec --version
	man -w tiexec tiexec-stamp tiexec-stat tiexec-warm tiexec-binfmt >/dev/null
	# tiexec-warm: its units installed and enabled, its list empty, and
	# the machine answers "warm" (nothing listed).
	[ -e /usr/lib/systemd/system/tiexec-warm.service ]
	[ -e /usr/lib/systemd/system/tiexec-warm.timer ]
	[ -e /etc/systemd/system/multi-user.target.wants/tiexec-warm.service ]
	[ -e /etc/systemd/system/timers.target.wants/tiexec-warm.timer ]
	# The metrics for node_exporter: the timer enabled, its service run only
	# where node_exporter's textfile directory is.
	[ -e /etc/systemd/system/timers.target.wants/tiexec-metrics.timer ]
	grep -qx 'ConditionPathIsDirectory=/var/lib/prometheus/node-exporter' /usr/lib/systemd/system/tiexec-metrics.service
	grep -q '^ExecStart=/usr/bin/tiexec-stat --prometheus --output /var/lib/prometheus/node-exporter/tiexec.prom$' /usr/lib/systemd/system/tiexec-metrics.service
	! grep -v '^#' /etc/tiexec/warm.conf | grep -q . || false
	/usr/bin/tiexec-warm --check
	/usr/bin/tiexec-warm --check --config /etc/tiexec/warm.conf
	# The text cache's mount unit is shipped; without systemd (here, when
	# it does not run) tiexec-warm mounts the cache itself, and the loader
	# maps an lld library's text from it.  Purge unmounts it.
	[ -e /usr/lib/systemd/system/run-tiexec-text.mount ]
	grep -q '^Requires=run-tiexec-text.mount' /usr/lib/systemd/system/tiexec-warm.service
	if [ -n "$cached" ]; then
		# Where everyone may read them, as a file must be to get an entry.
		local fx
		fx=$(mktemp -d /run/tiexec-pkg-fx.XXXXXX)
		chmod 755 "$fx"
		cp "$FIXTURES/bl-lld" "$FIXTURES/libbl-lld.so" "$fx/"
		chmod a+rX "$fx"/*
		run env -u TIEXEC_CACHE /usr/bin/tiexec-warm "$fx/libbl-lld.so"
		echo "$output"
		[ "$status" -eq 0 ] || { rm -rf "$fx"; false; }
		[[ "$output" == *"in the text cache (made now"* ]] || { rm -rf "$fx"; false; }
		mountpoint -q /run/tiexec/text
		run --separate-stderr env -u TIEXEC_CACHE TIEXEC_VERBOSE=1 /usr/bin/tiexec "$fx/bl-lld" loop 1000
		echo "$stderr"
		[ "$status" -eq 0 ] || { rm -rf "$fx"; false; }
		[[ "$stderr" == *"(file 0.0, cache 14.0, thp 0.0)"* ]] || { rm -rf "$fx"; false; }
		# One that maps the entry through the purge (below): the cache is
		# detached, its memory freed when it exits, not at the next boot.
		mkfifo "$STATE/hold"
		env -u TIEXEC_CACHE /usr/bin/tiexec "$fx/bl-lld" wait <"$STATE/hold" >/dev/null 2>&1 &
		HOLD=$!
		exec {HOLDFD}>"$STATE/hold"
		for _ in $(seq 100); do grep -q ' /run/tiexec/text/' "/proc/$HOLD/maps" && break; sleep 0.1; done
		grep -q ' /run/tiexec/text/' "/proc/$HOLD/maps"
	fi
	# The recorder's unit is installed, not enabled.
	if [ -n "$TRACE_DEB" ]; then
		[ -e /usr/lib/systemd/system/tiexec-trace.service ]
		[ ! -e /etc/systemd/system/multi-user.target.wants/tiexec-trace.service ]
	fi

	# A stamped program, started by path, goes through the packaged loader.
	local w=$BATS_TEST_TMPDIR/w
	mkdir "$w"
	cp "$FIXTURES/bigtext-pie" "$w/big"
	/usr/bin/tiexec-stamp "$w/big"
	run --separate-stderr env TIEXEC_VERBOSE=1 "$w/big" report
	echo "$output"
	echo "stderr: $stderr"
	[ "$status" -eq 0 ]
	[[ "$stderr" =~ ^"tiexec: '$w/big': "[1-9][0-9.]*" of "[0-9.]+" MiB text on 2 MiB pages" ]]
	grep -Eq '^map .* (file_pmd_kb|anon_huge_kb)=[1-9][0-9]* .*/big$' <<<"$output"

	# tiexec-stat sees its text on huge pages.
	start_waiting "$w/big"
	run /usr/bin/tiexec-stat "$CPID"
	echo "$output"
	[ "$status" -eq 0 ]
	grep -Eq "^PID $CPID " <<<"$output"
	awk '$1 == "total" { exit !($3 > 0) }' <<<"$output"
	stop_waiting

	# What the package's services would leave: the metrics file for
	# node_exporter, tiexec-trace's counters.
	local prom=/var/lib/prometheus/node-exporter/tiexec.prom made_prom=
	if [ -d "${prom%/*}" ] && [ ! -e "$prom" ]; then
		made_prom=1
		/usr/bin/tiexec-stat --prometheus --output "$prom"
	fi
	[ -z "$TRACE_DEB" ] || { [ -d /run/tiexec ] || mkdir -m 755 /run/tiexec; : >/run/tiexec/trace.counters; }
	# An ordinary user's process through the loader (its exe link names
	# the loader): purge names it.
	local ud
	ud=$(mktemp -d /tmp/tiexec-pkg-user.XXXXXX)
	chmod 755 "$ud"
	# Its name holds an escape sequence (a process names itself: comm),
	# which purge shows as '?' and never sends to the terminal.
	local esc=$'b\e[2Jig'
	cp "$w/big" "$ud/$esc"
	chmod 755 "$ud/$esc"
	coproc U { exec setpriv --reuid=65534 --regid=65534 --clear-groups "$ud/$esc" wait 3>&-; }
	CPID=$U_PID
	local ready=
	read -r -t 60 ready <&"${U[0]}" || true
	[ "$ready" = ready ]
	[ "$(readlink "/proc/$CPID/exe")" = /usr/libexec/tiexec/tiexec ]

	# Purge: the rule, every file and the new directories go.
	local purge=(tiexec)
	[ -n "$TRACE_DEB" ] && purge=(tiexec-trace tiexec)
	run --separate-stderr apt-get -o DPkg::Lock::Timeout=300 purge -y "${purge[@]}"
	echo "$output"
	echo "stderr: $stderr"
	[ "$status" -eq 0 ]
	# (dpkg may pass the scripts' stderr on as output.)
	[[ "$output$stderr" == *"tiexec: these processes still run through the removed loader; restart them to run plainly: $CPID (b?[2Jig)"* ]]
	[[ "$output$stderr" != *$'\e'* ]]
	[[ "$output$stderr" != *"dpkg: warning"* ]]
	exec {U[1]}>&-
	wait "$CPID" || true
	CPID=
	rm -rf "$ud"
	[ -z "$made_prom" ] || [ ! -e "$prom" ]
	[ ! -e /run/tiexec/trace.counters ]
	# binfmt_misc: unmounted where the package mounted it.
	[ -z "$own_mount" ] || ! mountpoint -q "$BINFMT" || false
	[ ! -e "$BINFMT/tiexec" ]
	[ ! -e /var/lib/binfmts/tiexec ]
	while read -r f; do
		if [ -e "$f" ] || [ -L "$f" ]; then echo "left behind: $f"; return 1; fi
	done <"$STATE/files"
	while read -r f; do
		if [ -e "$f" ]; then echo "directory left behind: $f"; return 1; fi
	done <"$STATE/new-dirs"
	if present tiexec || present tiexec-trace; then echo "still known to dpkg"; return 1; fi
	if [ -n "$cached" ]; then
		# Detached while a process mapped an entry, said; that process
		# runs on and exits as usual.  The directories that were there
		# before stay.
		[[ "$output$stderr" == *"tiexec: /run/tiexec/text is still mapped by running processes: detached; its memory is freed when they exit"* ]]
		! mountpoint -q /run/tiexec/text || false
		kill -0 "$HOLD"
		exec {HOLDFD}>&-
		wait "$HOLD"
		HOLD=
		rm -rf "$fx"
		[ -d /run/tiexec/text ]
		[ ! -e /run/tiexec/kept ]
		rmdir /run/tiexec/text /run/tiexec
		rm -f "$STATE/run-tiexec"
	fi

	# The stamped program runs plainly again.
	run --separate-stderr env TIEXEC_VERBOSE=1 "$w/big" report
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	grep -q '^text_begin ' <<<"$output"
}

@test "upgrading while a stamped program runs: it keeps running, the rule stays" {
	take_machine
	# The next version: the same files under a higher version number (dpkg
	# still replaces every file, as a real upgrade does).
	local t=$BATS_TEST_TMPDIR
	dpkg-deb -R "$DEB" "$t/next"
	sed -i 's/^Version: .*/&+next1/' "$t/next/DEBIAN/control"
	dpkg-deb -b "$t/next" "$t/tiexec_next_amd64.deb" >/dev/null
	# No maintainer script names the text cache's mount unit (#55 item
	# 4): debhelper stopped it in the preinst of every upgrade under
	# systemd, and a mount's stop or restart is an unmount that empties
	# the cache.
	! grep -ls 'run-tiexec-text' "$t/next/DEBIAN/preinst" "$t/next/DEBIAN/postinst" "$t/next/DEBIAN/prerm" \
		"$t/next/DEBIAN/postrm" || false

	# The version before it has its units in /lib/systemd/system, as
	# packages built by Debian 12 had until #55: the upgrade moves them to
	# /usr/lib, which on a merged /usr is the same file, and must keep them.
	dpkg-deb -R "$DEB" "$t/prev"
	mkdir -p "$t/prev/lib/systemd"
	mv "$t/prev/usr/lib/systemd/system" "$t/prev/lib/systemd/system"
	rmdir "$t/prev/usr/lib/systemd"
	sed -i 's|  usr/lib/systemd/system/|  lib/systemd/system/|' "$t/prev/DEBIAN/md5sums"
	dpkg-deb -b "$t/prev" "$t/tiexec_prev_amd64.deb" >/dev/null

	run apt-get -o DPkg::Lock::Timeout=300 install -y "$t/tiexec_prev_amd64.deb"
	[ "$status" -eq 0 ]
	cp "$FIXTURES/bigtext-pie" "$t/big"
	/usr/bin/tiexec-stamp "$t/big"
	TIEXEC_VERBOSE=1 start_waiting "$t/big"
	run /usr/bin/tiexec-stat "$CPID"
	awk '$1 == "total" { exit !($3 > 0) }' <<<"$output"
	local old_ino
	old_ino=$(stat -c %i /usr/libexec/tiexec/tiexec)

	run apt-get -o DPkg::Lock::Timeout=300 install -y "$t/tiexec_next_amd64.deb"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$(dpkg-query -W -f='${Version}' tiexec)" == *+next1 ]]
	# A new file, and the rule still there.
	[ "$(stat -c %i /usr/libexec/tiexec/tiexec)" != "$old_ino" ]
	grep -qx enabled "$BINFMT/tiexec"
	grep -qx 'interpreter /usr/libexec/tiexec/tiexec' "$BINFMT/tiexec"
	local u
	for u in run-tiexec-text.mount tiexec-metrics.service tiexec-metrics.timer tiexec-warm.service tiexec-warm.timer; do
		[ -f "/usr/lib/systemd/system/$u" ] || { echo "lost in the upgrade: $u"; return 1; }
	done
	[ -e /etc/systemd/system/timers.target.wants/tiexec-warm.timer ]
	[ -z "$(dpkg --verify tiexec)" ] || { dpkg --verify tiexec; return 1; }
	# The running program is unaffected and ends normally.
	kill -0 "$CPID"
	run /usr/bin/tiexec-stat "$CPID"
	awk '$1 == "total" { exit !($3 > 0) }' <<<"$output"
	stop_waiting
	# New starts go through tiexec (which inode the kernel pinned is not
	# visible from user space; the postinst registered the rule again).
	run --separate-stderr env TIEXEC_VERBOSE=1 "$t/big" report
	[ "$status" -eq 0 ]
	[[ "$stderr" == "tiexec: '$t/big': "*" MiB text on 2 MiB pages"* ]]
}

@test "the postinst says what registers the rule at boot; loader.conf's capability survives a reinstall" {
	take_machine
	run apt-get -o DPkg::Lock::Timeout=300 install -y "$DEB"
	echo "$output"
	[ "$status" -eq 0 ]
	# This machine: what will register it at boot, said as it is.
	local boot
	if [ -d /run/systemd/system ]; then
		boot="systemd-binfmt registers it at every boot"
	elif command -v update-binfmts >/dev/null; then
		boot="binfmt-support registers it at every boot, with flags PF"
	else
		boot="nothing on this host registers it at boot (no systemd, no binfmt-support): run 'tiexec-binfmt register' from its boot scripts"
	fi
	grep -qF "tiexec: the rule for stamped programs is registered (" <<<"$output"
	grep -qF "$boot" <<<"$output"
	[ -z "$(getcap /usr/libexec/tiexec/tiexec)" ]

	# The opt-in as a setting: applied now, and again after a reinstall
	# (which writes a new loader file, without the capability).
	sed -i 's/^capability none$/capability cap_checkpoint_restore/' /etc/tiexec/loader.conf
	run dpkg-reconfigure tiexec
	echo "$output"
	[ "$status" -eq 0 ]
	getcap /usr/libexec/tiexec/tiexec | grep -q 'cap_checkpoint_restore=ep'
	local ino
	ino=$(stat -c %i /usr/libexec/tiexec/tiexec)
	run apt-get -o DPkg::Lock::Timeout=300 install -y --reinstall "$DEB"
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(stat -c %i /usr/libexec/tiexec/tiexec)" != "$ino" ]
	getcap /usr/libexec/tiexec/tiexec | grep -q 'cap_checkpoint_restore=ep'
	# Taken back with "none": gone at the next dpkg-reconfigure, which
	# keeps the loader's file (#55: loader-conf stopped early on none).
	sed -i 's/^capability .*/capability none/' /etc/tiexec/loader.conf
	run dpkg-reconfigure tiexec
	echo "$output"
	[ "$status" -eq 0 ]
	[ -z "$(getcap /usr/libexec/tiexec/tiexec)" ]
	# A value it does not know: said, and nothing given.
	sed -i 's/^capability .*/capability cap_sys_admin/' /etc/tiexec/loader.conf
	run apt-get -o DPkg::Lock::Timeout=300 install -y --reinstall "$DEB"
	grep -qF "capability 'cap_sys_admin' is not none, cap_checkpoint_restore or cap_sys_resource: ignored" <<<"$output"
	[ -z "$(getcap /usr/libexec/tiexec/tiexec)" ]
}

# "apt remove" keeps the configuration; installing again then passes the
# old version to the postinst, as an upgrade does.  It starts from a machine
# without the package all the same, so what was there before it is
# recorded (package-state mark) and the removal leaves that alone: here the
# administrator's own /run/tiexec/text.
@test "installing again after 'apt remove' records what was there before; the next removal leaves it" {
	take_machine
	[ ! -e /run/tiexec ] || skip "/run/tiexec exists already on this machine"
	run apt-get -o DPkg::Lock::Timeout=300 install -y "$DEB"
	[ "$status" -eq 0 ]
	run apt-get -o DPkg::Lock::Timeout=300 remove -y tiexec
	[ "$status" -eq 0 ]
	[ "$(dpkg-query -W -f='${db:Status-Abbrev}' tiexec)" = "rc " ]
	[ ! -e /run/tiexec ]
	mkdir -m 755 /run/tiexec /run/tiexec/text
	touch "$STATE/run-tiexec"
	run apt-get -o DPkg::Lock::Timeout=300 install -y "$DEB"
	echo "$output"
	[ "$status" -eq 0 ]
	grep -qx text-dir /run/tiexec/kept
	[ ! -e /run/tiexec.fresh ]
	run apt-get -o DPkg::Lock::Timeout=300 remove -y tiexec
	[ "$status" -eq 0 ]
	[ -d /run/tiexec/text ]
	rmdir /run/tiexec/text /run/tiexec
	rm -f "$STATE/run-tiexec"
}

# pg_up: a throwaway cluster of the packaged postgres, as user postgres,
# on a unix socket in $PGDIR; prints the postmaster's PID.
pg_up() {
	runuser -u postgres -- "$PGBIN/pg_ctl" -D "$PGDIR/data" -l "$PGDIR/log" -w \
		-o "-k $PGDIR -c listen_addresses=''" start >/dev/null || { cat "$PGDIR/log"; return 1; }
	runuser -u postgres -- "$PGBIN/psql" -h "$PGDIR" -d postgres -Atc 'select 42' | grep -qx 42
	head -n 1 "$PGDIR/data/postmaster.pid"
}

pg_down() {
	runuser -u postgres -- "$PGBIN/pg_ctl" -D "$PGDIR/data" -w stop >/dev/null
}

# huge_mib PID: MiB of the program's own text on 2 MiB pages (tiexec-stat).
huge_mib() {
	/usr/bin/tiexec-stat "$1" | awk '$1 == "total" { print $3 }'
}

@test "a distribution-packaged server (postgresql): kept stamped through its upgrade, given back at purge" {
	PGBIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
	[ -x "$PGBIN/postgres" ] || skip_unsupported "no postgresql server package (scripts/test installs it)"
	local pkg P=$PGBIN/postgres pid before
	pkg=$(dpkg-query -S "$P" | sed -n 's/: .*//p' | head -n 1)
	take_machine
	run apt-get -o DPkg::Lock::Timeout=300 install -y "$DEB"
	[ "$status" -eq 0 ]

	run tiexec-keep add "$P"
	echo "$output"
	[ "$status" -eq 0 ]
	same "$P: stamped copy of $P.tiexec-orig (dpkg-divert)" "$output"
	dpkg --verify "$pkg"
	/usr/bin/tiexec-stamp --check "$P"

	# initdb and pg_ctl run the postgres next to them: through the rule.
	PGDIR=$(mktemp -d /tmp/tiexec-pg.XXXXXX)
	chmod 755 "$PGDIR"
	chown postgres: "$PGDIR"
	runuser -u postgres -- "$PGBIN/initdb" -D "$PGDIR/data" -A trust --no-sync >/dev/null
	pid=$(pg_up)
	before=$(huge_mib "$pid")
	echo "huge before the upgrade: $before MiB"
	awk -v m="$before" 'BEGIN { exit !(m >= 2) }'
	pg_down

	# The upgrade (a reinstall where the machine has the newest version):
	# dpkg writes the diverted name, the trigger makes the copy again.
	run apt-get -o DPkg::Lock::Timeout=300 install -y --reinstall "$pkg"
	if [ "$status" -ne 0 ]; then
		run apt-get -o DPkg::Lock::Timeout=300 install -y "$pkg"
	fi
	echo "$output"
	[ "$status" -eq 0 ]
	grep -q "Processing triggers for tiexec" <<<"$output"
	run tiexec-keep status
	echo "$output"
	[ "$status" -eq 0 ]
	dpkg --verify "$pkg"
	cp "$P" "$PGDIR/copy"
	/usr/bin/tiexec-stamp --remove "$PGDIR/copy"
	cmp "$PGDIR/copy" "$P.tiexec-orig"
	pid=$(pg_up)
	echo "huge after the upgrade: $(huge_mib "$pid") MiB"
	awk -v m="$(huge_mib "$pid")" 'BEGIN { exit !(m >= 2) }'
	pg_down

	# Purge: the package's own file back, nothing diverted, --verify clean.
	run apt-get -o DPkg::Lock::Timeout=300 purge -y tiexec
	echo "$output"
	[ "$status" -eq 0 ]
	[ -z "$(dpkg-divert --list | awk '$NF == "tiexec"')" ]
	[ ! -e "$P.tiexec-orig" ]
	dpkg --verify "$pkg"
	run "$P" --version
	[ "$status" -eq 0 ]
}

@test "with binfmt-support and no systemd: the installer and tiexec-binfmt status warn about PF (private namespaces)" {
	# dpkg into overlays of /usr, /var and /etc, with a private binfmt_misc:
	# nothing of the machine is touched.  Needs root.
	[ ! -d /run/systemd/system ] || skip "systemd runs here: it registers the rule, not binfmt-support"
	local t=$BATS_TEST_TMPDIR
	(cd "$t" && apt-get download binfmt-support >/dev/null 2>&1) || {
		echo "cannot download binfmt-support from the Debian registry"
		return 1
	}
	mkdir -p "$t/ov"
	# The overlays as the machine's root (dpkg renames directories, which
	# an overlay mounted in a user namespace refuses), then a user
	# namespace for the private binfmt_misc, where dpkg runs.
	run --separate-stderr timeout 300 unshare --mount --propagation private bash -c '
		for d in usr var etc; do
			mkdir -p "$1/ov/$d.u" "$1/ov/$d.w"
			mount -t overlay overlay -o "lowerdir=/$d,upperdir=$1/ov/$d.u,workdir=$1/ov/$d.w" "/$d" || exit 91
		done
		exec unshare --user --map-root-user --mount bash -c '"'"'
		mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc || exit 90
		dpkg -i --force-depends "$1"/binfmt-support_*.deb >/dev/null 2>&1
		command -v update-binfmts >/dev/null || exit 92
		dpkg -i --force-depends "$2" 2>&1 | grep "^tiexec: the rule"
		echo "flags: $(sed -n "s/^flags: //p" /proc/sys/fs/binfmt_misc/tiexec)"
		tiexec-binfmt status >/dev/null
		tiexec-binfmt register >/dev/null
		echo "after register: $(sed -n "s/^flags: //p" /proc/sys/fs/binfmt_misc/tiexec)"
		tiexec-binfmt status >/dev/null
		echo "status after register: $?"'"'"' _ "$1" "$2"' _ "$t" "$DEB"
	echo "$output"
	echo "stderr: $stderr"
	[ "$status" -ne 90 ] || skip_unsupported "cannot mount a private binfmt_misc (needs Linux >= 6.7)"
	[ "$status" -ne 91 ] || skip_unsupported "cannot mount overlayfs over /usr, /var and /etc"
	[ "$status" -eq 0 ]
	same "tiexec: the rule for stamped programs is registered (PF); binfmt-support registers it at every boot, with flags PF: without O, a stamped program that its caller may execute but not read (mode 0711) fails with 'Permission denied'
flags: PF
after register: POF
status after register: 0" "$output"
	# status warned once, for the PF rule, and not after register.
	same "tiexec-binfmt: warning: flags PF, without O (binfmt-support registers the rule so): a stamped program that its caller may execute but not read (mode 0711) fails with 'Permission denied'; 'tiexec-binfmt register' registers it with POF" \
		"$(grep '^tiexec-binfmt: ' <<<"$stderr")"
}

@test "the RPMs install, register the rule and erase cleanly (private namespaces)" {
	# rpm into an overlay of /usr, with a private binfmt_misc and rpm
	# database: nothing of the machine is touched.
	local t=$BATS_TEST_TMPDIR
	mkdir -p "$t/u" "$t/w" "$t/db"
	cp "$FIXTURES/bigtext-pie" "$t/big"
	run --separate-stderr timeout 120 unshare --user --map-root-user --mount bash -c '
		set -e
		mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc || exit 90
		mount -t overlay overlay -o "lowerdir=/usr,upperdir=$1/u,workdir=$1/w" /usr || exit 91
		r() { rpm --dbpath "$1/db" --nodeps "${@:2}" 2>/dev/null; }
		r "$1" -i "$2"/tiexec-[0-9]*.x86_64.rpm "$2"/tiexec-trace-[0-9]*.x86_64.rpm
		grep -E "^(interpreter|flags)" /proc/sys/fs/binfmt_misc/tiexec
		/usr/bin/tiexec-stamp "$1/big"
		TIEXEC_VERBOSE=1 "$1/big" report >/dev/null
		r "$1" -U --replacepkgs "$2"/tiexec-[0-9]*.x86_64.rpm
		echo "after reinstall: $(ls /proc/sys/fs/binfmt_misc | grep -c tiexec)"
		r "$1" -e tiexec-trace tiexec
		echo "after erase: $(ls /proc/sys/fs/binfmt_misc | grep -c tiexec)"
		ls /usr/libexec/tiexec /usr/bin/tiexec /usr/sbin/tiexec-binfmt 2>/dev/null | wc -l
		TIEXEC_VERBOSE=1 "$1/big" report >/dev/null' _ "$t" "$PKG"
	echo "$output"
	echo "stderr: $stderr"
	[ "$status" -ne 90 ] || skip_unsupported "cannot mount a private binfmt_misc (needs Linux >= 6.7)"
	[ "$status" -ne 91 ] || skip_unsupported "cannot mount overlayfs in a user namespace"
	[ "$status" -eq 0 ]
	local said="tiexec: the rule for stamped programs is registered; nothing on this host registers it at boot (no systemd): run 'tiexec-binfmt register' from its boot scripts"
	[ ! -d /run/systemd/system ] || said="tiexec: the rule for stamped programs is registered; systemd-binfmt registers it at every boot"
	same "$said
interpreter /usr/libexec/tiexec/tiexec
flags: POF
$said
after reinstall: 1
after erase: 0
0" "$output"
	[[ "$stderr" == "tiexec: '$t/big': "*" MiB text on 2 MiB pages"* ]]
	# Once, through the rule; not after the erase.
	[ "$(grep -c '^tiexec: ' <<<"$stderr")" -eq 1 ]
}

@test "the arm64 .debs cross-build (multiarch), hold arm64 programs and the same files, and are lintian-clean" {
	run --separate-stderr timeout 1200 "$ROOT/scripts/package" deb-arm64
	echo "$stderr" | tail -30
	[ "$status" -eq 0 ]
	local deb=$PKG/tiexec_*_arm64.deb trace=$PKG/tiexec-trace_*_arm64.deb d=$BATS_TEST_TMPDIR/x
	# shellcheck disable=SC2086
	[ -f $deb ]
	[ -f $trace ]
	# shellcheck disable=SC2086
	[ "$(dpkg-deb -f $deb Architecture)" = arm64 ]
	# dpkg-shlibdeps found the arm64 libraries' packages.
	# shellcheck disable=SC2086
	[[ "$(dpkg-deb -f $deb Depends)" == *libc6* && "$(dpkg-deb -f $deb Depends)" == *libelf1* ]]
	# shellcheck disable=SC2086
	dpkg-deb -x $deb "$d"
	file "$d/usr/libexec/tiexec/tiexec" | grep -q 'ARM aarch64'
	file "$d/usr/bin/tiexec-warm" | grep -q 'ARM aarch64'
	# The same files as the amd64 packages.
	# shellcheck disable=SC2086
	same "$(deb_files "$PKG"/tiexec_*_amd64.deb "$PKG"/tiexec-trace_*_amd64.deb)" "$(deb_files $deb $trace)"
	# shellcheck disable=SC2086
	run lintian --fail-on error,warning -EvIL +pedantic --tag-display-limit 0 $deb $trace
	echo "$output"
	[ "$status" -eq 0 ]
	if grep -E '^[EW]: ' <<<"$output"; then return 1; fi
}
