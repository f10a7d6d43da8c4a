#!/usr/bin/env bash
# Installs what is missing, builds volley in Release and runs the main demo.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
jobs=$(nproc 2>/dev/null || echo 2)
cmake -S . -B build/release -DCMAKE_BUILD_TYPE=Release -DVOLLEY_BUILD_TESTS=OFF >/dev/null
cmake --build build/release -j"$jobs"
if [[ -x build/release/examples/demo ]]; then
  exec build/release/examples/demo "$@"
fi
exec build/release/bench/volley_bench --benchmark_filter='kernel/' "$@"
