#!/usr/bin/env python3
# jacobi.py - Independent reference for examples/patterns/jacobi.opd.
# SPDX-License-Identifier: Apache-2.0
#
# usage: jacobi.py N NITER
# Builds the same sparse matrix as the program (row-wise lists of
# (column, value) instead of its coordinate format), the right-hand sides
# b_s = A x*_s of the three known solutions, runs NITER Jacobi sweeps from
# x = 0 and prints the lines the program prints (without its timing). The
# off-diagonal sums are added in another order than the program's
# increment loop, so the numbers agree to round-off, not bit for bit.
import math
import sys

NNZ_ROW, NSYS = 8, 3


def offset(k, n):
    d = 1 if k < 2 else 2 if k < 4 else n // 16 if k < 6 else n // 2 - 1
    return d if k % 2 == 0 else -d


def exact(s, i):
    if s == 0:
        return 1.0
    if s == 1:
        return float(i % 17) / 16.0
    return float((i * 37) % 101) / 100.0 - 0.5


def main():
    n, niter = int(sys.argv[1]), int(sys.argv[2])
    rows = []
    for i in range(n):
        row = []
        for k in range(NNZ_ROW):
            # Python's % is never negative: the same as the program's
            # (i + offset + n) % n for every offset above -n.
            col = (i + offset(k, n)) % n
            row.append((col, -float(1 + (i * 7 + col * 3) % 5) / 8.0))
        rows.append(row)
    diag = [1.0625 * sum(abs(v) for _, v in row) for row in rows]

    def off(x):
        """R x for the three systems."""
        out = []
        for row in rows:
            acc = [0.0] * NSYS
            for col, v in row:
                for s in range(NSYS):
                    acc[s] += v * x[col][s]
            out.append(acc)
        return out

    xstar = [[exact(s, i) for s in range(NSYS)] for i in range(n)]
    rx = off(xstar)
    b = [[diag[i] * xstar[i][s] + rx[i][s] for s in range(NSYS)]
         for i in range(n)]

    def measure(x):
        rx = off(x)
        r2, xsum, err = [0.0] * NSYS, [0.0] * NSYS, [0.0] * NSYS
        for i in range(n):
            for s in range(NSYS):
                r = b[i][s] - diag[i] * x[i][s] - rx[i][s]
                r2[s] += r * r
                xsum[s] += x[i][s]
                err[s] = max(err[s], abs(x[i][s] - xstar[i][s]))
        return r2, xsum, err

    x = [[0.0] * NSYS for _ in range(n)]
    r0, _, _ = measure(x)
    for _ in range(niter):
        rx = off(x)
        x = [[(b[i][s] - rx[i][s]) / diag[i] for s in range(NSYS)]
             for i in range(n)]
    r2, xsum, err = measure(x)

    print("jacobi: %d unknowns, %d off-diagonal nonzeros per row, %d systems, "
          "%d sweeps" % (n, NNZ_ROW, NSYS, niter))
    for s in range(NSYS):
        print("system %d: sum x %.12e  max error %.12e  rms residual %.12e -> "
              "%.12e" % (s, xsum[s], err[s], math.sqrt(r0[s] / n),
                         math.sqrt(r2[s] / n)))


main()
