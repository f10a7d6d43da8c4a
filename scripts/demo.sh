#!/usr/bin/env bash
# The first thing to run: installs what is missing (scripts/deps.sh), builds volley in Release,
# renders the procedural world (and the Stanford bunny when its file is found) with batched rays,
# benchmarks volley against Embree and Bullet on the same scenes, then profiles every SIMD backend
# the machine runs side by side (scripts/profile-backends.sh). A few minutes.
#   scripts/demo.sh            everything above
#   scripts/demo.sh --quick    small scenes and ray sets (the backends' figures then mean little)
set -euo pipefail
cd "$(dirname "$0")/.."
quick=()
case "${1:-}" in
  "") ;;
  --quick) quick=(--quick) ;;
  -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
  *) echo "demo.sh: unknown argument '$1' (try --help)" >&2; exit 2 ;;
esac

scripts/deps.sh
jobs=$(nproc 2>/dev/null || echo 2)
cmake -S . -B build/release -DCMAKE_BUILD_TYPE=Release -DVOLLEY_BUILD_TESTS=OFF >/dev/null
cmake --build build/release -j"$jobs"
volley=build/release/tools/volley
if [[ ! -x $volley ]]; then
  echo "demo.sh: the volley tool was not built (see the CMake messages above)" >&2
  exit 1
fi

out=build/demo
mkdir -p "$out"
rm -f "$out/world.png" "$out/bunny.png" "$out/bench.json"
echo
echo "== volley render: the procedural world, primary rays then ambient occlusion"
"$volley" render "${quick[@]}" -o "$out/world.png"
data=${VOLLEY_DATA_DIR:-../shared/data}
if [[ -r $data/bunny00.off ]]; then
  echo
  echo "== volley render: the Stanford bunny"
  VOLLEY_DATA_DIR=$data "$volley" render --scene bunny -o "$out/bunny.png"
else
  echo
  echo "(the bunny is skipped: bunny00.off is not in $data; README.md, 'The bunny', says where to get it)"
fi
echo
echo "== volley bench: batched and single-ray raycasts, Embree and Bullet, broadphases"
VOLLEY_DATA_DIR=$data "$volley" bench "${quick[@]}" --json "$out/bench.json"
echo
echo "== scripts/profile-backends.sh: every SIMD backend this machine runs, side by side"
scripts/profile-backends.sh "${quick[@]}" --out "$out/profile"
echo
echo "The pictures: $(cd "$out" && pwd)/world.png$([[ -r $out/bunny.png ]] && echo " and bunny.png")"
echo "The figures:  $(cd "$out" && pwd)/bench.json"
echo "The backends: $(cd "$out" && pwd)/profile/comparison.md, kernels.png, raycast.png"
echo "Next: build/release/tools/volley --help, README.md"
