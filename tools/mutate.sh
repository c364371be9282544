#!/usr/bin/env bash
# Mutation check of the runtime library: each mutant below (an off-by-one,
# a swapped comparison, a dropped check) is applied alone, the unit and
# conformance tests are rebuilt and run, and the mutant must make them fail
# ("killed"). Prints one line per mutant and the kill rate; exits non-zero
# if any mutant survives. Restores every file it touched.
#   tools/mutate.sh [BUILD_DIR]      (default build; tools/build.sh first)
set -uo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
# file | exact text | replacement
MUTANTS=(
  "runtime/layout/RowSpace.cpp|if (block < 0 \|\| block >= numBlocks_)|if (block < 0 \|\| block > numBlocks_)"
  "runtime/layout/RowSpace.cpp|if (row < 0 \|\| row >= cl.blockRows)|if (row < 0 \|\| row > cl.blockRows)"
  "runtime/layout/RowSpace.cpp|if (group < 0 \|\| group >= numSlots_)|if (group < 0 \|\| group > numSlots_)"
  "runtime/layout/RowSpace.cpp|if (slot < slotOrigin() \|\| slot >= slotPositions_)|if (slot < slotOrigin() \|\| slot > slotPositions_)"
  "runtime/layout/RowSpace.cpp|if (ringPos < 0 \|\| ringPos >= ringSlots_)|if (ringPos < 0 \|\| ringPos > ringSlots_)"
  "runtime/layout/SolvedLayout.cpp|if (overflow \|\| end > limit)|if (overflow \|\| end > limit + 1)"
  "runtime/layout/SolvedLayout.cpp|if (x < min) {|if (x < min - 1) {"
  "runtime/pools/CacheManager.cpp|std::optional<BlockHash> parent = saltRoot(r.cacheSalt);\n  if (start > 0) {|std::optional<BlockHash> parent;\n  if (start > 0) {"
  "runtime/pools/BlockHash.cpp|  if (parent) {\n    putLE64(buf, *parent);\n    at = 8;\n  }|  if (parent) {\n    putLE64(buf, *parent + 1);\n    at = 8;\n  }"
)
killed=0 total=0
for m in "${MUTANTS[@]}"; do
  IFS='|' read -r file from to <<<"$(printf '%s' "$m" | sed 's/\\|/\x01/g')"
  from=${from//$'\x01'/|}; to=${to//$'\x01'/|}
  total=$((total + 1))
  cp "$file" "$file.mutate-orig"
  if ! python3 - "$file" "$from" "$to" <<'PY'
import sys
path, a, b = sys.argv[1], sys.argv[2].replace('\\n', '\n'), sys.argv[3].replace('\\n', '\n')
s = open(path).read()
if s.count(a) != 1:
    sys.exit(f"mutant text found {s.count(a)} times in {path}: {a!r}")
open(path, 'w').write(s.replace(a, b))
PY
  then
    mv "$file.mutate-orig" "$file"; touch "$file"; echo "STALE  $file: $from"; continue
  fi
  if ! cmake --build "$BUILD" --target poolc-unit-tests poolc-conformance -j "$(nproc)" >/dev/null 2>&1; then
    echo "NOBUILD   $file: $from -> $to (not counted as killed)"
  elif (cd "$BUILD" && ctest -R '^(unit|conformance)$' >/dev/null 2>&1); then
    echo "SURVIVED  $file: $from -> $to"
  else
    echo "killed    $file: $from -> $to"; killed=$((killed + 1))
  fi
  mv "$file.mutate-orig" "$file"
  touch "$file" # newer than the mutant's objects, so the next build redoes them
done
cmake --build "$BUILD" --target poolc-unit-tests poolc-conformance -j "$(nproc)" >/dev/null 2>&1
echo "mutation check: $killed of $total mutants killed"
[ "$killed" -eq "$total" ]
