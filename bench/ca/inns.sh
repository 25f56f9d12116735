#!/usr/bin/env bash
# inns.sh - What mpirun starts for every rank in bench/ca/run.sh: runs the
# program inside the rank's network namespace (OPD_CA_NS_PREFIX followed by
# the rank, from OMPI_COMM_WORLD_RANK), with the delay shim preloaded when
# OPD_CA_PRELOAD names it (set only for the program, not for `ip`).
# SPDX-License-Identifier: Apache-2.0
set -euo pipefail
ns="${OPD_CA_NS_PREFIX:?}${OMPI_COMM_WORLD_RANK:?}"
if [[ -n ${OPD_CA_PRELOAD:-} ]]; then
  exec ip netns exec "$ns" env LD_PRELOAD="$OPD_CA_PRELOAD" "$@"
fi
exec ip netns exec "$ns" "$@"
