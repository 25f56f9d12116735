#!/usr/bin/env bash
# run.sh - GPU benchmarks of the CUDA backend (issue #11), on a machine with
# an NVIDIA GPU and nvcc.
#
# Airfoil on OP2's 720k-cell grid (and, with --big, a 2.8M-cell grid) with
# atomics and with colouring, Poisson 4096^2 and heat3d 256^3: each program's
# --profile table (per-loop GB/s from the runtime's byte counts and the
# kernels' time) with each loop's share of the device copy bandwidth
# measured in the same run (copy_bw.cu), and the whole run's time.
#
# usage: bench/cuda/run.sh [--target=nvidia-h100] [--niter=1000] [--big]
#        (build/ must exist). Work files go to build/bench/cuda/.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${OPDC_BUILD:-$root/build}
target=nvidia-h100
niter=1000
big=0
for a in "$@"; do
  case $a in
    --target=*) target=${a#--target=} ;;
    --niter=*) niter=${a#--niter=} ;;
    --big) big=1 ;;
    *) echo "run.sh: error: unknown argument '$a'" >&2; exit 2 ;;
  esac
done
nvcc=${OPDC_NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
arch=$("$build/bin/opdc" --print-target="$target" | sed -n 's/^ *arch: *//p' | head -1)
work=$build/bench/cuda
mkdir -p "$work"
cd "$work"

echo "== device copy bandwidth ($arch)"
"$nvcc" -O3 -arch="${arch:-sm_90}" "$root/bench/cuda/copy_bw.cu" -o copy_bw
./copy_bw | tee copy.txt

opdc=("$build/bin/opdc" build "--target=$target")
meshgen=$build/examples/airfoil/meshgen/opd-airfoil-meshgen
[[ -f new_grid.h5 ]] || "$meshgen" --h5 new_grid.h5
meshes=(new_grid.h5)
if [[ $big == 1 ]]; then
  [[ -f big_grid.h5 ]] || "$meshgen" --I=800 --J=1200 --h5 big_grid.h5
  meshes+=(big_grid.h5)
fi
for s in atomics colouring; do
  "${opdc[@]}" --cuda-indirect=$s "$root/examples/airfoil/airfoil.opd" -o airfoil-$s
done
"${opdc[@]}" "$root/examples/poisson/poisson.opd" -o poisson
"${opdc[@]}" "$root/examples/heat3d/heat3d.opd" -o heat3d

for m in "${meshes[@]}"; do
  for s in atomics colouring; do
    echo "== airfoil ($m, $s, $niter iterations)"
    /usr/bin/time -f "wall %e s" ./airfoil-$s --meshfile=$m --niter="$niter" \
      --profile >"airfoil-$s-${m%.h5}.txt" 2>&1
    python3 "$root/bench/cuda/report.py" copy.txt "airfoil-$s-${m%.h5}.txt"
  done
done
echo "== poisson 4096^2, 100 sweeps"
./poisson --nx=4096 --ny=4096 --niter=100 --report=100 --profile >poisson.txt 2>&1
python3 "$root/bench/cuda/report.py" copy.txt poisson.txt
echo "== heat3d 256^3"
./heat3d --n=256 --tfinal=0.0001 --profile >heat3d.txt 2>&1
python3 "$root/bench/cuda/report.py" copy.txt heat3d.txt
