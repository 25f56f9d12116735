#!/usr/bin/env python3
# cpu_phases.py - CPU time and time off the CPU of each call of an adjoint
# bench (heat3d_bench, poisson_bench), from a `perf record -e cpu-clock`
# profile: the figures that separate a call's own cost from the load of a
# shared machine (bench/adjoint/README.md, "The first call in CPU time").
# SPDX-License-Identifier: Apache-2.0
#
# usage: perf record -e cpu-clock -F 1000 -o run.data ./heat3d_bench ...
#        bench/adjoint/cpu_phases.py run.data [--symbols=N]
#        bench/adjoint/cpu_phases.py --script=FILE   (`perf script -F
#        time,ip,sym` output saved; tests/bench/check_cpu_phases.py)
#
# Each 1 ms sample is classed by the loop body it falls in: the adjoint's
# (`.b`, `.bt`, `.keep`, `adjoint_zero`, the frame layers `.f<k>`, and the
# tangent kernel that rides its forward sweep, `<kernel>.d1`: the bench's
# standalone tangent is lowered first and gets `<kernel>.d`), the
# standalone tangent's (`.d`, `tangent_zero`), the primal's (the rest),
# `init`. Runs of one class are the calls; a sample outside the bodies
# (runtime, kernel) counts to the call it falls in. Off the CPU: the gaps
# between consecutive samples beyond 2 ms, less the 1 ms a sample covers
# (preemption by other processes, sleeps, waits). With --symbols=N, the N
# bodies whose samples in the first round differ most from the later
# rounds' mean.
import collections
import re
import subprocess
import sys


def phase(sym):
    if not sym.startswith("opd_body_"):
        return None
    b = sym[len("opd_body_"):]
    if b.startswith("init"):
        return "init"
    if re.search(r"\.d1\b|\.b\b|\.b[0-9.]|\.bt|adjoint_zero|\.f[0-9]*\.|keep", b):
        return "adjoint"
    if re.search(r"\.d[0-9]*\.|\.d\b|tangent_zero", b):
        return "tangent"
    return "primal"


def calls(lines):
    """The calls of a `perf script -F time,ip,sym` listing: a list of
    [class, cpu samples, seconds off the CPU, Counter of bodies]."""
    segs = []
    cur = ["start", 0, 0.0, collections.Counter()]  # until the first body
    segs.append(cur)
    prev_t = None
    for line in lines:
        p = line.split()
        if len(p) < 3:
            continue
        t = float(p[0].rstrip(":"))
        ph = phase(p[2])
        if ph and cur[0] != ph:
            cur = [ph, 0, 0.0, collections.Counter()]
            segs.append(cur)
        cur[1] += 1
        if prev_t is not None and t - prev_t > 0.002:
            cur[2] += t - prev_t - 0.001
        if ph:
            cur[3][re.sub(r"\.[0-9]+(\.nt)?$", r"\1", p[2])] += 1
        prev_t = t
    # Segments of a few samples are stray bodies (a zero fill classed as
    # primal inside the adjoint): merged into the segment before.
    out = []
    for s in segs:
        if out and (s[1] < 20 or s[0] == out[-1][0]):
            out[-1][1] += s[1]
            out[-1][2] += s[2]
            out[-1][3].update(s[3])
        else:
            out.append(s)
    return out


def main():
    data = None
    script = None
    nsym = 0
    for a in sys.argv[1:]:
        if a.startswith("--symbols="):
            nsym = int(a.split("=", 1)[1])
        elif a.startswith("--script="):
            script = a.split("=", 1)[1]
        else:
            data = a
    if script:
        with open(script) as f:
            lines = f.read().splitlines()
    else:
        lines = subprocess.run(
            ["perf", "script", "-i", data, "-F", "time,ip,sym"],
            capture_output=True, text=True, check=True).stdout.splitlines()
    rounds = []
    print("%-8s %9s %12s" % ("call", "cpu ms", "off-cpu ms"))
    for c in calls(lines):
        if c[0] == "primal":
            rounds.append(collections.Counter())
        if rounds:
            rounds[-1].update(c[3])
        print("%-8s %9d %12.0f" % (c[0], c[1], c[2] * 1000))
    if nsym and len(rounds) > 1:
        later = rounds[1:]
        rows = []
        for s in set().union(*rounds):
            mean = sum(r[s] for r in later) / len(later)
            rows.append((rounds[0][s] - mean, rounds[0][s],
                         [r[s] for r in later], s))
        rows.sort(key=lambda r: -abs(r[0]))
        print("first round - later rounds' mean (samples), body:")
        for d, a, bs, s in rows[:nsym]:
            print("%+7.0f %6d %s %s" % (d, a, bs, s[:90]))


if __name__ == "__main__":
    main()
