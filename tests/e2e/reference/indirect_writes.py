#!/usr/bin/env python3
# indirect_writes.py - The sequential semantics of indirect_writes.opd,
# computed independently in plain Python 3: prints what the program must
# print. Usage: indirect_writes.py [--check FILE] (exits 1 unless FILE holds
# exactly that output).
# SPDX-License-Identifier: Apache-2.0
import sys

edges = 5000
lines = []
N = 701
e2n = [((i * 7919) % N, (i * 104729 + 13) % N) for i in range(edges)]
perm = [(i * 37 + 11) % N for i in range(N)]
last = [-1] * N
mixed = list(range(N))
moved = [0] * N
bnd = [1.0] * N

# `out` in edge order: the last (highest-numbered) edge wins.
for i, (a, b) in enumerate(e2n):
    last[a] = i
    last[b] = i + 100000


def sums(a, b, c, f):
    s1 = sum(x * (n + 1) for n, x in enumerate(a))
    s2 = sum(x * (n + 1) for n, x in enumerate(b))
    s3 = sum(x * (n + 1) for n, x in enumerate(c))
    s4 = 0.0
    for n, x in enumerate(f):  # integers and halves: exact in any order
        s4 += x * (n + 1)
    return s1, s2, s3, s4


lines.append("out: %d" % sums(last, mixed, mixed, bnd)[0])
# `inout` in edge order; one edge reaching one node twice updates it twice,
# in argument order (the kernel's statement order).
for i, (a, b) in enumerate(e2n):
    mixed[a] = (mixed[a] * 31 + i) % 1000003
    mixed[b] = (mixed[b] * 17 + 3 * i) % 999983
# Injective, through the permutation.
for n in range(N):
    moved[perm[n]] = mixed[n] * 2 + 1
    bnd[perm[n]] = bnd[perm[n]] * 0.5 + float(mixed[n])
s1, s2, s3, s4 = sums(last, mixed, moved, bnd)
lines.append("inout: %d" % s2)
lines.append("injective: %d %.17g" % (s3, s4))
text = "".join(line + "\n" for line in lines)
if len(sys.argv) == 3 and sys.argv[1] == "--check":
    with open(sys.argv[2], encoding="utf-8") as f:
        if f.read() != text:
            sys.stderr.write("indirect_writes.py: %s differs from:\n%s" %
                             (sys.argv[2], text))
            sys.exit(1)
else:
    sys.stdout.write(text)
