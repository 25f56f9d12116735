#!/usr/bin/env bash
# run.sh - GPU benchmarks of the CUDA backend (issue #11), on a machine with
# an NVIDIA GPU.
#
# Airfoil on OP2's 720k-cell grid (and, with --big, a 2.8M-cell grid) with
# atomics, atomics with array-of-structures dats (h100-aos.yaml) and
# colouring (colouring also with OPD_CUDA_STAGE=0: its increments
# not staged in shared memory), and atomics and colouring again built with
# -fno-fuse (a kernel a loop, against the fused loops' one kernel a group:
# decision 0400; the two whole-run times side by side at the end of each
# grid), Poisson 4096^2 and heat3d 256^3: each program's
# --profile table (per-loop GB/s from the runtime's byte counts and the
# kernels' time) with each loop's share of the device copy bandwidth
# measured in the same run (copy_bw.cu), and the whole run's time; ADI
# heat 256^3's tridiagonal solves per direction (adi_solves.opd) in GB/s
# and % of the copy. Airfoil's
# rms lines on the 720k grid at 1000 iterations are checked against OP2's
# published history (tests/e2e/airfoil_full.expected).
# The adjoints on the device (issue #51): bench/adjoint's Poisson 4096^2
# (100 sweeps) and heat3d 256^3 (100 steps) built for the GPU print the
# adjoint's time against the primal's (target: at most 4x), the tape and
# snapshots in device memory; once more with --profile (the loop table and
# the device store's bytes), and Poisson with a 1 GiB device budget
# (--device-tape-memory=1024), whose tape spills to pinned host memory.
# Stencil chains (bench/cuda/stencil_chain.opd, decision 0485): a 2-D and
# a 3-D pair of loops as one kernel with a recomputed halo, against
# -fno-fuse, alternating, then both --profile tables.
#
# usage: bench/cuda/run.sh [--target=nvidia-h100] [--niter=1000] [--big]
#                          [--prepare=DIR | --bundle=DIR]
#   (no --prepare/--bundle) build with opdc and nvcc here, then run here;
#     build/ must exist; work files go to build/bench/cuda/.
#   --prepare=DIR  only build the programs, copy_bw and the mesh generator
#     into DIR/bin (needs opdc and nvcc, no GPU);
#   --bundle=DIR   only run DIR's programs (a GPU machine without opdc or
#     nvcc: scripts/device-bundle.sh packs DIR with its shared libraries);
#     work files go to the current directory.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${OPDC_BUILD:-$root/build}
target=nvidia-h100
niter=1000
big=0
prepare=""
bundle=""
for a in "$@"; do
  case $a in
    --target=*) target=${a#--target=} ;;
    --niter=*) niter=${a#--niter=} ;;
    --big) big=1 ;;
    --prepare=*) prepare=${a#--prepare=} ;;
    --bundle=*) bundle=${a#--bundle=} ;;
    *) echo "run.sh: error: unknown argument '$a'" >&2; exit 2 ;;
  esac
done
if [[ -n $prepare && -n $bundle ]]; then
  echo "run.sh: error: --prepare and --bundle exclude each other" >&2
  exit 2
fi

# The programs: bin/copy_bw, bin/stencil_shapes,
# bin/airfoil-{atomics,atomics-aos,colouring}{,-nofuse}, bin/poisson,
# bin/heat3d, bin/poisson-adjoint, bin/heat3d-adjoint, bin/adi_solves,
# bin/stencil_chain{,-nofuse}, bin/opd-airfoil-meshgen.
build_programs() {
  local bin=$1
  mkdir -p "$bin"
  local nvcc=${OPDC_NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
  local arch
  arch=$("$build/bin/opdc" --print-target="$target" |
    sed -n 's/^ *arch: *//p' | head -1)
  "$nvcc" -O3 -arch="${arch:-sm_90}" "$root/bench/cuda/copy_bw.cu" \
    -o "$bin/copy_bw"
  "$nvcc" -O3 -arch="${arch:-sm_90}" "$root/bench/cuda/stencil_shapes.cu" \
    -o "$bin/stencil_shapes"
  local opdc=("$build/bin/opdc" build -B "--target=$target")
  for s in atomics colouring; do
    "${opdc[@]}" --cuda-indirect=$s "$root/examples/airfoil/airfoil.opd" \
      -o "$bin/airfoil-$s"
    "${opdc[@]}" --cuda-indirect=$s -fno-fuse \
      "$root/examples/airfoil/airfoil.opd" -o "$bin/airfoil-$s-nofuse"
  done
  # Array-of-structures dats on the device (nvidia-h100 only).
  if [[ $target == nvidia-h100 ]]; then
    "$build/bin/opdc" build -B "--target=$root/bench/cuda/h100-aos.yaml" \
      "$root/examples/airfoil/airfoil.opd" -o "$bin/airfoil-atomics-aos"
  fi
  "${opdc[@]}" "$root/examples/poisson/poisson.opd" -o "$bin/poisson"
  "${opdc[@]}" "$root/examples/heat3d/heat3d.opd" -o "$bin/heat3d"
  "${opdc[@]}" "$root/bench/adjoint/poisson_bench.opd" -o "$bin/poisson-adjoint"
  "${opdc[@]}" "$root/bench/adjoint/heat3d_bench.opd" -o "$bin/heat3d-adjoint"
  "${opdc[@]}" "$root/bench/cuda/adi_solves.opd" -o "$bin/adi_solves"
  "${opdc[@]}" "$root/bench/cuda/stencil_chain.opd" -o "$bin/stencil_chain"
  "${opdc[@]}" -fno-fuse "$root/bench/cuda/stencil_chain.opd" \
    -o "$bin/stencil_chain-nofuse"
  cp "$build/examples/airfoil/meshgen/opd-airfoil-meshgen" "$bin/"
}

if [[ -n $prepare ]]; then
  build_programs "$prepare/bin"
  exit 0
fi
runenv=()
if [[ -n $bundle ]]; then
  bin=$(cd "$bundle/bin" && pwd)
  work=$PWD
  # scripts/device-bundle.sh puts the programs' libraries beside the bundle.
  if [[ -d $bundle/../lib ]]; then
    lib=$(cd "$bundle/../lib" && pwd)
    runenv=(env "LD_LIBRARY_PATH=$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}")
  fi
else
  work=$build/bench/cuda
  bin=$work/bin
  build_programs "$bin"
fi
mkdir -p "$work"
cd "$work"

# One step: its output to FILE and the report; a failing or overlong step
# (OPD_BENCH_STEP_LIMIT seconds, default 300) is reported and the next runs.
status=0
TIMEFORMAT="wall %R s"
limit=${OPD_BENCH_STEP_LIMIT:-300}
step() {
  local file=$1
  shift
  if { time timeout "$limit" "${runenv[@]}" "$@" >"$file" 2>&1; } \
    2>>"$file"; then
    python3 "$root/bench/cuda/report.py" copy.txt "$file" || status=1
  else
    cat "$file"
    echo "FAIL: $* (exit status above, limit ${limit} s)"
    status=1
  fi
}

echo "== device copy bandwidth"
"${runenv[@]}" "$bin/copy_bw" | tee copy.txt
[[ ${PIPESTATUS[0]} == 0 ]] || exit 1

airfoil() {
  local m=$1 s
  # *-global: the same program with OPD_CUDA_STAGE=0 (every increment
  # straight to device memory, none staged in shared memory); *-nofuse:
  # built with -fno-fuse, each run right after its fused build.
  for s in atomics atomics-nofuse atomics-aos colouring colouring-nofuse \
    colouring-global; do
    local exe=$bin/airfoil-${s%-global} pre=()
    [[ $s == *-global ]] && pre=(env OPD_CUDA_STAGE=0)
    [[ -x $exe ]] || continue
    echo "== airfoil ($m, $s, $niter iterations)"
    local out=airfoil-$s-${m%.h5}.txt
    step "$out" "${pre[@]}" "$exe" --meshfile=$m --niter="$niter" --profile
    # The whole run without --profile (no wait after each loop), and one
    # iteration (the first-use uploads and module loads), so that the
    # steady iterations' time is the difference.
    local n
    for n in "$niter" 1; do
      if timeout "$limit" "${runenv[@]}" "${pre[@]}" "$exe" --meshfile=$m \
        --niter="$n" >"${out%.txt}-noprof$n.txt" 2>&1; then
        echo "airfoil ($m, $s): Max total runtime without --profile," \
          "$n iterations:" \
          "$(grep -A1 'Max total runtime' "${out%.txt}-noprof$n.txt" |
            tail -1) s"
      else
        cat "${out%.txt}-noprof$n.txt"
        status=1
      fi
    done
    if [[ $m == new_grid.h5 && $niter == 1000 ]]; then
      # OP2's rms history: the lines " 100  5.02186e-04 " ... exactly.
      if diff <(grep -E '^ +[0-9]+ +[0-9.]+e[-+][0-9]+ *$' "$out") \
        <(grep -E '^ +[0-9]+ +[0-9.]+e[-+][0-9]+ *$' \
          "$root/tests/e2e/airfoil_full.expected") >/dev/null; then
        echo "airfoil ($s): the 10 rms lines equal OP2's"
      else
        echo "airfoil ($s): FAIL: the rms lines differ from OP2's"
        status=1
      fi
    fi
  done
  # Fused against -fno-fuse: the whole runs' times, side by side.
  local t
  for s in atomics colouring; do
    for t in "$s" "$s-nofuse"; do
      local f=airfoil-$t-${m%.h5}-noprof$niter.txt
      [[ -f $f ]] || continue
      printf '%s' "airfoil ($m, $niter iterations, $t): " \
        "$(grep -A1 'Max total runtime' "$f" | tail -1) s; "
    done
    echo
  done
}

echo "== stencil thread mappings (bench/cuda/stencil_shapes.cu)"
"${runenv[@]}" "$bin/stencil_shapes" | tee shapes.txt
[[ ${PIPESTATUS[0]} == 0 ]] || status=1

[[ -f new_grid.h5 ]] || "${runenv[@]}" "$bin/opd-airfoil-meshgen" --h5 new_grid.h5
airfoil new_grid.h5
echo "== poisson 4096^2, 100 sweeps"
step poisson.txt "$bin/poisson" --nx=4096 --ny=4096 --niter=100 --report=100 \
  --profile
echo "== heat3d 256^3"
step heat3d.txt "$bin/heat3d" --n=256 --tfinal=0.0001 --profile
# The adjoint/primal ratios (no --profile: no wait after each loop), then
# the tables and the device store's bytes (step prints each output).
for a in poisson heat3d; do
  [[ -x $bin/$a-adjoint ]] || continue
  echo "== $a adjoint against the primal (bench/adjoint/${a}_bench.opd)"
  step "$a-adjoint.txt" "$bin/$a-adjoint" --reps=3
  step "$a-adjoint-profile.txt" "$bin/$a-adjoint" --reps=1 --profile
done
if [[ -x $bin/poisson-adjoint ]]; then
  echo "== poisson adjoint, a 1 GiB device budget (spilled to the host)"
  step poisson-adjoint-spill.txt "$bin/poisson-adjoint" --reps=3 \
    --device-tape-memory=1024
  step poisson-adjoint-spill-profile.txt "$bin/poisson-adjoint" --reps=1 \
    --device-tape-memory=1024 --profile
fi
# ADI heat 256^3's tridiagonal solves per direction, on the device
# (lib/cuda/opd_cuda_tridiag.cuh): the runtime's choice, then the hybrid
# forced; GB/s as % of the device copy.
tridiag() {
  local file=$1
  shift
  if timeout "$limit" "${runenv[@]}" "$@" "$bin/adi_solves" --n=256 \
    >"$file" 2>&1; then
    awk -v copy="$(sed -n 's/^device-copy .* GBps=\([0-9.]*\).*/\1/p' \
      copy.txt | head -1)" '
      /^tridiag-solve/ { for (i = 1; i <= NF; ++i)
          if ($i ~ /^GBps=/) g = substr($i, 6)
        printf "%s  %.1f %% copy\n", $0, 100 * g / copy; next }
      { print }' "$file"
  else
    cat "$file"
    echo "FAIL: adi_solves $* (limit ${limit} s)"
    status=1
  fi
}
# Stencil chains as one kernel with a recomputed halo (decision 0485)
# against -fno-fuse (two kernels a step): 3 rounds alternating, then each
# build's --profile table (the fused kernel's time is in the second loop's
# row). The sums must agree.
if [[ -x $bin/stencil_chain ]]; then
  echo "== stencil chains 4096^2 and 320^3 (bench/cuda/stencil_chain.opd)"
  for r in 1 2 3; do
    for t in stencil_chain stencil_chain-nofuse; do
      if timeout "$limit" "${runenv[@]}" "$bin/$t" >"$t-$r.txt" 2>&1; then
        sed "s/^/$t: /" "$t-$r.txt"
      else
        cat "$t-$r.txt"
        echo "FAIL: $t (limit ${limit} s)"
        status=1
      fi
    done
  done
  for t in stencil_chain stencil_chain-nofuse; do
    step "$t-profile.txt" "$bin/$t" --steps=10 --profile
  done
fi
echo "== ADI heat 256^3, tridiagonal solves per direction"
tridiag adi-solves.txt
echo "== the same, OPD_CUDA_TRIDIAG=hybrid"
tridiag adi-solves-hybrid.txt env OPD_CUDA_TRIDIAG=hybrid
if [[ $big == 1 ]]; then
  [[ -f big_grid.h5 ]] ||
    "${runenv[@]}" "$bin/opd-airfoil-meshgen" --I=800 --J=1200 \
      --h5 big_grid.h5
  airfoil big_grid.h5
fi
exit $status
