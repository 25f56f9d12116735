#!/usr/bin/env python3
# scalar_semantics.py - One scalar semantics (issue 50, item 2): every float
# intrinsic x type x edge value (+-0, +-inf, NaN, subnormals, large and
# ordinary arguments), integer operators and conversions at their edges,
# through constant folding, the CPU build and the emulated CUDA build.
# SPDX-License-Identifier: Apache-2.0
#
# One generated program: for each case a `const` folds the intrinsic at
# compile time (float intrinsics only: integer overflow in a constant is an
# error by design), and a loop over a one-element set computes it at run
# time from params (1.0, 0.0: nothing folds), into a min / max reduction
# that starts at +inf / the type's minimum (so the reduction is the value
# itself, -0.0 and NaN included). Each line prints the run-time value and
# the folded one. Required (ast/ScalarSemantics.h, docs/features.md):
#   - folded == CPU run time, bit for bit (NaN: any NaN), every row: the
#     Exact rows are IEEE operations, the Libm rows the same glibc function;
#   - emulated CUDA == CPU, bit for bit, every line (the device helpers of
#     lib/cuda/opd_cuda.cuh: IEEE minimum/maximum, wrapping integers,
#     saturating conversions; the host's libm stands in for CUDA's).
# On a GPU the Libm rows are within CUDA's documented ulps instead; this
# test does not run there.
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from emulate import copy_runtime_headers, launches, read_link  # noqa: E402
from run_examples import run  # noqa: E402

# (folded spelling, run-time spelling with {one}/{zero}) per edge value.
def float_edges(t):
    f = "f" if t == "f32" else ""
    big = "3.0e38f" if t == "f32" else "1.0e308"
    inf_fold = f"({big} * 10.0{f})"
    sub = "1.0e-45f" if t == "f32" else "5.0e-324"
    sub2 = "-1.0e-40f" if t == "f32" else "-1.0e-310"
    lits = ["0.5", "-1.5", "2.5", "0.75", "1.0e22", "-1.0e30", "88.5", "710.0"]
    edges = [(f"0.0{f}", "{zero}"), (f"-0.0{f}", "-{zero}"),
             (inf_fold, "{one} / {zero}"), (f"-{inf_fold}", "-{one} / {zero}"),
             (f"({inf_fold} - {inf_fold})", "{zero} / {zero}"),
             (sub, sub + " * {one}"), (sub2, sub2 + " * {one}")]
    edges += [(x + f, x + f + " * {one}") for x in lits]
    return edges


UNARY = ["sqrt", "abs", "exp", "log", "sin", "cos", "tan", "atan", "floor",
         "ceil", "asin", "acos", "sinh", "cosh", "tanh", "asinh", "acosh",
         "atanh", "cbrt", "log2", "log10", "log1p", "exp2", "expm1", "erf",
         "erfc", "trunc", "round"]
BINARY = ["pow", "atan2", "min", "max", "hypot", "copysign", "fmod"]
PREDICATES = ["isnan", "isfinite"]
INT_TYPES = {"i32": (2147483647, -2147483648), "i64": (9223372036854775807,
                                                     -9223372036854775808)}
INT_BINARY = ["+", "-", "*", "/", "%", "&", "|", "^", "min", "max"]


def program():
    """The .opd source and the number of printed lines."""
    consts, kernels, body = [], [], []
    n = [0, 0]  # kernels, values

    def group(t, cases, red="min", init=None):
        """One kernel of several values (label, folded or None, run time):
        r_m = red(r_m, runtime_m); prints each label, the run-time value
        and (if folded) the folded one."""
        k = n[0]
        n[0] += 1
        rt = {"f64": "f64", "f32": "f32", "i32": "i32", "i64": "i64",
              "bool": "i32"}[t]
        params = ", ".join(f"r{m}: {red} {rt}" for m in range(len(cases)))
        lines = [f"  r{m} = {red}(r{m}, {c[2]})" for m, c in enumerate(cases)]
        kernels.append(f"kernel k{k}({params}) {{\n" + "\n".join(lines) +
                       "\n}")
        names = []
        for m, (label, fold, runtime) in enumerate(cases):
            v = f"v{n[1]}"
            names.append(v)
            body.append(f"  var {v}: {rt} = {init}")
            if fold is not None:
                consts.append(f"const c{n[1]}: {rt} = {fold}")
            n[1] += 1
        body.append(f"  loop k{k} over single ({', '.join(names)})")
        for m, (label, fold, runtime) in enumerate(cases):
            v = names[m]
            c = "c" + v[1:]
            body.append(f'  print("{label}", {v}, {c})' if fold is not None
                        else f'  print("{label}", {v})')

    for t in ("f64", "f32"):
        one, zero = ("onef", "zerof") if t == "f32" else ("one", "zero")
        inf = f"{one} / {zero}"
        edges = float_edges(t)
        rt = lambda e: "(" + e[1].format(one=one, zero=zero) + ")"
        for fn in UNARY:
            group(t, [(f"{fn} {t} {i}", f"{fn}({e[0]})", f"{fn}({rt(e)})")
                      for i, e in enumerate(edges)], init=inf)
        pairs = [edges[j] for j in (0, 1, 2, 4, 5, 8, 9, 10)]
        for fn in BINARY:
            group(t, [(f"{fn} {t} {i} {j}", f"{fn}({a[0]}, {b[0]})",
                       f"{fn}({rt(a)}, {rt(b)})")
                      for i, a in enumerate(pairs)
                      for j, b in enumerate(pairs)], init=inf)
        tri = [edges[j] for j in (0, 1, 2, 4, 8, 9)]
        group(t, [(f"fma {t} {i} {j} {m}", f"fma({a[0]}, {b[0]}, {c[0]})",
                   f"fma({rt(a)}, {rt(b)}, {rt(c)})")
                  for i, a in enumerate(tri) for j, b in enumerate(tri)
                  for m, c in enumerate(tri[:3])], init=inf)
        for fn in PREDICATES:
            group("bool", [(f"{fn} {t} {i}", f"select({fn}({e[0]}), 1, 0)",
                            f"select({fn}({rt(e)}), 1, 0)")
                           for i, e in enumerate(edges)], red="max",
                  init="-2147483647 - 1")
        # Conversions to integers: saturating, NaN to 0 (run time only).
        for it in ("i32", "i64"):
            lo = INT_TYPES[it][1]
            group(it, [(f"{it}() {t} {i}", None, f"{it}({rt(e)})")
                       for i, e in enumerate(edges)], red="max",
                  init=f"{it}({lo + 1}) - {it}(1)")
    for it, (hi, lo) in INT_TYPES.items():
        one = "ione" if it == "i32" else "lone"
        vals = [0, 1, -1, 7, -7, hi, lo]
        rt = lambda v: (f"({it}({v + 1}) * {one} - {one})" if v == lo
                        else f"({it}({v}) * {one})")
        init = f"{it}({lo + 1}) - {it}(1)"
        for op in INT_BINARY:
            group(it, [(f"{op} {it} {i} {j}", None,
                        f"{op}({rt(a)}, {rt(b)})" if op in ("min", "max")
                        else f"{rt(a)} {op} {rt(b)}")
                       for i, a in enumerate(vals)
                       for j, b in enumerate(vals)
                       if not (op in "/%" and b == 0)], red="max", init=init)
        cases = []
        for i, a in enumerate(vals):
            cases.append((f"neg {it} {i}", None, f"-{rt(a)}"))
            cases.append((f"abs {it} {i}", None, f"abs({rt(a)})"))
            for s in (0, 1, 31 if it == "i32" else 63):
                cases.append((f"<< {it} {i} {s}", None, f"{rt(a)} << {s}"))
                cases.append((f">> {it} {i} {s}", None, f"{rt(a)} >> {s}"))
        group(it, cases, red="max", init=init)
    src = ["// Generated by tests/cuda/scalar_semantics.py.",
           "program scalar_semantics", "",
           "param one: f64 = 1.0", "param zero: f64 = 0.0",
           "param onef: f32 = 1.0f", "param zerof: f32 = 0.0f",
           "param ione: i32 = 1", "param lone: i64 = i64(1)", "",
           "set single size 1", ""]
    src += consts + [""] + kernels + ["", "main {"] + body + ["}", ""]
    return "\n".join(src), n[1]


def nan_norm(line):
    return " ".join("nan" if w.lstrip("-+").lower() == "nan" else w
                    for w in line.split())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--opdc", required=True)
    ap.add_argument("--cxx", required=True)
    ap.add_argument("--source-dir", required=True)
    ap.add_argument("--link-file", required=True)
    ap.add_argument("--work", required=True)
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    src, count = program()
    opd = os.path.join(a.work, "scalar_semantics.opd")
    with open(opd, "w") as f:
        f.write(src)
    cpu_exe = os.path.join(a.work, "scalar-cpu")
    run([a.opdc, "build", "-B", opd, "-o", cpu_exe], a.work)
    cpu = run([cpu_exe, "--threads=1"], a.work).splitlines()
    cu = run([a.opdc, "--emit=cuda", "--target=" + os.path.join(
        a.source_dir, "tests/cuda/emu/emu-gpu.yaml"), opd], a.work)
    hdr = os.path.join(a.work, "include")
    os.makedirs(hdr, exist_ok=True)
    copy_runtime_headers(a.source_dir, hdr)
    cpp = os.path.join(a.work, "scalar-cuda.cpp")
    with open(cpp, "w") as f:
        f.write(launches(cu))
    gpu_exe = os.path.join(a.work, "scalar-cuda")
    run([a.cxx, "-std=c++20", "-O1", "-ffp-contract=off",
         "-DOPD_CUDA_COPY_THREADS=32",
         "-I" + os.path.join(a.source_dir, "tests/cuda/emu"), "-I" + hdr,
         "-I" + os.path.join(a.source_dir, "lib/include"), cpp, "-o",
         gpu_exe, *read_link(a.link_file), "-pthread"], a.work)
    gpu = run([gpu_exe], a.work).splitlines()
    problems = []
    if len(cpu) != count or len(gpu) != count:
        problems.append(f"{count} lines expected: cpu {len(cpu)}, "
                        f"cuda {len(gpu)}")
    for c, g in zip(cpu, gpu):
        if nan_norm(c) != nan_norm(g):
            problems.append(f"CUDA differs from the CPU:\n  cpu:  {c}\n"
                            f"  cuda: {g}")
    for c in cpu:
        w = nan_norm(c).split()
        # Float intrinsics print "label... runtime folded"; conversions
        # and integer operators print the run-time value only.
        if w[1] in ("f64", "f32") and not w[0].endswith("()"):
            if w[-1] != w[-2]:
                problems.append(f"folding differs from the CPU build: {c}")
    for p in problems[:40]:
        print(p)
    print(f"{count} cases, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
