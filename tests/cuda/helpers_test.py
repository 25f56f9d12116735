#!/usr/bin/env python3
# helpers_test.py - Builds helpers_test.cu with nvcc (host code only, no GPU
# needed), runs it, and checks its random numbers against the CPU backend's
# reference (tests/e2e/reference/philox.py): uniforms exactly, normals to
# 1e-15 relative (log and cos are the C library's there). Exit 77 without
# nvcc.
import argparse
import os
import shutil
import subprocess
import sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--nvcc", default="")
    ap.add_argument("--include", action="append", default=[])
    ap.add_argument("--reference", required=True)
    ap.add_argument("--work", required=True)
    a = ap.parse_args()
    nvcc = a.nvcc or shutil.which("nvcc") or ""
    if not nvcc:
        print("SKIP: nvcc (the CUDA compiler) was not found")
        return 77
    os.makedirs(a.work, exist_ok=True)
    exe = os.path.join(a.work, "helpers_test")
    src = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                       "helpers_test.cu")
    r = subprocess.run([nvcc, "-std=c++17", "-O1", "--fmad=false",
                        "-Werror", "all-warnings",
                        *[f"-I{d}" for d in a.include], src, "-o", exe],
                       capture_output=True, text=True)
    if r.returncode != 0:
        print(r.stdout + r.stderr)
        return 1
    r = subprocess.run([exe], capture_output=True, text=True)
    print(r.stdout, end="")
    if r.returncode != 0:
        return 1
    sys.path.insert(0, os.path.dirname(a.reference))
    import philox
    bad = 0
    for line in r.stdout.splitlines():
        if not line.startswith("rng "):
            continue
        f = line.split()
        seed, ncoords, c0, c1, c2, n = (int(x) for x in f[1:7])
        elem = (c0,) if ncoords == 1 else (c0, c1, c2)[:ncoords]
        u, g = float(f[7]), float(f[8])
        ru, rg = philox.rng_uniform(seed, elem, n), philox.rng_normal(seed, elem, n)
        if u != ru or abs(g - rg) > 1e-15 * max(1.0, abs(rg)):
            print(f"MISMATCH {line}: reference {ru!r} {rg!r}")
            bad += 1
    print(f"random numbers: {bad} mismatches")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
