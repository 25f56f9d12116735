#!/usr/bin/env python3
"""report.py - The cost of -frepro-sum from two --profile outputs.

usage: report.py STREAM_OUTPUT THREADS (LABEL PLAIN REPRO)...
Per program: each loop's seconds, GB/s and % of the STREAM triad measured
in the same run, plain against -frepro-sum, the ratio per loop and in total.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from profile_table import TABLE_HEADER, triad_gbps  # noqa: E402


def loops(path):
    rows, in_table = {}, False
    for line in open(path):
        line = line.rstrip("\n")
        if TABLE_HEADER.match(line):
            in_table = True
            continue
        f = line.split()
        if in_table and len(f) == 5 and not line.startswith("-"):
            rows[f[0]] = (float(f[2]), float(f[4]))
    return rows


def main():
    a = sys.argv[1:]
    if len(a) < 5 or (len(a) - 2) % 3:
        sys.exit(__doc__)
    triad = triad_gbps(a[0], int(a[1]))
    print(f"STREAM triad, {a[1]} thread(s): {triad:.1f} GB/s")
    for i in range(2, len(a), 3):
        label, plain, repro = a[i], loops(a[i + 1]), loops(a[i + 2])
        print(f"== {label}")
        print(f"{'loop':<14}{'plain s':>10}{'GB/s':>7}{'%triad':>8}"
              f"{'repro s':>10}{'GB/s':>7}{'%triad':>8}{'ratio':>8}")
        for name in plain:
            if name not in repro:
                continue
            (ps, pg), (rs, rg) = plain[name], repro[name]
            print(f"{name:<14}{ps:>10.3f}{pg:>7.2f}{100 * pg / triad:>7.0f}%"
                  f"{rs:>10.3f}{rg:>7.2f}{100 * rg / triad:>7.0f}%"
                  f"{rs / ps if ps else 0:>8.2f}")


main()
