#!/usr/bin/env python3
# make_mesh.py - Writes the channel mesh of examples/gmsh as Gmsh would:
# a .msh file version 4.1, ASCII or binary (Gmsh itself is not needed).
# SPDX-License-Identifier: Apache-2.0
#
# usage: make_mesh.py [--nx=N] [--ny=N] [--binary] OUTPUT.msh
#
# The channel [0, 2] x [0, 1] in nx x ny squares, each split into two
# triangles along alternating diagonals, with the entities and physical
# groups a Gmsh .geo would give it: surface 1 "fluid" (the triangles),
# curves 1-4 (bottom, right, top, left) as lines in groups "walls"
# (bottom, top), "outlet" (right) and "inlet" (left), and corner points.
# Node tags are numbered from 1 in row order, element tags from 1 (lines
# first, as Gmsh writes lower dimensions first).
import struct
import sys


def main():
    nx, ny, binary, out = 16, 8, False, None
    for a in sys.argv[1:]:
        if a.startswith("--nx="):
            nx = int(a[5:])
        elif a.startswith("--ny="):
            ny = int(a[5:])
        elif a == "--binary":
            binary = True
        elif not a.startswith("-"):
            out = a
        else:
            sys.exit(f"make_mesh.py: unknown option {a}")
    if not out:
        sys.exit("usage: make_mesh.py [--nx=N] [--ny=N] [--binary] OUTPUT.msh")
    lx, ly = 2.0, 1.0

    def node(i, j):
        return 1 + j * (nx + 1) + i

    coords = [(lx * i / nx, ly * j / ny, 0.0) for j in range(ny + 1)
              for i in range(nx + 1)]
    # curves: 1 bottom, 2 right, 3 top, 4 left (Gmsh orients them
    # counter-clockwise around the surface)
    curves = {
        1: [(node(i, 0), node(i + 1, 0)) for i in range(nx)],
        2: [(node(nx, j), node(nx, j + 1)) for j in range(ny)],
        3: [(node(i + 1, ny), node(i, ny)) for i in reversed(range(nx))],
        4: [(node(0, j + 1), node(0, j)) for j in reversed(range(ny))],
    }
    tris = []
    for j in range(ny):
        for i in range(nx):
            a, b, c, d = node(i, j), node(i + 1, j), node(i + 1, j + 1), node(i, j + 1)
            if (i + j) % 2 == 0:
                tris += [(a, b, c), (a, c, d)]
            else:
                tris += [(a, b, d), (b, c, d)]
    phys_names = [(1, 1, "walls"), (1, 2, "outlet"), (1, 3, "inlet"),
                  (2, 4, "fluid")]
    curve_phys = {1: 1, 2: 2, 3: 1, 4: 3}
    corners = {1: node(0, 0), 2: node(nx, 0), 3: node(nx, ny), 4: node(0, ny)}

    text = []  # ASCII pieces; binary pieces are bytes
    parts = []

    def w(s):
        parts.append(s.encode() if isinstance(s, str) else s)

    def size(v):
        return struct.pack("<Q", v) if binary else f"{v}"

    w(f"$MeshFormat\n4.1 {1 if binary else 0} 8\n")
    if binary:
        w(struct.pack("<i", 1) + b"\n")
    w("$EndMeshFormat\n$PhysicalNames\n%d\n" % len(phys_names))
    for d, t, n in phys_names:
        w(f'{d} {t} "{n}"\n')
    w("$EndPhysicalNames\n$Entities\n")

    def line(*items):
        # ASCII: items joined by spaces and a newline; binary: packed.
        if binary:
            w(b"".join(items))
        else:
            w(" ".join(items) + "\n")

    I = (lambda v: struct.pack("<i", v)) if binary else str
    D = (lambda v: struct.pack("<d", v)) if binary else repr
    S = (lambda v: struct.pack("<Q", v)) if binary else str
    line(S(4), S(4), S(1), S(0))
    for p, n in corners.items():
        x, y, z = coords[n - 1]
        line(I(p), D(x), D(y), D(z), S(0))
    bounds = {1: (1, 2), 2: (2, 3), 3: (3, 4), 4: (4, 1)}
    for c in range(1, 5):
        a, b = bounds[c]
        xa, ya, _ = coords[corners[a] - 1]
        xb, yb, _ = coords[corners[b] - 1]
        line(I(c), D(min(xa, xb)), D(min(ya, yb)), D(0.0), D(max(xa, xb)),
             D(max(ya, yb)), D(0.0), S(1), I(curve_phys[c]), S(2), I(a), I(-b))
    line(I(1), D(0.0), D(0.0), D(0.0), D(lx), D(ly), D(0.0), S(1), I(4),
         S(4), I(1), I(2), I(3), I(4))
    w(("\n" if binary else "") + "$EndEntities\n$Nodes\n")
    # All nodes in one block on the surface (Gmsh would split them by
    # entity; one block is as valid).
    n = len(coords)
    line(S(1), S(n), S(1), S(n))
    line(I(2), I(1), I(0), S(n))
    for k in range(n):
        line(S(k + 1))
    for x, y, z in coords:
        line(D(x), D(y), D(z))
    w(("\n" if binary else "") + "$EndNodes\n$Elements\n")
    nlines = sum(len(v) for v in curves.values())
    total = nlines + len(tris)
    line(S(5), S(total), S(1), S(total))
    tag = 1
    for c in range(1, 5):
        line(I(1), I(c), I(1), S(len(curves[c])))
        for a, b in curves[c]:
            line(S(tag), S(a), S(b))
            tag += 1
    line(I(2), I(1), I(2), S(len(tris)))
    for a, b, c in tris:
        line(S(tag), S(a), S(b), S(c))
        tag += 1
    w(("\n" if binary else "") + "$EndElements\n")
    with open(out, "wb") as f:
        f.write(b"".join(parts))


main()
