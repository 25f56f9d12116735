#!/usr/bin/env bash
# run.sh - Loop fusion: Poisson's Jacobi + residual + copy and heat3d's step
# + projection, with and without fusion, next to a STREAM triad.
#
# Builds bench/fusion/poisson_chain.opd and heat3d_chain.opd three times
# (-fno-fuse; -fno-skew: loops fused at the same point only; the default
# pipeline, which also makes skewed sweeps), runs each at each thread count
# with --profile, and prints per chain: time per iteration, bytes moved per
# iteration (the runtime profile's count: every dat once per loop, read
# and/or written), GB/s, % of the STREAM triad measured in this same run,
# and the speedup over the unfused build. Two sizes per program: out of
# cache (memory-bound, the case fusion is for) and in cache (L2/L3).
#
# usage: bench/fusion/run.sh [--threads=1,2] [--nx=8192] [--n=400]
#        [--nx-small=1024] [--n-small=128] [--iters=10]
#        (build/ must exist). Work files go to build/bench/fusion/.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${OPDC_BUILD:-$root/build}
threads=1,2
nx=8192
n=400
nx_small=1024
n_small=128
iters=10
for a in "$@"; do
  case $a in
    --threads=*) threads=${a#--threads=} ;;
    --nx=*) nx=${a#--nx=} ;;
    --n=*) n=${a#--n=} ;;
    --nx-small=*) nx_small=${a#--nx-small=} ;;
    --n-small=*) n_small=${a#--n-small=} ;;
    --iters=*) iters=${a#--iters=} ;;
    *) echo "run.sh: error: unknown argument '$a'" >&2; exit 2 ;;
  esac
done

work=$build/bench/fusion
mkdir -p "$work"
cd "$work"
echo "== machine"
lscpu | grep -E "^(Model name|L2 cache|L3 cache|Thread\(s\) per core|Core\(s\) per socket)" || true
# -fno-swap-copy-back: poisson_chain's copy back stays a copy (the chain
# this benchmark measures; swap-copy-back would swap it, decision 0405).
for p in poisson_chain heat3d_chain; do
  echo "== opdc build bench/fusion/$p.opd (fused, -fno-skew, -fno-fuse)"
  "$build/bin/opdc" build -B -fno-swap-copy-back -Rpass=fuse \
    -Rpass-missed=fuse "$root/bench/fusion/$p.opd" -o "$p-fused" 2>&1 |
    grep remark: || true
  "$build/bin/opdc" build -B -fno-swap-copy-back -fno-skew \
    "$root/bench/fusion/$p.opd" -o "$p-noskew"
  "$build/bin/opdc" build -B -fno-swap-copy-back -fno-fuse \
    "$root/bench/fusion/$p.opd" -o "$p-unfused"
done

echo "== STREAM triad"
"$build/bench/opd-stream" --threads="$threads" --mib=512 | tee stream.txt

IFS=, read -ra counts <<<"$threads"
for t in "${counts[@]}"; do
  for size in big small; do
    if [[ $size == big ]]; then px=$nx; hn=$n; else px=$nx_small; hn=$n_small; fi
    # In cache, more iterations so that the time is not all start-up.
    it=$iters
    [[ $size == small ]] && it=$((iters * 20))
    for v in unfused noskew fused; do
      ./poisson_chain-$v --nx="$px" --ny="$px" --niter="$it" --threads="$t" \
        --profile >"poisson-$size-$t-$v.txt"
      ./heat3d_chain-$v --n="$hn" --nsteps="$it" --threads="$t" \
        --profile >"heat3d-$size-$t-$v.txt"
    done
    python3 "$root/bench/fusion/report.py" stream.txt "$t" "$it" \
      unfused,noskew,fused \
      "poisson ${px}^2" "poisson-$size-$t-unfused.txt" \
      "poisson-$size-$t-noskew.txt" "poisson-$size-$t-fused.txt" \
      "heat3d ${hn}^3" "heat3d-$size-$t-unfused.txt" \
      "heat3d-$size-$t-noskew.txt" "heat3d-$size-$t-fused.txt"
  done
done
