#!/usr/bin/env python3
"""report.py - The table of bench/ca/run.sh: chain time and messages with
communication avoidance off and on, the cost model's prediction next to the
measurement, and the crossover latency.
SPDX-License-Identifier: Apache-2.0

usage: report.py --work=DIR --name=PROGRAM --ranks=2,4 --latencies=0,20,...
                 --variants=off,on --reps=N --steps=N --gbits=G

Reads, in DIR: run-NP-LL-V-R.txt (the program's output with --profile:
"time = S s" and the profile table), pingpong-LL.txt and stream.txt.
Per case it takes the best (smallest) time of the R runs: the machine is
shared, and
other work only ever adds time. A chain's time is the timed region divided
by the steps (--steps, or N where the program prints "time = S s for N
steps"), one chain per step. Messages are the profile's total (all ranks)
per step per rank.

The model's predictions are read from the --comm-avoid=on run's profile
(section "communication avoidance": the runtime evaluates OP2-CA's model per
chain with the rank's geometry, the network of the target profile and the
memory bandwidth; predicted plain and avoiding times per chain run), next
to the measured times of the off and on builds.
"""
import argparse
import glob
import os
import re
import sys



def parse_run(path):
    text = open(path, encoding="utf-8", errors="replace").read()
    m = re.search(r"^time = ([0-9.eE+-]+)(?: s)?(?: for (\d+) steps)?$",
                  text, re.M)
    t = float(m.group(1)) if m else None
    steps = int(m.group(2)) if m and m.group(2) else None
    total = re.search(r"^total\s+(\d+)\s+([0-9.]+)(.*)$", text, re.M)
    msgs, mb, exch = 0, 0.0, 0.0
    if total:
        rest = total.group(3).split()
        if len(rest) >= 6:
            msgs, mb, exch = int(rest[3]), float(rest[4]), float(rest[5])
    return t, msgs, mb, exch, steps


def predictions(path):
    """(plain_us, avoiding_us, measured_avoiding_us, lines): the cost
    model's chain times (the runtime's --profile section "communication
    avoidance", summed over the chains it lists; times per run, max over
    ranks): evaluated with the loops' compute times measured over the run
    when the profile gives that ("model with the measured loop times"),
    else as predicted at the decision; and the chain time the runtime
    measured."""
    if not os.path.exists(path):
        return None, None, None, []
    text = open(path, encoding="utf-8", errors="replace").read()
    rows = re.findall(
        r"^  (.*): avoided (\d+) of (\d+) runs.*predicted plain ([0-9.]+) us, "
        r"avoiding ([0-9.]+) us; measured plain ([0-9.]+) us, avoiding "
        r"([0-9.]+) us(?:; model with the measured loop times: plain "
        r"([0-9.]+) us, avoiding ([0-9.]+) us)?$", text, re.M)
    if not rows:
        return None, None, None, []
    lines = [l for l in text.splitlines()
             if l.startswith("communication avoidance") or
             re.match(r"^  .*: avoided \d+ of", l)]
    plain = sum(float(r[7] or r[3]) for r in rows)
    avoid = sum(float(r[8] or r[4]) for r in rows)
    return plain, avoid, sum(float(r[6]) for r in rows), lines


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

    print(f"\n{a.name}: time per chain in us (timed region / steps, best "
          f"of {a.reps} runs), messages per chain per rank (--profile); the "
          "model's predictions\n(from the --comm-avoid=on run's profile, the "
          "model evaluated with that run's geometry) and their error against "
          "the measurement")
    ca = "off" in variants and "on" in variants
    head = f"{'ranks':>5} {'L us':>6}"
    for v in variants:
        head += f" {v + ' us':>9} {'msgs':>5}"
    if ca:
        head += (f" {'model off':>9} {'err':>5} {'model on':>9} {'err':>5}"
                 f" {'on/off':>7} {'model':>6}")
    print(head)
    crossings = {}
    model_lines = []
    for np in ranks:
        diffs = []
        for L, ln in zip(lats, latnames):
            row = f"{np:>5} {ln:>6}"
            best = {}
            bestfile = {}
            for v in variants:
                files = sorted(glob.glob(f"run-{np}-L{ln}-{v}-*.txt"))
                runs = [(parse_run(p), p) for p in files]
                runs = [r for r in runs if r[0][0] is not None]
                if not runs:
                    row += f" {'-':>9} {'-':>5}"
                    continue
                (t, msgs, _, _, n), path = min(runs)
                n = n or steps
                if not n:
                    sys.exit(f"report.py: {path}: no step count (--steps, or "
                             "'time = S s for N steps' in the output)")
                us = t / n * 1e6
                best[v] = us
                bestfile[v] = path
                row += f" {us:9.1f} {msgs / n / np:5.2f}"
            if ca and "off" in best and "on" in best:
                plain, avoid, _, lines = predictions(bestfile["on"])
                if lines and not model_lines:
                    model_lines = [f"({np} ranks, L = {ln} us, "
                                   f"{bestfile['on']})"] + lines
                if plain is not None:
                    row += (f" {plain:9.1f} {100 * (plain - best['off']) / best['off']:+4.0f}%"
                            f" {avoid:9.1f} {100 * (avoid - best['on']) / best['on']:+4.0f}%")
                else:
                    row += f" {'-':>9} {'-':>5} {'-':>9} {'-':>5}"
                row += f" {best['on'] / best['off']:7.2f}"
                row += f" {avoid / plain:6.2f}" if plain else f" {'-':>6}"
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
        if diffs:
            crossings[np] = cross
    if crossings:
        print("\ncrossover (the added latency above which CA wins, measured):")
        for np, c in crossings.items():
            if c is None:
                print(f"  {np} ranks: CA does not win at the latencies run")
            elif isinstance(c, str):
                print(f"  {np} ranks: CA wins at every latency run ({c} us)")
            else:
                print(f"  {np} ranks: about {c:.0f} us")
    # The loops' own bandwidth (profile GB/s, time without the exchanges'
    # waits in the CA build) against the triad: how memory-bound they are.
    v = "on" if "on" in variants else variants[0]
    files = sorted(glob.glob(f"run-{ranks[0]}-L{latnames[0]}-{v}-*.txt"))
    if files and 1 in triad:
        text = open(files[0], encoding="utf-8", errors="replace").read()
        print(f"\nloops' bandwidth ({files[0]}; one thread per rank):")
        for m in re.finditer(r"^(\S+)\s+(\d+)\s+([0-9.]+)\s+([0-9.]+)\s+"
                             r"([0-9.]+)", text, re.M):
            name, calls, gbs = m.group(1), int(m.group(2)), float(m.group(5))
            if name in ("total", "loop") or calls < steps or gbs <= 0:
                continue
            print(f"  {name}: {gbs:.2f} GB/s per rank = {gbs / triad[1]:.2f} x "
                  f"the 1-thread triad ({triad[1]:.2f} GB/s)")
    if model_lines:
        print("\nthe runtime's communication-avoidance profile, one run:")
        for l in model_lines:
            print("  " + l)
    return 0


if __name__ == "__main__":
    sys.exit(main())
