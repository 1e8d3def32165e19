#!/usr/bin/env python3
"""window-starts.py TIEXEC PROG N: starts PROG (a fixture that prints
"ready" and waits for stdin to close) N times through TIEXEC, reads each
one's smaps from outside while it waits, and prints "N WIN BASES": how
many starts had libc's window entry on one PMD (ShmemPmdMapped 2048 kB),
and at how many distinct addresses it was."""
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
    cur = ""
    for line in smaps.splitlines():
        f = line.split()
        if "-" in f[0] and len(f) >= 5 and ":" in f[3]:
            cur = f[5] if len(f) > 5 else ""
            if cur.endswith(".window"):
                bases.add(f[0].split("-")[0])
        elif cur.endswith(".window") and f[0] == "ShmemPmdMapped:" and f[1] == "2048":
            win += 1
print(starts, win, len(bases))
