#!/usr/bin/env bash
# Checks the source tree's layering (src/README.md): a file under src/ includes only files of its own
# folder and of the folders below it in this order, never one above it or beside it.
#   compiler.h < simd < core < {bvh/tree < bvh/engine < bvh/{rays,overlaps,sweeps,closest}}
#                             < {box_prune < broadphase < broadphase/<kind>}
# The static and multi-SAP kinds are built on the plain SAP kind's cells: they may include
# broadphase/sap. Prints each violation; exits 1 if there is one.
set -uo pipefail
cd "$(dirname "$0")/../src"

# The folder a path under src/ belongs to (a kind folder, a bvh part, or the top folder).
folder() {
  case "$1" in
    compiler.h) echo compiler ;;
    bvh/*/*) echo "${1%/*}" ;;
    broadphase/*/*) echo "${1%/*}" ;;
    */*) echo "${1%%/*}" ;;
    *) echo "$1" ;;
  esac
}

# What a folder may include besides itself.
allowed() {
  case "$1" in
    compiler) echo "" ;;
    simd) echo "compiler" ;;
    core) echo "compiler simd" ;;
    bvh/tree) echo "compiler simd core" ;;
    bvh/engine) echo "compiler simd core bvh/tree" ;;
    bvh/rays | bvh/overlaps | bvh/sweeps | bvh/closest) echo "compiler simd core bvh/tree bvh/engine" ;;
    box_prune) echo "compiler simd core" ;;
    broadphase) echo "compiler simd core box_prune" ;;
    broadphase/static_sap | broadphase/multi_sap) echo "compiler simd core box_prune broadphase broadphase/sap" ;;
    broadphase/*) echo "compiler simd core box_prune broadphase" ;;
    *) echo "?" ;;
  esac
}

bad=0
while IFS= read -r file; do
  from=$(folder "$file")
  ok=" $(allowed "$from") "
  if [[ "$ok" == " ? " ]]; then
    echo "check-layers: $file lies in a folder the layering does not know ($from)"
    bad=1
    continue
  fi
  while IFS= read -r inc; do
    to=$(folder "$inc")
    [[ "$to" == "$from" || "$ok" == *" $to "* ]] && continue
    echo "check-layers: src/$file ($from) includes $inc ($to)"
    bad=1
  done < <(sed -n 's/^#include "\([^"]*\)".*/\1/p' "$file")
done < <(find . -name '*.[ch]' | sed 's|^\./||' | sort)
if ((bad)); then exit 1; fi
echo "check-layers: every include of src/ goes down or stays in its folder"
