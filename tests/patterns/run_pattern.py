#!/usr/bin/env python3
# run_pattern.py - Runs a parallel-pattern example and checks its output.
# SPDX-License-Identifier: Apache-2.0
#
# usage: run_pattern.py --opdc OPDC --source FILE.opd --work DIR
#                       --reference REF.py [--ref-args "A B"] [--args "--n=5"]
#                       [--tol 1e-10] [--mpiexec MPIRUN]
#
# Without --mpiexec: builds FILE.opd with `opdc build`, runs it with ARGS at
# --threads=1 and --threads=2, requires the two outputs to be identical
# (timing lines aside), and compares them with what the independent Python
# reference REF.py prints for REF-ARGS.
# With --mpiexec: builds FILE.opd with and without --mpi, runs the serial
# program (--threads=1) and the MPI one under `MPIRUN -np 2 --oversubscribe`
# (--allow-run-as-root as root), and compares the two outputs. Exits with 77
# (skipped) when MPIRUN is empty or not found.
#
# Outputs are compared word by word: words that are numbers must agree to
# TOL relative (sums over the elements are added in another order), every
# other word exactly; integers print without a dot or exponent, so counts
# must be equal unless they are huge.
import argparse
import os
import shutil
import subprocess
import sys

SKIP = 77


def fail(message):
    print("run_pattern: FAIL: " + message, file=sys.stderr)
    sys.exit(1)


def run(cmd, cwd):
    p = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True,
                       timeout=120)
    if p.returncode != 0:
        fail("%s exited with %d\nstdout:\n%s\nstderr:\n%s" %
             (" ".join(cmd), p.returncode, p.stdout, p.stderr))
    return p.stdout


def stable(out):
    """The output without its timing lines (the only run-dependent text)."""
    return [l for l in out.splitlines() if not l.startswith("time =")]


def same_word(a, b, tol):
    if a == b:
        return True
    try:
        x, y = float(a), float(b)
    except ValueError:
        return False
    return abs(x - y) <= tol * max(abs(x), abs(y))


def compare(what, expected, actual, tol):
    exp, act = stable(expected), stable(actual)
    if len(exp) != len(act):
        fail("%s: %d lines, expected %d:\n%s\n--- expected:\n%s" %
             (what, len(act), len(exp), actual, expected))
    for n, (e, a) in enumerate(zip(exp, act), 1):
        ew, aw = e.split(), a.split()
        if len(ew) != len(aw) or not all(
                same_word(x, y, tol) for x, y in zip(ew, aw)):
            fail("%s: line %d differs beyond %g:\n  expected: %s\n  got:      %s"
                 % (what, n, tol, e, a))


def build(opdc, source, exe, mpi=False):
    cmd = [opdc, "build"] + (["--mpi"] if mpi else []) + [source, "-o", exe]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        fail("%s failed:\n%s%s" % (" ".join(cmd), p.stdout, p.stderr))


def check_threads(a, exe):
    one = run([exe] + a.args + ["--threads=1"], a.work)
    two = run([exe] + a.args + ["--threads=2"], a.work)
    print("$ %s %s --threads=1\n%s" % (os.path.basename(exe),
                                       " ".join(a.args), one))
    if stable(one) != stable(two):
        fail("1-thread and 2-thread outputs differ:\n%s\n---\n%s" % (one, two))
    ref = run([sys.executable, a.reference] + a.ref_args, a.work)
    print("$ %s %s\n%s" % (os.path.basename(a.reference),
                           " ".join(a.ref_args), ref))
    compare("the program against the reference", ref, one, a.tol)


def check_mpi(a, exe):
    mpiexec = shutil.which(a.mpiexec) if a.mpiexec else None
    if not mpiexec:
        print("run_pattern: no mpirun; skipped")
        sys.exit(SKIP)
    build(a.opdc, a.source, exe + "-mpi", mpi=True)
    serial = run([exe] + a.args + ["--threads=1"], a.work)
    flags = ["--oversubscribe"]
    if os.getuid() == 0:
        flags.append("--allow-run-as-root")
    mpi = run([mpiexec] + flags + ["-np", "2", exe + "-mpi"] + a.args +
              ["--threads=1"], a.work)
    print("$ mpirun -np 2 %s-mpi %s\n%s" % (os.path.basename(exe),
                                            " ".join(a.args), mpi))
    compare("2 MPI ranks against the serial run", serial, mpi, a.tol)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--opdc", required=True)
    ap.add_argument("--source", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--reference", required=True)
    ap.add_argument("--ref-args", default="")
    ap.add_argument("--args", default="")
    ap.add_argument("--tol", type=float, default=1e-10)
    ap.add_argument("--mpiexec")
    a = ap.parse_args()
    a.args, a.ref_args = a.args.split(), a.ref_args.split()
    a.source, a.reference = os.path.abspath(a.source), os.path.abspath(a.reference)
    a.work = os.path.abspath(a.work)
    os.makedirs(a.work, exist_ok=True)
    exe = os.path.join(a.work, os.path.splitext(os.path.basename(a.source))[0])
    build(a.opdc, a.source, exe)
    if a.mpiexec is None:
        check_threads(a, exe)
    else:
        check_mpi(a, exe)
    print("run_pattern: %s OK" % os.path.basename(a.source))


if __name__ == "__main__":
    main()
