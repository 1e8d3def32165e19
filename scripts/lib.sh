# Shared by scripts/test, scripts/compat, scripts/demo, scripts/bench, scripts/fuzz,
# scripts/package, scripts/peers, scripts/cross, scripts/kernels and scripts/image.

# A script that set -e ends names the command that failed and its status,
# with the functions it was in: without this, a pipeline that failed with
# 141 ends a script with no word (tests/unit/pipes.sh).  errtrace (-E)
# carries the trap into functions; subshells and command substitutions say
# nothing themselves (a failure there that counts fails the command that
# holds them, which is named), so a `$(cmd) || fallback` stays quiet.
tx_failed() {
	local st=$1 cmd=$2 i where=
	[ "$BASH_SUBSHELL" -eq 0 ] || return 0
	for ((i = 1; i < ${#FUNCNAME[@]}; i++)); do
		case ${FUNCNAME[$i]} in main | source) ;; *) where+=" in ${FUNCNAME[$i]}()" ;; esac
	done
	echo "${0##*/}: line ${BASH_LINENO[0]}$where: '$cmd' failed with status $st" >&2
}
set -E
trap 'tx_failed $? "$BASH_COMMAND"' ERR

# The package of python's own test suite for Debian's python3 (the one
# scripts/compat runs, /usr/bin/python3, not a python3 earlier on PATH):
# libpython3.X-testsuite.  Without python3 yet, the version apt would
# install; else 3.11 (Debian 12).
python_testsuite_package() {
	local v
	v=$(/usr/bin/python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null) ||
		v=$(apt-cache depends python3 2>/dev/null | sed -n 's/^ *Depends: python\(3\.[0-9]*\)$/\1/p' | sed -n 1p) || true
	echo "libpython${v:-3.11}-testsuite"
}

BUILD_PACKAGES=(meson ninja-build gcc pkg-config libelf-dev systemtap-sdt-dev clang bpftool libbpf-dev)
# nodejs and chromium: real programs that look for themselves through
# /proc/self/exe; musl-tools: a musl dynamic linker (tests/75-users.bats);
# linux-perf (perf) and gdb: profiling and debugging copied text
# (tests/57-perfmap.bats); redis and the python test suite: the fast subset
# of scripts/compat (tests/96-compat.bats); lld and clang: programs linked
# as Rust links them, ASan (tests/22-libs.bats); ltrace, strace: tracers of
# stamped programs (tests/58-debug.bats); btrfs-progs, squashfs-tools,
# squashfuse, bindfs: the file systems of tests/27-filesystems.bats;
# postgresql: the distribution-packaged server of tests/95-package.bats;
# podman, runc and busybox-static: the containers of tests/63-containers.bats;
# acl (setfacl): the POSIX ACL cases of tests/86-trust.bats; llvm
# (llvm-strip, llvm-objcopy): stamps through LLVM's strippers
# (tests/50-stamp.bats); cmake: the build recipes of tests/59-recipes.bats;
# prometheus and prometheus-node-exporter: tests/92-metrics.bats (node
# and npm, on these machines already, run scripts/k8s-validate); bolt-15,
# libhugetlbfs-bin and -dev, hyperfine: the alternatives of scripts/peers
# (tests/99-peers.bats).
TEST_PACKAGES=(g++ golang-go bats libc6-dev util-linux libcap2-bin attr acl nodejs chromium musl-tools lld clang ltrace strace
	btrfs-progs squashfs-tools squashfuse bindfs
	linux-perf gdb redis-server redis-tools "$(python_testsuite_package)" postgresql
	podman runc busybox-static prometheus prometheus-node-exporter llvm cmake
	bolt-15 libhugetlbfs-bin libhugetlbfs-dev hyperfine)
# scripts/test --fast: what its suites need (lld and clang: the text
# cache's lld-linked fixtures and ASan; acl: the trust rule's ACL cases).
FAST_PACKAGES=(g++ bats libc6-dev util-linux libcap2-bin attr acl lld clang strace)
# scripts/package: the Debian tools, rpmbuild, scdoc (man pages) and what
# tiexec-trace is built with.
PACKAGE_PACKAGES=(dpkg-dev debhelper fakeroot lintian rpm file scdoc clang bpftool libbpf-dev)

# Installs the Debian packages that are missing (needs root and apt-get).
ensure_packages() {
	local missing=()
	for p in "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep 'ok installed' >/dev/null || missing+=("$p")
	done
	[ ${#missing[@]} -eq 0 ] && return 0
	if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
		echo "missing packages: ${missing[*]} (install them, or run as root on Debian/Ubuntu)" >&2
		return 1
	fi
	echo "== installing ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	# No package's daemon (prometheus, redis, postgresql) is started by its
	# installation: the tests start their own, on loopback, and stop them.
	local policy=
	if [ ! -e /usr/sbin/policy-rc.d ]; then
		printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
		chmod 755 /usr/sbin/policy-rc.d
		policy=1
	fi
	local st=0
	apt-get -o DPkg::Lock::Timeout=300 update -qq &&
		apt-get -o DPkg::Lock::Timeout=300 install -y -qq --no-install-recommends "${missing[@]}" >/dev/null ||
		st=1
	[ -z "$policy" ] || rm -f /usr/sbin/policy-rc.d
	return "$st"
}

# The Rust fixture needs a rustc, and the cargo recipe cargo: the ones on
# PATH (rustup's), else Debian's.
rust_package() {
	command -v rustc >/dev/null || echo rustc
	command -v cargo >/dev/null || echo cargo
}

build_tiexec() {
	echo "== build"
	if [ ! -f build/build.ninja ]; then
		meson setup build >/dev/null
	fi
	ninja -C build >/dev/null
}

# hf_medians JSON...: one line per benchmarked command: "median q1 q3" in
# seconds; the times of the same command (by position) in several files are pooled.
hf_medians() {
	local c
	c=$(grep -c '"times": *\[' "$1") || { echo "cannot parse $1" >&2; return 1; }
	local i
	for ((i = 1; i <= c; i++)); do
		awk -v want="$i" '
			FNR == 1 { k = 0 }
			/"times": *\[/ { k++; intimes = (k == want); next }
			intimes && /\]/ { intimes = 0; next }
			intimes { gsub(/[ ,]/, ""); if ($0 != "") print $0 + 0 }
		' "$@" | sort -g | awk '{ t[NR] = $1 }
			END {
				n = NR; if (n == 0) { print "nan nan nan"; exit }
				m = (n % 2) ? t[(n + 1) / 2] : (t[n / 2] + t[n / 2 + 1]) / 2
				printf "%.9g %.9g %.9g\n", m, t[int((n - 1) * 0.25) + 1], t[int((n - 1) * 0.75) + 1]
			}'
	done
}

# Debian's packages for another release or architecture, without touching
# the machine's apt configuration or dpkg architectures.
# private_apt DIR ARCH [SUITE...]: sets APT_OPTS, the options for apt-get
# and apt-cache that use a sources list and state of their own under DIR
# (the suites, else bullseye, bookworm and trixie, for ARCH), and updates
# them once a day.
private_apt() {
	local w=$1 arch=$2 s suites=(bullseye bookworm trixie)
	[ $# -le 2 ] || suites=("${@:3}")
	APT_OPTS=(-o Dir::Etc::sourcelist="$w/sources.list" -o Dir::Etc::sourceparts=- -o Dir::State::Lists="$w/lists"
		-o Dir::Cache="$w/cache" -o Debug::NoLocking=1 -o APT::Architecture="$arch" -o APT::Architectures="$arch")
	[ -s "$w/updated" ] && [ "$(find "$w/updated" -mmin -1440)" ] && return
	mkdir -p "$w/lists/partial" "$w/cache/archives/partial"
	: >"$w/sources.list"
	for s in "${suites[@]}"; do
		echo "deb [arch=$arch signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian $s main" \
			>>"$w/sources.list"
	done
	apt-get "${APT_OPTS[@]}" update -qq
	date >"$w/updated"
}

# apt_version PKG SUITE: the version of PKG that SUITE has, after
# private_apt.  awk reads all of madison's lines: a reader that stopped at
# the first match would kill apt-cache with SIGPIPE on some machines, and
# pipefail would fail the pipeline (tests/unit/pipes.sh).
apt_version() {
	apt-cache "${APT_OPTS[@]}" madison "$1" |
		awk -v s="$2" '!v && ($0 ~ "/debian " s "/" || $0 ~ " " s "/main") { v = $3 } END { print v }'
}

# apt_unpack DIR SUITE PKG...: each PKG as SUITE has it, unpacked into DIR
# (no dependencies, no scripts run); after private_apt.
apt_unpack() {
	local root=$1 suite=$2 tmp p v
	shift 2
	tmp=$(mktemp -d)
	mkdir -p "$root"
	for p in "$@"; do
		v=$(apt_version "$p" "$suite")
		[ -n "$v" ] || { echo "no package $p in $suite" >&2; rm -rf "$tmp"; return 1; }
		(cd "$tmp" && apt-get "${APT_OPTS[@]}" download "$p=$v" >/dev/null 2>&1) ||
			{ echo "could not fetch $p=$v" >&2; rm -rf "$tmp"; return 1; }
	done
	for p in "$tmp"/*.deb; do dpkg-deb -x "$p" "$root"; done
	rm -rf "$tmp"
}
