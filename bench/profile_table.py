"""profile_table.py - What the benchmark reports share: the STREAM triad of
a run (bench/stream) and an opdc --profile table with a share-of-reference
column added. Imported by bench/report.py, bench/cuda/report.py and
bench/fusion/report.py.
"""
import re
import sys

# The header line of the --profile table (lib/core/Profile.cpp).
TABLE_HEADER = re.compile(r"^loop\s+calls\s+total s\s+avg ms\s+GB/s$")


def triad_gbps(path, threads):
    """The STREAM triad of `threads` threads in the output file `path`."""
    for line in open(path):
        m = re.match(r"stream-triad threads=(\d+) .* GBps=([0-9.]+)", line)
        if m and int(m.group(1)) == threads:
            return float(m.group(2))
    sys.exit(f"error: no triad for {threads} thread(s) in {path}")


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
