#!/usr/bin/env bats
# The short form of scripts/peers: tiexec beside BOLT's hugify,
# libhugetlbfs, node's --use-largepages and the kernel alone, on 8 MiB
# generated programs and node.  Every way that can run here gives its row;
# nothing of the run is left: the hugetlb pool is as it was, the mounts,
# the text cache, BOLT's runtime link and the files are gone, no process
# stays.  The full comparison: scripts/peers (docs/reference.md,
# "Performance").
bats_require_minimum_version 1.5.0
load test_helper

setup() {
	[ "$(id -u)" = 0 ] || skip_unsupported "needs root: a hugetlb pool, mounts, the text cache"
	grep -qw hugetlbfs /proc/filesystems || skip_unsupported "kernel without hugetlbfs"
}

@test "scripts/peers --fast: a row for every way, measured; nothing left behind" {
	local pool_before rt_before
	pool_before=$(cat /proc/sys/vm/nr_hugepages)
	rt_before=$(ls -l /usr/lib/libbolt_rt_hugify.a 2>&1 || true)
	run --separate-stderr timeout 900 "$ROOT/scripts/peers" --fast --json
	echo "$stderr" | tail -30
	[ "$status" -eq 0 ]
	python3 - "$output" <<-'PY'
		import json, sys
		r = json.loads(sys.argv[1])
		rows = {(x["program"], x["way"]): x for x in r["rows"] if x["program"] != "-"}
		apart = {x["way"]: x for x in r["rows"] if x["program"] == "-"}
		ways = ["direct", "kernel", "tiexec", "tiexec-copy", "tiexec-cache", "bolt", "libhugetlbfs"]
		# glibc.elf.thp runs where this glibc has it, else says why not.
		if "glibc-thp" not in apart:
		    ways.append("glibc-thp")
		want = [(p, w) for p in ("pie", "nopie") for w in ways]
		want += [("node", w) for w in ways if w != "bolt"] + [("node", "node-largepages")]
		assert sorted(rows) == sorted(want), sorted(rows)
		assert set(apart) <= {"glibc-thp", "kernel-ro-thp"} and "kernel-ro-thp" in apart, apart
		for x in apart.values():
		    assert x["status"] in ("available", "unavailable") and x["note"], x
		for k, x in rows.items():
		    # A way that did not run says why.
		    if x["status"] != "0":
		        assert x["note"], k
		        continue
		    assert x["text_kb"] > 0 and x["ms"] > 0 and x["ratio"] > 0, (k, x)
		    assert x["private_kb"] is not None and x["total_kb"] >= x["private_kb"], (k, x)
		MIB = 1024
		# What each way is known to do, measured here: BOLT and libhugetlbfs
		# run on the program they rebuilt (non-PIE), tiexec places the
		# whole pieces without a private copy, a copy costs the text in
		# every process, libhugetlbfs the hugetlb pages of every segment.
		for p in ("pie", "nopie"):
		    t = rows[(p, "tiexec")]
		    assert t["huge_kb"] >= 6 * MIB, t
		    assert t["private_kb"] < 1 * MIB, t
		    assert rows[(p, "tiexec-cache")]["huge_kb"] >= 6 * MIB
		    assert rows[(p, "tiexec-copy")]["private_kb"] >= 6 * MIB
		    h = rows[(p, "libhugetlbfs")]
		    assert h["status"] == "0" and h["huge_kb"] == h["text_kb"] and h["private_kb"] >= 8 * MIB, h
		b = rows[("nopie", "bolt")]
		assert b["status"] == "0" and b["huge_kb"] >= 2 * MIB, b
		assert rows[("node", "node-largepages")]["huge_kb"] >= 2 * MIB
		assert rows[("node", "tiexec")]["huge_kb"] >= 2 * MIB
		# The behaviour checks ran for every way of the non-PIE program.
		beh = r["behaviour"]
		for w in ways:
		    if rows[("nopie", w)]["status"] != "0":
		        continue
		    assert set(beh[w]) >= {"exe", "perf", "gdb", "core", "nothp"}, (w, beh.get(w))
		    assert beh[w]["exe"] == "the program", (w, beh[w])
		assert beh["direct"]["gdb"] == "stops at the breakpoint", beh["direct"]
		assert beh["tiexec"]["gdb"] == "stops at the breakpoint", beh["tiexec"]
		assert "nopool" in beh["libhugetlbfs"]
	PY
	# Nothing left: pool, runtime link, work directory, processes, mounts, cache.
	same "$pool_before" "$(cat /proc/sys/vm/nr_hugepages)"
	same "$rt_before" "$(ls -l /usr/lib/libbolt_rt_hugify.a 2>&1 || true)"
	work_dir_gone "$stderr"
	# This run's mounts (its hugetlbfs under the work directory, the text
	# cache's) and cache directory; other work may mount beside it.
	local w cd
	w=$(sed -n 's/^== work directory \(.*\) (removed at the end)$/\1/p' <<<"$stderr")
	cd=$(sed -n 's/^== text cache \(.*\) (removed at the end)$/\1/p' <<<"$stderr")
	[ -n "$cd" ]
	[ ! -e "$cd" ]
	run grep -c -e " $w/" -e " $cd/" /proc/mounts
	[ "$output" = 0 ]
}
