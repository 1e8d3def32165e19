# Shared by scripts/test, scripts/demo and scripts/bench.

BUILD_PACKAGES=(meson ninja-build gcc pkg-config libelf-dev systemtap-sdt-dev clang bpftool libbpf-dev)
# nodejs and chromium: real programs that look for themselves through
# /proc/self/exe; musl-tools: a musl dynamic linker (tests/75-users.bats);
# linux-perf (perf) and gdb: profiling and debugging copied text
# (tests/57-perfmap.bats); redis and the python test suite: the fast subset
# of scripts/compat (tests/96-compat.bats).
TEST_PACKAGES=(g++ golang-go bats libc6-dev util-linux libcap2-bin attr nodejs chromium musl-tools
	linux-perf gdb redis-server redis-tools libpython3.11-testsuite)
# scripts/package: the Debian tools, rpmbuild, scdoc (man pages) and what
# tiexec-trace is built with.
PACKAGE_PACKAGES=(dpkg-dev debhelper fakeroot lintian rpm file scdoc clang bpftool libbpf-dev)

# Installs the Debian packages that are missing (needs root and apt-get).
ensure_packages() {
	local missing=()
	for p in "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing+=("$p")
	done
	[ ${#missing[@]} -eq 0 ] && return 0
	if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
		echo "missing packages: ${missing[*]} (install them, or run as root on Debian/Ubuntu)" >&2
		return 1
	fi
	echo "== installing ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

# The Rust fixture needs a rustc: the one on PATH (rustup's), else Debian's.
rust_package() {
	command -v rustc >/dev/null || echo rustc
}

build_tiexec() {
	echo "== build"
	if [ ! -f build/build.ninja ]; then
		meson setup build >/dev/null
	fi
	ninja -C build >/dev/null
}
