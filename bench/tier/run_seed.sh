#!/usr/bin/env bash
# The tier seed's workload (make_seed_trace.py: four 4096-token prefixes,
# each prompt one of them plus a 3000-token tail, 64 output tokens) through
# pool-serve with an HBM pool far below the working set, per model and
# backend: the HBM / tier / recomputed shares and the hit rate against the
# trace's 256-grid ceiling. Outputs are checked identical to a cold run.
#
#   run_seed.sh [BUILD_DIR] [REQUESTS]     (prints a Markdown table)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
B=${1:-$ROOT/build} N=${2:-64}
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
python3 "$ROOT/bench/tier/make_seed_trace.py" "$W/seed.jsonl" "$N" 1
echo "| model (HBM budget) | backend | HBM | tier | recomputed | hit | 256-grid ceiling | hit / ceiling | late / failed loads | load p50 / p99 ms | outputs | wall s |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
# MODELS: MODEL:BUDGET words.
for spec in ${MODELS:-qwen3.5-27b:2GiB deepseek-v4-flash-dspark-fp8:110MiB llama-3.1-8b:1GiB}; do
  m=${spec%%:*} budget=${spec##*:}
  "$B/bin/poolc" "$ROOT/models/$m.yaml" --budget "$budget" --max-num-seqs 4 --targets host -o "$W/$m.poolpack"
  "$B/bin/pool-serve" replay "$W/seed.jsonl" --artifact "$W/$m.poolpack" --checkpoint-interval 256 \
    --progress none --no-prefix-cache --outputs "$W/cold.jsonl" > /dev/null
  # The host tier holds objects in this machine's memory (24 GiB here).
  for tier in "host:12GiB" "host:1GiB+disk:$W/disk-$m:32GiB"; do
    t0=$(date +%s.%N)
    "$B/bin/pool-serve" replay "$W/seed.jsonl" --artifact "$W/$m.poolpack" --checkpoint-interval 256 \
      --progress none --tier "$tier" --outputs "$W/t.jsonl" --summary "$W/t.json" > /dev/null
    t1=$(date +%s.%N)
    same=$(cmp -s "$W/cold.jsonl" "$W/t.jsonl" && echo identical || echo DIFFER)
    python3 - "$W/t.json" "$m ($budget)" "${tier//$W/DIR}" "$same" "$(echo "$t1 - $t0" | bc)" <<'PY'
import json, sys
s = json.load(open(sys.argv[1])); t = s["tier"]; sh = t["shares"]
print(f"| {sys.argv[2]} | {sys.argv[3]} | {100*sh['hbm']:.1f}% | {100*sh['tier']:.1f}% | "
      f"{100*sh['recomputed']:.1f}% | {100*s['hit_rate']:.2f}% | {100*t['ceiling_hit_rate']:.2f}% | "
      f"{100*t['hit_vs_ceiling']:.1f}% | {t['loads']['late']} / {t['loads']['failed']} | "
      f"{t['loads']['latency_us']['p50']/1000:.1f} / {t['loads']['latency_us']['p99']/1000:.1f} | "
      f"{sys.argv[4]} | {float(sys.argv[5]):.1f} |")
PY
  done
done
