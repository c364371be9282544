#!/usr/bin/env python3
"""Fail on an include that crosses a library boundary the wrong way.

Each runtime library keeps its public headers in its own include folder
(docs/architecture.md); the build already hides a library's headers from a
target that does not link it. This check states the arrows in one table and
reads every source, so a wrong-way include fails the suite even where a
folder happens to be on the include path (the MLIR build puts the source
root on every target's path), and says which arrow it breaks.

  python3 tools/check-includes.py [--root DIR]

Exit 0: every include follows the arrows. Exit 1: one line per violation,
"FILE:LINE: LIB includes HEADER (of OWNER), which LIB may not see (LIB sees:
...)". Exit 2: bad usage.
"""
import argparse
import os
import re
import sys

# Library: (folder whose sources belong to it, its include folder or None,
#           the libraries it may include besides itself).
LIBRARIES = {
    "base": ("runtime/base", "runtime/base/include", []),
    "layout": ("runtime/layout", "runtime/layout/include", ["base"]),
    "pools": ("runtime/pools", "runtime/pools/include", ["base", "layout"]),
    "device": ("runtime/device", "runtime/device/include", ["base", "layout"]),
    "tier": ("runtime/tier", "runtime/tier/include", ["base", "layout"]),
    "serve": ("runtime/serve", "runtime/serve/include",
              ["base", "layout", "pools", "device", "tier"]),
    "explore": ("runtime/explore", "runtime/explore/include",
                ["base", "layout", "pools"]),
    "capi": ("runtime/capi", "runtime/capi/include",
             ["base", "layout", "pools", "device"]),
    "python": ("runtime/python", None,
               ["base", "layout", "pools", "device", "tier", "serve", "explore"]),
    # The compiler half sees the layout arithmetic and nothing of the runtime.
    "dialect": ("dialects", None, ["base", "layout"]),
    "passes": ("passes", None, ["base", "layout"]),
    "codegen": ("codegen", None, ["base", "layout"]),
}
SOURCE_EXT = (".h", ".hpp", ".cpp", ".c", ".inc")
INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]([^>"]+)[>"]')


def owner_of_folder(rel):
    """The library whose folder holds the relative path, or None."""
    best = None
    for lib, (folder, _, _) in LIBRARIES.items():
        if rel == folder or rel.startswith(folder + "/"):
            if best is None or len(folder) > len(LIBRARIES[best][0]):
                best = lib
    return best


def header_owners(root):
    """poolrt/... header spelling -> the library whose include folder has it."""
    owners = {}
    for lib, (_, inc, _) in LIBRARIES.items():
        if not inc:
            continue
        base = os.path.join(root, inc)
        for dirpath, _, files in os.walk(base):
            for f in files:
                spelled = os.path.relpath(os.path.join(dirpath, f), base)
                owners.setdefault(spelled.replace(os.sep, "/"), []).append(lib)
    return owners


def check(root):
    owners = header_owners(root)
    problems = []
    for spelled, libs in sorted(owners.items()):
        if len(libs) > 1:
            problems.append(f"{spelled}: in the include folders of {', '.join(libs)}")
    for lib, (folder, _, deps) in sorted(LIBRARIES.items()):
        top = os.path.join(root, folder)
        for dirpath, _, files in os.walk(top):
            for f in sorted(files):
                if not f.endswith(SOURCE_EXT):
                    continue
                path = os.path.join(dirpath, f)
                rel = os.path.relpath(path, root).replace(os.sep, "/")
                if owner_of_folder(rel) != lib:
                    continue
                try:
                    lines = open(path, encoding="utf-8", errors="replace").read().splitlines()
                except OSError as e:
                    problems.append(f"{rel}: cannot read: {e}")
                    continue
                for n, line in enumerate(lines, 1):
                    m = INCLUDE.match(line)
                    if not m:
                        continue
                    inc = m.group(1)
                    # A header reached by its path in the tree bypasses the
                    # include folders: say whose it is.
                    target = None
                    if inc.startswith("runtime/"):
                        target = owner_of_folder(inc)
                        if target is None:
                            problems.append(f"{rel}:{n}: {lib} includes {inc}, "
                                            "a runtime path outside every library")
                            continue
                    elif inc.startswith("poolrt/"):
                        libs = owners.get(inc)
                        if not libs:
                            problems.append(f"{rel}:{n}: {lib} includes {inc}, "
                                            "which no library's include folder has")
                            continue
                        target = libs[0]
                    if target is None or target == lib or target in deps:
                        continue
                    sees = ", ".join(deps) if deps else "nothing"
                    problems.append(f"{rel}:{n}: {lib} includes {inc} (of {target}), "
                                    f"which {lib} may not see ({lib} sees: {sees})")
    return problems


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    args = ap.parse_args()
    if not os.path.isdir(args.root):
        print(f"check-includes: --root {args.root}: not a folder", file=sys.stderr)
        return 2
    problems = check(args.root)
    for p in problems:
        print(p)
    if problems:
        print(f"check-includes: {len(problems)} include(s) cross a library boundary "
              "the wrong way (docs/architecture.md)")
        return 1
    print("check-includes: every include follows the library arrows")
    return 0


if __name__ == "__main__":
    sys.exit(main())
