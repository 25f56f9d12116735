# common.sh - What bench/mpi/run.sh and scale.sh share (sourced, not run):
# mpirun's flags, the work folder build/bench/mpi/ (made the current
# folder) and OP2's Airfoil grid in build/bench/airfoil/new_grid.h5
# (generated once). Expects $build; sets mpiflags, work and grid.
mpiflags=(--oversubscribe --bind-to none)
if [[ $(id -u) -eq 0 ]]; then mpiflags+=(--allow-run-as-root); fi

work=$build/bench/mpi
mkdir -p "$work"
cd "$work"
grid=$build/bench/airfoil/new_grid.h5
if [[ ! -f $grid ]]; then
  mkdir -p "$(dirname "$grid")"
  echo "== generating OP2's grid (I=400, J=600)"
  "$build/examples/airfoil/meshgen/opd-airfoil-meshgen" --h5 "$grid"
fi
