"""plan_ratio.py - Per loop, the time of each --plan relative to the first.

usage: plan_ratio.py PLAN=PROFILE_OUTPUT ...   (several files per plan are
summed: the repeats of bench/airfoil/run.sh --plans=... --repeat=N)

Reads the --profile tables (lib/core/Profile.cpp) of the files, sums each
loop's total seconds per plan, and prints per loop the seconds per call of
every plan and their ratio to the first plan's, then the same for all loops
together; the `plan:` lines of the first file of each plan follow.
"""
import sys

from profile_table import table_rows


def read(path):
    """{loop: (calls, seconds)} and the plan lines of one output file."""
    rows = {name: (calls, secs) for name, calls, secs, _ in table_rows(path)}
    notes = [line.rstrip("\n") for line in open(path) if line.startswith("plan: ")]
    return rows, notes


def main(args):
    plans, sums, notes = [], {}, {}
    for arg in args:
        plan, path = arg.split("=", 1)
        rows, lines = read(path)
        if plan not in sums:
            plans.append(plan)
            sums[plan] = {}
            notes[plan] = lines
        for loop, (calls, secs) in rows.items():
            c, s = sums[plan].get(loop, (0, 0.0))
            sums[plan][loop] = (c + calls, s + secs)
    base = plans[0]
    loops = sorted(sums[base], key=lambda l: -sums[base][l][1])
    head = f"{'loop':<14}" + "".join(f"{p + ' ms':>12}" for p in plans)
    head += "".join(f"{p + '/' + base:>16}" for p in plans[1:])
    print(head)

    def row(name, per_plan):
        ms = [1e3 * s / c if c else 0.0 for c, s in per_plan]
        text = f"{name:<14}" + "".join(f"{m:12.3f}" for m in ms)
        text += "".join(f"{m / ms[0] if ms[0] else 0.0:16.3f}" for m in ms[1:])
        print(text)

    for loop in loops:
        row(loop, [sums[p].get(loop, (0, 0.0)) for p in plans])
    totals = []
    for p in plans:
        secs = sum(s for _, s in sums[p].values())
        totals.append((1, secs))
    row("all loops (s)", [(c, s / 1e3) for c, s in totals])
    for p in plans:
        for line in notes[p]:
            print(f"  --plan={p}: {line}")


if __name__ == "__main__":
    main(sys.argv[1:])
