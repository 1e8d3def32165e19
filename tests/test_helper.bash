# Shared by every tests/*.bats file.
# The build directory comes from scripts/test (TIEXEC_BUILD); fixtures are
# built once per run by setup_suite.bash into $FIXTURES.
ROOT=$(cd "$BATS_TEST_DIRNAME/.." && pwd)
BUILD=${TIEXEC_BUILD:-$ROOT/build}
TIEXEC=$BUILD/interp/tiexec
FIXTURES=${TIEXEC_FIXTURES:-$BUILD/fixtures}
export ROOT BUILD TIEXEC FIXTURES

# Under CI=true a skip of something this machine should support is a failure.
skip_unsupported() {
	if [ "${CI:-}" = true ]; then
		echo "CI=true: refusing to skip: $*" >&2
		return 1
	fi
	skip "$*"
}

# run_t: `run` with a timeout, so a hung program cannot hang the suite.
run_t() {
	run timeout 60 "$@"
}

# same WANT GOT: equal, else show a diff.
same() {
	diff -u <(printf '%s\n' "$1") <(printf '%s\n' "$2")
}

# same_off WANT GOT: GOT is WANT followed by the loader's time (", N ms").
same_off() {
	[[ "$2" =~ ^(.*),\ [0-9]+\.[0-9]+\ ms$ ]] || { echo "no time at the end of: $2"; return 1; }
	same "$1" "${BASH_REMATCH[1]}"
}
