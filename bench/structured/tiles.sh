#!/usr/bin/env bash
# tiles.sh - heat3d's 3D cache tiles and streaming stores on this machine
# (issue #14; docs/performance.md "Tiles from the profile's L2, and
# streaming stores on this machine").
#
# Builds examples/heat3d/heat3d.opd against target profiles that extend
# x86_64-avx2 with an L2 of 256, 512 and 1024 KiB (tiles of 4096, 8192 and
# 16384 points a plane for heat3d's 32 bytes a point) and of 1 GiB (whole
# planes: no tiling), then runs each with
# the runtime's last-level cache taken as 32 MiB (OPD_LLC_BYTES, with
# OPD_STREAM_STORES=always: the `step` loop's 250 MiB stream their output
# in every call, untimed) and as 256 MiB (they do not),
# alternating, for --rounds rounds at 1 and 2 threads; prints `step`'s
# seconds for 100 steps and GB/s, with a STREAM triad before and after.
#
# usage: bench/structured/tiles.sh [--n=256] [--rounds=3] [--threads=1,2]
#        (build/ must exist: scripts/build.sh; an x86-64 host with AVX2).
#        Work files go to build/bench/structured/tiles/.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${OPDC_BUILD:-$root/build}
n=256
rounds=3
threads=1,2
for a in "$@"; do
  case $a in
    --n=*) n=${a#--n=} ;;
    --rounds=*) rounds=${a#--rounds=} ;;
    --threads=*) threads=${a#--threads=} ;;
    *) echo "tiles.sh: error: unknown argument '$a'" >&2; exit 2 ;;
  esac
done
work=$build/bench/structured/tiles
mkdir -p "$work"
cd "$work"
sizes=(256 512 1024 1048576)
for kb in "${sizes[@]}"; do
  cat >"l2-$kb.yaml" <<YAML
name: l2-$kb
description: this host's CPU with an L2 of $kb KiB (bench/structured/tiles.sh)
extends: x86_64-avx2
cpu:
  cores: 2
  threads_per_core: 1
  l2_cache_kib: $kb
YAML
  "$build/bin/opdc" build --target="$work/l2-$kb.yaml" \
    "$root/examples/heat3d/heat3d.opd" -o "heat3d-$kb"
done
tfinal=$(python3 -c "h = 1.0 / ($n - 1); print(repr(99.5 * h * h / 8))")
"$build/bench/opd-stream" --threads="$threads" | grep -i triad
IFS=, read -ra counts <<<"$threads"
for ((round = 1; round <= rounds; ++round)); do
  for t in "${counts[@]}"; do
    for llc in 33554432 268435456; do
      for kb in "${sizes[@]}"; do
        OPD_STREAM_STORES=always OPD_LLC_BYTES=$llc "./heat3d-$kb" \
          --n="$n" --tfinal="$tfinal" \
          --report=1000000 --threads="$t" --profile >out.txt
        printf 'round %d, %d thread(s), LLC %3d MiB, L2 %7d KiB: step %s s, %s GB/s\n' \
          "$round" "$t" $((llc >> 20)) "$kb" \
          "$(awk '$1 == "step" && $2 ~ /^[0-9]+$/ && NF == 5 {print $3}' out.txt)" \
          "$(awk '$1 == "step" && $2 ~ /^[0-9]+$/ && NF == 5 {print $5}' out.txt)"
      done
    done
  done
done
"$build/bench/opd-stream" --threads="$threads" | grep -i triad
