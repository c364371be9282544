#!/usr/bin/env bash
# Bit-identical prefix hits on every bundled model, through pool-serve:
# a 1,000-request multi-turn trace (follow-ups replay the generated
# answers), speculative decoding on where the model declares it, replayed
# with the prefix cache on and off; the two --outputs files must be
# byte-identical (cmp) while the cache on hits. Then artifacts whose
# manifest breaks one offset on purpose (mutate_artifact.py) must make the
# same comparison fail.
#
# With KERNEL_DIR (build/lib), every model is replayed a third time through
# its compiled model kernel (libpoolmodel-MODEL.so: token_model.h built
# against the model's address header at BUDGET / SEQS): its outputs must
# be byte-identical to the manifest-driven reference model's, and the
# kernel must be refused on the broken artifacts (their layout fingerprint
# is another) and on another model's artifact.
#
#   identity.sh POOLC POOL_SERVE PYTHONPATH WORKDIR [MODEL.yaml ...]
set -euo pipefail
POOLC=$1 SERVE=$2 PYPATH=$3 WORK=$4
shift 4
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
MODELS=("$@")
# The bundled models, and the serving test's own (test/Serve/Inputs: a
# model with two STATE classes in one request group).
[ ${#MODELS[@]} -gt 0 ] || MODELS=("$ROOT"/models/*.yaml "$ROOT"/test/Serve/Inputs/*.yaml)
BUDGET=${BUDGET:-4GiB} SEQS=${SEQS:-16} KERNEL_DIR=${KERNEL_DIR:-}
DEFAULT_TRACE=multi-turn:conversations=250,turns=4,system-tokens=256,user-max=96,output-max=32
TRACE=${TRACE:-$DEFAULT_TRACE}
INTERVAL=256 # the checkpoint ladder's interval; a model's own block when larger
mkdir -p "$WORK"
failed=0
compare() { # NAME ARTIFACT SPEC EXPECT(same|differ)
  local name=$1 art=$2 spec=$3 want=$4
  for pc in on off; do
    local flag=""
    [ $pc = off ] && flag=--no-prefix-cache
    if ! "$SERVE" replay "$TRACE" --artifact "$art" --num-spec "$spec" \
        --max-num-seqs 12 --checkpoint-interval "$INTERVAL" --progress none $flag \
        --outputs "$WORK/$name-$pc.jsonl" --summary "$WORK/$name-$pc.json" \
        > "$WORK/$name-$pc.log" 2>&1; then
      echo "$name ($pc): pool-serve failed:"; tail -3 "$WORK/$name-$pc.log"
      failed=1; return 0
    fi
  done
  local hit finished
  hit=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['hit_rate'])" "$WORK/$name-on.json")
  finished=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['requests']['finished'])" "$WORK/$name-on.json")
  if cmp -s "$WORK/$name-on.jsonl" "$WORK/$name-off.jsonl"; then got=same; else got=differ; fi
  printf '%-40s spec %d  %4d finished  hit %5.1f%%  outputs %s (want %s)\n' \
    "$name" "$spec" "$finished" "$(python3 -c "print(100*$hit)")" "$got" "$want"
  if [ "$got" != "$want" ]; then failed=1; fi
  if [ "$want" = same ] && python3 -c "import sys; sys.exit(0 if $hit > 0 else 1)"; then :; elif [ "$want" = same ]; then
    echo "  $name: the cache on never hit"; failed=1
  fi
}
kernel_run() { # NAME ARTIFACT SPEC KERNEL: the kernel's outputs against the reference's
  local name=$1 art=$2 spec=$3 lib=$4
  if ! "$SERVE" replay "$TRACE" --artifact "$art" --num-spec "$spec" \
      --max-num-seqs 12 --checkpoint-interval "$INTERVAL" --progress none --model-kernel "$lib" \
      --outputs "$WORK/$name-kernel.jsonl" --summary "$WORK/$name-kernel.json" \
      > "$WORK/$name-kernel.log" 2>&1; then
    echo "$name (kernel): pool-serve failed:"; tail -3 "$WORK/$name-kernel.log"; failed=1; return 0
  fi
  if ! grep -q '"model_impl": "kernel ' "$WORK/$name-kernel.json"; then
    echo "$name (kernel): the summary does not name the kernel"; failed=1
  fi
  if cmp -s "$WORK/$name-on.jsonl" "$WORK/$name-kernel.jsonl"; then
    printf '%-40s header kernel == manifest reference\n' "$name"
  else
    echo "$name: the header kernel's outputs differ from the reference model's"; failed=1
  fi
}
kernel_refused() { # NAME ARTIFACT KERNEL: must be refused, naming the fingerprint
  local name=$1 art=$2 lib=$3
  if "$SERVE" replay "$TRACE" --artifact "$art" --progress none --model-kernel "$lib" \
      > "$WORK/$name-refused.log" 2>&1; then
    echo "$name: the kernel was accepted on an artifact of another layout"; failed=1
  elif grep -q "was compiled against layout" "$WORK/$name-refused.log"; then
    printf '%-40s kernel refused (layout fingerprint)\n' "$name"
  else
    echo "$name: refused for another reason:"; tail -2 "$WORK/$name-refused.log"; failed=1
  fi
}
for m in "${MODELS[@]}"; do
  n=$(basename "$m" .yaml)
  # Per-model overrides for the serving test (none unless listed): the
  # hybrids keep their structure at a size the trace passes. Gemma 3 at
  # 4 GiB keeps 6 layers (1 global + 5 sliding) and a 128-token window, so
  # the trace's prompts pass the window and blocks are released, and half
  # the budget past the reserves caches released window blocks.
  extra=()
  case $n in
    gemma-3-27b) extra=(--param layers=6 --param window=128 --param window_cache_percent=50) ;;
    # Llama 4 at 4 GiB: 8 layers (2 global + 6 chunked), chunks of 64
    # tokens, forwards of 32, two drafts per step (the release margin and
    # the junk rows of rejected drafts).
    llama-4-scout) extra=(--param layers=8 --param chunk=64 --param chunk_forward=32 --param num_spec=2) ;;
  esac
  "$POOLC" "$m" --budget "$BUDGET" --max-num-seqs "$SEQS" "${extra[@]}" --targets host -o "$WORK/$n.poolpack"
  read -r spec bs < <("$POOLC" "$m" --budget "$BUDGET" --max-num-seqs "$SEQS" "${extra[@]}" --emit=report | \
         python3 -c "import json,sys; g=json.load(sys.stdin)['geometry']; print(g.get('spec_depth', 0), g['block_size'])")
  # A shared system prompt of at least two blocks, so a model with large
  # blocks (Kimi-K3: 1,536 tokens) has full blocks to hit.
  # (an interval below the block snaps to 0, the ladder off).
  base_trace=$TRACE
  INTERVAL=$(( bs > 256 ? bs : 256 ))
  if [ "$bs" -gt 128 ] && [ "$TRACE" = "$DEFAULT_TRACE" ]; then
    TRACE=${TRACE/system-tokens=256/system-tokens=$((2 * bs))}
  fi
  compare "$n" "$WORK/$n.poolpack" "$spec" same
  if [ -n "$KERNEL_DIR" ] && [ -f "$KERNEL_DIR/libpoolmodel-$n.so" ]; then
    kernel_run "$n" "$WORK/$n.poolpack" "$spec" "$KERNEL_DIR/libpoolmodel-$n.so"
  elif [ -n "$KERNEL_DIR" ] && [ "$(dirname "$m")" = "$ROOT/models" ]; then
    # Only models with window classes have no kernel (models/reference
    # builds one per bundled model).
    if ! grep -Eq 'attention:.*kind: *(sliding|chunked)' "$m"; then
      echo "$n: no model kernel was built"; failed=1
    else
      printf '%-40s no model kernel (window classes: reference model only)\n' "$n"
    fi
  fi
  TRACE=$base_trace
  INTERVAL=256
done
if [ -n "$KERNEL_DIR" ] && [ -f "$WORK/llama-3.1-8b.poolpack" ]; then
  kernel_refused qwen-kernel-on-llama "$WORK/llama-3.1-8b.poolpack" "$KERNEL_DIR/libpoolmodel-qwen3.5-27b.so"
  "$POOLC" "$ROOT/models/llama-3.1-8b.yaml" --budget 3GiB --max-num-seqs "$SEQS" --targets host -o "$WORK/llama-3g.poolpack"
  kernel_refused llama-kernel-other-budget "$WORK/llama-3g.poolpack" "$KERNEL_DIR/libpoolmodel-llama-3.1-8b.so"
fi
reader_refused() { # NAME ARTIFACT: the reader finds the layout fingerprint broken
  local name=$1 art=$2
  if "$SERVE" replay "$TRACE" --artifact "$art" --progress none > "$WORK/$name-reader.log" 2>&1; then
    echo "$name: an altered layout was served"; failed=1
  elif grep -q "layout_fingerprint: is 0x.*the layout was altered" "$WORK/$name-reader.log"; then
    printf '%-40s refused at read (layout fingerprint)\n' "$name"
  else
    echo "$name: refused for another reason:"; tail -2 "$WORK/$name-reader.log"; failed=1
  fi
}
# One offset broken on purpose. With the compiler's layout fingerprint kept,
# the reader refuses the copy. Without it (a manifest older than the key),
# the copy is served and the comparison must fail, and a kernel built
# against the header refuses it.
if [ -f "$WORK/deepseek-v4-flash-dspark-fp8.poolpack" ]; then
  python3 "$ROOT/test/Serve/mutate_artifact.py" "$PYPATH" "$WORK/deepseek-v4-flash-dspark-fp8.poolpack" \
    "$WORK/v4-moved-field-fp.poolpack" field csa_idx_kv 2600000 --keep-layout-fingerprint
  reader_refused v4-moved-field-fp "$WORK/v4-moved-field-fp.poolpack"
  python3 "$ROOT/test/Serve/mutate_artifact.py" "$PYPATH" "$WORK/deepseek-v4-flash-dspark-fp8.poolpack" \
    "$WORK/v4-moved-field.poolpack" field csa_idx_kv 2600000
  compare v4-moved-field "$WORK/v4-moved-field.poolpack" 3 differ
  [ -n "$KERNEL_DIR" ] && kernel_refused v4-moved-field "$WORK/v4-moved-field.poolpack" \
    "$KERNEL_DIR/libpoolmodel-deepseek-v4-flash-dspark-fp8.so"
fi
if [ -f "$WORK/qwen3.5-27b.poolpack" ]; then
  python3 "$ROOT/test/Serve/mutate_artifact.py" "$PYPATH" "$WORK/qwen3.5-27b.poolpack" \
    "$WORK/qwen-moved-region-fp.poolpack" region state -4096 --keep-layout-fingerprint
  reader_refused qwen-moved-region-fp "$WORK/qwen-moved-region-fp.poolpack"
  python3 "$ROOT/test/Serve/mutate_artifact.py" "$PYPATH" "$WORK/qwen3.5-27b.poolpack" \
    "$WORK/qwen-moved-region.poolpack" region state -4096
  compare qwen-moved-region "$WORK/qwen-moved-region.poolpack" 0 differ
  [ -n "$KERNEL_DIR" ] && kernel_refused qwen-moved-region "$WORK/qwen-moved-region.poolpack" \
    "$KERNEL_DIR/libpoolmodel-qwen3.5-27b.so"
fi
# Two STATE classes in one group: the second class's region moved (its
# layout fingerprint dropped) must change the outputs, so the reference
# model reads, and the engine forks, the second class too.
if [ -f "$WORK/jamba-split-state.poolpack" ]; then
  python3 "$ROOT/test/Serve/mutate_artifact.py" "$PYPATH" "$WORK/jamba-split-state.poolpack" \
    "$WORK/split-moved-ssm.poolpack" region ssm -4096
  compare split-moved-ssm "$WORK/split-moved-ssm.poolpack" 0 differ
fi
exit $failed
