#!/usr/bin/env python3
"""Re-derive the DeepSeek-V4 pool sizes from the row-space rules.

This is a small, stdlib-only model of what the reference (ATOM snapshot
ffdf3bb5d) computes for DeepSeek-V4, written from the project's specs:

  * spec/semantics.md (in the shared folder beside the project root)
    §1.3 (plan_pools), §2.3 (entry_bytes_for), §2.7 (plan_field_planes),
    §3.3-§3.6 (ClassLayout, entry_rows_for, slot_rows, envelope), §4 (V4
    backend declaration)
  * spec/model_geometries.md §2-§3 (V4 fields, layer lists,
    configurations, known figures)

It lives in test/ because it is a test oracle: test/Tools/models.test
compares poolc's reports with what it derives, without sharing code.

It asserts every figure the spec states (seed 000 / test vectors) and prints,
for each configuration of model_geometries.md §3.2, the PAGE bytes per block,
the STATE bytes per request, the arena and the pool plan for a budget.

The compiler derives the same sizes (pool-solve-row-space: `bytes: derived`
in models/deepseek-v4-*.yaml); this script is the independent re-derivation
the tests compare it with (test/Tools/models.test, models/EXPECTED.md).

Usage:
  python3 derive_v4.py                 # checks + table for 150 GiB / 256 seqs
  python3 derive_v4.py --budget B --seqs N
  python3 derive_v4.py --markdown      # the V4 rows of test/Tools/models/EXPECTED.md
"""

import argparse
import math
from dataclasses import dataclass

ALIGN = 256  # semantics §2.1

# ---------------------------------------------------------------------------
# StateArena layout (semantics §2.2, §2.3)
# ---------------------------------------------------------------------------

ITEMSIZE = {"f32": 4, "bf16": 2, "fp8": 1}


def align_up(n, a=ALIGN):
    return -(-n // a) * a


@dataclass(frozen=True)
class Field:
    name: str
    layers: int
    shape: tuple
    dtype: str
    fill: str = "0"
    align: int = 0
    in_checkpoint: bool = True

    @property
    def nbytes(self):
        return self.layers * math.prod(self.shape) * ITEMSIZE[self.dtype]


def field_extents(fields):
    """(field, start, end) per field: declared order, each on max(256, align)."""
    offset, out = 0, []
    for f in fields:
        offset = align_up(offset, max(ALIGN, f.align))
        out.append((f, offset, offset + f.nbytes))
        offset += f.nbytes
    return out


def entry_bytes_for(fields):
    ext = field_extents(fields)
    return align_up(ext[-1][2]) if ext else 0


# ---------------------------------------------------------------------------
# plan_field_planes (semantics §2.7)
# ---------------------------------------------------------------------------

def plan_field_planes(fields, widths):
    """Exact search over P^n assignments; field k -> base-P digit k (least
    significant first). Keep the FIRST assignment with strictly fewer rows;
    a plane costs ceil(entry_bytes_for(its group) / width)."""
    P = len(widths)
    if P == 0:
        raise ValueError("a row space needs at least one plane")
    N = P ** len(fields)
    if N > 65536:
        raise ValueError(f"refusing to enumerate {N} plane assignments")
    best_groups, best_rows = None, None
    for code in range(N):
        groups = [[] for _ in range(P)]
        for k, f in enumerate(fields):
            groups[(code // P ** k) % P].append(f)
        rows = max(-(-entry_bytes_for(g) // w) for g, w in zip(groups, widths))
        if best_rows is None or rows < best_rows:
            best_groups, best_rows = groups, rows
    return best_groups, best_rows


# ---------------------------------------------------------------------------
# V4 row space (semantics §3.2-§3.6)
# ---------------------------------------------------------------------------

DENSE, CSA, HCA, ABSENT = 0, 4, 128, -1
ENTRY_ORDER = (DENSE, HCA, CSA)     # §3.2
ENVELOPE_ORDER = (HCA, CSA)         # §3.2 (narrow class first)


def ring_offset(L, S, q):
    return (q // S) * (L * S) + q % S


def entry_rows_for(L, S, R):
    return (L - 1) * S + ring_offset(L, S, R - 1) + 1


@dataclass
class ClassLayout:
    ratio: int
    layers: list
    block_rows: int
    ring_stride: int
    envelope_rows: int
    entry_rows: int


class Geometry:
    """The sizing part of UnifiedPoolGeometry (no addressing)."""

    def __init__(self, ratios, ring, block_size=256, arena_rows=0,
                 slot_align_rows=2):
        bad = sorted(set(ratios) - {DENSE, CSA, HCA, ABSENT})
        if bad:
            raise ValueError(f"unknown V4 compress ratios {bad}")
        if all(r == ABSENT for r in ratios):
            raise ValueError("no layer in the row space")  # Q6
        self.classes = {}
        for ratio in ENTRY_ORDER:
            layers = [i for i, r in enumerate(ratios) if r == ratio]
            if not layers:
                continue
            if ratio and block_size % ratio:
                raise ValueError("block_size must be a multiple of every ratio")
            block_rows = block_size // ratio if ratio else 0
            stride = ring if ratio == DENSE else block_rows
            self.classes[ratio] = ClassLayout(
                ratio, layers, block_rows, stride,
                len(layers) * block_rows,
                entry_rows_for(len(layers), stride, ring))
        self.envelope_rows = sum(c.envelope_rows for c in self.classes.values())
        self.entry_rows = sum(c.entry_rows for c in self.classes.values())
        self.arena_rows = arena_rows
        self.slot_align_rows = slot_align_rows
        self.slot_rows = (-(-(arena_rows + self.entry_rows) // slot_align_rows)
                          * slot_align_rows)

    def class_rows(self, ratio):
        c = self.classes.get(ratio)
        return c.entry_rows if c else 0


# ---------------------------------------------------------------------------
# The V4 declaration (model_geometries §2, §3.1; semantics §4)
# ---------------------------------------------------------------------------

HEAD_DIM, ROPE_DIM, INDEX_DIM, WINDOW = 512, 64, 128, 128
FLASH_TRUNK = [0, 0] + [4, 128] * 20 + [4]          # 43 layers: 2/21/20
PRO_TRUNK = [128, 128] + [4, 128] * 29 + [4]        # 61 layers: 0/30/31
PLANES = {"fp8": [("nope", 512, "fp8"), ("rope", 128, "bf16")],
          "bf16": [("kv", 1024, "bf16")]}


def v4_fields(n_csa, n_hca, e, n_window=0):
    """Compressor-state fields in declared (wire) order, plus the DSpark
    state-carried window when draft layers carry it."""
    k = 8 + e        # CSA K_pool = 2*4 (overlap) + e
    h = 128 + e      # HCA K_pool = 128 + e
    fields = [
        Field("csa_main_kv", n_csa, (k, 2 * HEAD_DIM), "f32"),
        Field("csa_main_score", n_csa, (k, 2 * HEAD_DIM), "f32", "-inf"),
        Field("csa_idx_kv", n_csa, (k, 2 * INDEX_DIM), "f32"),
        Field("csa_idx_score", n_csa, (k, 2 * INDEX_DIM), "f32", "-inf"),
        Field("hca_main_kv", n_hca, (h, HEAD_DIM), "f32", in_checkpoint=False),
        Field("hca_main_score", n_hca, (h, HEAD_DIM), "f32", "-inf",
              in_checkpoint=False),
    ]
    if n_window:
        fields.append(Field("state_window", n_window, (WINDOW + e, HEAD_DIM),
                            "bf16", align=HEAD_DIM * 2))
    return fields


def index_bytes(n_csa, kind="fp8", row_bytes=INDEX_DIM + 4):
    """row_bytes: one fp8 index row (128 fp8 values + an fp32 scale = 132;
    the seed's old layout rounded it up to 144)."""
    if kind == "fp8":
        return n_csa * 64 * row_bytes
    groups = (INDEX_DIM // 128) * 4 * 64          # fp4
    return n_csa * (groups * 16 + groups)


@dataclass
class Config:
    name: str             # short label
    yaml: str             # model file (or "" when no bundled file)
    trunk: list
    extra: list           # ratios appended after the trunk (0 MTP, -1 field draft)
    e: int
    kv: str               # "fp8" | "bf16"
    n_window: int = 0     # draft layers whose window is a state field

    @property
    def ratios(self):
        return self.trunk + self.extra


def layout_id(cfg, fields):
    """semantics §4 state_transfer(). The spec does not fix how a shape is
    spelled inside the id; we write dims joined by 'x'."""
    def shp(name):
        f = next(f for f in fields if f.name == name)
        return "x".join(map(str, f.shape))
    nocopy = ",".join(f.name for f in fields if not f.in_checkpoint)
    return ("dsv4-paged-state-v3:block=256:ring=%d:dims=%d,%d,%d"
            ":state=%s,%s,%s:main=%s:index=fp8:ratios=%s:nocopy=%s:entry=packed"
            % (WINDOW + cfg.e, HEAD_DIM, ROPE_DIM, INDEX_DIM,
               shp("csa_main_kv"), shp("csa_idx_kv"), shp("hca_main_kv"),
               "fp8-2buff" if cfg.kv == "fp8" else "bf16",
               ",".join(map(str, cfg.ratios)), nocopy))


def derive(cfg, index_row_bytes=INDEX_DIM + 4):
    n_csa = cfg.ratios.count(CSA)
    n_hca = cfg.ratios.count(HCA)
    fields = v4_fields(n_csa, n_hca, cfg.e, cfg.n_window)
    planes = PLANES[cfg.kv]
    widths = [w for _, w, _ in planes]
    sum_w = sum(widths)
    groups, arena_rows = plan_field_planes(fields, widths)
    slot_align = 2
    for g, w in zip(groups, widths):
        if any(f.name == "state_window" for f in g):
            slot_align = math.lcm(2, (HEAD_DIM * 2) // w)
    geo = Geometry(cfg.ratios, WINDOW + cfg.e, 256, arena_rows, slot_align)
    arena = entry_bytes_for(fields)
    compressor = entry_bytes_for([f for f in fields if f.name != "state_window"])
    main = geo.envelope_rows * sum_w
    idx = index_bytes(n_csa, row_bytes=index_row_bytes)
    return dict(
        cfg=cfg, fields=fields, groups=[[f.name for f in g] for g in groups],
        n_csa=n_csa, n_hca=n_hca, arena_bytes=arena,
        compressor_bytes=compressor, arena_rows=arena_rows,
        plane_slack=1 - arena / (arena_rows * sum_w),
        slot_align=slot_align, geo=geo,
        page_main=main, page_index=idx, page_bytes=main + idx,
        state_bytes=geo.slot_rows * sum_w, layout_id=layout_id(cfg, fields))


# ---------------------------------------------------------------------------
# plan_pools (semantics §1.3, with Q3/Q4/Q5 applied)
# ---------------------------------------------------------------------------

class InsufficientPoolBudget(Exception):
    pass


def plan_pools(classes, budget, seqs):
    """classes: list of (name, pool, entry_bytes, entries_per_req, extra).
    Same name -> bytes summed. STATE floor first, PAGE takes the remainder."""
    merged = {}
    for name, pool, b, per_req, extra in classes:
        if b < 1 or extra < 0:
            raise ValueError(f"{name}: invalid spec")
        if name in merged:
            m = merged[name]
            if (m[0], m[2], m[3]) != (pool, per_req, extra):
                raise ValueError(f"entry class '{name}' pool/multiplicity clash")
            merged[name] = (pool, m[1] + b, per_req, extra)
        else:
            merged[name] = (pool, b, per_req, extra)
    pages = [n for n, m in merged.items() if m[0] == "page"]
    if len(pages) > 1:
        raise ValueError(f"more than one PAGE entry class: {pages}")
    plan, remaining = {}, budget
    for name, (pool, b, per_req, extra) in merged.items():
        if pool == "state":
            count = seqs * per_req + extra
            plan[name] = (count, b, count * b)
            remaining -= count * b
    state_reserved = budget - remaining
    if any(m[0] == "state" for m in merged.values()) and remaining < 0:
        raise InsufficientPoolBudget(
            f"state pool needs {state_reserved}B of {budget}B")
    for name in pages:
        b = merged[name][1]
        count = max(0, remaining // b)
        plan[name] = (count, b, count * b)
    return plan


def v4_plan(d, budget, seqs):
    return plan_pools([("kv", "page", d["page_bytes"], 0, 0),
                       ("state", "state", d["state_bytes"], 1, 0)],
                      budget, seqs)


# ---------------------------------------------------------------------------
# Configurations (model_geometries §3.2) and checks (§3.3)
# ---------------------------------------------------------------------------

def configurations():
    out = []
    for kv in ("fp8", "bf16"):
        out += [
            Config("V4-Flash no spec", f"deepseek-v4-flash-{kv}.yaml",
                   FLASH_TRUNK, [], 0, kv),
            Config("V4-Flash MTP-1",
                   "deepseek-v4-flash-mtp1-fp8.yaml" if kv == "fp8" else "",
                   FLASH_TRUNK, [0], 1, kv),
            Config("V4-Flash-DSpark k=3 field",
                   f"deepseek-v4-flash-dspark-{kv}.yaml",
                   FLASH_TRUNK, [ABSENT] * 3, 3, kv, n_window=3),
            # Pre-change layout (model_geometries §3.2): the 3 draft layers
            # stay dense row-space layers (ratio 0), no state_window field; the
            # same row space as V4-Flash MTP-3 (the seed's "MTP3 ring").
            Config("V4-Flash-DSpark k=3 dense",
                   f"deepseek-v4-flash-dspark-dense-{kv}.yaml",
                   FLASH_TRUNK, [DENSE] * 3, 3, kv),
            Config("V4-Flash-DSpark k=5 field", "", FLASH_TRUNK, [ABSENT] * 3,
                   5, kv, n_window=3),
            Config("V4-Flash-DSpark k=5 dense", "", FLASH_TRUNK, [DENSE] * 3,
                   5, kv),
            Config("V4-Pro MTP-1", "deepseek-v4-pro-mtp1-fp8.yaml"
                   if kv == "fp8" else "", PRO_TRUNK, [0], 1, kv),
        ]
    out.append(Config("V4-Pro-DSpark k=7", "deepseek-v4-pro-dspark-fp8.yaml",
                      PRO_TRUNK, [ABSENT] * 3, 7, "fp8", n_window=3))
    return out


def check_known_figures():
    # Arena (model_geometries §3.3, seed 000): compressor state of V4-Flash.
    assert entry_bytes_for(v4_fields(21, 20, 0)) == 12_206_080
    assert 12_206_080 == (2 * (21 * 8 * 1024 * 4) + 2 * (21 * 8 * 256 * 4)
                          + 2 * (20 * 128 * 512 * 4))
    assert entry_bytes_for(v4_fields(21, 20, 3)) == 13_096_960

    # Vectors sa_v4_like / pfp_v4_like (semantics §2.3, §2.7).
    like = [Field("csa_main_kv", 3, (8, 32), "f32"),
            Field("csa_main_score", 3, (8, 32), "f32", "-inf"),
            Field("csa_idx_kv", 3, (8, 16), "f32"),
            Field("csa_idx_score", 3, (8, 16), "f32", "-inf"),
            Field("hca_main_kv", 2, (128, 32), "f32"),
            Field("hca_main_score", 2, (128, 32), "f32", "-inf")]
    assert entry_bytes_for(like) == 74_752
    assert [(s, t) for _, s, t in field_extents(like)] == [
        (0, 3072), (3072, 6144), (6144, 7680), (7680, 9216),
        (9216, 41984), (41984, 74752)]
    g, r = plan_field_planes(like, [512])
    assert r == 146 and [[f.name for f in x] for x in g] == [[f.name for f in like]]
    g, r = plan_field_planes(like, [512, 128])
    assert r == 128 and [[f.name for f in x] for x in g] == [
        ["hca_main_kv", "hca_main_score"],
        ["csa_main_kv", "csa_main_score", "csa_idx_kv", "csa_idx_score"]]
    # sa_misaligned_pad / sa_single_12B
    assert entry_bytes_for([Field("a", 1, (3,), "f32"),
                            Field("b", 1, (3,), "f32")]) == 512
    assert entry_bytes_for([Field("a", 1, (3,), "f32")]) == 256

    # Vector ero_table (semantics §3.4).
    for (L, S, R), want in {(21, 64, 131): 3971, (20, 2, 131): 2639,
                            (5, 131, 131): 655, (21, 64, 128): 2688,
                            (20, 2, 128): 2560, (3, 7, 5): 19, (1, 64, 1): 1,
                            (2, 3, 7): 16, (30, 64, 135): 5703,
                            (31, 2, 135): 4215}.items():
        assert entry_rows_for(L, S, R) == want, (L, S, R)

    # Vector geo_flash_test: FLASH_RATIOS (46 layers, 3 drafts dense), ring 131.
    geo = Geometry(FLASH_TRUNK + [0, 0, 0], 131)
    assert (geo.class_rows(DENSE), geo.class_rows(HCA), geo.class_rows(CSA)) \
        == (655, 2639, 3971)
    assert geo.envelope_rows == 1384 and geo.entry_rows == 7265
    assert geo.slot_rows == 7266
    assert geo.envelope_rows * (512 + 128) == 885_760

    # Vector geo_pro_absent_draft (V4-Pro test ratios, ring 131).
    pro = PRO_TRUNK + [0]
    geo = Geometry(pro, 131)
    assert (geo.envelope_rows, geo.entry_rows, geo.slot_rows) == (1982, 9921, 9922)
    geo = Geometry(PRO_TRUNK + [ABSENT], 131)
    assert (geo.envelope_rows, geo.entry_rows, geo.slot_rows) == (1982, 9790, 9790)
    assert list(geo.classes) == [HCA, CSA]

    # V4-Flash fp8 PAGE entry (seed 000): 885,760 + 177,408 = 1,063,168 B.
    d = derive(Config("", "", FLASH_TRUNK, [], 0, "fp8"))
    assert d["page_main"] == 885_760 and d["page_index"] == 177_408
    assert d["page_bytes"] == 1_063_168
    # ... 768 B/block/CSA layer less than the old 144-B index rows.
    assert d["page_bytes"] + 21 * 64 * (144 - 132) == 1_079_296
    old = derive(Config("", "", FLASH_TRUNK, [], 0, "fp8"), index_row_bytes=144)
    assert old["page_bytes"] == 1_079_296
    # "the same budget then holds 154,396 -> 156,738 blocks (+599,552 tokens)":
    # some remainder gives both counts.
    lo = max(154_396 * 1_079_296, 156_738 * 1_063_168)
    hi = min(154_397 * 1_079_296, 156_739 * 1_063_168)
    assert lo < hi and (156_738 - 154_396) * 256 == 599_552

    # Plane slack (seed 000): 2.4% fp8, 0 bf16, V4-Flash MTP3 ring.
    for kv, want in (("fp8", 0.024), ("bf16", 0.0)):
        d = derive(Config("", "", FLASH_TRUNK, [0, 0, 0], 3, kv))
        assert round(d["plane_slack"], 3) == want, (kv, d["plane_slack"])

    # HCA state is 52% of a slot (seed 000). That is the bf16 slot, MTP3 ring
    # (fp8 gives 59%: its slot is smaller).
    d = derive(Config("", "", FLASH_TRUNK, [0, 0, 0], 3, "bf16"))
    hca = sum(f.nbytes for f in d["fields"] if f.name.startswith("hca"))
    assert round(hca / d["state_bytes"], 2) == 0.52, hca / d["state_bytes"]

    # Draft window as a field instead of dense layers, V4-Flash-DSpark bf16,
    # ring 133 (seed 000, reproduced at ring 133): +399 arena rows,
    # -399 entry rows, slot unchanged.
    dense = derive(Config("", "", FLASH_TRUNK, [0, 0, 0], 5, "bf16"))
    field = derive(Config("", "", FLASH_TRUNK, [ABSENT] * 3, 5, "bf16", 3))
    assert field["arena_rows"] - dense["arena_rows"] == 399
    assert dense["geo"].entry_rows - field["geo"].entry_rows == 399
    assert field["geo"].slot_rows == dense["geo"].slot_rows

    # V4-Pro-DSpark has no dense class (model_geometries §3.2).
    d = derive(Config("", "", PRO_TRUNK, [ABSENT] * 3, 7, "fp8", 3))
    assert DENSE not in d["geo"].classes


# ---------------------------------------------------------------------------
# Output
# ---------------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--budget", type=int, default=150 * 2**30)
    ap.add_argument("--seqs", type=int, default=256)
    ap.add_argument("--markdown", action="store_true")
    ap.add_argument("--verbose", "-v", action="store_true")
    a = ap.parse_args()

    check_known_figures()
    rows = []
    for cfg in configurations():
        d = derive(cfg)
        plan = v4_plan(d, a.budget, a.seqs)
        rows.append((cfg, d, plan))

    if a.markdown:
        print("| config | KV | file | e | PAGE B/block | STATE B/req | arena B "
              "| PAGE entries | PAGE reserved B | STATE entries | STATE reserved B "
              "| total reserved B |")
        print("|---|---|---|---|---|---|---|---|---|---|---|---|")
        for cfg, d, p in rows:
            print(f"| {cfg.name} | {cfg.kv} | {cfg.yaml or '-'} | {cfg.e} "
                  f"| {d['page_bytes']:,} | {d['state_bytes']:,} "
                  f"| {d['arena_bytes']:,} | {p['kv'][0]:,} | {p['kv'][2]:,} "
                  f"| {p['state'][0]:,} | {p['state'][2]:,} "
                  f"| {p['kv'][2] + p['state'][2]:,} |")
        return

    print(f"all known figures reproduced; budget {a.budget:,} B, "
          f"{a.seqs} sequences\n")
    hdr = ("config", "kv", "e", "page B", "= main", "+ index", "state B",
           "arena B", "arena r", "entry r", "slot r", "slack",
           "PAGE", "STATE", "total reserved")
    fmt = "%-26s %-4s %2s %10s %9s %8s %11s %11s %7s %7s %6s %6s %7s %5s %16s"
    print(fmt % hdr)
    for cfg, d, p in rows:
        g = d["geo"]
        print(fmt % (cfg.name, cfg.kv, cfg.e, f"{d['page_bytes']:,}",
                     f"{d['page_main']:,}", f"{d['page_index']:,}",
                     f"{d['state_bytes']:,}", f"{d['arena_bytes']:,}",
                     d["arena_rows"], g.entry_rows, g.slot_rows,
                     f"{100 * d['plane_slack']:.1f}%", f"{p['kv'][0]:,}",
                     p["state"][0], f"{p['kv'][2] + p['state'][2]:,}"))
    if a.verbose:
        for cfg, d, _ in rows:
            g = d["geo"]
            print(f"\n{cfg.name} ({cfg.kv}, e={cfg.e}) {cfg.yaml}")
            print(f"  classes (entry rows): "
                  + ", ".join(f"{r}:{c.entry_rows}" for r, c in g.classes.items())
                  + f"; envelope {g.envelope_rows}; slot_align {d['slot_align']}")
            print(f"  plane groups: {d['groups']}")
            print(f"  compressor-state bytes {d['compressor_bytes']:,}")
            print(f"  layout_id: {d['layout_id']}")


if __name__ == "__main__":
    main()
