#!/usr/bin/env python3
# run_pi.py - examples/patterns/monte_carlo_pi.opd at a small size against
# tests/e2e/reference/philox.py.
# SPDX-License-Identifier: Apache-2.0
#
# Builds the example (-O3 and -O0), runs it with --threads=1 and
# --threads=2 (and -O0 with 2 threads): the outputs, without the time line,
# must be equal, and equal to what philox.py computes independently for the
# same size (the same Philox4x32-10 streams, counts and formulas), and the
# estimate must be within 5 standard errors of pi (philox.py checks that).
#
# usage: run_pi.py --opdc OPDC --source SOURCE --work DIR --trials T --points M

import argparse
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "e2e", "reference"))
import philox  # noqa: E402


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0 or p.stderr:
        sys.exit("%s: exit status %d\n%s%s" %
                 (" ".join(cmd), p.returncode, p.stdout, p.stderr))
    return "".join(l for l in p.stdout.splitlines(True)
                   if not l.startswith("time"))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--opdc", required=True)
    ap.add_argument("--source", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--trials", type=int, required=True)
    ap.add_argument("--points", type=int, required=True)
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    exe = os.path.join(a.work, "monte_carlo_pi")
    run([a.opdc, "build", a.source, "-o", exe])
    run([a.opdc, "build", "-O0", a.source, "-o", exe + "-O0"])
    size = ["--trials=%d" % a.trials, "--points=%d" % a.points]
    outs = {
        "--threads=1": run([exe] + size + ["--threads=1"]),
        "--threads=2": run([exe] + size + ["--threads=2"]),
        "-O0 --threads=2": run([exe + "-O0"] + size + ["--threads=2"]),
    }
    expected, mean, se = philox.pi(a.trials, a.points, 12345)
    ok = True
    for how, out in outs.items():
        if out != expected:
            ok = False
            print("monte_carlo_pi %s differs from philox.py:\n--- philox.py\n"
                  "%s--- monte_carlo_pi\n%s" % (how, expected, out))
    if not abs(mean - 3.141592653589793) < 5.0 * se:
        ok = False
        print("estimate %.12f is more than 5 standard errors (%.3e) from pi" %
              (mean, se))
    sys.stdout.write(expected)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
