#!/usr/bin/env bash
# scale.sh - Airfoil on OP2's 720K-cell grid at 1, 2 and 4 MPI ranks of one
# thread: the mesh input and partition (issue 16), against a baseline opdc.
#
# Per run (scale.py): the process's wall time, the mesh read time and the
# partition time (from --profile; the baseline reports only its partition),
# the peak resident memory of each rank (measured outside the program, the
# same way for both binaries: every rank runs under peak_rss.py, which
# reports its child's ru_maxrss), the loops' time and the exchanges' share.
#
# usage: bench/mpi/scale.sh [--niter=N] [--ranks=1,2,4]
#        [--baseline=/work/main/build/bin/opdc] [--partition=ptscotch]
#        (build/ must exist: scripts/build.sh). Work files: build/bench/mpi/.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${OPDC_BUILD:-$root/build}
niter=20
ranks=1,2,4
baseline=""
partition=ptscotch
for a in "$@"; do
  case $a in
    --niter=*) niter=${a#--niter=} ;;
    --ranks=*) ranks=${a#--ranks=} ;;
    --baseline=*) baseline=${a#--baseline=} ;;
    --partition=*) partition=${a#--partition=} ;;
    *) echo "scale.sh: error: unknown argument '$a'" >&2; exit 2 ;;
  esac
done
# shellcheck source=bench/mpi/common.sh
source "$root/bench/mpi/common.sh"
echo "== opdc build --mpi airfoil.opd"
"$build/bin/opdc" build --mpi "$root/examples/airfoil/airfoil.opd" -o airfoil
builds=(airfoil)
if [[ -n $baseline ]]; then
  echo "== baseline: $baseline build --mpi airfoil.opd"
  "$baseline" build --mpi "$root/examples/airfoil/airfoil.opd" -o airfoil-base
  builds+=(airfoil-base)
fi
IFS=, read -ra counts <<<"$ranks"
for prog in "${builds[@]}"; do
  args=(--meshfile="$grid" --niter="$niter" --threads=1 --profile)
  [[ $prog == airfoil ]] && args+=(--partition="$partition")
  for np in "${counts[@]}"; do
    echo "== $prog, $np rank(s) x 1 thread, $niter iterations"
    start=$(date +%s.%N)
    mpirun "${mpiflags[@]}" -np "$np" python3 "$root/bench/mpi/peak_rss.py" \
      "./$prog" "${args[@]}" >"$prog-$np.txt" 2>"$prog-$np.rss"
    end=$(date +%s.%N)
    python3 "$root/bench/mpi/scale.py" "$prog-$np.txt" "$prog-$np.rss" \
      "$(echo "$end - $start" | bc)"
  done
done
