#!/usr/bin/env python3
# emulate.py - Generated CUDA programs run on the CPU (emu/cuda_runtime.h).
# SPDX-License-Identifier: Apache-2.0
#
# No GPU and no nvcc needed: `opdc --emit=cuda` (atomics and colouring),
# every `k<<<grid, block>>>(args)` rewritten as an emulated launch, the
# source compiled by the C++ compiler against emu/cuda_runtime.h and linked
# with the runtime, then run and compared with the CPU backend's build of
# the same program (numbers to 1e-12 relative; colouring runs twice, byte
# for byte). This runs the generated kernels, the device runtime's copies,
# layouts, thread colours and block reductions, and the host code for real;
# what it cannot check (the memory model, speed) the GPU runs do
# (run_examples.py).
#
# With --mpi-link-file (MPI + CUDA): the emulated program is linked with
# the MPI runtime and run under mpirun with each of --ranks, against the
# CPU backend's MPI build on as many ranks (numbers to 1e-12 relative).
# That runs the device side of halo exchanges for real: halos packed and
# unpacked by kernels of lib/cuda/opd_cuda.cuh (the runtime's hooks, so
# the header is passed through the launch rewriting too), exec-halo
# parts, partials left out, device copies dropped at the partition.
# Without mpirun it prints why and exits 77 (CTest: skipped).
#
# --gpu-profile-expect=RE runs each emulated CUDA build once more with
# --profile and requires RE in its output (cuda-emulate-device-tape: that
# the adjoint's device tape spilled to host memory under a tiny budget);
# --gpu-same-with=F runs it once more with F as well and requires the same
# output, bit for bit (the tape's budget changes where bytes live, never
# the numbers).
#
# Options honoured on both backends (docs/features.md): --opdc-flag=F
# builds both programs with F (e.g. -frepro-sum), --bits then requires
# every printed number to be the CPU's bit for bit (the numbers print in
# their shortest round-trip form); --run-flag=F runs both with F (e.g.
# --check-fp: the same output). --fail-cases runs the programs of
# FAIL_CASES, which stop with an error, and requires the emulated CUDA
# build's message to be the CPU build's (--check-fp naming the same loop,
# dat, element and component).
import argparse
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run_examples import compare, masked, run  # noqa: E402

CASES = [
    ("examples/airfoil/airfoil.opd", ["--niter=100"]),
    ("examples/poisson/poisson.opd", ["--nx=24", "--ny=20", "--niter=30",
                                      "--report=10"]),
    ("examples/heat3d/heat3d.opd", ["--n=12", "--tfinal=0.002",
                                    "--report=5"]),
    ("examples/shallow_water/shallow_water.opd", ["--nx=16", "--ny=12",
                                                  "--tfinal=0.02"]),
    ("examples/patterns/monte_carlo_pi.opd", ["--trials=3", "--points=500"]),
    ("examples/patterns/classify.opd", ["--n=300"]),
    ("examples/patterns/nn_forward.opd", ["--batch=20"]),
    ("examples/tridiag/adi_heat.opd", ["--n=16", "--nsteps=4",
                                       "--report=2"]),
    ("tests/e2e/reduction.opd", []),
    # Increments whose rounding depends on their order, f32 sums among
    # them: the GPU's order (colours, atomics) is not the element order.
    ("tests/e2e/inc_strips.opd", [], 1e-5),
    ("tests/e2e/indirect.opd", []),
    # `out` and `inout` through maps: one GPU thread in element order where
    # the map is not injective (Sequential race class).
    ("tests/e2e/indirect_writes.opd", []),
    ("tests/e2e/stencil.opd", []),
    ("tests/e2e/swap.opd", []),
    ("tests/e2e/control_flow.opd", []),
    ("tests/e2e/stdlib_mesh.opd", []),
    # Adjoints: the tape and snapshots in the device store
    # (lib/cuda/opd_cuda_tape.cuh).
    ("tests/e2e/adjoint_ring.opd", ["--show=true", "--n=40", "--sweeps=3"]),
    ("tests/e2e/adjoint_stencil.opd", ["--show=true", "--nx=10", "--ny=8",
                                       "--sweeps=4"]),
    # MPI + CUDA: exec-halo partials, global idx() and map values.
    ("tests/cuda/exec_halo.opd", []),
    # The other examples ({src}: the source tree, {mesh}: the small
    # Airfoil mesh).
    ("examples/adjoint/adjoint.opd", ["--n=200", "--sweeps=4"]),
    ("examples/adjoint/poisson_inverse.opd", ["--n=12", "--sweeps=20",
                                              "--iters=3"]),
    ("examples/airfoil/airfoil_shape.opd", ["--niter=4", "--meshfile={mesh}"]),
    ("examples/cg/fem_poisson.opd", ["--quad_nx=8", "--quad_ny=8"]),
    ("examples/cloverleaf/cloverleaf.opd",
     ["--deck={src}/examples/cloverleaf/clover_small.in"]),
    ("examples/gmsh/channel.opd",
     ["--mesh={src}/examples/gmsh/channel.msh", "--niter=40", "--report=10"]),
    # The language's statements and formats (tests/e2e, small).
    ("tests/e2e/direct.opd", []),
    ("tests/e2e/params.opd", ["--n=7", "--scale=2.5", "--label=hello",
                              "--verbose=false", "--big=9000000000"]),
    ("tests/e2e/print_formats.opd", []),
    ("tests/e2e/str_compare.opd", ["--scheme=lax"]),
    ("tests/e2e/hdf5_roundtrip.opd", []),
    ("tests/e2e/math_library.opd", []),
    ("tests/e2e/csv_range.opd", []),
    ("examples/tridiag/adi_heat3d.opd", ["--n=8", "--nsteps=3",
                                         "--report=1"]),
    ("examples/patterns/convolution.opd", ["--n=34"]),
    # Device tridiagonal solves (lib/cuda/opd_cuda_tridiag.cuh) along every
    # dimension of 1D-3D blocks, whole and sub-boxes: the defaults take the
    # hybrid on the 1D line, 2D and 3D along 2 and Thomas on 3D along 0
    # and 1; the second sizes take Thomas on the 1D line and 2D (the 2D
    # sub-box along 0: the hybrid) and the hybrid on 3D along 2.
    ("tests/cuda/tridiag_cases.opd", []),
    ("tests/cuda/tridiag_cases.opd", ["--n1=7", "--nx=70", "--ny=66",
                                      "--mx=4", "--my=5", "--mz=40"]),
    ("examples/patterns/jacobi.opd", ["--n=64", "--niter=10"]),
    # swap-copy-back (decisions 0385, 0405): copies back that swap on the
    # device, a pointer swap: a while loop (exit by its condition, a break
    # after the copy), a for loop, and the run-time check's fallback (the
    # dats differ outside the copied range).
    ("tests/lit/passes/swap-copy-back/while_copy_back.opd",
     ["--stop=2e-2"]),
    ("tests/lit/passes/swap-copy-back/copy_back.opd", ["--steps=7"]),
    ("tests/lit/passes/swap-copy-back/differ_outside.opd", []),
    # Loop chains fused into one kernel on CUDA (decision 0400): pointwise
    # with reductions, and a loop with increments through maps.
    ("tests/cuda/fuse_chain.opd", []),
    # Stencil chains as one kernel with a recomputed halo (decision 0485):
    # 2-D and 3-D, reach 1 and 2, and chains refused.
    ("tests/cuda/stencil_chain.opd", []),
]


# (program, arguments): both builds must fail with the same message (the
# program's name aside).
FAIL_CASES = [
    ("tests/e2e/check_fp.opd", ["--check-fp"]),
    ("tests/cuda/check_fp_kinds.opd", ["--check-fp", "--which=1"]),
    ("tests/cuda/check_fp_kinds.opd", ["--check-fp", "--which=2"]),
    ("tests/cuda/check_fp_kinds.opd", ["--check-fp", "--which=3"]),
    ("tests/cuda/check_fp_kinds.opd", ["--check-fp", "--which=4"]),
    ("tests/e2e/fail_statement.opd", []),
    ("tests/e2e/halo_overrun.opd", ["--hi=12"]),
    # A bad pivot in a device solve: the hybrid, then Thomas, then the
    # host's checks (tridiag_fail); Thomas on many lines along 2 and 1.
    ("tests/cuda/tridiag_fail.opd", []),
    ("tests/mpi/tridiag_split_fail.opd", ["--dim=2"]),
    ("tests/mpi/tridiag_split_fail.opd", ["--dim=1"]),
]


def launches(src):
    """k<<<g, b>>>(args); -> opd_emu::launch(dim3(g), dim3(b), [&] { k(args); });
    (k may name a template's instance: loop_x<int32_t>)"""
    out = []
    for line in src.splitlines():
        m = re.match(r"(\s*)(\w+(?:<\w+>)?)<<<(.*?)>>>\((.*)\);\s*$", line)
        if m:
            pad, name, cfg, args = m.groups()
            depth, cut = 0, None
            for i, ch in enumerate(cfg):
                depth += ch == "("
                depth -= ch == ")"
                if ch == "," and depth == 0:
                    cut = i
                    break
            g, b = cfg[:cut].strip(), cfg[cut + 1:].strip()
            line = (f"{pad}opd_emu::launch(dim3({g}), dim3({b}), [&] "
                    f"{{ {name}({args}); }});")
        out.append(line)
    return "\n".join(out) + "\n"


def copy_runtime_headers(src_dir, hdr_dir):
    """lib/cuda/opd_cuda.cuh and the headers it includes into hdr_dir, their
    launches rewritten (found before lib/cuda: each includes the others by
    quoted name, from its own folder)."""
    cuda = os.path.join(src_dir, "lib/cuda")
    for name in sorted(os.listdir(cuda)):
        if name.endswith(".cuh"):
            with open(os.path.join(cuda, name)) as f:
                cuh = launches(f.read())
            with open(os.path.join(hdr_dir, name), "w") as f:
                f.write(cuh)


def same_program(a, b):
    """Whether two generated sources differ only in their header comment
    (`// Target: ...`): a program without indirect increments is the same
    under both strategies, and is compiled once."""
    drop = re.compile(r"^// Target:.*$", re.M)
    return drop.sub("", a) == drop.sub("", b)


MPI_CASES = ["airfoil", "poisson", "heat3d", "shallow_water", "reduction",
             "indirect", "stencil", "exec_halo", "adi_heat", "adi_heat3d",
             "tridiag_cases", "adjoint_stencil", "adjoint_ring", "adjoint",
             "while_copy_back", "fuse_chain", "stencil_chain"]


def read_link(link_file):
    link = []
    link_dir = os.path.dirname(link_file)
    for line in open(link_file):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if not line.startswith("-") and not os.path.isabs(line):
            line = os.path.join(link_dir, line)
        link.append(line)
    return link


def run_mpi(cmd, work):
    """run() under mpirun, once more when Open MPI's launcher lost track of
    a rank that had finished: "exiting improperly" with "PID 0" after the
    whole output (seen under CI's parallel tests, not reproduced alone).
    A program's own failure (its message, MPI_Abort) fails at once."""
    try:
        return run(cmd, work)
    except RuntimeError as e:
        if "exiting improperly" not in str(e) or "with PID 0" not in str(e):
            raise
        print(f"note: mpirun lost a finished rank, run again: {' '.join(cmd)}")
        return run(cmd, work)


def mpi_main(a, includes, profile, mesh):
    """MPI + CUDA: emulated GPU builds against CPU MPI builds, per rank
    count."""
    mpirun = a.mpirun or shutil.which("mpirun") or shutil.which("mpiexec")
    if not mpirun or not os.path.exists(mpirun):
        print("SKIP: MPI + CUDA emulation needs mpirun (none was found)")
        return 77
    flags = ["--oversubscribe"]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        flags.append("--allow-run-as-root")
    link = read_link(a.mpi_link_file)
    ranks = [int(r) for r in a.ranks.split(",")]
    failures = []
    for case in CASES:
        rel, args = case[0], case[1]
        tol = case[2] if len(case) > 2 else a.tol
        name = os.path.splitext(os.path.basename(rel))[0]
        if name not in MPI_CASES or (a.only and name not in a.only):
            continue
        src = os.path.join(a.source_dir, rel)
        if name == "airfoil":
            args = args + [f"--meshfile={mesh}"]
        problems = []
        try:
            cpu_exe = os.path.join(a.work, f"{name}-cpu-mpi")
            ca = f"--comm-avoid={a.comm_avoid}"
            run([a.opdc, "build", "--mpi", ca, *a.opdc_flag, src, "-o",
                 cpu_exe], a.work)
            exes, sources = {}, {}
            for strategy in ("atomics", "colouring"):
                # The source `opdc build --mpi` compiles (--mpi itself
                # only chooses the runtime it links).
                cu = run([a.opdc, "--emit=cuda", ca, *a.opdc_flag,
                          f"--cuda-indirect={strategy}",
                          f"--target={profile}", src], a.work)
                sources[strategy] = cu
                if strategy == "colouring" and same_program(
                        cu, sources["atomics"]):
                    break  # the atomics build is this one: run once
                cpp = os.path.join(a.work, f"{name}-{strategy}-mpi.cpp")
                with open(cpp, "w") as f:
                    f.write(launches(cu))
                exes[strategy] = os.path.join(a.work,
                                              f"{name}-{strategy}-mpi")
                run([a.cxx, "-std=c++20", "-O1", "-ffp-contract=off",
                     "-DOPD_CUDA_COPY_THREADS=32",
                     *[f"-I{d}" for d in includes], cpp, "-o",
                     exes[strategy], *link, "-pthread"], a.work)
            for np_ in ranks:
                mpi = [mpirun, *flags, "-np", str(np_)]
                cpu = run_mpi(mpi + [cpu_exe, "--threads=1"] + args +
                              a.run_flag, a.work)
                for strategy, exe in exes.items():
                    got = run_mpi(mpi + [exe] + args + a.run_flag, a.work)
                    p = compare(f"{name} ({strategy}, {np_} ranks)", cpu, got,
                                0.0 if a.bits else tol,
                                0.0 if a.bits else 1e-13)
                    if p:
                        problems.append(p)
                    if a.gpu_profile_expect:
                        prof = run_mpi(mpi + [exe] + args + a.run_flag +
                                       ["--profile"], a.work)
                        if not re.search(a.gpu_profile_expect, prof):
                            problems.append(
                                f"{name} ({strategy}, {np_} ranks): no "
                                f"match for '{a.gpu_profile_expect}' in the "
                                f"--profile output:\n{prof}")
        except RuntimeError as e:
            problems.append(f"{name}: {e}")
        print(("FAIL: " + "\n".join(problems)) if problems
              else f"ok: {name} (ranks {a.ranks})")
        failures += problems
    print(f"{len(failures)} problems")
    return 1 if failures else 0


def run_fail(cmd, cwd):
    """(exit status, stdout + stderr) of a run expected to fail."""
    r = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    return r.returncode, r.stdout + r.stderr


def fail_main(a, build):
    """FAIL_CASES: the emulated CUDA build stops as the CPU build does."""
    failures = []
    for rel, args in FAIL_CASES:
        name = os.path.splitext(os.path.basename(rel))[0]
        tag = name + "".join(x.replace("-", "").replace("=", "")
                             for x in args if x != "--check-fp")
        src = os.path.join(a.source_dir, rel)
        try:
            cpu_exe = os.path.join(a.work, f"{tag}-cpu")
            run([a.opdc, "build", *a.opdc_flag, src, "-o", cpu_exe], a.work)
            want = run_fail([cpu_exe, "--threads=1"] + args, a.work)
            gpu_exe = build(name, src, "colouring", tag)
            got = run_fail([gpu_exe] + args, a.work)
            # The CUDA build's loop names carry the increment strategy for
            # --profile ('flux[colouring+shared]'): the same loop.
            norm = [(st, re.sub(r"'(\w+)\[[a-z+]+\]'", r"'\1'",
                                out.replace(os.path.basename(exe), "PROG")))
                    for (st, out), exe in ((want, cpu_exe), (got, gpu_exe))]
            if want[0] == 0:
                p = f"{tag}: the CPU build did not fail:\n{want[1]}"
            elif norm[0] != norm[1]:
                p = (f"{tag}: the CUDA build's failure differs:\n  cpu "
                     f"({want[0]}): {norm[0][1]}  gpu ({got[0]}): "
                     f"{norm[1][1]}")
            else:
                p = ""
        except RuntimeError as e:
            p = f"{tag}: {e}"
        print(("FAIL: " + p) if p else f"ok: {tag}")
        failures += [p] if p else []
    print(f"{len(failures)} problems")
    return 1 if failures else 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--opdc", required=True)
    ap.add_argument("--cxx", required=True)
    ap.add_argument("--source-dir", required=True)
    ap.add_argument("--link-file", required=True)
    ap.add_argument("--meshgen", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--tol", type=float, default=1e-12)
    ap.add_argument("--mpi-link-file", default="")
    ap.add_argument("--mpirun", default="")
    ap.add_argument("--comm-avoid", default="auto",
                    help="MPI: communication avoidance of both builds "
                         "(auto: what `opdc build --mpi` does)")
    ap.add_argument("--ranks", default="1,2,4", help="rank counts, e.g. 1,2,4")
    ap.add_argument("--opdc-flag", action="append", default=[],
                    help="an opdc option for both builds (e.g. -frepro-sum)")
    ap.add_argument("--run-flag", action="append", default=[],
                    help="a program option for both runs (e.g. --check-fp)")
    ap.add_argument("--bits", action="store_true",
                    help="numbers must equal the CPU's bit for bit")
    ap.add_argument("--gpu-profile-expect", default="",
                    help="a regular expression the --profile output of each "
                         "emulated CUDA build must match (e.g. that the "
                         "device tape spilled)")
    ap.add_argument("--gpu-same-with", action="append", default=[],
                    help="run each emulated CUDA build once more with this "
                         "option too; its output must be the same, bit for "
                         "bit (e.g. another device tape budget)")
    ap.add_argument("--fail-cases", action="store_true",
                    help="run FAIL_CASES: the same error as the CPU build")
    ap.add_argument("only", nargs="*")
    a = ap.parse_args()
    # A name that matches no case would make a test that runs nothing pass.
    known = {os.path.splitext(os.path.basename(c[0]))[0]
             for c in (FAIL_CASES if a.fail_cases else CASES)}
    if a.mpi_link_file:
        known &= set(MPI_CASES)
    unknown = sorted(set(a.only) - known)
    if unknown:
        ap.error(f"no such case{'s' if len(unknown) > 1 else ''}"
                 f"{' under MPI' if a.mpi_link_file else ''}: "
                 f"{', '.join(unknown)} (the cases are the CASES"
                 f"{' and MPI_CASES' if a.mpi_link_file else ''} of "
                 f"tests/cuda/emulate.py)")
    src_dir = a.source_dir
    os.makedirs(a.work, exist_ok=True)
    mesh = os.path.join(a.work, "mesh.h5")
    if not os.path.exists(mesh):
        run([a.meshgen, "--I=6", "--J=8", "--h5", mesh], a.work)
    link = read_link(a.link_file)
    # The device runtime's own kernels (halo packing) are launched in the
    # header: it is rewritten like the program, and found first.
    hdr_dir = os.path.join(a.work, "include")
    os.makedirs(hdr_dir, exist_ok=True)
    copy_runtime_headers(src_dir, hdr_dir)
    includes = [os.path.join(src_dir, "tests/cuda/emu"), hdr_dir,
                os.path.join(src_dir, "lib/include")]
    # Blocks of 32 threads: each emulated block starts that many threads.
    profile = os.path.join(src_dir, "tests/cuda/emu/emu-gpu.yaml")
    if a.mpi_link_file:
        return mpi_main(a, includes, profile, mesh)

    def emit(src, strategy):
        return run([a.opdc, "--emit=cuda", *a.opdc_flag,
                    f"--cuda-indirect={strategy}", f"--target={profile}", src],
                   a.work)

    def build(name, src, strategy, tag=None, cu=None):
        if cu is None:
            cu = emit(src, strategy)
        cpp = os.path.join(a.work, f"{tag or name}-{strategy}.cpp")
        with open(cpp, "w") as f:
            f.write(launches(cu))
        exe = os.path.join(a.work, f"{tag or name}-{strategy}")
        run([a.cxx, "-std=c++20", "-O1", "-ffp-contract=off",
             "-DOPD_CUDA_COPY_THREADS=32",
             *[f"-I{d}" for d in includes], cpp, "-o", exe, *link,
             "-pthread"], a.work)
        return exe

    if a.fail_cases:
        return fail_main(a, build)
    failures = []
    for case in CASES:
        rel, args = case[0], case[1]
        tol = case[2] if len(case) > 2 else a.tol
        if a.bits:
            tol = 0.0
        name = os.path.splitext(os.path.basename(rel))[0]
        if a.only and name not in a.only:
            continue
        src = os.path.join(src_dir, rel)
        if name == "airfoil":
            args = args + [f"--meshfile={mesh}"]
        args = [x.format(src=src_dir, mesh=mesh) for x in args]
        args += a.run_flag
        problems = []
        try:
            cpu_exe = os.path.join(a.work, f"{name}-cpu")
            run([a.opdc, "build", *a.opdc_flag, src, "-o", cpu_exe], a.work)
            cpu = run([cpu_exe, "--threads=1"] + args, a.work)
            outs, sources, exe = {}, {}, None
            for strategy in ("atomics", "colouring"):
                cu = emit(src, strategy)
                sources[strategy] = cu
                if strategy == "atomics" or not same_program(
                        cu, sources["atomics"]):
                    exe = build(name, src, strategy, cu=cu)
                    outs[strategy] = run([exe] + args, a.work)
                else:
                    outs[strategy] = outs["atomics"]  # the same program
                p = compare(f"{name} ({strategy})", cpu, outs[strategy], tol,
                            0.0 if a.bits else 1e-13)
                if p:
                    problems.append(p)
            again = run([exe] + args, a.work)
            if masked(again) != masked(outs["colouring"]):
                problems.append(f"{name}: two colouring runs differ")
            for flag in a.gpu_same_with:
                other = run([exe] + args + [flag], a.work)
                if masked(other) != masked(outs["colouring"]):
                    problems.append(f"{name}: the output with {flag} differs "
                                    f"from the output without it:\n{other}")
            if a.gpu_profile_expect:
                prof = run([exe] + args + ["--profile"], a.work)
                if not re.search(a.gpu_profile_expect, prof):
                    problems.append(f"{name}: no match for "
                                    f"'{a.gpu_profile_expect}' in the "
                                    f"--profile output:\n{prof}")
        except RuntimeError as e:
            problems.append(f"{name}: {e}")
        print(("FAIL: " + "\n".join(problems)) if problems else f"ok: {name}")
        failures += problems
    print(f"{len(failures)} problems")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
