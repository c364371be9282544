//===- token_model.h - The reference model's per-token kernel, from the header ===//
//
// The same deterministic stateful model as poolrt::serve::ReferenceModel
// (runtime/serve/ReferenceModel.cpp; see its header for what it computes),
// written once against the address header poolc emits (--emit=header)
// instead of the artifact's manifest: every offset, stride, count and ring
// below is a constant of the header, so this file compiles for any bundled
// model, for the host (g++/clang), CUDA (nvcc, clang -x cuda) and HIP
// (clang -x hip). Include the header first; it defines POOLC_LAYOUT_NS (the
// layout's namespace) and POOLC_LAYOUT_ROW_SPACE.
//
// The two implementations share no code on purpose: the manifest-driven
// one reads SolvedLayout at run time, this one is specialised at compile
// time from the header, and pool-serve's outputs must be byte-identical
// between them on every model (test/Serve/identity.sh). A header whose
// numbers disagree with the manifest cannot pass.
//
// Every access is checked against the allocation (kAllocationBytes) and
// every block id against the PAGE class: a wrong call gets an error code,
// never a write outside the arena.
//
// The header's tables are read on the host only (makePlan): nvcc lets
// device code use namespace-scope constexpr scalars but not index constexpr
// arrays, so the probe plan is built once on the host and handed to the
// device code, which reads scalars and the plan.
//
//===----------------------------------------------------------------------===//
#ifndef POOLMODEL_TOKEN_MODEL_H
#define POOLMODEL_TOKEN_MODEL_H

#include "poolmodel_abi.h"

#ifndef POOLC_LAYOUT_NS
#error "include the address header (poolc --emit=header) before token_model.h"
#endif

namespace poolmodel {

namespace L = POOLC_LAYOUT_NS;
namespace V = POOLC_LAYOUT_NS::view;
typedef unsigned long long u64;
typedef long long i64;

constexpr i64 kVocab = i64(1) << 20; // ReferenceModel's kModelVocab
constexpr int kMaxFields = V::kNumStateFields > 0 ? V::kNumStateFields : 1;

POOLC_HD inline u64 splitmix(u64 x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}
POOLC_HD inline u64 mix(u64 a, u64 b) { return splitmix(a ^ splitmix(b)); }
/// The weight of position q in an attention sum: odd, so no row cancels.
POOLC_HD inline u64 weight(i64 q) { return 2 * u64(q) + 1; }
POOLC_HD inline i64 imax(i64 a, i64 b) { return a > b ? a : b; }
POOLC_HD inline i64 imin(i64 a, i64 b) { return a < b ? a : b; }

/// Checked 8-byte access to the allocation.
struct Mem {
  unsigned char *base;
  i64 accesses;
  int error;
  i64 error_at;

  POOLC_HD bool fail(int code, i64 at) {
    if (error == POOLMODEL_OK) {
      error = code;
      error_at = at;
    }
    return false;
  }
  POOLC_HD bool in(i64 off) {
    return off >= 0 && off <= L::kAllocationBytes - 8 ? true
                                                       : fail(POOLMODEL_OUT_OF_ARENA, off);
  }
  POOLC_HD bool read(i64 off, u64 &v) {
    if (!in(off))
      return false;
    ++accesses;
    const unsigned char *p = base + off;
    if ((off & 7) == 0) {
      v = *reinterpret_cast<const u64 *>(p);
    } else {
      v = 0;
      for (int i = 7; i >= 0; --i)
        v = (v << 8) | p[i];
    }
    return true;
  }
  POOLC_HD bool write(i64 off, u64 v) {
    if (!in(off))
      return false;
    ++accesses;
    unsigned char *p = base + off;
    if ((off & 7) == 0) {
      *reinterpret_cast<u64 *>(p) = v;
    } else {
      for (int i = 0; i < 8; ++i)
        p[i] = (unsigned char)(v >> (8 * i));
    }
    return true;
  }
};

/// The block holding position `pos` of the call's request.
POOLC_HD inline bool blockOf(const poolmodel_call &c, i64 pos, i64 &block, Mem &m) {
  i64 i = pos / L::kBlockSize;
  if (pos < 0 || i >= c.table_len)
    return m.fail(POOLMODEL_PAST_TABLE, pos);
  block = c.block_table[i];
  if (block < 0 || block >= V::kPageEntries)
    return m.fail(POOLMODEL_BAD_BLOCK, block);
  return true;
}

/// The first and last of n layers (one when n == 1).
POOLC_HD inline int probes(i64 n, i64 out[2]) {
  out[0] = 0;
  out[1] = n - 1;
  return n <= 1 ? 1 : 2;
}

#if POOLC_LAYOUT_ROW_SPACE
// ---- row space (DeepSeek-V4): window rings and compressors ----------------

constexpr int kMaxWindows = 2 * V::kNumRowClasses + 2 * V::kNumFieldWindows;
constexpr int kMaxComp = 2 * V::kNumRowClasses;
constexpr i64 kCsa = 4; // the overlapping compressor's ratio

struct WindowProbe {
  L::WindowParams p;
  i64 base_row, plane_offset, view_row_bytes;
};
struct CompProbe {
  i64 ratio, base_row;
  bool overlapping;
  int cells;
  // a cell's plane offset, row bytes and offset from the slot start
  i64 cell_plane_off[kMaxFields], cell_row_bytes[kMaxFields], cell_off[kMaxFields];
};
struct Plan {
  int error;
  i64 error_at;
  i64 plane0_off, plane0_row; // plane 0: window and compressed rows
  int windows, comps;
  WindowProbe w[kMaxWindows];
  CompProbe c[kMaxComp];
};

/// Which rows and state cells the model probes: the first and last layer
/// of every row class, the compressor state in the unused fields with one
/// layer per layer of the class (checkpointed ones for the ratio-4
/// compressor), and the first and last layer of every window field.
inline bool makePlan(Plan &pl, Mem &m) {
  pl.windows = pl.comps = 0;
  pl.plane0_off = L::kPlaneOffset[0];
  pl.plane0_row = L::kPlaneRowBytes[0];
  if (L::kSlidingWindow < 1 || L::kPlaneRowBytes[0] < 8)
    return m.fail(POOLMODEL_NO_PLAN, 0);
  bool used[kMaxFields] = {};
  for (int ci = 0; ci < V::kNumRowClasses; ++ci) {
    const V::RowClassView &rc = V::kRowClasses[ci];
    if (rc.num_layers < 1 || rc.ratio < 0)
      continue;
    i64 li[2];
    int np = probes(rc.num_layers, li);
    for (int k = 0; k < np; ++k) {
      WindowProbe &w = pl.w[pl.windows++];
      w.p = rc.window;
      w.base_row = L::layer_base_row(li[k] == 0 ? rc.first_layer : rc.last_layer);
      w.plane_offset = L::kPlaneOffset[0];
      w.view_row_bytes = L::kPlaneRowBytes[0];
    }
    if (rc.ratio == 0)
      continue;
    if (L::kBlockSize % rc.ratio != 0)
      return m.fail(POOLMODEL_NO_PLAN, rc.ratio);
    bool want = rc.ratio == kCsa;
    int picks[kMaxFields];
    int npicks = 0;
    for (int i = 0; i < V::kNumStateFields; ++i) {
      const V::FieldView &f = V::kStateFields[i];
      if (!used[i] && !f.window && f.layers == rc.num_layers && f.plane >= 0 &&
          (f.in_checkpoint != 0) == want)
        picks[npicks++] = i;
    }
    if (npicks == 0)
      return m.fail(POOLMODEL_NO_PLAN, rc.ratio);
    for (int k = 0; k < np; ++k) {
      CompProbe &cp = pl.c[pl.comps++];
      cp.ratio = rc.ratio;
      cp.base_row = L::layer_base_row(li[k] == 0 ? rc.first_layer : rc.last_layer);
      cp.overlapping = want;
      cp.cells = npicks;
      for (int j = 0; j < npicks; ++j) {
        const V::FieldView &f = V::kStateFields[picks[j]];
        if (f.layer_bytes < 16)
          return m.fail(POOLMODEL_NO_PLAN, f.offset);
        if (f.plane >= L::kNumPlanes)
          return m.fail(POOLMODEL_NO_PLAN, f.plane);
        cp.cell_plane_off[j] = L::kPlaneOffset[f.plane];
        cp.cell_row_bytes[j] = L::kPlaneRowBytes[f.plane];
        cp.cell_off[j] = f.offset + li[k] * f.layer_bytes;
      }
    }
    for (int j = 0; j < npicks; ++j)
      used[picks[j]] = true;
  }
  for (int i = 0; i < V::kNumFieldWindows; ++i) {
    const V::FieldWindowView &fw = V::kFieldWindows[i];
    if (fw.plane < 0 || fw.plane >= L::kNumPlanes || fw.rows_per_window_row < 1)
      return m.fail(POOLMODEL_NO_PLAN, i);
    i64 li[2];
    int np = probes(fw.layers, li);
    for (int k = 0; k < np; ++k) {
      WindowProbe &w = pl.w[pl.windows++];
      w.p = fw.window;
      w.base_row = li[k] * fw.layer_stride_rows;
      w.plane_offset = L::kPlaneOffset[fw.plane];
      w.view_row_bytes = L::kPlaneRowBytes[fw.plane] * fw.rows_per_window_row;
    }
  }
  return pl.windows > 0 ? true : m.fail(POOLMODEL_NO_PLAN, 0);
}

struct Acc {
  i64 start;
  u64 windowSum, compSum;
  u64 cur[kMaxComp][kMaxFields], prev[kMaxComp][kMaxFields];
};

POOLC_HD inline i64 windowAt(const WindowProbe &w, i64 slot, i64 pos) {
  return w.plane_offset + (w.base_row + L::window_row(w.p, slot, pos)) * w.view_row_bytes;
}
POOLC_HD inline i64 cellAt(const CompProbe &cp, int f, i64 slotBegin) {
  return cp.cell_plane_off[f] + slotBegin * cp.cell_row_bytes[f] + cp.cell_off[f];
}
POOLC_HD inline i64 compressedAt(const Plan &pl, const CompProbe &cp, i64 block, i64 pos) {
  i64 row = cp.base_row + block * L::kEnvelopeRows + (pos % L::kBlockSize) / cp.ratio;
  return pl.plane0_off + row * pl.plane0_row;
}

POOLC_HD inline bool begin(const Plan &pl, const poolmodel_call &c, i64 pos, Acc &a, Mem &m) {
  a.start = pos;
  a.windowSum = a.compSum = 0;
  i64 slot = c.state_id;
  for (int i = 0; i < pl.windows; ++i)
    for (i64 q = imax(0, pos - L::kSlidingWindow + 1); q < pos; ++q) {
      u64 v = 0;
      if (!m.read(windowAt(pl.w[i], slot, q), v))
        return false;
      a.windowSum += weight(q) * v;
    }
  i64 slotBegin = L::slot_begin_row(slot);
  for (int ci = 0; ci < pl.comps; ++ci) {
    const CompProbe &cp = pl.c[ci];
    for (i64 j = 0; j < pos / cp.ratio; ++j) {
      i64 b = 0;
      u64 v = 0;
      if (!blockOf(c, j * cp.ratio, b, m) || !m.read(compressedAt(pl, cp, b, j * cp.ratio), v))
        return false;
      a.compSum += weight(j) * v;
    }
    for (int f = 0; f < cp.cells; ++f) {
      a.cur[ci][f] = a.prev[ci][f] = 0;
      i64 cell = cellAt(cp, f, slotBegin);
      if (pos % cp.ratio != 0 && !m.read(cell, a.cur[ci][f]))
        return false;
      if (cp.overlapping && pos >= cp.ratio && !m.read(cell + 8, a.prev[ci][f]))
        return false;
    }
  }
  return true;
}

POOLC_HD inline bool step(const Plan &pl, const poolmodel_call &c, i64 pos, i64 token,
                          Acc &a, u64 &hidden, Mem &m) {
  u64 k = mix(u64(token), u64(pos));
  i64 slot = c.state_id;
  for (int i = 0; i < pl.windows; ++i) {
    const WindowProbe &w = pl.w[i];
    if (pos > a.start && pos - L::kSlidingWindow >= 0) {
      u64 old = 0;
      if (!m.read(windowAt(w, slot, pos - L::kSlidingWindow), old))
        return false;
      a.windowSum -= weight(pos - L::kSlidingWindow) * old;
    }
    i64 at = windowAt(w, slot, pos);
    u64 v = 0;
    if (!m.write(at, mix(k, u64(i) + 1)) || !m.read(at, v))
      return false;
    a.windowSum += weight(pos) * v;
  }
  for (int ci = 0; ci < pl.comps; ++ci) {
    const CompProbe &cp = pl.c[ci];
    u64 rowValue = u64(pos / cp.ratio);
    for (int f = 0; f < cp.cells; ++f) {
      a.cur[ci][f] = mix(a.cur[ci][f], k + u64(ci) * 131 + u64(f));
      rowValue = cp.overlapping ? mix(mix(rowValue, a.prev[ci][f]), a.cur[ci][f])
                                : mix(rowValue, a.cur[ci][f]);
    }
    if ((pos + 1) % cp.ratio != 0)
      continue;
    i64 b = 0;
    u64 v = 0;
    if (!blockOf(c, pos, b, m))
      return false;
    i64 at = compressedAt(pl, cp, b, pos);
    if (!m.write(at, rowValue) || !m.read(at, v))
      return false;
    a.compSum += weight(pos / cp.ratio) * v;
    for (int f = 0; f < cp.cells; ++f) {
      a.prev[ci][f] = a.cur[ci][f];
      a.cur[ci][f] = 0;
    }
  }
  hidden = mix(mix(k, a.windowSum), a.compSum);
  return true;
}

POOLC_HD inline bool finish(const Plan &pl, const poolmodel_call &c, const Acc &a, Mem &m) {
  i64 slotBegin = L::slot_begin_row(c.state_id);
  for (int ci = 0; ci < pl.comps; ++ci) {
    const CompProbe &cp = pl.c[ci];
    for (int f = 0; f < cp.cells; ++f) {
      i64 cell = cellAt(cp, f, slotBegin);
      if (!m.write(cell, a.cur[ci][f]))
        return false;
      if (cp.overlapping && !m.write(cell + 8, a.prev[ci][f]))
        return false;
    }
  }
  return true;
}

/// A verifier's rejected drafts: junk window rows after the last position.
POOLC_HD inline bool junk(const Plan &pl, const poolmodel_call &c, i64 from, Mem &m) {
  for (i64 pos = from; pos < from + c.rejected; ++pos)
    for (int i = 0; i < pl.windows; ++i)
      if (!m.write(windowAt(pl.w[i], c.state_id, pos), mix(0xDEADull, u64(pos))))
        return false;
  return true;
}

POOLC_HD inline u64 checksumOf(const Acc &a, const Plan &pl, i64 pos) {
  u64 h = mix(u64(pos), 0); // no flat PAGE rows in a row space
  h = mix(h, a.windowSum);
  h = mix(h, a.compSum);
  for (int ci = 0; ci < pl.comps; ++ci)
    for (int f = 0; f < pl.c[ci].cells; ++f)
      h = mix(mix(h, a.cur[ci][f]), a.prev[ci][f]);
  return h;
}

constexpr bool kStateful = true;

#else
// ---- flat: PAGE rows per token, a fork-state group per request ------------

constexpr i64 kPageRowBytes = V::kPageEntryBytes / L::kBlockSize;
constexpr int kMaxCells = 2 * kMaxFields;
constexpr bool kStateful = V::kHasStateGroups != 0;

struct Plan {
  int error;
  i64 error_at;
  int cells;
  i64 cell_off[kMaxCells], ring[kMaxCells];
};

/// The state cells: the first and last layer of every field at least 8
/// bytes a layer, each a recurrent value and a conv ring of up to three.
inline bool makePlan(Plan &pl, Mem &m) {
  pl.cells = 0;
  if (kPageRowBytes < 16)
    return m.fail(POOLMODEL_NO_PLAN, 0);
  if (!kStateful)
    return true;
  for (int i = 0; i < V::kNumStateFields; ++i) {
    const V::FieldView &f = V::kStateFields[i];
    if (f.layers < 1 || f.layer_bytes < 8)
      continue;
    i64 li[2];
    int np = probes(f.layers, li);
    for (int k = 0; k < np; ++k) {
      pl.cell_off[pl.cells] = f.offset + li[k] * f.layer_bytes;
      pl.ring[pl.cells] = imin(3, f.layer_bytes / 8 - 1);
      ++pl.cells;
    }
  }
  return pl.cells > 0 ? true : m.fail(POOLMODEL_NO_PLAN, 0);
}

struct Acc {
  i64 start;
  u64 pageSum;
  u64 rec[kMaxCells], conv[kMaxCells][3];
};

POOLC_HD inline i64 pageRowAt(i64 block, i64 pos) {
  return V::kPageRegionOffset + block * V::kPageEntryBytes + (pos % L::kBlockSize) * kPageRowBytes;
}
POOLC_HD inline i64 groupAt(i64 group) {
  return V::kStateRegionOffset + group * V::kStateGroupBytes;
}

POOLC_HD inline bool begin(const Plan &pl, const poolmodel_call &c, i64 pos, Acc &a, Mem &m) {
  a.start = pos;
  a.pageSum = 0;
  for (i64 q = 0; q < pos; ++q) {
    i64 b = 0;
    u64 v0 = 0, v1 = 0;
    if (!blockOf(c, q, b, m) || !m.read(pageRowAt(b, q), v0) || !m.read(pageRowAt(b, q) + 8, v1))
      return false;
    a.pageSum += weight(q) * (v0 + 3 * v1);
  }
  i64 group = groupAt(c.state_id);
  for (int i = 0; i < pl.cells; ++i) {
    a.rec[i] = 0;
    for (int j = 0; j < 3; ++j)
      a.conv[i][j] = 0;
    if (pos == 0)
      continue; // a cold request starts from zero
    if (!m.read(group + pl.cell_off[i], a.rec[i]))
      return false;
    for (i64 j = 0; j < pl.ring[i]; ++j)
      if (!m.read(group + pl.cell_off[i] + 8 * (j + 1), a.conv[i][j]))
        return false;
  }
  return true;
}

POOLC_HD inline bool step(const Plan &pl, const poolmodel_call &c, i64 pos, i64 token,
                          Acc &a, u64 &hidden, Mem &m) {
  u64 k = mix(u64(token), u64(pos));
  u64 sMix = 0;
  for (int i = 0; i < pl.cells; ++i) {
    u64 in = mix(k, u64(i) + 1);
    u64 conv = in;
    for (i64 j = 0; j < pl.ring[i]; ++j)
      conv += a.conv[i][j];
    a.rec[i] = mix(a.rec[i], conv);
    if (pl.ring[i] > 0)
      a.conv[i][pos % pl.ring[i]] = in;
    sMix = mix(sMix, a.rec[i]);
  }
  u64 kv = mix(k, sMix);
  i64 b = 0;
  if (!blockOf(c, pos, b, m))
    return false;
  i64 row = pageRowAt(b, pos);
  u64 v0 = 0, v1 = 0;
  if (!m.write(row, kv) || !m.write(row + 8, kv ^ 0x5555555555555555ull) ||
      !m.read(row, v0) || !m.read(row + 8, v1))
    return false;
  a.pageSum += weight(pos) * (v0 + 3 * v1);
  hidden = mix(kv, a.pageSum);
  return true;
}

POOLC_HD inline bool finish(const Plan &pl, const poolmodel_call &c, const Acc &a, Mem &m) {
  i64 group = groupAt(c.state_id);
  for (int i = 0; i < pl.cells; ++i) {
    if (!m.write(group + pl.cell_off[i], a.rec[i]))
      return false;
    for (i64 j = 0; j < pl.ring[i]; ++j)
      if (!m.write(group + pl.cell_off[i] + 8 * (j + 1), a.conv[i][j]))
        return false;
  }
  return true;
}

POOLC_HD inline bool junk(const Plan &, const poolmodel_call &, i64, Mem &) { return true; }

POOLC_HD inline u64 checksumOf(const Acc &a, const Plan &pl, i64 pos) {
  u64 h = mix(u64(pos), a.pageSum);
  h = mix(h, 0); // no window rows
  h = mix(h, 0); // no compressed rows
  for (int i = 0; i < pl.cells; ++i)
    h = mix(h, a.rec[i]);
  for (int i = 0; i < pl.cells; ++i)
    for (i64 j = 0; j < pl.ring[i]; ++j)
      h = mix(h, a.conv[i][j]);
  return h;
}

#endif

/// The state id a stateful call needs, checked against the layout.
POOLC_HD inline bool stateIdOk(const poolmodel_call &c) {
  if (!kStateful)
    return true;
#if POOLC_LAYOUT_ROW_SPACE
  // a physical slot of one of the kNumSlots groups
  return c.state_id >= L::kSlotPositions - L::kNumSlots && c.state_id < L::kSlotPositions;
#else
  return c.state_id >= 0 && c.state_id < V::kStateGroups;
#endif
}

/// One forward of `count` positions from `start` (ReferenceModel::forward).
/// The probe plan, built once on the host from the header's tables.
inline Plan buildPlan() {
  Plan pl{};
  Mem m{nullptr, 0, POOLMODEL_OK, 0};
  makePlan(pl, m);
  pl.error = m.error;
  pl.error_at = m.error_at;
  return pl;
}

/// The checks a call shares: its own arguments (`argsOk`), then the plan's
/// health. Sets c.error and returns false when either fails.
POOLC_HD inline bool callOk(poolmodel_call &c, bool argsOk, const Plan &pl) {
  c.error = POOLMODEL_OK;
  c.accesses = 0;
  if (!argsOk || !stateIdOk(c)) {
    c.error = POOLMODEL_BAD_ARGS;
    c.error_at = c.start;
  } else if (pl.error != POOLMODEL_OK) {
    c.error = pl.error;
    c.error_at = pl.error_at;
  }
  return c.error == POOLMODEL_OK;
}

/// What a call's memory accesses came to.
POOLC_HD inline int callDone(poolmodel_call &c, const Mem &m) {
  c.accesses = m.accesses;
  c.error = m.error;
  c.error_at = m.error_at;
  return c.error;
}

POOLC_HD inline int forward(unsigned char *arena, poolmodel_call &c, const Plan &pl) {
  if (!callOk(c, c.start >= 0 && c.count >= 1 && c.rejected >= 0 &&
                     (c.extend ? c.start + 1 == c.tokens_len
                               : c.start + c.count <= c.tokens_len),
              pl))
    return c.error;
  Mem m{arena, 0, POOLMODEL_OK, 0};
  Acc a;
  u64 hidden = 0;
  i64 next = 0;
  bool ok = begin(pl, c, c.start, a, m);
  for (i64 i = 0; ok && i < c.count; ++i) {
    i64 pos = c.start + i;
    ok = step(pl, c, pos, c.tokens[pos], a, hidden, m);
    next = i64(hidden % u64(kVocab));
    if (ok && c.extend && i + 1 < c.count)
      c.tokens[pos + 1] = next;
  }
  ok = ok && finish(pl, c, a, m) && junk(pl, c, c.start + c.count, m);
  c.next = next;
  return callDone(c, m);
}

/// A checksum of everything a forward at `start` would read.
POOLC_HD inline int checksum(unsigned char *arena, poolmodel_call &c, const Plan &pl) {
  if (!callOk(c, c.start >= 0, pl))
    return c.error;
  Mem m{arena, 0, POOLMODEL_OK, 0};
  Acc a;
  if (begin(pl, c, c.start, a, m))
    c.checksum = checksumOf(a, pl, c.start);
  return callDone(c, m);
}

} // namespace poolmodel

#endif
