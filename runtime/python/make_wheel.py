"""Pack the built poolrt module into a wheel (PEP 427) with `wheel pack`.

Run by the build (runtime/python/CMakeLists.txt, target poolrt_wheel):

    python3 make_wheel.py --module build/python/poolrt.cpython-311-...so \
        --stubs runtime/python/poolrt.pyi --version 0.1.0 --out build/python/dist

The wheel holds the extension module as a top-level module, its type stubs
as the stub-only package `poolrt-stubs` (PEP 561: how a type checker finds
the stubs of a single-module distribution in site-packages), and the
dist-info (METADATA, WHEEL; `wheel pack` writes RECORD). Its tag is the
module's own ABI (cp311-cp311 for a cpython-311 module) and this machine's
platform. The module links the machine's libLLVM-22 and libxxhash, so the
wheel installs where the README's packages are installed (Debian 12).

Nothing is left half-written: the tree is built in a temporary directory,
and the wheel lands in --out under its final name only once packed.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile

SUMMARY = ("The runtime of poolc-compiled models: KV-cache and state pools, the cache "
           "manager, device arenas with DLPack views, generated kernels, the serving "
           "engine")


def fail(msg):
    print(f"make_wheel: {msg}", file=sys.stderr)
    sys.exit(1)


def abi_tag(module):
    """(cp311, cp311, 3.11) from poolrt.cpython-311-x86_64-linux-gnu.so."""
    m = re.match(r"poolrt\.cpython-(\d)(\d+)([a-z]*)-.*\.so$", os.path.basename(module))
    if not m:
        fail(f"{module}: not a CPython extension module name "
             "(poolrt.cpython-XY-<platform>.so)")
    py = f"cp{m.group(1)}{m.group(2)}"
    # The ABI keeps the module's flags (a free-threaded build's "t").
    return py, py + m.group(3), f"{m.group(1)}.{m.group(2)}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--module", required=True)
    ap.add_argument("--stubs", required=True)
    ap.add_argument("--version", required=True)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    for path in (args.module, args.stubs):
        if not os.path.isfile(path):
            fail(f"{path}: no such file")
    if not re.fullmatch(r"\d+(\.\d+)*", args.version):
        fail(f"--version {args.version!r}: not a release number")
    try:
        import wheel  # noqa: F401  (Debian's python3-wheel)
    except ImportError:
        fail("the 'wheel' module is missing (apt-get install python3-wheel; "
             "tools/install-deps.sh)")
    tag, abi, py_version = abi_tag(args.module)
    platform = sysconfig.get_platform().replace("-", "_").replace(".", "_")
    name = f"poolrt-{args.version}"
    os.makedirs(args.out, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=args.out) as tmp:
        tree = os.path.join(tmp, name)
        info = os.path.join(tree, f"{name}.dist-info")
        stubs = os.path.join(tree, "poolrt-stubs")
        os.makedirs(info)
        os.makedirs(stubs)
        shutil.copy2(args.module, tree)
        shutil.copy(args.stubs, os.path.join(stubs, "__init__.pyi"))
        with open(os.path.join(info, "METADATA"), "w") as f:
            f.write("Metadata-Version: 2.1\n"
                    "Name: poolrt\n"
                    f"Version: {args.version}\n"
                    f"Summary: {SUMMARY}\n"
                    f"Requires-Python: =={py_version}.*\n"
                    "License: Apache-2.0\n"
                    "Classifier: Programming Language :: C++\n"
                    "Classifier: Typing :: Typed\n")
        with open(os.path.join(info, "WHEEL"), "w") as f:
            f.write("Wheel-Version: 1.0\n"
                    "Generator: poolc make_wheel.py\n"
                    "Root-Is-Purelib: false\n"
                    f"Tag: {tag}-{abi}-{platform}\n")
        with open(os.path.join(info, "top_level.txt"), "w") as f:
            f.write("poolrt\n")
        packed = os.path.join(tmp, "packed")
        os.makedirs(packed)
        r = subprocess.run([sys.executable, "-m", "wheel", "pack", tree, "-d", packed],
                           capture_output=True, text=True)
        if r.returncode != 0:
            fail(f"wheel pack failed:\n{r.stdout}{r.stderr}")
        (whl,) = os.listdir(packed)
        # One wheel of this name in --out: an older version's goes.
        for old in os.listdir(args.out):
            if old.startswith("poolrt-") and old.endswith(".whl") and old != whl:
                os.remove(os.path.join(args.out, old))
        os.replace(os.path.join(packed, whl), os.path.join(args.out, whl))
    print(os.path.join(args.out, whl))


if __name__ == "__main__":
    main()
