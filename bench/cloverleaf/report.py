#!/usr/bin/env python3
"""report.py - One run of bench/cloverleaf/run.sh: the test-problem check,
the wall time, and the --profile table with each loop's share of the STREAM
triad of the same run (one process: threads; MPI: ranks x 1 thread, the
triad of as many threads). Then the share of loop time spent in loops at
80 % of the triad or more, and the loops below it that move at least 1 % of
the bytes (the memory-bound kernels that miss the issue's target).

usage: report.py STREAM_OUTPUT PROGRAM_OUTPUT THREADS
"""
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from profile_table import triad_gbps  # noqa: E402

HEADER = re.compile(r"^loop\s+calls\s+total s\s+avg ms\s+GB/s")


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    triad = triad_gbps(sys.argv[1], int(sys.argv[3]))
    rows, in_table = [], False
    for line in open(sys.argv[2], encoding="utf-8"):
        line = line.rstrip("\n")
        if line.startswith(("Test problem", " This test", "time =")):
            print(line)
        if line.startswith("profile ("):
            print(line)
        if HEADER.match(line):
            in_table = True
            print(f"{line} {'% triad':>8}")
            continue
        if not in_table:
            continue
        if line.startswith("---"):
            print(line + "-" * 9)
            continue
        # The name may hold spaces (an MPI run's grouped exchanges, "chain
        # at FILE:LINE:COL"): the numbers start at the calls column.
        f = line.split()
        k = next((i for i, w in enumerate(f) if w.isdigit()), len(f))
        if len(f) - k >= 4:
            name = " ".join(f[:k])
            share = 100.0 * float(f[k + 3]) / triad
            print(f"{line} {share:7.1f}%")
            if name == "total":
                in_table = False
            else:
                rows.append((name, float(f[k + 1]), float(f[k + 3]), share))
    total_s = sum(r[1] for r in rows)
    total_gb = sum(r[1] * r[2] for r in rows)
    fast = sum(r[1] for r in rows if r[3] >= 80.0)
    print(f"(triad with {sys.argv[3]} thread(s): {triad:.2f} GB/s, same run)")
    print(f"loops at >= 80 % of triad: {100.0 * fast / total_s:.1f} % of loop "
          f"time ({total_s:.2f} s)")
    slow = [r for r in rows if r[3] < 80.0 and r[1] * r[2] >= 0.01 * total_gb]
    if slow:
        print("below 80 %: " + ", ".join(f"{r[0]} {r[3]:.0f}%" for r in slow))


if __name__ == "__main__":
    main()
