#!/usr/bin/env python3
"""clover_loops.py - CloverLeaf loop by loop: opdc's --profile beside OPS's kernels.

usage: bench/peers/clover_loops.py --ops-cloverleaf DIR [--build BUILD]
           [--before BUILD] [--rounds 3] [--threads 1,2] [--ranks 2]
           [--deck FILE] [--work DIR]

Builds examples/cloverleaf/cloverleaf.opd (serial and --mpi) with BUILD's
opdc (default: build) and, with --before, with a second build's opdc too;
puts clover_bm_short.in (or --deck) where OPS's cloverleaf reads it
(clover.in in the working directory) and runs, alternating within each round, every opdc
build with --profile and OPS's cloverleaf_openmp (threads) or
cloverleaf_mpi (ranks) with -OPS_DIAGS=2, which prints OPS's per-kernel
table at its exit. Every run must print PASSED. Prints, per configuration,
one markdown table: each opdc loop (a profile row, or the body of a loop
in a skewed sweep from its plan line: thread-seconds) beside the OPS
kernels that do its work, with calls, ms a call and ms a step (over
opdc's step count), the medians over the rounds. A step runs some loops
more than once, and OPS runs its momentum kernels once per velocity where
opdc shares them, so compare ms a step for a group and ms a call for one
kernel. On ranks both times are averages over the ranks (OPS prints
those; opdc's profile has them beside its max), but a sweep's bodies
are rank 0's (its plan lines).
"""
import argparse
import os
import re
import shutil
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import run as R  # noqa: E402

# (label, opdc keys, OPS keys). Keys: "R:row" a profile row, "B:loop" a
# loop's body in a skewed sweep (its plan line), "S:row" a row whose calls
# add up with the others' of the line, "P:prefix" every row so named.
# OPS keys without a prefix take the largest count of calls of the line
# (kernels run one after the other in a step).
GROUPS = [
    ("momentum x sweep", ["R:advec_mom_node_flux_x"],
     ["advec_mom_kernel_mass_flux_x", "advec_mom_kernel_post_pre_advec_x",
      "advec_mom_kernel1_x_nonvector", "advec_mom_kernel2_x"]),
    ("  advec_mom_node_flux_x / mass_flux_x", ["B:advec_mom_node_flux_x"],
     ["advec_mom_kernel_mass_flux_x"]),
    ("  advec_mom_node_mass_x / post_pre_advec_x", ["B:advec_mom_node_mass_x"],
     ["advec_mom_kernel_post_pre_advec_x"]),
    ("  advec_mom_flux_x / kernel1_x", ["B:advec_mom_flux_x"],
     ["advec_mom_kernel1_x_nonvector"]),
    ("  advec_mom_update_x / kernel2_x", ["B:advec_mom_update_x"],
     ["advec_mom_kernel2_x"]),
    ("momentum y sweep", ["R:advec_mom_node_flux_y"],
     ["advec_mom_kernel_mass_flux_y", "advec_mom_kernel_post_pre_advec_y",
      "advec_mom_kernel1_y_nonvector", "advec_mom_kernel2_y"]),
    ("  advec_mom_node_flux_y / mass_flux_y", ["B:advec_mom_node_flux_y"],
     ["advec_mom_kernel_mass_flux_y"]),
    ("  advec_mom_node_mass_y / post_pre_advec_y", ["B:advec_mom_node_mass_y"],
     ["advec_mom_kernel_post_pre_advec_y"]),
    ("  advec_mom_flux_y / kernel1_y", ["B:advec_mom_flux_y"],
     ["advec_mom_kernel1_y_nonvector"]),
    ("  advec_mom_update_y / kernel2_y", ["B:advec_mom_update_y"],
     ["advec_mom_kernel2_y"]),
    ("advec_mom_vol / kernel_x1, x2, y1, y2", ["R:advec_mom_vol"],
     ["S:advec_mom_kernel_x1", "S:advec_mom_kernel_x2", "S:advec_mom_kernel_y1",
      "S:advec_mom_kernel_y2"]),
    ("cell x sweep / kernel3_xdir, kernel4_xdir", ["R:advec_cell_flux_x"],
     ["advec_cell_kernel3_xdir", "advec_cell_kernel4_xdir"]),
    ("  advec_cell_flux_x / kernel3_xdir", ["B:advec_cell_flux_x"],
     ["advec_cell_kernel3_xdir"]),
    ("  advec_cell_update_x / kernel4_xdir", ["B:advec_cell_update_x"],
     ["advec_cell_kernel4_xdir"]),
    ("cell y sweep / kernel3_ydir, kernel4_ydir", ["R:advec_cell_flux_y"],
     ["advec_cell_kernel3_ydir", "advec_cell_kernel4_ydir"]),
    ("  advec_cell_flux_y / kernel3_ydir", ["B:advec_cell_flux_y"],
     ["advec_cell_kernel3_ydir"]),
    ("  advec_cell_update_y / kernel4_ydir", ["B:advec_cell_update_y"],
     ["advec_cell_kernel4_ydir"]),
    ("advec_cell_vol_* / kernel1_*, kernel2_*",
     ["S:advec_cell_vol_x1", "S:advec_cell_vol_x2", "S:advec_cell_vol_y1",
      "S:advec_cell_vol_y2"],
     ["S:advec_cell_kernel1_xdir", "S:advec_cell_kernel2_xdir",
      "S:advec_cell_kernel1_ydir", "S:advec_cell_kernel2_ydir"]),
    ("accelerate sweep", ["R:accelerate"],
     ["accelerate_kernel", "revert_kernel", "PdV_kernel_predict",
      "flux_calc_kernelx", "flux_calc_kernely"]),
    ("  accelerate", ["B:accelerate"], ["accelerate_kernel"]),
    ("  revert+pdv / revert, PdV_predict", ["B:revert+pdv (fused)"],
     ["revert_kernel", "PdV_kernel_predict"]),
    ("  flux_calc_x", ["B:flux_calc_x"], ["flux_calc_kernelx"]),
    ("  flux_calc_y", ["B:flux_calc_y"], ["flux_calc_kernely"]),
    ("viscosity sweep", ["R:viscosity_kernel"],
     ["viscosity_kernel", "calc_dt_kernel", "calc_dt_kernel_min", "calc_dt_kernel_get"]),
    ("  viscosity_kernel", ["B:viscosity_kernel"], ["viscosity_kernel"]),
    ("  calc_dt / calc_dt_kernel, _min, _get", ["B:calc_dt"],
     ["calc_dt_kernel", "calc_dt_kernel_min", "calc_dt_kernel_get"]),
    ("pdv+ideal_gas / PdV_nopredict", ["R:pdv+ideal_gas (fused)"],
     ["PdV_kernel_nopredict"]),
    ("ideal_gas / ideal_gas_kernel", ["R:ideal_gas"], ["ideal_gas_kernel"]),
    ("ideal_gas+field_summary / field_summary", ["R:ideal_gas+field_summary_kernel (fused)"],
     ["field_summary_kernel"]),
    ("PdV_nopredict, every ideal_gas, field_summary",
     ["S:pdv+ideal_gas (fused)", "S:ideal_gas", "S:ideal_gas+field_summary_kernel (fused)"],
     ["S:PdV_kernel_nopredict", "S:ideal_gas_kernel", "S:field_summary_kernel"]),
    ("(a swap) / reset_field_kernel1, 2", [], ["reset_field_kernel1", "reset_field_kernel2"]),
    ("reflect_* / update_halo_kernel*", ["P:reflect_"], ["P:update_halo_kernel"]),
]


def fail(msg):
    print(f"clover_loops.py: error: {msg}", file=sys.stderr)
    sys.exit(2)


def opdc_profile(text):
    """({row: (calls, s)}, {loop: (sweeps, body s)}, program s, steps)."""
    rows, bodies = {}, {}
    # On ranks the sixth column is the average over ranks, which OPS
    # prints (the third is the max).
    for m in re.finditer(r"^(\S.*?)[ \t]+(\d+)[ \t]+([0-9.]+)[ \t]+([0-9.]+)[ \t]+"
                         r"([0-9.]+)(?:[ \t]+([0-9.]+))?(?:[ \t]+[0-9.]+){0,4}[ \t]*$",
                         text, re.M):
        if m.group(1).strip() != "total":
            rows[m.group(1).strip()] = (int(m.group(2)), float(m.group(6) or m.group(3)))
    for m in re.finditer(r"^plan: (.*?): .*its body ([0-9.]+) s in (\d+) sweeps", text, re.M):
        bodies[m.group(1)] = (int(m.group(3)), float(m.group(2)))
    m = re.search(r"^time = [0-9.]+ s for (\d+) steps", text, re.M)
    if not m:
        fail("opdc's CloverLeaf printed no 'time = ... s for N steps' line")
    return rows, bodies, R.own_time(text, "opdc"), int(m.group(1))


def ops_profile(text):
    """({kernel: (calls, s)}, program s) from OPS's -OPS_DIAGS=2 table."""
    rows = {}
    for m in re.finditer(r"^(\w+)\s+(\d+)\s+([0-9.]+) \(", text, re.M):
        rows[m.group(1)] = (int(m.group(2)), float(m.group(3)))
    return rows, R.own_time(text, "OPS")


def total(rows, bodies, keys):
    calls, secs = 0, 0.0
    for k in keys:
        kind, name = k.split(":", 1) if ":" in k else ("M", k)
        if kind == "P":
            for n, (c, t) in rows.items():
                if n.startswith(name):
                    calls, secs = calls + c, secs + t
            continue
        src = bodies if kind == "B" else rows
        if name in src:
            c, t = src[name]
            calls = calls + c if kind == "S" else max(calls, c)
            secs += t
    return calls, secs


def table(label, opdc_runs, ops_runs):
    names = list(opdc_runs)
    steps = opdc_runs[names[0]][0][3]
    head = ["loop (opdc / OPS)"]
    for n in names:
        head += [f"{n} calls", f"{n} ms a call", f"{n} ms a step"]
    head += ["OPS calls", "OPS ms a call", "OPS ms a step"] + [f"{n} / OPS" for n in names]
    print(f"\n{label}\n")
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for title, okeys, pkeys in GROUPS:
        cells, per_step = [], {}
        for n in names:
            vals = [total(r[0], r[1], okeys) for r in opdc_runs[n]]
            calls = max(v[0] for v in vals)
            secs = statistics.median(v[1] for v in vals)
            per_step[n] = 1e3 * secs / steps
            cells += [str(calls), f"{1e3 * secs / calls:.2f}" if calls else "-",
                      f"{per_step[n]:.2f}"]
        vals = [total(r[0], {}, pkeys) for r in ops_runs]
        calls = max(v[0] for v in vals)
        secs = statistics.median(v[1] for v in vals)
        step = 1e3 * secs / steps
        cells += [str(calls), f"{1e3 * secs / calls:.2f}" if calls else "-", f"{step:.2f}"]
        cells += [f"{per_step[n] / step:.2f}" if step > 0 else "-" for n in names]
        print(f"| {title} | " + " | ".join(cells) + " |")
    times = [f"{n} {statistics.median(r[2] for r in opdc_runs[n]):.3f} s" for n in names]
    ops_t = statistics.median(r[1] for r in ops_runs)
    print(f"\nprogram time, median of {len(ops_runs)}: " + ", ".join(times) +
          f", OPS {ops_t:.3f} s")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ops-cloverleaf", required=True, metavar="DIR")
    ap.add_argument("--build", default=os.path.join(R.ROOT, "build"))
    ap.add_argument("--before", metavar="BUILD", help="a second opdc build, run first")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--ranks", type=int, default=2)
    ap.add_argument("--deck", default=R.clover_deck(None),
                    help="the input deck of both (default: clover_bm_short.in)")
    ap.add_argument("--work", default="build/bench/clover-loops")
    args = ap.parse_args()
    threads = [int(t) for t in args.threads.split(",") if t]
    work = os.path.abspath(args.work)
    os.makedirs(work, exist_ok=True)
    builds = {"before": args.before, "opdc": args.build} if args.before else \
        {"opdc": args.build}
    ops = {}
    for v in ("openmp", "mpi"):
        path = os.path.join(os.path.abspath(args.ops_cloverleaf), f"cloverleaf_{v}")
        if not os.access(path, os.X_OK):
            fail(f"{path}: not found (build OPS's CloverLeaf: bench/peers/README.md)")
        ops[v] = path
    deck = os.path.abspath(args.deck)
    if not os.path.isfile(deck):
        fail(f"--deck {args.deck}: no such file")
    shutil.copy(deck, os.path.join(work, "clover.in"))
    exes = {}
    for name, d in builds.items():
        opdc = os.path.join(os.path.abspath(d), "bin/opdc")
        for mpi in (False, True) if args.ranks else (False,):
            sub = os.path.join(work, name)
            os.makedirs(sub, exist_ok=True)
            exes[(name, mpi)] = R.opdc_build(opdc, "cloverleaf", sub, mpi)
    configs = [(f"{t} thread{'s' if t > 1 else ''}", t, 0) for t in threads]
    if args.ranks:
        configs.append((f"{args.ranks} ranks", 1, args.ranks))
    load0 = os.getloadavg()
    opdc_runs = {(c, n): [] for c, _, _ in configs for n in builds}
    ops_runs = {c: [] for c, _, _ in configs}
    for rnd in range(args.rounds):
        for label, t, r in configs:
            pre = R.mpi_prefix(r) if r else []
            tag = label.replace(" ", "")
            for name in builds:
                cmd = pre + [exes[(name, bool(r))], f"--deck={deck}",
                             f"--threads={t}", "--profile"]
                out, _ = R.run(cmd, work, t, 1800)
                if not R.passed(out):
                    fail(f"{' '.join(cmd)}: no PASSED line")
                with open(os.path.join(work, f"{name}-{tag}-r{rnd}.txt"), "w") as f:
                    f.write(out)
                opdc_runs[(label, name)].append(opdc_profile(out))
            cmd = pre + [ops["mpi" if r else "openmp"], "-OPS_DIAGS=2"]
            out, _ = R.run(cmd, work, t, 1800)
            if not R.passed(out):
                fail(f"{' '.join(cmd)}: no PASSED line")
            with open(os.path.join(work, f"ops-{tag}-r{rnd}.txt"), "w") as f:
                f.write(out)
            ops_runs[label].append(ops_profile(out))
            print(f"   round {rnd + 1}/{args.rounds} {label} done", flush=True)
    load1 = os.getloadavg()
    model, l3, ncpu = R.machine()
    print(f"machine: {model}, {ncpu} CPUs, L3 {l3}; load average {load0[0]:.1f} at "
          f"the start, {load1[0]:.1f} at the end; {args.rounds} round"
          f"{'s' if args.rounds > 1 else ''}, alternating")
    for label, _, _ in configs:
        table(label, {n: opdc_runs[(label, n)] for n in builds}, ops_runs[label])
    print(f"\n(outputs of every run: {work})")


if __name__ == "__main__":
    main()
