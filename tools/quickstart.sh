#!/usr/bin/env bash
# Set up a fresh Debian 12 machine (packages, build) and compile the bundled
# DeepSeek-V4-Flash (fp8) model for a 150 GiB budget and 256 sequences,
# printing its plan. Extra arguments go to poolc (e.g. --emit=report).
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/install-deps.sh
bash tools/build.sh
echo
./build/bin/poolc models/deepseek-v4-flash-fp8.yaml --budget 150GiB --max-num-seqs 256 --emit=text "$@"
