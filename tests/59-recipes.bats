#!/usr/bin/env bats
# docs/reference.md "At build time": each recipe builds a small project
# with tiexec-stamp on PATH, and the program is stamped after a build, after
# a build that changes nothing (a build tool must not put the unstamped
# file back: cargo links its output from deps/), and after a rebuild.
bats_require_minimum_version 1.5.0
load test_helper

setup() {
	P=$BATS_TEST_TMPDIR/proj
	mkdir -p "$P"
	export PATH=$BUILD/stamp:$PATH
}

# stamped FILE: tiexec-stamp --check says FILE is stamped.
stamped() {
	run tiexec-stamp --check "$1"
	echo "$output"
	[ "$status" -eq 0 ] && [[ "$output" == "$1: stamped: "* ]]
}

# recipe TITLE: the code block after the line "TITLE:" (or "TITLE (...):")
# in the reference's "At build time", without its fences.
recipe() {
	awk -v t="$1" '
		/^### At build time/ { in_sec = 1; next }
		/^### / { in_sec = 0 }
		!in_sec { next }
		state == 0 && (index($0, t ":") == 1 || index($0, t " (") == 1) { state = 1; next }
		state == 1 && /^```/ { state = 2; next }
		state == 2 && /^```$/ { exit }
		state == 2 { print }' "$ROOT/docs/reference.md"
}

@test "meson: the custom_target stamps the executable; a no-op build keeps it; a rebuild stamps again" {
	command -v meson >/dev/null || skip_unsupported "meson is not installed"
	printf 'int main(void) { return 3; }\n' >"$P/main.c"
	{
		echo "project('p', 'c')"
		echo "sources = files('main.c')"
		recipe meson
	} >"$P/meson.build"
	cat "$P/meson.build"
	grep -q "tiexec-stamp" "$P/meson.build"
	meson setup "$P/b" "$P" >/dev/null
	ninja -C "$P/b" >/dev/null
	stamped "$P/b/server"
	ninja -C "$P/b" >/dev/null
	stamped "$P/b/server"
	printf 'int main(void) { return 4; }\n' >"$P/main.c"
	ninja -C "$P/b" >/dev/null
	stamped "$P/b/server"
	run "$P/b/server"
	[ "$status" -eq 4 ]
}

@test "CMake: the POST_BUILD command stamps the executable; a no-op build keeps it; a rebuild stamps again" {
	command -v cmake >/dev/null || skip_unsupported "cmake is not installed"
	printf 'int main(void) { return 3; }\n' >"$P/main.c"
	{
		echo "cmake_minimum_required(VERSION 3.18)"
		echo "project(p C)"
		echo "set(SOURCES main.c)"
		recipe CMake
	} >"$P/CMakeLists.txt"
	cat "$P/CMakeLists.txt"
	cmake -S "$P" -B "$P/b" >/dev/null
	cmake --build "$P/b" >/dev/null
	stamped "$P/b/server"
	cmake --build "$P/b" >/dev/null
	stamped "$P/b/server"
	printf 'int main(void) { return 4; }\n' >"$P/main.c"
	cmake --build "$P/b" >/dev/null
	stamped "$P/b/server"
	# Without tiexec-stamp on PATH: configuring says so.
	run env PATH=/usr/bin:/bin cmake -S "$P" -B "$P/b2"
	[ "$status" -ne 0 ]
	[[ "$output" == *"TIEXEC_STAMP"*"tiexec-stamp"* ]]
}

@test "cargo: build, stamp; a no-op cargo build and cargo run keep the stamp" {
	command -v cargo >/dev/null || skip_unsupported "cargo is not installed"
	mkdir -p "$P/src"
	printf '[package]\nname = "server"\nversion = "0.1.0"\nedition = "2021"\n' >"$P/Cargo.toml"
	printf 'fn main() { std::process::exit(3) }\n' >"$P/src/main.rs"
	local cmd
	cmd=$(recipe cargo)
	echo "$cmd"
	export CARGO_NET_OFFLINE=true CARGO_TARGET_DIR=$P/target
	(cd "$P" && bash -c "$cmd")
	stamped "$P/target/release/server"
	# cargo links target/release/server from deps/ at every build.
	(cd "$P" && cargo build --release -q)
	stamped "$P/target/release/server"
	run bash -c "cd '$P' && cargo run --release -q"
	[ "$status" -eq 3 ]
	stamped "$P/target/release/server"
}

@test "Go: build, stamp" {
	command -v go >/dev/null || skip_unsupported "go is not installed"
	printf 'module example.com/server\n\ngo 1.19\n' >"$P/go.mod"
	mkdir -p "$P/cmd/server"
	printf 'package main\n\nimport "os"\n\nfunc main() { os.Exit(3) }\n' >"$P/cmd/server/main.go"
	local cmd
	cmd=$(recipe Go)
	echo "$cmd"
	(cd "$P" && HOME=$BATS_TEST_TMPDIR GOCACHE=$BATS_TEST_TMPDIR/gocache GOTOOLCHAIN=local GOFLAGS=-mod=mod \
		bash -c "$cmd")
	stamped "$P/server"
	run "$P/server"
	[ "$status" -eq 3 ]
}
