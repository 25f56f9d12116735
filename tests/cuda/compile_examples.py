#!/usr/bin/env python3
# compile_examples.py - Every example through the CUDA backend and nvcc.
# SPDX-License-Identifier: Apache-2.0
#
# For each example: `opdc --emit=cuda` (once per indirect strategy, since
# colouring and atomics generate different kernels), then `nvcc -c` for
# every architecture given (one nvcc call, one -gencode per architecture),
# with warnings as errors. Device code is compiled at -O0 (ptxas too): the
# test is about the source being valid for the architectures, not about
# speed. Needs no GPU. Exit 77 (CTest: skipped) when nvcc is missing.
# --opdc-arg passes options to opdc (the MPI + CUDA test: the cluster
# profile; the source includes no mpi.h, the runtime owns MPI).
import argparse
import concurrent.futures
import os
import shutil
import subprocess
import sys
import time


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--opdc", required=True)
    ap.add_argument("--nvcc", default="")
    ap.add_argument("--include", action="append", default=[])
    ap.add_argument("--arch", action="append", default=[])
    ap.add_argument("--work", required=True)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--strategies", default="atomics,colouring")
    ap.add_argument("--opdc-arg", action="append", default=[])
    ap.add_argument("sources", nargs="+")
    a = ap.parse_args()
    nvcc = a.nvcc or shutil.which("nvcc") or ""
    if not nvcc or not os.access(nvcc, os.X_OK):
        print("SKIP: nvcc (the CUDA compiler) was not found when opdc was "
              "configured nor on PATH; the CUDA compile tests need it")
        return 77
    os.makedirs(a.work, exist_ok=True)
    start = time.time()
    jobs = []
    seen = set()
    for src in a.sources:
        stem = os.path.splitext(os.path.basename(src))[0]
        for strategy in a.strategies.split(","):
            cu = os.path.join(a.work, f"{stem}-{strategy}.cu")
            r = subprocess.run([a.opdc, "--emit=cuda", *a.opdc_arg,
                                f"--cuda-indirect={strategy}", src, "-o", cu],
                               capture_output=True, text=True)
            if r.returncode != 0:
                print(f"FAIL: opdc --emit=cuda {src}:\n{r.stderr}")
                return 1
            # Programs without increments through maps generate the same
            # code for both strategies (but for the header): compile once.
            with open(cu) as f:
                body = "".join(l for l in f if not l.startswith("// Target:"))
            if body in seen:
                continue
            seen.add(body)
            jobs.append(cu)
    gencode = []
    for arch in a.arch:
        num = arch.replace("sm_", "")
        gencode += ["-gencode", f"arch=compute_{num},code=sm_{num}"]

    def compile_one(cu):
        cmd = [nvcc, "-std=c++17", "-O0", "-Xptxas", "-O0", "--fmad=false",
               "-Werror", "all-warnings", *gencode,
               *[f"-I{d}" for d in a.include], "-c", cu,
               "-o", cu + ".o"]
        t0 = time.time()
        r = subprocess.run(cmd, capture_output=True, text=True)
        return cu, r, time.time() - t0

    failed = 0
    with concurrent.futures.ThreadPoolExecutor(a.jobs) as pool:
        for cu, r, secs in pool.map(compile_one, jobs):
            status = "ok" if r.returncode == 0 else "FAIL"
            print(f"{status}: {os.path.basename(cu)} ({secs:.1f} s)")
            if r.returncode != 0 or r.stdout.strip() or r.stderr.strip():
                print(r.stdout + r.stderr)
            if r.returncode != 0:
                failed += 1
    print(f"{len(jobs)} sources for {', '.join(a.arch)} in "
          f"{time.time() - start:.1f} s, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
