#!/usr/bin/env bash
# device-bundle.sh - Packs the GPU checks of the CUDA backend for a GPU
# machine that has neither opdc nor nvcc (the device tool's machines: a
# bare image with the NVIDIA driver, CUDA and Python, nothing of Debian's).
#
# Here (opdc built, nvcc on the PATH, no GPU needed) it fills DIR with:
#   DIR/examples  tests/cuda/run_examples.py --prepare: the examples' GPU
#                 builds and the CPU builds' outputs they must equal
#   DIR/bench     bench/cuda/run.sh --prepare: Airfoil (fused and
#                 -fno-fuse), Poisson, heat3d,
#                 the Poisson and heat3d adjoint benches, ADI's tridiagonal
#                 solves, copy_bw and the mesh generator
#   DIR/lib       every shared library those programs (and OpenMPI) load,
#                 glibc's left out (the machine's own glibc is newer)
#   DIR/peers     with --op2-airfoil=D, --ops-cloverleaf=D, --ops-laplace2d=D
#                 or --ops-poisson=D (directories of the peers' CUDA
#                 executables, built by their own build systems:
#                 bench/peers/README.md): bench/peers/run.py --gpu --prepare,
#                 opdc's CUDA builds beside copies of the peers' (--big adds
#                 the larger inputs)
#   DIR/mpi/root  OpenMPI's launcher, daemon, plugins, help texts and
#                 configuration at their Debian paths (scripts/device-run.sh
#                 copies them to / when the machine has no mpirun)
#   DIR.tar.xz    all of DIR in one archive (about a third of its size)
# then scripts/device-run.sh runs the checks on the GPU machine, from the
# repository's root:
#   scripts/device-bundle.sh build/device        # here
#   scripts/device-run.sh build/device.tar.xz OUTDIR  # there (device tool:
#                                      # carry build/device.tar.xz, OUTDIR=$OUT)
#
# usage: scripts/device-bundle.sh [--target=nvidia-h100] [--no-mpi] [--big]
#        [--op2-airfoil=D] [--ops-cloverleaf=D] [--ops-laplace2d=D]
#        [--ops-poisson=D] [DIR]
#        (DIR defaults to build/device; build/ must exist)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${OPDC_BUILD:-$root/build}
target=nvidia-h100
mpi=1
dir=""
peers=()
for a in "$@"; do
  case $a in
    --target=*) target=${a#--target=} ;;
    --no-mpi) mpi=0 ;;
    --big) peers+=(--big) ;;
    --op2-airfoil=* | --ops-cloverleaf=* | --ops-laplace2d=* | --ops-poisson=*)
      [[ -d ${a#*=} ]] || {
        echo "device-bundle.sh: error: ${a%%=*} ${a#*=}: no such directory" >&2
        exit 2
      }
      peers+=("${a%%=*}" "$(cd "${a#*=}" && pwd)") ;;
    -*) echo "device-bundle.sh: error: unknown option '$a'" >&2; exit 2 ;;
    *) dir=$a ;;
  esac
done
dir=${dir:-$build/device}
[[ -x $build/bin/opdc ]] || {
  echo "device-bundle.sh: error: $build/bin/opdc not found: build first" \
    "(scripts/build.sh)" >&2
  exit 1
}
command -v nvcc >/dev/null || [[ -n ${OPDC_NVCC:-} ]] || {
  echo "device-bundle.sh: error: nvcc not found (put CUDA's bin on the" \
    "PATH or set OPDC_NVCC)" >&2
  exit 1
}
rm -rf "$dir"
mkdir -p "$dir/lib"
dir=$(cd "$dir" && pwd)
work=$build/device-work
mkdir -p "$work"

python3 "$root/tests/cuda/run_examples.py" --opdc "$build/bin/opdc" \
  --meshgen "$build/examples/airfoil/meshgen/opd-airfoil-meshgen" \
  --examples "$root/examples" --work "$work" --target="$target" \
  --prepare "$dir/examples"
"$root/bench/cuda/run.sh" --target="$target" --prepare="$dir/bench"
if [[ " ${peers[*]} " == *" --o"* ]]; then
  python3 "$root/bench/peers/run.py" --gpu --target="$target" \
    --build "$build" --work "$work/peers" --prepare "$dir/peers" "${peers[@]}"
fi

shopt -s nullglob
elves=("$dir"/examples/bin/* "$dir"/bench/bin/* "$dir"/peers/bin/* "$dir"/peers/peers/*/*)
if [[ $mpi == 1 ]] && command -v mpirun >/dev/null; then
  # OpenMPI 4.1 as Debian installs it: orterun (mpirun) and orted in
  # /usr/bin, the MCA plugins and libraries under the multiarch openmpi/
  # folder, help texts in /usr/share/openmpi, defaults in /etc/openmpi.
  m=$dir/mpi/root
  ompi=/usr/lib/x86_64-linux-gnu/openmpi
  mkdir -p "$m/usr/bin" "$m/usr/lib/x86_64-linux-gnu" "$m/usr/share" "$m/etc"
  cp -L "$(readlink -f "$(command -v mpirun)")" "$m/usr/bin/mpirun"
  cp -L /usr/bin/orted "$m/usr/bin/orted"
  cp -a "$ompi" "$m/usr/lib/x86_64-linux-gnu/"
  rm -rf "$m$ompi/include" "$m$ompi/lib/pkgconfig"
  cp -a /usr/share/openmpi "$m/usr/share/"
  cp -a /etc/openmpi "$m/etc/"
  mapfile -t more < <(find "$m" -type f -name '*.so*' ; echo "$m/usr/bin/mpirun";
    echo "$m/usr/bin/orted")
  elves+=("${more[@]}")
fi

# The shared libraries of every program, but glibc's (and the driver's).
glibc='^(libc|libm|libpthread|libdl|librt|libresolv|libutil|ld-linux-x86-64|libcuda|libnvidia-[a-z]*)\.so'
for f in "${elves[@]}"; do
  [[ $(head -c4 "$f" | tail -c3) == ELF ]] || continue
  ldd "$f" 2>/dev/null | awk '$3 ~ /^\// {print $1, $3}'
done | sort -u | while read -r name path; do
  [[ $name =~ $glibc ]] && continue
  [[ -e $dir/lib/$name ]] || cp -L "$path" "$dir/lib/$name"
done
# Symbols are not needed there (Airfoil's GPU program: 12 MB -> 1.4 MB).
strip "$dir"/examples/bin/* "$dir"/bench/bin/* "$dir"/peers/bin/*
# One xz archive beside DIR: the device tool carries at most 64 MiB.
tar -C "$(dirname "$dir")" -cf - "$(basename "$dir")" | xz -T0 -6 >"$dir.tar.xz"
du -sh "$dir"/* "$dir.tar.xz"
rel=${dir#"$root"/}
echo "device-bundle.sh: $rel and $rel.tar.xz are ready: on the GPU" \
  "machine, from the repository's root: scripts/device-run.sh $rel.tar.xz OUTDIR"
