#!/usr/bin/env bash
# run.sh - The compiler's adjoint and tangent against the primal (issue #10).
#
# Builds bench/adjoint/ring_bench.opd and runs it at 1 and 2 threads: the
# wall time of one primal evaluation, one tangent and one adjoint (value
# and the whole gradient), best of --reps, their ratios (targets: adjoint
# <= 3x, tangent <= 2x), the adjoint's tape and snapshot memory, and the
# per-loop profile with each loop's GB/s as a share of the STREAM triad
# measured in this same run (bench/stream).
#
# usage: bench/adjoint/run.sh [--threads=1,2] [--n=2000000] [--sweeps=20]
#        [--snapshots=0] [--reps=3]   (build/ must exist: scripts/build.sh)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${OPDC_BUILD:-$root/build}
threads=1,2
args=()
for a in "$@"; do
  case $a in
    --threads=*) threads=${a#--threads=} ;;
    --n=*|--sweeps=*|--snapshots=*|--reps=*) args+=("$a") ;;
    *) echo "run.sh: error: unknown argument '$a'" >&2; exit 2 ;;
  esac
done
work=$build/bench/adjoint
mkdir -p "$work"
cd "$work"
"$build/bin/opdc" build "$root/bench/adjoint/ring_bench.opd" -o ring_bench
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
