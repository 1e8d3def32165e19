# Shared by every tests/*.bats file.
# The build directory comes from scripts/test (TIEXEC_BUILD); fixtures are
# built once per run by setup_suite.bash into $FIXTURES.
ROOT=$(cd "$BATS_TEST_DIRNAME/.." && pwd)
BUILD=${TIEXEC_BUILD:-$ROOT/build}
TIEXEC=$BUILD/interp/tiexec
FIXTURES=${TIEXEC_FIXTURES:-$BUILD/fixtures}
export ROOT BUILD TIEXEC FIXTURES
# No shared text cache (common/textcache.h) unless a test sets one up: the
# machine's /run/tiexec/text is neither used nor mounted by a test.
export TIEXEC_CACHE=

# podman on these machines (tests/63-containers, 64-kubernetes): runc (crun
# cannot use the hybrid cgroups here), the cgroupfs manager (no systemd),
# explicit limits (podman's defaults exceed the hard ones root has here), no
# network; images and containers named for this run (RUN_ID), since two
# runs on one machine share podman's storage.
PODMAN='podman --runtime runc --cgroup-manager cgroupfs'
PODMAN_RUN_FLAGS='--network none --ulimit nofile=1024:1024 --ulimit nproc=1024:1024'
RUN_ID=$(printf '%s' "$BATS_RUN_TMPDIR" | cksum | cut -d' ' -f1)

# Under CI=true a skip of something this machine should support is a failure.
skip_unsupported() {
	if [ "${CI:-}" = true ]; then
		echo "CI=true: refusing to skip: $*" >&2
		return 1
	fi
	skip "$*"
}

# run_t: `run` with a timeout, so a hung program cannot hang the suite.
run_t() {
	run timeout 60 "$@"
}

# work_dir_gone STDERR: the work directory a script named on STDERR
# ("== work directory DIR (removed at the end)") is gone, and no process
# runs from it.
work_dir_gone() {
	local w
	w=$(sed -n 's/^== work directory \(.*\) (removed at the end)$/\1/p' <<<"$1")
	[ -n "$w" ]
	[ ! -e "$w" ]
	run pgrep -f "$w"
	[ "$status" -eq 1 ]
}

# peak_kb OUTPUT: the figure tests/fixtures/peakrss printed.
peak_kb() {
	awk '$1 == "peakrss_kb" { print $2 }' <<<"$1"
}

# run_peak CMD...: run_t under tests/fixtures/peakrss; PEAK_KB is CMD's
# peak resident set in kB (wait4's ru_maxrss).
run_peak() {
	[ -x "$BATS_TEST_TMPDIR/peakrss" ] ||
		gcc -O2 -Wall -o "$BATS_TEST_TMPDIR/peakrss" "$ROOT/tests/fixtures/peakrss.c"
	run_t "$BATS_TEST_TMPDIR/peakrss" "$@"
	PEAK_KB=$(peak_kb "$output")
}

# same WANT GOT: equal, else show a diff.
same() {
	diff -u <(printf '%s\n' "$1") <(printf '%s\n' "$2")
}

# no_size TEXT: TEXT with a program's text size ("12345 bytes of text",
# "1.3 MiB of text") written "SIZE of text".
no_size() {
	sed -E 's/(^|[ (])([0-9]+ bytes|[0-9]+\.[0-9] MiB) of text/\1SIZE of text/' <<<"$1"
}

# same_off WANT GOT: GOT is WANT followed by the loader's time (", N ms"),
# with no_size applied.
same_off() {
	[[ "$2" =~ ^(.*),\ [0-9]+\.[0-9]+\ ms$ ]] || { echo "no time at the end of: $2"; return 1; }
	same "$1" "$(no_size "${BASH_REMATCH[1]}")"
}

# read_bytes CMD...: the bytes the process started by `CMD... wait` (a
# bigtext program, through tiexec or not) read from disk by the time it is
# ready (/proc/PID/io read_bytes: tiexec's work included).
read_bytes() {
	coproc RB { exec "$@" wait 2>/dev/null; }
	local pid=$RB_PID ready n
	read -r ready <&"${RB[0]}"
	[ "$ready" = ready ] || return 1
	n=$(awk '$1 == "read_bytes:" { print $2 }' "/proc/$pid/io")
	exec {RB[1]}>&-
	wait "$pid" || true
	echo "$n"
}

# A work directory an unprivileged user can reach (bats' own are private):
# workdir_make NAME in setup_file makes /tmp/NAME.XXXXXX (mode 755) as $W;
# workdir_find in setup finds it again; workdir_remove in teardown_file
# removes it, if setup_file got as far as making it.
workdir_make() {
	W=$(mktemp -d "/tmp/$1.XXXXXX")
	chmod 755 "$W"
	echo "$W" >"$BATS_FILE_TMPDIR/w"
}

workdir_find() {
	W=$(cat "$BATS_FILE_TMPDIR/w")
}

workdir_remove() {
	[ -f "$BATS_FILE_TMPDIR/w" ] && rm -rf "$(cat "$BATS_FILE_TMPDIR/w")"
	true
}

# A memory limit for one test: cg_make BYTES makes a child of this test's
# own memory cgroup (v1; skips without one) limited to BYTES, as $CG;
# cg_remove (in teardown, or at the end of the test) kills what is left in
# it and removes it.  Entering it: sh -c 'echo $$ >"$0/cgroup.procs" &&
# exec "$@"' "$CG" CMD...
cg_make() {
	local own
	own=$(sed -n 's/^[0-9]*:\([^:]*,\)\{0,1\}memory\(,[^:]*\)\{0,1\}:\(.*\)$/\3/p' /proc/self/cgroup)
	if [ -z "$own" ] || [ ! -d "/sys/fs/cgroup/memory$own" ]; then
		# cgroup v2 allows no processes in a group whose children get
		# controllers: a child limit there needs a delegated subtree.
		skip "no cgroup v1 memory controller (this test makes v1 groups)"
	fi
	CG=/sys/fs/cgroup/memory${own%/}/tiexec-test-$$-${BATS_TEST_NUMBER:-0}
	mkdir "$CG"
	echo "$1" >"$CG/memory.limit_in_bytes"
}

cg_remove() {
	[ -n "${CG:-}" ] && [ -d "$CG" ] || return 0
	local p
	for p in $(cat "$CG/cgroup.procs"); do kill -KILL "$p" 2>/dev/null || true; done
	rmdir "$CG" 2>/dev/null || { sleep 1; rmdir "$CG"; }
}

# entry_of FILE: the name of FILE's cache entry (textcache.h: its identity
# in hex).
entry_of() {
	local maj min ino size m c
	read -r maj min ino size m c < <(stat -c '%Hd %Ld %i %s %.9Y %.9Z' "$1")
	printf '%x.%x.%x.%x.%x.%x.%x\n' $(((maj << 32) | min)) "$ino" "$size" "${m%.*}" "$((10#${m#*.}))" \
		"${c%.*}" "$((10#${c#*.}))"
}
