#!/usr/bin/env bats
# Stamped programs in containers, under a real runtime (podman with runc),
# with images built here FROM scratch (no registry).  The rule lives in a
# private binfmt_misc instance: podman runs inside scripts/binfmt-ns (a user
# namespace mapping ids 0-65535 1:1, where the rule is registered), and its
# containers, in that namespace, find the rule there; the machine's own
# binfmt_misc is never touched.  The rule's F flag is what lets a container
# without tiexec in it run its stamped programs through tiexec.
#
# Each case runs the same program stamped and unstamped in the same
# container settings: the same output and exit status, and the stamped one
# with its text on 2 MiB pages.  Cases: root; a user with every capability
# dropped; a read-only root; a memory limit; the default seccomp profile (on
# in every case, checked); a dynamic program whose ld.so and libc are the
# image's.  Nothing started outlives a test: containers run with --rm, and
# the images are removed at the end.
bats_require_minimum_version 1.5.0
load test_helper

# $PODMAN, $PODMAN_RUN_FLAGS and $RUN_ID: test_helper.bash.
RUN_FLAGS="--rm $PODMAN_RUN_FLAGS"
IMAGES=("localhost/tiexec-test-static:$RUN_ID" "localhost/tiexec-test-pie:$RUN_ID" "localhost/tiexec-test-installer:$RUN_ID")

setup_file() {
	command -v podman >/dev/null && command -v runc >/dev/null && [ -x /bin/busybox ] || return 0
	[ "$(id -u)" = 0 ] || return 0
	local t=$BATS_FILE_TMPDIR
	# A static program, stamped and not, FROM scratch.
	mkdir -p "$t/static"
	cp "$FIXTURES/bigtext-static" "$t/static/plain"
	cp "$FIXTURES/bigtext-static" "$t/static/stamped"
	"$BUILD/stamp/tiexec-stamp" "$t/static/stamped"
	# busybox (static) to look at the container's cgroup from inside.
	cp /bin/busybox "$t/static/busybox"
	printf 'FROM scratch\nCOPY plain stamped busybox /\n' >"$t/static/Containerfile"
	# A PIE with the image's own ld.so and libc (the machine's files).
	mkdir -p "$t/pie/lib64" "$t/pie/lib/x86_64-linux-gnu"
	cp "$FIXTURES/bigtext-pie" "$t/pie/plain"
	cp "$FIXTURES/bigtext-pie" "$t/pie/stamped"
	"$BUILD/stamp/tiexec-stamp" "$t/pie/stamped"
	cp -L /lib64/ld-linux-x86-64.so.2 "$t/pie/lib64/"
	cp -L "$(ldd "$FIXTURES/bigtext-pie" | awk '$1 == "libc.so.6" { print $3 }')" "$t/pie/lib/x86_64-linux-gnu/"
	printf 'FROM scratch\nCOPY plain stamped /\nCOPY lib64 /lib64\nCOPY lib /lib\n' >"$t/pie/Containerfile"
	$PODMAN build -q -t "${IMAGES[0]}" "$t/static" >"$t/build.log" 2>&1 &&
		$PODMAN build -q -t "${IMAGES[1]}" "$t/pie" >>"$t/build.log" 2>&1 &&
		TIEXEC_BUILD=$BUILD "$ROOT/scripts/image" --tag "${IMAGES[2]}" >>"$t/build.log" 2>&1 ||
		echo failed >>"$t/build.log"
}

teardown_file() {
	command -v podman >/dev/null || return 0
	$PODMAN rmi -f "${IMAGES[@]}" >/dev/null 2>&1 || true
}

setup() {
	command -v podman >/dev/null && command -v runc >/dev/null && [ -x /bin/busybox ] ||
		skip_unsupported "podman, runc or busybox-static is not installed (scripts/test installs them)"
	[ "$(id -u)" = 0 ] || skip_unsupported "needs root (user namespaces with ids 0-65535 mapped)"
	if grep -q failed "$BATS_FILE_TMPDIR/build.log"; then
		cat "$BATS_FILE_TMPDIR/build.log"
		return 1
	fi
}

# in_pods 'SCRIPT' [BINFMT-NS OPTIONS]: SCRIPT (bash) where podman's
# containers see tiexec's rule (scripts/binfmt-ns); $PODMAN and $RUN_FLAGS
# are set there.
in_pods() {
	run --separate-stderr env PODMAN="$PODMAN" RUN_FLAGS="$RUN_FLAGS" timeout 300 \
		"$ROOT/scripts/binfmt-ns" "${@:2}" "$1"
	echo "status $status"$'\n'"stdout: $output"$'\n'"stderr: $stderr"
	[ "$status" -ne 90 ] || skip_unsupported "no private binfmt_misc instance (needs Linux >= 6.7)"
}

# case_script IMAGE 'RUN OPTIONS': for the plain and the stamped program,
# "NAME status STATUS sum SUM huge KB seccomp MODE": from `loop` the sum
# and status, from `report` the program's text on 2 MiB pages (kB), from
# `signals` its Seccomp mode (2: a filter, podman's default profile).
case_script() {
	cat <<EOF
for p in plain stamped; do
	sum=\$(\$PODMAN run \$RUN_FLAGS $2 $1 /\$p loop 100000); st=\$?; sum=\${sum#sum }
	huge=\$(\$PODMAN run \$RUN_FLAGS $2 $1 /\$p report |
		awk '/^map / && / r-xp / { for (i = 1; i <= NF; i++) if (\$i ~ /^(file_pmd_kb|anon_huge_kb|hugetlb_kb)=/) { split(\$i, a, "="); kb += a[2] } } END { print kb + 0 }')
	sc=\$(\$PODMAN run \$RUN_FLAGS $2 $1 /\$p signals | awk '\$1 == "Seccomp:" { print \$2 }')
	echo "\$p status \$st sum \$sum huge \$huge seccomp \$sc"
done
EOF
}

# check_case: the two lines of case_script's output: the same status, sum
# and seccomp mode (2), the plain one with its text on 4 KiB pages, the
# stamped one with at least 60 MiB on 2 MiB pages.
check_case() {
	local plain stamped
	plain=$(grep '^plain ' <<<"$output")
	stamped=$(grep '^stamped ' <<<"$output")
	[[ "$plain" =~ ^plain\ status\ 0\ sum\ ([0-9]+)\ huge\ ([0-9]+)\ seccomp\ 2$ ]] || { echo "plain: $plain"; return 1; }
	local sum=${BASH_REMATCH[1]} phuge=${BASH_REMATCH[2]}
	[[ "$stamped" =~ ^stamped\ status\ 0\ sum\ $sum\ huge\ ([0-9]+)\ seccomp\ 2$ ]] || { echo "stamped: $stamped"; return 1; }
	[ "${BASH_REMATCH[1]}" -ge $((60 * 1024)) ] || { echo "stamped: only ${BASH_REMATCH[1]} kB on 2 MiB pages"; return 1; }
	[ "$phuge" -lt $((60 * 1024)) ]
}

@test "container, root: the stamped static program runs through tiexec on 2 MiB pages, as the plain one otherwise" {
	in_pods "$(case_script "${IMAGES[0]}" "")"
	[ "$status" -eq 0 ]
	check_case
}

@test "container, a user with every capability dropped" {
	in_pods "$(case_script "${IMAGES[0]}" "--user 1000:1000 --cap-drop=ALL")"
	[ "$status" -eq 0 ]
	check_case
}

@test "container, a read-only root" {
	in_pods "$(case_script "${IMAGES[0]}" "--read-only")"
	[ "$status" -eq 0 ]
	check_case
}

@test "container, a memory limit of 256 MiB" {
	in_pods "$(case_script "${IMAGES[0]}" "--memory 256m")"
	[ "$status" -eq 0 ]
	check_case
	# The limit is in force in the container's cgroup (v1 or v2).
	in_pods '$PODMAN run $RUN_FLAGS --memory 256m '"${IMAGES[0]}"' /busybox sh -c \
		"cat /sys/fs/cgroup/memory/memory.limit_in_bytes /sys/fs/cgroup/memory.max 2>/dev/null; exit 0"'
	[ "$status" -eq 0 ]
	same 268435456 "$output"
}

@test "container, a dynamic program with the image's own ld.so and libc" {
	in_pods "$(case_script "${IMAGES[1]}" "--user 1000:1000 --cap-drop=ALL")"
	[ "$status" -eq 0 ]
	check_case
}

@test "container: an exit status passes through, and nothing is left running" {
	in_pods '
		for p in plain stamped; do
			$PODMAN run $RUN_FLAGS --cap-drop=ALL '"${IMAGES[0]}"' /$p 2>/dev/null; echo "$p usage status $?"
		done
		$PODMAN ps -a --format "{{.Image}}" | grep -c ":'"$RUN_ID"'" || true'
	[ "$status" -eq 0 ]
	same "plain usage status 2
stamped usage status 2
0" "$output"
}

@test "installer image: install, a stamped program in another container, uninstall, it still runs plainly" {
	# A private binfmt_misc with no rule: the installer, privileged, mounts
	# it and registers the rule with its own loader (flag F keeps it open).
	# "via" is what a stamped program's start says with TIEXEC_VERBOSE=1:
	# tiexec's line, or nothing when it ran directly.  After uninstall no
	# text is copied (a direct exec may still get 2 MiB pages of the page
	# cache by itself, where tiexec left it in 2 MiB folios).
	in_pods '
		via() { $PODMAN run $RUN_FLAGS -e TIEXEC_VERBOSE=1 '"${IMAGES[0]}"' /stamped loop 1000 2>&1 >/dev/null |
			sed -n -E "s/: [1-9][0-9.]* of ([0-9.]+) MiB text on 2 MiB pages.*/: on 2 MiB pages/p"; }
		echo "before: $(via)"
		$PODMAN run $RUN_FLAGS --privileged '"${IMAGES[2]}"' install
		$PODMAN run $RUN_FLAGS --privileged '"${IMAGES[2]}"' status | head -n 4
		echo "installed: $(via)"
		echo "sum: $($PODMAN run $RUN_FLAGS '"${IMAGES[0]}"' /stamped loop 1000)"
		$PODMAN run $RUN_FLAGS --privileged '"${IMAGES[2]}"' uninstall
		echo "rule: $(ls /proc/sys/fs/binfmt_misc | grep -c tiexec)"
		echo "uninstalled: $(via)"
		echo "copied after: $($PODMAN run $RUN_FLAGS '"${IMAGES[0]}"' /stamped report |
			awk "/^map / && / r-xp / { for (i = 1; i <= NF; i++) if (\$i ~ /^anon_huge_kb=/) { split(\$i, a, \"=\"); kb += a[2] } } END { print kb + 0 }")"
		echo "sum: $($PODMAN run $RUN_FLAGS '"${IMAGES[0]}"' /stamped loop 1000)"
		$PODMAN run $RUN_FLAGS '"${IMAGES[2]}"' frob 2>/dev/null; echo "usage status $?"' --interpreter none
	[ "$status" -eq 0 ]
	local sum
	sum=$(grep -m1 '^sum: ' <<<"$output")
	same "before: 
tiexec: registered, interpreter /usr/libexec/tiexec/tiexec, flags POF
tiexec: registered
enabled
interpreter /usr/libexec/tiexec/tiexec
flags POF
installed: tiexec: '/stamped': on 2 MiB pages
$sum
tiexec: unregistered
rule: 0
uninstalled: 
copied after: 0
$sum
usage status 2" "$output"
	[[ "$sum" =~ ^sum:\ sum\ [0-9]+$ ]]
}
