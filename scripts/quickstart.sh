#!/usr/bin/env bash
# quickstart.sh - Set up, build, and run the flagship example: OP2's Airfoil on
# OP2's own 720000-cell grid (generated bit-exactly if absent), 1000
# iterations, with the rms history and the per-loop profile table.
#
# usage: scripts/quickstart.sh [airfoil options, e.g. --niter=100 --threads=1]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/build.sh"
build="$root/build"
work="$build/quickstart"
mkdir -p "$work"
cd "$work"
if [[ ! -f new_grid.h5 ]]; then
  echo "== generating OP2's NACA0012 grid (721801 nodes, 720000 cells)"
  "$build/examples/airfoil/meshgen/opd-airfoil-meshgen" --dat new_grid.dat --h5 new_grid.h5
  sha256sum new_grid.dat
fi
echo "== opdc build examples/airfoil/airfoil.opd -o airfoil"
"$build/bin/opdc" build "$root/examples/airfoil/airfoil.opd" -o airfoil
echo "== ./airfoil --profile $*"
./airfoil --profile "$@"
