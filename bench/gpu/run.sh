#!/usr/bin/env bash
# GPU check and benchmark of the generated NVPTX kernels, in one device call.
#
# Here (this machine, with the project built):
#   bash bench/gpu/run.sh prepare     # artifact + plan into .gpu-carry/
# Then, through the device tool, carrying .gpu-carry:
#   bash bench/gpu/run.sh device      # builds gpu_check there, runs it
#   bash bench/gpu/run.sh device-serve  # only pool-serve's engine on CUDA
#   bash bench/gpu/run.sh device-kernel # only the model kernel (nvcc) on CUDA
#   bash bench/gpu/run.sh prepare-python  # here: only what device-python needs
#   bash bench/gpu/run.sh device-python   # the poolrt module on CUDA, through torch
#   bash bench/gpu/run.sh prepare-kernels # here: only what device-kernels needs
#   bash bench/gpu/run.sh device-kernels  # only gpu_check: the kernels against memcpy,
#                                         # per-run memcpy, and the --gpu-unroll variants
#   bash bench/gpu/run.sh device-profile  # ncu over PROFILE_CASES (after prepare-kernels)
#   bash bench/gpu/run.sh prepare-tier    # here: only what device-tier needs
#   bash bench/gpu/run.sh device-tier     # one tier load from page-locked host memory
# The device step needs only CUDA, g++ and the carried files.
set -euo pipefail
cd "$(dirname "$0")/../.."
MODEL=${MODEL:-models/deepseek-v4-flash-fp8.yaml}
BUDGET=${BUDGET:-64GiB}
SEQS=${SEQS:-256}
BUILD=${BUILD:-build}   # the build directory holding bin/poolc, bin/pool-kernel-check
SERVE_TRACE=${SERVE_TRACE:-multi-turn:conversations=24,turns=3,system-tokens=512,output-max=24}
# 1,000 requests through the model kernel built with nvcc against the header.
SERVE_TRACE_1K=${SERVE_TRACE_1K:-multi-turn:conversations=250,turns=4,system-tokens=512,user-max=96,output-max=32}
# Every runtime library's include folder (each library has its own).
RT_INC="-Iruntime/base/include -Iruntime/layout/include -Iruntime/pools/include \
  -Iruntime/device/include -Iruntime/tier/include -Iruntime/serve/include"
# The tier without hiredis (none there): Redis is refused with a message.
TIER_SOURCES="runtime/tier/Tier.cpp runtime/tier/DiskTier.cpp runtime/tier/Transfer.cpp bench/gpu/no_redis.cpp"
build_serve_device() {
  # shellcheck disable=SC2086
  g++ -O2 -std=c++17 $RT_INC -Imodels/reference -I.gpu-carry test/Serve/serve_device.cpp \
    runtime/serve/*.cpp runtime/device/*.cpp runtime/pools/*.cpp runtime/layout/*.cpp $TIER_SOURCES \
    -DXXH_INLINE_ALL -ldl -pthread -o /tmp/serve_device
}
# One tier load from page-locked host memory (bench/tier/tier_load.cpp):
# V4-Flash DSpark FP8, a 4096-token prefix (the seed's load), and Qwen3.5
# and Llama for a fork and a stateless geometry.
prepare_tier() {
  mkdir -p .gpu-carry/tier
  "./$BUILD/bin/poolc" models/deepseek-v4-flash-dspark-fp8.yaml --budget 8GiB --max-num-seqs 16 \
    --targets sm_90,host -o .gpu-carry/tier/v4.poolpack
  "./$BUILD/bin/poolc" models/qwen3.5-27b.yaml --budget 8GiB --max-num-seqs 16 \
    --targets sm_90,host -o .gpu-carry/tier/qwen.poolpack
  "./$BUILD/bin/poolc" models/llama-3.1-8b.yaml --budget 8GiB --max-num-seqs 16 \
    --targets sm_90,host -o .gpu-carry/tier/llama.poolpack
  # The seed's workload (bench/tier/run_seed.sh) through the engine on the
  # GPU with the host tier, against a cold run's outputs here.
  "./$BUILD/bin/poolc" models/deepseek-v4-flash-dspark-fp8.yaml --budget 110MiB --max-num-seqs 4 \
    --targets sm_90,host -o .gpu-carry/tier/v4-seed.poolpack
  python3 bench/tier/make_seed_trace.py .gpu-carry/tier/seed.jsonl 32 1
  "./$BUILD/bin/pool-serve" replay .gpu-carry/tier/seed.jsonl --artifact .gpu-carry/tier/v4-seed.poolpack \
    --checkpoint-interval 256 --progress none --no-prefix-cache --outputs .gpu-carry/tier/seed-cold.jsonl > /dev/null
  cp /usr/include/xxhash.h .gpu-carry/
}
tier_on_device() {
  echo
  echo "== one tier load from the host tier onto the GPU (page-locked), against cuMemcpyHtoD of the same bytes =="
  # shellcheck disable=SC2086
  g++ -O2 -std=c++17 $RT_INC -I.gpu-carry bench/tier/tier_load.cpp runtime/serve/TierDevice.cpp \
    runtime/device/*.cpp runtime/pools/*.cpp runtime/layout/*.cpp $TIER_SOURCES \
    -DXXH_INLINE_ALL -ldl -pthread -o /tmp/tier_load
  /tmp/tier_load .gpu-carry/tier/v4.poolpack cuda 4096 500
  /tmp/tier_load .gpu-carry/tier/v4.poolpack cuda 256 500
  /tmp/tier_load .gpu-carry/tier/qwen.poolpack cuda 4096 200
  /tmp/tier_load .gpu-carry/tier/llama.poolpack cuda 4096 100
  echo
  echo "== the tier seed's workload through pool-serve's engine on the GPU, host tier (page-locked) =="
  build_serve_device
  POOLC_TIER=host:12GiB /tmp/serve_device .gpu-carry/tier/v4-seed.poolpack cuda .gpu-carry/tier/seed.jsonl \
    0 256 on > /tmp/seed-tier.jsonl
  if cmp -s /tmp/seed-tier.jsonl .gpu-carry/tier/seed-cold.jsonl; then same=identical; else same=DIFFERENT; fi
  echo "seed workload on CUDA through the host tier: $(wc -l < /tmp/seed-tier.jsonl) requests, outputs $same to a cold run's on the host"
}
serve_kernel_on_device() {
  echo
  echo "== the reference-model kernel (token_model.h) built by nvcc against each artifact's header =="
  nvcc --version | tail -2 | head -1
  for m in v4:3 qwen:0; do
    n=${m%%:*}
    nvcc -O2 -std=c++17 -arch=sm_90 -shared -Xcompiler -fPIC -include ".gpu-carry/serve/$n.h" \
      -Imodels/reference models/reference/cuda_ops.cu -o "/tmp/libpoolmodel-$n-cuda.so"
    for pc in on off; do
      out="/tmp/$n-kernel-cuda-$pc.jsonl"
      t0=$(date +%s.%N)
      /tmp/serve_device ".gpu-carry/serve/$n.poolpack" cuda "$SERVE_TRACE_1K" "${m##*:}" 256 $pc \
        "/tmp/libpoolmodel-$n-cuda.so" > "$out"
      t1=$(date +%s.%N)
      if cmp -s "$out" ".gpu-carry/serve/$n-host-1k-$pc.jsonl"; then same=identical; else same=DIFFERENT; fi
      echo "$n cache $pc: $(wc -l < "$out") requests through the CUDA kernel, outputs $same to the host reference's ($(python3 -c "print(round($t1-$t0,1))" 2>/dev/null || echo ?) s)"
    done
    if cmp -s "/tmp/$n-kernel-cuda-on.jsonl" "/tmp/$n-kernel-cuda-off.jsonl"; then same=identical; else same=DIFFERENT; fi
    echo "$n through the CUDA kernel: cache on and off $same"
  done
}
serve_on_device() {
  echo
  echo "== pool-serve's engine on CUDA: outputs against the host's, cache on and off =="
  build_serve_device
  for m in v4:3 qwen:0; do
    for pc in on off; do
      out="/tmp/${m%%:*}-cuda-$pc.jsonl"
      /tmp/serve_device ".gpu-carry/serve/${m%%:*}.poolpack" cuda "$SERVE_TRACE" "${m##*:}" 256 $pc > "$out"
      if cmp -s "$out" ".gpu-carry/serve/${m%%:*}-host-$pc.jsonl"; then same=identical; else same=DIFFERENT; fi
      echo "${m%%:*} cache $pc: $(wc -l < "$out") requests, outputs on CUDA $same to the host's"
    done
    if cmp -s "/tmp/${m%%:*}-cuda-on.jsonl" "/tmp/${m%%:*}-cuda-off.jsonl"; then same=identical; else same=DIFFERENT; fi
    echo "${m%%:*} on CUDA: cache on and off $same"
  done
}
# The poolrt module built there for its python3 (the one holding torch; its
# pip pybind11 gives the includes), without the host JIT (no LLVM there):
# the CUDA backend only.
build_python_device() {
  local out=/tmp/poolrt-py ext pyinc
  mkdir -p $out /tmp/pyobj
  ext=$(python3 -c "import sysconfig; print(sysconfig.get_config_var('EXT_SUFFIX'))")
  pyinc=$(python3 -m pybind11 --includes)
  local pids=() f
  # shellcheck disable=SC2086
  for f in runtime/python/*.cpp runtime/serve/*.cpp runtime/device/*.cpp runtime/pools/*.cpp \
           runtime/layout/*.cpp $TIER_SOURCES; do
    g++ -O2 -std=c++17 -fPIC -fvisibility=hidden $pyinc $RT_INC -Iruntime/python \
      -Imodels/reference -I.gpu-carry -DXXH_INLINE_ALL -c "$f" \
      -o "/tmp/pyobj/$(echo "$f" | tr / _).o" & pids+=($!)
  done
  for f in "${pids[@]}"; do wait "$f"; done
  g++ -shared /tmp/pyobj/*.o -ldl -pthread -o "$out/poolrt$ext"
}
python_on_device() {
  echo
  echo "== the poolrt Python module on CUDA (torch.from_dlpack, kernels launched from Python) =="
  build_python_device
  python3 -c "import torch; print('torch', torch.__version__, torch.cuda.get_device_name(0))"
  PYTHONPATH=/tmp/poolrt-py PYTHONDONTWRITEBYTECODE=1 \
    POOLRT_TEST_ARTIFACT=.gpu-carry/py/v4-small.poolpack \
    POOLRT_TEST_FORK_ARTIFACT=.gpu-carry/py/qwen-small.poolpack \
    python3 -m pytest -v -p no:cacheprovider runtime/python/test_cuda.py
}
# The model's artifact, the plan, and the same model with each of VARIANTS'
# kernel knobs: uN is --gpu-unroll N, sN the same with --gpu-streaming, lN
# the same with one unrolled loop per segment (--gpu-segment-table=false:
# the kernels before the segment table), tN with a segment table in every
# kernel (each block copies one chunk of the item's concatenated
# segments), cN the compiler's tables walked in chunks, wN in tiles dealt
# round the item's blocks (--gpu-table-walk=tile, the default; wN-T with
# tiles of T vectors), xN (xN-T) a tile-walked table in every kernel, rN-T
# the compiler's tables in tiles of T vectors inside one segment each
# (--gpu-table-walk=run), yN-T a run-walked table in every kernel, mN
# the compiler's kernels with --gpu-min-blocks N (registers left for N
# blocks an SM); gpu_check times them side by side in one run.
VARIANTS=${VARIANTS:-l2 u1 l1 u4 s2}
prepare_kernels() {
  mkdir -p .gpu-carry
  "./$BUILD/bin/poolc" "$MODEL" --budget "$BUDGET" --max-num-seqs "$SEQS" \
    --targets sm_90,host -o .gpu-carry/model.poolpack
  "./$BUILD/bin/pool-kernel-check" "$MODEL" --budget "$BUDGET" --max-num-seqs "$SEQS" \
    --gpu-plan .gpu-carry/plan.txt 2>/dev/null
  rm -f .gpu-carry/model-[ustlmwxcry]*.poolpack
  local v knobs
  for v in $VARIANTS; do
    case "$v" in
    u[1-8]) knobs="--gpu-unroll ${v#u} --gpu-streaming=false" ;;
    s[1-8]) knobs="--gpu-unroll ${v#s} --gpu-streaming" ;;
    l[1-8]) knobs="--gpu-unroll ${v#l} --gpu-streaming=false --gpu-segment-table=false" ;;
    t[1-8]) knobs="--gpu-unroll ${v#t} --gpu-streaming=false --gpu-segment-table --gpu-table-walk=chunk" ;;
    c[1-8]) knobs="--gpu-unroll ${v#c} --gpu-streaming=false --gpu-table-walk=chunk" ;;
    w[1-8]) knobs="--gpu-unroll ${v#w} --gpu-streaming=false --gpu-table-walk=tile" ;;
    w[1-8]-[1-9]*) knobs="--gpu-unroll ${v:1:1} --gpu-streaming=false --gpu-table-walk=tile --gpu-tile-vectors ${v#w?-}" ;;
    x[1-8]-[1-9]*) knobs="--gpu-unroll ${v:1:1} --gpu-streaming=false --gpu-segment-table --gpu-table-walk=tile --gpu-tile-vectors ${v#x?-}" ;;
    x[1-8]) knobs="--gpu-unroll ${v#x} --gpu-streaming=false --gpu-segment-table --gpu-table-walk=tile" ;;
    r[1-8]-[1-9]*) knobs="--gpu-unroll ${v:1:1} --gpu-streaming=false --gpu-table-walk=run --gpu-tile-vectors ${v#r?-}" ;;
    y[1-8]-[1-9]*) knobs="--gpu-unroll ${v:1:1} --gpu-streaming=false --gpu-segment-table --gpu-table-walk=run --gpu-tile-vectors ${v#y?-}" ;;
    m[1-9]|m[1-3][0-9]) knobs="--gpu-min-blocks ${v#m}" ;;
    *) echo "run.sh: variant '$v': expected uN, sN, lN, tN, cN, wN or xN (N in 1..8), wN-T, xN-T, rN-T or yN-T (T vectors a tile) or mN (N in 1..32)" >&2; return 2 ;;
    esac
    # shellcheck disable=SC2086
    "./$BUILD/bin/poolc" "$MODEL" --budget "$BUDGET" --max-num-seqs "$SEQS" \
      --targets sm_90 $knobs -o ".gpu-carry/model-$v.poolpack"
  done
  cp /usr/include/xxhash.h .gpu-carry/
  rm -rf .gpu-carry/nlohmann && cp -r /usr/include/nlohmann .gpu-carry/
  # The copy probes' PTX, where this machine has a CUDA toolkit (no GPU
  # needed): the device call then spends no time in nvcc.
  rm -rf .gpu-carry/probe
  local nvcc v hint order
  nvcc=$(command -v nvcc || ls /usr/local/cuda*/bin/nvcc 2>/dev/null | tail -1 || true)
  if [ -n "$nvcc" ] && [ -x "$nvcc" ]; then
    mkdir -p .gpu-carry/probe
    for v in "ldg x4:0:0" $PROBE_VARIANTS; do
      hint=${v#*:}; order=${hint#*:}; hint=${hint%%:*}
      "$nvcc" -ptx -arch=sm_90 -DPROBE_HINT="$hint" -DPROBE_ORDER="$order" \
        -o ".gpu-carry/probe/copy_probe-$hint-$order.ptx" bench/gpu/copy_probe.cu
    done
  fi
}
build_gpu_check() {
  [ -x /tmp/gpu_check ] && [ /tmp/gpu_check -nt bench/gpu/gpu_check.cpp ] && return 0
  g++ -O2 -std=c++17 -I. $RT_INC -I.gpu-carry -I/usr/local/cuda/include \
    bench/gpu/gpu_check.cpp runtime/layout/*.cpp -DXXH_INLINE_ALL -ldl \
    -o /tmp/gpu_check
}
# Nsight Compute over PROFILE_CASES (gpu_check's POOL_PROFILE_CASE mode:
# the case's kernel launched twice at the runtime's grid, the second
# profiled), for the base artifact and each of PROFILE_VARIANTS. The full
# reports go to $OUT (or /tmp), a summary to stdout.
PROFILE_CASES=${PROFILE_CASES:-image_gather_x256 image_store_x64}
PROFILE_VARIANTS=${PROFILE_VARIANTS:-}
# The copy probe's further builds, NAME:PROBE_HINT:PROBE_ORDER each.
PROBE_VARIANTS=${PROBE_VARIANTS:-"l2-256B:1:0 evict-first:2:0 nc+cs:3:0 chunks:0:1"}
profile_on_device() {
  build_gpu_check
  local ncu out=${OUT:-/tmp} c k v art probe=.gpu-carry/probe/copy_probe-0-0.ptx
  local sections=(--section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy
    --section WarpStateStats --section LaunchStats
    --metrics dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_write.sum)
  local summary="profiled|==ERROR|DRAM Throughput|Memory Throughput|Duration|Achieved Occupancy|Theoretical Occupancy|Registers Per|L2 Hit|L1/TEX Hit|Warp Cycles Per Issued|Stall|dram__bytes|lts__t_sectors"
  ncu=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null || true)
  if [ -z "$ncu" ]; then
    echo "no ncu on this machine"
    return 0
  fi
  for c in $PROFILE_CASES; do
    k=$(awk -v c="$c" '$1 == "case" && $2 == c { print $3; exit }' .gpu-carry/plan.txt)
    for v in base $PROFILE_VARIANTS; do
      art=.gpu-carry/model-$v.poolpack
      [ "$v" = base ] && art=.gpu-carry/model.poolpack
      echo "== ncu: $c ($k), $v =="
      POOL_PROFILE_CASE=$c "$ncu" -k "regex:^$k\$" --launch-skip 1 --launch-count 1 \
        "${sections[@]}" \
        /tmp/gpu_check "$art" .gpu-carry/plan.txt > "$out/ncu-$c-$v.txt" 2>&1 || true
      grep -E "$summary" "$out/ncu-$c-$v.txt" | head -28
    done
    # The same bytes through the hand-written probe_ldg, over the case's
    # runs and laid out contiguously (the ceiling of an SM-issued copy),
    # and whether the memcpy baseline runs as a kernel ncu can see.
    [ -f "$probe" ] || continue
    for v in runs contiguous; do
      echo "== ncu: $c, probe_ldg over $v =="
      POOL_PROFILE_CASE=$c POOL_PROFILE_PROBE=$v POOL_COPY_PROBE="ldg x4=$probe" \
        "$ncu" -k "regex:^probe_ldg\$" --launch-skip 1 --launch-count 1 "${sections[@]}" \
        /tmp/gpu_check .gpu-carry/model.poolpack .gpu-carry/plan.txt \
        > "$out/ncu-$c-probe-$v.txt" 2>&1 || true
      grep -E "$summary" "$out/ncu-$c-probe-$v.txt" | head -28
    done
    echo "== ncu (no kernel filter): $c, the memcpy baseline =="
    POOL_PROFILE_CASE=$c POOL_PROFILE_PROBE=memcpy "$ncu" --launch-count 4 \
      /tmp/gpu_check .gpu-carry/model.poolpack .gpu-carry/plan.txt \
      > "$out/ncu-$c-memcpy.txt" 2>&1 || true
    grep -E "profiled|==PROF==|==WARNING==|==ERROR==|Duration|DRAM Throughput" \
      "$out/ncu-$c-memcpy.txt" | head -12
  done
}
gpu_check_on_device() {
  build_gpu_check
  local variants=() f
  for f in .gpu-carry/model-[ustlmwxcry]*.poolpack; do
    [ -e "$f" ] && variants+=("$(basename "$f" .poolpack | sed 's/^model-//')=$f")
  done
  # The hand-written probes beside them, where nvcc is there.
  # One module per variant (PROBE_VARIANTS: NAME:HINT:ORDER, see
  # copy_probe.cu), so a hint ptxas refuses costs only its own column.
  # Modules prepare-kernels built here (a local CUDA toolkit) are used as
  # they are; the rest are built there.
  local probe="" nvcc v name hint order ptx
  nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
  for v in "ldg x4:0:0" $PROBE_VARIANTS; do
    name=${v%%:*}; hint=${v#*:}; order=${hint#*:}; hint=${hint%%:*}
    ptx=.gpu-carry/probe/copy_probe-$hint-$order.ptx
    if [ ! -f "$ptx" ]; then
      ptx=/tmp/copy_probe-$hint-$order.ptx
      [ -x "$nvcc" ] && "$nvcc" -ptx -arch=sm_90 -DPROBE_HINT="$hint" -DPROBE_ORDER="$order" \
        -o "$ptx" bench/gpu/copy_probe.cu || continue
    fi
    probe="$probe${probe:+,}$name=$ptx"
  done
  POOL_COPY_PROBE=$probe /tmp/gpu_check .gpu-carry/model.poolpack .gpu-carry/plan.txt "${variants[@]}"
}
prepare_python() {
  mkdir -p .gpu-carry/py
  "./$BUILD/bin/poolc" models/deepseek-v4-flash-fp8.yaml --budget 1GiB --max-num-seqs 4 \
    --targets sm_90,host -o .gpu-carry/py/v4-small.poolpack
  "./$BUILD/bin/poolc" models/qwen3.5-27b.yaml --budget 2GiB --max-num-seqs 4 \
    --targets sm_90,host -o .gpu-carry/py/qwen-small.poolpack
  cp /usr/include/xxhash.h .gpu-carry/
  rm -rf .gpu-carry/nlohmann && cp -r /usr/include/nlohmann .gpu-carry/
}
case "${1:-}" in
prepare-tier)
  prepare_tier
  echo "prepared: $(ls .gpu-carry/tier)"
  ;;
device-tier)
  nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader || true
  tier_on_device
  ;;
prepare-kernels)
  prepare_kernels
  echo "prepared: $(ls .gpu-carry)"
  ;;
device-kernels)
  nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader || true
  gpu_check_on_device
  ;;
device-profile)
  nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader || true
  profile_on_device
  ;;
prepare-python)
  prepare_python
  echo "prepared: $(ls .gpu-carry/py)"
  ;;
device-python)
  nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader || true
  python_on_device
  ;;
prepare)
  prepare_kernels
  # The end-to-end tests' artifacts: V4 at 1 GiB (moving the boundary) and
  # Qwen3.5 (fork transfer); copy_e2e runs on model.poolpack.
  "./$BUILD/bin/poolc" models/deepseek-v4-flash-fp8.yaml --budget 1GiB --max-num-seqs 4 \
    --targets sm_90,host -o .gpu-carry/v4-small.poolpack
  "./$BUILD/bin/poolc" models/qwen3.5-27b.yaml --budget 24GiB --max-num-seqs 16 \
    --targets sm_90,host -o .gpu-carry/qwen.poolpack
  # pool-serve's engine on the GPU (test/Serve/serve_device.cpp): V4-Flash
  # DSpark (copy, 3 drafts) and Qwen3.5 (fork) at real budgets, and the
  # host's outputs for the same trace, cache on and off, to compare with.
  mkdir -p .gpu-carry/serve
  "./$BUILD/bin/poolc" models/deepseek-v4-flash-dspark-fp8.yaml --budget 96GiB --max-num-seqs 256 \
    --targets sm_90,host -o .gpu-carry/serve/v4.poolpack
  "./$BUILD/bin/poolc" models/qwen3.5-27b.yaml --budget 96GiB --max-num-seqs 256 \
    --targets sm_90,host -o .gpu-carry/serve/qwen.poolpack
  for m in v4:3 qwen:0; do
    for pc in on off; do
      flag=""; [ $pc = off ] && flag=--no-prefix-cache
      "./$BUILD/bin/pool-serve" replay "$SERVE_TRACE" --artifact ".gpu-carry/serve/${m%%:*}.poolpack" \
        --num-spec "${m##*:}" --checkpoint-interval 256 --progress none $flag \
        --outputs ".gpu-carry/serve/${m%%:*}-host-$pc.jsonl"
      "./$BUILD/bin/pool-serve" replay "$SERVE_TRACE_1K" --artifact ".gpu-carry/serve/${m%%:*}.poolpack" \
        --num-spec "${m##*:}" --checkpoint-interval 256 --progress none $flag \
        --outputs ".gpu-carry/serve/${m%%:*}-host-1k-$pc.jsonl" --summary ".gpu-carry/serve/${m%%:*}-host-1k-$pc.json"
    done
  done
  # The address headers the model kernel is built against there, and the
  # same kernel built here for the host against them: its outputs must
  # already equal the reference model's.
  "./$BUILD/bin/poolc" models/deepseek-v4-flash-dspark-fp8.yaml --budget 96GiB --max-num-seqs 256 \
    --emit=header -o .gpu-carry/serve/v4.h
  "./$BUILD/bin/poolc" models/qwen3.5-27b.yaml --budget 96GiB --max-num-seqs 256 \
    --emit=header -o .gpu-carry/serve/qwen.h
  for m in v4:3 qwen:0; do
    n=${m%%:*}
    g++ -O2 -std=c++17 -shared -fPIC -include ".gpu-carry/serve/$n.h" -Imodels/reference \
      models/reference/host_ops.cpp -o "/tmp/libpoolmodel-$n-host.so"
    "./$BUILD/bin/pool-serve" replay "$SERVE_TRACE_1K" --artifact ".gpu-carry/serve/$n.poolpack" \
      --num-spec "${m##*:}" --checkpoint-interval 256 --progress none \
      --model-kernel "/tmp/libpoolmodel-$n-host.so" --outputs "/tmp/$n-host-kernel-1k.jsonl"
    cmp "/tmp/$n-host-kernel-1k.jsonl" ".gpu-carry/serve/$n-host-1k-on.jsonl"
    echo "$n: the host kernel built on the 96 GiB header equals the reference model (1,000 requests)"
  done
  prepare_python
  prepare_tier
  cp /usr/include/xxhash.h .gpu-carry/   # Debian's libxxhash-dev header, used header-only there
  rm -rf .gpu-carry/nlohmann && cp -r /usr/include/nlohmann .gpu-carry/  # nlohmann-json3-dev, header-only
  echo "prepared: $(ls .gpu-carry)"
  ;;
device)
  nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader || true
  gpu_check_on_device
  echo
  echo "== libpoolrt device conformance suite (CUDA backend) =="
  g++ -O2 -std=c++17 -I. $RT_INC -I.gpu-carry tools/pool-device-check/pool-device-check.cpp \
    runtime/device/*.cpp runtime/pools/*.cpp runtime/layout/*.cpp -DXXH_INLINE_ALL -ldl -o /tmp/pool-device-check
  # --plan: the expected hashes come from host kernels checked against the
  # independent reference (pool-kernel-check), not from the artifact.
  /tmp/pool-device-check .gpu-carry/model.poolpack --backend cuda --plan .gpu-carry/plan.txt
  echo
  echo "== end-to-end tests through the cache manager (CUDA backend) =="
  for t in copy:model fork:qwen boundary:v4-small; do
    g++ -O2 -std=c++17 $RT_INC -I.gpu-carry -Itest/E2E "test/E2E/${t%%:*}_e2e.cpp" \
      runtime/device/*.cpp runtime/pools/*.cpp runtime/layout/*.cpp -DXXH_INLINE_ALL -ldl \
      -o "/tmp/${t%%:*}_e2e"
    "/tmp/${t%%:*}_e2e" ".gpu-carry/${t##*:}.poolpack" cuda
  done
  serve_on_device
  serve_kernel_on_device
  tier_on_device
  ;;
device-serve) # only the serving comparison
  nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader || true
  serve_on_device
  serve_kernel_on_device
  ;;
device-kernel) # only the model kernel on CUDA, 1,000 requests
  nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader || true
  build_serve_device
  serve_kernel_on_device
  ;;
*)
  echo "usage: bench/gpu/run.sh prepare|device|prepare-kernels|device-kernels|device-serve|device-kernel|prepare-python|device-python|prepare-tier|device-tier" >&2
  exit 2
  ;;
esac
