#!/usr/bin/env python3
# philox.py - Philox4x32-10 and opdc's rng_uniform / rng_normal, in plain
# Python 3, independent of opdc and its runtime.
# SPDX-License-Identifier: Apache-2.0
#
# Philox4x32-10 as defined by Salmon, Moraes, Dror and Shaw, "Parallel
# random numbers: as easy as 1, 2, 3" (SC'11), and Random123's philox.h:
# a 128-bit counter (four 32-bit words) and a 64-bit key (two words), ten
# rounds of
#     (hi0, lo0) = M0 * c0,  (hi1, lo1) = M1 * c2          (32x32 -> 64 bits)
#     c = (hi1 ^ c1 ^ k0, lo1, hi0 ^ c3 ^ k1, lo0)
# with the key bumped by the Weyl constants (W0, W1) between rounds.
#
# opdc's intrinsics (docs/language.md, "Random numbers"), for a seed, an
# element and a stream counter n:
#     key     = (seed mod 2^32, seed div 2^32)            (two's complement)
#     counter = (n mod 2^32, n div 2^32, e0, e1)
# where (e0, e1) are the element: set loops and 1-D block loops the global
# index as 64 bits (low word, high word); 2-D block loops the coordinates
# (x, y) as 32-bit words; 3-D block loops (x, y) as words and z in place of
# n's high word (n is taken modulo 2^32 there).
#     rng_uniform = ((w1 * 2^32 + w0) >> 11) * 2^-53                  in [0, 1)
#     rng_normal  = sqrt(-2 log(u1)) * cos(2 pi u2),                  Box-Muller
#        u1 = (((w1 * 2^32 + w0) >> 11) + 1) * 2^-53                 in (0, 1]
#        u2 = ((w3 * 2^32 + w2) >> 11) * 2^-53                       in [0, 1)
# (w0..w3 the output block). Python's math.log, math.cos and math.sqrt are
# the C library's, as the compiled program's.
#
# Usage:
#   philox.py --self-test            the known-answer vectors below
#   philox.py --streams [--check F]  what tests/rng/rng_streams.opd prints
#   philox.py --pi --trials=T --points=M [--seed=S] [--check F]
#                                    what examples/patterns/monte_carlo_pi.opd
#                                    prints (without its time line)
# With --check F, exits 1 unless F holds exactly that output (for --pi,
# the lines of F that do not start with "time").

import argparse
import math
import sys

M0, M1 = 0xD2511F53, 0xCD9E8D57
W0, W1 = 0x9E3779B9, 0xBB67AE85
MASK32 = 0xFFFFFFFF
MASK64 = 0xFFFFFFFFFFFFFFFF

# Random123's kat_vectors for philox4x32 with 10 rounds: counter, key,
# expected output.
KAT = [
    ((0x00000000, 0x00000000, 0x00000000, 0x00000000),
     (0x00000000, 0x00000000),
     (0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8)),
    ((0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff),
     (0xffffffff, 0xffffffff),
     (0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd)),
    ((0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344),
     (0xa4093822, 0x299f31d0),
     (0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1)),
]


def philox4x32_10(ctr, key):
    """The output block (four words) for counter ctr and key key."""
    c0, c1, c2, c3 = ctr
    k0, k1 = key
    for r in range(10):
        if r:
            k0 = (k0 + W0) & MASK32
            k1 = (k1 + W1) & MASK32
        p0 = M0 * c0
        p1 = M1 * c2
        c0, c1, c2, c3 = ((p1 >> 32) ^ c1 ^ k0, p1 & MASK32,
                          (p0 >> 32) ^ c3 ^ k1, p0 & MASK32)
    return (c0, c1, c2, c3)


def words64(v):
    """A signed or unsigned 64-bit value as (low, high) 32-bit words."""
    v &= MASK64
    return (v & MASK32, v >> 32)


def block(seed, element, n):
    """The Philox block for seed, element coordinates (a tuple of 1 to 3
    integers: a set index or block coordinates) and stream counter n."""
    n0, n1 = words64(n)
    if len(element) == 1:
        e0, e1 = words64(element[0])
    elif len(element) == 2:
        e0, e1 = element[0] & MASK32, element[1] & MASK32
    else:
        e0, e1 = element[0] & MASK32, element[1] & MASK32
        n1 = element[2] & MASK32
    return philox4x32_10((n0, n1, e0, e1), words64(seed))


def to_unit(lo, hi):
    """53 bits of (hi, lo) as a double in [0, 1)."""
    return ((hi << 32 | lo) >> 11) * 2.0**-53


def rng_uniform(seed, element, n):
    w = block(seed, element, n)
    return to_unit(w[0], w[1])


def rng_normal(seed, element, n):
    w = block(seed, element, n)
    u1 = (((w[1] << 32 | w[0]) >> 11) + 1) * 2.0**-53
    u2 = to_unit(w[2], w[3])
    return math.sqrt(-2.0 * math.log(u1)) * math.cos(2.0 * math.pi * u2)


def self_test(verbose):
    ok = True
    for ctr, key, want in KAT:
        got = philox4x32_10(ctr, key)
        if got != want:
            ok = False
            print("philox4x32_10(%s, %s) = %s, expected %s" %
                  (fmt(ctr), fmt(key), fmt(got), fmt(want)))
    if verbose or not ok:
        print("philox4x32-10 known-answer vectors: %s" %
              ("ok" if ok else "FAILED"))
    return ok


def fmt(words):
    return " ".join("%08x" % w for w in words)


def g17(x):
    return "%.17g" % x


# What tests/rng/rng_streams.opd draws: (label, seed, element, n).
SEED = 20240611
SEED2 = -3
SET_ELEMENTS = [0, 1, 2, 77, 998, 999]
SET_COUNTERS = [0, 1, 2**32 + 5, -1]
BLOCK2_POINTS = [(0, 0), (3, 1), (-1, 0), (10, 4)]
BLOCK3_POINTS = [(0, 0, 0), (1, 2, 3), (-1, 4, 2)]


def streams():
    out = []
    for e in SET_ELEMENTS:
        vals = [rng_uniform(SEED, (e,), n) for n in SET_COUNTERS]
        vals.append(rng_normal(SEED, (e,), 7))
        vals.append(rng_uniform(SEED2, (e,), 0))
        out.append("set %d: %s" % (e, " ".join(g17(v) for v in vals)))
    for p in BLOCK2_POINTS:
        vals = [rng_uniform(SEED, p, 3), rng_normal(SEED, p, 2**33)]
        out.append("block2 %d %d: %s" % (p + (" ".join(g17(v) for v in vals),)))
    for p in BLOCK3_POINTS:
        vals = [rng_uniform(SEED, p, 9), rng_normal(SEED, p, 10)]
        out.append("block3 %d %d %d: %s" %
                   (p + (" ".join(g17(v) for v in vals),)))
    return "\n".join(out) + "\n"


def pi(trials, points, seed):
    """monte_carlo_pi.opd: trial t draws point j as (rng_uniform(seed, t,
    2j), rng_uniform(seed, t, 2j + 1)) and counts those inside the quarter
    circle; the estimate is the mean of 4 h_t / M, its standard error the
    sample standard deviation of the 4 h_t / M over sqrt(T)."""
    hits = hits2 = 0
    for t in range(trials):
        h = 0
        for j in range(points):
            x = rng_uniform(seed, (t,), 2 * j)
            y = rng_uniform(seed, (t,), 2 * j + 1)
            if x * x + y * y < 1.0:
                h += 1
        hits += h
        hits2 += h * h
    return pi_report(trials, points, hits, hits2)


def pi_report(trials, points, hits, hits2):
    # The same double operations, in the same order, as the program's main.
    t = float(trials)
    m = float(points)
    mean = 4.0 * float(hits) / (t * m)
    ss = float(hits2) - float(hits) * float(hits) / t
    var = 16.0 * ss / (m * m * (t - 1.0))
    se = math.sqrt(var / t)
    lines = [
        "trials %d, points per trial %d, points %d" %
        (trials, points, trials * points),
        "hits %d" % hits,
        "pi estimate %.12f" % mean,
        "standard error %.3e" % se,
        "error %.3e (%.2f standard errors)" %
        (mean - math.pi, abs(mean - math.pi) / se),
    ]
    return "\n".join(lines) + "\n", mean, se


def check(text, path, ignore_time=False):
    with open(path) as f:
        got = f.read()
    if ignore_time:
        got = "".join(l for l in got.splitlines(True) if not l.startswith("time"))
    if got != text:
        print("%s differs from the reference:\n--- reference\n%s--- %s\n%s" %
              (path, text, path, got))
        return False
    return True


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--self-test", action="store_true")
    ap.add_argument("--streams", action="store_true")
    ap.add_argument("--pi", action="store_true")
    ap.add_argument("--trials", type=int, default=1000)
    ap.add_argument("--points", type=int, default=500000)
    ap.add_argument("--seed", type=int, default=12345)
    ap.add_argument("--check")
    a = ap.parse_args()
    ok = self_test(a.self_test)
    if a.streams:
        text = streams()
        if a.check:
            ok = check(text, a.check) and ok
        else:
            sys.stdout.write(text)
    if a.pi:
        text, mean, se = pi(a.trials, a.points, a.seed)
        if a.check:
            ok = check(text, a.check, ignore_time=True) and ok
        else:
            sys.stdout.write(text)
        if not abs(mean - math.pi) < 5.0 * se:
            print("pi estimate %.12f is %.2f standard errors from pi" %
                  (mean, abs(mean - math.pi) / se))
            ok = False
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
