#!/usr/bin/env python3
# run_gmsh_slices.py - Gmsh meshes read in slices under MPI (lib/io/Gmsh.cpp,
# issue 16: no rank holds a whole mesh-sized array):
#   * gmsh_slices.opd (no faces) on examples/gmsh/channel.msh, its binary
#     twin and a copy whose node tags are scattered (not contiguous, not in
#     file order), at 1, 2 and 4 ranks: every rank keeps exactly its slice
#     [n*r/p, n*(r+1)/p) of each set it reads (OPD_GMSH_SLICES=1 reports
#     the rows kept), and the output is the serial run's bytes;
#   * the scattered copy again with OPD_GMSH_MAX_RUNS=4, so that its tags
#     count as scattered (each rank owns the tags hashed to it and node
#     indices are asked of the owners), serially and at 1, 2, 4 ranks;
#   * the same for a 200 x 150 channel (2.3 MB ASCII, 2.9 MB binary, and
#     its scattered copy): blocks of more than 4096 rows and files larger
#     than the reader's 1 MiB window, so ranks reach their rows by seeking
#     to the first pass's marks (every 4096th row of an ASCII block) and
#     passing over the rows between;
#   * tests/gmsh/gmsh_read.opd (faces and boundary maps, the whole-mesh
#     path) on the scattered copy, both ways, at 1, 2 and 4 ranks: the
#     serial output of the original file;
#   * gmsh_hexes.opd on a box of hexes (quad faces, a boundary group of
#     quads), at 1, 2, 4 ranks: the serial output (133 faces);
#   * a dangling node reference and a node tag given twice in the
#     scattered copy, found by the owners, and a face of three cells and a
#     wall line on an interior edge, found by the ranks matching faces: at
#     2 and 4 ranks the same message as the serial reader's.
# Both programs are built with -frepro-sum and print floats as %a, so the
# comparison is of every bit.
# SPDX-License-Identifier: Apache-2.0
#
# usage: run_gmsh_slices.py --opdc OPDC --mpiexec MPIRUN [--mpiflag F ...]
#                           --work DIR
import argparse
import os
import re
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
MESHES = os.path.join(ROOT, "examples", "gmsh")
MAKE_MESH = os.path.join(MESHES, "make_mesh.py")


def run(cmd, env=None):
    return subprocess.run(cmd, capture_output=True, text=True, env=env,
                          timeout=240)


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def scatter(text):
    """The mesh with node tag t renamed 100000 + (t * 7919) % 100003: no two
    consecutive nodes of the file have consecutive tags (and the header's
    smallest and largest tags updated)."""
    lines = text.split("\n")
    out = []
    new = lambda t: 100000 + (t * 7919) % 100003
    i = 0
    while i < len(lines):
        ln = lines[i]
        out.append(ln)
        i += 1
        if ln == "$Nodes":
            nb, nn, _, _ = map(int, lines[i].split())
            tags = []
            hdr = len(out)
            out.append("")
            i += 1
            for _ in range(nb):
                d, e, p, n = map(int, lines[i].split())
                out.append(lines[i])
                i += 1
                for k in range(n):
                    t = new(int(lines[i + k]))
                    tags.append(t)
                    out.append(str(t))
                i += n
                out += lines[i:i + n]
                i += n
            out[hdr] = f"{nb} {nn} {min(tags)} {max(tags)}"
        elif ln == "$Elements":
            nb = int(lines[i].split()[0])
            out.append(lines[i])
            i += 1
            for _ in range(nb):
                d, e, ty, n = map(int, lines[i].split())
                out.append(lines[i])
                i += 1
                for k in range(n):
                    v = lines[i + k].split()
                    out.append(" ".join([v[0]] + [str(new(int(x))) for x in v[1:]]))
                i += n
    return "\n".join(out)


def hex_mesh(nx, ny, nz):
    """A box of nx x ny x nz hexes (Gmsh's node order) and its bottom as a
    physical group of quads, as a .msh 4.1 ASCII text."""
    def node(i, j, k):
        return 1 + i + (nx + 1) * (j + (ny + 1) * k)
    n = (nx + 1) * (ny + 1) * (nz + 1)
    out = ["$MeshFormat", "4.1 0 8", "$EndMeshFormat",
           "$PhysicalNames", "2", '2 2 "bottom"', '3 1 "fluid"',
           "$EndPhysicalNames", "$Entities", "0 0 1 1",
           "1 0 0 0 1 1 0 1 2 0", "1 0 0 0 1 1 1 1 1 0", "$EndEntities",
           "$Nodes", f"1 {n} 1 {n}", f"3 1 0 {n}"]
    out += [str(t) for t in range(1, n + 1)]
    out += [f"{i / nx} {j / ny * 1.3} {k / nz * 0.7 + 0.01 * i * j}"
            for k in range(nz + 1) for j in range(ny + 1) for i in range(nx + 1)]
    out.append("$EndNodes")
    hexes = [[node(i, j, k), node(i + 1, j, k), node(i + 1, j + 1, k),
              node(i, j + 1, k), node(i, j, k + 1), node(i + 1, j, k + 1),
              node(i + 1, j + 1, k + 1), node(i, j + 1, k + 1)]
             for k in range(nz) for j in range(ny) for i in range(nx)]
    quads = [[node(i, j, 0), node(i, j + 1, 0), node(i + 1, j + 1, 0),
              node(i + 1, j, 0)] for j in range(ny) for i in range(nx)]
    e = len(hexes) + len(quads)
    out += ["$Elements", f"2 {e} 1 {e}", f"2 1 3 {len(quads)}"]
    out += [" ".join(map(str, [t + 1] + q)) for t, q in enumerate(quads)]
    out.append(f"3 1 5 {len(hexes)}")
    out += [" ".join(map(str, [len(quads) + t + 1] + h))
            for t, h in enumerate(hexes)]
    out.append("$EndElements")
    return "\n".join(out) + "\n"


def slice_lo(n, r, p):
    return n // p * r + (n % p) * r // p


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--opdc", required=True)
    ap.add_argument("--mpiexec", required=True)
    ap.add_argument("--mpiflag", action="append", default=[])
    ap.add_argument("--work", required=True)
    a = ap.parse_args()
    shutil.rmtree(a.work, ignore_errors=True)
    os.makedirs(a.work)
    os.chdir(a.work)
    shutil.copy(os.path.join(MESHES, "channel.msh"), "channel.msh")
    shutil.copy(os.path.join(MESHES, "channel-binary.msh"), "channel-binary.msh")
    with open("scattered.msh", "w") as f:
        f.write(scatter(open("channel.msh").read()))
    for args, out in ((["--nx=200", "--ny=150"], "large.msh"),
                      (["--nx=200", "--ny=150", "--binary"], "large-binary.msh")):
        r = run([sys.executable, MAKE_MESH, *args, out])
        if r.returncode:
            fail(f"make_mesh.py {' '.join(args)}: {r.stderr}")
    with open("large-scattered.msh", "w") as f:
        f.write(scatter(open("large.msh").read()))
    with open("hex.msh", "w") as f:
        f.write(hex_mesh(5, 4, 3))
    progs = {"gmsh_slices": os.path.join(HERE, "gmsh_slices.opd"),
             "gmsh_hexes": os.path.join(HERE, "gmsh_hexes.opd"),
             "gmsh_read": os.path.join(ROOT, "tests", "gmsh", "gmsh_read.opd")}
    for name, src in progs.items():
        text = re.sub(r"%[-+ #0]*[0-9]*(\.[0-9]+)?[eEfFgG]", "%a",
                      open(src).read())
        with open(name + ".opd", "w") as f:
            f.write(text)
        for mpi, exe in ((False, name + "-serial"), (True, name + "-mpi")):
            r = run([a.opdc, "build", "-frepro-sum"] + (["--mpi"] if mpi else [])
                    + [name + ".opd", "-o", exe])
            if r.returncode:
                fail(f"opdc build {name}: {r.stderr}")
    env = dict(os.environ, OPD_GMSH_SLICES="1", OMP_WAIT_POLICY="passive")
    spread = dict(env, OPD_GMSH_MAX_RUNS="4")
    owns = re.compile(r"gmsh: rank (\d+) of (\d+): (\S+): node tags scattered: "
                      r"this rank owns (\d+) of (\d+)")
    kept = re.compile(r"gmsh: rank (\d+) of (\d+): (\S+): set (.+): kept rows "
                      r"(\d+)-(\d+) of (\d+)")
    # (program, the mesh the serial run reads, its scattered copy, its
    # nodes, the meshes the ranks read; "spread": the scattered copy, owned)
    for name, plain, scattered, nodes, meshes in (
            ("gmsh_slices", "channel.msh", "scattered.msh", 153,
             ("channel.msh", "channel-binary.msh", "scattered.msh", "spread")),
            ("gmsh_slices", "large.msh", "large-scattered.msh", 201 * 151,
             ("large.msh", "large-binary.msh", "spread")),
            ("gmsh_read", "channel.msh", "scattered.msh", 153,
             ("scattered.msh", "spread"))):
        r = run([f"./{name}-serial", f"--mesh={plain}", "--threads=1"])
        if r.returncode:
            fail(f"{name} serial: {r.stdout}{r.stderr}")
        expected = r.stdout
        r = run([f"./{name}-serial", f"--mesh={scattered}", "--threads=1"],
                env=spread)
        if r.returncode or r.stdout != expected:
            fail(f"{name} serial, scattered tags owned: {r.stdout}{r.stderr}")
        for mesh in meshes:
            menv = spread if mesh == "spread" else env
            if mesh == "spread":
                mesh = scattered
            for np in (1, 2, 4):
                r = run([a.mpiexec, *a.mpiflag, "-np", str(np),
                         f"./{name}-mpi", f"--mesh={mesh}", "--threads=1"],
                        env=menv)
                if r.returncode or r.stdout != expected:
                    fail(f"{name} --mesh={mesh} on {np} ranks (status "
                         f"{r.returncode}):\n{r.stdout}{r.stderr}\nexpected "
                         f"(serial, {plain}):\n{expected}")
                owned = {int(m[1]): int(m[4]) for m in owns.finditer(r.stderr)}
                if (menv is spread) != bool(owned) or (
                        owned and (set(owned) != set(range(np))
                                   or sum(owned.values()) != nodes)):
                    fail(f"{mesh} on {np} ranks: expected "
                         + (f"every rank to own some of the {nodes} tags"
                            if menv is spread else "no scattered tags")
                         + f", got:\n{r.stderr}")
                # Every rank reports each set it read rows of (gmsh_slices:
                # nodes, the coordinates, twice; cells, lines, inlet: the
                # maps; gmsh_read also the cells for the faces and the
                # boundary group), each time exactly its slice.
                sets = {}
                for m in kept.finditer(r.stderr):
                    rank, p, first, hi, n = (int(m[1]), int(m[2]), int(m[5]),
                                             int(m[6]), int(m[7]))
                    if p != np or (first, hi) != (slice_lo(n, rank, np),
                                                  slice_lo(n, rank + 1, np)):
                        fail(f"{mesh} on {np} ranks: {m[0]}: expected rows "
                             f"{slice_lo(n, rank, np)}-"
                             f"{slice_lo(n, rank + 1, np)}")
                    sets.setdefault(m[4], set()).add(rank)
                want = ({"nodes", "cells", "lines", "inlet"}
                        if name == "gmsh_slices" else
                        {"nodes", "cells", "triangles", "lines", "walls",
                         "cells (for the faces)"})
                if set(sets) != want or any(v != set(range(np))
                                            for v in sets.values()):
                    fail(f"{mesh} on {np} ranks: expected every rank to "
                         f"report its rows of {sorted(want)}, got:\n"
                         f"{r.stderr}")
            print(f"{name} --mesh={mesh}"
                  + (" (tags owned)" if menv is spread else "")
                  + ": 1, 2, 4 ranks: the serial output"
                  + (", each rank keeping its slice" if name == "gmsh_slices"
                     else ""))
    # Hexes: quad faces matched over the ranks, with the tags as runs and
    # owned (OPD_GMSH_MAX_RUNS=0).
    r = run(["./gmsh_hexes-serial", "--mesh=hex.msh", "--threads=1"])
    if r.returncode or not r.stdout.startswith("sizes 120 60 133 20\n"):
        fail(f"gmsh_hexes serial: {r.stdout}{r.stderr}")
    expected = r.stdout
    for menv in (env, dict(env, OPD_GMSH_MAX_RUNS="0")):
        for np in (1, 2, 4):
            r = run([a.mpiexec, *a.mpiflag, "-np", str(np), "./gmsh_hexes-mpi",
                     "--mesh=hex.msh", "--threads=1"], env=menv)
            if r.returncode or r.stdout != expected:
                fail(f"gmsh_hexes on {np} ranks (status {r.returncode}):\n"
                     f"{r.stdout}{r.stderr}\nexpected (serial):\n{expected}")
    print("gmsh_hexes --mesh=hex.msh (tags as runs, owned): 1, 2, 4 ranks: "
          "the serial output")
    # Bad scattered files: the owners find the error, every rank reports
    # the serial reader's message. Then faces: a triangle repeated (a face
    # of three cells) and a wall line on an interior edge, found by the
    # ranks that match faces.
    lines = open("scattered.msh").read().split("\n")
    at = lines.index("$Elements") + 3  # the first element of the first block
    v = lines[at].split()
    dangling = lines[:at] + [" ".join([v[0], "999"] + v[2:])] + lines[at + 1:]
    at = lines.index("$Nodes") + 3  # the first node tag
    twice = lines[:at + 99] + [lines[at + 49]] + lines[at + 100:]
    lines = open("channel.msh").read().split("\n")
    at = lines.index("$Elements") + 3  # line 1 (nodes 1, 2), a wall
    offwall = lines[:at] + ["1 2 19"] + lines[at + 1:]  # 2-19: interior
    at = lines.index("2 1 2 256", at) + 1  # the first triangle
    v, w = lines[at].split(), lines[at + 1].split()
    nonmanifold = lines[:at + 1] + [" ".join([w[0]] + v[1:])] + lines[at + 2:]
    for fname, content, prog in (("dangling.msh", dangling, "gmsh_slices"),
                                 ("twice.msh", twice, "gmsh_slices"),
                                 ("offwall.msh", offwall, "gmsh_read"),
                                 ("nonmanifold.msh", nonmanifold, "gmsh_read")):
        with open(fname, "w") as f:
            f.write("\n".join(content))
        r = run([f"./{prog}-serial", f"--mesh={fname}", "--threads=1"])
        m = re.search(r"error: (" + re.escape(fname) + r"(:\d+)?: .*)",
                      r.stderr)
        if r.returncode != 1 or not m:
            fail(f"{fname} serially: expected an error, got {r.returncode}: "
                 f"{r.stderr}")
        message = m[1]
        for np in (2, 4):
            r = run([a.mpiexec, *a.mpiflag, "-np", str(np), f"./{prog}-mpi",
                     f"--mesh={fname}", "--threads=1"],
                    env=spread if prog == "gmsh_slices" else env)
            got = re.findall(r"error: rank \d+: (.*)", r.stderr)
            if r.returncode == 0 or not got or any(g != message for g in got):
                fail(f"{fname} on {np} ranks (tags owned): expected status 1 "
                     f"and '{message}' from the ranks, got {r.returncode}:\n"
                     f"{r.stderr}")
        print(f"{fname}, 2 and 4 ranks: {message}")
    return 0


sys.exit(main())
