#!/usr/bin/env python3
"""Compare one poolc JSON report of a DeepSeek-V4 model with derive_v4.py.

Usage: v4_cross_check.py DERIVE_V4.py REPORT.json CONFIG KV [E]

CONFIG and KV name a row of derive_v4.configurations() (e.g. "V4-Flash no
spec" fp8); E overrides its e (the report was made with --param e=E). The
report must be for 150 GiB / 256 sequences. Prints every mismatch and exits 1
if there is one; prints "ok CONFIG KV e=E" otherwise.
"""
import importlib.util
import json
import sys

spec = importlib.util.spec_from_file_location("derive_v4", sys.argv[1])
dv = importlib.util.module_from_spec(spec)
spec.loader.exec_module(dv)

report = json.load(open(sys.argv[2]))
name, kv = sys.argv[3], sys.argv[4]
cfg = next(c for c in dv.configurations() if c.name == name and c.kv == kv)
if len(sys.argv) > 5:
    cfg = dv.Config(cfg.name, "", cfg.trunk, cfg.extra, int(sys.argv[5]),
                    cfg.kv, cfg.n_window)
d = dv.derive(cfg)
g = d["geo"]
plan = dv.v4_plan(d, 150 * 2**30, 256)
fields = {f.name: f for f in d["fields"]}

bad = []
def check(label, got, want):
    if got != want:
        bad.append(f"{label}: poolc {got!r}, derive_v4.py {want!r}")

ec = {c["name"]: c for c in report["entry_classes"]}
check("PAGE bytes/block", ec["kv"]["entry_bytes"], d["page_bytes"])
check("STATE bytes/request", ec["state"]["entry_bytes"], d["state_bytes"])
check("PAGE entries", ec["kv"]["entries"], plan["kv"][0])
check("STATE entries", ec["state"]["entries"], plan["state"][0])
check("total reserved", report["total_reserved_bytes"],
      plan["kv"][2] + plan["state"][2])
check("arena bytes", report["arenas"][0]["entry_bytes"], d["arena_bytes"])
rs = report["row_space"]
check("ring_slots", rs["ring_slots"], dv.WINDOW + cfg.e)
check("layer_ratios", rs["layer_ratios"], cfg.ratios)
check("arena_rows", rs["arena_rows"], d["arena_rows"])
check("entry_rows", rs["entry_rows"], g.entry_rows)
check("envelope_rows", rs["envelope_rows"], g.envelope_rows)
check("slot_align_rows", rs["slot_align_rows"], d["slot_align"])
check("slot_rows", rs["slot_rows"], g.slot_rows)
check("classes (ratio, entry_rows)",
      [(c["ratio"], c["entry_rows"]) for c in rs["classes"]],
      [(r, c.entry_rows) for r, c in g.classes.items()])
check("plane fields", [p["fields"] for p in rs["planes"]], d["groups"])
sum_w = sum(p["row_bytes"] for p in rs["planes"])
for p, group in zip(rs["planes"], d["groups"]):
    check(f"plane {p['name']} slack_bytes", p["slack_bytes"],
          d["arena_rows"] * p["row_bytes"]
          - dv.entry_bytes_for([fields[n] for n in group]))
check("plane_slack_bytes", rs["plane_slack_bytes"],
      d["arena_rows"] * sum_w - d["arena_bytes"])
check("plane_slack_fraction", round(rs["plane_slack_fraction"], 12),
      round(d["plane_slack"], 12))
check("field windows", [w["field"] for w in rs["field_windows"]],
      ["state_window"] if cfg.n_window else [])

for line in bad:
    print("MISMATCH", line)
if bad:
    sys.exit(1)
print(f"ok {cfg.name} {cfg.kv} e={cfg.e}")
