"""Check the generated header's answers against the JSON report.

Usage: check_header.py REPORT.json PROBE_OUTPUT
Recomputes every printed value from the report's row_space numbers with the
spec's formulas (semantics.md 3.7) and fails on the first difference.
"""
import json
import sys

report = json.load(open(sys.argv[1]))
rs = report["row_space"]
classes = {c["name"]: c for c in rs["classes"]}
slot_rows = rs["slot_rows"]
origin = rs["slot_positions"] - rs["plane_rows"] // slot_rows
bases = {}
for c in rs["classes"]:
    for i, layer in enumerate(c["layers"]):
        bases[layer] = (i * rs["ring_slots"] if c["ratio"] == 0
                        else c["envelope_offset"] + i * c["block_rows"])
checked = 0


def expect(line, got, want):
    global checked
    if got != want:
        sys.exit(f"mismatch: '{line}': header says {got}, report gives {want}")
    checked += 1


for line in open(sys.argv[2]):
    f = line.split()
    if f[0] in ("plane_rows", "slot_rows", "envelope_rows"):
        expect(line, int(f[1]), rs[f[0]])
    elif f[0] == "slot":
        g, s, b, e, a = map(int, f[1:])
        expect(line, s, rs["slot_positions"] - 1 - g)
        expect(line, b, (s - origin) * slot_rows)
        expect(line, e, (s - origin + 1) * slot_rows)
        expect(line, a, (s - origin) * slot_rows + rs["arena_rows"])
    elif f[0] == "window":
        w = classes[f[1]]["window"]
        slot, pos, row = int(f[2]), int(f[3]), int(f[4])
        q = pos % w["ring_slots"]
        want = (slot * w["slot_rows"] + w["ring_start"]
                + (q // w["ring_stride"]) * w["run_rows"] + q % w["ring_stride"])
        expect(line, row, want)
        # The row lies in its own slot's windows, after the arena.
        absolute = row + min(bases[l] for l in classes[f[1]]["layers"])
        if not ((slot - origin) * slot_rows + rs["arena_rows"] <= absolute
                < (slot - origin + 1) * slot_rows):
            sys.exit(f"window row outside its slot: '{line}'")
    elif f[0] == "compress":
        expect(line, int(f[3]), int(f[1]) * rs["envelope_rows"] + int(f[2]))
    elif f[0] == "base":
        expect(line, int(f[2]), bases.get(int(f[1]), -1))
    elif f[0] == "offset":
        p, row, off = int(f[1]), int(f[2]), int(f[3])
        plane = rs["planes"][p]
        expect(line, off, plane["offset"] + row * plane["row_bytes"])
    else:
        sys.exit(f"unknown probe line '{line}'")
print(f"header agrees with the report on {checked} values")
