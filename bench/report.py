#!/usr/bin/env python3
"""report.py - Annotates an opdc --profile table with % of the STREAM triad.

usage: report.py STREAM_OUTPUT PROGRAM_OUTPUT THREADS
Prints the program's output with a "% triad" column added to the profile
table, using the triad of the same thread count measured in the same run
(the mean, where the file holds several: one before and one after), then
each loop's bandwidth-bound time (its access descriptors' bytes at that
triad) next to its measured time and share.
"""
import sys

from profile_table import annotate, bound_table, triad_values


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    threads = int(sys.argv[3])
    values = triad_values(sys.argv[1], threads)
    triad = sum(values) / len(values)
    annotate(sys.argv[2], triad, "% triad")
    if len(values) > 1:
        each = ", ".join(f"{v:.2f}" for v in values)
        print(f"(triad with {threads} thread(s): {triad:.2f} GB/s, the mean of "
              f"{each} measured around this run)")
    else:
        print(f"(triad with {threads} thread(s): {triad:.2f} GB/s, same run)")
    bound_table(sys.argv[2], triad)


if __name__ == "__main__":
    main()
