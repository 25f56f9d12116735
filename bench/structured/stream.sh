#!/usr/bin/env bash
# stream.sh - Streaming (non-temporal) stores and padded rows on heat3d
# grids larger than the last-level cache (issue #14).
#
# For each grid size n, `reps` rounds; each round measures the STREAM triad
# (bench/stream, 3 x 256 MiB arrays) and then runs heat3d n^3 three ways,
# one after the other:
#   dense   OPD_PAD_ROWS=0 OPD_STREAM_STORES=0  rows as before issue #14
#   padded  OPD_PAD_ROWS=1 OPD_STREAM_STORES=0  rows padded to whole lines
#   stream  OPD_PAD_ROWS=1 OPD_STREAM_STORES=always  padded, streaming
#                                       stores for loops larger than the LLC
# Per run it prints the `step` loop's wall ms per call from --profile, its
# GB/s (the profile's byte model: u read, u2 written, 16 B a point) and
# that as a share of the round's triad; and an estimate of the CPU time of
# one step: (user + system seconds of a run of `steps` steps - those of a
# 1-step run) / (steps - 1). Compare the wall figures, within a round (runs
# of one round are back to back), on a quiet machine; on a loaded one they
# measure the scheduler, and the CPU estimate is only a hint (the 1-step
# run's initialisation varies by more than a few steps cost:
# docs/performance.md).
#
# usage: bench/structured/stream.sh [--n=400,512] [--steps=10] [--threads=1]
#        [--reps=3]   (build/ must exist: scripts/build.sh). Work files go
#        to build/bench/structured/.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${OPDC_BUILD:-$root/build}
sizes=400,512
steps=10
threads=1
reps=3
for a in "$@"; do
  case $a in
    --n=*) sizes=${a#--n=} ;;
    --steps=*) steps=${a#--steps=} ;;
    --threads=*) threads=${a#--threads=} ;;
    --reps=*) reps=${a#--reps=} ;;
    *) echo "stream.sh: error: unknown argument '$a'" >&2; exit 2 ;;
  esac
done

work=$build/bench/structured
mkdir -p "$work"
cd "$work"
echo "== opdc build examples/heat3d/heat3d.opd"
"$build/bin/opdc" build "$root/examples/heat3d/heat3d.opd" -o heat3d

export OMP_WAIT_POLICY=passive # idle threads sleep: CPU time is work
cpu() { # cpu OUT ENV... -- CMD...: user + system seconds of CMD into OUT
  local out=$1
  shift
  /usr/bin/time -f '%U %S' -o "$out.time" env "$@" >"$out"
  awk '{ print $1 + $2 }' "$out.time"
}
printf '%-5s %-4s %-7s %10s %7s %8s %12s %s\n' n rep run "step ms" "GB/s" \
  "% triad" "CPU ms/step" "(triad GB/s, load)"
IFS=, read -ra ns <<<"$sizes"
for n in "${ns[@]}"; do
  # dt = tfinal / ceil(tfinal / (h^2 / 8)): `steps` steps exactly.
  tf() { python3 -c "h = 1.0 / ($n - 1); print(repr(($1 - 0.5) * h * h / 8))"; }
  tfinal=$(tf "$steps")
  tfinal1=$(tf 1)
  for ((r = 1; r <= reps; ++r)); do
    triad=$("$build/bench/opd-stream" --threads="$threads" |
      sed -n 's/^stream-triad .* GBps=\([0-9.]*\).*/\1/p' | tail -1)
    for run in dense padded stream; do
      case $run in
        dense) env=(OPD_PAD_ROWS=0 OPD_STREAM_STORES=0) ;;
        padded) env=(OPD_PAD_ROWS=1 OPD_STREAM_STORES=0) ;;
        stream) env=(OPD_PAD_ROWS=1 OPD_STREAM_STORES=always) ;;
      esac
      args=(--n="$n" --report=1000000 --threads="$threads" --profile)
      full=$(cpu "stream-$n-$run.txt" "${env[@]}" ./heat3d "${args[@]}" \
        --tfinal="$tfinal")
      one=$(cpu "stream-$n-$run-1.txt" "${env[@]}" ./heat3d "${args[@]}" \
        --tfinal="$tfinal1")
      read -r ms gbs < <(awk '$1 == "step" && NF == 5 && $2 ~ /^[0-9]+$/ { print $4, $5 }' "stream-$n-$run.txt")
      load=$(cut -d' ' -f1 /proc/loadavg)
      printf '%-5s %-4s %-7s %10.1f %7.2f %8s %12.1f (%s, %s)\n' "$n" "$r" \
        "$run" "$ms" "$gbs" \
        "$(python3 -c "print(f'{100 * $gbs / $triad:.0f} %')")" \
        "$(python3 -c "print(1000 * ($full - $one) / ($steps - 1))")" \
        "$triad" "$load"
    done
  done
done
