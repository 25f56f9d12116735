#!/usr/bin/env python3
# ca_patch.py - Adds to a program's LLVM IR (opdc --emit=llvm) the runtime
# calls of communication avoidance on unstructured sets, as the CommAvoid
# pass will emit them (issue 12): opd_rt_halo_depth(LAYERS, 2) before
# opd_rt_init, and opd_loop_extend_next({N, 0, 0}, NULL) before the
# opd_loop_prepare of each named loop.
# SPDX-License-Identifier: Apache-2.0
#
# usage: ca_patch.py IN.ll OUT.ll LAYERS LOOP=N...
# A stand-in for mpi-airfoil-ca-runtime (RunAirfoilCa.cmake) until the
# compiler pass emits the calls itself.
import re
import sys


def main():
    src, dst, layers = sys.argv[1], sys.argv[2], int(sys.argv[3])
    extend = dict(a.split("=") for a in sys.argv[4:])
    text = open(src).read()
    # The private string constant naming each loop.
    names = {}
    for m in re.finditer(r'^(@[\w.]+) = private unnamed_addr constant '
                         r'\[\d+ x i8\] c"([\w]+)\\00"', text, re.M):
        names[m.group(1)] = m.group(2)
    out, found = [], set()
    for line in text.split("\n"):
        if "call void @opd_rt_init(" in line:
            out.append(f"  call void @opd_rt_halo_depth(i64 {layers}, i64 2)")
        m = re.search(r"call ptr @opd_loop_prepare\(ptr [^,]*, ptr nonnull "
                      r"(@[\w.]+),", line)
        if m and names.get(m.group(1)) in extend:
            loop = names[m.group(1)]
            out.append(f"  call void @opd_loop_extend_next(ptr @ca.{loop}, "
                       "ptr null)")
            found.add(loop)
        out.append(line)
    missing = set(extend) - found
    if missing:
        sys.exit(f"ca_patch.py: no opd_loop_prepare of {sorted(missing)}")
    for loop, n in extend.items():
        out.append(f"@ca.{loop} = private constant [3 x i64] "
                   f"[i64 {int(n)}, i64 0, i64 0]")
    out.append("declare void @opd_rt_halo_depth(i64, i64)")
    out.append("declare void @opd_loop_extend_next(ptr, ptr)")
    open(dst, "w").write("\n".join(out) + "\n")


main()
