#!/usr/bin/env bash
# GPU check and benchmark of the generated NVPTX kernels, in one device call.
#
# Here (this machine, with the project built):
#   bash bench/gpu/run.sh prepare     # artifact + plan into .gpu-carry/
# Then, through the device tool, carrying .gpu-carry:
#   bash bench/gpu/run.sh device      # builds gpu_check there, runs it
# The device step needs only CUDA, g++ and the carried files.
set -euo pipefail
cd "$(dirname "$0")/../.."
MODEL=${MODEL:-models/deepseek-v4-flash-fp8.yaml}
BUDGET=${BUDGET:-64GiB}
SEQS=${SEQS:-256}
BUILD=${BUILD:-build}   # the build directory holding bin/poolc, bin/pool-kernel-check
case "${1:-}" in
prepare)
  mkdir -p .gpu-carry
  "./$BUILD/bin/poolc" "$MODEL" --budget "$BUDGET" --max-num-seqs "$SEQS" \
    --targets sm_90,host -o .gpu-carry/model.poolpack
  "./$BUILD/bin/pool-kernel-check" "$MODEL" --budget "$BUDGET" --max-num-seqs "$SEQS" \
    --gpu-plan .gpu-carry/plan.txt 2>/dev/null
  # The end-to-end tests' artifacts: V4 at 1 GiB (moving the boundary) and
  # Qwen3.5 (fork transfer); copy_e2e runs on model.poolpack.
  "./$BUILD/bin/poolc" models/deepseek-v4-flash-fp8.yaml --budget 1GiB --max-num-seqs 4 \
    --targets sm_90,host -o .gpu-carry/v4-small.poolpack
  "./$BUILD/bin/poolc" models/qwen3.5-27b.yaml --budget 24GiB --max-num-seqs 16 \
    --targets sm_90,host -o .gpu-carry/qwen.poolpack
  cp /usr/include/xxhash.h .gpu-carry/   # Debian's libxxhash-dev header, used header-only there
  rm -rf .gpu-carry/nlohmann && cp -r /usr/include/nlohmann .gpu-carry/  # nlohmann-json3-dev, header-only
  echo "prepared: $(ls .gpu-carry)"
  ;;
device)
  nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader || true
  g++ -O2 -std=c++17 -Iruntime/include -I.gpu-carry -I/usr/local/cuda/include \
    bench/gpu/gpu_check.cpp runtime/layout/Artifact.cpp -DXXH_INLINE_ALL -ldl \
    -o /tmp/gpu_check
  /tmp/gpu_check .gpu-carry/model.poolpack .gpu-carry/plan.txt
  echo
  echo "== libpoolrt device conformance suite (CUDA backend) =="
  g++ -O2 -std=c++17 -Iruntime/include -I.gpu-carry tools/pool-device-check/pool-device-check.cpp \
    runtime/device/*.cpp runtime/pools/*.cpp runtime/layout/*.cpp -DXXH_INLINE_ALL -ldl -o /tmp/pool-device-check
  /tmp/pool-device-check .gpu-carry/model.poolpack --backend cuda
  echo
  echo "== end-to-end tests through the cache manager (CUDA backend) =="
  for t in copy:model fork:qwen boundary:v4-small; do
    g++ -O2 -std=c++17 -Iruntime/include -I.gpu-carry -Itest/E2E "test/E2E/${t%%:*}_e2e.cpp" \
      runtime/device/*.cpp runtime/pools/*.cpp runtime/layout/*.cpp -DXXH_INLINE_ALL -ldl \
      -o "/tmp/${t%%:*}_e2e"
    "/tmp/${t%%:*}_e2e" ".gpu-carry/${t##*:}.poolpack" cuda
  done
  ;;
*)
  echo "usage: bench/gpu/run.sh prepare|device" >&2
  exit 2
  ;;
esac
