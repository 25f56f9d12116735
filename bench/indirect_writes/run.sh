#!/usr/bin/env bash
# run.sh - The cost of `out` through maps (docs/decisions/0280): a direct
# copy, the copy through an injective map (the injectivity check at the
# first call, then a direct loop) and through a map two edges share per
# node (the ordered colouring: one body call per element, colours in
# order), on n edges (default 8M: about 300 MB, beyond the last-level
# cache), with the STREAM triad measured in the same run.
#
# usage: bench/indirect_writes/run.sh [--threads=1] [--n=8000000]
#        [--reps=10]  (build/ must exist). Work files: build/bench/iw/.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${OPDC_BUILD:-$root/build}
threads=1
n=8000000
reps=10
for a in "$@"; do
  case $a in
    --threads=*) threads=${a#--threads=} ;;
    --n=*) n=${a#--n=} ;;
    --reps=*) reps=${a#--reps=} ;;
    *) echo "run.sh: error: unknown argument '$a'" >&2; exit 2 ;;
  esac
done
work=$build/bench/iw
mkdir -p "$work"
cd "$work"
echo "== machine"
lscpu | grep -E "^(Model name|CPU\(s\)|L3 cache)" || true
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
"$build/bin/opdc" build -B "$root/bench/indirect_writes/iw_bench.opd" -o iw_bench
"$build/bench/opd-stream" --threads="$threads" --mib=256 | tee stream.txt
for scatter in false true; do
./iw_bench --n="$n" --reps="$reps" --threads="$threads" --scatter=$scatter \
  | tee iw.txt
python3 - stream.txt iw.txt "$threads" $scatter <<'PY'
import re, sys
triad = float(re.search(r"GBps=([0-9.]+)", open(sys.argv[1]).read()).group(1))
rows = {}
for line in open(sys.argv[2]):
    f = line.split()
    if f[0] in ("direct", "injective", "ordered"):
        rows[f[0]] = (float(f[1]), int(f[3]), float(f[5]) if len(f) > 5 else None)
maps = "random maps" if sys.argv[4] == "true" else "local maps"
print(f"\n== out through {maps}, --threads={sys.argv[3]}, STREAM triad {triad:.2f} GB/s")
print(f"{'loop':<10} {'s/call':>10} {'GB/s':>8} {'% triad':>8} {'vs direct':>10}")
d = rows["direct"][0]
for k, (s, b, _) in rows.items():
    gbs = b / s / 1e9
    print(f"{k:<10} {s:10.5f} {gbs:8.2f} {100 * gbs / triad:7.1f}% {s / d:9.2f}x")
for k in ("injective", "ordered"):
    s, _, first = rows[k]
    what = "injectivity check" if k == "injective" else "check + ordered plan"
    print(f"{k}: first call {first:.4f} s, of which about {first - s:.4f} s "
          f"({(first - s) / s:.1f} calls) is the {what}")
PY
done
