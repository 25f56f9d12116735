#!/usr/bin/env bash
# streams.sh - Streaming stores on loops of several streams (issue #14;
# docs/performance.md "Streaming chosen by timing").
#
# Builds bench/structured/two_stencils.opd (two 7-point inputs, two
# outputs, n^3 dats) and examples/heat3d/heat3d.opd (one input, one
# output), then runs each, alternating, for --rounds rounds with
# OPD_STREAM_STORES=0 (plain stores), =always (streaming in every call) and
# unset (the runtime's choice by timing); prints the loop's ms a call from
# --profile and, for the timed runs, its plan line (the choice and the best
# time of each variant), with a STREAM triad before and after.
#
# usage: bench/structured/streams.sh [--n=256] [--rounds=2] [--threads=1]
#        (build/ must exist: scripts/build.sh). Work files go to
#        build/bench/structured/streams/.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${OPDC_BUILD:-$root/build}
n=256
rounds=2
threads=1
for a in "$@"; do
  case $a in
    --n=*) n=${a#--n=} ;;
    --rounds=*) rounds=${a#--rounds=} ;;
    --threads=*) threads=${a#--threads=} ;;
    *) echo "streams.sh: error: unknown argument '$a'" >&2; exit 2 ;;
  esac
done
work=$build/bench/structured/streams
mkdir -p "$work"
cd "$work"
"$build/bin/opdc" build "$root/bench/structured/two_stencils.opd" -o two
"$build/bin/opdc" build "$root/examples/heat3d/heat3d.opd" -o heat3d
tfinal=$(python3 -c "h = 1.0 / ($n - 1); print(repr(19.5 * h * h / 8))")
"$build/bench/opd-stream" --threads="$threads" | grep -i triad
for ((round = 1; round <= rounds; ++round)); do
  for mode in 0 always timed; do
    env=(OPD_STREAM_STORES="$mode")
    [[ $mode == timed ]] && env=(OPD_STREAM_STORES=)
    env "${env[@]}" ./two --n="$n" --steps=20 --threads="$threads" \
      --profile >two.txt
    env "${env[@]}" ./heat3d --n="$n" --tfinal="$tfinal" --report=1000000 \
      --threads="$threads" --profile >heat3d.txt
    for f in two:step2 heat3d:step; do
      out=${f%%:*}.txt loop=${f#*:}
      printf 'round %d, OPD_STREAM_STORES=%-6s %-6s %s ms a call\n' \
        "$round" "$mode" "$loop" \
        "$(awk -v l="$loop" '$1 == l && $2 ~ /^[0-9]+$/ && NF == 5 {print $4}' "$out")"
      [[ $mode == timed ]] && grep "^plan: $loop: " "$out" || true
    done
  done
done
"$build/bench/opd-stream" --threads="$threads" | grep -i triad
