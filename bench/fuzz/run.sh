#!/bin/sh
# bench/fuzz/run.sh - A differential-testing campaign (tests/fuzz/README.md):
# random programs from a seed on, each built in a sample of the
# configurations (default plus --sample others; MPI and emulated CUDA for a
# share), for --seconds=N of wall time. Prints each finding as it comes and
# the counts at the end (programs, builds, runs, comparisons, findings);
# findings (the program, what failed, a minimised program) go to
# $WORK/findings.
#   bench/fuzz/run.sh [--seconds=N] [--seed=S] [--sample=K] [--build=DIR]
# SPDX-License-Identifier: Apache-2.0
set -eu
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
seconds=600
seed=100000
sample=5
build="$src/build"
for a in "$@"; do
  case "$a" in
    --seconds=*) seconds=${a#*=} ;;
    --seed=*) seed=${a#*=} ;;
    --sample=*) sample=${a#*=} ;;
    --build=*) build=${a#*=} ;;
    *) echo "usage: $0 [--seconds=N] [--seed=S] [--sample=K] [--build=DIR]" >&2; exit 2 ;;
  esac
done
work=${WORK:-$build/fuzz-campaign}
mkdir -p "$work"
exec nice -n 10 python3 "$src/tests/fuzz/difftest.py" --opdc "$build/bin/opdc" \
  --source-dir "$src" --cxx "${CXX:-c++}" --link-file "$build/lib/opd_rt_link.txt" \
  --work "$work" --findings "$work/findings" --minimise --keep-going \
  --seeds "$seed..$((seed + 1000000))" --seconds "$seconds" --sample "$sample" \
  --mpi-share 0.2 --cuda-share 0.1 --stats "$work/stats.json"
