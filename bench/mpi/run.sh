#!/usr/bin/env bash
# run.sh - Distributed-memory benchmark: Airfoil (OP2's 720K-cell grid) and
# Poisson, built with `opdc build --mpi`, on 1 and 2 MPI ranks of one
# thread each.
#
# Prints per run: the wall time of the iterations as the program reports
# it, the loops' total time (max over ranks), the time in halo exchanges
# (max over ranks) and its share, and the messages and megabytes sent, from
# the --profile table (report.py).
#
# usage: bench/mpi/run.sh [--niter=N] [--poisson-n=N] [--poisson-iter=N]
#        [--ranks=1,2]   (build/ must exist: scripts/build.sh). Work files go
#        to build/bench/mpi/.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${OPDC_BUILD:-$root/build}
niter=200
pn=1024
piter=2000
ranks=1,2
for a in "$@"; do
  case $a in
    --niter=*) niter=${a#--niter=} ;;
    --poisson-n=*) pn=${a#--poisson-n=} ;;
    --poisson-iter=*) piter=${a#--poisson-iter=} ;;
    --ranks=*) ranks=${a#--ranks=} ;;
    *) echo "run.sh: error: unknown argument '$a'" >&2; exit 2 ;;
  esac
done
# shellcheck source=bench/mpi/common.sh
source "$root/bench/mpi/common.sh"
echo "== opdc build --mpi airfoil.opd, poisson.opd"
"$build/bin/opdc" build --mpi "$root/examples/airfoil/airfoil.opd" -o airfoil
"$build/bin/opdc" build --mpi "$root/examples/poisson/poisson.opd" -o poisson

IFS=, read -ra counts <<<"$ranks"
for np in "${counts[@]}"; do
  echo "== airfoil, $np rank(s) x 1 thread, $niter iterations"
  mpirun "${mpiflags[@]}" -np "$np" ./airfoil --meshfile="$grid" \
    --niter="$niter" --threads=1 --profile >"airfoil-$np.txt"
  python3 "$root/bench/mpi/report.py" "airfoil-$np.txt"
  echo "== poisson ${pn}x${pn}, $np rank(s) x 1 thread, $piter sweeps"
  mpirun "${mpiflags[@]}" -np "$np" ./poisson --nx="$pn" --ny="$pn" \
    --niter="$piter" --report="$piter" --threads=1 --profile >"poisson-$np.txt"
  python3 "$root/bench/mpi/report.py" "poisson-$np.txt"
done
