#!/usr/bin/env python3
"""run.py - opdc beside its peers, OP2 and OPS, in one table (issue 57).

usage: bench/peers/run.py [--op2-airfoil DIR] [--ops-cloverleaf DIR]
           [--ops-laplace2d DIR] [--ops-poisson DIR] [--mesh new_grid.h5]
           [--rounds 5] [--threads 1,2] [--ranks 2] [--programs LIST]
           [--poisson-size 4096] [--poisson-iters 100] [--timeout 1800]
           [--build build] [--work build/bench/peers]

Each DIR holds executables ALREADY BUILT by the peer's own build system,
under the names it gives them: airfoil_seq, airfoil_genseq, airfoil_vec,
airfoil_openmp, airfoil_mpi, airfoil_mpi_genseq, airfoil_mpi_vec,
airfoil_mpi_openmp for OP2's Airfoil (HDF5 variant), and <app>_openmp,
<app>_mpi, <app>_mpi_openmp for OPS's cloverleaf, laplace2d and poisson.
This script never builds, fetches or patches a peer (bench/peers/README.md
says where they come from); it builds the opdc side with this build's
opdc (examples/airfoil, examples/cloverleaf, bench/peers/laplace2d.opd,
bench/peers/ops_poisson.opd; --mpi builds when --ranks is not 0).

For every program and configuration (1 thread; each further thread count,
OpenMP peers only; --ranks MPI ranks of one thread, where the peer has an
MPI build) it runs opdc, then each peer variant, --rounds times over,
alternating, on the same inputs: OP2's 720k-cell grid (opd-airfoil-meshgen,
the file both read), OPS's clover_bm_short.in (examples/cloverleaf, the
same deck), OPS's laplace2d size (4094^2 interior, 100 sweeps), OPS's
poisson at --poisson-size^2 and --poisson-iters. Every run's result is
checked: Airfoil's rms history against OP2's reference history of the
720k grid (and OP2's PASSED line), CloverLeaf's and laplace2d's PASSED
lines (both programs print them), Poisson's total error of opdc against
OPS's (and OPS's PASSED at its default size). The time is each program's
own timer of its main loop (OP2's Airfoil profile region, OPS's "Total
Wall time", opdc's printed time), the median over the rounds with the
spread (max - min) / median; ratio = opdc median / peer median.

A peer DIR that does not exist, or holds none of its executables, stops
the script before any run (exit 2); a failed check marks its row FAIL,
prints why, and makes the exit status 1 after the table.

GPU mode (--gpu; issue 51): the same programs as CUDA builds on one GPU.
The peer DIRs then hold the peers' CUDA executables (airfoil_cuda from
OP2's Airfoil, cloverleaf_cuda, laplace2d_cuda, poisson_cuda from OPS),
opdc builds with --target (default nvidia-h100), each program runs alone
on the GPU ("GPU" rows; --big adds Airfoil on a 2.8M-cell grid and
CloverLeaf on 3840^2 cells, 87 steps: CloverLeaf's test problem 4), and
the reference bandwidth is the device copy (bench/cuda/copy_bw.cu, built
with nvcc) measured before and after, instead of the triad. Airfoil's
2.8M-cell rms history has no published reference: opdc's and OP2's are
compared with each other (relative 1e-4, the printed digits).
A GPU machine without opdc or nvcc runs a prepared directory:
    run.py --gpu --prepare DIR [peer DIRs, --big, ...]   # here: builds
          # opdc's programs, copy_bw and the mesh generator into DIR/bin and
          # copies the peers' executables into DIR/peers/<program>/
    run.py --gpu --bundle DIR [--rounds N]               # there: runs them
(scripts/device-bundle.sh --op2-airfoil=DIR --ops-cloverleaf=DIR ... does
the first and packs DIR with the programs' shared libraries;
scripts/device-run.sh runs the second).
"""
import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "bench"))
from profile_table import machine, triad_values  # noqa: E402

# OP2's Airfoil on the 720000-cell grid: the rms every 100 iterations, as
# OP2 prints it (" %d  %10.5e"); opdc's airfoil prints the same lines.
AIRFOIL_RMS = {
    100: "5.02186e-04", 200: "3.41746e-04", 300: "2.63430e-04",
    400: "2.16288e-04", 500: "1.84659e-04", 600: "1.60866e-04",
    700: "1.42253e-04", 800: "1.27627e-04", 900: "1.15810e-04",
    1000: "1.06011e-04",
}

PEER_VARIANTS = {
    "airfoil": ["seq", "genseq", "vec", "openmp", "mpi", "mpi_genseq",
                "mpi_vec", "mpi_openmp"],
    "cloverleaf": ["openmp", "mpi", "mpi_openmp"],
    "laplace2d": ["openmp", "mpi", "mpi_openmp"],
    "poisson": ["openmp", "mpi", "mpi_openmp"],
}
# GPU mode: the peers' CUDA builds, as their makefiles name them.
PEER_VARIANTS_GPU = {prog: ["cuda"] for prog in PEER_VARIANTS}
PEER_NAME = {"airfoil": "OP2", "cloverleaf": "OPS", "laplace2d": "OPS",
             "poisson": "OPS"}
PEER_OPTION = {"airfoil": "op2_airfoil", "cloverleaf": "ops_cloverleaf",
               "laplace2d": "ops_laplace2d", "poisson": "ops_poisson"}
OPD_SOURCE = {"airfoil": "examples/airfoil/airfoil.opd",
              "cloverleaf": "examples/cloverleaf/cloverleaf.opd",
              "laplace2d": "bench/peers/laplace2d.opd",
              "poisson": "bench/peers/ops_poisson.opd"}
# Each program's own timer of its main loop.
# OP2's profile region sums its ranks' times under MPI: the slowest rank's
# ("max:") is the loop's time.
TIMERS = [r"Airfoil \*\d+ total:.*max:\s*([0-9.]+)\s*s",
          r"Airfoil \*1 total:\s*([0-9.]+)\s*s", r"Max total runtime =\s*([0-9.]+)",
          r"Total Wall time\s+([0-9.]+)", r"^time = ([0-9.]+) s for"]


class Failure(Exception):
    pass


def fail(msg, code=2):
    print(f"run.py: error: {msg}", file=sys.stderr)
    sys.exit(code)


def mpi_prefix(ranks):
    mpirun = shutil.which("mpirun")
    if not mpirun:
        return None
    cmd = [mpirun, "--oversubscribe", "--bind-to", "none", "-np", str(ranks)]
    if os.geteuid() == 0:
        cmd.insert(1, "--allow-run-as-root")
    return cmd


def run(cmd, cwd, threads, timeout):
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    t0 = time.monotonic()
    try:
        p = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True,
                           timeout=timeout)
    except subprocess.TimeoutExpired:
        raise Failure(f"{' '.join(cmd)}: no result within {timeout} s")
    except OSError as e:
        raise Failure(f"{' '.join(cmd)}: {e}")
    wall = time.monotonic() - t0
    out = p.stdout + p.stderr
    if p.returncode != 0:
        tail = "\n".join(out.splitlines()[-5:])
        raise Failure(f"{' '.join(cmd)}: exit status {p.returncode}\n{tail}")
    return out, wall


def own_time(out, what):
    for pat in TIMERS:
        m = re.search(pat, out, re.M)
        if m:
            return float(m.group(1))
    raise Failure(f"{what}: no timer line in its output")


def rms_history(out):
    return {int(m.group(1)): m.group(2)
            for m in re.finditer(r"^\s*(\d+)\s+(\d\.\d{5}e[-+]\d\d)\s*$", out, re.M)}


def passed(out):
    return re.search(r"This (run|test) is considered PASSED", out) is not None


def check(program, side, out, args, results, case=None):
    """Raises Failure unless `out` holds a correct result of `program`."""
    if program == "airfoil" and case == "2.8M":
        hist = rms_history(out)
        if len(hist) < 1:
            raise Failure("no rms lines")
        results.setdefault("rms", {})[side] = hist
        ref = results["rms"]
        if "opdc" in ref and "peer" in ref:
            for it, v in ref["peer"].items():
                o = ref["opdc"].get(it)
                if o is None or abs(float(o) - float(v)) > 1e-4 * abs(float(v)):
                    raise Failure(f"rms at iteration {it} is {o or 'missing'} (opdc) "
                                  f"against {v} (OP2)")
    elif program == "airfoil":
        hist = rms_history(out)
        bad = [it for it, v in AIRFOIL_RMS.items() if hist.get(it) != v]
        if bad:
            it = bad[0]
            raise Failure(f"rms at iteration {it} is {hist.get(it, 'missing')}, "
                          f"OP2's reference history has {AIRFOIL_RMS[it]}")
        if side == "peer" and not passed(out):
            raise Failure("no PASSED line from OP2's check")
    elif program in ("cloverleaf", "laplace2d"):
        if not passed(out):
            raise Failure("no PASSED line")
    elif program == "poisson":
        m = re.search(r"Total error:\s*([0-9.eE+-]+)", out)
        if not m:
            raise Failure("no 'Total error' line")
        err = float(m.group(1))
        results.setdefault("poisson_err", {})[side] = err
        ref = results["poisson_err"]
        if "opdc" in ref and "peer" in ref and \
                abs(ref["opdc"] - ref["peer"]) > 1e-9 * abs(ref["peer"]):
            raise Failure(f"total error {ref['opdc']!r} (opdc) against "
                          f"{ref['peer']!r} (OPS)")
        if side == "peer" and args.poisson_size == 20 and args.poisson_iters == 10 \
                and not passed(out):
            raise Failure("no PASSED line from OPS's check")


def find_peers(args, programs):
    """{program: {variant: path}}; exits 2 on a missing or empty DIR."""
    peers = {}
    table = PEER_VARIANTS_GPU if args.gpu else PEER_VARIANTS
    for prog in programs:
        d = getattr(args, PEER_OPTION[prog])
        if args.bundle:
            # A prepared directory holds what --prepare copied, if anything.
            d = os.path.join(args.bundle, "peers", prog)
            if not os.path.isdir(d):
                continue
        if d is None:
            continue
        if not os.path.isdir(d):
            fail(f"--{PEER_OPTION[prog].replace('_', '-')} {d}: no such directory "
                 f"(build {PEER_NAME[prog]}'s {prog} first: bench/peers/README.md)")
        found = {}
        for v in table[prog]:
            path = os.path.join(os.path.abspath(d), f"{prog}_{v}")
            if os.path.isfile(path) and os.access(path, os.X_OK):
                found[v] = path
        if not found:
            names = ", ".join(f"{prog}_{v}" for v in table[prog])
            fail(f"{d}: none of {PEER_NAME[prog]}'s executables ({names})")
        peers[prog] = found
    return peers


def opdc_build(opdc, prog, work, mpi, target=None):
    src = os.path.join(ROOT, OPD_SOURCE[prog])
    exe = os.path.join(work, f"opdc-{prog}" + ("-mpi" if mpi else ""))
    cmd = [opdc, "build"] + (["--mpi"] if mpi else []) + \
        ([f"--target={target}"] if target else []) + [src, "-o", exe]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        fail(f"{' '.join(cmd)} failed:\n{p.stdout}{p.stderr}")
    return exe


def prepare_inputs(prog, work, args, case=None):
    """Puts each program's input where both sides read it (OP2's Airfoil and
    OPS's CloverLeaf read fixed names from their working directory)."""
    if prog == "airfoil" and case == "2.8M":
        # OP2's grid generator's size before I=400, J=600 became the default
        # (bench/cuda/run.sh --big): 800 x 1200 points, 2.88M cells.
        dst = os.path.join(work, "new_grid.h5")
        if not os.path.exists(dst):
            subprocess.run([args.meshgen, "--I=800", "--J=1200", "--h5", dst],
                           check=True, capture_output=True)
    elif prog == "airfoil":
        dst = os.path.join(work, "new_grid.h5")
        if args.mesh:
            if not os.path.isfile(args.mesh):
                fail(f"--mesh {args.mesh}: no such file")
            if os.path.lexists(dst):
                os.remove(dst)
            os.symlink(os.path.abspath(args.mesh), dst)
        elif not os.path.exists(dst):
            subprocess.run([args.meshgen, "--h5", dst], check=True, capture_output=True)
    elif prog == "cloverleaf":
        shutil.copy(clover_deck(case), os.path.join(work, "clover.in"))


def clover_deck(case):
    """CloverLeaf's input deck: bm_short (960^2, 87 steps, test problem 2),
    or bm16_short (3840^2, 87 steps, test problem 4) for the GPU's --big."""
    name = "clover_bm16_short.in" if case == "3840^2" else "clover_bm_short.in"
    return os.path.join(ROOT, "examples/cloverleaf", name)


def opdc_args(prog, args, case=None):
    deck = clover_deck(case)
    return {"airfoil": ["--niter=1000"],
            "cloverleaf": [f"--deck={deck}"],
            "laplace2d": [],
            "poisson": [f"--sizex={args.poisson_size}", f"--sizey={args.poisson_size}",
                        f"--iters={args.poisson_iters}"]}[prog]


def peer_args(prog, args):
    if prog == "poisson":
        return [f"-sizex={args.poisson_size}", f"-sizey={args.poisson_size}",
                f"-iters={args.poisson_iters}"]
    return []


GPU_CASES = {"airfoil": ["720k", "2.8M"], "cloverleaf": ["960^2", "3840^2"],
             "laplace2d": ["4094^2"], "poisson": [None]}


def configs(prog, peers, args):
    """(label, threads, ranks, peer variants, case) of each configuration;
    case names the input of a GPU row (None: the program's one input)."""
    variants = peers.get(prog, {})
    out = []
    if args.gpu:
        cases = GPU_CASES[prog] if args.big else GPU_CASES[prog][:1]
        for case in cases:
            size = case or f"{args.poisson_size}^2"
            out.append((f"GPU {size}", 1, 0, list(variants), case))
        return out
    for t in args.threads:
        if t == 1:
            vs = [v for v in variants if not v.startswith("mpi")]
        else:
            vs = [v for v in variants if v == "openmp"]
        out.append((f"{t} thread{'s' if t > 1 else ''}", t, 0, vs, None))
    if args.ranks:
        vs = [v for v in variants if v.startswith("mpi")]
        out.append((f"{args.ranks} ranks", 1, args.ranks, vs, None))
    return out


def device_copy(args, label):
    """The device copy bandwidth (copy_bw.cu) in GB/s, as {"GPU": GB/s}."""
    p = subprocess.run([args.copy_bw], capture_output=True, text=True)
    if p.returncode != 0:
        fail(f"{args.copy_bw} failed (no GPU?): {p.stdout}{p.stderr}")
    with open(os.path.join(args.work, f"copy-{label}.txt"), "w") as f:
        f.write(p.stdout)
    m = re.search(r"device-copy .* GBps=([0-9.]+)", p.stdout)
    if not m:
        fail(f"{args.copy_bw}: no device-copy line in its output")
    return {"GPU": float(m.group(1))}


def gpu_name(args):
    """The GPU's name as copy_bw printed it."""
    with open(os.path.join(args.work, "copy-before.txt")) as f:
        m = re.search(r'device="([^"]*)"', f.read())
    return m.group(1) if m else "?"


def build_copy_bw(opdc, args, bindir):
    """bench/cuda/copy_bw.cu built with nvcc for the target's architecture."""
    nvcc = os.environ.get("OPDC_NVCC") or shutil.which("nvcc")
    if not nvcc:
        fail("--gpu: nvcc not found (put CUDA's bin on the PATH or set OPDC_NVCC)")
    p = subprocess.run([opdc, f"--print-target={args.target}"], capture_output=True,
                       text=True)
    if p.returncode != 0:
        fail(f"--target {args.target}: {p.stderr.strip()}")
    m = re.search(r"^\s*arch:\s*(\S+)", p.stdout, re.M)
    os.makedirs(bindir, exist_ok=True)
    exe = os.path.join(bindir, "copy_bw")
    cmd = [nvcc, "-O3", f"-arch={m.group(1) if m else 'sm_90'}",
           os.path.join(ROOT, "bench/cuda/copy_bw.cu"), "-o", exe]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        fail(f"{' '.join(cmd)} failed:\n{p.stdout}{p.stderr}")
    return exe


def prepare(opdc, peers, args):
    """--gpu --prepare DIR: opdc's CUDA programs, copy_bw and the mesh
    generator in DIR/bin, the peers' executables in DIR/peers/<program>/,
    and the settings the run needs in DIR/prepared.json."""
    d = os.path.abspath(args.prepare)
    bindir = os.path.join(d, "bin")
    os.makedirs(bindir, exist_ok=True)
    shutil.copy(args.copy_bw, os.path.join(bindir, "copy_bw"))
    if "airfoil" in peers:
        shutil.copy(args.meshgen, os.path.join(bindir, "opd-airfoil-meshgen"))
    for prog, variants in peers.items():
        opdc_build(opdc, prog, bindir, mpi=False, target=args.target)
        pdir = os.path.join(d, "peers", prog)
        os.makedirs(pdir, exist_ok=True)
        for path in variants.values():
            shutil.copy(path, pdir)
    with open(os.path.join(d, "prepared.json"), "w") as f:
        json.dump({"target": args.target, "big": args.big,
                   "poisson_size": args.poisson_size,
                   "poisson_iters": args.poisson_iters,
                   "programs": sorted(peers)}, f, indent=1)
    print(f"run.py: {d} is ready: on the GPU machine, from the repository's root: "
          f"bench/peers/run.py --gpu --bundle {d}")


def stream(args, label):
    if args.gpu:
        return device_copy(args, label)
    exe = os.path.join(args.build, "bench/opd-stream")
    if not os.path.isfile(exe):
        fail(f"{exe}: not built (cmake --build {args.build})")
    counts = sorted(set(args.threads) | ({args.ranks} if args.ranks else set()))
    p = subprocess.run([exe, "--threads=" + ",".join(map(str, counts))],
                       capture_output=True, text=True)
    if p.returncode != 0:
        fail(f"{exe} failed: {p.stderr}")
    path = os.path.join(args.work, f"stream-{label}.txt")
    with open(path, "w") as f:
        f.write(p.stdout)
    return {t: triad_values(path, t)[0] for t in counts}


def summary(times):
    med = statistics.median(times)
    spread = (max(times) - min(times)) / med * 100 if med > 0 else 0.0
    return med, spread


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--op2-airfoil", metavar="DIR")
    ap.add_argument("--ops-cloverleaf", metavar="DIR")
    ap.add_argument("--ops-laplace2d", metavar="DIR")
    ap.add_argument("--ops-poisson", metavar="DIR")
    ap.add_argument("--mesh", help="OP2's new_grid.h5 (default: generated)")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--ranks", type=int, default=2)
    ap.add_argument("--programs", default="airfoil,cloverleaf,laplace2d,poisson")
    ap.add_argument("--poisson-size", type=int, default=4096)
    ap.add_argument("--poisson-iters", type=int, default=100)
    ap.add_argument("--timeout", type=int, default=1800)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--work")
    ap.add_argument("--gpu", action="store_true",
                    help="the peers' and opdc's CUDA builds on one GPU")
    ap.add_argument("--target", default="nvidia-h100",
                    help="opdc's GPU target profile (--gpu)")
    ap.add_argument("--big", action="store_true",
                    help="--gpu: also Airfoil 2.8M cells, CloverLeaf 3840^2")
    ap.add_argument("--prepare", metavar="DIR",
                    help="--gpu: only build and copy the programs into DIR")
    ap.add_argument("--bundle", metavar="DIR",
                    help="--gpu: run the programs a --prepare put in DIR")
    args = ap.parse_args()
    if (args.prepare or args.bundle) and not args.gpu:
        fail("--prepare and --bundle go with --gpu")
    if args.prepare and args.bundle:
        fail("--prepare and --bundle exclude each other")
    args.build = os.path.abspath(args.build)
    if args.bundle:
        args.bundle = os.path.abspath(args.bundle)
        settings = os.path.join(args.bundle, "prepared.json")
        if not os.path.isfile(settings):
            fail(f"--bundle {args.bundle}: no prepared.json (make it with --gpu --prepare)")
        with open(settings) as f:
            prepared = json.load(f)
        args.big = args.big or prepared["big"]
        args.poisson_size = prepared["poisson_size"]
        args.poisson_iters = prepared["poisson_iters"]
        args.work = os.path.abspath(args.work or "peers-gpu")
    else:
        args.work = os.path.abspath(args.work or os.path.join(
            args.build, "bench/peers" + ("-gpu" if args.gpu else "")))
    if args.gpu:
        args.threads, args.ranks = [1], 0
    else:
        args.threads = [int(t) for t in args.threads.split(",") if t]
    bindir = os.path.join(args.bundle, "bin") if args.bundle else None
    # scripts/device-bundle.sh puts the programs' libraries beside DIR.
    lib = os.path.join(args.bundle, "..", "lib") if args.bundle else ""
    if os.path.isdir(lib):
        os.environ["LD_LIBRARY_PATH"] = os.path.abspath(lib) + (
            ":" + os.environ["LD_LIBRARY_PATH"] if os.environ.get("LD_LIBRARY_PATH")
            else "")
    args.meshgen = os.path.join(bindir, "opd-airfoil-meshgen") if bindir else \
        os.path.join(args.build, "examples/airfoil/meshgen/opd-airfoil-meshgen")
    programs = [p for p in args.programs.split(",") if p]
    for p in programs:
        if p not in OPD_SOURCE:
            fail(f"--programs: unknown program '{p}' (one of {', '.join(OPD_SOURCE)})")
    if args.rounds < 1:
        fail("--rounds must be at least 1")
    peers = find_peers(args, programs)
    if not peers:
        fail(f"no peer in {args.bundle}/peers" if args.bundle else
             "no peer given (--op2-airfoil, --ops-cloverleaf, --ops-laplace2d, "
             "--ops-poisson)")
    opdc = os.path.join(args.build, "bin/opdc")
    if not args.bundle and not os.path.isfile(opdc):
        fail(f"{opdc}: not built (scripts/build.sh)")
    if "airfoil" in peers and not args.mesh and not os.path.isfile(args.meshgen):
        fail(f"{args.meshgen}: not built (cmake --build {args.build})")
    if args.gpu:
        args.copy_bw = os.path.join(bindir, "copy_bw") if bindir else \
            build_copy_bw(opdc, args, os.path.join(args.work, "bin"))
    if args.prepare:
        prepare(opdc, peers, args)
        return
    mpirun = mpi_prefix(args.ranks) if args.ranks else None
    if args.ranks and not mpirun:
        print("run.py: no mpirun: the MPI configuration is skipped", file=sys.stderr)
        args.ranks = 0

    model, l3, ncpu = machine()
    load0 = os.getloadavg()
    os.makedirs(args.work, exist_ok=True)
    print(f"== machine: {model}, {ncpu} CPUs, L3 {l3}; load average "
          f"{load0[0]:.1f} {load0[1]:.1f} {load0[2]:.1f}")
    triad0 = stream(args, "before")

    # (prog, label, threads, ranks, variants, opdc exe, work dir, case)
    plan = []
    for prog in programs:
        if prog not in peers:
            continue
        for label, t, r, vs, case in configs(prog, peers, args):
            if not vs:
                kind = "MPI" if r else ("sequential or OpenMP" if t == 1 else "OpenMP")
                print(f"run.py: {prog}: no {kind} build of the peer, {label} skipped",
                      file=sys.stderr)
                continue
            work = os.path.join(args.work, prog + (f"-{case.replace('^', '')}"
                                                   if case else ""))
            os.makedirs(work, exist_ok=True)
            prepare_inputs(prog, work, args, case)
            if args.bundle:
                exe = os.path.join(bindir, f"opdc-{prog}")
                if not os.path.isfile(exe):
                    fail(f"{exe}: not in the bundle (prepare it with --gpu --prepare)")
            else:
                exe = opdc_build(opdc, prog, work, mpi=bool(r),
                                 target=args.target if args.gpu else None)
            plan.append((prog, label, t, r, vs, exe, work, case))

    times = {}   # (prog, label, side) -> [s]
    failed = {}  # (prog, label, side) -> message
    for rnd in range(args.rounds):
        for prog, label, t, r, vs, exe, work, case in plan:
            results = {}
            sides = [("opdc", exe, opdc_args(prog, args, case) +
                      ([] if args.gpu else [f"--threads={t}"]))]
            sides += [(v, peers[prog][v], peer_args(prog, args)) for v in vs]
            for side, path, extra in sides:
                key = (prog, label, side)
                if key in failed:
                    continue
                cmd = (mpirun[:-1] + [str(r)] if r else []) + [path] + extra
                try:
                    out, _ = run(cmd, work, t, args.timeout)
                    with open(os.path.join(work, f"{side}-{label.replace(' ', '')}"
                                                 f"-r{rnd}.txt"), "w") as f:
                        f.write(out)
                    check(prog, "opdc" if side == "opdc" else "peer", out, args, results,
                          case)
                    times.setdefault(key, []).append(own_time(out, f"{prog} {side}"))
                except Failure as e:
                    failed[key] = str(e)
                    print(f"run.py: FAIL {prog} {label} "
                          f"{'opdc' if side == 'opdc' else PEER_NAME[prog] + ' ' + side}: {e}",
                          file=sys.stderr)
            print(f"   round {rnd + 1}/{args.rounds} {prog} {label} done", flush=True)

    triad1 = stream(args, "after")
    load1 = os.getloadavg()
    print()
    print(f"machine: {model}, {ncpu} CPUs, L3 {l3}")
    if args.gpu:
        print(f"GPU: {gpu_name(args)}; device copy (copy_bw.cu): "
              f"{triad0['GPU']:.0f} GB/s before, {triad1['GPU']:.0f} GB/s after")
    for t in sorted(triad0) if not args.gpu else []:
        print(f"STREAM triad, {t} thread(s): {triad0[t]:.2f} GB/s before, "
              f"{triad1[t]:.2f} GB/s after")
    print(f"load average: {load0[0]:.1f} at the start, {load1[0]:.1f} at the end; "
          f"{args.rounds} round{'s' if args.rounds > 1 else ''}, alternating; time = each program's own timer "
          f"of its main loop; spread = (max - min) / median")
    hdr = (f"{'program':<11} {'config':<10} {'opdc s':>9} {'spread':>7}  "
           f"{'peer':<16} {'peer s':>9} {'spread':>7} {'ratio':>6}")
    print(hdr)
    print("-" * len(hdr))
    for prog, label, t, r, vs, exe, work, case in plan:
        ok = (prog, label, "opdc")
        ot = times.get(ok) if ok not in failed else None
        om = summary(ot) if ot else None
        best = None
        rows = []
        for v in vs or [None]:
            k = (prog, label, v)
            pt = times.get(k) if v and k not in failed else None
            pm = summary(pt) if pt else None
            if pm and (best is None or pm[0] < best):
                best = pm[0]
            rows.append((v, pm, k in failed))
        for v, pm, bad in rows:
            o = "FAIL" if ok in failed else (f"{om[0]:9.3f} {om[1]:6.1f}%" if om else "-")
            name = f"{PEER_NAME[prog]} {v}" if v else "(none)"
            if bad:
                p = f"{'FAIL':>9} {'':>7}"
            elif pm:
                p = f"{pm[0]:9.3f} {pm[1]:6.1f}%"
            else:
                p = f"{'-':>9} {'':>7}"
            ratio = f"{om[0] / pm[0]:6.2f}" if om and pm and ok not in failed else "     -"
            mark = "*" if pm and best == pm[0] and len(rows) > 1 else ""
            print(f"{prog:<11} {label:<10} {o:>17}  {name + mark:<16} {p} {ratio}")
    if any(len(p[4]) > 1 for p in plan):
        print("(* the fastest peer variant of the configuration: the anchor)")
    print(f"(outputs of every run: {args.work})")
    if failed:
        print(f"run.py: {len(failed)} run(s) failed their check (above)", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
