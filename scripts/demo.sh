#!/usr/bin/env bash
# The first thing to run. About a minute once the packages are in (two on a 2-core machine with
# the build):
#   1. installs what is missing (scripts/deps.sh) and fetches the meshes (scripts/fetch-data.sh)
#   2. builds the volley tool in Release (the library and the tool only; the log in build/demo/)
#   3. renders the procedural world and the Stanford bunny with batched rays (build/demo/*.png)
#   4. one bench table: batched rays against volley's single-ray path, Embree's loop and Bullet
#   5. this machine's SIMD backend against scalar code: each kernel at widths 1, 4 and 8
# Every backend side by side is its own command: scripts/profile-backends.sh (a few minutes).
#   scripts/demo.sh            everything above
#   scripts/demo.sh --quick    small scenes and ray sets (the figures then mean little)
set -euo pipefail
cd "$(dirname "$0")/.."
quick=()
case "${1:-}" in
  "") ;;
  --quick) quick=(--quick) ;;
  -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
  *) echo "demo.sh: unknown argument '$1' (try --help)" >&2; exit 2 ;;
esac
start=$SECONDS
out=build/demo
mkdir -p "$out"
step() { printf '\n== %s\n' "$*"; }

step "packages and meshes"
scripts/deps.sh
data=""
for d in "${VOLLEY_DATA_DIR:-}" data ../shared/data; do
  if [[ -n $d && -r $d/bunny00.off ]]; then data=$d; break; fi
done
if [[ -z $data ]]; then
  if scripts/fetch-data.sh; then data=data; else echo "(the bunny is skipped: its download failed)"; fi
fi
echo "packages in place; meshes: ${data:-none}"

step "building volley (Release: the library and the tool)"
log=$out/build.log
jobs=$(nproc 2>/dev/null || echo 2)
t0=$SECONDS
if ! cmake -S . -B build/release -DCMAKE_BUILD_TYPE=Release -DVOLLEY_BUILD_TESTS=OFF -DVOLLEY_BUILD_BENCH=OFF \
       -DVOLLEY_BUILD_EXAMPLES=OFF >"$log" 2>&1; then
  tail -n 25 "$log"
  echo "demo.sh: configuring failed (above, the end of $log)" >&2
  exit 1
fi
targets=(volley_tool)
grep -q "volley-peers (not installed)" "$log" && targets+=(volley_peers)
if ! cmake --build build/release -j"$jobs" --target "${targets[@]}" >>"$log" 2>&1; then
  grep -E "error|Error" "$log" | head -n 20
  echo "demo.sh: the build failed (the whole log: $log)" >&2
  exit 1
fi
volley=build/release/tools/volley
peers=$volley
[[ -x build/release/tools/volley-peers ]] && peers=build/release/tools/volley-peers
echo "built in $((SECONDS - t0)) s: $("$volley" --version)"
grep -E "volley tool:" "$log" | sed 's/^-- //'

rm -f "$out/world.png" "$out/bunny.png" "$out/bench.json"
step "volley render: the procedural world, primary rays then ambient occlusion, batches of 65,536"
"$volley" render "${quick[@]}" -o "$out/world.png"
if [[ -n $data ]]; then
  step "volley render: the Stanford bunny"
  VOLLEY_DATA_DIR=$data "$volley" render --scene bunny -o "$out/bunny.png"
fi

step "volley bench: random rays, batched against single rays, Embree's loop and Bullet"
VOLLEY_DATA_DIR=${data:-/nonexistent} "$peers" bench "${quick[@]}" --only rays --rays random --json "$out/bench.json"

step "volley profile: this machine's backend, each kernel at widths 1 (scalar), 4 and 8"
"$volley" profile "${quick[@]}" --json "$out/profile.json" >"$out/profile.txt"
awk 'NR == 1 || /^kernel/ || /^(ray|rays|box)_vs_/ || /^\(cycles/' "$out/profile.txt"

echo
dir=$(cd "$out" && pwd)
echo "Done in $((SECONDS - start)) s."
echo "The pictures: $dir/world.png$([[ -r $out/bunny.png ]] && echo " and bunny.png")"
echo "The figures:  $dir/bench.json, profile.txt (raycast against batch size, inner loops), profile.json"
echo "Next: $volley --help; every backend side by side: scripts/profile-backends.sh; README.md"
