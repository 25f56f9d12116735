#!/usr/bin/env python3
"""opdc_ab.py - opdc's side of a peers program, two builds alternating.

usage: bench/peers/opdc_ab.py --before BUILD --after BUILD [--program poisson]
           [--rounds 3] [--threads 1,2] [--ranks 2] [--poisson-size 4096]
           [--poisson-iters 100] [--airfoil-iters 1000] [--mesh H5]
           [--profile] [--peer-seconds S1,S2,SR] [--work DIR]

For a machine without the peers' executables (run.py needs them): builds
the program (bench/peers/ops_poisson.opd, laplace2d.opd) with each build's
opdc, serial and --mpi, and runs them exactly as run.py runs opdc's side
(the same arguments, --threads, mpirun with --ranks ranks of one thread;
the time is the program's own "Total Wall time"), before and after
alternating, --rounds times, with the STREAM triad before and after (the
first build's opd-stream). Every run's result must agree with the other
build's (Poisson's total error, laplace2d's PASSED, Airfoil's rms lines,
on OP2's 720k grid: --mesh, else opd-airfoil-meshgen writes it; fewer
iterations with --airfoil-iters). --profile passes opdc's --profile and
keeps each run's output (WORK/PROGRAM-BUILD-CONFIG-ROUND.txt). --peer-seconds gives
figures recorded elsewhere for the peer (1 thread, each further thread
count, ranks), printed as ratios marked as recorded, never as same-run.
"""
import argparse
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import run as R  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", required=True, help="build directory (bin/opdc)")
    ap.add_argument("--after", required=True, help="build directory (bin/opdc)")
    ap.add_argument("--program", default="poisson",
                    choices=["poisson", "laplace2d", "airfoil"])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--ranks", type=int, default=2)
    ap.add_argument("--poisson-size", type=int, default=4096)
    ap.add_argument("--poisson-iters", type=int, default=100)
    ap.add_argument("--airfoil-iters", type=int, default=1000)
    ap.add_argument("--mesh", default="", help="Airfoil's new_grid.h5")
    ap.add_argument("--profile", action="store_true",
                    help="run with --profile, keep every output")
    ap.add_argument("--peer-seconds", default="",
                    help="recorded peer times, one per configuration")
    ap.add_argument("--work", default="build/bench/peers-ab")
    args = ap.parse_args()
    args.threads = [int(t) for t in args.threads.split(",") if t]
    args.gpu = False  # run.py's stream() serves its --gpu runs too
    args.work = os.path.abspath(args.work)
    args.build = os.path.abspath(args.before)
    args.gpu = False  # run.py's stream() also serves its GPU runs
    os.makedirs(args.work, exist_ok=True)
    builds = {"before": os.path.abspath(args.before),
              "after": os.path.abspath(args.after)}
    configs = [(f"{t} thread{'s' if t > 1 else ''}", t, 0) for t in args.threads]
    if args.ranks:
        configs.append((f"{args.ranks} ranks", 1, args.ranks))
    peer = [float(x) for x in args.peer_seconds.split(",") if x]
    if peer and len(peer) != len(configs):
        R.fail(f"--peer-seconds: {len(configs)} figures expected")

    model, l3, ncpu = R.machine()
    if args.program == "airfoil":
        args.meshgen = os.path.join(builds["before"],
                                    "examples/airfoil/meshgen/opd-airfoil-meshgen")
        R.prepare_inputs("airfoil", args.work, args)
    load0 = os.getloadavg()
    triad0 = R.stream(args, "before")
    src = os.path.join(R.ROOT, R.OPD_SOURCE[args.program])
    exes = {}
    for name, d in builds.items():
        for mpi in sorted({bool(r) for _, _, r in configs}):
            exe = os.path.join(args.work, f"{args.program}-{name}" + ("-mpi" if mpi else ""))
            cmd = [os.path.join(d, "bin/opdc"), "build"] + (["--mpi"] if mpi else []) + \
                [src, "-o", exe]
            p = subprocess.run(cmd, capture_output=True, text=True)
            if p.returncode != 0:
                R.fail(f"{' '.join(cmd)} failed:\n{p.stdout}{p.stderr}")
            exes[(name, mpi)] = exe
    times, results = {}, {}
    for rnd in range(args.rounds):
        for label, t, r in configs:
            for name in builds:
                prog_args = R.opdc_args(args.program, args)
                if args.program == "airfoil":
                    prog_args = [f"--niter={args.airfoil_iters}"]
                cmd = (R.mpi_prefix(r) if r else []) + [exes[(name, bool(r))]] + \
                    prog_args + [f"--threads={t}"] + (["--profile"] if args.profile else [])
                out, _ = R.run(cmd, args.work, t, 1800)
                if args.profile:
                    tag = label.replace(" ", "")
                    with open(os.path.join(args.work, f"{args.program}-{name}-{tag}-"
                                           f"{rnd + 1}.txt"), "w") as f:
                        f.write(out)
                if args.program == "airfoil":
                    hist = R.rms_history(out)
                    result = " ".join(f"{k}:{v}" for k, v in sorted(hist.items())) \
                        if hist else "no rms lines"
                else:
                    m = re.search(r"Total error:\s*(\S+)|(PASSED)", out)
                    result = m.group(0) if m else "no result"
                results.setdefault(label, set()).add(result)
                times.setdefault((label, name), []).append(R.own_time(out, name))
            print(f"   round {rnd + 1}/{args.rounds} {label}: " +
                  ", ".join(f"{n} {times[(label, n)][-1]:.3f} s" for n in builds), flush=True)
    triad1 = R.stream(args, "after")
    load1 = os.getloadavg()
    print(f"machine: {model}, {ncpu} CPUs, L3 {l3}")
    for t in sorted(triad0):
        print(f"STREAM triad, {t} thread(s): {triad0[t]:.2f} GB/s before, "
              f"{triad1[t]:.2f} GB/s after")
    print(f"load average: {load0[0]:.1f} at the start, {load1[0]:.1f} at the end; "
          f"{args.rounds} rounds, alternating; time = the program's own timer "
          "(Total Wall time, Airfoil's Max total runtime)")
    hdr = f"{'config':<10} {'before s':>9} {'spread':>7} {'after s':>9} {'spread':>7} {'after/before':>12}"
    if peer:
        hdr += f" {'peer s*':>8} {'before/peer':>11} {'after/peer':>10}"
    print(hdr)
    print("-" * len(hdr))
    bad = False
    for i, (label, _, _) in enumerate(configs):
        b = R.summary(times[(label, "before")])
        a = R.summary(times[(label, "after")])
        line = f"{label:<10} {b[0]:9.3f} {b[1]:6.1f}% {a[0]:9.3f} {a[1]:6.1f}% {a[0] / b[0]:12.2f}"
        if peer:
            line += f" {peer[i]:8.3f} {b[0] / peer[i]:11.2f} {a[0] / peer[i]:10.2f}"
        print(line)
        if len(results[label]) != 1:
            print(f"opdc_ab.py: {label}: the builds disagree: {sorted(results[label])}",
                  file=sys.stderr)
            bad = True
    if peer:
        print("(* the peer's figures as given by --peer-seconds: recorded, not this run)")
    print("results:", {k: sorted(v) for k, v in results.items()})
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
