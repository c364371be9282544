#!/usr/bin/env bash
# The tier seed's GSM8K-style two-pass run (make_gsm8k_trace.py: a shared
# 8-shot block, questions of their own, pass 2 repeating pass 1) through
# every backend, per model, with an HBM pool far below the working set.
# Every row's outputs must be byte-identical to a cold run's
# (--no-prefix-cache) of the same prompts; the table gives where pass 2's
# prompt tokens came from.
#
#   one process: both passes in one pool-serve run (host, disk, host+disk);
#   restart:     pass 1 in one process, pass 2 in a fresh one on the warm
#                tier (disk, host+disk);
#   two procs:   the same across two pool-serve processes sharing one
#                redis-server (started here on loopback with a password).
#
#   run_two_pass.sh [BUILD_DIR] [QUESTIONS]      (prints a Markdown table)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
B=${1:-$ROOT/build} N=${2:-48}
W=$(mktemp -d)
REDIS_PID=""
cleanup() {
  [ -n "$REDIS_PID" ] && kill "$REDIS_PID" 2>/dev/null && wait "$REDIS_PID" 2>/dev/null
  rm -rf "$W"
}
trap cleanup EXIT
python3 "$ROOT/bench/tier/make_gsm8k_trace.py" "$W/two.jsonl" "$N" 2
python3 "$ROOT/bench/tier/make_gsm8k_trace.py" "$W/one.jsonl" "$N" 1
REDIS_URL=""
if command -v redis-server > /dev/null; then
  port=$(python3 -c "import socket; s=socket.socket(); s.bind(('127.0.0.1',0)); print(s.getsockname()[1])")
  redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no --requirepass twopass \
    --dir "$W" > "$W/redis.log" 2>&1 & REDIS_PID=$!
  for _ in $(seq 50); do
    redis-cli -p "$port" -a twopass --no-auth-warning ping > /dev/null 2>&1 && break
    sleep 0.1
  done
  REDIS_URL="redis://:twopass@127.0.0.1:$port"
fi

row() { # SUMMARY MODEL BACKEND HOW SAME WALL [WARM_TRACE]
  python3 - "$@" <<'PY'
import json, sys
s = json.load(open(sys.argv[1])); t = s["tier"]; sh = t["shares"]
ceiling = t["ceiling_hit_rate"]
if len(sys.argv) > 7:
    # Pass 2 alone on a warm tier: pass 1 saw every prompt, so every
    # 256-grid boundary short of a prompt's last token can hit.
    lens = [json.loads(l)["input_length"] for l in open(sys.argv[7])]
    ceiling = sum((n - 1) // 256 * 256 for n in lens) / sum(lens)
print(f"| {sys.argv[2]} | {sys.argv[3]} | {sys.argv[4]} | {100*sh['hbm']:.1f}% | {100*sh['tier']:.1f}% | "
      f"{100*sh['recomputed']:.1f}% | {100*s['hit_rate']:.2f}% | {100*ceiling:.2f}% | "
      f"{100*s['hit_rate']/ceiling:.1f}% | {t['loads']['late']} / {t['loads']['failed']} | "
      f"{sys.argv[5]} | {float(sys.argv[6]):.1f} |")
PY
}
serve() { # ARTIFACT TRACE OUT SUMMARY ARGS...
  local art=$1 trace=$2 out=$3 sum=$4
  shift 4
  "$B/bin/pool-serve" replay "$trace" --artifact "$art" --checkpoint-interval 256 --progress none \
    --outputs "$out" --summary "$sum" "$@" > /dev/null
}
same() { cmp -s "$1" "$2" && echo identical || echo DIFFER; }

echo "| model (HBM budget) | backend | how | HBM | tier | recomputed | hit | 256-grid ceiling | hit / ceiling | late / failed loads | outputs | wall s |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
# MODELS: MODEL:BUDGET words.
for spec in ${MODELS:-qwen3.5-27b:2GiB deepseek-v4-flash-dspark-fp8:110MiB llama-3.1-8b:1GiB}; do
  m=${spec%%:*} budget=${spec##*:}
  art="$W/$m.poolpack"
  "$B/bin/poolc" "$ROOT/models/$m.yaml" --budget "$budget" --max-num-seqs 4 --targets host -o "$art"
  serve "$art" "$W/two.jsonl" "$W/cold2.jsonl" "$W/c.json" --no-prefix-cache
  serve "$art" "$W/one.jsonl" "$W/cold1.jsonl" "$W/c.json" --no-prefix-cache
  for tier in "host:12GiB" "disk:$W/d1-$m:32GiB" "host:1GiB+disk:$W/d2-$m:32GiB"; do
    t0=$(date +%s.%N)
    serve "$art" "$W/two.jsonl" "$W/t.jsonl" "$W/t.json" --tier "$tier"
    t1=$(date +%s.%N)
    row "$W/t.json" "$m ($budget)" "${tier//$W/DIR}" "one process, both passes" \
      "$(same "$W/t.jsonl" "$W/cold2.jsonl")" "$(echo "$t1 - $t0" | bc)"
  done
  # Pass 1 fills a fresh tier; pass 2 runs in a new process on what it left.
  tiers=("disk:$W/d3-$m:32GiB" "host:1GiB+disk:$W/d4-$m:32GiB")
  [ -n "$REDIS_URL" ] && tiers+=("$REDIS_URL")
  for tier in "${tiers[@]}"; do
    serve "$art" "$W/one.jsonl" "$W/p1.jsonl" "$W/p1.json" --tier "$tier"
    [ "$(same "$W/p1.jsonl" "$W/cold1.jsonl")" = identical ] || echo "pass 1 through $tier DIFFERS" >&2
    t0=$(date +%s.%N)
    serve "$art" "$W/one.jsonl" "$W/p2.jsonl" "$W/p2.json" --tier "$tier"
    t1=$(date +%s.%N)
    how="pass 2 after a restart"
    [ "$tier" = "$REDIS_URL" ] && how="pass 2 in a second process"
    shown=${tier//$W/DIR}
    shown=${shown//twopass/***}
    row "$W/p2.json" "$m ($budget)" "$shown" "$how" \
      "$(same "$W/p2.jsonl" "$W/cold1.jsonl")" "$(echo "$t1 - $t0" | bc)" "$W/one.jsonl"
  done
  [ -n "$REDIS_URL" ] && redis-cli -p "$port" -a twopass --no-auth-warning flushall > /dev/null
done
