#!/usr/bin/env python3
"""Writes a model YAML's stateless twin: the same model without its state.

The twin keeps every PAGE class, parameter and the block size, and drops the
`state_fields:` section and every entry class declared `pool: state`. Its
prefix-cache hit rate is what the model's PAGE cache alone would give: the
ceiling a stateful model's checkpoints are measured against.

  python3 bench/hits/stateless_twin.py models/qwen3.5-27b.yaml -o twin.yaml

Line-based (standard library only, either python3 runs it): a section is a
top-level key and the indented or list lines under it; an entry class is a
`  - ` item of `entry_classes:` and the lines indented under it.
"""
import argparse
import re
import sys


def twin(text):
    out, section, item, dropped = [], None, [], 0

    def flush():
        nonlocal item, dropped
        if item and any(re.match(r"\s*(-\s+)?pool:\s*state\b", l) for l in item):
            dropped += 1
        else:
            out.extend(item)
        item = []

    for line in text.splitlines(keepends=True):
        top = re.match(r"[A-Za-z_][\w-]*\s*:", line)
        if top:
            flush()
            section = line.split(":")[0].strip()
        if section == "state_fields":
            continue
        if section == "entry_classes" and not top:
            if re.match(r"  - ", line):
                flush()
                item.append(line)
                continue
            if item:
                item.append(line)
                continue
        if top and section == "name":
            line = re.sub(r"name:\s*(\S+)", r"name: \1-stateless", line, count=1)
        out.append(line)
    flush()
    return "".join(out), dropped


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("model")
    ap.add_argument("-o", "--out", required=True)
    a = ap.parse_args()
    with open(a.model) as f:
        text, dropped = twin(f.read())
    if dropped == 0:
        sys.exit("%s: no `pool: state` entry class to drop" % a.model)
    with open(a.out, "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
