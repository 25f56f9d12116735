#!/usr/bin/env python3
# convolution.py - Independent reference for examples/patterns/convolution.opd.
# SPDX-License-Identifier: Apache-2.0
#
# usage: convolution.py N THRESHOLD
# Filters the same N x N image as the program (Sobel on the upper half of
# the interior rows, Prewitt on the lower half, Laplace on the whole
# interior) in plain Python and prints the lines the program prints
# (without its timing). The responses are exact integers and correctly
# rounded square roots, the same bits as the program's; the sums of the
# square roots differ in the last bits (another order).
import math
import sys


def main():
    n, threshold = int(sys.argv[1]), float(sys.argv[2])
    p = [[float((7 * i * i + 13 * j + 3 * i * j) % 256) for j in range(n)]
         for i in range(n)]  # p[i][j]: column i, row j
    half = n // 2

    def edge(i, j, w):
        """Gradient magnitude with smoothing weights (1, w, 1)."""
        gx = ((p[i + 1][j - 1] + w * p[i + 1][j] + p[i + 1][j + 1]) -
              (p[i - 1][j - 1] + w * p[i - 1][j] + p[i - 1][j + 1]))
        gy = ((p[i - 1][j + 1] + w * p[i][j + 1] + p[i + 1][j + 1]) -
              (p[i - 1][j - 1] + w * p[i][j - 1] + p[i + 1][j - 1]))
        return math.sqrt(gx * gx + gy * gy)

    def laplace(i, j):
        return (p[i - 1][j] + p[i + 1][j] + p[i][j - 1] + p[i][j + 1] -
                4.0 * p[i][j])

    def stats(values):
        total, top, above = 0.0, 0.0, 0
        for v in values:
            v = abs(v)
            total += v
            top = max(top, v)
            above += v > threshold
        return total, top, above

    def rows(lo, hi, f):
        return (f(i, j) for j in range(lo, hi) for i in range(1, n - 1))

    print("convolution: %d x %d image, Sobel on rows 1..%d, Prewitt on rows "
          "%d..%d, Laplace on all" % (n, n, half - 1, half, n - 2))
    lines = [("sobel   (upper)", rows(1, half, lambda i, j: edge(i, j, 2.0))),
             ("prewitt (lower)", rows(half, n - 1,
                                      lambda i, j: edge(i, j, 1.0))),
             ("laplace |.|    ", rows(1, n - 1, laplace))]
    for name, values in lines:
        total, top, above = stats(values)
        print("%s: sum %.12e  max %.12e  above %g: %d"
              % (name, total, top, threshold, above))

main()
