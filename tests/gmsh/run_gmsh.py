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
    progs = {"gmsh_read": os.path.join(HERE, "gmsh_read.opd"),
             "channel": os.path.join(ROOT, "examples", "gmsh", "channel.opd")}
    for name, src in progs.items():
        r = run([a.opdc, "build", src, "-o", name])
        if r.returncode:
            fail(f"opdc build {src}: {r.stderr}")
        expected = open(os.path.join(HERE, name + ".expected")).read()
        for mesh in ("channel.msh", "channel-binary.msh", "spelled.msh"):
            for threads in (1, 2):
                r = run([f"./{name}", f"--mesh={mesh}", f"--threads={threads}"])
                if r.returncode or r.stdout != expected:
                    fail(f"{name} --mesh={mesh} --threads={threads} (status "
                         f"{r.returncode}):\n{r.stdout}{r.stderr}\nexpected:\n"
                         f"{expected}")
        print(f"{name}: ASCII, binary and respelled ASCII meshes, 1 and 2 "
              "threads: as expected")

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
        ("version.msh", ascii_text.replace("4.1 0 8", "2.2 0 8"), "gmsh_read",
         r"version\.msh:2: \$MeshFormat: version 2\.2; this reader takes "
         r"version 4\.1"),
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
