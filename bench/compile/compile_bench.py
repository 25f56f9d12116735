#!/usr/bin/env python3
# compile_bench.py - Compile time of every example: wall time, the phases
# and IR passes of --time-passes, and the object size (bench/compile).
# SPDX-License-Identifier: Apache-2.0
#
# Every (program, configuration) pair is built REPS times; the rounds
# alternate over all pairs (pair 1, pair 2, ..., pair 1, pair 2, ...) so
# that a burst of load on the shared machine spreads over the programs
# instead of landing on one, and each figure is the median of its REPS.
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

CONFIGS = {
    "cpu": ["build"],
    "mpi": ["build", "--mpi"],
    "cuda": ["--target=nvidia-h100", "--emit=cuda"],
}

LINE = re.compile(r"^\s+([0-9.]+)\s+(.*\S)\s*$")


def parse_report(stderr):
    """Phases and passes of --time-passes, and the object size."""
    phases, passes, size = {}, {}, None
    section = None
    for line in stderr.splitlines():
        if "opdc pass execution time" in line:
            section = passes
        elif "opdc phase execution time" in line:
            section = phases
        elif line.startswith("  object size:"):
            size = int(line.split()[2])
        elif section is not None:
            m = LINE.match(line)
            if m and not m.group(2).startswith("total"):
                section[m.group(2)] = float(m.group(1))
    return phases, passes, size


def build(opdc, program, config, out):
    args = [opdc] + CONFIGS[config]
    if config != "cuda":
        args += ["-B", "--no-cache"]
    args += ["--time-passes", program, "-o", out]
    t0 = time.monotonic()
    p = subprocess.run(args, capture_output=True, text=True)
    wall = time.monotonic() - t0
    if p.returncode != 0:
        lines = p.stderr.strip().splitlines() or ["?"]
        first = next((l for l in lines if "error:" in l), lines[0])
        return None, first
    phases, passes, size = parse_report(p.stderr)
    return (wall, phases, passes, size), None


def median(xs):
    return statistics.median(xs) if xs else float("nan")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--opdc", default="build/bin/opdc")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--configs", default="cpu,mpi,cuda")
    ap.add_argument("--passes", action="store_true",
                    help="also print every IR pass's median time")
    ap.add_argument("programs", nargs="*")
    a = ap.parse_args()
    programs = a.programs or sorted(
        os.path.join(d, f)
        for d, _, fs in os.walk("examples") for f in fs if f.endswith(".opd"))
    configs = a.configs.split(",")
    pairs = [(p, c) for p in programs for c in configs]
    runs = {pair: [] for pair in pairs}
    errors = {}
    with tempfile.TemporaryDirectory(prefix="opdc-compile-bench-") as tmp:
        for r in range(a.reps):
            for i, (prog, cfg) in enumerate(pairs):
                if (prog, cfg) in errors:
                    continue
                out = os.path.join(tmp, "p%d" % i)
                res, err = build(a.opdc, prog, cfg, out)
                if err:
                    errors[(prog, cfg)] = err
                else:
                    runs[(prog, cfg)].append(res)
            print("round %d of %d done" % (r + 1, a.reps), file=sys.stderr)

    cols = ["front end", "IR passes (each above)", "LLVM IR generation",
            "LLVM optimisation", "code generation", "link",
            "CUDA source generation"]
    short = ["front", "passes", "irgen", "opt", "codegen", "link", "cuda-src"]
    print("# opdc compile time: median of %d alternating runs (s)" % a.reps)
    print("# %s" % subprocess.run([a.opdc, "--version"], capture_output=True,
                                  text=True).stdout.strip())
    print("%-36s %-5s %7s " % ("program", "conf", "wall") +
          " ".join("%8s" % s for s in short) +
          " %-28s %10s" % ("slowest pass", "object B"))
    for prog, cfg in pairs:
        name = os.path.relpath(prog, "examples") if prog.startswith(
            "examples") else prog
        if (prog, cfg) in errors:
            print("%-36s %-5s  error: %s" % (name, cfg, errors[(prog, cfg)][:80]))
            continue
        rs = runs[(prog, cfg)]
        wall = median([r[0] for r in rs])
        ph = [median([r[1].get(c, 0.0) for r in rs]) for c in cols]
        passnames = rs[0][2].keys()
        pm = {n: median([r[2].get(n, 0.0) for r in rs]) for n in passnames}
        slow = max(pm.items(), key=lambda kv: kv[1]) if pm else ("-", 0.0)
        size = rs[0][3]
        print("%-36s %-5s %7.2f " % (name, cfg, wall) +
              " ".join("%8.3f" % x for x in ph) +
              " %-28s %10s" % ("%s %.3f" % slow, size if size else "-"))
        if a.passes:
            for n, t in pm.items():
                print("    %-30s %8.3f" % (n, t))


if __name__ == "__main__":
    main()
