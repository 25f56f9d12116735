#!/usr/bin/env python3
# check_table.py - docs/features.md cannot drift (issue 50, item 5).
# SPDX-License-Identifier: Apache-2.0
#
# docs/features.md has one row per language construct, statement, intrinsic
# and option, and one column per backend (CPU, CPU+MPI, CUDA, CUDA+MPI);
# each cell names the tests that prove it (`test-name` as `ctest -N` lists
# it, or a file `tests/...`) or says "no" with the diagnostic. This test
# fails when
#   - a keyword of the grammar (grammar/opd.yy's %token "'kw'"), an
#     intrinsic (compiler/ast/Operators.cpp) or an option of `opdc --help`
#     has no row (its first column names it in backticks: `kw`, `sqrt()`,
#     `--emit=cuda`, `-O2`);
#   - a cell names a test that does not exist, or is neither tests, "no
#     ..." with a diagnostic in quotes, nor "n/a ..." saying why;
#   - a row has another number of cells than the header.
import argparse
import os
import re
import subprocess
import sys

BACKENDS = ["CPU", "CPU+MPI", "CUDA", "CUDA+MPI"]


def grammar_keywords(src):
    text = open(os.path.join(src, "grammar/opd.yy")).read()
    return sorted(set(re.findall(r"%token[^;]*?", text) and
                      re.findall(r"\b[A-Z0-9_]+ \"'([a-z0-9_]+)'\"", text)))


def intrinsics(src):
    text = open(os.path.join(src, "compiler/ast/Operators.cpp")).read()
    return sorted(set(re.findall(r"\{Intrinsic::\w+, \"(\w+)\", \d+\}",
                                 text)))


def help_options(opdc):
    text = subprocess.run([opdc, "--help"], capture_output=True,
                          text=True).stdout
    opts = set()
    for line in text.splitlines():
        m = re.match(r"\s{2}(-\S+(?: -\S+)*)", line)
        if not m:
            continue
        for o in m.group(1).split():
            # -O0 -O1 ... stay apart; --emit=ast|... and --x=A|B by name.
            o = re.sub(r"[=\[].*", "", o) if not o.startswith("--emit") \
                else o
            opts.add(o.rstrip(","))
    return sorted(opts)


def ctest_names(build):
    r = subprocess.run(["ctest", "-N"], cwd=build, capture_output=True,
                       text=True)
    return set(re.findall(r"Test\s+#\d+: (\S+)", r.stdout))


def rows(path):
    header, out = None, []
    for n, line in enumerate(open(path), 1):
        if not line.startswith("|"):
            header = None if not line.strip() else header
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if all(re.fullmatch(r":?-+:?", c) for c in cells):
            continue
        if header is None:
            header = cells
            continue
        out.append((n, header, cells))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--source-dir", required=True)
    ap.add_argument("--build-dir", required=True)
    ap.add_argument("--opdc", required=True)
    a = ap.parse_args()
    table = os.path.join(a.source_dir, "docs/features.md")
    tests = ctest_names(a.build_dir)
    problems, named = [], set()
    for n, header, cells in rows(table):
        if header[1:] != BACKENDS:
            continue
        if len(cells) != len(header):
            problems.append(f"features.md:{n}: {len(cells)} cells, the "
                            f"header has {len(header)}")
            continue
        named |= set(re.findall(r"`([^`]+)`", cells[0]))
        for b, cell in zip(BACKENDS, cells[1:]):
            where = f"features.md:{n} ({b})"
            if re.match(r"(no|n/a)\b", cell):
                if cell.startswith("no") and not re.search(r"\"[^\"]+\"",
                                                           cell):
                    problems.append(f"{where}: 'no' without the diagnostic "
                                    "in double quotes")
                continue
            names = re.findall(r"`([^`]+)`", cell)
            if not names:
                problems.append(f"{where}: names no test: {cell!r}")
            for t in names:
                if t.startswith("tests/"):
                    if not os.path.exists(os.path.join(a.source_dir, t)):
                        problems.append(f"{where}: no file {t}")
                elif t not in tests:
                    problems.append(f"{where}: no test '{t}' (ctest -N)")
    want = ([(k, f"`{k}`") for k in grammar_keywords(a.source_dir)] +
            [(i, f"`{i}()`") for i in intrinsics(a.source_dir)] +
            [(o, f"`{o}`") for o in help_options(a.opdc)])
    plain = {re.sub(r"[=\[(].*", "", x) for x in named} | named
    for what, shown in want:
        key = shown.strip("`")
        if key not in named and re.sub(r"[=(].*", "", key) not in plain:
            problems.append(f"features.md has no row for {shown}")
    for p in problems:
        print(p)
    print(f"{len(want)} constructs and options, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
