#!/usr/bin/env bash
# The wheel the build packs installs and works on its own (ctest
# python-wheel): pip installs it into a fresh venv (no network, no index,
# no system site-packages), the module imports from the venv, mypy --strict
# finds its stubs there (poolrt-stubs), the example engine loop runs on the
# installed module, and pip uninstalls every file it installed.
#
#   wheel-check.sh PYTHON DIST_DIR WORK_DIR POOLC SOURCE_DIR
set -euo pipefail
py="$1" dist="$2" work="$3" poolc="$4" src="$5"
shopt -s nullglob
wheels=("$dist"/poolrt-*.whl)
[ ${#wheels[@]} -eq 1 ] || { echo "wheel-check: want one wheel in $dist, found ${#wheels[@]}"; exit 1; }
whl="${wheels[0]}"
rm -rf "$work"
mkdir -p "$work"
cd "$work"   # nothing of the build tree on the path
"$py" -m venv venv
venv/bin/python -m pip install -q --no-index --no-deps --disable-pip-version-check "$whl"
site="$(venv/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["platlib"])')"
mods=("$site"/poolrt*.so)
[ ${#mods[@]} -eq 1 ] || { echo "wheel-check: want one poolrt module in $site, found ${#mods[@]}"; exit 1; }
[ -f "$site/poolrt-stubs/__init__.pyi" ] || { echo "wheel-check: no stubs in $site"; exit 1; }

# Imported from the venv, documented, working.
env -u PYTHONPATH venv/bin/python - "$site" <<'PY'
import os, sys
import poolrt
site = sys.argv[1]
assert os.path.dirname(poolrt.__file__) == site, poolrt.__file__
assert "help(CacheManager)" in poolrt.__doc__
m = poolrt.CacheManager(block_size=4, num_blocks=8)
r = poolrt.Request([1, 2, 3, 4, 5])
m.allocate(r, m.admission(r))
assert r.block_table and len(r.block_table) == 2, r
print("wheel-check: imported", poolrt.__file__)
PY

# The stubs come from the installed package, nothing else: no MYPYPATH, no
# build tree, the venv's site-packages only.
cat > typed.py <<'PY'
import poolrt

def hit(m: poolrt.CacheManager, prompt: list[int]) -> int:
    a = m.admission(poolrt.Request(prompt))
    return a.hit_tokens

print(hit(poolrt.CacheManager(block_size=4, num_blocks=8), [1, 2, 3]))
PY
cat > untyped.py <<'PY'
import poolrt
x: str = poolrt.CacheManager(block_size=4, num_blocks=8).block_size
PY
env -u MYPYPATH -u PYTHONPATH "$py" -m mypy --strict --no-incremental --python-executable venv/bin/python typed.py
# A wrong type must be caught: the stubs are really what mypy read.
if env -u MYPYPATH -u PYTHONPATH "$py" -m mypy --strict --no-incremental --python-executable venv/bin/python untyped.py > untyped.out 2>&1; then
  echo "wheel-check: mypy accepted an int assigned to a str: the stubs were not read"; cat untyped.out; exit 1
fi
grep -q 'Incompatible types in assignment (expression has type "int", variable has type "str")' untyped.out

# The example engine loop on the installed module (numpy from Debian's
# dist-packages, which holds no poolrt).
"$poolc" "$src/models/deepseek-v4-flash-fp8.yaml" --budget 1GiB --max-num-seqs 4 \
    --targets host -o v4.poolpack
PYTHONPATH=/usr/lib/python3/dist-packages venv/bin/python -c \
  "import os, poolrt, sys; sys.exit(0 if os.path.dirname(poolrt.__file__) == sys.argv[1] else 1)" "$site"
PYTHONPATH=/usr/lib/python3/dist-packages PYTHONDONTWRITEBYTECODE=1 \
  venv/bin/python "$src/examples/engine_loop.py" v4.poolpack | tee example.out
grep -q 'hit 512 tokens' example.out

venv/bin/python -m pip uninstall -q -y poolrt
left=("$site"/poolrt*)
[ ${#left[@]} -eq 0 ] || { echo "wheel-check: left after uninstall: ${left[*]}"; exit 1; }
echo "wheel-check: $(basename "$whl") installs, type-checks, runs and uninstalls"
