# Runs once before all tests: builds the fixture programs.  Fails hard: a
# missing fixture would otherwise show up as dozens of confusing failures.
setup_suite() {
	ROOT=$(cd "$BATS_TEST_DIRNAME/.." && pwd)
	BUILD=${TIEXEC_BUILD:-$ROOT/build}
	export TIEXEC_FIXTURES=${TIEXEC_FIXTURES:-$BUILD/fixtures}
	[ -x "$BUILD/interp/tiexec" ] || { echo "no $BUILD/interp/tiexec: build first" >&2; return 1; }
	"$ROOT/tests/fixtures/build.sh" "$TIEXEC_FIXTURES" >&2
}
