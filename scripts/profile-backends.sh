#!/usr/bin/env bash
# Builds the volley tool for every SIMD backend this machine runs (avx2, sse41, sse2, portable on
# x86; neon and portable on ARM; neon under qemu-aarch64 on x86 when the cross compiler and qemu
# are installed, its timings marked emulated), runs `volley profile --json` on each, and writes
# into the output folder:
#   profile-BACKEND.json   what each run measured
#   comparison.md          one Markdown comparison table
#   kernels.png            cycles (or ns) per test of each kernel and width, across backends
#   raycast.png            batched raycast throughput against batch size, beside the single-ray
#                          path and Embree's loop
# Usage: scripts/profile-backends.sh [--quick] [--out DIR] [--backends "avx2 sse41 ..."]
#   --quick   small sizes (CI: checks the pipeline, the figures mean little)
set -euo pipefail
cd "$(dirname "$0")/.."

quick=()
out=build/profile
only=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --quick) quick=(--quick); shift ;;
    --out) out=${2:?--out wants a folder}; shift 2 ;;
    --backends) only=${2:?--backends wants a list}; shift 2 ;;
    -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    *) echo "profile-backends.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
command -v gnuplot >/dev/null || { echo "profile-backends.sh: gnuplot not found (scripts/deps.sh installs gnuplot-nox)" >&2; exit 1; }
mkdir -p "$out"
rm -f "$out"/profile-*.json

# What this machine runs natively, best first.
backends=()
emulated=()
case "$(uname -m)" in
  x86_64|i?86)
    flags=$(grep -m1 '^flags' /proc/cpuinfo || true)
    [[ $flags == *" avx2"* ]] && backends+=(avx2)
    [[ $flags == *" sse4_1"* ]] && backends+=(sse41)
    backends+=(sse2 portable)
    if command -v aarch64-linux-gnu-gcc >/dev/null && command -v qemu-aarch64 >/dev/null; then
      emulated+=(neon)
    else
      echo "neon: skipped (needs gcc-aarch64-linux-gnu and qemu-user to run under emulation)"
    fi
    ;;
  aarch64|arm64) backends+=(neon portable) ;;
  *) backends+=(portable) ;;
esac
if [[ -n $only ]]; then
  keep=() keep_emulated=()
  for b in "${backends[@]}"; do [[ " $only " == *" $b "* ]] && keep+=("$b"); done
  for b in "${emulated[@]}"; do [[ " $only " == *" $b "* ]] && keep_emulated+=("$b"); done
  backends=("${keep[@]}") emulated=("${keep_emulated[@]}")
fi

jobs=2
build_one() { # build_one BACKEND DIR CMAKE_ARGS...
  local backend=$1 dir=$2
  shift 2
  echo "backend $backend: building in $dir"
  cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=Release -DVOLLEY_SIMD="$backend" -DVOLLEY_BUILD_TESTS=OFF \
    -DVOLLEY_BUILD_BENCH=OFF -DVOLLEY_BUILD_EXAMPLES=OFF "$@" >"$dir.log" 2>&1 &&
    cmake --build "$dir" --target volley_tool -j"$jobs" >>"$dir.log" 2>&1 &&
    { [[ ! -d $dir/tools/CMakeFiles/volley_peers.dir ]] || cmake --build "$dir" --target volley_peers -j"$jobs" >>"$dir.log" 2>&1; }
}
# the tool of a build: volley-peers (with Embree's loop beside volley's) when it was built
tool_of() { if [[ -x $1/tools/volley-peers ]]; then echo "$1/tools/volley-peers"; else echo "$1/tools/volley"; fi; }

ran=()
for b in "${backends[@]}"; do
  dir=build/backends/$b
  mkdir -p build/backends
  if ! build_one "$b" "$dir"; then
    tail -n 20 "$dir.log"
    echo "backend $b: build FAILED" >&2
    exit 1
  fi
  if [[ ! -x $dir/tools/volley ]]; then
    echo "backend $b: the volley tool was not built (see $dir.log)" >&2
    exit 1
  fi
  "$(tool_of "$dir")" profile "${quick[@]}" --json "$out/profile-$b.json" >"$out/profile-$b.txt"
  echo "backend $b: profiled ($out/profile-$b.json)"
  ran+=("$b")
done
for b in "${emulated[@]}"; do
  dir=build/backends/$b-qemu
  mkdir -p build/backends
  if ! build_one "$b" "$dir" -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake -DVOLLEY_TOOL_PROFILE_ONLY=ON; then
    tail -n 20 "$dir.log"
    echo "backend $b (emulated): build FAILED" >&2
    exit 1
  fi
  # emulation is slow: always the small sizes
  qemu-aarch64 -L /usr/aarch64-linux-gnu "$dir/tools/volley" profile --quick --json "$out/profile-$b.json" >"$out/profile-$b.txt"
  echo "backend $b: profiled under qemu-aarch64, timings emulated ($out/profile-$b.json)"
  ran+=("$b")
done
[[ ${#ran[@]} -gt 0 ]] || { echo "profile-backends.sh: no backend to profile" >&2; exit 1; }

is_emulated() { [[ " ${emulated[*]} " == *" $1 "* ]]; }

# The JSON of `volley profile` holds one record per line; field F of a record line:
field() { sed -nE "s/.*\"$1\": (\"([^\"]*)\"|([^,}]*)).*/\\2\\3/p"; }

# ---- the Markdown table ----
md=$out/comparison.md
{
  echo "# volley: SIMD backends compared"
  echo
  first=$out/profile-${ran[0]}.json
  echo "Machine: $(uname -m), CPU features: $(grep -m1 '"cpu_features"' "$first" | field cpu_features)."
  echo "Made by \`scripts/profile-backends.sh${quick[*]:+ ${quick[*]}}\` with \`volley profile\` $(grep -m1 '"version"' "$first" | field version);"
  echo "one thread. Cycles are time-stamp-counter ticks (the nominal clock); \"emulated\" marks timings"
  echo "under qemu-aarch64, which say nothing about real ARM hardware."
  [[ ${#quick[@]} -gt 0 ]] && echo "Quick sizes: the figures check the pipeline and mean little."
  echo
  echo "## Kernels, ns per test (cycles per test)"
  echo
  header="| kernel | rays | width |"
  rule="| --- | --- | ---: |"
  for b in "${ran[@]}"; do
    label=$b; is_emulated "$b" && label="$b (emulated)"
    header+=" $label |"; rule+=" ---: |"
  done
  echo "$header"; echo "$rule"
  grep '"kernel":' "$out/profile-${ran[0]}.json" | while read -r line; do
    k=$(echo "$line" | field kernel) p=$(echo "$line" | field parallel) w=$(echo "$line" | field width)
    rays=general; [[ $p == 1 ]] && rays=parallel; [[ $k == box_vs_boxes ]] && rays=-
    row="| $k | $rays | $w |"
    for b in "${ran[@]}"; do
      rec=$(grep "\"kernel\": \"$k\", \"parallel\": $p, \"width\": $w," "$out/profile-$b.json" || true)
      ns=$(echo "$rec" | field ns_per_test) cy=$(echo "$rec" | field cycles_per_test)
      if [[ -z $rec ]]; then row+=" – |"
      elif [[ $cy == null || -z $cy ]]; then row+=" $(printf '%.3f' "$ns") |"
      else row+=" $(printf '%.3f (%.2f)' "$ns" "$cy") |"; fi
    done
    echo "$row"
  done
  echo
  echo "## Raycast, Mrays/s (the world, random rays, closest hit)"
  echo
  header="| path | batch |"; rule="| --- | ---: |"
  for b in "${ran[@]}"; do
    label=$b; is_emulated "$b" && label="$b (emulated)"
    header+=" $label |"; rule+=" ---: |"
  done
  echo "$header"; echo "$rule"
  grep '"path":' "$out/profile-${ran[0]}.json" | while read -r line; do
    path=$(echo "$line" | field path) batch=$(echo "$line" | field batch)
    row="| $path | $batch |"
    for b in "${ran[@]}"; do
      rec=$(grep "\"path\": \"$path\", \"batch\": $batch," "$out/profile-$b.json" || true)
      v=$(echo "$rec" | field mrays_per_s)
      row+=" ${v:-–} |"
    done
    echo "$row"
  done
  echo
  echo "## Inner loops, ns per item"
  echo
  header="| loop |"; rule="| --- |"
  for b in "${ran[@]}"; do
    label=$b; is_emulated "$b" && label="$b (emulated)"
    header+=" $label |"; rule+=" ---: |"
  done
  echo "$header"; echo "$rule"
  grep '"loop":' "$out/profile-${ran[0]}.json" | while read -r line; do
    name=$(echo "$line" | field loop)
    row="| $name |"
    for b in "${ran[@]}"; do
      v=$(grep -F "\"loop\": \"$name\"" "$out/profile-$b.json" | field ns || true)
      row+=" ${v:-–} |"
    done
    echo "$row"
  done
  echo
  echo "![kernels](kernels.png)"
  echo
  echo "![raycast](raycast.png)"
} >"$md"
echo "wrote $md"

# ---- the plots (native backends only: emulated timings are not comparable) ----
native=()
for b in "${ran[@]}"; do is_emulated "$b" || native+=("$b"); done
[[ ${#native[@]} -gt 0 ]] || native=("${ran[@]}")
unit=cycles_per_test ylabel="cycles per test (TSC)"
for b in "${native[@]}"; do
  grep -q '"tsc": true' "$out/profile-$b.json" || { unit=ns_per_test ylabel="ns per test"; }
done
dat=$out/kernels.dat
{
  grep '"kernel":' "$out/profile-${native[0]}.json" | while read -r line; do
    k=$(echo "$line" | field kernel) p=$(echo "$line" | field parallel) w=$(echo "$line" | field width)
    label="$k"; [[ $p == 1 ]] && label="${k}(par)"
    row="${label}/w$w"
    for b in "${native[@]}"; do
      v=$(grep "\"kernel\": \"$k\", \"parallel\": $p, \"width\": $w," "$out/profile-$b.json" | field "$unit")
      row+=" ${v:-0}"
    done
    echo "$row"
  done
} >"$dat"
plot_cols=""
for i in "${!native[@]}"; do
  [[ -n $plot_cols ]] && plot_cols+=", "
  plot_cols+="'$dat' using $((i + 2)):xtic(1) title '${native[$i]}'"
done
gnuplot <<GP
set terminal pngcairo size 1200,600 noenhanced
set output '$out/kernels.png'
set title 'volley kernels: $ylabel, by kernel and width (w1 = scalar)'
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set ylabel '$ylabel (log scale)'
set logscale y
set xtics rotate by -35 font ',9'
set key outside right
set grid ytics
plot $plot_cols
GP
echo "wrote $out/kernels.png"

rdat=$out/raycast.dat
: >"$rdat"
gp_lines=""
idx=0
for b in "${native[@]}"; do
  grep '"path": "volley_batch"' "$out/profile-$b.json" | while read -r line; do
    echo "$(echo "$line" | field batch) $(echo "$line" | field mrays_per_s)"
  done >>"$rdat"
  printf '\n\n' >>"$rdat"
  single=$(grep '"path": "volley_single"' "$out/profile-$b.json" | field mrays_per_s)
  [[ -n $gp_lines ]] && gp_lines+=", "
  gp_lines+="'$rdat' index $idx using 1:2 with linespoints lw 2 title '$b batched'"
  [[ -n $single ]] && gp_lines+=", $single with lines dt 2 lc $((idx + 1)) title '$b single-ray'"
  idx=$((idx + 1))
done
embree=$(grep -h '"path": "embree_loop"' "$out/profile-${native[0]}.json" | field mrays_per_s || true)
[[ -n $embree ]] && gp_lines+=", $embree with lines lw 2 lc rgb 'black' dt 3 title 'Embree loop (${native[0]} build)'"
gnuplot <<GP
set terminal pngcairo size 1100,560 noenhanced
set output '$out/raycast.png'
set title 'volley raycast, world, random rays, closest hit: batch size against throughput'
set logscale x 2
set xrange [48:*]
set format x '%.0f'
set xlabel 'rays per vl_bvh_raycast call'
set ylabel 'Mrays/s (one thread)'
set yrange [0:*]
set key outside right
set grid
plot $gp_lines
GP
echo "wrote $out/raycast.png"
