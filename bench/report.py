#!/usr/bin/env python3
"""report.py - Annotates an opdc --profile table with % of the STREAM triad.

usage: report.py STREAM_OUTPUT PROGRAM_OUTPUT THREADS
Prints the program's output with a "% triad" column added to the profile
table, using the triad of the same thread count measured in the same run.
"""
import re
import sys


def triad_gbps(path, threads):
    for line in open(path):
        m = re.match(r"stream-triad threads=(\d+) .* GBps=([0-9.]+)", line)
        if m and int(m.group(1)) == threads:
            return float(m.group(2))
    sys.exit(f"report.py: error: no triad for {threads} thread(s) in {path}")


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    threads = int(sys.argv[3])
    triad = triad_gbps(sys.argv[1], threads)
    in_table = False
    for line in open(sys.argv[2]):
        line = line.rstrip("\n")
        if re.match(r"^loop\s+calls\s+total s\s+avg ms\s+GB/s$", line):
            in_table = True
            print(f"{line} {'% triad':>8}")
            continue
        if in_table and line.startswith("---"):
            print(line + "-" * 9)
            continue
        fields = line.split()
        if in_table and len(fields) == 5:
            gbps = float(fields[4])
            print(f"{line} {100.0 * gbps / triad:7.1f}%")
            if fields[0] == "total":
                in_table = False
            continue
        print(line)
    print(f"(triad with {threads} thread(s): {triad:.2f} GB/s, same run)")


if __name__ == "__main__":
    main()
