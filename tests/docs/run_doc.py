#!/usr/bin/env python3
# run_doc.py - Runs every code block of a Markdown document, in order, in a
# scratch folder, so that a tutorial cannot drift from the compiler.
# SPDX-License-Identifier: Apache-2.0
#
# usage: run_doc.py --opdc BUILD/bin/opdc --work DIR doc.md
#
# Fenced blocks, by their info string:
#   ```opd file=NAME.opd   written to DIR/NAME.opd (before the next shell
#                          block runs); an opd block without file= is an
#                          error, so that no program goes untested
#   ```sh                  run by bash -e in DIR, opdc first on the PATH;
#                          must exit 0 (```sh exit=any: any status, for a
#                          command whose outcome depends on the machine,
#                          such as a GPU build)
#   ```text                the output of the sh block right before it
#                          (stdout and stderr): lines equal after trailing
#                          blanks are dropped; a line `...` stands for any
#                          number of lines (times, machine-dependent parts)
# Other blocks (none in the tutorial) are refused: every block is checked;
# with --skip-plain, blocks with no info string are left alone (the
# README's folder layout).
import argparse
import os
import re
import shutil
import subprocess
import sys

FENCE = re.compile(r"^```(\S*)\s*(.*)$")


def blocks(path):
    """(info, attrs, text, line) of each fenced block."""
    out, cur = [], None
    with open(path) as f:
        for n, line in enumerate(f, 1):
            m = FENCE.match(line.rstrip("\n"))
            if cur is None and m:
                attrs = dict(a.split("=", 1) for a in m.group(2).split()
                             if "=" in a)
                cur = (m.group(1), attrs, [], n)
            elif cur is not None and line.rstrip() == "```":
                out.append((cur[0], cur[1], "".join(cur[2]), cur[3]))
                cur = None
            elif cur is not None:
                cur[2].append(line)
    if cur is not None:
        sys.exit(f"{path}:{cur[3]}: error: the block opened here is not "
                 "closed")
    return out


def matches(expected, got):
    """Lines of got equal those of expected, `...` matching any run."""
    exp = [l.rstrip() for l in expected.splitlines()]
    out = [l.rstrip() for l in got.splitlines()]

    def walk(i, j):
        if i == len(exp):
            return j == len(out)
        if exp[i] == "...":
            return any(walk(i + 1, k) for k in range(j, len(out) + 1))
        return j < len(out) and exp[i] == out[j] and walk(i + 1, j + 1)
    return walk(0, 0)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--opdc", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--skip-plain", action="store_true")
    ap.add_argument("doc")
    a = ap.parse_args()
    shutil.rmtree(a.work, ignore_errors=True)
    os.makedirs(a.work)
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([os.path.dirname(os.path.abspath(a.opdc)),
                                   env.get("PATH", "")])
    # mpirun as root and with more ranks than cores (CI containers).
    env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_rmaps_base_oversubscribe="1", OMP_NUM_THREADS="1")
    failures, last, counts = [], None, {}
    for info, attrs, text, line in blocks(a.doc):
        where = f"{a.doc}:{line}"
        if info == "" and a.skip_plain:
            continue
        counts[info] = counts.get(info, 0) + 1
        if info == "opd":
            if "file" not in attrs:
                failures.append(f"{where}: an opd block needs file=NAME.opd")
                continue
            with open(os.path.join(a.work, attrs["file"]), "w") as f:
                f.write(text)
        elif info == "sh":
            r = subprocess.run(["bash", "-e", "-c", text], cwd=a.work, env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               text=True, timeout=600)
            print(f"$ {text.strip()}\n{r.stdout}", end="", flush=True)
            if r.returncode != 0 and attrs.get("exit") != "any":
                failures.append(f"{where}: exited {r.returncode}:\n{r.stdout}")
            last = r.stdout
        elif info == "text":
            if last is None:
                failures.append(f"{where}: an output block with no sh block "
                                "before it")
            elif not matches(text, last):
                failures.append(f"{where}: the output differs; expected\n"
                                f"{text}got\n{last}")
            last = None
        else:
            failures.append(f"{where}: a ```{info} block: the test runs only "
                            "opd, sh and text blocks")
    for f in failures:
        print("FAIL: " + f)
    print(f"{a.doc}: " + ", ".join(f"{v} {k}" for k, v in sorted(counts.items()))
          + f" blocks, {len(failures)} problems")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
