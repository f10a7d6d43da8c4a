#!/usr/bin/env bash
# Builds volley in every flavour and runs the whole test suite in each, warnings as errors:
#   native     Release, the best SIMD this machine runs (AVX2 here), full-size cases, + bench build
#   sse41      Release, SSE4.1 kernels
#   asan       Debug at -O1 (assertions and debug validation kept), ASan + UBSan, smaller cases
#   tsan       Debug at -O1, ThreadSanitizer, smaller cases
#   portable   Release, SIMDe without native intrinsics (SIMDE_NO_NATIVE)
#   aarch64    Release, NEON, cross-compiled and run under qemu-aarch64, smaller cases
#   fuzz       clang, ASan + UBSan, the suite again, then each libFuzzer target for VOLLEY_FUZZ_SECONDS (12)
#   install    static and shared builds installed with `cmake --install --prefix` into a folder not
#              known at configure time; a consumer built with find_package and with pkg-config; the
#              installed volley tool runs; then the README's commands and snippets, pasted in order
#              into a fresh copy (scripts/check-readme.sh)
#   profile    scripts/profile-backends.sh --quick on two backends (the best and portable): checks
#              that the table and the plots were written (figures not checked)
#   coverage   Release, the best SIMD, smaller cases, the library at -O1 with gcc --coverage; then
#              gcovr's line and branch coverage of src/ (total and per folder), reports in
#              build/ci-coverage/coverage/; fails only when a test does
# Usage: scripts/test.sh [flavour ...]   (default: all of them; about 33 minutes on 2 idle cores)
#        scripts/test.sh --help
# A line as each test program finishes (its time and its "N passed, M failed"), every "skipped"
# line, the failures' output; at the end each flavour's count and time, then the total.
# VOLLEY_TEST_SCALE multiplies every flavour's case sizes (e.g. 0.2 for a quick pass);
# VOLLEY_TEST_HEAVY_SCALE (0.3; asan and aarch64 0.2) is the share of the longest
# brute-force programs outside native, which runs them at full size.
set -uo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
all_flavours=(native sse41 asan tsan portable aarch64 fuzz install profile coverage)
flavours=()
for a in "$@"; do
  case "$a" in
    -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    -*) echo "test.sh: unknown option '$a' (try --help)" >&2; exit 2 ;;
    *) if [[ " ${all_flavours[*]} " != *" $a "* ]]; then
         echo "test.sh: unknown flavour '$a'; the flavours: ${all_flavours[*]}" >&2; exit 2
       fi
       flavours+=("$a") ;;
  esac
done
[[ ${#flavours[@]} -eq 0 ]] && flavours=("${all_flavours[@]}")
scripts/deps.sh --all || exit 1
jobs=$(nproc 2>/dev/null || echo 2)
user_scale=${VOLLEY_TEST_SCALE:-1}
suite_start=$SECONDS

total_passed=0
total_failed=0
failed_flavours=()
summary_lines=()

# minutes and seconds: 75 -> 1m15s
mmss() { printf '%dm%02ds' $(($1 / 60)) $(($1 % 60)); }

# cmake --build DIR into LOG, with a line of how far it got every 30 s: build_with_progress DIR LOG
build_with_progress() {
  cmake --build "$1" -j"$jobs" >>"$2" 2>&1 &
  local pid=$! t=0
  while kill -0 "$pid" 2>/dev/null; do
    sleep 1
    t=$((t + 1))
    if ((t % 30 == 0)); then
      echo "  building: $(grep -oE '^\[ *[0-9]+%\]' "$2" | tail -n 1) after $(mmss $t)"
    fi
  done
  wait "$pid"
}

# Each flavour's line of the closing summary: flavour_done NAME START PASSED FAILED [NOTE]
flavour_done() {
  local t=$((SECONDS - $2))
  summary_lines+=("$(printf '%-9s %4d passed, %d failed  %8s%s' "$1" "$3" "$4" "$(mmss $t)" "${5:+  ($5)}")")
  echo "=== $1: $3 passed, $4 failed in $(mmss $t)"
}

# Follows `ctest -V` and prints one line per test program as it finishes: its place, name, result,
# time and own "N passed, M failed" line; then its skipped lines, and on a failure its messages.
ctest_progress() {
  local awk=(awk)
  awk -W version 2>&1 | grep -q mawk && awk=(awk -W interactive) # mawk reads a pipe in blocks otherwise
  "${awk[@]}" '
    function flush_test(n, line,   k) {
      print line (sum[n] != "" ? "  " sum[n] : "")
      if (skip[n] != "") printf "%s", skip[n]
      if (line ~ /(Failed|Timeout|Exception|Not Run)/ && err[n] != "") printf "%s", err[n]
      fflush()
    }
    match($0, /^[0-9]+: /) {
      n = substr($0, 1, RLENGTH - 2); text = substr($0, RLENGTH + 1)
      if (text ~ /^Test command:|^Working Directory:|^Environment variables:|^ [A-Z_]+=/) next
      if (text ~ /[0-9]+ passed, [0-9]+ failed/) sum[n] = text
      else if (text ~ /[Ss]kipped|[Ss]kipping/) skip[n] = skip[n] "      " text "\n"
      else if (errs[n]++ < 40 && text ~ /check failed|runtime error|Sanitizer|SUMMARY|Segmentation|[Ee]rror|FAIL|Assert|abort/) err[n] = err[n] "      " text "\n"
      next
    }
    /^ *[0-9]+\/[0-9]+ Test +#[0-9]+: / {
      split($0, a, "#"); split(a[2], b, ":"); n = b[1] + 0
      idx = $1; name = $4
      status = $0; sub(/^.*\.\.\. */, "", status); sub(/ +[0-9.]+ sec.*$/, "", status)
      secs = $0; sub(/ sec.*$/, "", secs); sub(/^.* /, "", secs)
      flush_test(n, sprintf("  [%s] %-30s %-8s %7.1f s", idx, name, status, secs))
      next
    }
    /tests passed, [0-9]+ tests failed out of/ { print "  " $0; fflush() }
  '
}

# configure + build + ctest one flavour: run_flavour NAME SCALE CMAKE_ARGS...
run_flavour() {
  local name=$1 scale=$2 start=$SECONDS
  shift 2
  scale=$(awk -v a="$scale" -v b="$user_scale" 'BEGIN { printf "%g", a * b }')
  local dir="build/ci-$name"
  echo "=== $name: configure and build (log: $dir.log)"
  if ! cmake -S . -B "$dir" -DVOLLEY_WERROR=ON "$@" >"$dir.log" 2>&1 || ! build_with_progress "$dir" "$dir.log"; then
    echo "  FAILED"
    tail -n 60 "$dir.log"
    echo "=== $name: BUILD FAILED"
    total_failed=$((total_failed + 1))
    failed_flavours+=("$name")
    flavour_done "$name" "$start" 0 1 "build failed"
    return
  fi
  echo "  built in $(mmss $((SECONDS - start)))"
  [[ $name == coverage ]] && find "$dir" -name '*.gcda' -delete # the counts of this run only
  echo "=== $name: tests (VOLLEY_TEST_SCALE=$scale), each as it finishes"
  (cd "$dir" && VOLLEY_TEST_SCALE=$scale ctest -V --output-on-failure -j"$jobs" 2>&1) | tee "$dir/ctest.log" | ctest_progress
  local rc=${PIPESTATUS[0]}
  local summary passed failed count
  summary=$(grep -E "tests passed, [0-9]+ tests failed out of" "$dir/ctest.log" | tail -n 1)
  failed=$(echo "$summary" | sed -E 's/.* ([0-9]+) tests failed out of ([0-9]+).*/\1/')
  count=$(echo "$summary" | sed -E 's/.* tests failed out of ([0-9]+).*/\1/')
  if [[ -z "$summary" ]]; then failed=1; count=1; fi
  passed=$((count - failed))
  total_passed=$((total_passed + passed))
  total_failed=$((total_failed + failed))
  if [[ $rc -ne 0 || $failed -ne 0 ]]; then failed_flavours+=("$name"); fi
  local note=""
  if [[ $name == coverage ]]; then coverage_report "$dir"; note=$coverage_note; fi
  flavour_done "$name" "$start" "$passed" "$failed" "$note"
}

# gcovr over a --coverage build's counts: line and branch coverage of src/ (the counters are in
# the library's objects alone, under DIR/CMakeFiles), the total and each folder's; the full reports
# in DIR/coverage/ (by file: lines.txt, branches.txt, html/index.html; coverage.json for gcovr -a).
# Sets coverage_note to the total: coverage_report DIR
coverage_report() {
  local dir=$1 out=$1/coverage
  coverage_note=""
  rm -rf "$out" && mkdir -p "$out/html"
  echo "=== coverage: gcovr over src/ (reports: $out/)"
  if ! gcovr -r "$root" --object-directory "$dir" -f "$root/src/" --exclude-unreachable-branches \
         --json "$out/coverage.json" --json-summary "$out/summary.json" --txt "$out/lines.txt" \
         --html-details "$out/html/index.html" "$dir/CMakeFiles" >"$out/gcovr.log" 2>&1 ||
     ! gcovr -r "$root" -a "$out/coverage.json" -b --txt "$out/branches.txt" >>"$out/gcovr.log" 2>&1; then
    tail -n 20 "$out/gcovr.log"
    echo "  gcovr FAILED (log: $out/gcovr.log)"
    coverage_note="no coverage report"
    return
  fi
  python3 - "$out/summary.json" >"$out/summary.txt" <<'PY'
import json, sys
files = json.load(open(sys.argv[1]))["files"]
def figures(fs):
    lc, lt = sum(f["line_covered"] for f in fs), sum(f["line_total"] for f in fs)
    bc, bt = sum(f["branch_covered"] for f in fs), sum(f["branch_total"] for f in fs)
    pct = lambda c, t: f"{100.0 * c / t:.1f}%" if t else "-"
    return f"lines {pct(lc, lt)} ({lc} of {lt}), branches {pct(bc, bt)} ({bc} of {bt})"
print("coverage of src/: " + figures(files))
for d in sorted({"/".join(f["filename"].split("/")[:2]) for f in files}):
    print(f"  {d + '/:':<10} " + figures([f for f in files if f["filename"].startswith(d + "/")]))
PY
  sed 's/^/  /' "$out/summary.txt"
  coverage_note=$(sed -n 's/^coverage of src\/: //p' "$out/summary.txt")
}

# libFuzzer on every target of the fuzz build: each must run its time without a failure.
run_fuzzers() {
  local dir=build/ci-fuzz seconds=${VOLLEY_FUZZ_SECONDS:-12} start=$SECONDS passed=0 failed=0
  [[ -d $dir/fuzz ]] || return
  echo "=== fuzz: each libFuzzer target for ${seconds} s (VOLLEY_FUZZ_SECONDS)"
  for bin in "$dir"/fuzz/fuzz-*; do
    [[ -x $bin ]] || continue
    local name corpus
    name=$(basename "$bin")
    corpus="$dir/corpus-$name"
    mkdir -p "$corpus"
    local seeds="fuzz/regressions/${name#fuzz-}"
    [[ -d $seeds ]] || seeds=""
    if "$bin" -max_total_time="$seconds" -max_len=4096 -artifact_prefix="$dir/$name-" "$corpus" $seeds >"$dir/$name.log" 2>&1; then
      echo "  $name: ok for ${seconds} s ($(find "$corpus" -type f | wc -l) corpus entries)"
      passed=$((passed + 1))
    else
      tail -n 30 "$dir/$name.log"
      echo "  $name: FAILED (crash input saved beside $dir/$name.log)"
      failed=$((failed + 1))
      failed_flavours+=("$name")
    fi
  done
  total_passed=$((total_passed + passed))
  total_failed=$((total_failed + failed))
  flavour_done "libFuzzer" "$start" "$passed" "$failed" "${seconds} s a target"
}

run_install() {
  echo "=== install: static and shared packages, consumer via find_package and pkg-config"
  local ok=1 checks=0 log=build/ci-install.log start=$SECONDS
  rm -rf build/ci-install && mkdir -p build/ci-install
  : >"$log"
  for kind in static shared; do
    local shared=OFF
    [[ $kind == shared ]] && shared=ON
    local prefix="$root/build/ci-install/prefix-$kind"
    # the prefix is chosen at install time only: nothing may carry the configure-time default
    if ! { cmake -S . -B "build/ci-install/lib-$kind" -DBUILD_SHARED_LIBS=$shared -DVOLLEY_BUILD_TESTS=OFF \
             -DVOLLEY_BUILD_BENCH=OFF -DVOLLEY_BUILD_EXAMPLES=OFF -DVOLLEY_WERROR=ON &&
           cmake --build "build/ci-install/lib-$kind" -j"$jobs" && cmake --install "build/ci-install/lib-$kind" --prefix "$prefix" &&
           cmake -S tests/consumer -B "build/ci-install/consumer-$kind" -DCMAKE_PREFIX_PATH="$prefix" &&
           cmake --build "build/ci-install/consumer-$kind" &&
           LD_LIBRARY_PATH="$prefix/lib" "build/ci-install/consumer-$kind/consumer"; } >>"$log" 2>&1; then
      echo "install ($kind, find_package): FAILED"; ok=0; continue
    fi
    echo "install ($kind, find_package): ok"; checks=$((checks + 1))
    local pc="$prefix/lib/pkgconfig"
    [[ -d "$pc" ]] || pc=$(dirname "$(find "$prefix" -name volley.pc | head -n 1)")
    if ! { cc -std=c11 -Wall -Werror tests/consumer/consumer.c -o "build/ci-install/consumer-pc-$kind" \
             $(PKG_CONFIG_PATH="$pc" pkg-config --cflags --libs volley) &&
           LD_LIBRARY_PATH="$(PKG_CONFIG_PATH="$pc" pkg-config --variable=libdir volley)" "build/ci-install/consumer-pc-$kind"; } >>"$log" 2>&1; then
      echo "install ($kind, pkg-config): FAILED"; ok=0; continue
    fi
    if [[ "$(PKG_CONFIG_PATH="$pc" pkg-config --cflags volley)" != *"$prefix"* ]]; then
      echo "install ($kind, pkg-config): FAILED: --cflags does not point into $prefix"; ok=0; continue
    fi
    echo "install ($kind, pkg-config): ok"; checks=$((checks + 1))
    if [[ -x "$prefix/bin/volley" ]]; then
      if ! "$prefix/bin/volley" --version >>"$log" 2>&1; then
        echo "install ($kind, volley tool): FAILED"; ok=0; continue
      fi
      if command -v ldd >/dev/null && ldd "$prefix/bin/volley" | grep -Eq 'embree|Bullet|LinearMath'; then
        echo "install ($kind, volley tool): FAILED: the installed tool links a bench peer (Embree or Bullet)"; ok=0; continue
      fi
      echo "install ($kind, volley tool): ok, needs no Embree or Bullet"; checks=$((checks + 1))
    else
      echo "install ($kind, volley tool): not built (libpng or assimp missing), skipped"
    fi
  done
  echo "=== install: the README's commands and snippets, pasted in order into a fresh copy (scripts/check-readme.sh)"
  if scripts/check-readme.sh --work build/ci-install/readme >build/ci-install/readme.log 2>&1; then
    grep -E "^readme:" build/ci-install/readme.log | sed 's/^/  /'
    checks=$((checks + 1))
  else
    tail -n 40 build/ci-install/readme.log
    echo "install (README): FAILED (log: build/ci-install/readme.log)"; ok=0
  fi
  if [[ $ok -eq 1 ]]; then
    total_passed=$((total_passed + checks))
    flavour_done install "$start" "$checks" 0
  else
    tail -n 40 "$log"
    total_failed=$((total_failed + 1))
    failed_flavours+=(install)
    flavour_done install "$start" "$checks" 1
  fi
}

# The backend comparison, built and run for two backends (this machine's best and portable), small
# sizes: the pipeline from the builds to the table and the plots. scripts/profile-backends.sh
# alone runs every backend.
run_profile() {
  local out=build/ci-profile log=build/ci-profile.log start=$SECONDS best=portable
  case "$(uname -m)" in
    x86_64|i?86) best=sse2; grep -qw sse4_1 /proc/cpuinfo && best=sse41; grep -qw avx2 /proc/cpuinfo && best=avx2 ;;
    aarch64|arm64) best=neon ;;
  esac
  echo "=== profile: scripts/profile-backends.sh --quick --backends \"$best portable\""
  rm -rf "$out"
  if scripts/profile-backends.sh --quick --backends "$best portable" --out "$out" >"$log" 2>&1 &&
     [[ -s $out/comparison.md && -s $out/kernels.png && -s $out/raycast.png ]] &&
     ls "$out"/profile-*.json >/dev/null 2>&1; then
    grep -E "^backend|built|skipped|emulated|wrote" "$log" | tail -n 20 | sed 's/^/  /'
    echo "  profile: ok ($(ls "$out"/profile-*.json | wc -l) backends, $out/comparison.md, kernels.png, raycast.png)"
    total_passed=$((total_passed + 1))
    flavour_done profile "$start" 1 0
  else
    tail -n 40 "$log"
    echo "profile: FAILED"
    total_failed=$((total_failed + 1))
    failed_flavours+=(profile)
    flavour_done profile "$start" 0 1
  fi
}

# The longest brute-force programs (tests/CMakeLists.txt, and the fuzz replays with a brute force
# in double: fuzz/CMakeLists.txt) run at a share of their flavour's scale in every flavour but
# native, which runs them at full size: what keeps the whole suite under 30 minutes on 2 cores.
# `CI=true bash .ci/run` on a fresh clone, idle 2-core Xeon, 2026-11-29, six broadphase kinds:
# native 2m23s, sse41 1m02s, asan 3m46s, tsan 6m50s, portable 1m43s, aarch64 6m35s, fuzz 2m31s +
# libFuzzer 1m32s, install 0m42s, profile 0m28s, coverage 1m59s: 29m32s with every build. Before
# the broadphase oracle swept instead of testing every pair, and before the sweep programs' far
# copies of a mesh took the flavour's share, 33m58s (test_broadphase 156 s natively).
heavy="-DVOLLEY_TEST_HEAVY_SCALE=${VOLLEY_TEST_HEAVY_SCALE:-0.3}"
heavy_slow="-DVOLLEY_TEST_HEAVY_SCALE=${VOLLEY_TEST_HEAVY_SCALE:-0.2}" # asan (unoptimised), aarch64 (qemu)
heavy_tsan="-DVOLLEY_TEST_HEAVY_SCALE=${VOLLEY_TEST_HEAVY_SCALE:-0.3}" # tsan, already at 0.1
mkdir -p build
for f in "${flavours[@]}"; do
  case "$f" in
    native)   run_flavour native 1 -DCMAKE_BUILD_TYPE=Release -DVOLLEY_TEST_HEAVY_SCALE=1 ;;
    sse41)    run_flavour sse41 1 -DCMAKE_BUILD_TYPE=Release -DVOLLEY_SIMD=sse41 -DVOLLEY_BUILD_BENCH=OFF $heavy ;;
    asan)     run_flavour asan 0.3 -DCMAKE_BUILD_TYPE=Debug "-DCMAKE_C_FLAGS_DEBUG=-g -O1" -DVOLLEY_SANITIZE=address,undefined -DVOLLEY_BUILD_BENCH=OFF $heavy_slow ;;
    tsan)     run_flavour tsan 0.1 -DCMAKE_BUILD_TYPE=Debug "-DCMAKE_C_FLAGS_DEBUG=-g -O1" -DVOLLEY_SANITIZE=thread -DVOLLEY_BUILD_BENCH=OFF $heavy_tsan ;;
    portable) run_flavour portable 1 -DCMAKE_BUILD_TYPE=Release -DVOLLEY_SIMD=portable -DVOLLEY_BUILD_BENCH=OFF $heavy ;;
    aarch64)  run_flavour aarch64 0.3 -DCMAKE_BUILD_TYPE=Release -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake \
                -DVOLLEY_BUILD_BENCH=OFF -DVOLLEY_BUILD_EXAMPLES=OFF $heavy_slow ;;
    fuzz)     CC=clang CXX=clang++ run_flavour fuzz 0.3 -DCMAKE_BUILD_TYPE=RelWithDebInfo -DVOLLEY_SANITIZE=address,undefined \
                -DVOLLEY_BUILD_FUZZ=ON -DVOLLEY_BUILD_BENCH=OFF -DVOLLEY_BUILD_EXAMPLES=OFF $heavy
              run_fuzzers ;;
    install)  run_install ;;
    profile)  run_profile ;;
    coverage) CC=gcc CXX=g++ run_flavour coverage 0.3 -DCMAKE_BUILD_TYPE=Release -DVOLLEY_COVERAGE=ON \
                -DVOLLEY_BUILD_BENCH=OFF $heavy ;;
  esac
done

echo
echo "=== summary (flavour, count, time)"
for l in "${summary_lines[@]}"; do echo "$l"; done
echo "all flavours: $(mmss $((SECONDS - suite_start)))"
if [[ ${#failed_flavours[@]} -gt 0 ]]; then echo "failed flavours: ${failed_flavours[*]}"; fi
echo "total: $total_passed passed, $total_failed failed"
[[ $total_failed -eq 0 ]]
