#!/usr/bin/env bash
# check-format.sh - Fails when C/C++ lines changed since the base are not
# formatted as .clang-format says (clang-format 19, the project's LLVM).
#
# usage: scripts/check-format.sh [BASE]
# BASE defaults to the merge base with origin/main or main (a branch), else
# HEAD~1 (CI checks out main itself: its last commit is checked). A clone
# with no earlier commit (shallow, or the first) has nothing to compare
# against: it says so and passes. Only the lines a change touched are
# checked (git clang-format), so older code is not reformatted by the way.
set -euo pipefail
cd "$(dirname "$0")/.."
cf=$(command -v clang-format-19 || true)
gcf=$(command -v git-clang-format-19 || true)
if [[ -z $cf || -z $gcf ]]; then
  echo "check-format: clang-format-19 is not installed (scripts/setup-deps.sh)" >&2
  exit 1
fi
if ! git rev-parse --git-dir >/dev/null 2>&1; then
  echo "check-format: not a git checkout, nothing to compare against"
  exit 0
fi
base=${1:-}
if [[ -z $base ]]; then
  head=$(git rev-parse HEAD)
  for ref in origin/main main; do
    if mb=$(git merge-base HEAD "$ref" 2>/dev/null) && [[ $mb != "$head" ]]; then
      base=$mb
      break
    fi
  done
fi
if [[ -z $base ]]; then
  if ! git rev-parse -q --verify 'HEAD~1^{commit}' >/dev/null; then
    echo "check-format: no commit before HEAD (a shallow or new clone): nothing to check"
    exit 0
  fi
  base=HEAD~1
fi
out=$("$gcf" --binary "$cf" --diff --extensions c,cc,cpp,cu,cuh,h,hpp "$base" -- \
  compiler lib tests bench examples 2>&1 || true)
if grep -q '^@@' <<<"$out"; then
  echo "check-format: lines changed since $(git rev-parse --short "$base") are not formatted;"
  echo "run: git clang-format-19 --binary clang-format-19 $(git rev-parse --short "$base")"
  echo "$out"
  exit 1
fi
echo "check-format: changed lines formatted (since $(git rev-parse --short "$base"))"
