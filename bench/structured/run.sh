#!/usr/bin/env bash
# run.sh - Structured-mesh benchmarks: Poisson 4096^2 and heat3d 256^3.
#
# Issue #4's figures: Poisson (Jacobi, 5-point stencil, double) on a 4096 x
# 4096 grid for 100 sweeps, and heat3d (7-point stencil) on a 256^3 grid for
# 100 steps, each at 1 and 2 threads. Prints the wall time of the iterations
# and the per-loop profile, each loop's GB/s with its share of the STREAM
# triad measured in this same run (bench/stream, 3 x 256 MiB arrays): the
# mean of the triads right before and right after each program's run.
#
# usage: bench/structured/run.sh [--threads=1,2] [--nx=4096] [--n=256]
#        (build/ must exist: scripts/build.sh). Work files go to
#        build/bench/structured/.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${OPDC_BUILD:-$root/build}
threads=1,2
nx=4096
n=256
for a in "$@"; do
  case $a in
    --threads=*) threads=${a#--threads=} ;;
    --nx=*) nx=${a#--nx=} ;;
    --n=*) n=${a#--n=} ;;
    *) echo "run.sh: error: unknown argument '$a'" >&2; exit 2 ;;
  esac
done

work=$build/bench/structured
mkdir -p "$work"
cd "$work"
for ex in poisson heat3d; do
  echo "== opdc build examples/$ex/$ex.opd"
  "$build/bin/opdc" build "$root/examples/$ex/$ex.opd" -o "$ex"
done

# heat3d takes dt = tfinal / ceil(tfinal / (h^2 / 8)): 100 steps exactly.
tfinal=$(python3 -c "h = 1.0 / ($n - 1); print(repr(99.5 * h * h / 8))")
IFS=, read -ra counts <<<"$threads"
for t in "${counts[@]}"; do
  # Each run between two triads of its thread count, judged against their
  # mean (a shared machine's bandwidth drifts within the hour).
  echo "== STREAM triad, $t thread(s)"
  "$build/bench/opd-stream" --threads="$t" | tee "stream-poisson-$t.txt"
  echo "== poisson ${nx}^2, 100 sweeps, $t thread(s)"
  ./poisson --nx="$nx" --ny="$nx" --niter=100 --report=1000000 \
    --threads="$t" --profile >"poisson-$t.txt"
  "$build/bench/opd-stream" --threads="$t" | tee -a "stream-poisson-$t.txt" >"stream-heat3d-$t.txt"
  python3 "$root/bench/report.py" "stream-poisson-$t.txt" "poisson-$t.txt" "$t"
  echo "== heat3d ${n}^3, 100 steps, $t thread(s)"
  ./heat3d --n="$n" --tfinal="$tfinal" --report=1000000 \
    --threads="$t" --profile >"heat3d-$t.txt"
  "$build/bench/opd-stream" --threads="$t" >>"stream-heat3d-$t.txt"
  python3 "$root/bench/report.py" "stream-heat3d-$t.txt" "heat3d-$t.txt" "$t"
done
