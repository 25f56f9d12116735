#!/usr/bin/env python3
# run_examples.py - The examples on a GPU against the CPU build.
# SPDX-License-Identifier: Apache-2.0
#
# Needs an NVIDIA GPU (nvidia-smi lists one) and nvcc; otherwise prints why
# and exits 77 (CTest: skipped). Per example, at a small size:
#   - the CPU build (`opdc build`) runs once (--threads=1);
#   - the GPU build with colouring runs twice: the two outputs must be
#     byte for byte the same (colouring and the reductions' fixed order make
#     GPU runs reproducible), and every number must equal the CPU's to
#     1e-12 relative;
#   - the GPU build with atomics (where it differs) runs once and must
#     agree with the CPU's to 1e-12 relative (the order of atomic additions
#     varies, so only to round-off).
#   - MPI + CUDA (where mpirun is found): the examples of MPI_CASES built
#     with --mpi for the CPU and the GPU, run on 2 ranks (sharing the GPU),
#     compared to 1e-12 relative.
# Lines that report times or rates are left out of the comparisons.
# --target picks the GPU profile (default nvidia-h100: sm_90, H100/H200).
#
# Two halves, for a GPU machine that has neither opdc nor nvcc (the device
# tool's): `--prepare DIR` builds every program and runs the CPU builds here
# (DIR/bin, DIR/ref, DIR/manifest.json; no GPU needed), `--check DIR` runs
# DIR's GPU programs there against those references (scripts/device-bundle.sh
# packs DIR with the shared libraries it needs). Without either, both run
# here, one after the other.
import argparse
import json
import os
import re
import shutil
import subprocess
import sys

# (example, arguments[, files it reads, copied beside the programs]);
# {mesh} is the small Airfoil mesh of the run.
CASES = [
    ("adjoint/adjoint.opd", ["--n=1000", "--sweeps=10"]),
    ("adjoint/poisson_inverse.opd", []),
    ("airfoil/airfoil.opd", ["--niter=200"]),
    ("airfoil/airfoil_shape.opd", ["--niter=20", "--meshfile={mesh}"]),
    ("cg/fem_poisson.opd", ["--quad_nx=16", "--quad_ny=16"]),
    ("cloverleaf/cloverleaf.opd", ["--deck=clover_small.in"],
     ["cloverleaf/clover_small.in"]),
    ("gmsh/channel.opd", ["--mesh=channel.msh", "--niter=400",
                          "--report=100"], ["gmsh/channel.msh"]),
    ("heat3d/heat3d.opd", ["--n=32"]),
    ("poisson/poisson.opd", ["--nx=64", "--ny=64", "--niter=2000",
                             "--report=500"]),
    ("shallow_water/shallow_water.opd", ["--nx=100", "--ny=100"]),
    ("tridiag/adi_heat.opd", ["--n=64", "--nsteps=40"]),
    ("tridiag/adi_heat3d.opd", ["--n=24", "--nsteps=20"]),
    ("patterns/classify.opd", ["--n=8192"]),
    ("patterns/convolution.opd", ["--n=130"]),
    ("patterns/jacobi.opd", ["--n=512", "--niter=50"]),
    ("patterns/monte_carlo_pi.opd", ["--trials=10", "--points=100000"]),
    ("patterns/nn_forward.opd", ["--batch=200"]),
]

# (adi_heat, adi_heat3d: solves along the dimension the ranks split, the
# reduced rows through the host, the rest on the device.)
MPI_CASES = ["airfoil", "heat3d", "poisson", "shallow_water", "adi_heat",
             "adi_heat3d"]

TIMING = re.compile(r"time|seconds|GB/s|\bms\b|\bs\)|elapsed", re.I)
# Central finite differences divide the round-off of two objective values
# by their step (1e-6 and up): where the GPU adds in another order they
# agree to about 1e-8 only, so their lines are compared to FD_TOL.
FD = re.compile(r"finite difference", re.I)
FD_TOL = 1e-6
NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|nan|inf", re.I)


def gpu_present():
    smi = shutil.which("nvidia-smi")
    if not smi:
        return "nvidia-smi is not installed"
    r = subprocess.run([smi, "-L"], capture_output=True, text=True)
    if r.returncode != 0 or "GPU " not in r.stdout:
        return "nvidia-smi lists no GPU (" + (r.stderr.strip() or
                                              r.stdout.strip()) + ")"
    return ""


NAN_SIGN = re.compile(r"[-+]nan\b")


def masked(text):
    """The lines without times (and the value line after Airfoil's
    "Max total runtime =")."""
    out, skip = [], False
    for l in text.splitlines():
        if skip or TIMING.search(l):
            skip = l.rstrip().endswith("=")
            continue
        out.append(l)
    return out


def compare(name, ref, got, tol, atol=1e-13):
    """Every number of got within tol (relative) of ref's, or within atol
    (numbers that are themselves round-off, such as a drift of 1e-15);
    the text equal."""
    a, b = masked(ref), masked(got)
    if len(a) != len(b):
        return f"{name}: {len(b)} lines instead of {len(a)}"
    for n, (x, y) in enumerate(zip(a, b), 1):
        # A NaN's sign is not promised (IEEE 754 leaves it open, and the
        # host compiler of the emulated build folds math calls on
        # constants with a sign of its own choosing): -nan equals nan.
        x, y = NAN_SIGN.sub("nan", x), NAN_SIGN.sub("nan", y)
        if NUMBER.sub("#", x) != NUMBER.sub("#", y):
            return f"{name}: line {n} differs:\n  cpu: {x}\n  gpu: {y}"
        lt = max(tol, FD_TOL) if FD.search(x) else tol
        for u, v in zip(NUMBER.findall(x), NUMBER.findall(y)):
            fu, fv = float(u), float(v)
            if fu == fv or (fu != fu and fv != fv):
                continue
            if abs(fu - fv) > max(lt * max(abs(fu), abs(fv)), atol):
                return (f"{name}: line {n}: {v} differs from the CPU's {u} by "
                        f"more than {lt} relative:\n  cpu: {x}\n  gpu: {y}")
    return ""


def run(cmd, cwd, env=None):
    r = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, env=env)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited {r.returncode}:\n"
                           f"{r.stdout}{r.stderr}")
    return r.stdout


def mpi_flags():
    flags = ["--oversubscribe", "-np", "2"]
    if os.geteuid() == 0:
        flags.insert(0, "--allow-run-as-root")
    return flags


def prepare(a, bundle):
    """Builds every program and runs the CPU builds (the references) into
    the folder `bundle`: bin/ (the GPU builds), ref/ (the CPU
    outputs), mesh.h5 and manifest.json. Needs opdc and nvcc, no GPU."""
    bindir, refdir = os.path.join(bundle, "bin"), os.path.join(bundle, "ref")
    os.makedirs(bindir, exist_ok=True)
    os.makedirs(refdir, exist_ok=True)
    mesh = os.path.join(bundle, "mesh.h5")
    run([a.meshgen, "--I=20", "--J=30", "--h5", mesh], bundle)
    mpirun = shutil.which("mpirun") or shutil.which("mpiexec")
    if not mpirun:
        print("note: no mpirun, the MPI + CUDA runs are left out")
    cases = []
    for case in CASES:
        rel, args = case[0], case[1]
        for f in case[2] if len(case) > 2 else []:
            shutil.copy(os.path.join(a.examples, f), bundle)
        name = os.path.splitext(os.path.basename(rel))[0]
        src = os.path.join(a.examples, rel)
        if name == "airfoil":
            args = args + ["--meshfile=mesh.h5"]
        args = [x.format(mesh="mesh.h5") for x in args]
        cpu = os.path.join(a.work, f"{name}-cpu")
        run([a.opdc, "build", "-B", src, "-o", cpu], a.work)
        with open(os.path.join(refdir, name + ".txt"), "w") as f:
            f.write(run([cpu, "--threads=1"] + args, bundle))
        for k in ("colouring", "atomics"):
            exe = os.path.join(bindir, f"{name}-{k}")
            run([a.opdc, "build", "-B", f"--target={a.target}",
                 f"--cuda-indirect={k}", src, "-o", exe], a.work)
        case = {"name": name, "args": args, "mpi": False}
        if mpirun and name in MPI_CASES:
            cpu_mpi = os.path.join(a.work, f"{name}-mpi-cpu")
            gpu_mpi = os.path.join(bindir, f"{name}-mpi")
            run([a.opdc, "build", "-B", "--mpi", src, "-o", cpu_mpi], a.work)
            run([a.opdc, "build", "-B", "--mpi", f"--target={a.target}", src,
                 "-o", gpu_mpi], a.work)
            with open(os.path.join(refdir, name + "-mpi.txt"), "w") as f:
                f.write(run([mpirun, *mpi_flags(), cpu_mpi, "--threads=1"] +
                            args, bundle))
            case["mpi"] = True
        cases.append(case)
        print(f"prepared: {name}", flush=True)
    with open(os.path.join(bundle, "manifest.json"), "w") as f:
        json.dump({"target": a.target, "cases": cases}, f, indent=1)


def check(bundle, tol, env=None):
    """Runs the GPU builds of a prepared bundle against its CPU outputs
    (the GPU machine needs neither opdc nor nvcc). Returns the problems."""
    with open(os.path.join(bundle, "manifest.json")) as f:
        manifest = json.load(f)
    mpirun = shutil.which("mpirun") or shutil.which("mpiexec")
    bindir, refdir = os.path.join(bundle, "bin"), os.path.join(bundle, "ref")
    failures = []
    for case in manifest["cases"]:
        name, args = case["name"], case["args"]
        try:
            with open(os.path.join(refdir, name + ".txt")) as f:
                cpu = f.read()
            exe = {k: os.path.join(bindir, f"{name}-{k}")
                   for k in ("colouring", "atomics")}
            col1 = run([exe["colouring"]] + args, bundle, env)
            col2 = run([exe["colouring"]] + args, bundle, env)
            atom = run([exe["atomics"]] + args, bundle, env)
            problems = []
            if masked(col1) != masked(col2):
                problems.append(f"{name}: two GPU runs (colouring) differ")
            problems += [p for p in (compare(name + " (colouring)", cpu, col1,
                                             tol),
                                     compare(name + " (atomics)", cpu, atom,
                                             tol)) if p]
            if case["mpi"] and mpirun:
                with open(os.path.join(refdir, name + "-mpi.txt")) as f:
                    ref = f.read()
                gpu = run([mpirun, *mpi_flags(),
                           os.path.join(bindir, f"{name}-mpi")] + args,
                          bundle, env)
                p = compare(name + " (MPI + CUDA, 2 ranks)", ref, gpu, tol)
                problems += [p] if p else []
            elif case["mpi"]:
                print(f"note: {name}: no mpirun, MPI + CUDA left out")
        except (RuntimeError, OSError) as e:
            problems = [f"{name}: {e}"]
        print(("FAIL: " + "\n".join(problems)) if problems else f"ok: {name}",
              flush=True)
        failures += problems
    print(f"{len(manifest['cases'])} examples, {len(failures)} problems")
    return failures


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--opdc")
    ap.add_argument("--nvcc", default="")
    ap.add_argument("--meshgen")
    ap.add_argument("--examples")
    ap.add_argument("--work")
    ap.add_argument("--target", default="nvidia-h100")
    ap.add_argument("--tol", type=float, default=1e-12)
    ap.add_argument("--prepare", metavar="DIR",
                    help="only build the programs and the CPU references "
                    "into DIR (no GPU needed)")
    ap.add_argument("--check", metavar="DIR",
                    help="only run a prepared DIR's GPU programs against its "
                    "references (no opdc or nvcc needed)")
    ap.add_argument("--lib", metavar="DIR",
                    help="with --check: the programs' shared libraries "
                    "(put first on their LD_LIBRARY_PATH)")
    a = ap.parse_args()
    if not a.check:
        missing = [o for o in ("opdc", "meshgen", "examples", "work")
                   if not getattr(a, o)]
        if missing:
            ap.error("--" + ", --".join(missing) + " needed")
    if not a.prepare:
        why = gpu_present()
        if why:
            print(f"SKIP: the GPU runs need an NVIDIA GPU: {why}")
            return 77
    if not a.check and not (a.nvcc or shutil.which("nvcc")):
        print("SKIP: nvcc (the CUDA compiler) was not found")
        return 77
    if a.nvcc:
        os.environ["OPDC_NVCC"] = a.nvcc
    if a.check:
        env = None
        if a.lib:
            env = dict(os.environ)
            env["LD_LIBRARY_PATH"] = os.pathsep.join(
                p for p in (os.path.abspath(a.lib),
                            env.get("LD_LIBRARY_PATH", "")) if p)
        return 1 if check(os.path.abspath(a.check), a.tol, env) else 0
    os.makedirs(a.work, exist_ok=True)
    a.work = os.path.abspath(a.work)
    bundle = os.path.abspath(a.prepare or os.path.join(a.work, "bundle"))
    prepare(a, bundle)
    if a.prepare:
        return 0
    return 1 if check(bundle, a.tol) else 0


if __name__ == "__main__":
    sys.exit(main())
