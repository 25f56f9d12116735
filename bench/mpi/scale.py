#!/usr/bin/env python3
# scale.py - One run of bench/mpi/scale.sh: wall time, mesh read and
# partition times, peak memory per rank, loop time and exchange share.
# usage: scale.py PROFILE.txt RSS.txt WALL_SECONDS
# SPDX-License-Identifier: Apache-2.0
import re
import sys

text = open(sys.argv[1], encoding="utf-8").read()
found = re.findall(r"^rank (\d+) peak_rss (\d+) cpu ([0-9.]+)",
                   open(sys.argv[2]).read(), re.M)
rss = {int(r): int(k) for r, k, _ in found}
cpu = [float(c) for _, _, c in found]
wall = float(sys.argv[3])
total = re.search(r"^total\s+(\d+)\s+([0-9.]+)(.*)$", text, re.M)
loops = float(total.group(2)) if total else float("nan")
rest = total.group(3).split() if total else []
exch = float(rest[5]) if len(rest) >= 6 else 0.0
read = re.search(r"mesh read ([0-9.]+) s", text)
part = re.search(r"; ([0-9.]+) s at the (?:first set loop|start of main)", text)
how = re.search(r"^partition: ([^;\n]*)", text, re.M)
mib = [rss[r] / 1024.0 for r in sorted(rss)]
print(f"  wall {wall:.2f} s   read {read.group(1) + ' s' if read else 'n/a'}   "
      f"partition {part.group(1) + ' s' if part else '-'}   "
      f"loops {loops:.3f} s   exchanges {exch:.3f} s "
      f"({100.0 * exch / loops if loops else 0.0:.1f} %)")
print(f"  peak memory per rank (MiB): " +
      " ".join(f"{m:.0f}" for m in mib) +
      (f"   max {max(mib):.0f}, sum {sum(mib):.0f}" if mib else "") +
      (f"   CPU s per rank max {max(cpu):.1f}" if cpu else ""))
if how:
    print(f"  [{how.group(1)}]")
