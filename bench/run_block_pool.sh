#!/usr/bin/env bash
# Measures poolrt::BlockPool against the reference's Python BlockPool on one
# prefix-sharing trace, in one run: generates the trace with
# shared/bench/make_prefix_trace.py, replays it through both (same driver
# logic, same pool size), checks both handed out the same blocks (checksum of
# every id taken, in order) and prints ns per pool operation and the ratio.
#
# usage: bench/run_block_pool.sh [BUILD_DIR] [NUM_BLOCKS] [-- trace-generator args]
#   BUILD_DIR   a configured build with the pool-bench target (default build)
#   NUM_BLOCKS  pool size for both pools (default 8192)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
blocks=${2:-8192}
shift $(( $# > 2 ? 2 : $# ))
[ "${1:-}" = "--" ] && shift
shared=${POOLC_SHARED:-$root/../shared}
trace=$(mktemp /tmp/prefix_trace.XXXXXX)
trap 'rm -f "$trace"' EXIT

python3 "$shared/bench/make_prefix_trace.py" -o "$trace" "$@"
cmake --build "$build" --target pool-bench >/dev/null

cxx_out=$("$build/bench/pool-bench" --trace="$trace" --num-blocks="$blocks" \
  --benchmark_repetitions=5 --benchmark_min_time=0.3 --benchmark_format=json)
py_out=$(python3 "$root/bench/reference_block_pool.py" "$trace" \
  --num-blocks "$blocks" --repeat 3)

python3 - "$cxx_out" "$py_out" "$blocks" <<'PY'
import json, sys
cxx, py, blocks = sys.argv[1], sys.argv[2], sys.argv[3]
cxx_line, cxx_json = cxx.split("\n", 1)
runs = [b["ns_per_op"] * 1e9 for b in json.loads(cxx_json)["benchmarks"]
        if b.get("run_type") == "iteration"]
cxx_ns = min(runs)
py_lines = py.strip().splitlines()
py_ns = float(py_lines[-1].split("ns_per_op=")[1].split()[0])
strip = lambda s: s.split(": ", 1)[1]
same = strip(cxx_line) == strip(py_lines[0])
print(f"trace: {strip(cxx_line)}  (pool of {blocks} blocks)")
print(f"hand-outs identical (checksum of every id taken): {'yes' if same else 'NO'}")
print(f"python reference BlockPool : {py_ns:8.2f} ns/op (best of 3 replays)")
print(f"poolrt::BlockPool (C++)    : {cxx_ns:8.2f} ns/op (best of 5; median "
      f"{sorted(runs)[len(runs) // 2]:.2f})")
print(f"ratio                      : {py_ns / cxx_ns:8.1f}x")
sys.exit(0 if same else 1)
PY
