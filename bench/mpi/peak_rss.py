#!/usr/bin/env python3
# peak_rss.py - Runs a command (one MPI rank of bench/mpi/scale.sh) and
# prints its peak resident memory and CPU time to stderr as "rank R
# peak_rss KIB cpu S", from the child's rusage (the same for any binary).
# SPDX-License-Identifier: Apache-2.0
import os
import resource
import subprocess
import sys

rc = subprocess.call(sys.argv[1:])
u = resource.getrusage(resource.RUSAGE_CHILDREN)
rank = os.environ.get("OMPI_COMM_WORLD_RANK", "0")
print(f"rank {rank} peak_rss {u.ru_maxrss} cpu {u.ru_utime + u.ru_stime:.2f}",
      file=sys.stderr)
sys.exit(rc)
