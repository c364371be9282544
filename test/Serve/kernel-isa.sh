#!/usr/bin/env bash
# The reference-model kernel (models/reference/token_model.h) compiled for
# the GPUs without any SDK, against three bundled models' address headers
# (flat with fork state, DeepSeek-V4's row space, plain KV): PTX for sm_90
# (clang-22 -x cuda) and AMDGPU ISA for gfx942 and gfx950 (clang-22 -x hip),
# checked with FileCheck: the entry point exists, its state and KV accesses
# are 8-byte global loads and stores.
#
#   kernel-isa.sh CLANG FILECHECK HEADER_DIR WORKDIR
set -euo pipefail
CLANG=$1 FC=$2 HDRS=$3 WORK=$4
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
SRC=$ROOT/models/reference/device_kernel.cpp
mkdir -p "$WORK"
cat > "$WORK/ptx.check" <<'X'
CHECK: .target sm_90
CHECK: .visible .entry poolmodel_kernel(
CHECK: ld.global.b64
CHECK: st.global.b64
CHECK: ret;
X
cat > "$WORK/amdgpu.check" <<'X'
CHECK: .amdgcn_target "amdgcn-amd-amdhsa--[[ARCH:gfx9[45][02]]]
CHECK-LABEL: poolmodel_kernel:
CHECK: global_load_dwordx2
CHECK: global_store_dwordx2
CHECK: s_endpgm
CHECK: .amdhsa_kernel poolmodel_kernel
X
for m in qwen3.5-27b deepseek-v4-flash-dspark-fp8 llama-3.1-8b; do
  h=$HDRS/$m.h
  "$CLANG" -x cuda --cuda-gpu-arch=sm_90 -nocudainc -nocudalib --cuda-device-only \
    -Wno-unknown-cuda-version -O2 -std=c++17 -S -include "$h" -I"$ROOT/models/reference" \
    "$SRC" -o "$WORK/$m.ptx"
  "$FC" "$WORK/ptx.check" --input-file "$WORK/$m.ptx"
  for arch in gfx942 gfx950; do
    "$CLANG" -x hip --offload-arch=$arch -nogpuinc -nogpulib --offload-device-only \
      -O2 -std=c++17 -S -include "$h" -I"$ROOT/models/reference" "$SRC" -o "$WORK/$m-$arch.s"
    "$FC" "$WORK/amdgpu.check" --input-file "$WORK/$m-$arch.s"
  done
  echo "$m: PTX sm_90, gfx942, gfx950 checked"
done
