#!/usr/bin/env python3
# peak_rss.py - Runs a command (one MPI rank of bench/mpi/scale.sh) and
# prints its peak resident memory to stderr as "rank R peak_rss KIB",
# from the child's ru_maxrss (the same measure for any binary).
# SPDX-License-Identifier: Apache-2.0
import os
import resource
import subprocess
import sys

rc = subprocess.call(sys.argv[1:])
rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
rank = os.environ.get("OMPI_COMM_WORLD_RANK", "0")
print(f"rank {rank} peak_rss {rss}", file=sys.stderr)
sys.exit(rc)
