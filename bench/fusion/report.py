#!/usr/bin/env python3
"""report.py - Chains built with and without fusion, from --profile outputs.

usage: report.py STREAM_OUTPUT THREADS ITERS BUILDS (LABEL OUTPUT...)...
BUILDS names the builds, comma-separated (e.g. unfused,noskew,fused); each
LABEL is followed by one --profile output per build, in that order. For
each program: the time and bytes per iteration of the loops run every
iteration (calls == ITERS), their GB/s and % of the STREAM triad of the same
thread count, per build, and the speedup over the first build. Checks that
every build printed the same results (every line but the time). A skewed
sweep's loops count their time and bytes on its first loop (the others
show 0): the sums per iteration are the sweep's.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from profile_table import TABLE_HEADER, triad_gbps  # noqa: E402


def parse(path, iters):
    """(results, [(loop, seconds, bytes)]) of the loops called every iteration."""
    results, loops, in_table = [], [], False
    for line in open(path):
        line = line.rstrip("\n")
        if TABLE_HEADER.match(line):
            in_table = True
            continue
        if not in_table:
            if line and not line.startswith("time") and \
                    not line.startswith("profile"):
                results.append(line)
            continue
        f = line.split()
        if len(f) == 5 and f[0] != "total" and int(f[1]) == iters:
            seconds, gbps = float(f[2]), float(f[4])
            loops.append((f[0], seconds, gbps * seconds * 1e9))
    return results, loops


def main():
    a = sys.argv[1:]
    if len(a) < 6:
        sys.exit(__doc__)
    threads, iters = int(a[1]), int(a[2])
    builds = a[3].split(",")
    groups = a[4:]
    if len(groups) % (len(builds) + 1):
        sys.exit(__doc__)
    triad = triad_gbps(a[0], threads)
    print(f"-- {threads} thread(s), {iters} iterations; STREAM triad "
          f"{triad:.2f} GB/s (same run)")
    print(f"{'chain':<18} {'build':<8} {'loops':<34} {'ms/iter':>9} "
          f"{'MB/iter':>9} {'GB/s':>7} {'% triad':>8} {'speedup':>8}")
    step = len(builds) + 1
    for i in range(0, len(groups), step):
        label, paths = groups[i], groups[i + 1:i + step]
        rows = []
        for build, path in zip(builds, paths):
            results, loops = parse(path, iters)
            secs = sum(l[1] for l in loops) / iters
            nbytes = sum(l[2] for l in loops) / iters
            rows.append((build, results, ", ".join(l[0] for l in loops),
                         secs, nbytes))
        for r in rows[1:]:
            if r[1] != rows[0][1]:
                sys.exit(f"report.py: error: {label}: builds {rows[0][0]} and "
                         f"{r[0]} printed different results:\n{rows[0][1]}\n"
                         f"{r[1]}")
        base = rows[0][3]
        for build, _, names, secs, nbytes in rows:
            gbps = nbytes / secs * 1e-9 if secs > 0 else 0.0
            print(f"{label:<18} {build:<8} {names:<34} {secs * 1e3:9.3f} "
                  f"{nbytes * 1e-6:9.1f} {gbps:7.2f} {100 * gbps / triad:7.1f}% "
                  f"{base / secs if secs > 0 else 0:7.2f}x")
    print("(MB/iter: the runtime's count, every dat once per loop; a dat the "
          "fused kernel writes and then reads counts as read and written)")


if __name__ == "__main__":
    main()
