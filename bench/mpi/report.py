#!/usr/bin/env python3
# report.py - Summarises one --profile run of bench/mpi/run.sh: program time,
# loop time, exchange time and share, messages and megabytes sent.
# SPDX-License-Identifier: Apache-2.0
import re
import sys

text = open(sys.argv[1], encoding="utf-8").read()
# Airfoil: "Max total runtime = \n<seconds>"; Poisson: "time = <s> s".
m = re.search(r"Max total runtime = \s*\n\s*([0-9.]+)", text) or \
    re.search(r"^time = ([0-9.]+) s", text, re.M)
wall = float(m.group(1)) if m else float("nan")
total = re.search(r"^total\s+(\d+)\s+([0-9.]+)(.*)$", text, re.M)
if not total:
    sys.exit(f"{sys.argv[1]}: no profile total line")
loops = float(total.group(2))
rest = total.group(3).split()
# One rank: calls, total s, avg ms, GB/s; several: + avg s, msgs, MB, exch s.
if len(rest) >= 6:
    msgs, mb, exch = int(rest[3]), float(rest[4]), float(rest[5])
else:
    msgs, mb, exch = 0, 0.0, 0.0
part = re.search(r"^partition: (.*)$", text, re.M)
print(f"  time {wall:.3f} s   loops {loops:.3f} s   exchanges {exch:.3f} s "
      f"({100.0 * exch / loops if loops else 0.0:.1f} % of loop time)   "
      f"{msgs} messages, {mb:.1f} MB"
      + (f"   [{part.group(1)}]" if part else ""))
