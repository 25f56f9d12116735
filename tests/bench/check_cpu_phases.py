#!/usr/bin/env python3
# check_cpu_phases.py - bench/adjoint/cpu_phases.py splits a cpu-clock
# listing into the bench's calls: the classes of the bodies, the samples
# outside them, stray bodies merged, and time off the CPU.
# SPDX-License-Identifier: Apache-2.0
#
# Usage: check_cpu_phases.py REPO_ROOT
import os
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree

sys.path.insert(0, os.path.join(sys.argv[1], "bench", "adjoint"))
import cpu_phases  # noqa: E402


def listing():
    """A run of one round: 30 ms of primal, 50 of standalone tangent, then
    the adjoint (its tangent kernel, 40 ms, a 3 ms stray zero fill, 30 ms
    of reverse sweep with a 10 ms preemption), then a second primal."""
    lines, t = [], 100.0

    def run(sym, n, gap=0.0):
        nonlocal t
        for i in range(n):
            t += 0.001 + (gap if i == n // 2 else 0.0)
            lines.append("%.6f:  ffff %s" % (t, sym))

    run("clear_page_erms", 5)
    run("opd_body_init.0", 25)
    run("opd_body_step.1", 30)
    run("opd_body_step.d.20", 48)
    run("opd_body_tangent_zero_f64+tangent_zero_f64.18", 2)
    run("opd_body_step.d1.343", 40)
    run("opd_body_zero.0", 3)
    run("opd_body_step.bt.set+step.bt1+step.bt2.54", 20, gap=0.010)
    run("opdc::rt::runTasks", 2)
    run("opd_body_step.bt.f2+step.bt1.f.57", 8)
    run("opd_body_step.1", 30)
    return lines


def main():
    got = [(c[0], c[1], round(c[2] * 1000)) for c in
           cpu_phases.calls(listing())]
    want = [("start", 5, 0), ("init", 25, 0), ("primal", 30, 0),
            ("tangent", 50, 0), ("adjoint", 73, 10), ("primal", 30, 0)]
    if got != want:
        print("cpu_phases.calls:\n  got  %s\n  want %s" % (got, want))
        return 1
    for sym, cls in [("opd_body_jacobi.bt5.set+jacobi.b1.keep.field.333",
                      "adjoint"),
                     ("opd_body_adjoint_zero_f64.68", "adjoint"),
                     ("opd_body_misfit.b.332", "adjoint"),
                     ("opd_body_jacobi.d.34.nt", "tangent"),
                     ("opd_body_jacobi.15.nt", "primal"),
                     ("clear_page_erms", None)]:
        if cpu_phases.phase(sym) != cls:
            print("phase(%s) = %s, want %s" % (sym, cpu_phases.phase(sym), cls))
            return 1
    print("cpu_phases: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
