#!/usr/bin/env python3
"""report.py - The table of bench/ca/run.sh: chain time and messages with
communication avoidance off and on, the cost model's prediction next to the
measurement, and the crossover latency.
SPDX-License-Identifier: Apache-2.0

usage: report.py --work=DIR --name=PROGRAM --ranks=2,4 --latencies=0,20,...
                 --variants=off,on --reps=N --steps=N --gbits=G

Reads, in DIR: run-NP-LL-V-R.txt (the program's output with --profile:
"time = S s" and the profile table), remarks-V-LL.txt (opdc's
-Rpass=comm-avoid remarks), pingpong-LL.txt and stream.txt. Per case it
takes the best (smallest) time of the R runs: the machine is shared, and
other work only ever adds time. A chain's time is the timed region divided
by the steps (one chain per step). Messages are the profile's total (all
ranks) per step per rank.

The model's predictions are read from the remarks: every number followed by
"us" (or "µs", "ms", "s") on a remark line that says "without" (CA off) or
"with" (CA on) is taken as that side's predicted time per chain; the
remark lines are printed as they are when they do not parse that way.
"""
import argparse
import glob
import os
import re
import sys

UNITS = {"s": 1e6, "ms": 1e3, "us": 1.0, "µs": 1.0, "ns": 1e-3}
NUM = r"([0-9]+(?:\.[0-9]+)?(?:e[-+]?[0-9]+)?)\s*(ns|us|µs|ms|s)\b"


def parse_run(path):
    text = open(path, encoding="utf-8", errors="replace").read()
    m = re.search(r"^time = ([0-9.eE+-]+)( s)?$", text, re.M)
    t = float(m.group(1)) if m else None
    total = re.search(r"^total\s+(\d+)\s+([0-9.]+)(.*)$", text, re.M)
    msgs, mb, exch = 0, 0.0, 0.0
    if total:
        rest = total.group(3).split()
        if len(rest) >= 6:
            msgs, mb, exch = int(rest[3]), float(rest[4]), float(rest[5])
    return t, msgs, mb, exch


def predictions(path):
    """(off_us, on_us, lines): the model's predicted chain times, if the
    remarks state them (summed over every chain the remarks name)."""
    if not os.path.exists(path):
        return None, None, []
    lines = [l.rstrip() for l in open(path, encoding="utf-8", errors="replace")
             if "remark:" in l and "comm-avoid" in l.lower() or
             "remark:" in l and "chain" in l]
    off = on = None
    for l in lines:
        body = l.split("remark:", 1)[1]
        # "... without CA 123.4 us ... with CA 56.7 us": split at "with".
        for part in re.split(r"(?=\bwith(?:out)?\b)", body):
            side = "off" if part.startswith("without") else \
                "on" if part.startswith("with") else None
            m = re.search(NUM, part)
            if side and m:
                us = float(m.group(1)) * UNITS[m.group(2)]
                if side == "off":
                    off = (off or 0.0) + us
                else:
                    on = (on or 0.0) + us
    return off, on, lines


def main():
    ap = argparse.ArgumentParser()
    for k in ("work", "name", "ranks", "latencies", "variants", "reps",
              "steps", "gbits"):
        ap.add_argument("--" + k, required=True)
    a = ap.parse_args()
    os.chdir(a.work)
    ranks = [int(x) for x in a.ranks.split(",")]
    lats = [float(x) for x in a.latencies.split(",")]
    latnames = a.latencies.split(",")
    variants = a.variants.split(",")
    steps = int(a.steps)

    triad = {}
    for l in open("stream.txt", encoding="utf-8"):
        m = re.match(r"stream-triad threads=(\d+) .* GBps=([0-9.]+)", l)
        if m:
            triad[int(m.group(1))] = float(m.group(2))
    print("STREAM triad (same run): " + ", ".join(
        f"{t} thread(s) {g:.2f} GB/s" for t, g in sorted(triad.items())))

    print("\nping-pong between 2 ranks (median one-way time, stamped at the "
          "send and read at the receive):")
    print(f"{'L us':>6} {'8 B':>8} {'8 KiB':>8} {'64 KiB':>8} {'1 MiB':>9} "
          f"{'rate Gbit/s':>12}")
    for L, ln in zip(lats, latnames):
        path = f"pingpong-L{ln}.txt"
        if not os.path.exists(path):
            continue
        ow = {int(b): float(t) for b, t in re.findall(
            r"pingpong bytes=(\d+) oneway_us=([0-9.]+)", open(path).read())}
        rate = re.findall(r"rate bytes=1048576 gbits=([0-9.]+)",
                          open(path).read())
        print(f"{ln:>6} {ow.get(8, 0):8.1f} {ow.get(8192, 0):8.1f} "
              f"{ow.get(65536, 0):8.1f} {ow.get(1 << 20, 0):9.1f} "
              f"{float(rate[0]) if rate else 0:12.2f}")

    print(f"\n{a.name}: time per chain (best of {a.reps} runs), messages per "
          "chain per rank (--profile), the model's prediction")
    head = f"{'ranks':>5} {'L us':>6}"
    for v in variants:
        head += f" {v + ' us':>10} {'msgs':>5}"
        if v != "plain":
            head += f" {'model':>8} {'err':>6}"
    if "off" in variants and "on" in variants:
        head += f" {'CA speedup':>10} {'model says':>10}"
    print(head)
    crossings = {}
    for np in ranks:
        diffs = []
        for L, ln in zip(lats, latnames):
            row = f"{np:>5} {ln:>6}"
            best = {}
            model = {}
            for v in variants:
                runs = [parse_run(p) for p in
                        sorted(glob.glob(f"run-{np}-L{ln}-{v}-*.txt"))]
                runs = [r for r in runs if r[0] is not None]
                if not runs:
                    row += f" {'-':>10} {'-':>5}"
                    continue
                t, msgs, _, _ = min(runs)
                us = t / steps * 1e6
                best[v] = us
                row += f" {us:10.1f} {msgs / steps / np:5.2f}"
                if v != "plain":
                    off, on, _ = predictions(f"remarks-{v}-L{ln}.txt")
                    pred = off if v == "off" else on
                    model[v] = pred
                    if pred is not None:
                        row += f" {pred:8.1f} {100 * (pred - us) / us:+5.0f}%"
                    else:
                        row += f" {'-':>8} {'-':>6}"
            if "off" in best and "on" in best:
                row += f" {best['off'] / best['on']:10.2f}"
                if model.get("off") and model.get("on"):
                    row += f" {model['off'] / model['on']:10.2f}"
                else:
                    row += f" {'-':>10}"
                diffs.append((L, best["off"] - best["on"]))
            print(row)
        # Crossover: the first latency where CA wins, interpolated linearly
        # between the measured latencies around it.
        cross = None
        for (l0, d0), (l1, d1) in zip(diffs, diffs[1:]):
            if d0 <= 0 < d1:
                cross = l0 + (l1 - l0) * (-d0) / (d1 - d0)
                break
        if diffs and cross is None and diffs[0][1] > 0:
            cross = f"<= {diffs[0][0]:g}"
        crossings[np] = cross
    if crossings:
        print("\ncrossover (the latency above which CA wins, measured):")
        for np, c in crossings.items():
            if c is None:
                print(f"  {np} ranks: CA does not win at the latencies run")
            elif isinstance(c, str):
                print(f"  {np} ranks: CA wins at every latency run ({c} us)")
            else:
                print(f"  {np} ranks: about {c:.0f} us")
    for v in variants:
        if v == "plain":
            continue
        _, _, lines = predictions(f"remarks-{v}-L{latnames[-1]}.txt")
        if lines:
            print(f"\nremarks (--comm-avoid={v}, L = {latnames[-1]} us):")
            for l in lines:
                print("  " + l)
    return 0


if __name__ == "__main__":
    sys.exit(main())
