#!/usr/bin/env python3
# run_example.py - Known-answer checks of the structured examples.
# SPDX-License-Identifier: Apache-2.0
#
# Builds an example with `opdc build`, runs it at --threads=1 and
# --threads=2 for each parameter set, requires the two outputs to be
# identical (timing lines aside), and checks the numbers against the known
# answer of that example:
#
#   poisson        the max error against the manufactured solution falls as
#                  h^2: ratios between successive grids (h halved) in
#                  [3.6, 4.4], and the finest error below 1e-3
#   heat3d         the amplitude of the decaying Fourier mode against
#                  exp(-3 pi^2 t): relative error below 3e-2 on every grid (9^3 to 33^3)
#                  and second order under refinement
#   shallow_water  total mass conserved to round-off, energy decreasing
#   adi_heat       the amplitude of the decaying mode against exp(-2 pi^2 t)
#                  at t = 0.1 (Peaceman-Rachford ADI, batched tridiagonal
#                  solves): relative error below 2e-3 on every grid (33^2
#                  to 129^2, dt halved with h) and second order
#   adi_heat3d     the same against exp(-3 pi^2 t) (Douglas-Gunn ADI, solves
#                  along 0, 1 and 2): below 1.2e-2 on 17^3 to 65^3, second
#                  order
#   adjoint        the compiler's adjoint against its tangent (dot-product
#                  test, 1e-12 relative) and dJ/dalpha against a central
#                  finite difference (1e-6; the larger ring with a step
#                  of 1e-3 that keeps rounding below that), on two ring sizes
#   poisson_inverse  gradient descent with the adjoint recovers a source:
#                  the misfit falls by more than 1000x
#   airfoil_shape  Airfoil's shape gradient (adjoint wrt the node
#                  coordinates) on a 60 x 24 mesh: its own checks against
#                  the tangent (1e-11) and a finite difference (1e-5) pass
#   fem_poisson    Q1 finite elements on a distorted quad mesh solved by
#                  solve cg: converged to its tolerance, the max nodal error
#                  against the manufactured solution falls as h^2 (ratios in
#                  [3.6, 4.4] on 16^2, 32^2, 64^2 cells, finest below 3e-4),
#                  Jacobi-preconditioned and plain cg agreeing to 1e-8
#   cloverleaf     CloverLeaf 2D on the benchmark problem of 20 x 20 and
#                  19 x 19 cells (clover_small*.in, 87 steps): the final
#                  kinetic energy within 1e-9 % of the published reference
#                  (test problems 6 and 7), volume constant to 1e-12 and
#                  mass to 1e-7 at every summary
#   cloverleaf_bm_short  clover_bm_short.in (960 x 960, 87 steps, 2 threads
#                  only): test problem 2 within 1e-9 % of CloverLeaf's
#                  1.19316898756307 and the last summary line equal to
#                  CloverLeaf's published 0.1193E+01 kinetic energy
#
# usage: run_example.py --opdc OPDC --source FILE.opd --work DIR --check NAME
import argparse
import math
import os
import re
import subprocess
import sys


def fail(message):
    print("run_example: FAIL: " + message, file=sys.stderr)
    sys.exit(1)


def run(cmd, cwd):
    p = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    if p.returncode != 0:
        fail("%s exited with %d\nstdout:\n%s\nstderr:\n%s" %
             (" ".join(cmd), p.returncode, p.stdout, p.stderr))
    if p.stderr:
        fail("%s wrote to stderr:\n%s" % (" ".join(cmd), p.stderr))
    return p.stdout


def stable(out):
    """The output without its timing lines (the only run-dependent text)."""
    return "\n".join(l for l in out.splitlines() if not l.startswith("time ="))


def number(out, pattern, what):
    m = re.findall(pattern, out, re.MULTILINE)
    if not m:
        fail("no %s in the output:\n%s" % (what, out))
    return float(m[-1])


def outputs(exe, work, argsets):
    """Runs every parameter set at 1 and 2 threads; returns the outputs."""
    result = []
    for args in argsets:
        one = run([exe] + args + ["--threads=1"], work)
        two = run([exe] + args + ["--threads=2"], work)
        if stable(one) != stable(two):
            fail("%s: 1-thread and 2-thread outputs differ:\n%s\n---\n%s" %
                 (" ".join(args), one, two))
        print("$ %s %s\n%s" % (os.path.basename(exe), " ".join(args), one))
        result.append(one)
    return result


def check_order(errors, what, lo=3.6, hi=4.4):
    for coarse, fine in zip(errors, errors[1:]):
        ratio = coarse / fine
        print("%s ratio %.3f (%.3e / %.3e)" % (what, ratio, coarse, fine))
        if not lo <= ratio <= hi:
            fail("%s falls by %.3f under refinement, expected about 4 "
                 "(second order)" % (what, ratio))


def check_poisson(exe, work):
    # Jacobi to convergence (about 2 n^2 ln(1/tol) / pi^2 sweeps).
    grids = [(17, 4000), (33, 14000), (65, 50000)]
    outs = outputs(exe, work, [["--nx=%d" % n, "--ny=%d" % n,
                                "--niter=%d" % it, "--report=%d" % it]
                               for n, it in grids])
    errors = [number(o, r"max error vs exact\s*=\s*(\S+)", "max error")
              for o in outs]
    residuals = [number(o, r"final residual \(rms\)\s*=\s*(\S+)", "residual")
                 for o in outs]
    for (n, _), r in zip(grids, residuals):
        if r > 1e-6:
            fail("poisson %dx%d did not converge: residual %.3e" % (n, n, r))
    check_order(errors, "poisson max error")
    if errors[-1] > 1e-3:
        fail("poisson error %.3e on the finest grid" % errors[-1])


def check_heat3d(exe, work):
    outs = outputs(exe, work, [["--n=%d" % n, "--tfinal=0.05", "--report=1000"]
                               for n in (9, 17, 33)])
    errors = []
    for o in outs:
        last = [l for l in o.splitlines() if re.match(r"\s+\d+\s+0\.05", l)]
        if not last:
            fail("no line for t = 0.05 in:\n%s" % o)
        cols = last[-1].split()
        amp, exact, rel = float(cols[2]), float(cols[3]), float(cols[4])
        if abs(exact - 0.2275374) > 1e-6:  # exp(-3 pi^2 0.05)
            fail("analytic amplitude %.6f, expected exp(-0.15 pi^2)" % exact)
        if rel > 3e-2:
            fail("heat3d amplitude %.6e vs exact %.6e: relative error %.3e"
                 % (amp, exact, rel))
        errors.append(rel)
    check_order(errors, "heat3d amplitude error", 3.4, 4.6)


def check_shallow_water(exe, work):
    outs = outputs(exe, work, [["--nx=48", "--ny=40", "--tfinal=0.15",
                                "--report=25"]])
    out = outs[0]
    for line in ("mass: conserved to round-off",
                 "energy: decreasing at every summary"):
        if line not in out:
            fail("shallow_water: no '%s' in:\n%s" % (line, out))
    drift = number(out, r"mass drift \|M - M0\| / M0 = (\S+)", "mass drift")
    if drift > 1e-12:
        fail("mass drift %.2e" % drift)


def check_adi(exe, work, grids, dt_h, rate, tol):
    """ADI to t = 0.1 with dt = dt_h * h on each grid: the printed exact
    amplitude is exp(-rate pi^2 t), the relative errors are below tol and
    fall as h^2 (space and time both second order)."""
    argsets = []
    for n in grids:
        dt = dt_h / (n - 1)
        argsets.append(["--n=%d" % n, "--dt=%r" % dt,
                        "--nsteps=%d" % round(0.1 / dt), "--report=100000"])
    errors = []
    for o in outputs(exe, work, argsets):
        m = re.findall(r"t = 0\.1000\s+amplitude (\S+)\s+exact (\S+)\s+"
                       r"rel\.err (\S+)", o)
        if not m:
            fail("no line for t = 0.1 in:\n%s" % o)
        amp, exact, rel = (float(v) for v in m[-1])
        want = math.exp(-rate * math.pi ** 2 * 0.1)
        if abs(exact - want) > 1e-8:
            fail("analytic amplitude %.8f, expected %.8f" % (exact, want))
        if rel > tol:
            fail("amplitude %.8e vs exact %.8e: relative error %.3e" %
                 (amp, exact, rel))
        errors.append(rel)
    check_order(errors, "ADI amplitude error")


def check_adi_heat(exe, work):
    check_adi(exe, work, (33, 65, 129), 0.128, 2.0, 2e-3)


def check_adi_heat3d(exe, work):
    check_adi(exe, work, (17, 33, 65), 0.064, 3.0, 1.2e-2)


def check_adjoint(exe, work):
    for out in outputs(exe, work, [["--n=1000", "--sweeps=10"],
                                   ["--n=20000", "--sweeps=25", "--fd_step=1e-3"]]):
        rel = number(out, r"^relative difference (\S+)", "dot-product result")
        if not rel < 1e-12:
            fail("adjoint and tangent differ by %g (relative)" % rel)
        ad = number(out, r"^dJ/dalpha  = (\S+)$", "dJ/dalpha")
        fd = number(out, r"^dJ/dalpha  = (\S+) \(finite difference\)",
                    "finite difference")
        if not abs(ad - fd) <= 1e-6 * abs(fd):
            fail("dJ/dalpha %.15e against finite difference %.15e" % (ad, fd))


def check_poisson_inverse(exe, work):
    out = outputs(exe, work, [[]])[0]
    first = number(out, r"^misfit (\S+) ->", "first misfit")
    final = number(out, r"-> (\S+) \(", "final misfit")
    if not final < 1e-3 * first:
        fail("misfit %g -> %g: fell by less than 1000x" % (first, final))


def check_fem_poisson(exe, work):
    grids = (16, 32, 64)
    runs = [["--quad_nx=%d" % n, "--quad_ny=%d" % n] for n in grids]
    outs = outputs(exe, work, runs + [runs[0] + ["--jacobi=false"]])
    errors = []
    for n, o in zip(grids + (grids[0],), outs):
        res = number(o, r"relative residual\s+(\S+)", "residual")
        if res > 1e-10:
            fail("fem_poisson %d^2 did not converge: residual %.3e" % (n, res))
        errors.append(number(o, r"max nodal error\s*=\s*(\S+)", "max error"))
    plain = errors.pop()
    if abs(plain - errors[0]) > 1e-8:
        fail("fem_poisson: plain cg error %.8e, Jacobi %.8e" % (plain, errors[0]))
    check_order(errors, "fem_poisson max nodal error")
    if errors[-1] > 3e-4:
        fail("fem_poisson error %.3e on the finest mesh" % errors[-1])


def check_airfoil_shape(exe, work):
    out = outputs(exe, work, [["--niter=20"]])[0]
    for name in ("value", "dot product", "finite difference"):
        if not re.search(r"^%s ok$" % name, out, re.MULTILINE):
            fail("airfoil_shape: check '%s' did not pass:\n%s" % (name, out))
    if not os.path.exists(os.path.join(work, "shape_gradient.h5")):
        fail("airfoil_shape wrote no shape_gradient.h5")


def cloverleaf_deck(name):
    return "--deck=" + os.path.join(os.path.dirname(SOURCE), name)


def check_cloverleaf_passed(out, problem):
    m = re.search(r"^Test problem +%d is within +([0-9.e+-]+)%% of the "
                  r"expected solution$" % problem, out, re.MULTILINE)
    if not m or "This test is considered PASSED" not in out:
        fail("cloverleaf: test problem %d did not pass:\n%s" % (problem, out))
    if float(m.group(1)) > 1e-9:
        fail("cloverleaf: test problem %d only within %s %%" %
             (problem, m.group(1)))


def check_cloverleaf(exe, work):
    for deck, problem in (("clover_small.in", 6), ("clover_small19.in", 7)):
        (out,) = outputs(exe, work, [[cloverleaf_deck(deck), "--precise"]])
        check_cloverleaf_passed(out, problem)
        rows = [[float(v) for v in line.split(":")[1].split()] for line in
                re.findall(r"^ precise step \d+:.*$", out, re.MULTILINE)]
        if len(rows) < 10:
            fail("cloverleaf: %d summaries, expected 11" % len(rows))
        vol0, mass0 = rows[0][0], rows[0][1]
        for r in rows:
            if abs(r[0] - vol0) > 1e-12 * vol0 or abs(r[1] - mass0) > 1e-7 * mass0:
                fail("cloverleaf: volume or mass not constant: %s" % r)


def check_cloverleaf_bm_short(exe, work):
    out = run([exe, cloverleaf_deck("clover_bm_short.in"), "--threads=2"], work)
    print(out)
    check_cloverleaf_passed(out, 2)
    last = re.findall(r"^ step: +87 +(.*)$", out, re.MULTILINE)
    if not last or last[-1].split()[5] != "0.1193E+01":
        fail("cloverleaf: no step 87 summary with kinetic energy 0.1193E+01")


CHECKS = {"fem_poisson": check_fem_poisson, "poisson": check_poisson,
          "heat3d": check_heat3d,
          "shallow_water": check_shallow_water, "adi_heat": check_adi_heat,
          "adi_heat3d": check_adi_heat3d, "adjoint": check_adjoint,
          "poisson_inverse": check_poisson_inverse,
          "airfoil_shape": check_airfoil_shape,
          "cloverleaf": check_cloverleaf,
          "cloverleaf_bm_short": check_cloverleaf_bm_short}
SOURCE = ""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--opdc", required=True)
    ap.add_argument("--source", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--check", required=True, choices=sorted(CHECKS))
    ap.add_argument("--meshgen", help="opd-airfoil-meshgen: a small Airfoil "
                    "mesh (new_grid.h5) in the work folder first")
    a = ap.parse_args()
    global SOURCE
    SOURCE = os.path.abspath(a.source)
    os.makedirs(a.work, exist_ok=True)
    if a.meshgen:
        run([a.meshgen, "--I=20", "--J=24", "--h5", "new_grid.h5"], a.work)
    exe = os.path.join(a.work, a.check)
    p = subprocess.run([a.opdc, "build", a.source, "-o", exe],
                       capture_output=True, text=True)
    if p.returncode != 0:
        fail("opdc build %s failed:\n%s%s" % (a.source, p.stdout, p.stderr))
    CHECKS[a.check](exe, a.work)
    print("run_example: %s OK" % a.check)


if __name__ == "__main__":
    main()
