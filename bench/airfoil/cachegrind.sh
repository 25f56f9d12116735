#!/usr/bin/env bash
# cachegrind.sh - Airfoil's memory traffic on a simulated 32 MiB last-level
# cache (valgrind's cachegrind), per loop, against the access descriptors'
# byte model, for each mesh numbering and --renumber choice.
#
# Independent of the machine's own cache and of other users' load: every
# figure is a count of simulated cache-line fills, so it is exact and
# repeatable (docs/performance.md quotes it). Bytes from memory per call =
# (LL read misses + LL write misses) x 64 B / calls; write-backs of dirty
# lines are not simulated (add the written dats' bytes: res for res_calc).
# Built for AVX2 (--target=x86_64-avx2): valgrind does not decode AVX-512.
#
# usage: bench/airfoil/cachegrind.sh [--I=400] [--J=600] [--niter=2]
#        [--ll=33554432] [--orders="plain:none plain:rcm shuffled:none
#        shuffled:rcm"]   (needs valgrind; build/ from scripts/build.sh)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${OPDC_BUILD:-$root/build}
I=400 J=600 niter=2 ll=33554432
orders="plain:none plain:rcm shuffled:none shuffled:rcm"
for a in "$@"; do
  case $a in
    --I=*) I=${a#--I=} ;;
    --J=*) J=${a#--J=} ;;
    --niter=*) niter=${a#--niter=} ;;
    --ll=*) ll=${a#--ll=} ;;
    --orders=*) orders=${a#--orders=} ;;
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
[[ -f shuffled-$I-$J.h5 ]] ||
  "$meshgen" --I="$I" --J="$J" --shuffle=1 --h5 "shuffled-$I-$J.h5" >/dev/null
"$build/bin/opdc" build --target=x86_64-avx2 "$root/examples/airfoil/airfoil.opd" -o airfoil

echo "== cachegrind: LL $ll B, 64 B lines, 16-way; D1 48 KiB; 1 thread, $niter iterations, mesh I=$I J=$J"
printf '%-9s %-5s %-10s %6s %10s %10s %7s\n' mesh order loop calls "model MB" "LL MB" "LL/model"
for o in $orders; do
  mesh=${o%%:*} order=${o#*:}
  tag=$mesh-$order
  valgrind --tool=cachegrind --cache-sim=yes --LL="$ll",16,64 --D1=49152,12,64 \
    --cachegrind-out-file="cg-$tag.out" ./airfoil --meshfile="$mesh-$I-$J.h5" \
    --niter="$niter" --threads=1 --renumber="$order" --profile >"run-$tag.txt" 2>"vg-$tag.txt"
  cg_annotate "cg-$tag.out" >"cg-$tag.txt"
  # The model's bytes per call (GB/s x seconds) from a native run: its
  # GB/s has more significant digits than valgrind's.
  ./airfoil --meshfile="$mesh-$I-$J.h5" --niter="$niter" --threads=1 \
    --renumber="$order" --profile >"native-$tag.txt"
  python3 - "$tag" "native-$tag.txt" "cg-$tag.txt" <<'PY'
import re, sys
tag, run, cg = sys.argv[1:4]
mesh, order = tag.split("-", 1)
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
    print(f"{mesh:<9} {order:<5} {m.group(1):<10} {calls:6d} {model/1e6:10.1f} {mb:10.1f} {mb*1e6/model:7.2f}")
PY
done
