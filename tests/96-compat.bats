#!/usr/bin/env bats
# The fast subset of scripts/compat: g++ compiling a C++17 file, node
# forking, part of python's own test suite and redis under redis-benchmark,
# each run directly, from the command line and through binfmt_misc (a
# private instance), as root and as uid 65534, compared.  The whole suite:
# scripts/compat (README, "Compatibility").
bats_require_minimum_version 1.5.0
load test_helper

setup() {
	[ "$(id -u)" = 0 ] || skip_unsupported "needs root to run parts of it as another user"
}

@test "scripts/compat --fast: every row identical; nothing left running or registered" {
	local before
	before=$(ls /proc/sys/fs/binfmt_misc)
	run --separate-stderr timeout 600 "$ROOT/scripts/compat" --fast --json
	echo "$output"
	echo "$stderr" | tail -40
	[ "$status" -eq 0 ]
	# Each of the 4 cases as root and as nobody, each run with the
	# program's status and cmdline, the servers with their throughput.
	python3 - "$output" <<-'PY'
		import json, sys
		r = json.loads(sys.argv[1])
		rows = {(x["case"], x["user"]): x for x in r["rows"]}
		assert sorted(rows) == sorted((c, u) for c in ("gxx", "node", "python", "redis")
		                              for u in ("root", "nobody")), sorted(rows)
		for k, x in rows.items():
		    assert x["identical"], (k, x["differences"])
		    for m, run in x["runs"].items():
		        assert run["case_status"] == 0, (k, m)
		        assert run["time_ms"] is not None, (k, m)
		        assert run["coverage"], (k, m)
		        assert run["cmdline"], (k, m)
		assert rows[("node", "root")]["runs"]["binfmt"]["status"] == 3
		assert "caught" in rows[("gxx", "nobody")]["runs"]["binfmt"]["output"]
		assert "incr 2000" in rows[("redis", "nobody")]["runs"]["cli"]["output"]
		for u in ("root", "nobody"):
		    for m in ("direct", "cli", "binfmt"):
		        assert rows[("redis", u)]["runs"][m]["throughput"].endswith("req/s")
		# cc1plus goes through tiexec by binfmt_misc: most of its aligned
		# text on 2 MiB pages.
		c = rows[("gxx", "root")]["runs"]["binfmt"]["coverage"]
		assert c["process"] == "cc1plus" and c["huge_mib"] >= 0.9 * c["aligned_mib"] > 0, c
	PY
	same "$before" "$(ls /proc/sys/fs/binfmt_misc)"
	# Nothing of this run is left (others may run the suite too).
	work_dir_gone "$stderr"
}
