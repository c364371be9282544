#!/usr/bin/env python3
"""Writes a copy of a .poolpack whose manifest breaks one offset on purpose.

  mutate_artifact.py PYTHONPATH IN OUT field NAME OFFSET
      moves state field NAME to byte OFFSET of its entry (or plane share);
  mutate_artifact.py PYTHONPATH IN OUT region CLASS DELTA
      adds DELTA to entry class CLASS's region offset.
  ... --keep-layout-fingerprint
      keeps the compiler's layout fingerprint, which the reader then finds
      no longer matches the geometry (it must refuse the copy).

By default the copy has no layout fingerprint (as a manifest older than the
key), and is re-checksummed, so the runtime's reader accepts it; the code
the compiler generated still moves the bytes where the compiler solved
them. The manifest and the kernels now disagree about where the state
lives, which a prefix hit must expose: a serve comparison (prefix cache on
against off) over the copy has to fail.
"""
import json
import sys

sys.path.insert(0, sys.argv[1])
import poolrt  # noqa: E402


def main():
    args = [a for a in sys.argv[2:] if a != "--keep-layout-fingerprint"]
    keep = len(args) != len(sys.argv) - 2
    src, dst, what, name, value = args
    sections = poolrt.read_artifact(src)["sections"]
    manifest = json.loads(sections["manifest"])
    layout = manifest["layout"]
    done = False
    if what == "field":
        for arena in layout["arenas"]:
            for f in arena["fields"]:
                if f["name"] == name:
                    size = f["end"] - f["offset"]
                    f["offset"] = int(value)
                    f["end"] = int(value) + size
                    done = True
    elif what == "region":
        for c in layout["entry_classes"]:
            if c["name"] == name:
                c["region_offset"] += int(value)
                done = True
    if not done:
        sys.exit("mutate_artifact: no %s '%s' in %s" % (what, name, src))
    if not keep:
        del layout["layout_fingerprint"]
    sections["manifest"] = json.dumps(manifest, indent=2).encode()
    poolrt.write_artifact(dst, list(sections.items()))


if __name__ == "__main__":
    main()
