#!/usr/bin/env bats
# tiexec-stat --prometheus: the node's metrics in Prometheus' text format
# (checked by promtool), their values against programs started here, the
# tiexec-warm and tiexec-trace parts; then the real thing: Debian's
# prometheus-node-exporter serving the file from its textfile collector on
# 127.0.0.1, and a real prometheus scraping it and answering a query.
# Both run on ports of their own, with their data in the test's directory,
# and are stopped by PID.
bats_require_minimum_version 1.5.0
load test_helper

setup() {
	STAT=$BUILD/stat/tiexec-stat
	T=$BATS_TEST_TMPDIR
	PIDS=()
	CPIDS=()
	command -v promtool >/dev/null || skip_unsupported "promtool is not installed (Debian: prometheus; scripts/test installs it)"
}

teardown() {
	local p
	for p in "${CPIDS[@]}" "${PIDS[@]}"; do
		kill "$p" 2>/dev/null || true
		wait "$p" 2>/dev/null || true
	done
	[ -z "${PW:-}" ] || rm -rf "$PW"
}

# hold CMD...: CMD wait, in the background until the test ends, once ready.
hold() {
	coproc H { exec "$@" wait 3>&-; }
	CPIDS+=("$H_PID")
	local ready=
	read -r -t 60 ready <&"${H[0]}" || true
	[ "$ready" = ready ] || { echo "no 'ready' from $*"; return 1; }
	# Keep its stdin open: the coproc's fd stays with this shell.
	exec {HOLD_FD}>&"${H[1]}"
}

# metric NAME{LABELS} TEXT: its value in TEXT.
metric() {
	awk -v m="$1" '$1 == m { print $2 }' <<<"$2"
}

# query_until PORT QUERY: prometheus's answer to QUERY once it has a
# result (up to 30 s), else its last answer.
query_until() {
	local answer=
	for _ in $(seq 300); do
		answer=$(curl -sf "http://127.0.0.1:$1/api/v1/query" --data-urlencode "query=$2" || true)
		grep -q '"result":\[{' <<<"$answer" && break
		sleep 0.1
	done
	echo "$answer"
}

# free_port: a TCP port nothing listens on, on 127.0.0.1.
free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# node_exporter DIR: Debian's node_exporter serving DIR's files from its
# textfile collector on a free port of 127.0.0.1 (in $NE), its first
# answer in $T/ne.out.
node_exporter() {
	NE=$(free_port)
	prometheus-node-exporter --web.listen-address="127.0.0.1:$NE" --collector.disable-defaults \
		--collector.textfile --collector.textfile.directory="$1" >"$T/ne.log" 2>&1 &
	PIDS+=("$!")
	for _ in $(seq 100); do curl -sf "http://127.0.0.1:$NE/metrics" >"$T/ne.out" && break; sleep 0.1; done
}

@test "--prometheus: valid text format; processes and their text by way, from programs running here" {
	cp "$FIXTURES/bigtext-pie" "$T/stamped"
	"$BUILD/stamp/tiexec-stamp" "$T/stamped"
	run --separate-stderr env TIEXEC_CACHE= TIEXEC_WARM= TIEXEC_TRACE_COUNTERS="$T/none" "$STAT" --prometheus
	[ "$status" -eq 0 ]
	local before=$output
	promtool check metrics <<<"$before"
	# A stamped program through tiexec (file or copy) and a copy (thp).
	hold env TIEXEC_CACHE= "$TIEXEC" "$T/stamped"
	hold env TIEXEC_CACHE= "$TIEXEC" --strategy=thp "$FIXTURES/bigtext-static"
	run --separate-stderr env TIEXEC_CACHE= TIEXEC_WARM= TIEXEC_TRACE_COUNTERS="$T/none" "$STAT" --prometheus
	echo "$output"
	[ "$status" -eq 0 ]
	promtool check metrics <<<"$output"
	# Their own lines, not the node's totals, which other work here moves.
	local l
	for l in "{program=\"$T/stamped\"}" "{program=\"$FIXTURES/bigtext-static\"}"; do
		[ "$(metric "tiexec_program_processes$l" "$output")" = 1 ]
		[ "$(metric "tiexec_program_text_huge_min_bytes$l" "$output")" -ge $((62 << 20)) ]
	done
	[ "$(metric tiexec_processes "$output")" -ge 2 ]
	[ "$(metric 'tiexec_text_huge_bytes{way="copy"}' "$output")" -ge $((62 << 20)) ]
	[ "$(metric tiexec_trace_up "$output")" = 0 ]
	run "$STAT" --prometheus 1234
	[ "$status" -eq 2 ]
	run "$STAT" --output "$T/x.prom"
	[ "$status" -eq 2 ]
}

# Per program, what holds as its process count changes (#40: a sum over
# processes grew with idle connections): an ordinary user's program whose
# forked child wrote a process title over its environment (postgres's
# backends), and one more process of it run with --strategy=off.
@test "--prometheus: per program, its processes, its whole pieces, the least on 2 MiB pages, those short" {
	D=$(mktemp -d /tmp/tiexec-prom.XXXXXX)
	chmod 755 "$D"
	cp "$FIXTURES/bigtext-pie" "$D/prog"
	cp "$TIEXEC" "$D/tiexec"
	cp "$STAT" "$D/tiexec-stat" # uid 65534 runs it (the build may be private)
	"$BUILD/stamp/tiexec-stamp" "$D/prog"
	chmod -R a+rX "$D"
	coproc P { exec setpriv --reuid=65534 --regid=65534 --clear-groups env TIEXEC_CACHE= "$D/tiexec" "$D/prog" child-title 3>&-; }
	CPIDS+=("$P_PID")
	local line ready
	read -r -t 60 line <&"${P[0]}" || true
	[[ "$line" =~ ^child\ ([0-9]+)$ ]]
	read -r -t 60 ready <&"${P[0]}" || true
	[ "$ready" = ready ]
	run --separate-stderr env TIEXEC_CACHE= TIEXEC_WARM= TIEXEC_TRACE_COUNTERS="$T/none" TIEXEC_LOADER="$D/tiexec" "$STAT" --prometheus
	echo "$output"
	[ "$status" -eq 0 ]
	promtool check metrics <<<"$output"
	local l="{program=\"$D/prog\"}" aligned
	[ "$(metric "tiexec_program_processes$l" "$output")" = 2 ]
	aligned=$(metric "tiexec_program_text_aligned_bytes$l" "$output")
	[ "$aligned" -ge $((62 << 20)) ]
	[ "$(metric "tiexec_program_text_huge_min_bytes$l" "$output")" = "$aligned" ]
	[ "$(metric "tiexec_program_processes_short$l" "$output")" = 0 ]
	# One more, on 4 KiB pages: the least drops, one is short.
	hold env TIEXEC_CACHE= "$TIEXEC" --strategy=off "$D/prog"
	run --separate-stderr env TIEXEC_CACHE= TIEXEC_WARM= TIEXEC_TRACE_COUNTERS="$T/none" TIEXEC_LOADER="$D/tiexec" "$STAT" --prometheus
	[ "$(metric "tiexec_program_processes$l" "$output")" = 3 ]
	[ "$(metric "tiexec_program_text_aligned_bytes$l" "$output")" = "$aligned" ]
	[ "$(metric "tiexec_program_text_huge_min_bytes$l" "$output")" = 0 ]
	[ "$(metric "tiexec_program_processes_short$l" "$output")" = 1 ]
	# An ordinary user cannot read the others' processes: said, status 1,
	# and counted, not shown as zeros.
	run --separate-stderr setpriv --reuid=65534 --regid=65534 --clear-groups env TIEXEC_CACHE= TIEXEC_WARM= \
		TIEXEC_TRACE_COUNTERS="$T/none" "$D/tiexec-stat" --prometheus
	echo "$stderr"
	[ "$status" -eq 1 ]
	[[ "$stderr" == "tiexec-stat: cannot read /proc/PID/smaps of "[1-9]*" processes (permission denied): they are left out (run it as root)" ]]
	[ "$(metric tiexec_processes_unreadable "$output")" -ge 1 ]
	exec {P[1]}>&-
	rm -rf "$D"
}

@test "--prometheus: tiexec-warm's files and tiexec-trace's counters" {
	[ "$(id -u)" = 0 ] || skip_unsupported "tiexec-trace needs root"
	[ -x "$BUILD/bpf/tiexec-trace" ] || skip_unsupported "tiexec-trace is not built"
	# tiexec-warm with a configuration of its own, through a wrapper.
	printf '%s\n' "$FIXTURES/bigtext-pie" >"$T/warm.conf"
	printf '#!/bin/sh\nexec "%s" --config "%s" "$@"\n' "$BUILD/warm/tiexec-warm" "$T/warm.conf" >"$T/warm"
	chmod +x "$T/warm"
	# tiexec-trace counting: one start that falls back (transparent huge
	# pages disabled for it, a cause no machine setting takes away).
	cp "$TIEXEC" "$T/tiexec"
	"$BUILD/bpf/tiexec-trace" --loader "$T/tiexec" --counters "$T/counters" --duration 60 >/dev/null 2>"$T/trace.err" &
	PIDS+=("$!")
	for _ in $(seq 300); do grep -qs '^tiexec-trace: tracing' "$T/trace.err" && break; sleep 0.1; done
	TIEXEC_CACHE= "$FIXTURES/mdwe" thp-disable "$T/tiexec" "$FIXTURES/bigtext-pie" loop 1 >/dev/null
	TIEXEC_CACHE= "$T/tiexec" "$FIXTURES/bigtext-pie" loop 1 >/dev/null
	for _ in $(seq 50); do grep -q '^outcome loaded 2$' "$T/counters" 2>/dev/null && break; sleep 0.1; done
	cat "$T/counters"
	grep -qx 'outcome loaded 2' "$T/counters"
	grep -qE '^fallback 1 file: transparent huge pages are disabled' "$T/counters"
	run --separate-stderr env TIEXEC_CACHE= TIEXEC_WARM="$T/warm" TIEXEC_TRACE_COUNTERS="$T/counters" "$STAT" --prometheus --output "$T/tiexec.prom"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	cat "$T/tiexec.prom"
	promtool check metrics <"$T/tiexec.prom"
	same 644 "$(stat -c %a "$T/tiexec.prom")"
	local m
	m=$(cat "$T/tiexec.prom")
	[ "$(metric tiexec_trace_up "$m")" = 1 ]
	[ "$(metric 'tiexec_starts_total{outcome="loaded"}' "$m")" = 2 ]
	grep -qE '^tiexec_fallbacks_total\{reason="file: transparent huge pages are disabled[^"]*"\} 1$' <<<"$m"
	[ "$(metric "tiexec_warm_text_bytes{path=\"$FIXTURES/bigtext-pie\",route=\"file\",state=\"aligned\"}" "$m")" = $((62 << 20)) ]
	grep -qE "^tiexec_warm_text_bytes\{path=\"$FIXTURES/bigtext-pie\",route=\"file\",state=\"warm\"\} [0-9]+$" <<<"$m"
}

@test "node_exporter serves the metrics, prometheus scrapes them, loads the rules, answers the dashboard's queries" {
	command -v prometheus-node-exporter >/dev/null && command -v prometheus >/dev/null ||
		skip_unsupported "prometheus and prometheus-node-exporter are not installed (scripts/test installs them)"
	mkdir -p "$T/textfile" "$T/db"
	hold env TIEXEC_CACHE= "$TIEXEC" --strategy=thp "$FIXTURES/bigtext-static"
	TIEXEC_CACHE= TIEXEC_WARM= TIEXEC_TRACE_COUNTERS="$T/none" "$STAT" --prometheus --output "$T/textfile/tiexec.prom"
	local ne pr
	node_exporter "$T/textfile"
	ne=$NE
	grep -E '^tiexec_text_huge_bytes\{way="copy"\} ' "$T/ne.out"
	grep -qx 'node_textfile_scrape_error 0' "$T/ne.out"
	pr=$(free_port)
	cp "$ROOT/packaging/prometheus/tiexec-rules.yml" "$T/"
	cat >"$T/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files:
  - $T/tiexec-rules.yml
scrape_configs:
  - job_name: node
    static_configs:
      - targets: ['127.0.0.1:$ne']
EOF
	prometheus --config.file="$T/prometheus.yml" --storage.tsdb.path="$T/db" \
		--web.listen-address="127.0.0.1:$pr" >"$T/prom.log" 2>&1 &
	PIDS+=("$!")
	local answer
	answer=$(query_until "$pr" 'tiexec_text_huge_bytes{way="copy"}')
	echo "$answer"
	[[ "$answer" =~ \"value\":\[[0-9.]+,\"([0-9]+)\"\] ]] || { tail -5 "$T/prom.log"; return 1; }
	[ "${BASH_REMATCH[1]}" -ge $((62 << 20)) ]
	# The rules are loaded, healthy; the recording rule answers 1 for the
	# program (all its pieces on 2 MiB pages).
	curl -sf "http://127.0.0.1:$pr/api/v1/rules" >"$T/rules.json"
	[ "$(jq '[.data.groups[].rules[] | select(.health == "ok")] | length' "$T/rules.json")" = 4 ]
	answer=$(query_until "$pr" 'tiexec:program_huge_ratio')
	echo "$answer"
	[[ "$answer" == *'"program":"'"$FIXTURES"'/bigtext-static"'*'"value":['*',"1"]'* ]]
	# Every query of the Grafana dashboard runs, and all but the warm
	# files' (none configured here) answer something.
	local q n=0
	while IFS= read -r q; do
		q=${q//\$instance/.*}
		answer=$(curl -sf "http://127.0.0.1:$pr/api/v1/query" --data-urlencode "query=$q")
		echo "$q: $answer"
		[[ "$answer" == '{"status":"success"'* ]]
		[[ "$q" == tiexec_warm_* || "$answer" == *'"result":[{'* ]]
		n=$((n + 1))
	done < <(jq -r '.panels[].targets[].expr' "$ROOT/packaging/grafana/tiexec-dashboard.json")
	[ "$n" -ge 6 ]
}

@test "the alert rules pass promtool's checks and their own unit tests" {
	promtool check rules "$ROOT/packaging/prometheus/tiexec-rules.yml"
	cd "$ROOT/packaging/prometheus"
	run promtool test rules tiexec-rules.test.yml
	echo "$output"
	[ "$status" -eq 0 ]
	# The unit tests check what they claim: a rule that sums over
	# processes fires when only the process count changes.
	sed 's/expr: tiexec_program_processes_short > 0/expr: tiexec_program_processes > 8/' tiexec-rules.yml >"$T/tiexec-rules.yml"
	cp tiexec-rules.test.yml "$T/"
	run promtool test rules "$T/tiexec-rules.test.yml"
	[ "$status" -ne 0 ]
	jq -e '.panels | length >= 6' "$ROOT/packaging/grafana/tiexec-dashboard.json"
}

@test "tiexec-metrics.service is no more exposed than tiexec-warm.service; both bound their run time" {
	command -v systemd-analyze >/dev/null || skip_unsupported "systemd-analyze is not installed"
	exposure() {
		systemd-analyze security --offline=true "$ROOT/packaging/systemd/$1" 2>/dev/null |
			sed -n 's/^→ Overall exposure level for .*: \([0-9.]*\) .*/\1/p'
	}
	local m w
	m=$(exposure tiexec-metrics.service)
	w=$(exposure tiexec-warm.service)
	echo "metrics $m, warm $w"
	[ -n "$m" ]
	[ -n "$w" ]
	awk -v m="$m" -v w="$w" 'BEGIN { exit !(m <= w) }'
	for u in tiexec-metrics.service tiexec-warm.service; do
		grep -qE '^TimeoutStartSec=[0-9]+min$' "$ROOT/packaging/systemd/$u"
	done
	# What it runs is allowed by its filter: tiexec-stat --prometheus
	# (and the tiexec-warm --check it starts) under the unit's capabilities
	# and no_new_privs, every system call within SystemCallFilter.
	command -v strace >/dev/null || skip_unsupported "strace is not installed"
	run_t strace -f -qq -o "$T/st" setpriv --bounding-set=-all,+sys_ptrace,+dac_read_search --no-new-privs \
		env PATH="$BUILD/warm:$PATH" "$STAT" --prometheus
	[ "$status" -eq 0 ]
	[[ "$output" == *"tiexec_processes "* ]]
	expand() {
		systemd-analyze syscall-filter "$1" | sed -n '2,$p' | sed 's/^ *//' | grep -v '^#\|^$' |
			while read -r c; do case $c in @*) expand "$c" ;; *) echo "$c" ;; esac; done
	}
	local filter allowed used
	filter=$(sed -n 's/^SystemCallFilter=//p' "$ROOT/packaging/systemd/tiexec-metrics.service")
	allowed=$(for k in $filter; do case $k in @*) expand "$k" ;; *) echo "$k" ;; esac; done | sort -u)
	used=$(sed -n '/execve(".*tiexec-stat"/,$p' "$T/st" | sed -nE 's/^[0-9]+ +([a-z0-9_]+)\(.*/\1/p' | sort -u)
	echo "not allowed: $(comm -23 <(echo "$used") <(echo "$allowed") | tr '\n' ' ')"
	[ -z "$(comm -23 <(echo "$used") <(echo "$allowed"))" ]
}

# The unit's capability set has neither CAP_SETUID nor CAP_SETGID, so
# tiexec-stat cannot take an ordinary user's identity to open that user's
# program (stat/procfs.c: proc_open_as_owner).  It used to abort there,
# putting back root's groups it had never changed: the metrics unit died
# of SIGABRT whenever an ordinary user's program ran through tiexec
# (found on the arm64 walkthrough, #55).
@test "the metrics unit's capabilities, an ordinary user's program through the loader: no abort, counted as that program" {
	PW=$(mktemp -d /tmp/tiexec-unitcaps.XXXXXX)
	chmod 755 "$PW"
	cp "$TIEXEC" "$PW/tiexec"
	cp "$FIXTURES/bigtext-pie" "$PW/server"
	chmod 755 "$PW/tiexec" "$PW/server"
	mkfifo "$PW/f"
	setpriv --reuid=65534 --regid=65534 --clear-groups "$PW/tiexec" "$PW/server" wait <"$PW/f" >"$PW/out" 2>&1 &
	local pid=$! hold
	PIDS=("$pid")
	exec {hold}>"$PW/f"
	for _ in $(seq 200); do [ "$(cat "$PW/out")" = ready ] && break; sleep 0.05; done
	run --separate-stderr env TIEXEC_LOADER="$PW/tiexec" setpriv --inh-caps=-all \
		--bounding-set=-all,+sys_ptrace,+dac_read_search --no-new-privs "$STAT" --prometheus
	exec {hold}>&-
	wait "$pid"
	echo "$stderr"
	[ "$status" -eq 0 ]
	[[ "$output" == *"tiexec_program_processes{program=\"$PW/server\"} 1"* ]]
	[[ "$output" != *"program=\"$PW/tiexec\""* ]]
}

@test "file names with \" \\ and bytes that are not UTF-8: valid JSON from tiexec-warm, exact labels in the metrics" {
	local q="$T/a\"b\\c" x=$T/$'d\xffe'
	cp "$FIXTURES/bigtext-pie" "$q"
	cp "$FIXTURES/bigtext-pie" "$x"
	# Lines of warm.conf are globs: a \ in a name is written \\.
	printf '%s\n' "${q//\\/\\\\}" "$x" >"$T/warm.conf"
	run --separate-stderr env TIEXEC_CACHE= "$BUILD/warm/tiexec-warm" --config "$T/warm.conf" --check --json
	echo "$output"
	[ "${#lines[@]}" -eq 2 ]
	# Each line is JSON; the first name reads back exactly, the second's
	# stray byte as U+FFFD.
	run node -e '
		const l = require("fs").readFileSync(0, "utf8").trim().split("\n").map(JSON.parse);
		console.log(l[0].path); console.log(l[1].path);' <<<"$output"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "$q" ]
	[ "${lines[1]}" = "$T/d"$'\xef\xbf\xbd'"e" ]
	printf '#!/bin/sh\nexec "%s" --config "%s" "$@"\n' "$BUILD/warm/tiexec-warm" "$T/warm.conf" >"$T/warm"
	chmod +x "$T/warm"
	run --separate-stderr env TIEXEC_CACHE= TIEXEC_WARM="$T/warm" "$STAT" --prometheus --output "$T/tiexec.prom"
	[ "$status" -eq 0 ]
	promtool check metrics <"$T/tiexec.prom"
	local label=${q//\\/\\\\}
	label=${label//\"/\\\"}
	grep -qF "tiexec_warm_text_bytes{path=\"$label\",route=\"file\",state=\"aligned\"} $((62 << 20))" "$T/tiexec.prom"
	[ "$(grep -c '^tiexec_warm_text_bytes{' "$T/tiexec.prom")" -eq 6 ]
}

# What a process says about itself is not believed (uid 65534): a program
# merely named tiexec does not run through tiexec, and TIEXEC_EXE in its
# environment names nothing, not even a program in a directory only root
# may read.  Root opens only what the kernel names, through its links.
@test "--prometheus: a program named tiexec, and what its environment claims, count for nothing (uid 65534)" {
	local d secret
	d=$(mktemp -d /tmp/tiexec-prom.XXXXXX)
	secret=$(mktemp -d /tmp/tiexec-secret.XXXXXX) # 0700, root's
	chmod 755 "$d"
	cp "$FIXTURES/bigtext-pie" "$secret/prog"
	cp "$(command -v sleep)" "$d/tiexec"
	chmod -R a+rX "$d"
	setpriv --reuid=65534 --regid=65534 --clear-groups sh -c \
		'exec env TIEXEC_EXE="$$:$1" "$2" 600' sh "$secret/prog" "$d/tiexec" &
	PIDS+=("$!")
	for _ in $(seq 50); do [ "$(readlink "/proc/$!/exe")" = "$d/tiexec" ] && break; sleep 0.1; done
	[ "$(readlink "/proc/$!/exe")" = "$d/tiexec" ]
	run --separate-stderr env TIEXEC_CACHE= TIEXEC_WARM= TIEXEC_TRACE_COUNTERS="$T/none" "$STAT" --prometheus
	echo "$output"
	[ "$status" -eq 0 ]
	[ -z "$(grep -F -e "$secret" -e "$d/tiexec" <<<"$output")" ]
	rm -rf "$d" "$secret"
}

# Label values: valid UTF-8 (a Latin-1 name would make promtool and
# node_exporter's textfile collector reject the whole file, and with it
# every tiexec metric of the node) and bounded (a 1 KiB cut, marked "...").
@test "--prometheus: a Latin-1 program name and a 2 KiB path: the file stays valid, node_exporter serves it" {
	local d long name
	d=$(mktemp -d /tmp/tiexec-prom.XXXXXX)
	chmod 755 "$d"
	cp "$TIEXEC" "$d/tiexec"
	name=$(printf 'lat\351in')
	cp "$FIXTURES/bigtext-pie" "$d/$name"
	long=$d
	while [ ${#long} -lt 2048 ]; do long=$long/$(printf 'd%.0s' $(seq 200)); done
	mkdir -p "$long"
	cp "$FIXTURES/bigtext-pie" "$long/prog"
	"$BUILD/stamp/tiexec-stamp" "$long/prog" # counted: stamped
	chmod -R a+rX "$d"
	hold setpriv --reuid=65534 --regid=65534 --clear-groups env TIEXEC_CACHE= "$d/tiexec" "$d/$name"
	hold env TIEXEC_CACHE= "$TIEXEC" "$long/prog"
	mkdir -p "$T/textfile"
	run --separate-stderr env TIEXEC_CACHE= TIEXEC_WARM= TIEXEC_TRACE_COUNTERS="$T/none" TIEXEC_LOADER="$d/tiexec" \
		"$STAT" --prometheus --output "$T/textfile/tiexec.prom"
	[ "$status" -eq 0 ]
	promtool check metrics <"$T/textfile/tiexec.prom"
	grep -F "tiexec_program_processes{program=\"$d/lat"$'\xef\xbf\xbd'"in\"} 1" "$T/textfile/tiexec.prom"
	local cut
	cut=$(grep -F "tiexec_program_processes{program=\"${long:0:200}" "$T/textfile/tiexec.prom")
	echo "$cut"
	[[ "$cut" == *'..."} 1' ]]
	[ "$(awk '{ print length($0) }' <<<"$cut")" -le 1100 ]
	if command -v prometheus-node-exporter >/dev/null; then
		node_exporter "$T/textfile"
		grep -qx 'node_textfile_scrape_error 0' "$T/ne.out"
		grep -F "tiexec_program_processes{program=\"$d/lat" "$T/ne.out"
	elif [ "${CI:-}" = true ]; then
		false # scripts/test installs it
	fi
	rm -rf "$d"
}
