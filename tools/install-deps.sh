#!/usr/bin/env bash
# Install the Debian 12 packages poolc builds and tests with. Idempotent:
# does nothing when every package is already installed.
set -euo pipefail
PKGS=(
  cmake ninja-build ccache g++ python3
  llvm-22-dev libmlir-22-dev mlir-22-tools llvm-22-tools clang-22 lld-22 clang-tools-22
  libyaml-cpp-dev libgtest-dev libbenchmark-dev libxxhash-dev nlohmann-json3-dev
  pybind11-dev python3-dev python3-pytest python3-numpy python3-mypy python3-venv python3-wheel
  libclang-rt-22-dev libfuzzer-22-dev
  libcpp-httplib-dev libcli11-dev python3-prometheus-client
  libhiredis-dev redis-server
  chromium
)
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# The explorer's browser test drives Debian's chromium with the
# playwright-core pinned in test/Explore/package-lock.json (npm registry).
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO=sudo
npm_deps() {
  local dir
  dir="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/test/Explore"
  if [ ! -f "$dir/node_modules/playwright-core/package.json" ]; then
    if ! command -v npm >/dev/null; then
      echo "install-deps: no npm on this machine; installing Debian's nodejs and npm"
      $SUDO apt-get install -y -qq --no-install-recommends nodejs npm
    fi
    echo "install-deps: npm ci in test/Explore"
    npm ci --prefix "$dir" --no-audit --no-fund --loglevel=error
  fi
}
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#PKGS[@]} packages present"
  npm_deps
  exit 0
fi
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO=sudo
echo "install-deps: installing ${missing[*]}"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
npm_deps
