#!/usr/bin/env bash
# pool-device-check --plan on the host backend: the kernel cases of a plan
# written by pool-kernel-check (hashes from host kernels checked against the
# independent reference) must all match on an artifact of the same layout;
# a plan with one hash changed, and a plan of another layout, must fail.
#
#   plan-check.sh POOLC POOL_KERNEL_CHECK POOL_DEVICE_CHECK MODELS WORKDIR
set -euo pipefail
POOLC=$1 KCHECK=$2 DCHECK=$3 MODELS=$4 WORK=$5
mkdir -p "$WORK"
M=$MODELS/deepseek-v4-flash-fp8.yaml
"$KCHECK" "$M" --budget 1GiB --max-num-seqs 4 --plan-items 8 --gpu-plan "$WORK/plan.txt" > "$WORK/kcheck.log"
grep -q ": ok$" "$WORK/kcheck.log"   # the host kernels agreed with the reference
"$KCHECK" "$M" --budget 1GiB --max-num-seqs 3 --plan-items 4 --gpu-plan "$WORK/plan-3.txt" > /dev/null
"$POOLC" "$M" --budget 1GiB --max-num-seqs 4 --targets host -o "$WORK/v4.poolpack"
cases=$(grep -c '^case ' "$WORK/plan.txt")
[ "$cases" -ge 8 ]
"$DCHECK" "$WORK/v4.poolpack" --backend host --plan "$WORK/plan.txt" > "$WORK/ok.log"
grep -q "^\[host plan\] $cases of $cases cases match" "$WORK/ok.log"
echo "plan of $cases cases: all match on the host backend"
# One expected hash changed: that case must fail, by name.
awk 'BEGIN{d=0} /^expect / && !d {print "expect 0123456789abcdef"; d=1; next} {print}' \
  "$WORK/plan.txt" > "$WORK/edited.txt"
if "$DCHECK" "$WORK/v4.poolpack" --backend host --plan "$WORK/edited.txt" > "$WORK/edited.log"; then
  echo "an edited hash passed"; exit 1
fi
grep -q "FAIL: \[host plan\] .*reference-checked host lowering 0123456789abcdef" "$WORK/edited.log"
echo "an edited hash fails"
# A plan of another layout (three sequences): refused, not compared.
if "$DCHECK" "$WORK/v4.poolpack" --backend host --plan "$WORK/plan-3.txt" > "$WORK/other.log"; then
  echo "another layout's plan passed"; exit 1
fi
grep -q "the plan's arena" "$WORK/other.log"
echo "another layout's plan is refused"
# A malformed plan: a clear error naming the line.
printf 'arena_bytes 4096\ncase x k items 1 staging 0 moved 0\nfill 1\n' > "$WORK/bad.txt"
if "$DCHECK" "$WORK/v4.poolpack" --backend host --plan "$WORK/bad.txt" 2> "$WORK/bad.log"; then
  echo "a malformed plan passed"; exit 1
fi
grep -q "bad.txt:3: fill needs OFFSET LENGTH" "$WORK/bad.log"
echo "a malformed plan is refused at its line"
