#!/usr/bin/env bash
# Pastes README.md into a shell and a compiler as a new user would, in order, on a fresh copy of
# the checkout (the files git knows, as they are in the working tree), with HOME in the work folder:
#   1. every ```sh block, line by line (the library alone, its install into $HOME/.local, a
#      program built with find_package and one with pkg-config, each run); the lines that start
#      the demo, the test suite, the data fetch or the backend profile are left to their own checks
#   2. every ```c block, in order, as the body of one program (its #include lines on top; the
#      inputs the snippets name, such as xyz, boxes or triggers, declared before), compiled with
#      -Wall -Wextra -Werror against the installed library through pkg-config and run: it must
#      exit 0 and leave vl_get_bytes_in_use() at 0.
# "Your program" (app/app.c, app/CMakeLists.txt) is tests/consumer's.
# Usage: scripts/check-readme.sh [--work DIR]   (default build/readme-check; emptied first)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
work=build/readme-check
while [[ $# -gt 0 ]]; do
  case "$1" in
    --work) work=${2:?--work wants a folder}; shift 2 ;;
    -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    *) echo "check-readme.sh: unknown argument '$1' (try --help)" >&2; exit 2 ;;
  esac
done
rm -rf "$work"
mkdir -p "$work/home" "$work/volley"
work=$(cd "$work" && pwd)
copy=$work/volley

# the fresh copy: tracked and new (not ignored) files, no build folders, no data
git ls-files -z --cached --others --exclude-standard | tar --null -T - -cf - 2>/dev/null | tar -xf - -C "$copy"
mkdir -p "$copy/app"
cp tests/consumer/consumer.c "$copy/app/app.c"
sed -e 's/volley_consumer/app/; s/add_executable(consumer consumer.c)/add_executable(app app.c)/' \
    -e 's/target_link_libraries(consumer /target_link_libraries(app /' tests/consumer/CMakeLists.txt >"$copy/app/CMakeLists.txt"

# ---- 1. the shell blocks ----
skip='^(scripts/(demo|test|fetch-data|profile-backends|check-readme)\.sh)([[:space:]]|$)'
awk '/^```sh$/ { on = 1; next } /^```/ { on = 0 } on' README.md >"$work/readme.sh"
: >"$work/run.sh"
while IFS= read -r line; do
  if [[ $line =~ $skip ]]; then
    cmd=${line%%#*}
    echo "readme: left to its own check: ${cmd%"${cmd##*[![:space:]]}"}"
  else
    printf '%s\n' "$line" >>"$work/run.sh"
  fi
done <"$work/readme.sh"
echo "readme: running $(grep -c . "$work/run.sh") shell lines in a fresh copy ($copy), HOME=$work/home"
(cd "$copy" && env -u PKG_CONFIG_PATH -u LD_LIBRARY_PATH HOME="$work/home" bash -euo pipefail -x "$work/run.sh") >"$work/shell.log" 2>&1 || {
  tail -n 40 "$work/shell.log"
  echo "readme: FAILED: a shell line failed (log: $work/shell.log)"
  exit 1
}
echo "readme: the shell lines ran: the library built and installed, both programs built and ran"

# ---- 2. the C snippets as one program ----
prog=$work/snippets.c
{
  awk '/^```c$/ { on = 1; next } /^```/ { on = 0 } on && /^#include/' README.md
  cat <<'C'
#include <stdio.h>

/* The inputs the README's snippets name: a unit square at z = 0 (two triangles), the same square
 * raised, three boxes, and box and sphere queries along the square. */
static const float xyz[] = {0, 0, 0, 1, 0, 0, 1, 1, 0, 0, 1, 0};
static const float moved_xyz[] = {0, 0, 0.1f, 1, 0, 0.1f, 1, 1, 0.1f, 0, 1, 0.1f};
static const uint32_t indices[] = {0, 1, 2, 0, 2, 3};
static const uint32_t vertex_count = 4, triangle_count = 2;
static vl_aabb boxes[3] = {{{0, 0, 0}, {1, 1, 1}}, {{0.5f, 0.5f, 0.5f}, {2, 2, 2}}, {{5, 5, 5}, {6, 6, 6}}};
static vl_aabb triggers[256];
static vl_sphere blasts[64];

int main(void) {
    for (int i = 0; i < 256; i++)
        triggers[i] = (vl_aabb){{i / 256.0f - 0.01f, 0.49f, -0.01f}, {i / 256.0f + 0.01f, 0.51f, 0.01f}};
    for (int i = 0; i < 64; i++) blasts[i] = (vl_sphere){{i / 64.0f, 0.5f, 0}, 0.05f};
    {
C
  awk '/^```c$/ { on = 1; next } /^```/ { on = 0 } on && !/^#include/ { print "        " $0 }' README.md
  cat <<'C'
        int ok = st == VL_OK && hits[0].prim != VL_NO_HIT && contacts[0].prim != VL_NO_HIT && n == 1 &&
                 stats.primitives == 2 && ground.prim != VL_NO_HIT && ground.distance == 3.0f;
        if (!ok) {
            fprintf(stderr, "snippets: unexpected answers (status %d, hit %u, sweep %u, pairs %u, ground %g)\n",
                    (int)st, hits[0].prim, contacts[0].prim, n, ground.distance);
            return 1;
        }
    }
    if (vl_get_bytes_in_use() != 0) {
        fprintf(stderr, "snippets: %zu bytes still in use at the end\n", vl_get_bytes_in_use());
        return 1;
    }
    puts("snippets: every call ran, answers as expected, nothing leaked");
    return 0;
}
C
} >"$prog"
pc=$work/home/.local/lib/pkgconfig
if ! PKG_CONFIG_PATH=$pc pkg-config --exists volley; then
  echo "readme: FAILED: the shell lines installed no volley.pc into $pc"
  exit 1
fi
# shellcheck disable=SC2046
if ! cc -std=c11 -Wall -Wextra -Werror -Wno-unused-variable "$prog" -o "$work/snippets" \
       $(PKG_CONFIG_PATH=$pc pkg-config --cflags --libs volley) >"$work/snippets.log" 2>&1; then
  cat "$work/snippets.log" | head -n 40
  echo "readme: FAILED: the C snippets, pasted in order, do not compile ($prog)"
  exit 1
fi
if ! "$work/snippets" >>"$work/snippets.log" 2>&1; then
  tail -n 20 "$work/snippets.log"
  echo "readme: FAILED: the C snippets ran with an error ($prog)"
  exit 1
fi
echo "readme: the $(awk '/^```c$/' README.md | wc -l) C snippets, pasted in order into one program, compiled with -Werror and ran: $(tail -n 1 "$work/snippets.log")"
