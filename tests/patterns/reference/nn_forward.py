#!/usr/bin/env python3
# nn_forward.py - Independent reference for examples/patterns/nn_forward.opd.
# SPDX-License-Identifier: Apache-2.0
#
# usage: nn_forward.py BATCH
# Recomputes, in plain Python, the forward pass of the 8 x 64 dense network
# over BATCH samples from the same closed-form inputs, weights and biases,
# and prints the summary lines the program prints (without its timing).
# Every dot product adds its terms in the same order as the kernel, so the
# per-sample outputs are bit-identical; only the batch sums may differ in
# the last bits (they are summed in another order).
import sys

WIDTH = 64
DEPTH = 8


def inputs(s):
    return [((s * 2654435761 + k * 40503) % 4294967296) / 4294967296.0 - 0.5
            for k in range(WIDTH)]


def layer(l):
    w = [[float((l * 131 + o * 37 + i * 11) % 23 - 11) / 32.0
          for i in range(WIDTH)] for o in range(WIDTH)]
    b = [float((l * 5 + o * 3) % 7 - 3) / 16.0 for o in range(WIDTH)]
    return w, b


def forward(x, layers):
    for l, (w, b) in enumerate(layers):
        y = []
        for o in range(WIDTH):
            s = b[o]
            row = w[o]
            for i in range(WIDTH):
                s += row[i] * x[i]
            if l < DEPTH - 1:
                s = max(s, 0.0)
            y.append(s)
        x = y
    return x


def main():
    batch = int(sys.argv[1])
    layers = [layer(l) for l in range(DEPTH)]
    total = squares = 0.0
    top = -1.0e300
    votes = [0] * WIDTH
    for s in range(batch):
        y = forward(inputs(s), layers)
        best = 0
        for o in range(WIDTH):
            total += y[o]
            squares += y[o] * y[o]
            if y[o] > y[best]:
                best = o
        top = max(top, y[best])
        votes[best] += 1
    print("nn_forward: %d samples, %d dense layers x %d neurons"
          % (batch, DEPTH, WIDTH))
    print("output sum      %.12e" % total)
    print("output squares  %.12e" % squares)
    print("largest output  %.12e" % top)
    print("classes predicted %d" % sum(1 for v in votes if v > 0))
    for o in range(WIDTH):
        if votes[o] > 0:
            print("class %2d: %d samples" % (o, votes[o]))


main()
