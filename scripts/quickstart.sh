#!/usr/bin/env bash
# quickstart.sh - Set up, build, and show opdc on the flagship example (Airfoil).
# Until the CPU backend lands this checks the program and prints its Program
# IR: every parallel loop with its access descriptors.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/build.sh"
opdc="$root/build/bin/opdc"
example="$root/examples/airfoil/airfoil.opd"
echo "== opdc --check $example"
"$opdc" --check "$example" && echo "ok: no errors"
echo "== opdc --emit=ir $example"
"$opdc" --emit=ir "$example"
