#!/usr/bin/env python3
# run.py - Threads on a busy machine (issue 53): a small-loop and a
# large-loop program (wave2d.opd at n = 201 and n = 1001) at 1 and 2
# threads, on a quiet machine and beside a synthetic competing process (a
# busy loop, unpinned or pinned to the last CPU), with the runtime of this
# build and, given --baseline, with another opdc's (e.g. main's, before the
# pool of lib/core/Pool.cpp). Runs alternate (every configuration once per
# round) and the medians of --rounds rounds are printed, with the STREAM
# triad measured at the start of each mode in this same run. Then the
# print-heavy printer.opd to a file, line-buffered (the default) and fully
# buffered (OPD_LINE_BUFFER=0). No test reads these figures.
#
# usage: bench/oversub/run.py [--build build] [--baseline OPDC]
#        [--rounds 5] [--modes quiet,busy,pinned]
# SPDX-License-Identifier: Apache-2.0
import argparse
import os
import re
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def build(opdc, src, out):
    r = subprocess.run([opdc, "build", src, "-o", out], capture_output=True,
                       text=True)
    if r.returncode:
        sys.exit(f"run.py: {opdc} build {src}: {r.stderr}")


def timed(cmd, env=None, stdout=None):
    """The program's own "time = X s" line (its timed steps)."""
    r = subprocess.run(cmd, capture_output=stdout is None, text=True, env=env,
                       stdout=stdout)
    text = r.stdout if stdout is None else open(stdout.name).read()
    m = re.search(r"time = ([0-9.]+) s", text or "")
    if r.returncode or not m:
        sys.exit(f"run.py: {' '.join(cmd)} failed ({r.returncode}): "
                 f"{text}{r.stderr or ''}")
    return float(m.group(1))


def busy(mode):
    """The competing process: a busy loop, pinned to the last CPU or not."""
    if mode == "quiet":
        return None
    cmd = ["sh", "-c", "while :; do :; done"]
    if mode == "pinned":
        cmd = ["taskset", "-c", str(os.cpu_count() - 1)] + cmd
    return subprocess.Popen(cmd)


def triad(stream):
    r = subprocess.run([stream, "--threads=2", "--mib=64"],
                       capture_output=True, text=True)
    m = re.findall(r"GBps=([0-9.]+)", r.stdout)
    return m[-1] + " GB/s" if m else "(no triad: " + r.stdout.strip() + ")"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--baseline", help="another opdc to compare with")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--modes", default="quiet,busy,pinned")
    ap.add_argument("--small", default="--n=201 --steps=400")
    ap.add_argument("--large", default="--n=1001 --steps=40")
    ap.add_argument("--lines", type=int, default=200000)
    a = ap.parse_args()
    work = os.path.join(a.build, "bench", "oversub")
    os.makedirs(work, exist_ok=True)
    os.chdir(work)
    runtimes = {"this": os.path.join(a.build, "bin", "opdc")}
    if a.baseline:
        runtimes["baseline"] = a.baseline
    for name, opdc in runtimes.items():
        build(opdc, os.path.join(HERE, "wave2d.opd"), f"wave2d-{name}")
    build(runtimes["this"], os.path.join(HERE, "printer.opd"), "printer")
    stream = os.path.join(a.build, "bench", "opd-stream")

    configs = [(rt, size, t) for rt in runtimes for size in ("small", "large")
               for t in (1, 2)]
    print(f"{'mode':8} {'runtime':9} {'program':22} {'threads':>7} "
          f"{'median s':>9} {'min s':>8} {'max s':>8}")
    for mode in a.modes.split(","):
        tri = triad(stream) if os.path.exists(stream) else "(no opd-stream)"
        print(f"# {mode}: STREAM triad (2 threads) {tri}")
        proc = busy(mode)
        try:
            times = {c: [] for c in configs}
            for _ in range(a.rounds):
                for rt, size, t in configs:
                    args = (a.small if size == "small" else a.large).split()
                    times[(rt, size, t)].append(
                        timed([f"./wave2d-{rt}", *args, f"--threads={t}"]))
        finally:
            if proc:
                proc.kill()
                proc.wait()
        for rt, size, t in configs:
            v = times[(rt, size, t)]
            prog = "wave2d " + (a.small if size == "small" else a.large)
            print(f"{mode:8} {rt:9} {prog:22} {t:>7} "
                  f"{statistics.median(v):>9.4f} {min(v):>8.4f} {max(v):>8.4f}",
                  flush=True)

    print(f"# printer.opd, {a.lines} lines to a file, 1 thread")
    res = {"line-buffered": [], "fully buffered": []}
    for _ in range(a.rounds):
        for label in res:
            env = dict(os.environ)
            env["OPD_LINE_BUFFER"] = "1" if label == "line-buffered" else "0"
            with open("printer.out", "w") as f:
                res[label].append(timed(["./printer", f"--lines={a.lines}",
                                         "--threads=1"], env=env, stdout=f))
    for label, v in res.items():
        print(f"printer  {label:16} median {statistics.median(v):.4f} s "
              f"(min {min(v):.4f}, max {max(v):.4f})")
    return 0


sys.exit(main())
