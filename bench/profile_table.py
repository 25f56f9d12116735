"""profile_table.py - What the benchmark reports share: the STREAM triad of
a run (bench/stream), the machine (lscpu) and an opdc --profile table with
a share-of-reference column added. Imported by bench/report.py,
bench/cuda/report.py, bench/fusion/report.py, bench/peers/run.py and
bench/loopcost/run.py.
"""
import os
import re
import subprocess
import sys

# The header line of the --profile table (lib/core/Profile.cpp).
TABLE_HEADER = re.compile(r"^loop\s+calls\s+total s\s+avg ms\s+GB/s$")


def table_rows(path):
    """The loop rows of the first --profile table in the output file `path`:
    (name, calls, total seconds, GB/s), the total row left out."""
    in_table = False
    for line in open(path):
        fields = line.split()
        if TABLE_HEADER.match(line.rstrip("\n")):
            in_table = True
        elif in_table and fields and fields[0] == "total":
            return
        elif in_table and len(fields) == 5:
            yield fields[0], int(fields[1]), float(fields[2]), float(fields[4])


def machine():
    """(CPU model, L3 size, CPU count) from lscpu, "?" where it says nothing."""
    model, l3 = "?", "?"
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
        for line in out.splitlines():
            key, _, val = line.partition(":")
            if key.strip() == "Model name":
                model = val.strip()
            elif key.strip() == "L3 cache":
                l3 = val.strip()
    except OSError:
        pass
    return model, l3, os.cpu_count()


def triad_values(path, threads):
    """Every STREAM triad of `threads` threads in the output file `path`, in
    file order (the benchmarks append one before and one after each run, so
    that a shared machine's drift shows)."""
    values = []
    for line in open(path):
        m = re.match(r"stream-triad threads=(\d+) .* GBps=([0-9.]+)", line)
        if m and int(m.group(1)) == threads:
            values.append(float(m.group(2)))
    if not values:
        sys.exit(f"error: no triad for {threads} thread(s) in {path}")
    return values


def triad_gbps(path, threads):
    """The STREAM triad of `threads` threads in the output file `path`: the
    mean of its measurements there."""
    values = triad_values(path, threads)
    return sum(values) / len(values)


def annotate(path, reference, label):
    """Prints the program output `path` with a column `label` after the
    profile table's GB/s: each loop's share of `reference` GB/s."""
    in_table = False
    for line in open(path):
        line = line.rstrip("\n")
        if TABLE_HEADER.match(line):
            in_table = True
            print(f"{line} {label:>8}")
            continue
        if in_table and line.startswith("---"):
            print(line + "-" * 9)
            continue
        fields = line.split()
        if in_table and len(fields) == 5:
            print(f"{line} {100.0 * float(fields[4]) / reference:7.1f}%")
            if fields[0] == "total":
                in_table = False
            continue
        print(line)


def bound_table(path, triad):
    """Prints, for the profile table of the program output `path`, each
    loop's measured time and share of the loops' time next to its
    bandwidth-bound time: the bytes of its access descriptors (the
    profile's GB/s x seconds) moved at `triad` GB/s; and the same summed
    over the loops. measured/bound below 100 % is the share of the bound
    reached (a loop whose data stays in cache can pass 100 %)."""
    rows = [(name, secs, gbs) for name, _, secs, gbs in table_rows(path)]
    if not rows:
        return
    total_s = sum(r[1] for r in rows)
    print(f"bandwidth bound: the access descriptors' bytes at the triad "
          f"({triad:.2f} GB/s)")
    print(f"{'loop':<14}{'measured s':>11}{'share':>8}{'bound s':>10}"
          f"{'bound/measured':>16}")
    bound_total = 0.0
    for name, secs, gbs in rows:
        bound = gbs * secs / triad
        bound_total += bound
        share = 100.0 * secs / total_s if total_s else 0.0
        ratio = 100.0 * bound / secs if secs else 0.0
        print(f"{name:<14}{secs:11.3f}{share:7.1f}%{bound:10.3f}{ratio:15.1f}%")
    ratio = 100.0 * bound_total / total_s if total_s else 0.0
    print(f"{'all loops':<14}{total_s:11.3f}{100.0:7.1f}%{bound_total:10.3f}"
          f"{ratio:15.1f}%")
