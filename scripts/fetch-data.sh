#!/usr/bin/env bash
# Fetches the meshes that the tests, the bench and the demo use into data/ (git-ignored) in this
# checkout, from CGAL's data set, which Debian and Ubuntu ship in the package libcgal-demo:
#   bunny00.off   the Stanford bunny, 75,408 triangles (tests, bench, demo)
#   camel.off     a camel, 19,536 triangles, a closed manifold (tests)
# `apt-get download` and `dpkg -x` in a temporary folder (no root needed, nothing installed, the
# 24 MB package deleted afterwards); only the two meshes are kept.
# Usage: scripts/fetch-data.sh [--dir DIR]   (default: data/ in this checkout)
# The tests, bench and tool look in $VOLLEY_DATA_DIR, then data/, then ../shared/data.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=data
while [[ $# -gt 0 ]]; do
  case "$1" in
    --dir) dir=${2:?--dir wants a folder}; shift 2 ;;
    -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    *) echo "fetch-data.sh: unknown argument '$1' (try --help)" >&2; exit 2 ;;
  esac
done
meshes=(bunny00.off camel.off)
missing=()
for m in "${meshes[@]}"; do [[ -s $dir/$m ]] || missing+=("$m"); done
if [[ ${#missing[@]} -eq 0 ]]; then
  echo "fetch-data.sh: ${meshes[*]} already in $dir/"
  exit 0
fi
for tool in apt-get dpkg tar; do
  command -v "$tool" >/dev/null || { echo "fetch-data.sh: needs $tool (Debian or Ubuntu)" >&2; exit 1; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "fetch-data.sh: downloading libcgal-demo (about 24 MB) into a temporary folder"
if ! (cd "$tmp" && apt-get download -q libcgal-demo >"$tmp/apt.log" 2>&1); then
  cat "$tmp/apt.log" >&2
  echo "fetch-data.sh: apt-get download libcgal-demo failed; the package lists may be stale: sudo apt-get update, then again" >&2
  exit 1
fi
dpkg -x "$tmp"/libcgal-demo_*.deb "$tmp/pkg"
archive=$tmp/pkg/usr/share/doc/libcgal-dev/data.tar.gz
[[ -r $archive ]] || { echo "fetch-data.sh: the package holds no usr/share/doc/libcgal-dev/data.tar.gz" >&2; exit 1; }
tar -xzf "$archive" -C "$tmp" "${missing[@]/#/data/meshes/}"
mkdir -p "$dir"
for m in "${missing[@]}"; do
  head -c 3 "$tmp/data/meshes/$m" | grep -q OFF || { echo "fetch-data.sh: $m is not an OFF mesh" >&2; exit 1; }
  mv "$tmp/data/meshes/$m" "$dir/$m"
done
echo "fetch-data.sh: wrote ${missing[*]} into $dir/"
