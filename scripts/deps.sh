#!/usr/bin/env bash
# Installs the Debian/Ubuntu packages volley needs, only those missing.
#   scripts/deps.sh          build, demo, bench and the volley tool (compiler, CMake, SIMDe, Google
#                            Benchmark, Embree and Bullet peers, libpng, assimp, gnuplot)
#   scripts/deps.sh --all    also what the full test suite needs (aarch64 cross compiler, qemu-user,
#                            clang for libFuzzer, gcovr for coverage)
set -euo pipefail

packages=(cmake make gcc g++ pkg-config libsimde-dev libbenchmark-dev libembree-dev libbullet-dev
          libpng-dev libassimp-dev gnuplot-nox)
if [[ "${1:-}" == "--all" ]]; then
  packages+=(gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user clang libclang-rt-dev gcovr)
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[[ ${#missing[@]} -eq 0 ]] && exit 0

sudo=""
[[ $(id -u) -ne 0 ]] && sudo="sudo"
echo "volley: installing ${missing[*]}"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
