#!/usr/bin/env python3
"""run.py - A parallel loop's fixed cost, opdc against OpenMP (issue 57).

usage: bench/loopcost/run.py [--build build] [--baseline BUILD]
           [--threads 1,2] [--sizes 1000,10000,100000,1000000,10000000]
           [--elements 2e8] [--rounds 3]

Builds bench/loopcost/loopcost.opd with this build's opdc and runs it
beside opd-loopcost-omp (omp_ref.c: the same two loops as OpenMP `parallel
for`, built by CMake at -O3 -march=native), alternating, for each set size n
and thread count, with reps = elements / n calls of each loop. Prints the
time per call of each loop (the median over the rounds, in microseconds),
the ratio opdc / OpenMP, and each side's GB/s (16 bytes an element read,
8 written for axpby), with the machine, its L3 and the same-run STREAM
triad. At small n the time per call is the loop's fixed cost; at large n,
its streaming.

--baseline BUILD also builds loopcost.opd with another build's opdc (main's,
say) and runs it in the same alternation (opdc, baseline, OpenMP), then
prints a second table: each side's median with its spread (the lowest and
highest round) and the ratio opdc / baseline, so that a runtime change is
judged against the code it replaces in the same run and load.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "bench"))
from profile_table import machine, triad_values  # noqa: E402

LINE = re.compile(r"n=(\d+) reps=(\d+) axpby_us=([0-9.]+) dot_us=([0-9.]+) "
                  r"check=(\S+)")


def fail(msg):
    print(f"run.py: error: {msg}", file=sys.stderr)
    sys.exit(2)


def run(cmd, env=None):
    p = subprocess.run(cmd, capture_output=True, text=True,
                       env=dict(os.environ, **(env or {})))
    if p.returncode != 0:
        fail(f"{' '.join(cmd)}: exit {p.returncode}\n{p.stdout}{p.stderr}")
    m = LINE.search(p.stdout)
    if not m:
        fail(f"{' '.join(cmd)}: no result line in\n{p.stdout}")
    return float(m.group(3)), float(m.group(4)), m.group(5)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--baseline", default="",
                    help="another build whose opdc runs beside this one's")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--sizes", default="1000,10000,100000,1000000,10000000")
    ap.add_argument("--elements", type=float, default=2e8)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    build = os.path.abspath(args.build)
    opdc = os.path.join(build, "bin/opdc")
    omp = os.path.join(build, "bench/opd-loopcost-omp")
    stream = os.path.join(build, "bench/opd-stream")
    for exe in (opdc, omp, stream):
        if not os.path.isfile(exe):
            fail(f"{exe}: not built (cmake --build {build})")
    threads = [int(t) for t in args.threads.split(",") if t]
    sizes = [int(n) for n in args.sizes.split(",") if n]
    if not threads or not sizes or args.rounds < 1:
        fail("--threads, --sizes and --rounds need at least one value")
    work = os.path.join(build, "bench/loopcost")
    os.makedirs(work, exist_ok=True)
    exe = os.path.join(work, "loopcost")
    def compile_with(compiler, out):
        p = subprocess.run([compiler, "build",
                            os.path.join(ROOT, "bench/loopcost/loopcost.opd"),
                            "-o", out], capture_output=True, text=True)
        if p.returncode != 0:
            fail(f"{compiler} build failed:\n{p.stdout}{p.stderr}")

    compile_with(opdc, exe)
    base = ""
    if args.baseline:
        base_opdc = os.path.join(os.path.abspath(args.baseline), "bin/opdc")
        if not os.path.isfile(base_opdc):
            fail(f"{base_opdc}: not built")
        base = os.path.join(work, "loopcost-baseline")
        compile_with(base_opdc, base)

    def triad(label):
        out = subprocess.run([stream, "--threads=" + ",".join(map(str, threads))],
                             capture_output=True, text=True).stdout
        path = os.path.join(work, f"stream-{label}.txt")
        with open(path, "w") as f:
            f.write(out)
        return {t: triad_values(path, t)[0] for t in threads}

    model, l3, ncpu = machine()
    load0 = os.getloadavg()[0]
    tri0 = triad("before")
    res = {}  # (n, t, side) -> [(axpby, dot)]
    for rnd in range(args.rounds):
        for n in sizes:
            reps = max(10, int(args.elements / n))
            for t in threads:
                # With a baseline, the two opdc builds take turns at going
                # first: at 1 thread, where both run the same code, the one
                # always run first was up to 2x slower at 10^5 elements.
                second = base and rnd % 2 == 1
                if second:
                    c = run([base, f"--n={n}", f"--reps={reps}", f"--threads={t}"])
                a = run([exe, f"--n={n}", f"--reps={reps}", f"--threads={t}"])
                if base and not second:
                    c = run([base, f"--n={n}", f"--reps={reps}", f"--threads={t}"])
                if base:
                    # The same sums in the same chunks: the same bits.
                    if c[2] != a[2]:
                        fail(f"n={n}, {t} thread(s): opdc's sum {a[2]} "
                             f"against the baseline's {c[2]}")
                    res.setdefault((n, t, "base"), []).append(c[:2])
                b = run([omp, str(n), str(reps)], {"OMP_NUM_THREADS": str(t)})
                # Both sum the same products, in another order (opdc's
                # lanes and chunks): equal to round-off.
                if abs(float(a[2]) - float(b[2])) > 1e-9 * abs(float(b[2])):
                    fail(f"n={n}, {t} thread(s): opdc's sum {a[2]} against "
                         f"OpenMP's {b[2]}")
                res.setdefault((n, t, "opdc"), []).append(a[:2])
                res.setdefault((n, t, "omp"), []).append(b[:2])
    tri1 = triad("after")
    load1 = os.getloadavg()[0]
    print(f"machine: {model}, {ncpu} CPUs, L3 {l3}; load average "
          f"{load0:.1f} at the start, {load1:.1f} at the end; {args.rounds} "
          f"round(s), alternating, median")
    for t in threads:
        print(f"STREAM triad, {t} thread(s): {tri0[t]:.2f} GB/s before, "
              f"{tri1[t]:.2f} GB/s after")
    hdr = (f"{'n':>9} {'thr':>3} | {'axpby us':>9} {'omp us':>9} {'ratio':>6} "
           f"{'GB/s':>6} | {'dot us':>9} {'omp us':>9} {'ratio':>6} {'GB/s':>6}")
    print(hdr)
    print("-" * len(hdr))
    for n in sizes:
        for t in threads:
            o = [statistics.median(v[i] for v in res[(n, t, "opdc")]) for i in (0, 1)]
            m = [statistics.median(v[i] for v in res[(n, t, "omp")]) for i in (0, 1)]
            print(f"{n:>9} {t:>3} | {o[0]:9.3f} {m[0]:9.3f} {o[0] / m[0]:6.2f} "
                  f"{24e-3 * n / o[0]:6.1f} | {o[1]:9.3f} {m[1]:9.3f} "
                  f"{o[1] / m[1]:6.2f} {16e-3 * n / o[1]:6.1f}")
    print("(us: microseconds a call; ratio: opdc / OpenMP; GB/s: opdc's, "
          "axpby 24 B and dot 16 B an element)")
    if not base:
        return

    def spread(key, i):
        v = [r[i] for r in res[key]]
        return statistics.median(v), min(v), max(v)

    print(f"\nagainst the baseline ({os.path.abspath(args.baseline)}), same "
          f"rounds: median [lowest-highest]")
    hdr = (f"{'n':>9} {'thr':>3} | {'axpby us':>26} {'baseline us':>26} "
           f"{'ratio':>6} | {'dot us':>26} {'baseline us':>26} {'ratio':>6}")
    print(hdr)
    print("-" * len(hdr))

    def cell(m):
        return f"{m[0]:9.3f} [{m[1]:.3f}-{m[2]:.3f}]".rjust(26)

    for n in sizes:
        for t in threads:
            row = f"{n:>9} {t:>3} |"
            for i in (0, 1):
                o, b = spread((n, t, "opdc"), i), spread((n, t, "base"), i)
                row += f" {cell(o)} {cell(b)} {o[0] / b[0]:6.2f}" + (" |" if i == 0 else "")
            print(row)
    print("(ratio: opdc / baseline, of the medians)")


if __name__ == "__main__":
    main()
