#!/usr/bin/env bash
# Runs every generated kernel, lowered to the host, against the plain
# reference in pool-kernel-check, for every bundled model: at 150 GiB (slots
# and blocks more than 100 GiB into a sparse arena, so every address is past
# 4 GiB) and at a small budget, with random pairs and ids; at the small
# budget also with a segment table in every kernel, walked in tiles inside
# one segment each (the default), in tiles that cross segments and in
# chunks (poolc's --gpu-segment-table, --gpu-table-walk=run|tile|chunk),
# so every walk is
# checked on every model whatever the default picks. The table walks run
# as the GPUs do, several threads a block (--host-threads, played one after
# another) each with several loads in flight (--host-unroll): three over
# the tile walk (its unrolled loop and its remainder), four bound-checked
# ones over the run walk's tiles of 256 vectors (most runs end in a short
# one).
set -u
checker=$1
models=$2
count=0
failed=0
for model in "$models"/*.yaml; do
  plans=("150GiB 256 6" "3GiB 8 3")
  # Gemma 3 keeps 129-block window reserves of 6.8 MB per sequence: 256 of
  # them pass 150 GiB (refused, models.test), so fewer sequences here.
  case $(basename "$model") in
    gemma-3-27b.yaml) plans=("150GiB 64 6" "12GiB 8 3") ;;
    llama-4-scout.yaml) plans=("150GiB 32 6" "24GiB 8 3") ;; # 641-block reserves of 2.4 MB
  esac
  for plan in "${plans[@]}"; do
    set -- $plan
    if ! "$checker" "$model" --budget "$1" --max-num-seqs "$2" --items "$3" \
        --seed $((count + 7)); then
      echo "FAIL: $(basename "$model") at $1"
      failed=$((failed + 1))
    fi
  done
  for walk in "--tile-walk --host-unroll 3 --host-threads 5" "--chunk-walk" "--run-walk --host-unroll 4 --host-threads 7 --tile-vectors 256"; do
    # shellcheck disable=SC2086
    if ! "$checker" "$model" --budget "$1" --max-num-seqs "$2" --items "$3" \
        --seed $((count + 11)) --segment-table $walk; then
      echo "FAIL: $(basename "$model") at $1 with a segment table $walk"
      failed=$((failed + 1))
    fi
  done
  count=$((count + 1))
done
if [ "$count" -lt 13 ]; then
  echo "expected at least 13 models, found $count"
  exit 1
fi
echo "host kernels: $count models, $failed failed"
[ "$failed" -eq 0 ]
