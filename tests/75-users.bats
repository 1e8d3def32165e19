#!/usr/bin/env bats
# Ordinary users.  Every case runs as uid/gid 65534 with no capabilities
# anywhere, directly and through tiexec -- from the command line and
# transparently (a stamped copy, binfmt_misc in a private instance inside a
# user namespace whose ids 0-65535 are the machine's own, so that setpriv
# --reuid=65534 there is the real unprivileged user) -- and compares what
# the program does.  Then the opt-in (a file capability on tiexec) and
# ambient capabilities given by a service manager, with what each changes.
bats_require_minimum_version 1.5.0
load test_helper

NOBODY=(setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all --)

setup_file() {
	[ "$(id -u)" = 0 ] || return 0
	workdir_make tiexec-users
	cp "$TIEXEC" "$W/tiexec"
	cp "$FIXTURES/go-reexec" "$FIXTURES/traits" "$W/"
	local stamp=$BUILD/stamp/tiexec-stamp
	cp "$W/go-reexec" "$W/go-reexec-s"
	"$stamp" "$W/go-reexec-s"                   # below --min-text: loaded without remapping
	cp "$W/go-reexec" "$W/go-reexec-s0"
	"$stamp" --min-text=0 "$W/go-reexec-s0"     # remapped
	# $ORIGIN programs: DT_RUNPATH and DT_RPATH with ${ORIGIN}.
	origin_app "$W/o1" -Wl,--enable-new-dtags -Wl,-rpath,'$ORIGIN/lib'
	origin_app "$W/o2" -Wl,--disable-new-dtags -Wl,-rpath,'${ORIGIN}/lib'
	# musl's dynamic linker reads $ORIGIN from /proc/self/exe too.
	if command -v musl-gcc >/dev/null; then
		CC=musl-gcc origin_app "$W/o3" -Wl,-rpath,'$ORIGIN/lib'
	fi
	for d in o1 o2 o3; do
		cp "$W/$d/app" "$W/$d/app-s"
		"$stamp" --min-text=0 "$W/$d/app-s"
	done
	if command -v node >/dev/null; then
		cp "$(readlink -f "$(command -v node)")" "$W/node"
		cp "$W/node" "$W/node-s"
		"$stamp" "$W/node-s"
		cat >"$W/node-reexec.js" <<-'EOF'
			const cp = require('child_process');
			const cluster = require('cluster');
			if (cluster.isWorker) {
				process.send('worker ' + process.argv.length);
				process.exit(0);
			}
			const out = cp.execFileSync(process.execPath, ['-e', 'console.log("child", 6 * 7)']);
			console.log('execFileSync:', out.toString().trim());
			const w = cluster.fork();
			w.on('message', (m) => { console.log('cluster:', m); });
			w.on('exit', (code) => { console.log('worker exit', code); });
		EOF
	fi
	# Hardened settings for an ordinary user: MemoryDenyWriteExecute, a
	# memory cgroup.
	cp "$FIXTURES/mdwe" "$FIXTURES/probe-pie" "$FIXTURES/bigtext-pie" "$W/"
	cp "$FIXTURES/ctorprog" "$FIXTURES/libctor.so" "$FIXTURES/xexec" "$W/"
	cp "$W/bigtext-pie" "$W/bigtext-s"
	"$stamp" --min-text=0 --strategy=thp "$W/bigtext-s"
	"$ROOT/tests/fixtures/gentext.sh" "$W/big256" 256 pie
	chmod -R a+rX "$W"
	# The opt-in: tiexec with a file capability (after chmod, which keeps
	# it; a write would drop it).
	if command -v setcap >/dev/null; then
		cp "$W/tiexec" "$W/tiexec-cap"
		setcap cap_checkpoint_restore+ep "$W/tiexec-cap"
	fi
}

need_tiexec_cap() {
	[ -x ./tiexec-cap ] || skip_unsupported "setcap (libcap2-bin) is not installed"
}

teardown_file() {
	workdir_remove
}

setup() {
	[ "$(id -u)" = 0 ] || skip_unsupported "needs root to run parts of it as another user"
	workdir_find
	cd "$W"
}

# origin_app DIR FLAGS...: DIR/app needs DIR/lib/libbig.so through $ORIGIN.
origin_app() {
	local d=$1
	shift
	mkdir -p "$d/lib"
	echo 'int big(void) { return 42; }' >"$d/l.c"
	${CC:-gcc} -shared -fPIC -o "$d/lib/libbig.so" "$d/l.c"
	printf '#include <stdio.h>\nint big(void);\nint main(void) { printf("big %%d\\n", big()); return 0; }\n' >"$d/m.c"
	${CC:-gcc} -o "$d/app" "$d/m.c" -L"$d/lib" -lbig "$@"
}

# binfmt_nobody SCRIPT: bash -c SCRIPT in $W as uid/gid 65534 with no
# capabilities, with tiexec ($W/${INTERP:-tiexec}) registered in a private
# binfmt_misc (scripts/binfmt-ns).  With AMBIENT=NAME, the user has
# capability NAME in its ambient set (what a service manager's
# AmbientCapabilities= gives).  Sets $status, $output, $stderr like run
# --separate-stderr.
binfmt_nobody() {
	local t=$BATS_TEST_TMPDIR amb=()
	[ -z "${AMBIENT:-}" ] || amb=(--ambient "$AMBIENT")
	status=0
	"$ROOT/scripts/binfmt-ns" --user nobody "${amb[@]}" --interpreter "$W/${INTERP:-tiexec}" \
		--dir "$W" "$1" >"$t/ns.out" 2>"$t/ns.err" || status=$?
	output=$(cat "$t/ns.out")
	stderr=$(cat "$t/ns.err")
	echo "binfmt_nobody: status $status, stderr: $stderr"
	[ "$status" -ne 90 ] || skip_unsupported "cannot mount a private binfmt_misc (needs Linux >= 6.7)"
}

@test "\$ORIGIN (glibc DT_RUNPATH, DT_RPATH \${ORIGIN}, musl): direct, command line, binfmt_misc" {
	[ -x "$W/o3/app" ] || skip_unsupported "musl-gcc is not installed (Debian package musl-tools)"
	for d in o1 o2 o3; do
		run_t "${NOBODY[@]}" "$W/$d/app"
		same "big 42" "$output"
		run_t "${NOBODY[@]}" ./tiexec --min-text=0 "$W/$d/app"
		[ "$status" -eq 0 ]
		same "big 42" "$output"
		# By a relative path, from elsewhere.
		run_t "${NOBODY[@]}" bash -c "cd /tmp && exec \"$W/tiexec\" --min-text=0 \"..$W/$d/app\""
		same "big 42" "$output"
		binfmt_nobody "TIEXEC_VERBOSE=1 ./$d/app-s; cd $d/lib && ../app-s"
		[ "$status" -eq 0 ]
		same $'big 42\nbig 42' "$output"
		[[ "$stderr" == "tiexec: './$d/app-s': "*" ms" ]]
	done
}

@test "Go re-executing os.Executable() with argv[0] = that path (Go's default): above and below --min-text" {
	local want=$'parent exe=go-reexec\nchild exe=go-reexec args=child,x y\nchild status 7'
	local want_t=$'parent exe=tiexec\nchild exe=go-reexec args=child,x y\nchild status 7'
	run_t "${NOBODY[@]}" env GOREEXEC_ARGV0=exe ./go-reexec
	same "$want" "$output"
	run_t "${NOBODY[@]}" env GOREEXEC_ARGV0=exe ./tiexec --min-text=0 ./go-reexec
	same "$want_t" "$output"
	# Through binfmt_misc the child is the stamped program, so it goes
	# through tiexec too.
	binfmt_nobody 'export GOREEXEC_ARGV0=exe; ./go-reexec-s; ./go-reexec-s0'
	[ "$status" -eq 0 ]
	want_t=${want_t/child exe=go-reexec/child exe=tiexec}
	same "$want_t"$'\n'"$want_t" "$output"
}

@test "node: execFileSync(process.execPath) and cluster.fork() run node again" {
	[ -x "$W/node" ] || skip_unsupported "node is not installed (Debian package nodejs)"
	local want=$'execFileSync: child 42\ncluster: worker 2\nworker exit 0'
	run_t "${NOBODY[@]}" ./node node-reexec.js
	same "$want" "$output"
	run_t "${NOBODY[@]}" ./tiexec ./node node-reexec.js
	[ "$status" -eq 0 ]
	same "$want" "$output"
	binfmt_nobody './node-s node-reexec.js'
	[ "$status" -eq 0 ]
	same "$want" "$output"
}

@test "node: process.execPath names tiexec by default, node with the opt-in" {
	[ -x "$W/node" ] || skip_unsupported "node is not installed (Debian package nodejs)"
	need_tiexec_cap
	run_t "${NOBODY[@]}" ./tiexec ./node -e 'console.log(require("path").basename(process.execPath))'
	same tiexec "$output"
	run_t "${NOBODY[@]}" ./tiexec-cap ./node -e 'console.log(require("path").basename(process.execPath))'
	same node "$output"
}

@test "opt-in (file capability): the secure exec's side effects, as documented" {
	need_tiexec_cap
	local run='ulimit -s 65536; exec setarch -R "$@"'
	run_t setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all --pdeathsig TERM -- \
		bash -c "$run" _ ./traits
	local direct=$output
	same $'pdeathsig 15\nstack 65536\npersona 0x40000\nsecure 0\ncapamb 0000000000000000\nexe traits' "$direct"
	# Without the opt-in: the same, except /proc/self/exe.
	run_t setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all --pdeathsig TERM -- \
		bash -c "$run" _ ./tiexec --min-text=0 ./traits
	same "${direct%exe traits}exe tiexec" "$output"
	# With it: the kernel cleared the parent-death signal and the
	# personality flags and lowered RLIMIT_STACK to 8 MiB (tiexec cannot
	# know the values it replaced); the program itself sees AT_SECURE 0.
	run_t setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all --pdeathsig TERM -- \
		bash -c "$run" _ ./tiexec-cap --min-text=0 ./traits
	same $'pdeathsig 0\nstack 8192\npersona 0x0\nsecure 0\ncapamb 0000000000000000\nexe traits' "$output"
	# Under no_new_privs the capability is not granted, the exec is secure
	# all the same, and the link stays tiexec's.
	run_t setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all --pdeathsig TERM \
		--no-new-privs -- bash -c "$run" _ ./tiexec-cap --min-text=0 ./traits
	same $'pdeathsig 0\nstack 8192\npersona 0x0\nsecure 0\ncapamb 0000000000000000\nexe tiexec-cap' "$output"
	# Ambient capabilities are cleared by the exec of a file with file
	# capabilities.
	run_t capsh --keep=1 --user=nobody --inh=cap_checkpoint_restore --addamb=cap_checkpoint_restore -- \
		-c 'exec ./tiexec-cap --min-text=0 ./traits'
	[[ "$output" == *$'\ncapamb 0000000000000000\nexe traits' ]]
}

# waiting HOW PROG FN: runs PROG (a bigtext program) "wait" as uid 65534,
# directly (HOW=direct) or through ./HOW; once it is ready, calls FN HOW PID,
# then lets it end.
waiting() {
	local how=$1 prog=$2 fn=$3 ready
	coproc P {
		case $how in
		direct) exec "${NOBODY[@]}" "$prog" wait ;;
		*) exec "${NOBODY[@]}" "./$how" "$prog" wait ;;
		esac
	}
	local pid=$P_PID
	read -r ready <&"${P[0]}"
	[ "$ready" = ready ] || return 1
	"$fn" "$how" "$pid"
	exec {P[1]}>&-
	wait "$pid" || true
}

try_write() {
	if "${NOBODY[@]}" sh -c ': >>./busy' 2>"$BATS_TEST_TMPDIR/err"; then
		got+=("$1 writable")
	elif grep -q 'Text file busy' "$BATS_TEST_TMPDIR/err"; then
		got+=("$1 busy")
	else
		got+=("$1 $(cat "$BATS_TEST_TMPDIR/err")")
	fi
}

@test "writing the running binary: allowed by default, Text file busy with the opt-in (as directly)" {
	need_tiexec_cap
	cp "$FIXTURES/bigtext-pie" ./busy
	chmod 777 ./busy
	got=()
	for how in direct tiexec tiexec-cap; do
		waiting $how ./busy try_write
	done
	rm -f ./busy
	same "direct busy tiexec writable tiexec-cap busy" "${got[*]}"
}

@test "a program open for writing: Text file busy (126) as directly, where a lease tells (root, the file's owner)" {
	cp ./probe-pie ./wbusy
	chmod 755 ./wbusy
	local w
	exec {w}>>./wbusy
	# who owner: direct status / tiexec status
	local got=() who owner
	for who in root nobody-owner nobody; do
		local as=()
		owner=0
		[ "$who" = root ] || as=("${NOBODY[@]}")
		[ "$who" = nobody-owner ] && owner=65534
		chown "$owner" ./wbusy
		run "${as[@]}" ./xexec ./wbusy
		got+=("$who $status")
		[ "$status" -eq 126 ]
		run --separate-stderr "${as[@]}" ./tiexec ./wbusy
		got+=("$status")
		[ "$status" -ne 126 ] || [ "$stderr" = "tiexec: './wbusy': Text file busy" ]
	done
	exec {w}>&-
	rm -f ./wbusy
	# Another user's file: no lease, no way to tell: it runs (README, Limits).
	same "root 126 126 nobody-owner 126 126 nobody 126 0" "${got[*]}"
}

@test "ambient CAP_CHECKPOINT_RESTORE (a service manager's): no secure exec, the program keeps it" {
	command -v capsh >/dev/null || skip_unsupported "capsh (libcap2-bin) is not installed"
	local amb=(capsh --keep=1 --user=nobody --inh=cap_checkpoint_restore --addamb=cap_checkpoint_restore --)
	run_t "${amb[@]}" -c 'exec ./traits'
	local direct=$output
	[[ "$direct" == *$'\ncapamb 0000010000000000\n'* ]]
	run_t "${amb[@]}" -c 'exec ./tiexec --min-text=0 ./traits'
	same "$direct" "$output"
}

@test "chromium --headless --dump-dom: with the opt-ins (file capability, ambient capability), its text on 2 MiB pages" {
	local c=/usr/lib/chromium/chromium
	[ -x "$c" ] || skip_unsupported "chromium is not installed (Debian package chromium)"
	mkdir -m 777 "$W/cr"
	printf '%s\n' '<html><body><p id=x>hello <b>tiexec</b></p>' \
		'<script>document.getElementById("x").dataset.js = "ran"</script></body></html>' >"$W/cr/page.html"
	chmod 644 "$W/cr/page.html"
	need_tiexec_cap
	local args=(--headless --no-sandbox --disable-gpu --dump-dom "file://$W/cr/page.html")
	run --separate-stderr timeout 120 "${NOBODY[@]}" env HOME="$W/cr" "$c" --user-data-dir="$W/cr/d1" "${args[@]}"
	[ "$status" -eq 0 ]
	[[ "$output" == *'data-js="ran"'* ]]
	local direct=$output
	run --separate-stderr timeout 120 "${NOBODY[@]}" env HOME="$W/cr" ./tiexec-cap -v "$c" \
		--user-data-dir="$W/cr/d2" "${args[@]}"
	echo "tiexec: $status, $(grep '^tiexec' <<<"$stderr")"
	[ "$status" -eq 0 ]
	same "$direct" "$output"
	# Most of its ~225 MiB of text on huge pages (file or thp, whichever
	# this machine's page cache allows).
	[[ "$stderr" =~ tiexec:\ \'$c\':\ ([0-9]+)\.[0-9]\ of\ ([0-9]+)\.[0-9]\ MiB ]]
	[ "${BASH_REMATCH[1]}" -ge $((BASH_REMATCH[2] * 9 / 10)) ]
	# Transparently (a stamped copy of chromium's directory): chromium
	# starts its children by executing /proc/self/exe under no_new_privs,
	# where a file capability is not granted, so the opt-in that reaches
	# them is an ambient capability.
	cp -a /usr/lib/chromium "$W/chromium"
	"$BUILD/stamp/tiexec-stamp" "$W/chromium/chromium"
	AMBIENT=checkpoint_restore binfmt_nobody \
		"HOME=$W/cr TIEXEC_VERBOSE=1 ./chromium/chromium --user-data-dir=$W/cr/d3 ${args[*]}"
	rm -rf "$W/chromium"
	[ "$status" -eq 0 ]
	same "$direct" "$output"
	[[ "$stderr" == *"tiexec: './chromium/chromium': "*" of "*" MiB text on 2 MiB pages"* ]]
	[[ "$stderr" != *"ICU data"* ]]
}

# deploy_reexec HOW: starts ./deployed (a copy of reexec) as uid 65534 --
# directly, through ./tiexec, or through ./tiexec-cap -- replaces the file by
# rename (a deploy) or deletes it while it runs, then lets it re-execute
# /proc/self/exe.  Prints what the re-executed child reported, or its
# status.
deploy_reexec() {
	local how=$1 what=$2 t=$BATS_TEST_TMPDIR line
	cp "$FIXTURES/reexec" ./deployed
	rm -f "$t/in" "$t/out"
	mkfifo -m 666 "$t/in"
	case $how in
	direct) "${NOBODY[@]}" env REEXEC_WAIT=1 ./deployed <"$t/in" >"$t/out" 2>&1 & ;;
	*) "${NOBODY[@]}" env REEXEC_WAIT=1 "./$how" --min-text=0 ./deployed <"$t/in" >"$t/out" 2>&1 & ;;
	esac
	local pid=$!
	exec {in}>"$t/in"
	for _ in $(seq 500); do grep -q '^parent ' "$t/out" 2>/dev/null && break; sleep 0.01; done
	if [ "$what" = replace ]; then
		cp "$FIXTURES/probe-pie" ./deployed.new
		mv -f ./deployed.new ./deployed
	else
		rm -f ./deployed
	fi
	echo go >&"$in"
	exec {in}>&-
	wait "$pid" && st=0 || st=$?
	rm -f ./deployed
	line=$(sed -n 2p "$t/out")
	echo "$how $what: ${line%% secure=*} status $st"
}

@test "re-executing after a deploy: the old program with the opt-in (as directly), the new file or 127 by default" {
	need_tiexec_cap
	local out=()
	for how in direct tiexec-cap tiexec; do
		out+=("$(deploy_reexec $how replace)")
		out+=("$(deploy_reexec $how delete)")
	done
	printf '%s\n' "${out[@]}"
	same "direct replace: child exe=deployed (deleted) argc=3 argv0=./deployed [child] [x y] status 7
direct delete: child exe=deployed (deleted) argc=3 argv0=./deployed [child] [x y] status 7
tiexec-cap replace: child exe=deployed (deleted) argc=3 argv0=./deployed [child] [x y] status 7
tiexec-cap delete: child exe=deployed (deleted) argc=3 argv0=./deployed [child] [x y] status 7
tiexec replace: argc 3 status 0
tiexec delete: tiexec: '$W/deployed': No such file or directory status 127" "$(printf '%s\n' "${out[@]}")"
}

try_gdb() {
	if timeout 60 gdb -nx -batch -p "$2" -ex bt 2>/dev/null | grep -q ' in wait_eof ('; then
		got+=("$1 symbols")
	else
		got+=("$1 no-symbols")
	fi
}

@test "gdb -p: the program's symbols with the opt-in, as directly; not by default" {
	command -v gdb >/dev/null || skip_unsupported "gdb is not installed"
	need_tiexec_cap
	cp "$FIXTURES/bigtext-pie" ./gdbme
	got=()
	for how in direct tiexec-cap tiexec; do
		waiting $how ./gdbme try_gdb
	done
	rm -f ./gdbme
	same "direct symbols tiexec-cap symbols tiexec no-symbols" "${got[*]}"
}

@test "opt-in: the capability is effective only around the exe prctl (strace)" {
	command -v strace >/dev/null || skip_unsupported "strace is not installed"
	need_tiexec_cap
	# Traced by root, the exec still gets the file capability.
	run_t strace -o "$BATS_TEST_TMPDIR/st" -e trace=execve,capset,prctl,openat,read,pread64 \
		"${NOBODY[@]}" ./tiexec-cap --min-text=0 ./traits
	[ "$status" -eq 0 ]
	[[ "$output" == *"exe traits"* ]]
	# From tiexec's exec on: E0 effective emptied, E1 raised, DROP all
	# gone, io any read or open, mm PR_SET_MM_MAP.  The probe (E1 mm),
	# tiexec leaving its file (E0 io: it reads its own), the link set
	# (E1 mm), the bounds told (E0 mm), every capability dropped before
	# ld.so runs; after that (ld.so, the stage after it, the program) only
	# io.
	local seq
	seq=$(sed -n '/execve("\.\/tiexec-cap"/,$p' "$BATS_TEST_TMPDIR/st" | awk '
		/capset\(.*permitted=0,/ { print "DROP"; next }
		/capset\(.*effective=0,/ { print "E0"; next }
		/capset\(/ { print "E1"; next }
		/PR_SET_MM_MAP/ { print "mm"; next }
		/openat|read\(|pread64/ { print "io"; next }' | uniq | tr '\n' ' ')
	echo "$seq"
	[[ "$seq" =~ ^E0\ io\ E1\ mm\ E0\ io\ E1\ mm\ E0\ mm\ DROP\ io\ $ ]]
}

@test "opt-in: no constructor, preload or audit module ever has the capability (uid 65534)" {
	need_tiexec_cap
	local how out
	for how in plain preload audit; do
		local env=(CTOR=caps) prog=./ctorprog
		case $how in
		preload) env+=(LD_PRELOAD="$PWD/libctor.so") prog=./probe-pie ;;
		audit) env+=(LD_AUDIT="$PWD/libctor.so") prog=./probe-pie ;;
		esac
		run_t env "${env[@]}" "${NOBODY[@]}" "$prog"
		local direct
		direct=$(grep '^ctor child' <<<"$output")
		[[ "$direct" == *"CapEff:"*"0000000000000000"*"CapPrm:"*"0000000000000000"* ]]
		run_t env "${env[@]}" "${NOBODY[@]}" ./tiexec-cap --min-text=0 "$prog"
		[ "$status" -eq 0 ]
		out=$(grep '^ctor child' <<<"$output")
		echo "$how: $out"
		same "$direct" "$out"
	done
}

# ---- hardened settings, for an ordinary user -------------------------------------

@test "MemoryDenyWriteExecute (prctl, seccomp) as uid 65534: direct, command line, binfmt_misc alike" {
	./mdwe prctl true || skip_unsupported "PR_SET_MDWE refused (Linux >= 6.3)"
	local how want
	for how in prctl seccomp; do
		run_t "${NOBODY[@]}" ./mdwe $how ./probe-pie a 'b c'
		[ "$status" -eq 0 ]
		run_t "${NOBODY[@]}" ./mdwe $how ./tiexec --min-text=0 ./probe-pie a 'b c'
		[ "$status" -eq 0 ] # the final stage ran
		[[ "$output" == *"argv[2] b c"* ]]
		run_t "${NOBODY[@]}" ./mdwe $how ./bigtext-pie loop 2000
		[ "$status" -eq 0 ]
		want=$output
		# The default strategy maps the page cache's 2 MiB folios.
		run --separate-stderr timeout 60 "${NOBODY[@]}" ./mdwe $how ./tiexec -v --min-text=0 ./bigtext-pie loop 2000
		echo "$how, cli, auto: $status, $stderr"
		[ "$status" -eq 0 ]
		same "$want" "$output"
		[[ "$stderr" =~ \(file\ [1-9][0-9]*\.0, ]]
		# A copy under MDWE goes through a memfd or is skipped, and says so.
		run --separate-stderr timeout 60 "${NOBODY[@]}" ./mdwe $how ./tiexec -v --strategy=thp ./bigtext-pie loop 2000
		echo "$how, cli, thp: $status, $stderr"
		[ "$status" -eq 0 ]
		same "$want" "$output"
		[[ "$stderr" == *"MemoryDenyWriteExecute"* || "$stderr" =~ \(file\ 0\.0,\ thp\ [1-9] ]]
		binfmt_nobody "TIEXEC_VERBOSE=1 ./mdwe $how ./bigtext-s loop 2000"
		[ "$status" -eq 0 ]
		same "$want" "$output"
		[[ "$stderr" == "tiexec: './bigtext-s': "* ]]
	done
}

@test "a 200 MiB memory cgroup, as uid 65534: 256 MiB of text is copied only as far as the limit allows" {
	cg_make $((200 << 20))
	# in_cg: as uid 65534, inside the group.
	in_cg() { run --separate-stderr timeout 60 sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$CG" "${NOBODY[@]}" "$@"; }
	in_cg ./big256 loop 20000
	local st=$status want=$output
	in_cg ./tiexec -v --strategy=thp ./big256 loop 20000
	local st2=$status out2=$output err2=$stderr
	cg_remove
	echo "direct: $st; thp: $st2, $err2"
	[ "$st" -eq 0 ]
	[ "$st2" -eq 0 ] # not OOM-killed (137)
	same "$want" "$out2"
	[[ "$err2" == *"thp: the memory cgroup's limit (memory.limit_in_bytes) leaves no room for more copies"* ]]
}

# An execute-only file (mode 0711): from the command line tiexec cannot
# read it and runs it with a plain execve (10-loader).  Through binfmt_misc
# the kernel opens it and hands tiexec the descriptor, so it is loaded with
# its text on 2 MiB pages; the process stays non-dumpable, as the kernel
# makes a direct exec of a file its caller may not read, so its memory
# stays unreadable through /proc and ptrace -- also with the opt-in, whose
# secure exec tiexec otherwise undoes by making the process dumpable.
@test "an execute-only stamped program through binfmt_misc: 2 MiB pages, non-dumpable as directly (opt-in too)" {
	need_tiexec_cap
	cp "$FIXTURES/bigtext-pie" "$W/eo-plain"
	cp "$FIXTURES/bigtext-pie" "$W/eo-stamped"
	"$BUILD/stamp/tiexec-stamp" "$W/eo-stamped" >/dev/null
	chmod 711 "$W/eo-plain" "$W/eo-stamped"
	for interp in tiexec tiexec-cap; do
		run_t "$ROOT/scripts/binfmt-ns" --user nobody --interpreter "$W/$interp" --dir "$W" '
			for p in eo-plain eo-stamped; do
				coproc B { exec env TIEXEC_VERBOSE=1 ./$p wait 2>&1; }
				read -r l <&"${B[0]}"
				if cat /proc/$B_PID/maps >/dev/null 2>&1; then r=readable; else r=unreadable; fi
				echo "$p: $r: $l"
				exec {B[1]}>&-
				wait $B_PID
			done'
		echo "$interp: $output"
		[ "$status" -ne 90 ] || skip_unsupported "no private binfmt_misc instance (needs Linux >= 6.7)"
		[ "$status" -eq 0 ]
		[ "${lines[0]}" = "eo-plain: unreadable: ready" ]
		[[ "${lines[1]}" == "eo-stamped: unreadable: tiexec: './eo-stamped': 62.0 of 64.0 MiB text on 2 MiB pages"* ]]
	done
}
