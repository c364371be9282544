#!/usr/bin/env python3
"""Print the value of a Python expression over poolc JSON reports.

Usage: report_expr.py EXPR REPORT.json [REPORT.json ...]

The reports are bound to a, b, c, ... in order. Helpers: cls(r, name) is the
entry class `name` of report r; field(r, name) the arena field `name`. The
value is printed on one line (lit tests FileCheck it).
"""
import json
import string
import sys

expr, paths = sys.argv[1], sys.argv[2:]
env = {n: json.load(open(p)) for n, p in zip(string.ascii_lowercase, paths)}


def cls(r, name):
    return next(c for c in r["entry_classes"] if c["name"] == name)


def field(r, name):
    return next(f for a in r["arenas"] for f in a["fields"] if f["name"] == name)


env.update(cls=cls, field=field)
print(eval(expr, {"__builtins__": {"sum": sum, "round": round, "abs": abs,
                                   "min": min, "max": max, "len": len}}, env))
