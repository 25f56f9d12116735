#!/usr/bin/env python3
# run_gmsh.py - Gmsh meshes (lib/io/Gmsh.cpp): the same channel written by
# examples/gmsh/make_mesh.py as ASCII and as binary .msh 4.1 must give the
# same sets, maps and dats (gmsh_read.opd, checked against
# gmsh_read.expected) and the same solution of examples/gmsh/channel.opd
# (channel.expected), with 1 and 2 threads, as must the ASCII file with
# its numbers spelled otherwise (hex, plus signs); broken files must fail
# with the file, the line (ASCII) or byte offset (binary) and what was
# expected (the line checked exactly, also for errors deep in a 200 x 150
# channel, past the reader's 1 MiB window and its first marks of rows).
# The same channel written as Gmsh 2.2 ASCII (to_msh22 below, as Gmsh's
# `-format msh22` lays it out) must give the same output too, and a
# hand-written 2.2 square its known sizes; broken 2.2 files fail with
# file:line errors.
# SPDX-License-Identifier: Apache-2.0
#
# usage: run_gmsh.py --opdc OPDC --work DIR
import argparse
import os
import re
import shutil
import struct
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
MAKE_MESH = os.path.join(ROOT, "examples", "gmsh", "make_mesh.py")


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def line_of(text, at):
    """The number (from 1) of the line that starts right after the newline
    opening `at`'s first occurrence in `text`."""
    return text[:text.index(at)].count("\n") + 2


def replace_line(text, n, new):
    """`text` with its line n (from 1) replaced by `new`."""
    lines = text.split("\n")
    return "\n".join(lines[:n - 1] + [new] + lines[n:])


def respell(text):
    """The same ASCII mesh with its numbers spelled as C's strtod and
    strtoll also read them: coordinates in hex and with a plus sign, the
    line elements' tags and nodes with a plus sign."""
    out, section = [], None
    for ln in text.split("\n"):
        v = ln.split()
        if ln.startswith("$"):
            section = ln
        elif section == "$Nodes" and len(v) == 3:
            ln = f"{float.hex(float(v[0]))} +{v[1]} {float.hex(float(v[2]))}"
        elif section == "$Elements" and len(v) == 3:
            ln = " ".join("+" + w for w in v)
        out.append(ln)
    return "\n".join(out)


def to_msh22(text):
    """The ASCII 4.1 mesh `text` as Gmsh 2.2 ASCII: one "tag x y z" row per
    node, one "tag type 2 physical entity nodes..." row per element (the
    physical group of the element's entity, 0 if none), no $Entities."""
    lines = text.split("\n")
    out, phys, i = [], {}, 0

    def nums(k):
        return [float(w) if "." in w or "e" in w else int(w)
                for w in lines[k].split()]
    while i < len(lines):
        ln = lines[i]
        if ln == "$MeshFormat":
            out += ["$MeshFormat", "2.2 0 8", "$EndMeshFormat"]
            i += 3
        elif ln == "$Entities":
            counts = nums(i + 1)
            k = i + 2
            for d in range(4):
                for _ in range(counts[d]):
                    v = lines[k].split()
                    tag = int(v[0])
                    at = 4 if d == 0 else 7
                    nphys = int(v[at])
                    phys[(d, tag)] = [int(w) for w in v[at + 1:at + 1 + nphys]]
                    k += 1
            i = k + 1
        elif ln == "$Nodes":
            blocks, total = nums(i + 1)[:2]
            rows, k = [], i + 2
            for _ in range(blocks):
                n = int(lines[k].split()[3])
                tags = [lines[k + 1 + j].strip() for j in range(n)]
                coords = [lines[k + 1 + n + j].strip() for j in range(n)]
                rows += [f"{t} {c}" for t, c in zip(tags, coords)]
                k += 1 + 2 * n
            out += ["$Nodes", str(total)] + rows + ["$EndNodes"]
            i = k + 1
        elif ln == "$Elements":
            blocks, total = nums(i + 1)[:2]
            rows, k = [], i + 2
            for _ in range(blocks):
                dim, ent, typ, n = (int(w) for w in lines[k].split())
                p = (phys.get((dim, ent)) or [0])[0]
                for j in range(n):
                    v = lines[k + 1 + j].split()
                    rows.append(" ".join([v[0], str(typ), "2", str(p),
                                          str(ent)] + v[1:]))
                k += 1 + n
            out += ["$Elements", str(total)] + rows + ["$EndElements"]
            i = k + 1
        else:
            out.append(ln)
            i += 1
    return "\n".join(out)


# A unit square of two triangles, hand-written in Gmsh 2.2: nodes tagged
# 10, 20, 30, 40 (not 1..4), one inlet line, two wall lines (one with three
# tags: a partition too), the triangles in group "fluid".
SQUARE22 = """$MeshFormat
2.2 0 8
$EndMeshFormat
$PhysicalNames
3
1 1 "inlet"
1 2 "walls"
2 3 "fluid"
$EndPhysicalNames
$Nodes
4
10 0 0 0
20 1 0 0
30 1 1 0
40 0 1 0
$EndNodes
$Elements
5
1 1 2 1 4 40 10
2 1 2 2 1 10 20
3 1 3 2 3 1 30 40
4 2 2 3 7 10 20 30
5 2 2 3 7 10 30 40
$EndElements
"""
SQUARE22_PROGRAM = """program square22
param mesh: str = "square22.msh"
set nodes, cells, faces, lines, inlet, walls from mesh
map pcell: cells -> nodes[3] from mesh
map fcell: faces -> cells[2] from mesh
map wcell: walls -> cells[1] from mesh
dat x: nodes f64[2] from mesh
dat ctag: cells i32 from mesh
dat ltag: lines i32 from mesh
kernel area(a: f64[2], b: f64[2], c: f64[2], s: sum f64, tag: i32,
            t: sum i32) {
  s += 0.5 * ((b[0] - a[0]) * (c[1] - a[1]) - (c[0] - a[0]) * (b[1] - a[1]))
  t += tag
}
kernel addtag(t: i32, s: sum i32) { s += t }
main {
  printf("nodes %d cells %d faces %d lines %d inlet %d walls %d\\n",
         size(nodes), size(cells), size(faces), size(lines), size(inlet),
         size(walls))
  var a = 0.0
  var t = 0
  loop area over cells (x[pcell[0]], x[pcell[1]], x[pcell[2]], a, ctag, t)
  var lt = 0
  loop addtag over lines (ltag, lt)
  printf("area %.3f cell tags %d line tags %d\\n", a, t, lt)
}
"""
SQUARE22_EXPECTED = ("nodes 4 cells 2 faces 1 lines 3 inlet 1 walls 2\n"
                     "area 1.000 cell tags 6 line tags 5\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--opdc", required=True)
    ap.add_argument("--work", required=True)
    a = ap.parse_args()
    shutil.rmtree(a.work, ignore_errors=True)
    os.makedirs(a.work)
    os.chdir(a.work)
    for args, out in ((["--nx=16", "--ny=8"], "channel.msh"),
                      (["--nx=16", "--ny=8", "--binary"], "channel-binary.msh"),
                      (["--nx=200", "--ny=150"], "large.msh")):
        r = run([sys.executable, MAKE_MESH, *args, out])
        if r.returncode:
            fail(f"make_mesh.py {' '.join(args)}: {r.stderr}")
    with open("spelled.msh", "w") as f:
        f.write(respell(open("channel.msh").read()))
    with open("channel22.msh", "w") as f:
        f.write(to_msh22(open("channel.msh").read()))
    progs = {"gmsh_read": os.path.join(HERE, "gmsh_read.opd"),
             "channel": os.path.join(ROOT, "examples", "gmsh", "channel.opd")}
    for name, src in progs.items():
        r = run([a.opdc, "build", src, "-o", name])
        if r.returncode:
            fail(f"opdc build {src}: {r.stderr}")
        expected = open(os.path.join(HERE, name + ".expected")).read()
        for mesh in ("channel.msh", "channel-binary.msh", "spelled.msh",
                     "channel22.msh"):
            for threads in (1, 2):
                r = run([f"./{name}", f"--mesh={mesh}", f"--threads={threads}"])
                if r.returncode or r.stdout != expected:
                    fail(f"{name} --mesh={mesh} --threads={threads} (status "
                         f"{r.returncode}):\n{r.stdout}{r.stderr}\nexpected:\n"
                         f"{expected}")
        print(f"{name}: ASCII, binary, respelled ASCII and 2.2 meshes, 1 and "
              "2 threads: as expected")
    with open("square22.msh", "w") as f:
        f.write(SQUARE22)
    with open("square22.opd", "w") as f:
        f.write(SQUARE22_PROGRAM)
    r = run([a.opdc, "build", "square22.opd", "-o", "square22"])
    if r.returncode:
        fail(f"opdc build square22.opd: {r.stderr}")
    for threads in (1, 2):
        r = run(["./square22", f"--threads={threads}"])
        if r.returncode or r.stdout != SQUARE22_EXPECTED:
            fail(f"square22 --threads={threads} (status {r.returncode}):\n"
                 f"{r.stdout}{r.stderr}\nexpected:\n{SQUARE22_EXPECTED}")
    print("square22: the hand-written 2.2 square as expected")

    ascii_text = open("channel.msh").read()
    binary = open("channel-binary.msh", "rb").read()
    large = open("large.msh").read()
    short = ascii_text[:ascii_text.index("$EndNodes") - 40]
    # In large.msh: the y coordinate of its last node but 4 (30347) and the
    # first node of its last triangle but 6 (60694).
    coord_at = large.index("\n$EndNodes")
    for _ in range(5):
        coord_at = large.rindex("\n", 0, coord_at)
    coord_line = large[:coord_at].count("\n") + 2
    x, _, z = large[coord_at + 1:large.index("\n", coord_at + 1)].split()
    elem_line = line_of(large, "\n$EndElements") - 7
    tag = large.split("\n")[elem_line - 1].split()
    token_line = line_of(ascii_text, "\n2 1 0 153\n")
    dangling_line = line_of(ascii_text, "\n1 1 2\n")
    type_line = line_of(ascii_text, "\n2 1 2 256\n")
    short_line = short.count("\n") + 1
    # (file name, contents, program, expected error regex)
    nodes_at = binary.index(b"$Nodes\n") + len(b"$Nodes\n")
    cases = [
        ("version.msh", ascii_text.replace("4.1 0 8", "3.0 0 8"), "gmsh_read",
         r"version\.msh:2: \$MeshFormat: version 3\.0; this reader takes "
         r"versions 4\.1 and 2\.2"),
        ("binary22.msh", SQUARE22.replace("2.2 0 8", "2.2 1 8"), "square22",
         r"binary22\.msh:2: \$MeshFormat: a binary version 2\.2 file; this "
         r"reader takes version 2\.2 in ASCII"),
        ("dangling22.msh", SQUARE22.replace("4 2 2 3 7 10 20 30",
                                            "4 2 2 3 7 10 20 35"), "square22",
         r"dangling22\.msh:22: \$Elements: element 4 \(triangles\) refers "
         r"to node 35, which \$Nodes does not define"),
        ("type22.msh", SQUARE22.replace("5 2 2 3 7", "5 9 2 3 7"), "square22",
         r"type22\.msh:23: \$Elements: element type 9 is not supported"),
        ("tags22.msh", SQUARE22.replace("3 1 3 2 3 1", "3 1 3 2 x 1"),
         "square22",
         r"tags22\.msh:21: \$Elements: expected tag 2 of element 3 \(an "
         r"integer\), found 'x'"),
        ("count22.msh", SQUARE22.replace("$Elements\n5", "$Elements\n6"),
         "square22",
         r"count22\.msh:24: \$Elements: expected an element tag \(an "
         r"integer\), found '\$EndElements'"),
        ("twice22.msh", SQUARE22.replace("30 1 1 0", "20 1 1 0"), "square22",
         r"twice22\.msh:14: \$Nodes: node tag 20 appears twice"),
        ("token.msh", ascii_text.replace("\n2 1 0 153\n", "\n2 1 0 15x3\n"),
         "gmsh_read",
         rf"token\.msh:{token_line}: \$Nodes: "
         r"expected the number of nodes in the block \(an integer\), found "
         r"'15x3'"),
        ("dangling.msh", re.sub(r"\n1 1 2\n", "\n1 1 999\n", ascii_text, count=1),
         "gmsh_read",
         rf"dangling\.msh:{dangling_line}: \$Elements: "
         r"element 1 \(lines\) refers to node 999, which \$Nodes does not "
         r"define"),
        ("type.msh", ascii_text.replace("\n2 1 2 256\n", "\n2 1 9 256\n"),
         "gmsh_read",
         rf"type\.msh:{type_line}: \$Elements: "
         r"element type 9 is not supported"),
        ("short.msh", short, "gmsh_read",
         rf"short\.msh:{short_line}: \$Nodes: unexpected end of "
         r"file, expected the [xyz] coordinate of node 15[0-3]"),
        ("large-coord.msh", replace_line(large, coord_line, f"{x} 1.x {z}"),
         "gmsh_read",
         rf"large-coord\.msh:{coord_line}: \$Nodes: expected the y coordinate "
         r"of node 30347 \(a number\), found '1\.x'"),
        ("large-element.msh",
         replace_line(large, elem_line, " ".join([tag[0], "9x"] + tag[2:])),
         "gmsh_read",
         rf"large-element\.msh:{elem_line}: \$Elements: expected node 1 of "
         rf"element {tag[0]} \(an integer\), found '9x'"),
        ("notgmsh.msh", "hello\n", "gmsh_read",
         r"notgmsh\.msh:1: expected a section \(\$MeshFormat, \$Nodes, \.\.\.\), "
         r"found 'hello'"),
        ("nogroup.msh", ascii_text.replace('"inlet"', '"entry"'), "gmsh_read",
         r"nogroup\.msh: no set 'inlet' in the Gmsh mesh: .*physical group "
         r"\(this file's: entry, fluid, outlet, walls\)"),
        ("truncated-binary.msh", binary[:nodes_at + 100], "gmsh_read",
         r"truncated-binary\.msh: byte \d+: \$Nodes: unexpected end of file, "
         r"expected a node tag \(8 bytes\)"),
        ("count-binary.msh",
         binary[:nodes_at + 8] + struct.pack("<Q", 154) + binary[nodes_at + 16:],
         "gmsh_read", r"count-binary\.msh: byte \d+: \$Nodes: the header "
         r"announces 154 nodes, the blocks hold 153"),
    ]
    for fname, content, prog, pattern in cases:
        mode = "wb" if isinstance(content, bytes) else "w"
        with open(fname, mode) as f:
            f.write(content)
        r = run([f"./{prog}", f"--mesh={fname}", "--threads=1"])
        if r.returncode != 1 or not re.search(pattern, r.stderr):
            fail(f"{fname}: expected status 1 and an error matching\n  {pattern}\n"
                 f"got status {r.returncode}:\n{r.stdout}{r.stderr}")
        print(f"{fname}: {r.stderr.strip()}")
    # A map whose arity does not match the elements.
    bad = os.path.join(a.work, "arity.opd")
    with open(bad, "w") as f:
        f.write('program arity\nset cells, nodes from "channel.msh"\n'
                'map pcell: cells -> nodes[4] from "channel.msh"\n'
                'kernel k(c: f64) {\n}\ndat d: cells f64\n'
                'main {\n  loop k over cells (d)\n}\n')
    r = run([a.opdc, "build", bad, "-o", "arity"])
    if r.returncode:
        fail(f"opdc build arity.opd: {r.stderr}")
    r = run(["./arity", "--threads=1"])
    pattern = (r"channel\.msh: map 'pcell' \(cells -> nodes\[4\]\): arity 4, "
               r"but each of triangles has 3")
    if r.returncode != 1 or not re.search(pattern, r.stderr):
        fail(f"arity.opd: expected an error matching {pattern}, got "
             f"{r.returncode}: {r.stderr}")
    print(f"arity.opd: {r.stderr.strip()}")
    return 0


sys.exit(main())
