#!/usr/bin/env python3
"""report.py - Fused against unfused chains from two --profile outputs.

usage: report.py STREAM_OUTPUT THREADS ITERS (LABEL UNFUSED FUSED)...
For each program: the time and bytes per iteration of the loops run every
iteration (calls == ITERS), their GB/s and % of the STREAM triad of the same
thread count, for the unfused and the fused build, and the speedup. Checks
that both builds printed the same results (every line but the time).
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
    if len(a) < 6 or (len(a) - 3) % 3:
        sys.exit(__doc__)
    threads, iters = int(a[1]), int(a[2])
    triad = triad_gbps(a[0], threads)
    print(f"-- {threads} thread(s), {iters} iterations; STREAM triad "
          f"{triad:.2f} GB/s (same run)")
    print(f"{'chain':<18} {'build':<8} {'loops':<28} {'ms/iter':>9} "
          f"{'MB/iter':>9} {'GB/s':>7} {'% triad':>8} {'speedup':>8}")
    for i in range(3, len(a), 3):
        label, unfused, fused = a[i], a[i + 1], a[i + 2]
        rows = []
        for build, path in (("unfused", unfused), ("fused", fused)):
            results, loops = parse(path, iters)
            secs = sum(l[1] for l in loops) / iters
            nbytes = sum(l[2] for l in loops) / iters
            rows.append((build, results, ", ".join(l[0] for l in loops),
                         secs, nbytes))
        if rows[0][1] != rows[1][1]:
            sys.exit(f"report.py: error: {label}: fused and unfused builds "
                     f"printed different results:\n{rows[0][1]}\n{rows[1][1]}")
        base = rows[0][3]
        for build, _, names, secs, nbytes in rows:
            gbps = nbytes / secs * 1e-9 if secs > 0 else 0.0
            print(f"{label:<18} {build:<8} {names:<28} {secs * 1e3:9.3f} "
                  f"{nbytes * 1e-6:9.1f} {gbps:7.2f} {100 * gbps / triad:7.1f}% "
                  f"{base / secs if secs > 0 else 0:7.2f}x")
    print("(MB/iter: the runtime's count, every dat once per loop; a dat the "
          "fused kernel writes and then reads counts as read and written)")


if __name__ == "__main__":
    main()
