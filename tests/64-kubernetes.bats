#!/usr/bin/env bats
# packaging/kubernetes/tiexec.yaml: valid against the Kubernetes API's
# schema offline (scripts/k8s-validate: kubernetes-models from the npm
# registry; there is no cluster here), a broken copy refused; and the
# DaemonSet's image and commands, as the manifest gives them, run under
# podman: the init container's registers the rule (in a private
# binfmt_misc instance), the warm container's warms the programs its
# ConfigMap lists, from the directory the manifest mounts.
bats_require_minimum_version 1.5.0
load test_helper

MANIFEST=$ROOT/packaging/kubernetes/tiexec.yaml
UNINSTALL=$ROOT/packaging/kubernetes/tiexec-uninstall.yaml
RUN_FLAGS=$PODMAN_RUN_FLAGS
IMAGE=localhost/tiexec-test-k8s:$RUN_ID

setup_file() {
	command -v podman >/dev/null && [ "$(id -u)" = 0 ] || return 0
	TIEXEC_BUILD=$BUILD "$ROOT/scripts/image" --tag "$IMAGE" --push "oci:$BATS_FILE_TMPDIR/oci:tiexec" \
		>"$BATS_FILE_TMPDIR/build.log" 2>&1 ||
		echo failed >>"$BATS_FILE_TMPDIR/build.log"
}

teardown_file() {
	command -v podman >/dev/null || return 0
	$PODMAN rm -f "tiexec-warm-$RUN_ID" "tiexec-idle-$RUN_ID" >/dev/null 2>&1 || true
	$PODMAN rmi -f "$IMAGE" >/dev/null 2>&1 || true
}

setup() {
	command -v node >/dev/null && command -v npm >/dev/null ||
		skip_unsupported "node and npm are not installed (the offline validator runs on node)"
	T=$BATS_TEST_TMPDIR
}

# args_of CONTAINER: the manifest's args of that container, one per line.
args_of() {
	node --input-type=module -e '
		import { readFileSync } from "node:fs";
		import { parseAllDocuments } from "yaml";
		for (const d of parseAllDocuments(readFileSync(process.argv[1], "utf8"))) {
			const o = d.toJS();
			if (o?.kind !== "DaemonSet") continue;
			const s = o.spec.template.spec;
			for (const c of [...(s.initContainers ?? []), ...s.containers])
				if (c.name === process.argv[2]) console.log(c.args.join("\n"));
		}' "$MANIFEST" "$1"
}

@test "the manifests validate offline; a broken copy does not" {
	run timeout 300 "$ROOT/scripts/k8s-validate" "$MANIFEST" "$UNINSTALL"
	echo "$output"
	[ "$status" -eq 0 ]
	same "Namespace -/tiexec ok
PriorityClass -/tiexec-node ok
ConfigMap tiexec/tiexec-warm ok
DaemonSet tiexec/tiexec ok
Namespace -/tiexec-uninstall ok
DaemonSet tiexec-uninstall/tiexec-uninstall ok" "$output"
	sed 's/args: \["install"\]/args: "install"/' "$MANIFEST" >"$T/bad.yaml"
	sed 's/^      containers:$/      containerz:/' "$MANIFEST" >"$T/bad2.yaml"
	run timeout 300 "$ROOT/scripts/k8s-validate" "$T/bad.yaml" "$T/bad2.yaml"
	echo "$output"
	[ "$status" -eq 1 ]
	grep -q "^$T/bad.yaml: DaemonSet tiexec/tiexec: .*initContainers/0/args must be array" <<<"$output"
	grep -q "^$T/bad2.yaml: DaemonSet tiexec/tiexec: .*must have required property containers" <<<"$output"
}

# field NAME EXPR [FILE]: the JavaScript expression EXPR of the manifest's
# (or FILE's) container (or init container) NAME, `c`, as JSON; NAME "-":
# of the DaemonSet's pod spec, `c`; NAME "*": of all of FILE's documents,
# `c` (an array).
field() {
	(cd "$ROOT/build/k8s-validate" && NODE_PATH=$PWD/node_modules node --input-type=module -e '
		import { readFileSync } from "node:fs";
		import { parseAllDocuments } from "yaml";
		const docs = parseAllDocuments(readFileSync(process.argv[1], "utf8")).map(d => d.toJS());
		const show = c => console.log(JSON.stringify(new Function("c", "return " + process.argv[3])(c)));
		if (process.argv[2] === "*") show(docs);
		for (const o of docs) {
			if (o?.kind !== "DaemonSet" || process.argv[2] === "*") continue;
			const s = o.spec.template.spec;
			if (process.argv[2] === "-") show(s);
			for (const c of [...(s.initContainers ?? []), ...s.containers])
				if (c.name === process.argv[2])
					show(c);
		}' "${3:-$MANIFEST}" "$1" "$2")
}

@test "only the init container is privileged: warm drops ALL, adds the unit's three, RuntimeDefault seccomp" {
	timeout 300 "$ROOT/scripts/k8s-validate" "$MANIFEST" >/dev/null
	[ "$(field warm c.securityContext.privileged)" = false ]
	[ "$(field warm c.securityContext.allowPrivilegeEscalation)" = false ]
	[ "$(field warm c.securityContext.capabilities)" = '{"drop":["ALL"],"add":["DAC_READ_SEARCH","SYS_PTRACE","FOWNER"]}' ]
	[ "$(field warm c.securityContext.seccompProfile.type)" = '"RuntimeDefault"' ]
	# The same three as the systemd unit.
	[ "$(sed -n 's/^CapabilityBoundingSet=//p' "$ROOT/packaging/systemd/tiexec-warm.service")" = \
		"CAP_DAC_READ_SEARCH CAP_SYS_PTRACE CAP_FOWNER" ]
	# The cache's mount and the rule are the init container's; warm sees
	# the mount; the cache has a size.
	[ "$(field install c.securityContext.privileged)" = true ]
	prop='c.volumeMounts.find(m => m.mountPath === "/run/tiexec").mountPropagation'
	[ "$(field install "$prop")" = '"Bidirectional"' ]
	[ "$(field warm "$prop")" = '"HostToContainer"' ]
	[[ "$(field install 'c.env.find(e => e.name === "TIEXEC_CACHE_SIZE").value')" =~ ^\"[0-9]+[kmg%]\"$ ]]
	[ "$(field warm 'c.readinessProbe.exec.command')" = '["/entrypoint","ready"]' ]
}

@test "the DaemonSet: amd64 nodes, its own priority, no blanket toleration, probes, hostPID, /opt optional" {
	timeout 300 "$ROOT/scripts/k8s-validate" "$MANIFEST" >/dev/null
	[ "$(field - 'c.nodeSelector')" = '{"kubernetes.io/os":"linux","kubernetes.io/arch":"amd64"}' ]
	[ "$(field - 'c.nodeSelector' "$UNINSTALL")" = "$(field - 'c.nodeSelector')" ]
	# A priority class of its own, defined in the manifest, below the
	# system's (2000000000 and above).
	[ "$(field - 'c.priorityClassName')" = '"tiexec-node"' ]
	[ "$(field '*' 'c.find(o => o?.kind === "PriorityClass" && o.metadata.name === "tiexec-node").value < 2000000000')" = true ]
	# Taints are not all tolerated (the control plane's are not).
	[ "$(field - 'c.tolerations ?? []')" = '[]' ]
	[ "$(field warm 'c.livenessProbe.exec.command')" = '["/entrypoint","live"]' ]
	# The trust rule's check of shared writable mappings sees the node's
	# processes; so do the metrics.
	[ "$(field - 'c.hostPID')" = true ]
	[ "$(field - 'c.volumes.find(v => v.name === "programs").hostPath.type')" = '"DirectoryOrCreate"' ]
	[ "$(field warm 'c.env.find(e => e.name === "TIEXEC_TEXTFILE_DIR").value')" = '"/textfile"' ]
	# The uninstall DaemonSet: uninstall, privileged, then idle with nothing.
	[ "$(field uninstall 'c.args' "$UNINSTALL")" = '["uninstall"]' ]
	[ "$(field uninstall 'c.securityContext.privileged' "$UNINSTALL")" = true ]
	[ "$(field idle 'c.args' "$UNINSTALL")" = '["idle"]' ]
	[ "$(field idle 'c.securityContext.capabilities' "$UNINSTALL")" = '{"drop":["ALL"]}' ]
	# Both reference the same image.
	[ "$(field install 'c.image')" = "$(field uninstall 'c.image' "$UNINSTALL")" ]
}

@test "the DaemonSet's image and commands under podman: install registers the rule, warm warms /opt" {
	command -v podman >/dev/null || skip_unsupported "podman is not installed (scripts/test installs it)"
	[ "$(id -u)" = 0 ] || skip_unsupported "needs root (user namespaces with ids 0-65535 mapped)"
	grep -q failed "$BATS_FILE_TMPDIR/build.log" && { cat "$BATS_FILE_TMPDIR/build.log"; return 1; }
	# Needs the validator's yaml package for args_of.
	timeout 300 "$ROOT/scripts/k8s-validate" "$MANIFEST" >/dev/null
	export NODE_PATH=$ROOT/build/k8s-validate/node_modules
	local init warm
	init=$(cd "$ROOT/build/k8s-validate" && args_of install | tr '\n' ' ')
	warm=$(cd "$ROOT/build/k8s-validate" && args_of warm | tr '\n' ' ')
	same "install " "$init"
	[[ "$warm" =~ ^warm\ [0-9]+\ $ ]]
	# The ConfigMap's warm.conf and the directory it names, with a stamped
	# program (where uid 65534 could reach it: /tmp).
	local opt
	opt=$(mktemp -d /tmp/tiexec-k8s.XXXXXX)
	cp "$FIXTURES/bigtext-pie" "$opt/server"
	"$BUILD/stamp/tiexec-stamp" "$opt/server"
	# The ConfigMap as the kubelet mounts it: a directory everyone may
	# write.  The node's /run/tiexec, shared with the containers as the
	# manifest's propagation says.
	mkdir -m 777 "$T/cm"
	mkdir -m 755 "$T/run" "$T/textfile"
	sed -n '/^  warm.conf: |$/,/^---$/p' "$MANIFEST" | sed -e '1d' -e '/^---$/d' -e 's/^    //' >"$T/cm/warm.conf"
	same "stamped /opt" "$(cat "$T/cm/warm.conf")"
	run --separate-stderr env PODMAN="$PODMAN" RUN_FLAGS="$RUN_FLAGS" timeout 300 "$ROOT/scripts/binfmt-ns" --interpreter none '
		mount --bind '"$T/run $T/run"' && mount --make-shared '"$T/run"'
		$PODMAN run --rm $RUN_FLAGS --privileged -v '"$T/cm"':/config:ro -v '"$T/run"':/run/tiexec:rshared '"$IMAGE $init"'
		echo "rule: $(sed -n "s/^flags: //p" /proc/sys/fs/binfmt_misc/tiexec)"
		echo "cache: $(findmnt -n -o FSTYPE,OPTIONS '"$T/run/text"')"
		echo "conf: $(stat -c "%U %a" '"$T/run/warm.conf"')"
		$PODMAN run -d --name tiexec-warm-'"$RUN_ID"' $RUN_FLAGS --cap-drop=ALL \
			--cap-add=DAC_READ_SEARCH,SYS_PTRACE,FOWNER --security-opt no-new-privileges \
			-v '"$T/run"':/run/tiexec:rslave -v '"$opt"':/opt:ro \
			-v '"$T/textfile"':/textfile -e TIEXEC_TEXTFILE_DIR=/textfile '"$IMAGE $warm"' >/dev/null
		for i in $(seq 100); do
			[ -e '"$T/textfile/tiexec.prom"' ] && break
			sleep 0.2
		done
		$PODMAN logs tiexec-warm-'"$RUN_ID"' 2>&1 | grep "^/opt/server: " | head -n 1
		echo "warm status: $(cat '"$T/run/warm.status"')"
		echo "running: $($PODMAN inspect -f "{{.State.Running}}" tiexec-warm-'"$RUN_ID"')"
		# The probes, as the kubelet runs them.
		$PODMAN exec tiexec-warm-'"$RUN_ID"' /entrypoint ready && echo "ready: yes"
		$PODMAN exec tiexec-warm-'"$RUN_ID"' /entrypoint live && echo "live: yes"
		echo "metrics: $(grep -c "^tiexec_" '"$T/textfile/tiexec.prom"')"
		# SIGTERM ends it at once, as a pod deletion does.
		timeout 8 $PODMAN stop -t 5 tiexec-warm-'"$RUN_ID"' >/dev/null && echo "stopped: $($PODMAN inspect -f "{{.State.ExitCode}}" tiexec-warm-'"$RUN_ID"')"
		$PODMAN rm -f tiexec-warm-'"$RUN_ID"' >/dev/null
		# Rolled back: the rule and the cache go.
		$PODMAN run --rm $RUN_FLAGS --privileged -v '"$T/run"':/run/tiexec:rshared '"$IMAGE"' uninstall
		[ -e /proc/sys/fs/binfmt_misc/tiexec ] && echo "rule: still there"
		mountpoint -q '"$T/run/text"' && echo "cache: still mounted" || echo "cache: unmounted"
		$PODMAN run --rm $RUN_FLAGS -v '"$T/run"':/run/tiexec '"$IMAGE"' ready 2>&1 || echo "ready after uninstall: $?"
		# The uninstall DaemonSet'"'"'s container: idle until stopped.
		$PODMAN run -d --name tiexec-idle-'"$RUN_ID"' $RUN_FLAGS --cap-drop=ALL '"$IMAGE"' idle >/dev/null
		timeout 8 $PODMAN stop -t 5 tiexec-idle-'"$RUN_ID"' >/dev/null && echo "idle stopped: $($PODMAN inspect -f "{{.State.ExitCode}}" tiexec-idle-'"$RUN_ID"')"
		$PODMAN rm -f tiexec-idle-'"$RUN_ID"' >/dev/null'
	rm -rf "$opt"
	echo "$output"
	echo "stderr: $stderr"
	[ "$status" -ne 90 ] || skip_unsupported "no private binfmt_misc instance (needs Linux >= 6.7)"
	[ "$status" -eq 0 ]
	grep -qx "tiexec: registered, interpreter /usr/libexec/tiexec/tiexec, flags POF" <<<"$output"
	grep -qx "rule: POF" <<<"$output"
	grep -qE "^cache: tmpfs .*huge=always" <<<"$output"
	grep -qx "conf: root 644" <<<"$output"
	# tiexec-warm's line for the program (warm, or made warm, either route),
	# in a container with three capabilities.
	grep -qE "^/opt/server: [0-9.]+ of [0-9.]+ MiB (warm|of text in the text cache)" <<<"$output"
	grep -qE "^warm status: [01]$" <<<"$output"
	# Still there, waiting for its next round; SIGTERM stops it, status 0.
	grep -qx "running: true" <<<"$output"
	grep -qx "stopped: 0" <<<"$output"
	[[ "$stderr" != *"resorting to SIGKILL"* ]]
	grep -qx "cache: unmounted" <<<"$output"
	! grep -q "rule: still there" <<<"$output" || false
	# Ready and alive while it ran; metrics in node_exporter's directory;
	# not ready once the rule is gone, saying why.
	grep -qx "ready: yes" <<<"$output"
	grep -qx "live: yes" <<<"$output"
	grep -qE "^metrics: [1-9][0-9]*$" <<<"$output"
	grep -qx "not ready: tiexec's binfmt_misc rule is not registered on this node" <<<"$output"
	grep -qx "ready after uninstall: 1" <<<"$output"
	grep -qx "idle stopped: 0" <<<"$output"
}

@test "scripts/image --push prints the reference by digest, the pushed manifest's" {
	command -v podman >/dev/null || skip_unsupported "podman is not installed (scripts/test installs it)"
	[ "$(id -u)" = 0 ] || skip_unsupported "needs root"
	grep -q failed "$BATS_FILE_TMPDIR/build.log" && { cat "$BATS_FILE_TMPDIR/build.log"; return 1; }
	local ref digest
	ref=$(tail -n 1 "$BATS_FILE_TMPDIR/build.log")
	echo "$ref"
	[[ "$ref" =~ ^oci:$BATS_FILE_TMPDIR/oci@sha256:[0-9a-f]{64}$ ]]
	digest=$(grep -o '"digest": *"sha256:[0-9a-f]*"' "$BATS_FILE_TMPDIR/oci/index.json" | grep -o 'sha256:[0-9a-f]*')
	same "${ref##*@}" "$digest"
}

# The image is tiexec's Debian package, installed, plus this machine's files
# the entrypoint needs: a package database (what image scanners read) lists
# every file in it under its package, at the versions the files are.
@test "the installer image: tiexec's package installed, every file listed under a package" {
	command -v podman >/dev/null || skip_unsupported "podman is not installed (scripts/test installs it)"
	[ "$(id -u)" = 0 ] || skip_unsupported "needs root"
	grep -q failed "$BATS_FILE_TMPDIR/build.log" && { cat "$BATS_FILE_TMPDIR/build.log"; return 1; }
	local mnt version f unlisted=0
	mnt=$($PODMAN image mount "$IMAGE")
	version=$(sed -n "s/^  version: '\([^']*\)',$/\1/p" "$ROOT/meson.build")
	stanza() { awk -v RS= -v p="Package: $1" 'index($0, p "\n") == 1' "$mnt/var/lib/dpkg/status"; }
	stanza tiexec | grep -qx "Version: $version"
	stanza tiexec | grep -qx "Status: install ok installed"
	# This machine's bash and libc, at this machine's versions.
	local p
	# (arch-qualified: with multiarch installed, the bare name of libc6
	# names one instance per architecture)
	for p in bash libc6; do
		stanza "$p" | grep -qx "Version: $(dpkg-query -W -f '${Version}' "$p:$(dpkg --print-architecture)")"
	done
	# Every regular file, by its path or its pre-merged-/usr path, is in a
	# package's list; but the probe's stamped true, made at build time.
	while read -r f; do
		[ "$f" = /usr/libexec/tiexec/rule-probe ] && continue
		grep -qxF -e "$f" -e "${f#/usr}" "$mnt"/var/lib/dpkg/info/*.list ||
			{ echo "not listed: $f"; unlisted=$((unlisted + 1)); }
	done < <(cd "$mnt" && find usr -type f | sed 's|^|/|')
	# The loader in the image is the package's.
	dpkg-deb -x "$(ls "$ROOT"/build/pkg/tiexec_"$version"*_amd64.deb)" "$BATS_TEST_TMPDIR/deb"
	cmp "$mnt/usr/libexec/tiexec/tiexec" "$BATS_TEST_TMPDIR/deb/usr/libexec/tiexec/tiexec"
	$PODMAN image unmount "$IMAGE" >/dev/null
	[ "$unlisted" -eq 0 ]
}
