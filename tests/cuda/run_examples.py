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
import argparse
import os
import re
import shutil
import subprocess
import sys

CASES = [
    ("airfoil/airfoil.opd", ["--niter=200"]),
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

MPI_CASES = ["airfoil", "heat3d", "poisson", "shallow_water"]

TIMING = re.compile(r"time|seconds|GB/s|\bms\b|\bs\)|elapsed", re.I)
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
        if NUMBER.sub("#", x) != NUMBER.sub("#", y):
            return f"{name}: line {n} differs:\n  cpu: {x}\n  gpu: {y}"
        for u, v in zip(NUMBER.findall(x), NUMBER.findall(y)):
            fu, fv = float(u), float(v)
            if fu == fv or (fu != fu and fv != fv):
                continue
            if abs(fu - fv) > max(tol * max(abs(fu), abs(fv)), atol):
                return (f"{name}: line {n}: {v} differs from the CPU's {u} by "
                        f"more than {tol} relative:\n  cpu: {x}\n  gpu: {y}")
    return ""


def run(cmd, cwd):
    r = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited {r.returncode}:\n"
                           f"{r.stdout}{r.stderr}")
    return r.stdout


def mpi_problems(a, mpirun, src, name, args):
    """The CPU's and the GPU's --mpi builds on 2 ranks."""
    exe = {k: os.path.join(a.work, f"{name}-mpi-{k}") for k in ("cpu", "gpu")}
    run([a.opdc, "build", "-B", "--mpi", src, "-o", exe["cpu"]], a.work)
    run([a.opdc, "build", "-B", "--mpi", f"--target={a.target}", src, "-o",
         exe["gpu"]], a.work)
    flags = ["--oversubscribe", "-np", "2"]
    if os.geteuid() == 0:
        flags.insert(0, "--allow-run-as-root")
    cpu = run([mpirun, *flags, exe["cpu"], "--threads=1"] + args, a.work)
    gpu = run([mpirun, *flags, exe["gpu"]] + args, a.work)
    p = compare(name + " (MPI + CUDA, 2 ranks)", cpu, gpu, a.tol)
    return [p] if p else []


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--opdc", required=True)
    ap.add_argument("--nvcc", default="")
    ap.add_argument("--meshgen", required=True)
    ap.add_argument("--examples", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--target", default="nvidia-h100")
    ap.add_argument("--tol", type=float, default=1e-12)
    a = ap.parse_args()
    why = gpu_present()
    if why:
        print(f"SKIP: the GPU runs need an NVIDIA GPU: {why}")
        return 77
    if not (a.nvcc or shutil.which("nvcc")):
        print("SKIP: nvcc (the CUDA compiler) was not found")
        return 77
    env_nvcc = {"OPDC_NVCC": a.nvcc} if a.nvcc else {}
    os.environ.update(env_nvcc)
    os.makedirs(a.work, exist_ok=True)
    mesh = os.path.join(a.work, "mesh.h5")
    run([a.meshgen, "--I=20", "--J=30", "--h5", mesh], a.work)
    mpirun = shutil.which("mpirun") or shutil.which("mpiexec")
    if not mpirun:
        print("note: no mpirun, the MPI + CUDA runs are left out")
    failures = []
    for rel, args in CASES:
        name = os.path.splitext(os.path.basename(rel))[0]
        src = os.path.join(a.examples, rel)
        if name == "airfoil":
            args = args + [f"--meshfile={mesh}"]
        try:
            exe = {k: os.path.join(a.work, f"{name}-{k}")
                   for k in ("cpu", "colouring", "atomics")}
            run([a.opdc, "build", "-B", src, "-o", exe["cpu"]], a.work)
            for k in ("colouring", "atomics"):
                run([a.opdc, "build", "-B", f"--target={a.target}",
                     f"--cuda-indirect={k}", src, "-o", exe[k]], a.work)
            cpu = run([exe["cpu"], "--threads=1"] + args, a.work)
            col1 = run([exe["colouring"]] + args, a.work)
            col2 = run([exe["colouring"]] + args, a.work)
            atom = run([exe["atomics"]] + args, a.work)
            problems = []
            if masked(col1) != masked(col2):
                problems.append(f"{name}: two GPU runs (colouring) differ")
            problems += [p for p in (compare(name + " (colouring)", cpu, col1,
                                             a.tol),
                                     compare(name + " (atomics)", cpu, atom,
                                             a.tol)) if p]
            if mpirun and name in MPI_CASES:
                problems += mpi_problems(a, mpirun, src, name, args)
        except RuntimeError as e:
            problems = [f"{name}: {e}"]
        print(("FAIL: " + "\n".join(problems)) if problems else f"ok: {name}")
        failures += problems
    print(f"{len(CASES)} examples, {len(failures)} problems")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
