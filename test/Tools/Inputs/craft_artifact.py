"""Write a copy of a .poolpack with one section replaced, re-checksummed.

    craft_artifact.py IN OUT KIND

KIND: deep (a manifest of 50,000 nested lists), nul (a NUL byte after the
manifest), format2 (manifest format poolpack-manifest/2), nohost (the
code/host section dropped while the manifest still names it), segment (a
kernel segment whose destination offset is -1).
"""
import json
import sys

import poolrt

src, dst, kind = sys.argv[1:4]
a = poolrt.read_artifact(src)
sections = list(a["sections"].items())
manifest = dict(sections)["manifest"]


def replace(name, data):
    return [(n, data if n == name else d) for n, d in sections]


if kind == "deep":
    out = replace("manifest", b"[" * 50000 + b"]" * 50000)
elif kind == "nul":
    out = replace("manifest", manifest + b"\0")
elif kind == "format2":
    m = json.loads(manifest)
    m["format"] = "poolpack-manifest/2"
    out = replace("manifest", json.dumps(m).encode())
elif kind == "nohost":
    out = [(n, d) for n, d in sections if n != "code/host"]
elif kind == "segment":
    m = json.loads(manifest)
    m["kernels"][0]["segments"][0]["dst_off"] = -1
    out = replace("manifest", json.dumps(m).encode())
else:
    sys.exit("unknown kind " + kind)
poolrt.write_artifact(dst, out)
