#!/usr/bin/env python3
# classify.py - Independent reference for examples/patterns/classify.opd.
# SPDX-License-Identifier: Apache-2.0
#
# usage: classify.py N
# Runs the batch-classification pipeline (generate, normalise, extract
# features, majority vote of the classifiers) over N elements in plain
# Python and prints the lines the program prints (without its timing).
# Each element's numbers are computed with the same operations in the same
# order as the kernels, so the classes are the same; only the feature sums
# over the batch may differ in the last bits.
import math
import sys

NRAW, NFEAT, NCLASSIFIERS, NCLASSES = 8, 4, 32, 3


def element(e):
    x = [((e * 2654435761 + k * 2246822519) % 4294967296) / 268435456.0
         for k in range(NRAW)]
    mean = 0.0
    for v in x:
        mean += v
    mean = mean / NRAW
    var2 = 0.0
    for v in x:
        var2 += (v - mean) * (v - mean)
    sd = math.sqrt(var2 / NRAW + 1.0e-12)
    y = [(v - mean) / sd for v in x]

    top, slope = y[0], 0.0
    for k in range(NRAW):
        top = max(top, y[k])
        slope += y[k] * (float(k) - 3.5)
    f = [y[0] - y[NRAW - 1], y[1] * y[NRAW - 2], top - 1.5, slope / 42.0]

    votes = [0] * NCLASSES
    for j in range(NCLASSIFIERS):
        score = float(j % 5 - 2) / 8.0
        for k in range(NFEAT):
            score += float((j * 7 + k * 13) % 9 - 4) / 4.0 * f[k]
        if score < -0.5:
            votes[0] += 1
        elif score < 0.5:
            votes[1] += 1
        else:
            votes[2] += 1
    best = 0
    for m in range(1, NCLASSES):
        if votes[m] > votes[best]:
            best = m
    return f, best, votes[best]


def main():
    n = int(sys.argv[1])
    counts = [0] * NCLASSES
    majorities = 0
    fsum = [0.0] * NFEAT
    for e in range(n):
        f, c, agree = element(e)
        counts[c] += 1
        majorities += 2 * agree > NCLASSIFIERS
        for k in range(NFEAT):
            fsum[k] += f[k]
    print("classify: %d elements, %d raw values, %d features, %d classifiers, "
          "%d classes" % (n, NRAW, NFEAT, NCLASSIFIERS, NCLASSES))
    for m in range(NCLASSES):
        print("class %d: %d elements" % (m, counts[m]))
    print("absolute majority: %d elements" % majorities)
    for k in range(NFEAT):
        print("feature %d sum %.12e" % (k, fsum[k]))


main()
