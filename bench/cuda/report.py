#!/usr/bin/env python3
"""report.py - An opdc --profile table of a GPU run, with % of device copy.

usage: report.py COPY_OUTPUT PROGRAM_OUTPUT
Prints the program's output with a "% copy" column added to the profile
table: each loop's GB/s (the runtime's byte count over the loop's kernel
time) against the copy kernel's bandwidth measured in the same run
(copy_bw.cu).
"""
import re
import sys


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    copy = None
    for line in open(sys.argv[1]):
        m = re.match(r"device-copy .* GBps=([0-9.]+)", line)
        if m:
            copy = float(m.group(1))
    if copy is None:
        sys.exit(f"report.py: error: no device-copy line in {sys.argv[1]}")
    in_table = False
    for line in open(sys.argv[2]):
        line = line.rstrip("\n")
        if re.match(r"^loop\s+calls\s+total s\s+avg ms\s+GB/s$", line):
            in_table = True
            print(f"{line} {'% copy':>8}")
            continue
        if in_table and line.startswith("---"):
            print(line + "-" * 9)
            continue
        fields = line.split()
        if in_table and len(fields) == 5:
            print(f"{line} {100.0 * float(fields[4]) / copy:7.1f}%")
            if fields[0] == "total":
                in_table = False
            continue
        print(line)
    print(f"(device copy: {copy:.2f} GB/s, same run)")


if __name__ == "__main__":
    main()
