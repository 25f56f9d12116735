#!/usr/bin/env python3
# inc_strips.py - What tests/e2e/inc_strips.opd prints, computed independently.
# SPDX-License-Identifier: Apache-2.0
#
# Plain Python 3 (no numpy): the program's loops run one element after the
# other, in element order, with every increment applied at once to its
# target, the way the .opd text reads when no compiler strips, colours or
# vectorises it. Python floats are IEEE doubles with the same correctly
# rounded + - * / and sqrt as the compiled program; f32 values are rounded
# to single precision after every operation (an f32 + - * / computed in
# double and rounded once is the correctly rounded f32 result). i32 values
# never leave the 32-bit range here (checked).
#
# Usage: inc_strips.py [--n=N] [--check FILE]
# prints the program's output for N (default 1237, the program's default);
# with --check FILE, exits 1 unless FILE holds exactly that output.

import argparse
import math
import struct
import sys


def f32(x):
    """Rounds a double to the nearest single-precision value."""
    return struct.unpack("f", struct.pack("f", x))[0]


def i32(x):
    if not -2**31 <= x < 2**31:
        raise OverflowError(f"{x} is outside the i32 range")
    return x


def trunc_mod(a, b):
    """The program's %: C remainder, the sign of the dividend."""
    return a % b if a >= 0 else -((-a) % b)


def fmax(a, b):
    """IEEE 754-2019 maximum: NaN wins, +0 above -0."""
    if math.isnan(a) or math.isnan(b):
        return math.nan
    if a == b:
        return b if math.copysign(1.0, a) < 0 else a
    return a if a > b else b


def c_g(x, digits):
    """printf("%.<digits>g"), including inf and nan as C prints them."""
    if math.isinf(x):
        return "-inf" if x < 0 else "inf"
    if math.isnan(x):
        return "nan"
    return "%.*g" % (digits, x)


def lane_sum(values):
    """A float sum over one row starting from the identity 0.0: element
    4g + l of the whole groups adds to partial l (partial 0 starts from the
    running value, the others from -0.0), the partials added in lane order,
    then the rest in order; the chunk's result added to the variable's 0.0."""
    groups = len(values) - len(values) % 4
    p = [0.0, -0.0, -0.0, -0.0]
    for j in range(groups):
        p[j % 4] += values[j]
    r = ((p[0] + p[1]) + p[2]) + p[3]
    for v in values[groups:]:
        r += v
    return 0.0 + r


def run(n):
    nedges = 3 * n + 5
    # scramble over edges: both ends of each edge, and its weight.
    pedge = []
    w = []
    for i in range(nedges):
        e0 = trunc_mod(i32(i32(i * 7919) + 13), n)
        if trunc_mod(i, 17) == 0:
            e1 = e0
        else:
            e1 = trunc_mod(i32(i32(i * 104729) + 7), n)
        pedge.append((e0, e1))
        w.append(1.0 / float(i + 3))
    # init over nodes.
    x = [math.sqrt(float(i) + 0.5) / 3.0 for i in range(n)]

    res = [[0.0] * 4 for _ in range(n)]
    acc = [[0.0] * 3 for _ in range(n)]
    z = [-0.0] * n
    deg = [0] * n

    for _ in range(3):
        for e in range(nedges):
            a, b = pedge[e]
            r1, r2 = res[a], res[b]  # the same list when a == b
            a1, a2 = acc[a], acc[b]
            x1, x2, we = x[a], x[b], w[e]
            dx = x1 - x2
            f = we * dx / (x1 + x2 + 0.1)
            r1[0] += f
            r2[0] -= f
            f = f * dx + we
            r1[1] += f
            r2[1] -= f
            f = 1.0 / (f + 3.0)
            r1[2] += f
            r2[2] -= f
            if dx > 0.0:
                r1[3] += dx * we
            else:
                r2[3] -= dx * we
            g = f32(f)
            for c in range(3):
                a1[c] = f32(a1[c] + f32(g * f32(float(c + 1))))
                a2[c] = f32(a2[c] - f32(g / f32(float(c + 1))))
            z[b] += -0.0 * we
            deg[a] = i32(deg[a] + 1)
            deg[b] = i32(deg[b] - 2)

    # stats over nodes: float sums in 4 partial sums per row (the runtime's
    # one chunk of n < 4096 nodes; compiler/codegen/llvm/LoopBody.cpp,
    # "Float sums"), a max and an integer sum in node order.
    s = [lane_sum([res[i][k] * float(i + 1) for i in range(n)])
         for k in range(4)]
    t = [lane_sum([acc[i][k] * float(trunc_mod(i, 7) + 1) for i in range(n)])
         for k in range(3)]
    # 1 / -0.0 is -inf (Python raises instead of dividing by zero).
    zs = lane_sum([math.copysign(math.inf, z[i]) if z[i] == 0.0
                   else 1.0 / z[i] for i in range(n)])
    ds = 0
    rmax = 0.0
    for i in range(n):
        for k in range(4):
            rmax = fmax(rmax, abs(res[i][k]))
        ds = i32(ds + i32(deg[i] * (trunc_mod(i, 5) + 1)))

    return ("s = %s\n" % " ".join(c_g(v, 17) for v in s) +
            "t = %s\n" % " ".join(c_g(v, 9) for v in t) +
            "max |r| = %s\n" % c_g(rmax, 17) +
            # print(): an f64 as its shortest round-trip text (Python's repr
            # of a float, "-inf" included), an i32 in decimal.
            "z sum %r deg sum %d\n" % (zs, ds))


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=1237)
    parser.add_argument("--check", metavar="FILE")
    args = parser.parse_args()
    out = run(args.n)
    sys.stdout.write(out)
    if args.check:
        with open(args.check, encoding="utf-8") as f:
            expected = f.read()
        if expected != out:
            sys.stderr.write(f"inc_strips.py: {args.check} differs from the "
                             f"output above:\n{expected}")
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
