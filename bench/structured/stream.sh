#!/usr/bin/env bash
# stream.sh - Streaming (non-temporal) stores and padded rows on heat3d
# grids larger than the last-level cache (issue #14).
#
# For each grid size n, `reps` rounds; each round measures the STREAM triad
# (bench/stream, 3 x 256 MiB arrays) and then runs heat3d n^3 for `steps`
# steps three ways, one after the other:
#   dense   OPD_PAD_ROWS=0 OPD_STREAM_STORES=0  rows as before issue #14
#   padded  OPD_PAD_ROWS=1 OPD_STREAM_STORES=0  rows padded to whole lines
#   stream  OPD_PAD_ROWS=1 OPD_STREAM_STORES=1  padded, streaming stores for
#                                               loops larger than the LLC
# and prints per run the `step` loop's ms per call, its GB/s (the profile's
# byte model: u read, u2 written, 16 B a point) and that as a share of the
# round's triad. Runs of one round are back to back, so on a shared machine
# compare them within a round (ratios), not across rounds.
#
# usage: bench/structured/stream.sh [--n=400,512] [--steps=10] [--threads=2]
#        [--reps=3]   (build/ must exist: scripts/build.sh). Work files go
#        to build/bench/structured/.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${OPDC_BUILD:-$root/build}
sizes=400,512
steps=10
threads=2
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

printf '%-5s %-4s %-7s %10s %8s %8s %s\n' n rep run "step ms" "GB/s" \
  "% triad" "(triad GB/s, load)"
IFS=, read -ra ns <<<"$sizes"
for n in "${ns[@]}"; do
  # dt = tfinal / ceil(tfinal / (h^2 / 8)): `steps` steps exactly.
  tfinal=$(python3 -c "h = 1.0 / ($n - 1); print(repr(($steps - 0.5) * h * h / 8))")
  for ((r = 1; r <= reps; ++r)); do
    triad=$("$build/bench/opd-stream" --threads="$threads" |
      sed -n 's/^stream-triad .* GBps=\([0-9.]*\).*/\1/p' | tail -1)
    for run in dense padded stream; do
      case $run in
        dense) env=(OPD_PAD_ROWS=0 OPD_STREAM_STORES=0) ;;
        padded) env=(OPD_PAD_ROWS=1 OPD_STREAM_STORES=0) ;;
        stream) env=(OPD_PAD_ROWS=1 OPD_STREAM_STORES=1) ;;
      esac
      env "${env[@]}" ./heat3d --n="$n" --tfinal="$tfinal" --report=1000000 \
        --threads="$threads" --profile >"stream-$n-$run.txt"
      read -r ms gbs < <(awk '$1 == "step" { print $4, $5 }' "stream-$n-$run.txt")
      load=$(cut -d' ' -f1 /proc/loadavg)
      printf '%-5s %-4s %-7s %10s %8s %8s (%s, %s)\n' "$n" "$r" "$run" "$ms" \
        "$gbs" "$(python3 -c "print(f'{100 * $gbs / $triad:.0f} %')")" \
        "$triad" "$load"
    done
  done
done
