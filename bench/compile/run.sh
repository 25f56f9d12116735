#!/bin/sh
# run.sh - opdc's compile time per example (see README.md).
#   bench/compile/run.sh [--reps=N] [--configs=cpu,mpi,cuda] [--passes]
#                        [FILE.opd...]
# Run from the repository root; OPDC names another compiler
# (default build/bin/opdc).
# SPDX-License-Identifier: Apache-2.0
set -eu
here=$(dirname "$0")
exec python3 "$here/compile_bench.py" --opdc="${OPDC:-build/bin/opdc}" "$@"
