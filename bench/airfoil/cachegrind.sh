#!/usr/bin/env bash
# cachegrind.sh - Airfoil's memory traffic on a simulated 32 MiB last-level
# cache (valgrind's cachegrind), per loop, against the access descriptors'
# byte model, for each mesh numbering and --renumber choice, each --plan
# (colour, super) and each thread count.
#
# Independent of the machine's own cache and of other users' load: every
# figure is a count of simulated cache-line fills, so it is exact and
# repeatable (docs/performance.md quotes it). Bytes from memory per call =
# (LL read misses + LL write misses) x 64 B / calls; write-backs of dirty
# lines are not simulated (add the written dats' bytes: res for res_calc).
# Built for AVX2 (--target=x86_64-avx2): valgrind does not decode AVX-512.
# Valgrind runs one thread at a time, switching between them often, against
# one simulated cache: with --threads="2" the threads' accesses interleave
# in it as on a shared last-level cache.
#
# usage: bench/airfoil/cachegrind.sh [--I=400] [--J=600] [--niter=2]
#        [--ll=33554432] [--orders="plain:none plain:rcm shuffled:none
#        shuffled:rcm"] [--plans="colour"] [--threads="1"]
#        (needs valgrind; build/ from scripts/build.sh)
# The colour/super comparison of docs/performance.md:
#   bench/airfoil/cachegrind.sh --orders=plain:none --plans="colour super" \
#     --threads="1 2"
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${OPDC_BUILD:-$root/build}
I=400 J=600 niter=2 ll=33554432
orders="plain:none plain:rcm shuffled:none shuffled:rcm"
plans=colour
threadcounts=1
for a in "$@"; do
  case $a in
    --I=*) I=${a#--I=} ;;
    --J=*) J=${a#--J=} ;;
    --niter=*) niter=${a#--niter=} ;;
    --ll=*) ll=${a#--ll=} ;;
    --orders=*) orders=${a#--orders=} ;;
    --plans=*) plans=${a#--plans=} ;;
    --threads=*) threadcounts=${a#--threads=} ;;
    *) echo "cachegrind.sh: error: unknown argument '$a'" >&2; exit 2 ;;
  esac
done
command -v valgrind >/dev/null ||
  { echo "cachegrind.sh: error: valgrind not found (apt-get install valgrind)" >&2; exit 1; }

work=$build/bench/airfoil-cachegrind
mkdir -p "$work"
cd "$work"
meshgen=$build/examples/airfoil/meshgen/opd-airfoil-meshgen
[[ -f plain-$I-$J.h5 ]] || "$meshgen" --I="$I" --J="$J" --h5 "plain-$I-$J.h5" >/dev/null
if [[ $orders == *shuffled* && ! -f shuffled-$I-$J.h5 ]]; then
  "$meshgen" --I="$I" --J="$J" --shuffle=1 --h5 "shuffled-$I-$J.h5" >/dev/null
fi
"$build/bin/opdc" build --target=x86_64-avx2 "$root/examples/airfoil/airfoil.opd" -o airfoil

echo "== cachegrind: LL $ll B, 64 B lines, 16-way; D1 48 KiB; $niter iterations, mesh I=$I J=$J${OPD_SUPERBLOCKS:+, OPD_SUPERBLOCKS=$OPD_SUPERBLOCKS}"
printf '%-9s %-5s %-6s %3s %-10s %6s %10s %10s %7s\n' mesh order plan thr loop calls "model MB" "LL MB" "LL/model"
for o in $orders; do
  mesh=${o%%:*} order=${o#*:}
  # The model's bytes per call (GB/s x seconds) from a native run: its
  # GB/s has more significant digits than valgrind's. The same for every
  # plan and thread count.
  ./airfoil --meshfile="$mesh-$I-$J.h5" --niter="$niter" --threads=1 \
    --renumber="$order" --profile >"native-$mesh-$order.txt"
  for plan in $plans; do
    for t in $threadcounts; do
      tag=$mesh-$order-$plan-$t
      valgrind --tool=cachegrind --cache-sim=yes --LL="$ll",16,64 --D1=49152,12,64 \
        --cachegrind-out-file="cg-$tag.out" ./airfoil --meshfile="$mesh-$I-$J.h5" \
        --niter="$niter" --threads="$t" --renumber="$order" --plan="$plan" \
        --profile >"run-$tag.txt" 2>"vg-$tag.txt"
      cg_annotate "cg-$tag.out" >"cg-$tag.txt"
      python3 - "$tag" "native-$mesh-$order.txt" "cg-$tag.txt" <<'PY'
import re, sys
tag, run, cg = sys.argv[1:4]
mesh, order, plan, threads = tag.split("-")
prof = {}
for line in open(run):
    f = line.split()
    if len(f) == 5 and f[0] not in ("loop", "total") and f[1].isdigit():
        calls, secs, gbs = int(f[1]), float(f[2]), float(f[4])
        prof[f[0]] = (calls, gbs * 1e9 * secs / calls)
for line in open(cg):
    m = re.search(r"opd_body_(\w+)\.\d+\s*$", line)
    if not m or m.group(1) not in prof:
        continue
    nums = [int(x.replace(",", "")) for x in re.sub(r"\([^)]*\)", "", line).split()[:9]
            if re.fullmatch(r"[\d,]+", x)]
    if len(nums) < 9:
        continue
    dlmr, dlmw = nums[5], nums[8]
    calls, model = prof[m.group(1)]
    mb = (dlmr + dlmw) * 64 / calls / 1e6
    print(f"{mesh:<9} {order:<5} {plan:<6} {threads:>3} {m.group(1):<10} {calls:6d} "
          f"{model/1e6:10.1f} {mb:10.1f} {mb*1e6/model:7.2f}")
PY
      sed -n "s/^plan: /  ($plan, $t thread(s)) /p" "run-$tag.txt"
    done
  done
done
