#!/usr/bin/env bash
# The offload tier through pool-serve (specs/tier.md), on a stateless model
# (Llama 3.1), a fork-state model (Qwen3.5) and a copy-state row-space model
# (DeepSeek-V4), each at an HBM budget far below the trace's working set:
#
#   * the seed's workload, small (four shared prefixes, a tail each),
#     replayed twice in one run through the host tier, the disk tier and
#     host over disk: outputs byte-identical to a cold run, tier hits > 0;
#   * restart: a second pool-serve on the first one's warm disk tier hits
#     from its first request, outputs identical;
#   * a damaged object on disk is refused (counted) and never restored;
#   * three data-parallel ranks share one tier: a prefix one rank stored
#     loads on another;
#   * Redis (when REDIS_URL is set: tier-redis-serve runs this under
#     test/Tier/with-redis.sh): two processes share one fleet cache, and a
#     Redis killed mid-run, or one that never answers, costs counted
#     failures and recompute, never a hang, a crash or a different output.
#
#   tier.sh POOLC POOL_SERVE WORKDIR [local|redis]
# local (default): every case but Redis's; redis: the Redis cases (a server
# at REDIS_URL or POOLC_TEST_REDIS) and what they compare against.
set -euo pipefail
POOLC=$1 SERVE=$2 WORK=$3 MODE=${4:-local}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
REDIS_URL=${REDIS_URL:-${POOLC_TEST_REDIS:-}}
rm -rf "$WORK"; mkdir -p "$WORK"
failed=0
python3 "$ROOT/bench/tier/make_seed_trace.py" "$WORK/seed.jsonl" 8 2 1024 700
python3 "$ROOT/bench/tier/make_seed_trace.py" "$WORK/pass1.jsonl" 8 1 1024 700

summary() { # FILE EXPR: a value of the summary
  python3 -c "import json,sys; s=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))" "$1" "$2"
}
replay() { # NAME ARTIFACT TRACE ARGS...: run, keep outputs and summary
  local name=$1 art=$2 trace=$3; shift 3
  if ! "$SERVE" replay "$trace" --artifact "$art" --checkpoint-interval 256 --progress none \
      --outputs "$WORK/$name.jsonl" --summary "$WORK/$name.json" "$@" > "$WORK/$name.log" 2>&1; then
    echo "$name: pool-serve failed:"; tail -3 "$WORK/$name.log"; failed=1; return 1
  fi
}
same() { # NAME COLD: outputs identical to the cold run's
  if cmp -s "$WORK/$1.jsonl" "$WORK/$2.jsonl"; then return 0; fi
  echo "$1: outputs differ from the cold run"; failed=1; return 1
}
check() { # NAME COLD MIN_TIER_TOKENS
  local name=$1 cold=$2 min=$3
  same "$name" "$cold" || return 0
  local t r
  t=$(summary "$WORK/$name.json" "s['tier']['hit_tokens']['tier']")
  r=$(summary "$WORK/$name.json" "round(100*s['tier']['hit_vs_ceiling'],1)")
  printf "%-36s tier %6d tokens  %6s%% of the trace's own 256-grid ceiling  outputs identical\n" "$name" "$t" "$r"
  if [ "$t" -lt "$min" ]; then echo "$name: tier hit $t < $min"; failed=1; fi
}

declare -A BUDGET=([llama-3.1-8b]=300MiB [qwen3.5-27b]=200MiB [deepseek-v4-flash-dspark-fp8]=70MiB)
MODELS=(llama-3.1-8b qwen3.5-27b deepseek-v4-flash-dspark-fp8)
[ "$MODE" = redis ] && MODELS=(qwen3.5-27b)
for m in "${MODELS[@]}"; do
  art="$WORK/$m.poolpack"
  "$POOLC" "$ROOT/models/$m.yaml" --budget "${BUDGET[$m]}" --max-num-seqs 2 --targets host -o "$art"
  replay "$m-cold" "$art" "$WORK/seed.jsonl" --no-prefix-cache || continue
  replay "$m-p1-cold" "$art" "$WORK/pass1.jsonl" --no-prefix-cache
  [ "$MODE" = redis ] && continue
  replay "$m-host" "$art" "$WORK/seed.jsonl" --tier host:2GiB && check "$m-host" "$m-cold" 1
  replay "$m-disk" "$art" "$WORK/seed.jsonl" --tier "disk:$WORK/$m-d1:4GiB" && check "$m-disk" "$m-cold" 1
  replay "$m-stack" "$art" "$WORK/seed.jsonl" --tier "host:64MiB+disk:$WORK/$m-d2:4GiB" &&
    check "$m-stack" "$m-cold" 1
  # Restart on the warm disk tier: pass 1 alone, in a fresh process, hits
  # the objects the last run stored (pass 1 of a cold tier has only the
  # prefixes' repeats).
  replay "$m-p1-warm" "$art" "$WORK/pass1.jsonl" --tier "disk:$WORK/$m-d1:4GiB" &&
    check "$m-p1-warm" "$m-p1-cold" 1
  # More than a cold tier gives the same pass: every prompt's tail too.
  replay "$m-p1-first" "$art" "$WORK/pass1.jsonl" --tier "disk:$WORK/$m-fresh:4GiB"
  cold_t=$(summary "$WORK/$m-p1-first.json" "s['tier']['hit_tokens']['tier']")
  warm_t=$(summary "$WORK/$m-p1-warm.json" "s['tier']['hit_tokens']['tier']")
  if [ "$warm_t" -le "$cold_t" ]; then
    echo "$m: a warm disk tier after a restart hit $warm_t tokens, no more than a cold one ($cold_t)"; failed=1
  fi
done

if [ "$MODE" = local ]; then
# A damaged object: one byte of every object flipped past the header; the
# next run refuses them (counted), removes them, and recomputes.
m=deepseek-v4-flash-dspark-fp8
python3 - "$WORK/$m-d1" <<'EOF'
import os, sys
d = sys.argv[1]
for n in sorted(os.listdir(d)):
    if n.endswith(".obj"):
        p = os.path.join(d, n)
        with open(p, "r+b") as f:
            f.seek(100); b = f.read(1); f.seek(100); f.write(bytes([b[0] ^ 0x5A]))
EOF
replay "$m-damaged" "$WORK/$m.poolpack" "$WORK/pass1.jsonl" --tier "disk:$WORK/$m-d1:4GiB" &&
  same "$m-damaged" "$m-p1-cold" &&
  { r=$(summary "$WORK/$m-damaged.json" "s['tier']['loads']['objects_refused']")
    t=$(summary "$WORK/$m-damaged.json" "s['tier']['hit_tokens']['tier']")
    printf '%-34s %d damaged objects refused, %d tier tokens, outputs identical\n' "$m-damaged" "$r" "$t"
    [ "$r" -ge 1 ] || { echo "$m-damaged: no object was refused"; failed=1; }; }

# Data-parallel ranks share one tier: with three ranks and four prefixes,
# each prefix's requests land on different ranks, so a rank can only have
# a prefix hit from what another rank stored (none from its own HBM).
python3 "$ROOT/bench/tier/make_seed_trace.py" "$WORK/ranks.jsonl" 12 1 1024 700
replay "$m-ranks-cold" "$WORK/$m.poolpack" "$WORK/ranks.jsonl" --no-prefix-cache &&
replay "$m-ranks" "$WORK/$m.poolpack" "$WORK/ranks.jsonl" --ranks 3 --tier host:1GiB &&
  same "$m-ranks" "$m-ranks-cold" &&
  { t=$(summary "$WORK/$m-ranks.json" "s['tier']['hit_tokens']['tier']")
    h=$(summary "$WORK/$m-ranks.json" "s['tier']['hit_tokens']['hbm']")
    printf '%-34s 3 ranks, one tier: %d tokens loaded across ranks, %d from HBM, outputs identical\n' "$m-ranks" "$t" "$h"
    [ "$t" -ge 1 ] || { echo "$m-ranks: no rank loaded what another stored"; failed=1; }
    [ "$h" -eq 0 ] || { echo "$m-ranks: an HBM hit where no rank sees a prefix twice"; failed=1; }; }

# A tier spec that cannot work is refused before anything runs.
for bad in "host:" "disk:/proc/poolc-nope:1GiB" "ftp://x" "redis://127.0.0.1:1"; do
  if "$SERVE" replay "$WORK/pass1.jsonl" --artifact "$WORK/$m.poolpack" --progress none \
      --tier "$bad" > "$WORK/bad.log" 2>&1; then
    echo "--tier '$bad' was accepted"; failed=1
  elif ! grep -q "error:" "$WORK/bad.log"; then
    echo "--tier '$bad': no error message"; failed=1
  fi
  # A malformed spec is named as the flag the user typed (the library says
  # "tier spec", pool-serve maps it to its flag).
  case "$bad" in host:|ftp://x)
    grep -qF -- "--tier '$bad'" "$WORK/bad.log" ||
      { echo "--tier '$bad': the error does not name the flag"; cat "$WORK/bad.log"; failed=1; } ;;
  esac
done
fi

if [ "$MODE" = redis ]; then
  [ -n "$REDIS_URL" ] || { echo "tier.sh redis: no REDIS_URL / POOLC_TEST_REDIS"; exit 1; }
  m=qwen3.5-27b
  art="$WORK/$m.poolpack"
  # Two processes, one fleet cache: the second hits what the first stored.
  replay "$m-redis-a" "$art" "$WORK/pass1.jsonl" --tier "$REDIS_URL" && same "$m-redis-a" "$m-p1-cold"
  replay "$m-redis-b" "$art" "$WORK/pass1.jsonl" --tier "$REDIS_URL" && check "$m-redis-b" "$m-p1-cold" 1
  a=$(summary "$WORK/$m-redis-a.json" "s['tier']['hit_tokens']['tier']")
  b=$(summary "$WORK/$m-redis-b.json" "s['tier']['hit_tokens']['tier']")
  [ "$b" -gt "$a" ] || { echo "redis: the second process hit $b tokens, no more than the first ($a)"; failed=1; }
  # Both at once on a third prompt set (another salt would be another
  # fleet: the same trace, so they race on the same keys).
  replay "$m-redis-c" "$art" "$WORK/seed.jsonl" --tier "$REDIS_URL" & pc=$!
  replay "$m-redis-d" "$art" "$WORK/seed.jsonl" --tier "$REDIS_URL" & pd=$!
  wait $pc || failed=1; wait $pd || failed=1
  same "$m-redis-c" "$m-cold"; same "$m-redis-d" "$m-cold"
  printf '%-34s two processes at once, outputs identical\n' "$m-redis-c/d"

  # Redis killed mid-run: watch /metrics until stores land, then kill it.
  # Another budget is another layout fingerprint, so every key is new and
  # the run stores rather than finds.
  if [ -n "${POOLC_TEST_REDIS_PID:-}" ]; then
    art="$WORK/$m-k.poolpack"
    "$POOLC" "$ROOT/models/$m.yaml" --budget 210MiB --max-num-seqs 2 --targets host -o "$art"
    replay "$m-k-cold" "$art" "$WORK/seed.jsonl" --no-prefix-cache
    "$SERVE" replay "$WORK/seed.jsonl" --artifact "$art" --checkpoint-interval 256 --progress none \
      --tier "$REDIS_URL" --listen 127.0.0.1:0 --outputs "$WORK/$m-killed.jsonl" \
      --summary "$WORK/$m-killed.json" > "$WORK/$m-killed.log" 2>&1 & ps=$!
    for _ in $(seq 1 200); do
      port=$(grep -o 'metrics on http://127.0.0.1:[0-9]*' "$WORK/$m-killed.log" | head -1 | sed 's/.*://' || true)
      if [ -n "$port" ] && python3 - "$port" <<'EOF'
import re, sys, urllib.request
try:
    t = urllib.request.urlopen(f"http://127.0.0.1:{sys.argv[1]}/metrics", timeout=2).read().decode()
except OSError:
    sys.exit(1)
m = re.search(r'tier_stores_total\{[^}]*outcome="written"[^}]*\} (\d+)', t)
sys.exit(0 if m and int(m.group(1)) > 0 else 1)
EOF
      then break; fi
      sleep 0.05
    done
    kill -9 "$POOLC_TEST_REDIS_PID"
    if wait $ps; then
      same "$m-killed" "$m-k-cold" && {
        f=$(summary "$WORK/$m-killed.json" "s['tier']['loads']['failed'] + s['tier']['stores']['failed']")
        printf '%-34s redis killed mid-run: %d failures counted, outputs identical\n' "$m-killed" "$f"
        [ "$f" -ge 1 ] || { echo "$m-killed: no failure counted"; failed=1; }; }
    else
      echo "$m-killed: pool-serve failed when Redis died:"; tail -3 "$WORK/$m-killed.log"; failed=1
    fi
  fi
fi

[ "$MODE" = local ] || exit $failed
# A Redis that accepts and never answers (no password, so connecting
# succeeds): every lookup and store times out, is counted, and the run
# recomputes; the breaker keeps it to about one timeout a second.
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()')
python3 - "$port" <<'EOF' & silent=$!
import socket, sys, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(16)
held = []
while True:
    c, _ = s.accept(); held.append(c)  # read nothing, answer nothing
EOF
# Wait until it listens (an interpreter can take a second to start): probe
# with bash's own /dev/tcp, up to 20 s.
for _ in $(seq 200); do
  (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
  sleep 0.1
done
m=deepseek-v4-flash-dspark-fp8
start=$(date +%s)
replay "$m-silent" "$WORK/$m.poolpack" "$WORK/pass1.jsonl" --tier "redis://127.0.0.1:$port" &&
  same "$m-silent" "$m-p1-cold" &&
  { f=$(summary "$WORK/$m-silent.json" "s['tier']['loads']['failed'] + s['tier']['stores']['failed']")
    printf '%-34s a silent Redis: %d failures counted in %d s, outputs identical\n' "$m-silent" "$f" "$(( $(date +%s) - start ))"
    [ "$f" -ge 1 ] || { echo "$m-silent: no failure counted"; failed=1; }; }
kill $silent 2>/dev/null || true
exit $failed
