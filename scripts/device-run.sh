#!/usr/bin/env bash
# device-run.sh - The GPU checks of a bundle made by scripts/device-bundle.sh,
# on a machine with an NVIDIA GPU (no opdc, nvcc or Debian libraries needed).
#
#   1. the GPU: nvidia-smi's name, driver, memory and clocks;
#   2. the examples (tests/cuda/run_examples.py --check): colouring twice
#      (bitwise equal), atomics once, both against the CPU builds' outputs
#      to 1e-12 relative; MPI + CUDA at 2 ranks where mpirun runs (the
#      bundle's OpenMPI is copied to its Debian paths where the machine has
#      none, and with --replace-mpi over the machine's own: only on a
#      throwaway machine such as the device tool's);
#   3. the benchmarks (bench/cuda/run.sh --bundle): device copy bandwidth,
#      Airfoil (atomics and colouring; the 720k grid's rms lines against
#      OP2's), Poisson 4096^2, heat3d 256^3, their adjoints against the
#      primal (the tape on the device; Poisson also spilling over a 1 GiB
#      budget), ADI 256^3's solves per direction, with --big a 2.8M-cell
#      grid;
#   4. with a bundle made with peers (device-bundle.sh --op2-airfoil=...):
#      bench/peers/run.py --gpu --bundle, opdc's CUDA builds beside OP2's
#      and OPS's on this GPU, alternating, with their ratios (peers.txt,
#      peers-work.tar.gz; --peers-rounds=N, default 3);
#   5. with --sanitize: compute-sanitizer's memcheck and racecheck over
#      small runs of Airfoil (both strategies), Poisson and heat3d, and of
#      adi_heat3d with each device tridiagonal algorithm forced.
# Each step's output goes to OUTDIR (examples.txt, bench.txt,
# bench-work.tar.gz with each program's output, sanitize.txt: few files, as
# the device tool brings back at most 8); each step has a time limit, and a failing step
# does not stop the next. Exit status: 0 when every step passed.
#
# usage (repository root): scripts/device-run.sh DIR|DIR.tar.xz OUTDIR
#        [--no-bench] [--sanitize] [--replace-mpi]
#        [--examples-limit=S] [--bench-limit=S] [--peers-limit=S]
#        [--peers-rounds=N] [bench/cuda/run.sh options]
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:?usage: device-run.sh DIR|DIR.tar.xz OUTDIR [options]}
if [[ $dir == *.tar.xz ]]; then
  tmp=$(mktemp -d)
  tar -C "$tmp" -xJf "$dir" || exit 1
  dir=$(echo "$tmp"/*)
fi
dir=$(cd "$dir" && pwd)
out=${2:?usage: device-run.sh DIR OUTDIR [options]}
shift 2
mkdir -p "$out"
out=$(cd "$out" && pwd)
bench=1
sanitize=0
replace_mpi=0
elimit=300
blimit=400
plimit=600
prounds=3
opts=()
for a in "$@"; do
  case $a in
    --no-bench) bench=0 ;;
    --sanitize) sanitize=1 ;;
    --replace-mpi) replace_mpi=1 ;;
    --examples-limit=*) elimit=${a#--examples-limit=} ;;
    --bench-limit=*) blimit=${a#--bench-limit=} ;;
    --peers-limit=*) plimit=${a#--peers-limit=} ;;
    --peers-rounds=*) prounds=${a#--peers-rounds=} ;;
    *) opts+=("$a") ;;
  esac
done
# The bundle's libraries for its programs alone (the machine's own tools,
# python3 and compute-sanitizer among them, keep their newer libraries).
runenv=(env "LD_LIBRARY_PATH=$dir/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}")
export PYTHONUNBUFFERED=1
status=0

echo "== GPU"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem \
  --format=csv || status=1
# The bundle's OpenMPI goes to its Debian paths when the machine has no
# mpirun, and with --replace-mpi in place of the machine's own (its programs
# need the launcher of the library they were linked with: a newer mpirun
# loads its plugins against the bundle's older libraries and fails).
if [[ -d $dir/mpi/root ]] &&
  { [[ $replace_mpi == 1 ]] || ! command -v mpirun >/dev/null; }; then
  rm -rf /usr/lib/x86_64-linux-gnu/openmpi /etc/openmpi /usr/share/openmpi
  rm -f /usr/bin/mpirun /usr/bin/mpiexec /usr/bin/orterun /usr/bin/orted
  cp -a "$dir/mpi/root/." / && echo "OpenMPI: the bundle's (Debian's 4.1)"
fi
if command -v mpirun >/dev/null; then
  "${runenv[@]}" mpirun --allow-run-as-root --oversubscribe -np 2 hostname \
    >"$out/mpirun.txt" 2>&1 ||
    { echo "note: mpirun does not start 2 ranks here:"; tail -20 "$out/mpirun.txt"; }
fi

echo "== examples (GPU against CPU)"
timeout "$elimit" python3 "$root/tests/cuda/run_examples.py" \
  --check "$dir/examples" --lib "$dir/lib" 2>&1 | tee "$out/examples.txt"
[[ ${PIPESTATUS[0]} == 0 ]] || status=1

if [[ $bench == 1 ]]; then
  echo "== benchmarks"
  bwork=$(mktemp -d)
  (cd "$bwork" && timeout "$blimit" "$root/bench/cuda/run.sh" \
    --bundle="$dir/bench" "${opts[@]}") 2>&1 | tee "$out/bench.txt"
  [[ ${PIPESTATUS[0]} == 0 ]] || status=1
  tar -C "$bwork" -czf "$out/bench-work.tar.gz" --exclude='*.h5' .
fi

if [[ -f $dir/peers/prepared.json ]]; then
  echo "== peers on this GPU (bench/peers/run.py --gpu)"
  pwork=$(mktemp -d)
  timeout "$plimit" python3 "$root/bench/peers/run.py" --gpu --bundle "$dir/peers" \
    --work "$pwork" --rounds "$prounds" 2>&1 | tee "$out/peers.txt"
  [[ ${PIPESTATUS[0]} == 0 ]] || status=1
  tar -C "$pwork" -czf "$out/peers-work.tar.gz" --exclude='*.h5' .
fi

if [[ $sanitize == 1 ]]; then
  echo "== compute-sanitizer"
  cs=$(command -v compute-sanitizer ||
    echo /usr/local/cuda/bin/compute-sanitizer)
  b=$dir/examples/bin
  for tool in memcheck racecheck; do
    for run in "airfoil-colouring --meshfile=$dir/examples/mesh.h5 --niter=3" \
      "airfoil-atomics --meshfile=$dir/examples/mesh.h5 --niter=3" \
      "poisson-colouring --nx=32 --ny=32 --niter=4 --report=4" \
      "heat3d-colouring --n=12"; do
      read -r -a cmd <<<"$run"
      if timeout 25 "${runenv[@]}" "$cs" --tool "$tool" --error-exitcode 3 "$b/${cmd[0]}" \
        "${cmd[@]:1}" >"$out/sanitize.log" 2>&1; then
        echo "ok: $tool ${cmd[0]}"
      else
        echo "FAIL: $tool $run:"
        tail -40 "$out/sanitize.log"
        status=1
      fi
    done
    # The device tridiagonal solves (shared-memory tiles along 0), each
    # algorithm forced.
    for mode in thomas hybrid; do
      if timeout 25 "${runenv[@]}" env OPD_CUDA_TRIDIAG=$mode "$cs" \
        --tool "$tool" --error-exitcode 3 "$b/adi_heat3d-colouring" --n=12 \
        --nsteps=2 --report=2 >"$out/sanitize.log" 2>&1; then
        echo "ok: $tool adi_heat3d-colouring (OPD_CUDA_TRIDIAG=$mode)"
      else
        echo "FAIL: $tool adi_heat3d-colouring (OPD_CUDA_TRIDIAG=$mode):"
        tail -40 "$out/sanitize.log"
        status=1
      fi
    done
  done 2>&1 | tee "$out/sanitize.txt"
  grep -q '^FAIL' "$out/sanitize.txt" && status=1
fi
exit $status
