#!/usr/bin/env python3
"""window-starts.py TIEXEC PROG N: starts PROG (a fixture that prints
"ready" and waits for stdin to close) N times through TIEXEC, reads each
one's smaps from outside while it waits, and prints "N WIN BASES": how
many starts had libc's window entry on one PMD (ShmemPmdMapped 2048 kB),
and at how many distinct addresses it was (the interpreter's window, the
one below ld.so, aside)."""
import subprocess
import sys

tiexec, prog, starts = sys.argv[1], sys.argv[2], int(sys.argv[3])
win, bases = 0, set()
for _ in range(starts):
    p = subprocess.Popen([tiexec, prog, "wait"], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    # "ready": main runs, the stage after ld.so is done.
    smaps = open(f"/proc/{p.pid}/smaps").read() if p.stdout.readline().strip() == b"ready" else ""
    p.stdin.close()
    p.wait()
    # libc's window: the window mapping right below one of libc's own
    # (its writable data on x86-64, its gap on arm64); the interpreter's
    # window lies right below ld.so's.
    cur, prev, pmd = "", None, {}
    for line in smaps.splitlines():
        f = line.split()
        if "-" in f[0] and len(f) >= 5 and ":" in f[3]:
            path = f[5] if len(f) > 5 else ""
            if prev is not None and path.endswith("/libc.so.6"):
                bases.add(prev)
                win += pmd.get(prev, 0) == 2048
            prev = f[0].split("-")[0] if path.endswith(".window") else None
            cur = path
        elif cur.endswith(".window") and f[0] == "ShmemPmdMapped:":
            pmd[prev] = int(f[1])
print(starts, win, len(bases))
