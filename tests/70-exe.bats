# /proc/self/exe, re-execution and what stays of the loader in the program.
#
# Where the process may change its executable link (CAP_CHECKPOINT_RESTORE
# or CAP_SYS_ADMIN in its user namespace, or CAP_SYS_RESOURCE), tiexec
# unmaps itself and points /proc/PID/exe at the program.  Where it may not
# (an ordinary user), the link keeps naming tiexec and TIEXEC_EXE joins the
# environment, so that re-executing /proc/self/exe runs the program again.
# Fixtures: reexec (C, execv("/proc/self/exe")) and go-reexec (Go,
# os.Executable() + exec), each printing what both generations see.
bats_require_minimum_version 1.5.0
load test_helper

setup_file() {
	# A directory an unprivileged user can reach, with copies of what runs.
	workdir_make tiexec-exe
	cp "$TIEXEC" "$W/tiexec"
	cp "$FIXTURES/reexec" "$FIXTURES/go-reexec" "$FIXTURES/probe-pie" "$FIXTURES/bigtext-pie" "$W/"
}

teardown_file() {
	workdir_remove
}

setup() {
	workdir_find
	cd "$W"
	[ "$(id -u)" = 0 ] || skip "needs root to run parts of it as another user"
}

# Runs what follows as uid/gid 65534 with no capabilities.
NOBODY=(setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all --)

@test "root: /proc/self/exe names the program, and re-executing it works (C)" {
	run_t ./tiexec --min-text=0 ./reexec
	[ "$status" -eq 7 ]
	same "parent exe=reexec argc=1 argv0=./reexec secure=0 dumpable=1 capeff=$(grep CapEff /proc/self/status | awk '{ print $2 }')
child exe=reexec argc=3 argv0=./reexec [child] [x y] secure=0 dumpable=1 capeff=$(grep CapEff /proc/self/status | awk '{ print $2 }')" "$output"
}

@test "root: /proc/self/exe names the program, and re-executing it works (Go)" {
	run_t ./tiexec --min-text=0 ./go-reexec
	[ "$status" -eq 0 ]
	same $'parent exe=go-reexec\nchild exe=go-reexec args=child,x y\nchild status 7' "$output"
}

@test "root: the environment is left alone (no TIEXEC_EXE)" {
	run_t env -i A=1 ./tiexec --min-text=0 /usr/bin/env
	[ "$status" -eq 0 ]
	same "A=1" "$output"
}

@test "no trace of the loader stays mapped in the program" {
	for how in direct loader; do
		coproc P {
			if [ $how = direct ]; then exec ./bigtext-pie wait; fi
			exec ./tiexec --strategy=file ./bigtext-pie wait
		}
		pid=$P_PID
		read -r ready <&"${P[0]}"
		[ "$ready" = ready ]
		maps=$(cat "/proc/$pid/maps")
		exe=$(readlink "/proc/$pid/exe")
		exec {P[1]}>&-
		wait "$pid" || true
		echo "$how: $(grep -c ' r-xp ' <<<"$maps") executable mappings, exe $exe"
		eval "${how}_x=$(grep -c ' r-xp ' <<<"$maps")"
		[ "$exe" = "$W/bigtext-pie" ]
		# (W's own name holds "tiexec": the loader's file is matched whole.)
		! grep -qE " $W/tiexec\$|memfd:tiexec" <<<"$maps" || false
	done
	# The same executable mappings: no stub page of the loader's left over.
	[ "$loader_x" -eq "$direct_x" ]
}

@test "unprivileged: /proc/self/exe names tiexec, re-executing it runs the program (C)" {
	run_t "${NOBODY[@]}" ./tiexec --min-text=0 ./reexec
	[ "$status" -eq 7 ]
	same "parent exe=tiexec argc=1 argv0=./reexec secure=0 dumpable=1 capeff=0000000000000000
child exe=tiexec argc=3 argv0=./reexec [child] [x y] secure=0 dumpable=1 capeff=0000000000000000" "$output"
	# Without libs, a child below --min-text is executed directly.
	run_t "${NOBODY[@]}" env TIEXEC_LIBS=0 ./tiexec --min-text=0 ./reexec
	[ "$status" -eq 7 ]
	[[ "$output" == *$'\nchild exe=reexec argc=3 '* ]]
}

@test "unprivileged: a re-exec of /proc/self/exe with a cleaned environment (no TIEXEC_EXE) is refused, never another program" {
	run_t env REEXEC_CLEAN=1 ./reexec
	[ "$status" -eq 7 ]
	run --separate-stderr timeout 60 env REEXEC_CLEAN=1 "${NOBODY[@]}" ./tiexec --min-text=0 ./reexec
	echo "$output"
	[ "$status" -eq 126 ]
	[[ "$output" == "parent exe=tiexec "* ]]
	[[ "$output" != *child* ]]
	same "tiexec: './reexec': a program re-executing itself through tiexec without TIEXEC_EXE in its environment: which program it is cannot be told (keep TIEXEC_EXE, or see the README on /proc/self/exe)" "$stderr"
	# Under another name than tiexec's (a resolved os.Executable() keeping
	# the program's argv[0]): the same.
	run --separate-stderr timeout 60 "${NOBODY[@]}" env -i PATH=/usr/bin:/bin bash -c 'exec -a ./server "$1" child id' _ "$W/tiexec"
	[ "$status" -eq 126 ]
	[[ "$stderr" == "tiexec: './server': a program re-executing itself through tiexec without TIEXEC_EXE"* ]]
	# tiexec by its own name still reads its command line.
	run_t "${NOBODY[@]}" env -i PATH=/usr/bin:/bin "$W/tiexec" --min-text=0 /bin/echo ok
	same ok "$output"
}

@test "unprivileged: re-executing via os.Executable runs the program (Go)" {
	run_t "${NOBODY[@]}" ./tiexec --min-text=0 ./go-reexec
	[ "$status" -eq 0 ]
	same $'parent exe=tiexec\nchild exe=go-reexec args=child,x y\nchild status 7' "$output"
}

@test "unprivileged: TIEXEC_EXE joins the environment, replacing an inherited one" {
	run_t "${NOBODY[@]}" env -i A=1 TIEXEC_EXE=/stale ./tiexec --min-text=0 /usr/bin/env
	[ "$status" -eq 0 ]
	[[ "$output" =~ ^A=1$'\n'TIEXEC_EXE=[1-9][0-9]*:/usr/bin/env$ ]]
}

@test "unprivileged: the hint is in /proc/PID/environ too, whether or not it fits the freed space" {
	# Started as ./tiexec, the words tiexec frees are too few for the
	# hint: the environment moves into the stack block.  Started by a long
	# path, the hint fits where tiexec's own words were.
	mkdir -p "$W/a-rather-long-directory-name-for-the-loader"
	cp ./tiexec "$W/a-rather-long-directory-name-for-the-loader/tiexec"
	for t in ./tiexec "$W/a-rather-long-directory-name-for-the-loader/tiexec"; do
		run_t "${NOBODY[@]}" env -i PROBE_A=1 TIEXEC_EXE=/stale PROBE_B=2 "$t" --min-text=0 ./probe-pie x
		[ "$status" -eq 0 ]
		[[ "$output" == *$'\nenv PROBE_A=1\nenv PROBE_B=2\nenvcount 3\nproc-environ matches yes\n'* ]]
		[[ "$output" == *$'\ncmdline ./probe-pie|x|\n'* ]]
		run_t "${NOBODY[@]}" env -i A=1 TIEXEC_EXE=/stale B=2 "$t" --min-text=0 /usr/bin/env
		[[ "$output" =~ ^A=1$'\n'B=2$'\n'TIEXEC_EXE=[1-9][0-9]*:/usr/bin/env$ ]]
	done
}

@test "unprivileged: 'tiexec ARGS' typed in a shell the program started is tiexec's command line" {
	# The hint's PID is the shell's parent's, not the shell's: no re-exec.
	run_t "${NOBODY[@]}" ./tiexec --min-text=0 /bin/bash -c './tiexec --version; echo "status $?"'
	same $'tiexec 0.1.0\nstatus 0' "$output"
}

@test "unprivileged: the program's shell exec()ing tiexec by its real path gets tiexec's command line" {
	# In place the hint's PID is the shell's own, and tiexec is named by
	# the path /proc/self/exe resolves to: still not a re-exec.
	run_t "${NOBODY[@]}" ./tiexec --min-text=0 /bin/sh -c "exec \"$W/tiexec\" --min-text=0 /bin/echo hi"
	[ "$status" -eq 0 ]
	same hi "$output"
}

@test "unprivileged: a long process title runs over the environment as directly, hint or not" {
	local long
	long=$(printf 'T%.0s' {1..400})
	run_t "${NOBODY[@]}" env -i "PROBE_TITLE=$long" PROBE_PAD=padding ./probe-pie a 'b c'
	local direct
	direct=$(grep '^title-cmdline' <<<"$output")
	[[ "$direct" =~ ^title-cmdline\ T{100,}\|+$ ]]
	# ./tiexec frees fewer bytes than the hint needs: the strings move.
	run_t "${NOBODY[@]}" env -i "PROBE_TITLE=$long" PROBE_PAD=padding ./tiexec --min-text=0 ./probe-pie a 'b c'
	[ "$status" -eq 0 ]
	same "$direct" "$(grep '^title-cmdline' <<<"$output")"
	[[ "$output" == *$'\nproc-environ matches yes\n'* ]]
}

@test "TIEXEC_EXE is honoured only under a name other than tiexec's own" {
	# Started as "tiexec", tiexec is tiexec: options, then the program.
	run_t env TIEXEC_EXE="$W/reexec" ./tiexec --version
	[ "$status" -eq 0 ]
	same "tiexec 0.1.0" "$output"
	# Started under another name (a re-exec), argv is the program's, whole.
	run_t env TIEXEC_EXE="$W/reexec" bash -c 'exec -a ./reexec ./tiexec child --version'
	[ "$status" -eq 7 ]
	[[ "$output" == "child exe=reexec argc=3 argv0=./reexec [child] [--version] "* ]]
}

@test "opt-in: a file capability on tiexec fixes /proc/self/exe, then is dropped" {
	command -v setcap >/dev/null || skip_unsupported "setcap (libcap2-bin) is not installed"
	cp ./tiexec ./tiexec-cap
	# CAP_CHECKPOINT_RESTORE lets PR_SET_MM_MAP set the link (CAP_SYS_RESOURCE,
	# for PR_SET_MM_EXE_FILE, works the same where the bounding set has it).
	setcap cap_checkpoint_restore+ep ./tiexec-cap
	run_t "${NOBODY[@]}" env -i A=1 ./tiexec-cap --min-text=0 ./reexec
	rm -f ./tiexec-cap
	[ "$status" -eq 7 ]
	# Not secure, dumpable, no capabilities, no TIEXEC_EXE: as a plain exec.
	same "parent exe=reexec argc=1 argv0=./reexec secure=0 dumpable=1 capeff=0000000000000000
child exe=reexec argc=3 argv0=./reexec [child] [x y] secure=0 dumpable=1 capeff=0000000000000000" "$output"
}

# in_ns SCRIPT: bash -c SCRIPT in a private user, mount and binfmt_misc
# namespace with tiexec registered (scripts/tiexec-binfmt).
in_ns() {
	run --separate-stderr timeout 120 unshare --user --map-root-user --mount --pid --fork \
		--kill-child --mount-proc bash -c '
		mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc || exit 90
		"$1/packaging/tiexec-binfmt" register --interpreter "$2/tiexec" >/dev/null || exit 91
		cd "$2"
		'"$1" _ "$BUILD" "$W"
	if [ "$status" -eq 90 ]; then
		skip_unsupported "cannot mount a private binfmt_misc (needs Linux >= 6.7)"
	fi
	echo "status $status, stderr: $stderr"
}

# mark FILE: sets the tiexec marker bit (byte 70) in a copy.
mark() {
	cp "$1" "$2"
	[ "$(od -An -tx1 -j70 -N1 "$2" | tr -d ' ')" = 00 ]
	printf '\100' | dd of="$2" bs=1 seek=70 conv=notrunc status=none
}

@test "binfmt, namespace root: the program is /proc/self/exe (C and Go)" {
	mark reexec reexec-m
	mark go-reexec go-reexec-m
	in_ns './reexec-m; echo "status $?"; ./go-reexec-m'
	[ "$status" -eq 0 ]
	same "parent exe=reexec-m argc=1 argv0=./reexec-m secure=0 dumpable=1 capeff=000001ffffffffff
child exe=reexec-m argc=3 argv0=./reexec-m [child] [x y] secure=0 dumpable=1 capeff=000001ffffffffff
status 7
parent exe=go-reexec-m
child exe=go-reexec-m args=child,x y
child status 7" "$output"
}

@test "binfmt, no capabilities: re-executing /proc/self/exe still runs the program (C and Go)" {
	mark reexec reexec-m
	mark go-reexec go-reexec-m
	# After an exec with an empty bounding set, the namespace's root has
	# no capabilities: the unprivileged case.
	in_ns 'setpriv --bounding-set=-all --inh-caps=-all ./reexec-m; echo "status $?"
		setpriv --bounding-set=-all --inh-caps=-all ./go-reexec-m'
	[ "$status" -eq 0 ]
	same "parent exe=tiexec argc=1 argv0=./reexec-m secure=0 dumpable=1 capeff=0000000000000000
child exe=tiexec argc=3 argv0=./reexec-m [child] [x y] secure=0 dumpable=1 capeff=0000000000000000
status 7
parent exe=tiexec
child exe=tiexec args=child,x y
child status 7" "$output"
}

@test "binfmt: a marked set-user-ID program is refused, not run unprivileged" {
	mark probe-pie probe-suid
	chmod 4755 probe-suid
	in_ns './probe-suid; echo "status $?"'
	rm -f probe-suid
	[ "$status" -eq 0 ]
	same "status 126" "$output"
	same "tiexec: './probe-suid': set-user-ID, set-group-ID or file capabilities: tiexec cannot run it with its privileges (remove the stamp: tiexec-stamp --remove)" "$stderr"
}
