#!/usr/bin/env bash
# The whole test suite: lit (dialect, passes, tools, models), GoogleTest unit
# tests, the conformance vectors, and the unit + conformance tests again
# under AddressSanitizer/UBSan. Exits non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/install-deps.sh
bash tools/build.sh
(cd build && ctest --output-on-failure)

# Sanitizer build of the MLIR-free code (arithmetic, YAML reader, pools,
# devices).
# The end-to-end tests (host kernels through the pools) run there too, on
# artifacts the main build's poolc writes.
if [ ! -f build-asan/build.ninja ]; then
  cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPOOLC_SANITIZE=ON \
    -DPOOLC_FOR_TESTS="$PWD/build/bin/poolc" \
    -DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache
fi
cmake --build build-asan -j "$(nproc)"
(cd build-asan && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 ctest --output-on-failure)

# ThreadSanitizer: pool-serve's metrics server scraped by four clients
# while the engine replays a trace.
if [ ! -f build-tsan/build.ninja ]; then
  cmake -S . -B build-tsan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPOOLC_TSAN=ON \
    -DPOOLC_FOR_TESTS="$PWD/build/bin/poolc" \
    -DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache
fi
cmake --build build-tsan -j "$(nproc)"
(cd build-tsan && ctest --output-on-failure)

# libFuzzer targets (YAML front end, manifest reader, .poolpack container, C
# API): replay the corpus, then a bounded run of each (FUZZ_SECONDS).
FUZZ_SECONDS=${FUZZ_SECONDS:-45} bash tools/run-fuzz.sh
