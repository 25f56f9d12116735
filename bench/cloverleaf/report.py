#!/usr/bin/env python3
"""report.py - One run of bench/cloverleaf/run.sh: the test-problem check,
the wall time, and the --profile table with each loop's share of the STREAM
triad of the same run (one process: threads; MPI: ranks x 1 thread, the
triad of as many threads). On several ranks the share is of the loop's
bandwidth outside its halo exchanges (the profile's "kern GB/s", as OPS
reports a kernel's bandwidth apart from its MPI time); the share with the
exchanges counted is printed beside it.

With a fourth argument, the output of the same binary on the deck shrunk
until every field fits in the last-level cache (run.sh's in-cache run), a
column "in cache" gives each loop's GB/s there over its GB/s here: a loop
that is not at least IN_CACHE_GAIN times faster with its data in cache is
not bound by memory traffic (its arithmetic is), and the issue's target
(every memory-bound kernel at >= 80 % of the triad) does not apply to it.

Then the share of loop time spent in loops at 80 % of the triad or more,
and the loops below it that move at least 1 % of the bytes, each with its
verdict.

usage: report.py STREAM_OUTPUT PROGRAM_OUTPUT THREADS [IN_CACHE_OUTPUT]
"""
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from profile_table import triad_gbps  # noqa: E402

HEADER = re.compile(r"^loop\s+calls\s+total s\s+avg ms\s+GB/s")
# In-cache GB/s over out-of-cache GB/s below which a loop counts as bound by
# its arithmetic: the run-to-run spread of one loop on the machines this was
# measured on is about 10 %.
IN_CACHE_GAIN = 1.1


def profile_rows(path, echo=None):
    """(name, total s, GB/s, kernel GB/s, exchange s) of each loop of the
    first --profile table in `path` (kernel GB/s: outside halo exchanges,
    the plain GB/s on one rank). With `echo`, every table line and the
    program's check lines go to echo(line, row or None)."""
    rows, in_table = [], False
    for line in open(path, encoding="utf-8"):
        line = line.rstrip("\n")
        if echo and line.startswith(("Test problem", " This test", "time =",
                                     "profile (")):
            echo(line, None)
        if HEADER.match(line):
            in_table = True
            if echo:
                echo(line, "header")
            continue
        if not in_table:
            continue
        if line.startswith("---"):
            if echo:
                echo(line, "rule")
            continue
        # The name may hold spaces (an MPI run's grouped exchanges, "chain
        # at FILE:LINE:COL"): the numbers start at the calls column.
        f = line.split()
        k = next((i for i, w in enumerate(f) if w.isdigit()), len(f))
        if len(f) - k < 4:
            continue
        name = " ".join(f[:k])
        gbs = float(f[k + 3])
        kern = float(f[k + 8]) if len(f) - k >= 9 else gbs
        exch = float(f[k + 7]) if len(f) - k >= 9 else 0.0
        row = (name, float(f[k + 1]), gbs, kern, exch)
        if echo:
            echo(line, row)
        if name == "total":
            break
        rows.append(row)
    return rows


def main():
    if len(sys.argv) not in (4, 5):
        sys.exit(__doc__)
    threads = int(sys.argv[3])
    triad = triad_gbps(sys.argv[1], threads)
    cached = {}
    if len(sys.argv) == 5:
        cached = {r[0]: r[3] for r in profile_rows(sys.argv[4])}
    ranks = False

    def echo(line, row):
        nonlocal ranks
        if row is None:
            print(line)
        elif row == "header":
            ranks = "kern GB/s" in line
            extra = f" {'% triad':>8}" + (f" {'w/ exch':>8}" if ranks else "")
            print(line + extra + (f" {'in cache':>9}" if cached else ""))
        elif row == "rule":
            print(line + "-" * (9 + (9 if ranks else 0) + (10 if cached else 0)))
        else:
            text = f"{line} {100.0 * row[3] / triad:7.1f}%"
            if ranks:
                text += f" {100.0 * row[2] / triad:7.1f}%"
            if cached:
                gain = cached.get(row[0], 0.0) / row[3] if row[3] else 0.0
                text += f" {gain:8.2f}x" if row[0] in cached else f" {'-':>9}"
            print(text)

    rows = profile_rows(sys.argv[2], echo)
    total_s = sum(r[1] for r in rows)
    total_gb = sum(r[1] * r[2] for r in rows)
    share = {r[0]: 100.0 * r[3] / triad for r in rows}
    fast = sum(r[1] for r in rows if share[r[0]] >= 80.0)
    print(f"(triad with {threads} thread(s): {triad:.2f} GB/s, same run"
          + ("; % triad outside halo exchanges, 'w/ exch' with them)"
             if ranks else ")"))
    print(f"loops at >= 80 % of triad: {100.0 * fast / total_s:.1f} % of loop "
          f"time ({total_s:.2f} s)")
    slow = [r for r in rows
            if share[r[0]] < 80.0 and r[1] * r[2] >= 0.01 * total_gb]
    if not slow:
        return
    if not cached:
        print("below 80 %: " + ", ".join(f"{r[0]} {share[r[0]]:.0f}%"
                                        for r in slow))
        return
    bound, arith, unknown = [], [], []
    for r in slow:
        text = f"{r[0]} {share[r[0]]:.0f}%"
        if r[0] not in cached:
            unknown.append(text)
        elif cached[r[0]] >= IN_CACHE_GAIN * r[3]:
            bound.append(f"{text} ({cached[r[0]] / r[3]:.2f}x in cache)")
        else:
            arith.append(f"{text} ({cached[r[0]] / r[3]:.2f}x in cache)")
    print("below 80 %, memory-bound (the target's): "
          + (", ".join(bound) if bound else "none"))
    if arith:
        print(f"below 80 %, not {IN_CACHE_GAIN}x faster in cache (bound by "
              "arithmetic): " + ", ".join(arith))
    if unknown:
        print("below 80 %, not in the in-cache run: " + ", ".join(unknown))


if __name__ == "__main__":
    main()
