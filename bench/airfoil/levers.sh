#!/usr/bin/env bash
# levers.sh - Airfoil built for other vector widths and with hardware
# gathers, on this host (issue #14; docs/performance.md "Levers measured
# on the 32 MiB-L3 EPYC").
#
# Builds examples/airfoil/airfoil.opd against target profiles that extend
# x86_64-avx2 with vector_width_bits 64, 128 and 256, and the 256-bit one
# again with -march=skylake (whose cost model vectorises the indirect reads
# with vgatherdpd, where znver3's uses scalar loads); prints each binary's
# count of vgather instructions; also this host's own CPU (as --target=native
# would: native width) with -fgathers=hardware and -fgathers=scalar (the
# choice -fgathers=auto makes per CPU: codegen/llvm/Target.cpp); then runs
# them alternately for --rounds
# rounds (OP2's 720k mesh, --niter iterations, --threads) and prints
# res_calc's and adt_calc's seconds and GB/s, all loops' seconds and the
# last rms line (the same in every build).
#
# usage: bench/airfoil/levers.sh [--niter=100] [--threads=2] [--rounds=3]
#        (build/ must exist: scripts/build.sh; an x86-64 host with AVX2).
#        Work files go to build/bench/airfoil/levers/.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${OPDC_BUILD:-$root/build}
niter=100
threads=2
rounds=3
for a in "$@"; do
  case $a in
    --niter=*) niter=${a#--niter=} ;;
    --threads=*) threads=${a#--threads=} ;;
    --rounds=*) rounds=${a#--rounds=} ;;
    *) echo "levers.sh: error: unknown argument '$a'" >&2; exit 2 ;;
  esac
done
work=$build/bench/airfoil/levers
mkdir -p "$work"
cd "$work"
mesh=$build/bench/airfoil/new_grid.h5
[[ -f $mesh ]] || "$build/examples/airfoil/meshgen/opd-airfoil-meshgen" \
  --h5 "$mesh" >/dev/null
builds=(w64 w128 w256 gather native-hw native-scalar)
for w in 64 128 256; do
  cat >"w$w.yaml" <<YAML
name: w$w
description: this host with vector width $w (bench/airfoil/levers.sh)
extends: x86_64-avx2
cpu:
  cores: $threads
  threads_per_core: 1
  vector_width_bits: $w
YAML
  "$build/bin/opdc" build --target="$work/w$w.yaml" \
    "$root/examples/airfoil/airfoil.opd" -o "w$w"
done
"$build/bin/opdc" build --target="$work/w256.yaml" -march=skylake \
  "$root/examples/airfoil/airfoil.opd" -o gather
for g in hardware scalar; do
  [[ $g == hardware ]] && b=native-hw || b=native-scalar
  "$build/bin/opdc" build -fgathers=$g "$root/examples/airfoil/airfoil.opd" -o $b
done
for b in "${builds[@]}"; do
  printf '%-7s vgather instructions: %s\n' "$b" \
    "$(objdump -d --no-show-raw-insn "$b" | grep -c vgather || true)"
done
for ((round = 1; round <= rounds; ++round)); do
  for b in "${builds[@]}"; do
    "./$b" --meshfile="$mesh" --threads="$threads" --niter="$niter" \
      --profile >out.txt
    printf 'round %d, %-7s %s all loops %s s, rms %s\n' "$round" "$b" \
      "$(awk '($1 == "res_calc" || $1 == "adt_calc") && NF == 5 {printf "%s %s s %s GB/s, ", $1, $3, $5}' out.txt)" \
      "$(awk '$1 == "total" {print $3}' out.txt)" \
      "$(awk '$1 == "'"$niter"'" {print $2}' out.txt | tail -1)"
  done
done
