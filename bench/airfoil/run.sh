#!/usr/bin/env bash
# run.sh - Airfoil benchmark: OP2's 720K-cell grid, 1 and 2 threads.
#
# Prints, for each thread count, the rms history, the wall time of the
# iterations and the per-loop profile with each loop's GB/s as a share of the
# STREAM triad measured in this same run (bench/stream).
#
# usage: bench/airfoil/run.sh [--niter=N] [--threads=1,2]   (build/ must exist:
#        scripts/build.sh). Work files go to build/bench/airfoil/.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${OPDC_BUILD:-$root/build}
niter=1000
threads=1,2
for a in "$@"; do
  case $a in
    --niter=*) niter=${a#--niter=} ;;
    --threads=*) threads=${a#--threads=} ;;
    *) echo "run.sh: error: unknown argument '$a'" >&2; exit 2 ;;
  esac
done

work=$build/bench/airfoil
mkdir -p "$work"
cd "$work"
if [[ ! -f new_grid.h5 ]]; then
  echo "== generating OP2's grid (I=400, J=600)"
  "$build/examples/airfoil/meshgen/opd-airfoil-meshgen" --h5 new_grid.h5
fi
echo "== opdc build examples/airfoil/airfoil.opd"
"$build/bin/opdc" build "$root/examples/airfoil/airfoil.opd" -o airfoil

echo "== STREAM triad"
"$build/bench/opd-stream" --threads="$threads" | tee stream.txt

IFS=, read -ra counts <<<"$threads"
for t in "${counts[@]}"; do
  echo "== airfoil, $t thread(s), $niter iterations"
  ./airfoil --threads="$t" --niter="$niter" --profile >"airfoil-$t.txt"
  python3 "$root/bench/report.py" stream.txt "airfoil-$t.txt" "$t"
done
