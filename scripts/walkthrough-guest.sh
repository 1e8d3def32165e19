#!/bin/bash
# The operator's path, inside the Debian 13 arm64 guest of
# scripts/walkthrough-arm64: run at each boot by walk.service (installed
# by that script), as root under systemd.  Each step prints one line on the
# console,
#
#   WALK STEP ok|FAIL SECONDS what it saw
#
# which the host reads.  /walk/phase says where the walk is: "install"
# (the first boot: postgres run plainly, the .debs installed, postgres kept
# with tiexec-keep, then a reboot) or "run" (after the reboot: warm, start,
# check, metrics, reinstall both packages, purge, then power off).
set -uo pipefail
exec >/dev/ttyAMA0 2>&1

PG=17
PROG=/usr/lib/postgresql/$PG/bin/postgres
DATA=/var/lib/postgresql/$PG/main
failed=0

# step NAME CMD...: runs CMD, prints its line: the last line CMD wrote to
# stdout (its whole output goes to /walk/NAME.out).
step() {
	local name=$1 t0 rc last
	shift
	t0=$(date +%s)
	"$@" >"/walk/$name.out" 2>&1
	rc=$?
	last=$(tail -n 1 "/walk/$name.out" | tr -d '\r' | cut -c1-300)
	if [ $rc = 0 ]; then
		echo "WALK $name ok $(($(date +%s) - t0)) $last"
	else
		echo "WALK $name FAIL $(($(date +%s) - t0)) (status $rc) $last"
		failed=1
	fi
}

# The postmaster's PID, once it accepts connections.
postmaster() {
	local n=0
	while [ $n -lt 120 ]; do
		if su postgres -c "psql -Atc 'select 1'" >/dev/null 2>&1; then
			sed -n 1p "$DATA/postmaster.pid"
			return 0
		fi
		sleep 1
		n=$((n + 1))
	done
	return 1
}

# A table made and read back: its md5, the same whatever runs postgres.
query() {
	su postgres -c "psql -q -Atc \"drop table if exists walk; create table walk as select g, md5(g::text) m from generate_series(1, 200000) g; select md5(string_agg(m, ',' order by g)) from walk\"" 2>/dev/null | tail -n 1
}

# The rule, in one line: "tiexec: registered enabled interpreter ... flags
# POF" (tiexec-binfmt status's first four lines).
rule() {
	local out rc
	out=$(tiexec-binfmt status)
	rc=$?
	echo "$out" | sed -n 1,4p | tr '\n' ' '
	echo
	return $rc
}

pg_start() { systemctl restart "postgresql@$PG-main" && postmaster >/dev/null; }

# Which file /proc/PID/exe names for the postmaster and for a child.
exes() {
	local pm child
	pm=$(postmaster) || return 1
	child=$(pgrep -P "$pm" | sed -n 1p)
	echo "postmaster $pm exe $(readlink "/proc/$pm/exe"); child $child exe $(readlink "/proc/$child/exe")"
}

same_md5() {
	local now
	now=$(query) || return 1
	[ "$now" = "$(cat /walk/md5.plain)" ] || { echo "md5 $now, plainly $(cat /walk/md5.plain)"; return 1; }
	echo "md5 $now as plainly"
}

# tiexec-stat --check of the postmaster and of one child of it (a forked
# backend process, postgres's checkpointer or the like).
check_pids() {
	local pm child rc=0
	pm=$(postmaster) || return 1
	child=$(pgrep -P "$pm" | sed -n 1p)
	tiexec-stat --check "$pm" || rc=1
	tiexec-stat --check "$child" || rc=1
	return $rc
}

# --prometheus: every postgres process under postgres's path, none under
# the loader's.
metrics() {
	local out
	out=$(tiexec-stat --prometheus) || return 1
	echo "$out" | grep -E '^tiexec_(program_processes|processes_blocks_unmeasured|program_processes_short|program_processes_unmeasured)' || true
	if echo "$out" | grep -E '^tiexec_program_processes\{[^}]*libexec/tiexec' >/dev/null; then
		echo "a process is counted under the loader's path"
		return 1
	fi
	echo "$out" | grep -E "^tiexec_program_processes\{[^}]*program=\"$PROG\"" >/dev/null || { echo "no postgres processes"; return 1; }
	echo "$out" | grep -E "^tiexec_program_processes\{[^}]*program=\"$PROG\"" | sed -n 1p
}

# tiexec-metrics.service, as shipped: its file's blocks and short lines, or
# why it failed (its journal).
metrics_unit() {
	if ! systemctl start tiexec-metrics.service; then
		journalctl -u tiexec-metrics.service -o cat --no-pager | tail -n 4 | tr '\n' ' '
		echo
		return 1
	fi
	grep -E '^tiexec_(processes_blocks_unmeasured|program_processes_short)' /var/lib/prometheus/node-exporter/tiexec.prom | tr '\n' ' '
	echo
}

entries() { find /run/tiexec/text -type f 2>/dev/null | wc -l; }

reinstall_tiexec() {
	local before after
	before=$(entries)
	apt-get install -y --reinstall /walk/debs/tiexec_*_arm64.deb /walk/debs/tiexec-trace_*_arm64.deb || return 1
	after=$(entries)
	same_md5 || return 1
	[ "$before" -gt 0 ] && [ "$after" = "$before" ] || { echo "cache entries $before before, $after after"; return 1; }
	echo "cache entries $before before, $after after; postgres answered throughout"
}

reinstall_postgres() {
	apt-get install -y --reinstall /walk/debs/postgresql-${PG}_*.deb || return 1
	tiexec-keep status || return 1
	tiexec-stamp --check "$PROG" || return 1
	[ -z "$(dpkg --verify "postgresql-$PG")" ] || { dpkg --verify "postgresql-$PG"; return 1; }
	pg_start || return 1
	check_pids
}

purge() {
	local out
	out=$(apt-get purge -y tiexec tiexec-trace 2>&1) || { echo "$out"; return 1; }
	echo "$out"
	# A unit directory that only tiexec owned (Debian 12's
	# /lib/systemd/system, #55) made dpkg warn here.
	if echo "$out" | grep '^dpkg: warning'; then return 1; fi
	[ -z "$(dpkg-divert --list "$PROG*")" ] || { dpkg-divert --list "$PROG*"; return 1; }
	[ -z "$(dpkg --verify "postgresql-$PG")" ] || { dpkg --verify "postgresql-$PG"; return 1; }
	for f in /proc/sys/fs/binfmt_misc/tiexec*; do
		[ -e "$f" ] && { echo "rule $f is still registered"; return 1; }
	done
	if findmnt /run/tiexec/text >/dev/null; then echo "/run/tiexec/text is still mounted"; return 1; fi
	pg_start || return 1
	exes
	same_md5
}

case $(cat /walk/phase) in
install)
	echo "WALK boot ok 0 $(uname -r), $(getconf PAGESIZE)-byte pages, THP $(cat /sys/kernel/mm/transparent_hugepage/enabled)"
	step plain pg_start
	query >/walk/md5.plain
	echo "WALK plain-md5 ok 0 $(cat /walk/md5.plain)"
	step install apt-get install -y /walk/debs/tiexec_*_arm64.deb /walk/debs/tiexec-trace_*_arm64.deb
	step rule rule
	step keep tiexec-keep add "$PROG"
	step verify sh -c "dpkg --verify postgresql-$PG; [ -z \"\$(dpkg --verify postgresql-$PG)\" ] && echo 'dpkg --verify clean'"
	echo "$PROG" >>/etc/tiexec/warm.conf
	echo run >/walk/phase
	echo "WALK reboot ok 0 failed=$failed"
	sync
	systemctl reboot
	;;
run)
	step rule-after-reboot rule
	step warm systemctl start tiexec-warm.service
	journalctl -u tiexec-warm.service -o cat --no-pager >/walk/warm.log 2>&1
	echo "WALK warm-log ok 0 $(grep '^/' /walk/warm.log | tr '\n' ';')"
	step start pg_start
	step exe exes
	step query same_md5
	step check-path tiexec-stat --check "$PROG"
	step check-pids check_pids
	step advise tiexec-stat --advise "$PROG"
	step metrics metrics
	mkdir -p /var/lib/prometheus/node-exporter
	step metrics-unit metrics_unit
	step reinstall-tiexec reinstall_tiexec
	step reinstall-postgres reinstall_postgres
	step purge purge
	echo "WALK end ok 0 failed=$failed"
	sync
	systemctl poweroff
	;;
esac
