#!/usr/bin/env bats
# Load and faults (scripts/load): 1,000 simultaneous starts of one program,
# a program file replaced by rename while instances run (and an in-place
# write tried), and SIGINT/SIGTERM/SIGSTOP arriving while tiexec copies
# 256 MiB of text; each directly, from the command line and through
# binfmt_misc (a private instance), as root and as uid 65534.
bats_require_minimum_version 1.5.0
load test_helper

setup() {
	[ "$(id -u)" = 0 ] || skip_unsupported "needs root to run parts of it as another user"
}

@test "scripts/load: 1,000 starts, a replaced binary, signals during a copy; nothing left behind" {
	local before
	before=$(ls /proc/sys/fs/binfmt_misc)
	run --separate-stderr timeout 900 "$ROOT/scripts/load" --json
	echo "$stderr" | tail -20
	python3 - "$output" <<-'PY'
		import json, sys
		r = json.loads(sys.argv[1])
		bad = [c for c in r["checks"] if not c["ok"]]
		for c in bad:
		    print("FAILED", c["user"], c["check"], c["detail"][:400])
		secs = {(s["section"], s["user"]): s["rows"] for s in r["sections"]}
		assert sorted(secs) == sorted((s, u) for s in ("starts", "replace", "signals")
		                              for u in ("root", "nobody")), sorted(secs)
		for u in ("root", "nobody"):
		    starts = secs[("starts", u)]
		    assert [x["mode"] for x in starts] == ["direct", "cli", "binfmt"]
		    for x in starts:
		        assert x["started"] == x["exit0"] == 1000, x
		        print(u, x["mode"], x["start_ms"], "ms", x["pss_mib"], "MiB PSS",
		              x["copies"], "copies")
		    # five signal cases, three ways each
		    assert len(secs[("signals", u)]) == 15
		assert len(r["checks"]) > 100, len(r["checks"])
		assert not bad
	PY
	[ "$status" -eq 0 ]
	[ "$(ls /proc/sys/fs/binfmt_misc)" = "$before" ]
	local w
	w=$(sed -n 's/^== work directory \(.*\) (removed at the end)$/\1/p' <<<"$stderr")
	[ -n "$w" ]
	[ ! -e "$w" ]
}
