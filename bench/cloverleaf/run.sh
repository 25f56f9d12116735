#!/usr/bin/env bash
# run.sh - CloverLeaf 2D benchmark: clover_bm_short.in (960 x 960 cells,
# 87 steps) at 1 and 2 threads and on 2 MPI ranks of one thread each.
#
# Prints per run the program's field summary check (test problem 2), its
# wall time and the per-loop --profile table with each loop's GB/s as a
# share of the STREAM triad measured in this same run (bench/stream; the
# 2-rank run against the 2-thread triad), then a line per run: the share of
# loop time spent in loops at 80 % of the triad or more (report.py).
#
# Each run is repeated on the deck shrunk to --small-cells x --small-cells
# (--small-steps steps), where every field fits in the last-level cache:
# a loop that is no faster there is bound by its arithmetic, not by memory,
# and report.py says which of the loops below 80 % are which. On several
# ranks the share is of the time outside halo exchanges (the profile's
# "kern GB/s"), with the share including them beside it.
#
# usage: bench/cloverleaf/run.sh [--threads=1,2] [--ranks=2] [--steps=87]
#        [--small-cells=240] [--small-steps=600] [--no-small]
#        (build/ must exist: scripts/build.sh). Work files go to
#        build/bench/cloverleaf/.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${OPDC_BUILD:-$root/build}
threads=1,2
ranks=2
steps=87
small_cells=240
small_steps=600
small=1
for a in "$@"; do
  case $a in
    --threads=*) threads=${a#--threads=} ;;
    --ranks=*) ranks=${a#--ranks=} ;;
    --steps=*) steps=${a#--steps=} ;;
    --small-cells=*) small_cells=${a#--small-cells=} ;;
    --small-steps=*) small_steps=${a#--small-steps=} ;;
    --no-small) small=0 ;;
    *) echo "run.sh: error: unknown argument '$a'" >&2; exit 2 ;;
  esac
done
mpiflags=(--oversubscribe --bind-to none)
if [[ $(id -u) -eq 0 ]]; then mpiflags+=(--allow-run-as-root); fi

ex=$root/examples/cloverleaf
deck=$ex/clover_bm_short.in
work=$build/bench/cloverleaf
mkdir -p "$work"
cd "$work"
echo "== opdc build examples/cloverleaf/cloverleaf.opd (and --mpi)"
"$build/bin/opdc" build "$ex/cloverleaf.opd" -o cloverleaf
"$build/bin/opdc" build --mpi "$ex/cloverleaf.opd" -o cloverleaf-mpi

# The in-cache deck: the benchmark's, with fewer cells (and more steps).
sed -e "s/x_cells=.*/x_cells=$small_cells/" -e "s/y_cells=.*/y_cells=$small_cells/" \
  -e "s/end_time=.*/end_time=1000.0/" -e "s/end_step=.*/end_step=$small_steps/" \
  -e "/test_problem/d" \
  "$deck" >small.in

echo "== STREAM triad"
# The triads of the thread counts and of the rank count (each once).
stream_threads=$(tr , '\n' <<<"$threads,$ranks" | sort -nu | paste -sd, -)
"$build/bench/opd-stream" --threads="$stream_threads" | tee stream.txt

IFS=, read -ra counts <<<"$threads"
for t in "${counts[@]}"; do
  echo "== clover_bm_short.in, $steps steps, $t thread(s)"
  ./cloverleaf --deck="$deck" --end_step="$steps" --threads="$t" --profile \
    >"bm_short-$t.txt"
  incache=()
  if ((small)); then
    ./cloverleaf --deck=small.in --threads="$t" --profile >"small-$t.txt"
    incache=("small-$t.txt")
  fi
  python3 "$root/bench/cloverleaf/report.py" stream.txt "bm_short-$t.txt" "$t" \
    ${incache[@]+"${incache[@]}"}
done
if command -v mpirun >/dev/null; then
  echo "== clover_bm_short.in, $steps steps, $ranks MPI ranks x 1 thread"
  mpirun "${mpiflags[@]}" -np "$ranks" ./cloverleaf-mpi --deck="$deck" \
    --end_step="$steps" --threads=1 --profile >"bm_short-mpi$ranks.txt"
  incache=()
  if ((small)); then
    mpirun "${mpiflags[@]}" -np "$ranks" ./cloverleaf-mpi --deck=small.in \
      --threads=1 --profile >"small-mpi$ranks.txt"
    incache=("small-mpi$ranks.txt")
  fi
  python3 "$root/bench/cloverleaf/report.py" stream.txt \
    "bm_short-mpi$ranks.txt" "$ranks" ${incache[@]+"${incache[@]}"}
else
  echo "== no mpirun: the MPI run is skipped"
fi
