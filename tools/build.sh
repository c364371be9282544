#!/usr/bin/env bash
# Configure and build poolc in build/ (Release, Ninja, ccache).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
JOBS=${JOBS:-$(nproc)}
if [ ! -f "$BUILD_DIR/build.ninja" ]; then
  cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache
fi
cmake --build "$BUILD_DIR" -j "$JOBS"

# Make `import poolrt` work: a .pth file pointing at the built module, in the
# site-packages of every python3 the machine offers (PATH's and Debian's).
pydir="$(cd "$BUILD_DIR/python" && pwd)"
for py in python3 /usr/bin/python3; do
  command -v "$py" >/dev/null 2>&1 || continue
  site=$("$py" -c 'import site; print(site.getsitepackages()[0])' 2>/dev/null) || continue
  mkdir -p "$site" 2>/dev/null && echo "$pydir" > "$site/poolrt-build.pth" 2>/dev/null || true
done
