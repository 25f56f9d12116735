#!/usr/bin/env python3
# compare.py - Compares a program's output under MPI with its serial output.
# SPDX-License-Identifier: Apache-2.0
#
# usage: compare.py REFERENCE OUTPUT REL_TOL [IGNORE_REGEX]
# Lines matching IGNORE_REGEX (run times) and the --profile table are
# dropped; the rest must have the same words, numbers equal to REL_TOL
# relative (0: exactly the same text). Prints the first difference.
import re
import sys


def lines(path, ignore):
    out = []
    for line in open(path, encoding="utf-8"):
        if line.startswith("profile ("):
            break
        if ignore and re.search(ignore, line):
            continue
        out.append(line.split())
    while out and not out[-1]:
        out.pop()
    return out


def same(a, b, tol):
    if a == b:
        return True
    try:
        x, y = float(a), float(b)
    except ValueError:
        return False
    return abs(x - y) <= tol * max(abs(x), abs(y))


def main():
    ref_path, out_path, tol = sys.argv[1], sys.argv[2], float(sys.argv[3])
    ignore = sys.argv[4] if len(sys.argv) > 4 else ""
    ref, out = lines(ref_path, ignore), lines(out_path, ignore)
    if len(ref) != len(out):
        print(f"{out_path}: {len(out)} lines, the serial run printed {len(ref)}")
        return 1
    for n, (r, o) in enumerate(zip(ref, out), 1):
        if len(r) != len(o) or not all(same(a, b, tol) for a, b in zip(r, o)):
            print(f"{out_path}: line {n} differs beyond {tol}:\n"
                  f"  serial: {' '.join(r)}\n  mpi:    {' '.join(o)}")
            return 1
    return 0


sys.exit(main())
