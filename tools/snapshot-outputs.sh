#!/usr/bin/env bash
# Writes every bundled model's report, text table, header and four-target
# artifact into DIR, for comparing two builds byte for byte:
#   tools/snapshot-outputs.sh build/bin/poolc /tmp/before
#   ... change and rebuild ...
#   tools/snapshot-outputs.sh build/bin/poolc /tmp/after
#   diff -r /tmp/before /tmp/after && echo identical
set -euo pipefail
POOLC=${1:?usage: snapshot-outputs.sh POOLC DIR}
OUT=${2:?usage: snapshot-outputs.sh POOLC DIR}
cd "$(dirname "$0")/.."
mkdir -p "$OUT"
for m in models/*.yaml; do
  n=$(basename "$m" .yaml)
  for plan in "150GiB 256" "24GiB 16"; do
    set -- $plan
    tag="$n.$1.$2"
    if ! "$POOLC" "$m" --budget "$1" --max-num-seqs "$2" -o "$OUT/$tag.json" 2>"$OUT/$tag.err"; then
      echo "$tag: poolc failed (kept its message)"; continue
    fi
    rm -f "$OUT/$tag.err"
    "$POOLC" "$m" --budget "$1" --max-num-seqs "$2" --emit=text -o "$OUT/$tag.txt"
    "$POOLC" "$m" --budget "$1" --max-num-seqs "$2" --emit=header -o "$OUT/$tag.h"
    "$POOLC" "$m" --budget "$1" --max-num-seqs "$2" --targets gfx942,gfx950,sm_90,host \
      -o "$OUT/$tag.poolpack"
  done
done

# The tools that read the layout: their text must not move either.
PACKINFO=$(dirname "$POOLC")/pool-pack-info
EXPLORE=$(dirname "$POOLC")/pool-explore
for f in "$OUT"/*.poolpack; do
  "$PACKINFO" "$f" | sed "s#$OUT/##" > "${f%.poolpack}.packinfo"
done
for m in models/*.yaml; do
  n=$(basename "$m" .yaml)
  "$EXPLORE" "$m" --budget 150GiB --max-num-seqs 256 > "$OUT/$n.explore" 2>&1 || true
done
"$EXPLORE" models/deepseek-v4-flash-fp8.yaml --budget 150GiB --max-num-seqs 256 \
  --sweep budget=100GiB..200GiB:4 > "$OUT/sweep.explore" 2>&1 || true
ls "$OUT" | wc -l
