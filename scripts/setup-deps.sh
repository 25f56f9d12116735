#!/usr/bin/env bash
# setup-deps.sh - Install the Debian 12 packages opdc needs to build and test.
# Idempotent: packages already present are skipped; runs apt-get update once
# only when something is missing. Needs root (or sudo).
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config
  flex bison
  llvm-19-dev llvm-19-tools clang-19 lld-19 libzstd-dev zlib1g-dev libedit-dev libxml2-dev libffi-dev libcurl4-openssl-dev
  libyaml-cpp-dev
  libopenmpi-dev openmpi-bin
  libhdf5-dev
  libmetis-dev
  libptscotch-dev
  libgtest-dev libgmock-dev
  libomp-19-dev
  groff-base man-db
  ccache clang-format-19 hdf5-tools
  python3
  hdf5-tools
  python3-vtk9 python3-matplotlib
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if ((${#missing[@]} == 0)); then
  echo "setup-deps: all ${#packages[@]} packages present"
  exit 0
fi

SUDO=""
if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
echo "setup-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "setup-deps: done"
