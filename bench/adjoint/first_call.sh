#!/usr/bin/env bash
# first_call.sh - Airfoil 720k's shape gradient (100 steps) at the default
# checkpoint budget, first call and second, two builds alternating: the
# figures of issue 52 item 2 (bench/adjoint/README.md, "Fresh memory by its
# pages").
# SPDX-License-Identifier: Apache-2.0
#
# usage: bench/adjoint/first_call.sh BEFORE_OPDC AFTER_OPDC [THREADS...]
#
# Builds examples/airfoil/airfoil_shape.opd with each compiler into
# build/first_call (and OP2's grid there, if absent), then per thread count
# (default 1 2), two rounds (before first, then after first): the STREAM
# triad, each build's run (`--niter=100 --snapshots=0 --timing=true
# --profile`, no OPD_CKPT_MEMORY), the triad again. Prints each run's
# load average, times, `adjoint:` lines, peak RSS and its checks.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
if [[ $# -lt 2 ]]; then
  echo "usage: $0 BEFORE_OPDC AFTER_OPDC [THREADS...]" >&2
  exit 2
fi
before=$1
after=$2
shift 2
threads=("$@")
[[ ${#threads[@]} -gt 0 ]] || threads=(1 2)
unset OPD_CKPT_MEMORY OPD_CKPT_DIR
work="$root/build/first_call"
mkdir -p "$work"
cd "$work"
if [[ ! -f new_grid.h5 ]]; then
  "$root/build/examples/airfoil/meshgen/opd-airfoil-meshgen" --h5 new_grid.h5
fi
"$before" build "$root/examples/airfoil/airfoil_shape.opd" -o shape_before
"$after" build "$root/examples/airfoil/airfoil_shape.opd" -o shape_after
run() { # build threads
  echo "== $1, $2 threads, load $(cut -d' ' -f1-3 /proc/loadavg), $(date +%T)"
  /usr/bin/time -v "./shape_$1" --niter=100 --snapshots=0 --timing=true \
    --threads="$2" --profile >"out_$1_$2.txt" 2>"err_$1_$2.txt"
  grep -E "time:|<dL|adjoint: " "out_$1_$2.txt" || true
  grep "Maximum resident" "err_$1_$2.txt" || true
  echo "checks ok: $(grep -c ' ok$' "out_$1_$2.txt" || true) of 5"
}
for t in "${threads[@]}"; do
  for order in "before after" "after before"; do
    "$root/build/bench/opd-stream" --threads="$t" --reps=5 | grep -i triad
    for b in $order; do run "$b" "$t"; done
    "$root/build/bench/opd-stream" --threads="$t" --reps=5 | grep -i triad
  done
done
