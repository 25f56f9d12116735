#!/usr/bin/env bash
# run.sh - Batched tridiagonal solves: 256^3 and 4096^2, each dimension.
#
# Issue 13's figures: opd_solve_tridiagonal (lib/solvers/Tridiagonal.cpp)
# along each dimension of a 256^3 and a 4096^2 f64 block, at 1 and 2
# threads (bench/solvers/tridiag_bench.cpp, best of --reps solves). Prints
# each case's time and GB/s (a, b, c, d read once and d written once: 40
# bytes a point) with its share of the STREAM triad measured in this same
# run (bench/stream, 3 x 256 MiB arrays).
#
# usage: bench/solvers/run.sh [--threads=1,2] [--reps=5] [--n3=256]
#        [--n2=4096]   (build/ must exist: scripts/build.sh; OPDC_BUILD
#        names another build tree). Work files go to build/bench/solvers/.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${OPDC_BUILD:-$root/build}
threads=1,2
reps=5
n3=256
n2=4096
for a in "$@"; do
  case $a in
    --threads=*) threads=${a#--threads=} ;;
    --reps=*) reps=${a#--reps=} ;;
    --n3=*) n3=${a#--n3=} ;;
    --n2=*) n2=${a#--n2=} ;;
    *) echo "run.sh: error: unknown argument '$a'" >&2; exit 2 ;;
  esac
done

work=$build/bench/solvers
mkdir -p "$work"
cd "$work"
lscpu | grep -E "^(Model name|L2 cache|L3 cache):" || true

echo "== STREAM triad"
"$build/bench/opd-stream" --threads="$threads" | tee stream.txt

echo "== tridiagonal solves, best of $reps"
"$build/bench/opd-tridiag-bench" --threads="$threads" --reps="$reps" \
  --n3="$n3" --n2="$n2" >tridiag.txt
python3 - stream.txt tridiag.txt <<'PY'
import re, sys
triad = {}
for line in open(sys.argv[1]):
    m = re.match(r"stream-triad threads=(\d+) .* GBps=([0-9.]+)", line)
    if m:
        triad[int(m.group(1))] = float(m.group(2))
print("%-12s %6s %8s %10s %8s %8s" %
      ("grid", "along", "threads", "time ms", "GB/s", "% triad"))
for line in open(sys.argv[2]):
    m = re.match(r"tridiagonal (\S+) along (\d) threads=(\d+) "
                 r"best_s=([0-9.]+) GBps=([0-9.]+)", line)
    if not m:
        continue
    grid, along, t, s, gbps = m.groups()
    t = int(t)
    print("%-12s %6s %8d %10.1f %8.2f %7.1f%%" %
          (grid, along, t, 1e3 * float(s), float(gbps),
           100 * float(gbps) / triad[t]))
PY
