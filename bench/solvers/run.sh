#!/usr/bin/env bash
# run.sh - Batched tridiagonal solves: 256^3 and 4096^2, each dimension;
# conjugate gradients (solve cg) per iteration.
#
# Issue 13's figures: opd_solve_tridiagonal (lib/solvers/Tridiagonal.cpp)
# along each dimension of a 256^3 and a 4096^2 f64 block, at 1 and 2
# threads (bench/solvers/tridiag_bench.cpp, best of --reps solves). Prints
# each case's time and GB/s (a, b, c, d read once and d written once: 40
# bytes a point) with its share of the STREAM triad measured in this same
# run (bench/stream, 3 x 256 MiB arrays). Then bench/solvers/cg_bench.opd,
# built by opdc: `solve cg` on the 5-point Laplacian of a --cg-n^2 grid,
# --cg-iters iterations, plain and Jacobi; time per iteration, and GB/s of
# the sum of its loops' least traffic (104 or 120 bytes a point an
# iteration, see cg_bench.opd) against the same triad.
#
# --split measures the solve along dimensions the MPI ranks split instead
# (lib/solvers/TridiagonalSplit.cpp; README "Split along the ranks"): the
# triad, then opd-tridiag-bench --split (one process, the block marked
# split along each solve dimension: the distributed path's passes along
# every dimension, 256^3 along 0 included), then bench/solvers/
# tridiag_split.opd built with `opdc build --mpi` on --ranks (default 2,4;
# 1 thread each; 4 ranks oversubscribe this 2-core machine), each solve's
# GB/s (40 bytes a point) against the triad of as many threads as cores
# the ranks use (min(ranks, cores)). OPDC_RUNTIME_MPI_LINK, if set, picks
# the runtime tridiag_split links (e.g. a build of the previous solver).
#
# usage: bench/solvers/run.sh [--threads=1,2] [--reps=5] [--n3=256]
#        [--n2=4096] [--cg-n=2048] [--cg-iters=100]
#        bench/solvers/run.sh --split [--threads=1] [--ranks=2,4] [--reps=5]
#        [--n3=256] [--n2=4096]
#        (build/ must exist: scripts/build.sh; OPDC_BUILD
#        names another build tree). Work files go to build/bench/solvers/.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${OPDC_BUILD:-$root/build}
threads=1,2
reps=5
n3=256
n2=4096
cgn=2048
cgiters=100
split=false
threadsSet=false
ranks=2,4
for a in "$@"; do
  case $a in
    --split) split=true ;;
    --ranks=*) ranks=${a#--ranks=} ;;
    --threads=*) threads=${a#--threads=}; threadsSet=true ;;
    --reps=*) reps=${a#--reps=} ;;
    --n3=*) n3=${a#--n3=} ;;
    --n2=*) n2=${a#--n2=} ;;
    --cg-n=*) cgn=${a#--cg-n=} ;;
    --cg-iters=*) cgiters=${a#--cg-iters=} ;;
    *) echo "run.sh: error: unknown argument '$a'" >&2; exit 2 ;;
  esac
done

work=$build/bench/solvers
mkdir -p "$work"
cd "$work"
lscpu | grep -E "^(Model name|L2 cache|L3 cache):" || true

if $split; then
  $threadsSet || threads=1
  cores=$(nproc)
  echo "== STREAM triad"
  "$build/bench/opd-stream" --threads=1,2 | tee stream.txt
  echo "== split solves on one process (opd-tridiag-bench --split), best of $reps"
  "$build/bench/opd-tridiag-bench" --split --threads="$threads" \
    --reps="$reps" --n3="$n3" --n2="$n2" | tee split1.txt
  echo "== tridiag_split.opd on ${ranks} ranks of 1 thread, best of $reps"
  "$build/bin/opdc" build --mpi "$root/bench/solvers/tridiag_split.opd" \
    -o tridiag_split
  mpiflags=(--oversubscribe --bind-to none)
  [ "$(id -u)" = 0 ] && mpiflags+=(--allow-run-as-root)
  : >splitmpi.txt
  for np in ${ranks//,/ }; do
    mpirun "${mpiflags[@]}" -np "$np" ./tridiag_split --threads=1 \
      --reps="$reps" --n3="$n3" --n2="$n2" |
      sed "s/^tridiagonal-split /tridiagonal-split ranks=$np /" |
      tee -a splitmpi.txt
  done
  python3 - stream.txt split1.txt splitmpi.txt "$cores" <<'PY'
import re, sys
triad = {}
for line in open(sys.argv[1]):
    m = re.match(r"stream-triad threads=(\d+) .* GBps=([0-9.]+)", line)
    if m:
        triad[int(m.group(1))] = float(m.group(2))
cores = int(sys.argv[4])
# The dimensions MPI_Dims_create splits (largest factor outermost).
def split_dims(np, dims):
    f, left = [], np
    for d in range(dims):
        k = round(left ** (1.0 / (dims - d)))
        while left % k:
            k += 1
        f.append(k)
        left //= k
    f.sort(reverse=True)
    return {dims - 1 - i for i, k in enumerate(f) if k > 1}
print("%-12s %6s %10s %8s %10s %8s %8s" %
      ("grid", "along", "ranks", "split", "time ms", "GB/s", "% triad"))
for line in open(sys.argv[2]):
    m = re.match(r"tridiagonal (\S+) along (\d) split threads=(\d+) "
                 r"best_s=([0-9.]+) GBps=([0-9.]+)", line)
    if m:
        grid, along, t, s, g = m.groups()
        print("%-12s %6s %10s %8s %10.1f %8.2f %7.1f%%" %
              (grid, along, "1 (%s thr)" % t, "marked", 1e3 * float(s),
               float(g), 100 * float(g) / triad[min(int(t), 2)]))
for line in open(sys.argv[3]):
    m = re.match(r"tridiagonal-split ranks=(\d+) (\d+)\^(\d) along (\d) "
                 r"best_s=([0-9.]+) GBps=([0-9.]+)", line)
    if m:
        np, n, dims, along, s, g = m.groups()
        np, dims, along = int(np), int(dims), int(along)
        split = "yes" if along in split_dims(np, dims) else "no"
        t = min(np, cores, 2)
        print("%-12s %6d %10s %8s %10.1f %8.2f %7.1f%%" %
              ("%s^%d" % (n, dims), along,
               "%d%s" % (np, "*" if np > cores else ""), split,
               1e3 * float(s), float(g), 100 * float(g) / triad[t]))
print("(* more ranks than cores: oversubscribed; % triad against the triad "
      "of min(ranks, cores) threads in this run)")
PY
  exit 0
fi

echo "== STREAM triad"
"$build/bench/opd-stream" --threads="$threads" | tee stream.txt

echo "== tridiagonal solves, best of $reps"
"$build/bench/opd-tridiag-bench" --threads="$threads" --reps="$reps" \
  --n3="$n3" --n2="$n2" >tridiag.txt
python3 - stream.txt tridiag.txt <<'PY'
import re, sys
triad = {}
for line in open(sys.argv[1]):
    m = re.match(r"stream-triad threads=(\d+) .* GBps=([0-9.]+)", line)
    if m:
        triad[int(m.group(1))] = float(m.group(2))
print("%-12s %6s %8s %10s %8s %8s" %
      ("grid", "along", "threads", "time ms", "GB/s", "% triad"))
for line in open(sys.argv[2]):
    m = re.match(r"tridiagonal (\S+) along (\d) threads=(\d+) "
                 r"best_s=([0-9.]+) GBps=([0-9.]+)", line)
    if not m:
        continue
    grid, along, t, s, gbps = m.groups()
    t = int(t)
    print("%-12s %6s %8d %10.1f %8.2f %7.1f%%" %
          (grid, along, t, 1e3 * float(s), float(gbps),
           100 * float(gbps) / triad[t]))
PY

echo "== solve cg, $cgiters iterations on ${cgn}^2"
"$build/bin/opdc" build "$root/bench/solvers/cg_bench.opd" -o cg_bench
: >cg.txt
for t in ${threads//,/ }; do
  for j in false true; do
    # tol 0: the solve warns that it did not converge (expected).
    ./cg_bench --threads="$t" --n="$cgn" --iters="$cgiters" --jacobi=$j \
      2>/dev/null | sed "s/^cg /cg threads=$t /" >>cg.txt
  done
done
python3 - stream.txt cg.txt <<'PY'
import re, sys
triad = {}
for line in open(sys.argv[1]):
    m = re.match(r"stream-triad threads=(\d+) .* GBps=([0-9.]+)", line)
    if m:
        triad[int(m.group(1))] = float(m.group(2))
print("%-8s %7s %8s %14s %10s %8s %8s" %
      ("n", "jacobi", "threads", "ms/iteration", "B/point", "GB/s", "% triad"))
for line in open(sys.argv[2]):
    f = dict(kv.split("=") for kv in line.split()[1:] if "=" in kv)
    t, n = int(f["threads"]), int(f["n"])
    print("%-8d %7s %8d %14.3f %10.0f %8.2f %7.1f%%" %
          (n, f["jacobi"], t, float(f["per_iter_ms"]),
           float(f["bytes_per_iter"]) / n / n, float(f["GBps"]),
           100 * float(f["GBps"]) / triad[t]))
PY
