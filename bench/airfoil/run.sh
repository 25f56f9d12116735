#!/usr/bin/env bash
# run.sh - Airfoil benchmark: OP2's 720K-cell grid, 1 and 2 threads.
#
# Prints, for each thread count, the rms history, the wall time of the
# iterations and the per-loop profile with each loop's GB/s as a share of the
# STREAM triad measured in this same run (bench/stream), then each loop's
# bandwidth-bound time (its access descriptors' bytes at that triad) next to
# its measured time and share of the loops' time (bench/report.py).
#
# usage: bench/airfoil/run.sh [--niter=N] [--threads=1,2] [--I=400 --J=600]
#        [--shuffle=SEED] [--renumber=auto|none|rcm]
#        (build/ must exist: scripts/build.sh). Work files go to
#        build/bench/airfoil/. --I/--J: a larger mesh (3I x J cells; I=1200
#        J=1800: 6.5M cells, about 1.1 GB of data, beyond any L3 here);
#        --shuffle: the same mesh numbered at random (an unstructured
#        generator's numbering); --renumber: passed to the program.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${OPDC_BUILD:-$root/build}
niter=1000
threads=1,2
I=400 J=600 shuffle="" renumber=auto
for a in "$@"; do
  case $a in
    --niter=*) niter=${a#--niter=} ;;
    --threads=*) threads=${a#--threads=} ;;
    --I=*) I=${a#--I=} ;;
    --J=*) J=${a#--J=} ;;
    --shuffle=*) shuffle=${a#--shuffle=} ;;
    --renumber=*) renumber=${a#--renumber=} ;;
    *) echo "run.sh: error: unknown argument '$a'" >&2; exit 2 ;;
  esac
done

work=$build/bench/airfoil
mkdir -p "$work"
cd "$work"
mesh=new_grid.h5
[[ $I == 400 && $J == 600 && -z $shuffle ]] || mesh=grid-$I-$J${shuffle:+-s$shuffle}.h5
if [[ ! -f $mesh ]]; then
  echo "== generating the grid (I=$I, J=$J${shuffle:+, shuffled with seed $shuffle})"
  "$build/examples/airfoil/meshgen/opd-airfoil-meshgen" --I="$I" --J="$J" \
    ${shuffle:+--shuffle=$shuffle} --h5 "$mesh"
fi
echo "== opdc build examples/airfoil/airfoil.opd"
"$build/bin/opdc" build "$root/examples/airfoil/airfoil.opd" -o airfoil

echo "== STREAM triad"
"$build/bench/opd-stream" --threads="$threads" | tee stream.txt

IFS=, read -ra counts <<<"$threads"
for t in "${counts[@]}"; do
  echo "== airfoil, $t thread(s), $niter iterations"
  ./airfoil --meshfile="$mesh" --threads="$t" --niter="$niter" \
    --renumber="$renumber" --profile >"airfoil-$t.txt"
  python3 "$root/bench/report.py" stream.txt "airfoil-$t.txt" "$t"
done
