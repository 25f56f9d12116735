#!/usr/bin/env bash
# run.sh - The compiler's adjoint and tangent against the primal (issue #10).
#
# Builds bench/adjoint/ring_bench.opd and runs it at 1 and 2 threads: the
# wall time of one primal evaluation, one tangent and one adjoint (value
# and the whole gradient), best of --reps, their ratios (targets: adjoint
# <= 3x, tangent <= 2x), the adjoint's tape and snapshot memory, and the
# per-loop profile with each loop's GB/s as a share of the STREAM triad
# measured in this same run (bench/stream). Best of 5 by default: the
# adjoints' default snapshot budget grows over the first calls (the first
# takes the fewest snapshots, lib/exec/Adjoint.h snapshotBudgetNow), so the
# best is the steady state; the "adjoint first call" line is the first.
#
# With --structured it also runs poisson_bench.opd (4096^2, 100 sweeps, the
# issue's figure) and heat3d_bench.opd (256^3, 100 steps): the transposed
# stencil, under the default memory budget (binomial checkpoints); and
# adi_bench.opd (2048^2, 20 ADI steps): derivatives through tridiagonal
# solves; then Poisson and heat3d again with --field=true (the gradient with
# respect to the field only, whose reverse steps adjoint-linear blocks in
# time).
# With --airfoil it also runs examples/airfoil/airfoil_shape.opd on OP2's
# 720k-cell mesh (generated here), 100 steps, with 10 snapshots and with
# 100 (one a step), and where the memory is there with no count and a
# 12000 MiB budget (every step taped in the forward sweep): the shape
# gradient's adjoint and tangent against the primal. Its "adjoint again"
# line is a second call that reuses the first one's memory (the first pays
# the page faults of the snapshots).
#
# With --no-sum-lanes every program is built with -fno-sum-lanes (float
# sums in element order, their loops scalar; the default splits them into
# 4 partial sums: heat3d's and Poisson's adjoint loops step.b and jacobi.b
# sum dJ/dlam and dJ/dw).
#
# usage: bench/adjoint/run.sh [--threads=1,2] [--n=2000000] [--sweeps=20]
#        [--snapshots=0] [--reps=5] [--structured] [--airfoil] [--no-sum-lanes]
#        (build/ must exist: scripts/build.sh)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${OPDC_BUILD:-$root/build}
threads=1,2
airfoil=0
structured=0
args=()
flags=()
for a in "$@"; do
  case $a in
    --threads=*) threads=${a#--threads=} ;;
    --n=*|--sweeps=*|--snapshots=*|--reps=*) args+=("$a") ;;
    --airfoil) airfoil=1 ;;
    --structured) structured=1 ;;
    --no-sum-lanes) flags+=(-fno-sum-lanes) ;;
    *) echo "run.sh: error: unknown argument '$a'" >&2; exit 2 ;;
  esac
done
work=$build/bench/adjoint
mkdir -p "$work"
cd "$work"
"$build/bin/opdc" build "$root/bench/adjoint/ring_bench.opd" ${flags[@]+"${flags[@]}"} -o ring_bench
echo "== $(lscpu | sed -n 's/^Model name: *//p'), L3 $(lscpu | sed -n 's/^L3 cache: *//p')"
echo "== STREAM triad"
"$build/bench/opd-stream" --threads="$threads" | tee stream.txt
IFS=, read -ra counts <<<"$threads"
for t in "${counts[@]}"; do
  echo "== ring ${args[*]:-(defaults)}, $t thread(s)"
  ./ring_bench "${args[@]}" --threads="$t" --profile >"ring-$t.txt"
  grep -E "^(ring|primal|tangent|adjoint)" "ring-$t.txt"
  python3 "$root/bench/report.py" stream.txt "ring-$t.txt" "$t"
done
if ((structured)); then
  "$build/bin/opdc" build "$root/bench/adjoint/poisson_bench.opd" ${flags[@]+"${flags[@]}"} -o poisson_bench
  "$build/bin/opdc" build "$root/bench/adjoint/heat3d_bench.opd" ${flags[@]+"${flags[@]}"} -o heat3d_bench
  "$build/bin/opdc" build "$root/bench/adjoint/adi_bench.opd" ${flags[@]+"${flags[@]}"} -o adi_bench
  for t in "${counts[@]}"; do
    echo "== poisson 4096^2, 100 sweeps, $t thread(s)"
    ./poisson_bench --nx=4096 --ny=4096 --sweeps=100 --threads="$t" --profile \
      >"poisson-$t.txt"
    grep -E "^(poisson|primal|tangent|adjoint)" "poisson-$t.txt"
    echo "== heat3d 256^3, 100 steps, $t thread(s)"
    ./heat3d_bench --n=256 --steps=100 --threads="$t" --profile >"heat3d-$t.txt"
    grep -E "^(heat3d|primal|tangent|adjoint)" "heat3d-$t.txt"
    # The gradient with respect to the field only: the reverse steps read
    # no state, and adjoint-linear runs them as a plain loop, blocked in
    # time like the primal.
    for b in poisson heat3d; do
      echo "== $b, the gradient with respect to the field only, $t thread(s)"
      if [[ $b == poisson ]]; then a=(--nx=4096 --ny=4096 --sweeps=100); else a=(--n=256 --steps=100); fi
      ./${b}_bench "${a[@]}" --field=true --threads="$t" --profile >"$b-field-$t.txt"
      grep -E "^($b|primal|tangent|adjoint)" "$b-field-$t.txt"
    done
    echo "== adi 2048^2, 20 steps, $t thread(s)"
    ./adi_bench --n=2048 --steps=20 --threads="$t" --profile >"adi-$t.txt"
    grep -E "^(adi|primal|tangent|adjoint)" "adi-$t.txt"
  done
fi
if ((airfoil)); then
  "$build/bin/opdc" build "$root/examples/airfoil/airfoil_shape.opd" ${flags[@]+"${flags[@]}"} -o airfoil_shape
  [[ -f new_grid.h5 ]] || "$build/examples/airfoil/meshgen/opd-airfoil-meshgen" --h5 new_grid.h5 >/dev/null
  # 10 snapshots: binomial checkpoints, each step run about 3 times; 100:
  # a snapshot a step (about 4.9 GiB), no step run twice.
  for snaps in 10 100; do
    for t in "${counts[@]}"; do
      echo "== airfoil_shape 720k cells, 100 steps, $snaps snapshots, $t thread(s)"
      ./airfoil_shape --niter=100 --snapshots=$snaps --timing=true \
        --threads="$t" --profile >"airfoil-$snaps-$t.txt"
      grep -E "^(time|wall|<dL)|ok$|^adjoint:" "airfoil-$snaps-$t.txt"
    done
  done
  # No checkpoint count and a budget that holds the tape of every step
  # (about 9.7 GiB): the forward sweep tapes each step, no step runs
  # twice. Only where the memory is there (14 GiB available): the default
  # budget (a quarter of the memory, grown into over the first calls)
  # reaches it on nodes of 40 GiB and more.
  avail=$(awk '/MemAvailable/ {print int($2 / 1024)}' /proc/meminfo)
  if ((avail >= 14336)); then
    for t in "${counts[@]}"; do
      echo "== airfoil_shape 720k cells, 100 steps, every step taped (OPD_CKPT_MEMORY=12000), $t thread(s)"
      OPD_CKPT_MEMORY=12000 ./airfoil_shape --niter=100 --snapshots=0 \
        --timing=true --threads="$t" --profile >"airfoil-taped-$t.txt"
      grep -E "^(time|wall|<dL)|ok$|^adjoint:" "airfoil-taped-$t.txt"
    done
  else
    echo "== airfoil_shape, every step taped: skipped ($avail MiB available, 14336 needed)"
  fi
fi
