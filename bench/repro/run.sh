#!/usr/bin/env bash
# run.sh - The cost of -frepro-sum (exact float sums, increments through
# maps in global element order) and of oversubscribed OpenMP threads.
#
# 1. bench/repro/sum_bench.opd (loops doing little but a float sum: the
#    worst case) and Airfoil (examples/airfoil) on a generated mesh, each
#    built plain and with -frepro-sum, run with --profile; per loop: time,
#    GB/s, % of the STREAM triad measured in this same run, and the ratio.
# 2. Airfoil on a small mesh at 4 ranks x 2 threads (more threads than
#    cores on a small machine) with the runtime's passive-wait restart
#    (core/Oversubscribe.cpp) and without it (OPD_OVERSUBSCRIBED=0).
#
# usage: bench/repro/run.sh [--threads=1] [--n=4000000] [--I=300 --J=300]
#        [--niter=100]  (build/ must exist). Work files: build/bench/repro/.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${OPDC_BUILD:-$root/build}
threads=1
n=4000000
I=300
J=300
niter=100
for a in "$@"; do
  case $a in
    --threads=*) threads=${a#--threads=} ;;
    --n=*) n=${a#--n=} ;;
    --I=*) I=${a#--I=} ;;
    --J=*) J=${a#--J=} ;;
    --niter=*) niter=${a#--niter=} ;;
    *) echo "run.sh: error: unknown argument '$a'" >&2; exit 2 ;;
  esac
done
work=$build/bench/repro
mkdir -p "$work"
cd "$work"
echo "== machine"
lscpu | grep -E "^(Model name|CPU\(s\)|Thread\(s\) per core)" || true
opdc=$build/bin/opdc
"$opdc" build -B "$root/bench/repro/sum_bench.opd" -o sum-plain
"$opdc" build -B -frepro-sum "$root/bench/repro/sum_bench.opd" -o sum-repro
"$opdc" build -B "$root/examples/airfoil/airfoil.opd" -o airfoil-plain
"$opdc" build -B -frepro-sum "$root/examples/airfoil/airfoil.opd" -o airfoil-repro
"$build/examples/airfoil/meshgen/opd-airfoil-meshgen" --I="$I" --J="$J" \
  --h5 mesh.h5 | head -1
"$build/bench/opd-stream" --threads="$threads" --mib=512 | tee stream.txt
for v in plain repro; do
  ./sum-$v --n="$n" --threads="$threads" --profile >sum-$v.txt
  ./airfoil-$v --meshfile=mesh.h5 --niter="$niter" --threads="$threads" \
    --profile >airfoil-$v.txt
done
python3 "$root/bench/repro/report.py" stream.txt "$threads" \
  "sum_bench n=$n (20 iterations)" sum-plain.txt sum-repro.txt \
  "airfoil I=$I J=$J, $niter iterations" airfoil-plain.txt airfoil-repro.txt

if command -v mpirun >/dev/null; then
  echo "== oversubscribed: Airfoil I=20 J=30, 50 iterations, mpirun -np 4, --threads=2"
  "$build/examples/airfoil/meshgen/opd-airfoil-meshgen" --I=20 --J=30 \
    --h5 small.h5 >/dev/null
  "$opdc" build -B --mpi "$root/examples/airfoil/airfoil.opd" -o airfoil-mpi
  flags=(--oversubscribe)
  [[ $(id -u) == 0 ]] && flags+=(--allow-run-as-root)
  for mode in restart off one-thread; do
    env=()
    t=2
    [[ $mode == off ]] && env=(OPD_OVERSUBSCRIBED=0)
    [[ $mode == one-thread ]] && t=1
    t0=$(date +%s.%N)
    env "${env[@]}" mpirun "${flags[@]}" -np 4 ./airfoil-mpi \
      --meshfile=small.h5 --niter=50 --threads=$t >/dev/null
    t1=$(date +%s.%N)
    printf "%-40s %8.2f s wall\n" "4 ranks x $t threads, restart: $mode" \
      "$(echo "$t1 - $t0" | bc -l)"
  done
fi
