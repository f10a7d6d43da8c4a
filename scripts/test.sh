#!/usr/bin/env bash
# Builds volley in every flavour and runs the whole test suite in each, warnings as errors:
#   native     Release, the best SIMD this machine runs (AVX2 here), full-size cases, + bench build
#   sse41      Release, SSE4.1 kernels
#   asan       Debug, AddressSanitizer + UndefinedBehaviorSanitizer, smaller cases
#   tsan       Debug, ThreadSanitizer, smaller cases
#   portable   Release, SIMDe without native intrinsics (SIMDE_NO_NATIVE)
#   aarch64    Release, NEON, cross-compiled and run under qemu-aarch64, smaller cases
#   fuzz       clang, ASan + UBSan, the suite again, then each libFuzzer target for VOLLEY_FUZZ_SECONDS (60)
#   install    static and shared builds installed with `cmake --install --prefix` into a folder not
#              known at configure time; a consumer built with find_package and with pkg-config; the
#              installed volley tool runs
#   profile    scripts/profile-backends.sh --quick: every backend this machine runs, profiled by the
#              volley tool; checks that the table and the plots were written (figures not checked)
# Usage: scripts/test.sh [flavour ...]   (default: all of them)
# Each test program's "name: N passed, M failed" line and every "skipped" line are shown.
set -uo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
scripts/deps.sh --all || exit 1
jobs=$(nproc 2>/dev/null || echo 2)
flavours=("$@")
[[ ${#flavours[@]} -eq 0 ]] && flavours=(native sse41 asan tsan portable aarch64 fuzz install profile)

total_passed=0
total_failed=0
failed_flavours=()

# configure + build + ctest one flavour: run_flavour NAME SCALE CMAKE_ARGS...
run_flavour() {
  local name=$1 scale=$2
  shift 2
  local dir="build/ci-$name"
  echo "=== $name: configure and build"
  if ! cmake -S . -B "$dir" -DVOLLEY_WERROR=ON "$@" >"$dir.log" 2>&1 || ! cmake --build "$dir" -j"$jobs" >>"$dir.log" 2>&1; then
    tail -n 60 "$dir.log"
    echo "=== $name: BUILD FAILED"
    total_failed=$((total_failed + 1))
    failed_flavours+=("$name")
    return
  fi
  echo "=== $name: tests (VOLLEY_TEST_SCALE=$scale)"
  local out
  out=$(cd "$dir" && VOLLEY_TEST_SCALE=$scale ctest -V --output-on-failure -j"$jobs" 2>&1)
  local rc=$?
  # ctest -V prefixes each line of a test's output with "N: "; keep the lines that matter.
  echo "$out" | grep -E "Test +#|tests passed|Failed|\*\*\*|check failed|runtime error|Sanitizer|SUMMARY|Segmentation|Exception|[0-9]+ passed, [0-9]+ failed|[Ss]kipped|[Ss]kipping" |
    grep -vE "^[0-9]+: Test command:" | sed -E 's/^[0-9]+: //' | tail -n 300
  local summary passed failed
  summary=$(echo "$out" | grep -E "tests passed, [0-9]+ tests failed out of" | tail -n 1)
  failed=$(echo "$summary" | sed -E 's/.* ([0-9]+) tests failed out of ([0-9]+).*/\1/')
  local count
  count=$(echo "$summary" | sed -E 's/.* tests failed out of ([0-9]+).*/\1/')
  if [[ -z "$summary" ]]; then failed=1; count=1; fi
  passed=$((count - failed))
  total_passed=$((total_passed + passed))
  total_failed=$((total_failed + failed))
  if [[ $rc -ne 0 || $failed -ne 0 ]]; then failed_flavours+=("$name"); fi
}

# libFuzzer on every target of the fuzz build: each must run its time without a failure.
run_fuzzers() {
  local dir=build/ci-fuzz seconds=${VOLLEY_FUZZ_SECONDS:-60}
  [[ -d $dir/fuzz ]] || return
  for bin in "$dir"/fuzz/fuzz-*; do
    [[ -x $bin ]] || continue
    local name corpus
    name=$(basename "$bin")
    corpus="$dir/corpus-$name"
    mkdir -p "$corpus"
    local seeds="fuzz/regressions/${name#fuzz-}"
    [[ -d $seeds ]] || seeds=""
    echo "=== fuzz: $name for ${seconds}s"
    if "$bin" -max_total_time="$seconds" -max_len=4096 -artifact_prefix="$dir/$name-" "$corpus" $seeds >"$dir/$name.log" 2>&1; then
      echo "$name: ok ($(grep -c . "$corpus"/* 2>/dev/null | wc -l) corpus entries)"
      total_passed=$((total_passed + 1))
    else
      tail -n 30 "$dir/$name.log"
      echo "$name: FAILED (crash input saved beside $dir/$name.log)"
      total_failed=$((total_failed + 1))
      failed_flavours+=("$name")
    fi
  done
}

run_install() {
  echo "=== install: static and shared packages, consumer via find_package and pkg-config"
  local ok=1 checks=0 log=build/ci-install.log
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
      echo "install ($kind, volley tool): ok"; checks=$((checks + 1))
    else
      echo "install ($kind, volley tool): not built (libpng or assimp missing), skipped"
    fi
  done
  if [[ $ok -eq 1 ]]; then
    total_passed=$((total_passed + checks))
  else
    tail -n 40 "$log"
    total_failed=$((total_failed + 1))
    failed_flavours+=(install)
  fi
}

# The backend comparison: built and run for every backend this machine runs, small sizes.
run_profile() {
  local out=build/ci-profile log=build/ci-profile.log
  echo "=== profile: scripts/profile-backends.sh --quick"
  rm -rf "$out"
  if scripts/profile-backends.sh --quick --out "$out" >"$log" 2>&1 &&
     [[ -s $out/comparison.md && -s $out/kernels.png && -s $out/raycast.png ]] &&
     ls "$out"/profile-*.json >/dev/null 2>&1; then
    grep -E "^backend|built|skipped|emulated|wrote" "$log" | tail -n 20
    echo "profile: ok ($(ls "$out"/profile-*.json | wc -l) backends, $out/comparison.md, kernels.png, raycast.png)"
    total_passed=$((total_passed + 1))
  else
    tail -n 40 "$log"
    echo "profile: FAILED"
    total_failed=$((total_failed + 1))
    failed_flavours+=(profile)
  fi
}

mkdir -p build
for f in "${flavours[@]}"; do
  case "$f" in
    native)   run_flavour native 1 -DCMAKE_BUILD_TYPE=Release ;;
    sse41)    run_flavour sse41 1 -DCMAKE_BUILD_TYPE=Release -DVOLLEY_SIMD=sse41 -DVOLLEY_BUILD_BENCH=OFF ;;
    asan)     run_flavour asan 0.3 -DCMAKE_BUILD_TYPE=Debug -DVOLLEY_SANITIZE=address,undefined -DVOLLEY_BUILD_BENCH=OFF ;;
    tsan)     run_flavour tsan 0.1 -DCMAKE_BUILD_TYPE=Debug -DVOLLEY_SANITIZE=thread -DVOLLEY_BUILD_BENCH=OFF ;;
    portable) run_flavour portable 1 -DCMAKE_BUILD_TYPE=Release -DVOLLEY_SIMD=portable -DVOLLEY_BUILD_BENCH=OFF ;;
    aarch64)  run_flavour aarch64 0.3 -DCMAKE_BUILD_TYPE=Release -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake \
                -DVOLLEY_BUILD_BENCH=OFF -DVOLLEY_BUILD_EXAMPLES=OFF ;;
    fuzz)     CC=clang CXX=clang++ run_flavour fuzz 0.3 -DCMAKE_BUILD_TYPE=RelWithDebInfo -DVOLLEY_SANITIZE=address,undefined \
                -DVOLLEY_BUILD_FUZZ=ON -DVOLLEY_BUILD_BENCH=OFF -DVOLLEY_BUILD_EXAMPLES=OFF
              run_fuzzers ;;
    install)  run_install ;;
    profile)  run_profile ;;
    *) echo "unknown flavour '$f'"; exit 2 ;;
  esac
done

echo
if [[ ${#failed_flavours[@]} -gt 0 ]]; then echo "failed flavours: ${failed_flavours[*]}"; fi
echo "total: $total_passed passed, $total_failed failed"
[[ $total_failed -eq 0 ]]
