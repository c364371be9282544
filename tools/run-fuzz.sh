#!/usr/bin/env bash
# Build the libFuzzer targets (clang-22, ASan + UBSan) in build-fuzz/,
# replay every seed and saved regression in test/Fuzz/corpus/<target>/, then
# fuzz each target for FUZZ_SECONDS (default 60) from a scratch copy of its
# corpus, or for FUZZ_RUNS executions (then without a time limit unless
# FUZZ_SECONDS is given too). A crash is copied into
# test/Fuzz/corpus/<target>/ (so it becomes a regression input) and the
# script exits non-zero.
#   FUZZ_SECONDS=600 tools/run-fuzz.sh      # a longer recorded run
#   FUZZ_RUNS=1000000 tools/run-fuzz.sh     # 10^6 executions per target
#   FUZZ_TARGETS="yaml capi" ...            # a subset (default all six)
# Needs build/bin/poolc (tools/build.sh) for the C API target's artifact.
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${FUZZ_RUNS:-}
# libFuzzer reads -max_total_time=0 as no limit.
if [ -n "$RUNS" ]; then SECONDS_EACH=${FUZZ_SECONDS:-0}; else SECONDS_EACH=${FUZZ_SECONDS:-60}; fi
TARGETS=${FUZZ_TARGETS:-yaml mlir manifest artifact capi trace}
if [ ! -f build-fuzz/build.ninja ]; then
  cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPOOLC_FUZZ=ON \
    -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
    -DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache
fi
cmake --build build-fuzz -j "$(nproc)"
BIN=build-fuzz/test/Fuzz
WORK=build-fuzz/fuzz-work
mkdir -p "$WORK"
# The C API target drives a cache manager configured from a real
# row-space, copy-checkpoint artifact.
build/bin/poolc models/deepseek-v4-flash-fp8.yaml --budget 1GiB --max-num-seqs 4 \
  --targets host -o "$WORK/v4-small.poolpack"
export POOLC_FUZZ_ARTIFACT="$PWD/$WORK/v4-small.poolpack"
export ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1
status=0
for t in $TARGETS; do
  corpus=test/Fuzz/corpus/$t
  # Replay: every seed and regression input runs once.
  "$BIN/fuzz-$t" -runs=0 "$corpus" > "$WORK/$t.replay.log" 2>&1 || {
    echo "fuzz-$t: replaying $corpus failed:"; tail -30 "$WORK/$t.replay.log"; status=1; continue; }
  rm -rf "$WORK/$t.corpus"; cp -r "$corpus" "$WORK/$t.corpus"
  rm -f "$WORK"/crash-$t-*
  start=$SECONDS
  if "$BIN/fuzz-$t" "$WORK/$t.corpus" -max_total_time="$SECONDS_EACH" ${RUNS:+-runs="$RUNS"} \
       -max_len=65536 -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
       -artifact_prefix="$WORK/crash-$t-" > "$WORK/$t.log" 2>&1; then
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$WORK/$t.log")
    # The last status line: coverage (cov), features (ft), corpus size.
    last=$(grep -E '^#[0-9]+' "$WORK/$t.log" | tail -1 | grep -oE 'cov: [0-9]+ ft: [0-9]+ corp: [^ ]+' || true)
    echo "fuzz-$t: ${runs:-?} executions in $((SECONDS - start)) s${last:+ ($last)}, no finding"
  else
    echo "fuzz-$t: FINDING (kept in $corpus):"; tail -40 "$WORK/$t.log"
    for c in "$WORK"/crash-$t-*; do [ -e "$c" ] && cp "$c" "$corpus/"; done
    status=1
  fi
done
exit $status
