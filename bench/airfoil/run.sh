#!/usr/bin/env bash
# run.sh - Airfoil benchmark: OP2's 720K-cell grid, 1 and 2 threads.
#
# Prints, for each thread count, the rms history, the wall time of the
# iterations and the per-loop profile with each loop's GB/s as a share of the
# STREAM triad measured in this same run (bench/stream; right before and
# right after each run, the mean of the two), then each loop's
# bandwidth-bound time (its access descriptors' bytes at that triad) next to
# its measured time and share of the loops' time (bench/report.py).
#
# With --plans=colour,super each thread count runs Airfoil once per plan
# (--plan=, lib/exec/Plan.h), --repeat times alternating, and a last table
# gives per loop the plans' times relative to the first plan's, from the
# sums over the repeats (bench/plan_ratio.py): on a shared machine the
# ratio within one run is what holds.
#
# usage: bench/airfoil/run.sh [--niter=N] [--threads=1,2] [--I=400 --J=600]
#        [--shuffle=SEED] [--renumber=auto|none|rcm]
#        [--plans=colour[,super]] [--repeat=1]
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
plans="" repeat=1
for a in "$@"; do
  case $a in
    --niter=*) niter=${a#--niter=} ;;
    --threads=*) threads=${a#--threads=} ;;
    --I=*) I=${a#--I=} ;;
    --J=*) J=${a#--J=} ;;
    --shuffle=*) shuffle=${a#--shuffle=} ;;
    --renumber=*) renumber=${a#--renumber=} ;;
    --plans=*) plans=${a#--plans=} ;;
    --repeat=*) repeat=${a#--repeat=} ;;
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
if [[ -z $plans ]]; then
  for t in "${counts[@]}"; do
    # The triad right before and right after the run: a shared machine's
    # bandwidth drifts by 1.5x within the hour, and the run is judged
    # against the mean of the two.
    "$build/bench/opd-stream" --threads="$t" >"stream-$t.txt"
    echo "== airfoil, $t thread(s), $niter iterations"
    ./airfoil --meshfile="$mesh" --threads="$t" --niter="$niter" \
      --renumber="$renumber" --profile >"airfoil-$t.txt"
    "$build/bench/opd-stream" --threads="$t" >>"stream-$t.txt"
    python3 "$root/bench/report.py" "stream-$t.txt" "airfoil-$t.txt" "$t"
  done
  exit 0
fi
IFS=, read -ra planlist <<<"$plans"
for t in "${counts[@]}"; do
  files=()
  for ((r = 1; r <= repeat; ++r)); do
    for p in "${planlist[@]}"; do
      out=airfoil-$t-$p-$r.txt
      echo "== airfoil, $t thread(s), $niter iterations, --plan=$p (run $r)"
      ./airfoil --meshfile="$mesh" --threads="$t" --niter="$niter" \
        --renumber="$renumber" --plan="$p" --profile >"$out"
      python3 "$root/bench/report.py" stream.txt "$out" "$t"
      files+=("$p=$out")
    done
  done
  echo "== $t thread(s): time per loop relative to --plan=${planlist[0]}"
  python3 "$root/bench/plan_ratio.py" "${files[@]}"
done
