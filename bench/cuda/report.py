#!/usr/bin/env python3
"""report.py - An opdc --profile table of a GPU run, with % of device copy.

usage: report.py COPY_OUTPUT PROGRAM_OUTPUT
Prints the program's output with a "% copy" column added to the profile
table: each loop's GB/s (the runtime's byte count over the loop's kernel
time) against the copy kernel's bandwidth measured in the same run
(copy_bw.cu).
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from profile_table import annotate  # noqa: E402 (bench/profile_table.py)


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
    annotate(sys.argv[2], copy, "% copy")
    print(f"(device copy: {copy:.2f} GB/s, same run)")


if __name__ == "__main__":
    main()
