# Transparent launch, end to end: programs stamped with tiexec-stamp, the
# rule registered with scripts/tiexec-binfmt, and the programs started the
# ways programs get started — by path, through PATH, sh -c, env, xargs, from
# another stamped program, from a supervisor script.  Everything runs in a
# private user, mount, PID and binfmt_misc namespace (Linux >= 6.7); the
# machine's own binfmt_misc is never touched.
bats_require_minimum_version 1.5.0
load test_helper

setup_file() {
	local t=$BATS_FILE_TMPDIR n
	STAMP=$BUILD/stamp/tiexec-stamp
	mkdir "$t/s" "$t/u" "$t/bin"
	for n in probe-static probe-static-pie probe-pie probe-nopie go-static go-cgo reexec bigtext-pie; do
		cp "$FIXTURES/$n" "$t/s/$n"
		cp "$FIXTURES/$n" "$t/u/$n"
	done
	"$STAMP" "$t"/s/*
	# A stamped program with a policy of its own.
	cp "$FIXTURES/bigtext-pie" "$t/s/big-thp"
	"$STAMP" --strategy=thp "$t/s/big-thp"
	# Stamped programs that start others: env and a shell.
	cp /usr/bin/env "$t/s/env"
	cp /bin/dash "$t/s/sh"
	"$STAMP" "$t/s/env" "$t/s/sh"
	cp "$FIXTURES/probe-pie" "$t/bin/probe-in-path"
	"$STAMP" "$t/bin/probe-in-path"
	cat >"$t/supervise" <<-'EOF'
		#!/bin/sh
		# A minimal supervisor: start the service, wait, report its status.
		"$@" &
		pid=$!
		wait "$pid"
		echo "supervisor: $1 exited with $?"
	EOF
	chmod 755 "$t/supervise"
}

# in_ns SCRIPT: bash -c SCRIPT in the private namespaces, tiexec registered,
# cwd $BATS_FILE_TMPDIR; `on`/`off` enable or disable the rule; "$1" is $BUILD.
in_ns() {
	run --separate-stderr timeout 120 unshare --user --map-root-user --mount --pid --fork \
		--kill-child --mount-proc bash -c '
		mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc || exit 90
		"$1/packaging/tiexec-binfmt" register --interpreter "$2" >/dev/null || exit 91
		on() { echo 1 >/proc/sys/fs/binfmt_misc/tiexec; }
		off() { echo 0 >/proc/sys/fs/binfmt_misc/tiexec; }
		cd "$3"
		'"$1" _ "$BUILD" "$TIEXEC" "$BATS_FILE_TMPDIR"
	if [ "$status" -eq 90 ]; then
		skip_unsupported "cannot mount a private binfmt_misc (needs Linux >= 6.7)"
	fi
	echo "status $status"
	echo "stderr: $stderr"
}

# The verbose line tiexec prints for a small program, without its time.
small() { echo "tiexec: '$1': loaded without remapping (SIZE of text, below --min-text 2.0 MiB), "; }

@test "stamped programs run through tiexec by path, with the same output as without it" {
	for n in probe-static probe-static-pie probe-pie probe-nopie; do
		in_ns "off; TIEXEC_VERBOSE=1 ./s/$n a 'b c' >off.out 2>off.err; echo \$? >>off.out
			on; TIEXEC_VERBOSE=1 ./s/$n a 'b c' >on.out 2>on.err; echo \$? >>on.out"
		[ "$status" -eq 0 ]
		same "$(cat "$BATS_FILE_TMPDIR/off.out")" "$(cat "$BATS_FILE_TMPDIR/on.out")"
		[ ! -s "$BATS_FILE_TMPDIR/off.err" ]
		[[ "$(no_size "$(cat "$BATS_FILE_TMPDIR/on.err")")" == "$(small "./s/$n")"*" ms" ]]
		grep -qx 'argv\[0\] ./s/'"$n" "$BATS_FILE_TMPDIR/on.out"
	done
}

@test "Go programs, static and cgo: arguments, environment, exit status" {
	for n in go-static go-cgo; do
		in_ns "TIEXEC_VERBOSE=1 PROBE_GO=hi PROBE_EXIT=5 ./s/$n one 'two 2'; echo status \$?"
		[ "$status" -eq 0 ]
		[[ "$output" == "args ./s/$n one two 2"$'\n''PROBE_GO hi'$'\n'*$'\n''goroutines ok'$'\n''status 5' ]]
		[[ "$(no_size "$stderr")" == *"$(small "./s/$n")"* ]]
	done
}

@test "started through PATH, sh -c, env, xargs and exec -a" {
	in_ns 'export PATH=$PWD/bin:$PATH TIEXEC_VERBOSE=1
		probe-in-path x | grep -E "^(argv|AT_EXECFN)"
		sh -c "./s/probe-static y" | grep "^argv"
		env ./s/probe-nopie z | grep "^argv"
		echo w | xargs ./s/probe-static-pie | grep "^argv"
		bash -c "exec -a renamed ./s/probe-pie v" | grep "^argv"'
	[ "$status" -eq 0 ]
	same "argv[0] probe-in-path
argv[1] x
AT_EXECFN $BATS_FILE_TMPDIR/bin/probe-in-path
argv[0] ./s/probe-static
argv[1] y
argv[0] ./s/probe-nopie
argv[1] z
argv[0] ./s/probe-static-pie
argv[1] w
argv[0] renamed
argv[1] v" "$output"
	[ "$(grep -c "^tiexec: '.*': loaded without remapping" <<<"$stderr")" -eq 5 ]
}

@test "from another stamped program, and from a supervisor script" {
	in_ns 'export TIEXEC_VERBOSE=1
		./s/env PROBE_EXIT=3 ./s/probe-pie from-env | grep "^argv"; echo "status ${PIPESTATUS[0]}"
		./s/sh -c "./s/probe-static from-sh; echo sh saw \$?" | grep -E "^(argv|sh saw)"
		./supervise ./s/go-static supervised | grep -E "^(args|supervisor)"'
	[ "$status" -eq 0 ]
	same "argv[0] ./s/probe-pie
argv[1] from-env
status 3
argv[0] ./s/probe-static
argv[1] from-sh
sh saw 0
args ./s/go-static supervised
supervisor: ./s/go-static exited with 0" "$output"
	# env, probe-pie, sh, probe-static, go-static: each through tiexec.
	[ "$(grep -c "^tiexec: './s/" <<<"$stderr")" -eq 5 ]
}

@test "exit statuses and signals pass through" {
	in_ns 'PROBE_EXIT=42 ./s/probe-pie >/dev/null; echo "exit $?"
		PROBE_SIGNAL=15 ./s/probe-static >/dev/null; echo "signal $?"
		PROBE_SIGNAL=6 ./s/probe-nopie >/dev/null; echo "abort $?"'
	[ "$status" -eq 0 ]
	same $'exit 42\nsignal 143\nabort 134' "$output"
}

@test "/proc/self/exe names the program, and its re-exec works" {
	in_ns './s/reexec; echo "status $?"'
	[ "$status" -eq 0 ]
	[[ "$output" == "parent exe=reexec argc=1 argv0=./s/reexec "*$'\n'"child exe=reexec argc=3 argv0=./s/reexec [child] [x y] "*$'\n'"status 7" ]]
}

@test "a large stamped program gets its text on huge pages, by its note's policy" {
	in_ns 'TIEXEC_VERBOSE=1 ./s/bigtext-pie report | grep "bigtext-pie$"
		TIEXEC_VERBOSE=1 ./s/big-thp report | grep -c "anon_huge_kb=[1-9]"
		TIEXEC_VERBOSE=1 TIEXEC_STRATEGY=off ./s/big-thp report | grep -c "anon_huge_kb=[1-9]"'
	[ "$status" -eq 1 ] # the last grep -c counts 0
	[[ "$output" == *"file_pmd_kb=63488 "* ]]
	[[ "$stderr" == *"tiexec: './s/bigtext-pie': 62.0 of 64.0 MiB text on 2 MiB pages (file 62.0, thp 0.0)"* ]]
	[[ "$stderr" == *"tiexec: './s/big-thp': 64.0 of 64.0 MiB text on 2 MiB pages (file 0.0, thp 64.0)"* ]]
	[[ "$output" == *$'\n1\n0' ]] # the environment overrode the note
}

@test "unstamped programs and ldd of stamped ones behave as before" {
	in_ns 'TIEXEC_VERBOSE=1 ./u/probe-pie a >u.out; echo "status $?"
		ldd ./s/probe-pie | sed "s/ (0x[0-9a-f]*)//"
		echo ---
		ldd ./u/probe-pie | sed "s/ (0x[0-9a-f]*)//"'
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	[[ "$output" == "status 0"* ]]
	ldd_s=$(sed -n '2,/^---$/p' <<<"$output" | sed '$d')
	ldd_u=$(sed -n '/^---$/,$p' <<<"$output" | sed 1d)
	[ -n "$ldd_s" ]
	same "$ldd_u" "$ldd_s"
}

@test "after unregister, stamped programs run directly again" {
	in_ns '"$1/packaging/tiexec-binfmt" unregister >/dev/null
		TIEXEC_VERBOSE=1 ./s/probe-pie a | grep "^argv"; echo "status $?"
		"$1/packaging/tiexec-binfmt" status; echo "registered $?"'
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	same $'argv[0] ./s/probe-pie\nargv[1] a\nstatus 0\ntiexec: not registered\nregistered 3' "$output"
}
