# Debian's stock kernels, fetched and unpacked for qemu guests: sourced by
# scripts/kernels (the kernel matrix) and scripts/walkthrough-arm64 (the
# operator's path), after scripts/lib.sh.  Everything is cached under
# $W (build/kernels): $W/K/root holds kernel K's unpacked linux-image
# package, with modules.dep made by depmod.

suite_of() {
	case ${1#arm64-} in
	5.10) echo bullseye ;;
	6.1) echo bookworm ;;
	6.12 | 6.12-16k) echo trixie ;;
	*) echo "kernels: unknown kernel $1 ($KERNELS)" >&2; exit 2 ;;
	esac
}
# The kernels: x86-64 ones by release, arm64 ones (under
# qemu-system-aarch64, TCG) as arm64-RELEASE; arm64-6.12-16k is trixie's
# kernel with 16 KiB pages.
KERNELS="5.10, 6.1, 6.12, arm64-6.1, arm64-6.12, arm64-6.12-16k"
# arch_of K: Debian's name of K's architecture.
arch_of() { case $1 in arm64-*) echo arm64 ;; *) echo amd64 ;; esac; }
# image_of K: the package that depends on K's kernel image.
image_of() { case $1 in arm64-*-16k) echo linux-image-arm64-16k ;; *) echo "linux-image-$(arch_of "$1")" ;; esac; }
# apt_for ARCH: APT_OPTS for Debian's packages of ARCH (lib.sh).
apt_for() {
	case $1 in amd64) private_apt "$W/apt" amd64 ;; *) private_apt "$W/apt-$1" "$1" ;; esac
}

# fetch_kernel K: $W/K/root holds the unpacked linux-image of K's suite.
fetch_kernel() {
	local k=$1 d=$W/$1
	[ -f "$d/root/.done" ] && return
	apt_for "$(arch_of "$k")"
	local suite pkgver img meta
	suite=$(suite_of "$k")
	meta=$(image_of "$k")
	pkgver=$(apt_version "$meta" "$suite")
	[ -n "$pkgver" ] || { echo "kernels: no $meta in $suite" >&2; return 1; }
	img=$(apt-cache "${APT_OPTS[@]}" depends "$meta=$pkgver" | awk '!img && /Depends: linux-image-/ { img = $2 } END { print img }')
	rm -rf "$d"
	mkdir -p "$d/root"
	(cd "$d" && apt-get "${APT_OPTS[@]}" download "$img" >/dev/null 2>&1)
	dpkg-deb -x "$d"/*.deb "$d/root"
	rm -f "$d"/*.deb
	# The package leaves modules.dep to depmod at installation.
	[ -e "$d/root/lib" ] || ln -s usr/lib "$d/root/lib"
	local v
	for v in "$d/root/lib/modules/"*; do
		depmod -b "$d/root" "$(basename "$v")"
	done
	touch "$d/root/.done"
}

# kernel_modules K DIR MODULE...: the MODULEs of K and what they need, as
# DIR/NAME.ko, and DIR/order naming them in the order to load them
# (dependencies first, each once, from modules.dep).  A module K builds
# in, or lacks, is left out.
kernel_modules() {
	local k=$1 dir=$2 m= c
	shift 2
	for c in "$W/$k/root/usr/lib/modules/"* "$W/$k/root/lib/modules/"*; do
		[ -f "$c/modules.dep" ] && m=$c && break
	done
	[ -n "$m" ] || { echo "kernels: $k: no modules.dep in the package" >&2; return 1; }
	local order=() seen=" " mod p
	# modules.dep: "path: dep1 dep2 ..."; a module's dependencies (last
	# first), then the module.
	add_mod() {
		local line p deps i
		line=$(grep -E "/$1\.ko(\.xz|\.zst)?:" "$m/modules.dep" | sed -n 1p) || return 0
		[ -n "$line" ] || return 0
		p=${line%%:*}
		read -r -a deps <<<"${line#*:}"
		for ((i = ${#deps[@]} - 1; i >= 0; i--)); do
			local dn=${deps[i]##*/}
			add_mod "${dn%%.ko*}"
		done
		case $seen in *" $p "*) return 0 ;; esac
		seen+="$p "
		order+=("$p")
	}
	for mod in "$@"; do add_mod "$mod"; done
	mkdir -p "$dir"
	: >"$dir/order"
	for p in "${order[@]}"; do
		local out=$dir/$(basename "${p%%.ko*}").ko
		case $p in
		*.xz) xz -dc "$m/$p" >"$out" ;;
		*.zst) zstd -qdc "$m/$p" >"$out" ;;
		*) cp "$m/$p" "$out" ;;
		esac
		basename "$out" >>"$dir/order"
	done
}
