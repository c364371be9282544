#!/usr/bin/env bash
# Set up a fresh Debian 12 machine (packages, build), compile the bundled
# DeepSeek-V4-Flash (fp8) model for a 150 GiB budget and 256 sequences and
# print its plan (extra arguments go to this poolc, e.g. --emit=report),
# then serve it: a host artifact at a budget this machine holds, replayed
# over a multi-turn trace by pool-serve (the prefix cache on, its hit rate
# against the trace's ceiling).
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/install-deps.sh
bash tools/build.sh
echo
./build/bin/poolc models/deepseek-v4-flash-fp8.yaml --budget 150GiB --max-num-seqs 256 --emit=text "$@"
echo
./build/bin/poolc models/deepseek-v4-flash-fp8.yaml --budget 4GiB --max-num-seqs 16 \
  --targets host -o build/quickstart-v4.poolpack
./build/bin/pool-serve replay multi-turn:conversations=64,turns=3 \
  --artifact build/quickstart-v4.poolpack --progress lines --summary build/quickstart-summary.json
