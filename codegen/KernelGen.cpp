//===- KernelGen.cpp - Lower the kernel descriptions per target -----------===//
//
// One body builder (emitItem) serves every target: the GPU kernels wrap it
// in a grid-stride loop over (block x, thread) with the item in block y, the
// host functions wrap it in plain loops. Accesses are `vecBytes` wide
// (16 B where the layout proves it), consecutive threads touch consecutive
// vectors (coalesced), and every address is formed in 64 bits.
//
//===----------------------------------------------------------------------===//

#include "codegen/KernelGen.h"

#include "poolrt/Checked.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/ROCDLDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <atomic>
#include <thread>

using namespace mlir;
using namespace mlir::pool;

namespace {
struct TargetInfo {
  Target target;
  const char *name, *codeFormat;
};
constexpr TargetInfo kTargets[] = {
    {Target::Gfx942, "gfx942", "amdgpu-code-object-v5"},
    {Target::Gfx950, "gfx950", "amdgpu-code-object-v5"},
    {Target::Sm90, "sm_90", "ptx"},
    {Target::Host, "host", "llvm-ir"},
};
const TargetInfo &infoOf(Target t) {
  for (const TargetInfo &i : kTargets)
    if (i.target == t)
      return i;
  llvm_unreachable("a Target outside kTargets");
}
} // namespace

std::optional<Target> mlir::pool::parseTarget(llvm::StringRef name) {
  for (const TargetInfo &i : kTargets)
    if (name == i.name)
      return i.target;
  return std::nullopt;
}
const char *mlir::pool::targetName(Target t) { return infoOf(t).name; }
const char *mlir::pool::targetCodeFormat(Target t) { return infoOf(t).codeFormat; }
bool mlir::pool::isAmdTarget(Target t) {
  return t == Target::Gfx942 || t == Target::Gfx950;
}
bool mlir::pool::isKnownTarget(llvm::StringRef t) { return parseTarget(t).has_value(); }
const char *mlir::pool::knownTargetList() {
  static const std::string list = [] {
    std::string l;
    for (const TargetInfo &i : kTargets)
      l += (l.empty() ? "" : ", ") + std::string(i.name);
    return l;
  }();
  return list.c_str();
}

namespace {

constexpr int64_t kSegmentRow = 8; // i64 fields per segment-table row

struct Emitter {
  OpBuilder &b;
  Location loc;
  const KernelSpec &k;
  bool amd;     // AMDGPU target
  unsigned as;  // address space of the pointers (1 global, 0 host)
  unsigned unroll; // vectors a thread loads before it stores them (1: one)
  /// Where a segment table goes (before this op, at module or gpu.module
  /// level); null: every segment gets its own loop.
  Operation *table = nullptr;
  unsigned tableSpace = 0; // the table's address space (4: constant on GPUs)
  /// The launch, for the table walks: block x, thread x, grid x,
  /// threads per block (the host: 0, 0, 1, 1).
  Value blockX, threadX, gridX;
  int64_t threads = 1;

  Value c64(int64_t v) { return arith::ConstantIntOp::create(b, loc, v, 64); }
  Value c32(int64_t v) { return arith::ConstantIntOp::create(b, loc, v, 32); }
  Type ptrTy() { return LLVM::LLVMPointerType::get(b.getContext(), as); }
  Type vecTy() {
    switch (k.vecBytes) {
    case 16:
      return VectorType::get({4}, b.getI32Type());
    case 8:
      return b.getI64Type();
    case 4:
      return b.getI32Type();
    case 2:
      return b.getI16Type();
    default:
      return b.getI8Type();
    }
  }
  Value gep(Value base, Value byteOff) {
    return LLVM::GEPOp::create(b, loc, ptrTy(), b.getI8Type(), base,
                               ValueRange{byteOff});
  }
  /// ids[item * idsPerItem + index], sign-extended to 64 bits; the item
  /// itself for index -1 (the staging side).
  Value loadId(Value ids, Value item, int index) {
    if (index < 0)
      return item;
    Value idx = item;
    if (k.idsPerItem() != 1) {
      idx = arith::MulIOp::create(b, loc, item, c64(k.idsPerItem()));
      if (index != 0)
        idx = arith::AddIOp::create(b, loc, idx, c64(index));
    }
    Value p = LLVM::GEPOp::create(b, loc, ptrTy(), b.getI32Type(), ids,
                                  ValueRange{idx});
    Value id = LLVM::LoadOp::create(b, loc, b.getI32Type(), p, /*align=*/4);
    return arith::ExtSIOp::create(b, loc, b.getI64Type(), id);
  }

  /// Copy every segment of one item: for v in [first, nvec) step `step`.
  void emitItem(Value arena, Value staging, Value ids, Value item, Value first,
                Value step) {
    Value srcBase = k.src == Space::Arena ? arena : staging;
    Value dstBase = k.dst == Space::Arena ? arena : staging;
    // Every id the item's segments use, loaded once up front (the source's
    // before the destination's, in segment order).
    llvm::SmallDenseMap<int, Value> idAt;
    for (const CopySegment &s : k.segments)
      for (int index : {idIndex(k, s, true), idIndex(k, s, false)})
        if (!idAt.count(index))
          idAt[index] = loadId(ids, item, index);
    // The kernel checks its own ids against the ranges it was compiled
    // for (one unsigned compare each, so a negative id fails too) and
    // skips an item outside them. The launcher checks the same ranges
    // from the manifest; this check holds when a crafted manifest claims
    // wider ranges than the code has, so no id can address past the arena.
    llvm::SmallVector<int> positions;
    for (auto &entry : idAt)
      if (entry.first >= 0)
        positions.push_back(entry.first);
    llvm::sort(positions);
    Value inRange;
    for (int index : positions) {
      Value ok = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                       idAt[index],
                                       c64(k.idTuple[size_t(index)].maxId));
      inRange = inRange ? arith::AndIOp::create(b, loc, inRange, ok) : ok;
    }
    OpBuilder::InsertionGuard guardIds(b);
    if (inRange) {
      auto ifOp = scf::IfOp::create(b, loc, inRange, /*withElseRegion=*/false);
      b.setInsertionPointToStart(ifOp.thenBlock());
    }
    if (table && usesSegmentTable(k))
      emitSegmentTable(srcBase, dstBase, item, idAt);
    else
      for (const CopySegment &s : k.segments) {
        int64_t nvec = s.bytes / k.vecBytes;
        if (nvec == 0)
          continue;
        Value srcId = idAt[idIndex(k, s, true)];
        Value dstId = idAt[idIndex(k, s, false)];
        // 64-bit segment bases: id * stride + offset.
        Value srcSeg = arith::AddIOp::create(
            b, loc, arith::MulIOp::create(b, loc, srcId, c64(s.srcStride)),
            c64(s.srcOff));
        Value dstSeg = arith::AddIOp::create(
            b, loc, arith::MulIOp::create(b, loc, dstId, c64(s.dstStride)),
            c64(s.dstOff));
        emitSegment(srcBase, dstBase, srcSeg, dstSeg, c64(nvec), c64(s.bytes), first, step);
      }
  }

  /// A kernel of many segments (a checkpoint image: one per run and
  /// plane) walks a constant table of them instead of unrolling one copy
  /// loop per segment: the code stays one loop nest whatever the segment
  /// count, which is what the backends spend their time on (a four-target
  /// V4-Pro compile). The item's segments, end to end, are one space of
  /// `total` vectors; block b of the grid's `gridX` copies the contiguous
  /// chunk [b * total / gridX, (b + 1) * total / gridX) of it, so every
  /// block moves the same bytes whatever the segments' sizes, streams
  /// through few segments, and finds the first by a binary search over
  /// the rows' start vectors. Row i of `<kernel>_segments` is
  ///   { src_off, src_stride, dst_off, dst_stride, bytes, src_pos, dst_pos,
  ///     start }
  /// (pos: the id tuple position, -1 the item itself; start: the first
  /// vector of the segment in the item's space), in segment order.
  void emitSegmentTable(Value srcBase, Value dstBase, Value item,
                        llvm::SmallDenseMap<int, Value> &idAt) {
    // The run walk (tableWalk 2) numbers tiles, not vectors: row i's start
    // is its first tile, every row beginning a new tile.
    bool runTiles = k.tableWalk == 2;
    int64_t tile = std::max<int64_t>(1, k.tileVectors);
    llvm::SmallVector<int64_t> rows;
    int64_t total = 0, tiles = 0;
    for (const CopySegment &s : k.segments) {
      int64_t nvec = s.bytes / k.vecBytes;
      if (nvec == 0)
        continue;
      rows.append({s.srcOff, s.srcStride, s.dstOff, s.dstStride, s.bytes,
                   idIndex(k, s, true), idIndex(k, s, false), runTiles ? tiles : total});
      total += nvec;
      tiles += poolrt::ceilDiv(nvec, tile);
    }
    int64_t n = int64_t(rows.size()) / kSegmentRow;
    if (n == 0)
      return;
    std::string name = k.name + "_segments";
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPoint(table);
      auto arrTy = LLVM::LLVMArrayType::get(b.getI64Type(), uint64_t(rows.size()));
      auto value = DenseElementsAttr::get(
          RankedTensorType::get({int64_t(rows.size())}, b.getI64Type()),
          llvm::ArrayRef<int64_t>(rows));
      LLVM::GlobalOp::create(b, loc, arrTy, /*isConstant=*/true, LLVM::Linkage::Internal,
                             name, value, /*alignment=*/64, tableSpace);
    }
    auto tablePtrTy = LLVM::LLVMPointerType::get(b.getContext(), tableSpace);
    Value base = LLVM::AddressOfOp::create(b, loc, tablePtrTy, name);
    auto field = [&](Value row, int64_t i) -> Value {
      Value at = arith::AddIOp::create(
          b, loc, arith::MulIOp::create(b, loc, row, c64(kSegmentRow)), c64(i));
      Value p = LLVM::GEPOp::create(b, loc, tablePtrTy, b.getI64Type(), base,
                                    ValueRange{at});
      return LLVM::LoadOp::create(b, loc, b.getI64Type(), p, /*align=*/8,
                                  /*isVolatile=*/false, /*isNonTemporal=*/false,
                                  /*isInvariant=*/true);
    };
    // How many rows start before vector x: a branchless binary search,
    // one table load per halving (log2 n + 1 of them, the same address
    // for the whole block).
    int64_t top = 1;
    while (top * 2 <= n)
      top *= 2;
    auto startsBefore = [&](Value x) -> Value {
      Value pos = c64(0);
      for (int64_t half = top; half >= 1; half /= 2) {
        Value cand = arith::AddIOp::create(b, loc, pos, c64(half));
        Value fits = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ule, cand, c64(n));
        Value probe = arith::MinUIOp::create(
            b, loc, arith::SubIOp::create(b, loc, cand, c64(1)), c64(n - 1));
        Value below = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                            field(probe, 7), x);
        Value take = arith::AndIOp::create(b, loc, fits, below);
        pos = arith::SelectOp::create(b, loc, take, cand, pos);
      }
      return pos;
    };
    // The id at tuple position `pos` (the item for -1): a select over the
    // positions the kernel's segments use, all loaded and range-checked
    // above.
    auto pick = [&](Value pos) -> Value {
      Value got = item;
      for (auto &entry : idAt) {
        if (entry.first < 0)
          continue;
        Value is = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, pos,
                                         c64(entry.first));
        got = arith::SelectOp::create(b, loc, is, entry.second, got);
      }
      return got;
    };
    // Where row `row`'s segment lies for this item: its source and
    // destination byte offsets (the ids picked from the item's tuple), its
    // bytes, its length in vectors, and its first vector in the item.
    struct RowPlace {
      Value srcSeg, dstSeg, bytes, nvec, start;
    };
    auto place = [&](Value row) -> RowPlace {
      Value srcOff = field(row, 0), srcStride = field(row, 1), dstOff = field(row, 2),
            dstStride = field(row, 3), bytes = field(row, 4);
      Value srcId = pick(field(row, 5)), dstId = pick(field(row, 6));
      RowPlace r;
      r.srcSeg = arith::AddIOp::create(
          b, loc, arith::MulIOp::create(b, loc, srcId, srcStride), srcOff);
      r.dstSeg = arith::AddIOp::create(
          b, loc, arith::MulIOp::create(b, loc, dstId, dstStride), dstOff);
      r.bytes = bytes;
      r.nvec = arith::DivUIOp::create(b, loc, bytes, c64(k.vecBytes));
      r.start = field(row, 7);
      return r;
    };
    // Rows [firstSeg, endSeg): the part of each inside the item's vectors
    // [chunkBegin, chunkEnd), copied by the block's threads.
    auto copyRows = [&](Value firstSeg, Value endSeg, Value chunkBegin, Value chunkEnd) {
      auto segs = scf::ForOp::create(b, loc, firstSeg, endSeg, c64(1));
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(segs.getBody());
      RowPlace r = place(segs.getInductionVar());
      Value start = r.start, nvec = r.nvec;
      // The chunk's part of the segment, in the segment's vectors.
      Value lo = arith::SubIOp::create(
          b, loc, arith::MaxUIOp::create(b, loc, chunkBegin, start), start);
      Value hi = arith::SubIOp::create(
          b, loc,
          arith::MinUIOp::create(b, loc, chunkEnd, arith::AddIOp::create(b, loc, start, nvec)),
          start);
      emitSpan(srcBase, dstBase, r.srcSeg, r.dstSeg, lo, hi, r.bytes, /*guarded=*/false);
    };
    Value cT = c64(total);
    if (runTiles) {
      // Tile t lies inside one row: the row whose first tile is the last
      // at or before t (a cursor, as in the tile walk), its vectors
      // [(t - start) * tile, min(that + tile, nvec)).
      auto loop = scf::ForOp::create(b, loc, blockX, c64(tiles), gridX, ValueRange{c64(0)});
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(loop.getBody());
      Value t = loop.getInductionVar();
      Value row = advanceRow(n, field, loop.getRegionIterArgs()[0], t);
      RowPlace r = place(row);
      Value lo = arith::MulIOp::create(b, loc, arith::SubIOp::create(b, loc, t, r.start),
                                       c64(tile));
      Value hi = arith::MinUIOp::create(b, loc, arith::AddIOp::create(b, loc, lo, c64(tile)),
                                        r.nvec);
      emitSpan(srcBase, dstBase, r.srcSeg, r.dstSeg, lo, hi, r.bytes, /*guarded=*/true);
      scf::YieldOp::create(b, loc, ValueRange{row});
      return;
    }
    if (k.tableWalk == 1) {
      emitTileWalk(n, total, field, copyRows);
      return;
    }
    Value chunkBegin = arith::DivUIOp::create(
        b, loc, arith::MulIOp::create(b, loc, blockX, cT), gridX);
    Value chunkEnd = arith::DivUIOp::create(
        b, loc,
        arith::MulIOp::create(b, loc, arith::AddIOp::create(b, loc, blockX, c64(1)), cT),
        gridX);
    // The chunk's segments: the last to start at or before its begin (row
    // 0 starts at 0) through the last to start before its end.
    Value firstSeg = arith::SubIOp::create(
        b, loc, startsBefore(arith::AddIOp::create(b, loc, chunkBegin, c64(1))), c64(1));
    Value endSeg = startsBefore(chunkEnd);
    copyRows(firstSeg, endSeg, chunkBegin, chunkEnd);
  }

  /// Vectors [lo, hi) of one segment, copied by the block's threads, each
  /// from lo + its index, a block's width apart. The host, one thread,
  /// copies them all, or (KernelSpec::hostThreads, for pool-kernel-check)
  /// plays that many threads one after another, so the strides, bounds
  /// and unrolled loads the GPUs run are checked there too.
  void emitSpan(Value srcBase, Value dstBase, Value srcSeg, Value dstSeg, Value lo,
                Value hi, Value bytes, bool guarded) {
    int64_t played = as == 0 ? int64_t(std::max(1u, k.hostThreads)) : 1;
    if (played == 1) {
      emitSegment(srcBase, dstBase, srcSeg, dstSeg, hi, bytes,
                  arith::AddIOp::create(b, loc, lo, threadX), c64(threads), guarded);
      return;
    }
    auto each = scf::ForOp::create(b, loc, c64(0), c64(played), c64(1));
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(each.getBody());
    emitSegment(srcBase, dstBase, srcSeg, dstSeg, hi, bytes,
                arith::AddIOp::create(b, loc, lo, each.getInductionVar()), c64(played),
                guarded);
  }

  /// The last row at or after `from` whose start (field 7) is <= x: a
  /// cursor moved forward one row at a time (a walk's tiles only go
  /// forward, so a block's cursor moves at most n rows in all).
  template <typename Field>
  Value advanceRow(int64_t n, Field &field, Value from, Value x) {
    Type i64 = b.getI64Type();
    auto w = scf::WhileOp::create(b, loc, TypeRange{i64}, ValueRange{from});
    Block *before = b.createBlock(&w.getBefore(), {}, {i64}, {loc});
    Block *after = b.createBlock(&w.getAfter(), {}, {i64}, {loc});
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(before);
      Value s = before->getArgument(0);
      Value next = arith::AddIOp::create(b, loc, s, c64(1));
      Value inTable = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, next, c64(n));
      Value probe = arith::MinUIOp::create(b, loc, next, c64(n - 1));
      Value begins = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ule,
                                           field(probe, 7), x);
      scf::ConditionOp::create(b, loc, arith::AndIOp::create(b, loc, inTable, begins),
                               ValueRange{s});
      b.setInsertionPointToStart(after);
      scf::YieldOp::create(
          b, loc, ValueRange{arith::AddIOp::create(b, loc, after->getArgument(0), c64(1))});
    }
    b.setInsertionPointAfter(w);
    return w.getResult(0);
  }

  /// The table's tile walk (KernelSpec::tableWalk 1): the item's vectors
  /// in tiles of KernelSpec::tileVectors, tile t to block t mod gridX, so
  /// at any moment the item's blocks copy neighbouring tiles, as one
  /// memcpy's do. A block keeps a cursor on the row its last tile began
  /// in and moves it forward (tiles only go forward). The host's one
  /// "thread" copies each tile whole, over the same tiles (so its lowering
  /// checks the walk's tile and row boundaries).
  template <typename Field, typename CopyRows>
  void emitTileWalk(int64_t n, int64_t total, Field &field, CopyRows &copyRows) {
    int64_t tile = std::max<int64_t>(1, k.tileVectors);
    int64_t tiles = poolrt::ceilDiv(total, tile);
    auto advance = [&](Value from, Value x) { return advanceRow(n, field, from, x); };
    auto loop = scf::ForOp::create(b, loc, blockX, c64(tiles), gridX, ValueRange{c64(0)});
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value t = loop.getInductionVar();
    Value begin = arith::MulIOp::create(b, loc, t, c64(tile));
    Value end = arith::MinUIOp::create(b, loc, arith::AddIOp::create(b, loc, begin, c64(tile)),
                                       c64(total));
    Value firstSeg = advance(loop.getRegionIterArgs()[0], begin);
    Value lastSeg = advance(firstSeg, arith::SubIOp::create(b, loc, end, c64(1)));
    copyRows(firstSeg, arith::AddIOp::create(b, loc, lastSeg, c64(1)), begin, end);
    scf::YieldOp::create(b, loc, ValueRange{firstSeg});
  }

  /// One segment: vectors [first, nvec) step `step` from srcBase + srcSeg
  /// to dstBase + dstSeg (i64 byte offsets; `bytes` long). `guarded`: the
  /// unrolled loop runs to the end, each vector past the first loaded and
  /// stored under its own bound check, so a short span (a run's last tile)
  /// still has all its loads in flight before the stores, where the
  /// unguarded form ends in a loop of one load and one store a step.
  void emitSegment(Value srcBase, Value dstBase, Value srcSeg, Value dstSeg,
                   Value nvec, Value bytes, Value first, Value step,
                   bool guarded = false) {
    Type vt = vecTy();
    Value srcRsrc, dstRsrc;
    if (amd && k.rebase) {
      // A buffer descriptor per item and segment, based at the segment:
      // every offset inside it is < 4 GiB (pool-check-addressing proved
      // no slot or block spans more), the 64-bit part is in the base.
      auto rsrcTy = LLVM::LLVMPointerType::get(b.getContext(), 8);
      Value flags = c32(0x27000); // gfx9 raw buffer: 32-bit data format
      Value stride0 = arith::ConstantIntOp::create(b, loc, 0, 16);
      srcRsrc = ROCDL::MakeBufferRsrcOp::create(
          b, loc, rsrcTy, gep(srcBase, srcSeg), stride0, bytes, flags);
      dstRsrc = ROCDL::MakeBufferRsrcOp::create(
          b, loc, rsrcTy, gep(dstBase, dstSeg), stride0, bytes, flags);
    }
    // One vector: its load, and its store of the loaded value.
    auto offsetOf = [&](Value v) -> Value {
      return arith::MulIOp::create(b, loc, v, c64(k.vecBytes));
    };
    auto load = [&](Value off) -> Value {
      if (srcRsrc) {
        Value off32 = arith::TruncIOp::create(b, loc, b.getI32Type(), off);
        Value zero = c32(0);
        return ROCDL::RawPtrBufferLoadOp::create(
                   b, loc, TypeRange{vt}, ValueRange{srcRsrc, off32, zero, zero},
                   ArrayRef<NamedAttribute>{})
            .getResult();
      }
      Value sp = gep(srcBase, arith::AddIOp::create(b, loc, srcSeg, off));
      bool hint = k.streaming && as == 1;
      return LLVM::LoadOp::create(b, loc, vt, sp, k.vecBytes, /*isVolatile=*/false,
                                  /*isNonTemporal=*/hint, /*isInvariant=*/hint);
    };
    auto store = [&](Value off, Value x) {
      if (dstRsrc) {
        Value off32 = arith::TruncIOp::create(b, loc, b.getI32Type(), off);
        Value zero = c32(0);
        ROCDL::RawPtrBufferStoreOp::create(b, loc, TypeRange{},
                                           ValueRange{x, dstRsrc, off32, zero, zero},
                                           ArrayRef<NamedAttribute>{});
        return;
      }
      Value dp = gep(dstBase, arith::AddIOp::create(b, loc, dstSeg, off));
      LLVM::StoreOp::create(b, loc, x, dp, k.vecBytes, /*isVolatile=*/false,
                            /*isNonTemporal=*/k.streaming && as == 1);
    };
    Value rest = first;
    int64_t u = unroll;
    if (guarded && u > 1) {
      Value stride = arith::MulIOp::create(b, loc, step, c64(u));
      auto loop = scf::ForOp::create(b, loc, first, nvec, stride);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(loop.getBody());
      Value v0 = loop.getInductionVar();
      llvm::SmallVector<Value, 8> at{offsetOf(v0)}, got, inside{Value()};
      for (int64_t j = 1; j < u; ++j) {
        Value v = arith::AddIOp::create(b, loc, v0, arith::MulIOp::create(b, loc, step, c64(j)));
        at.push_back(offsetOf(v));
        inside.push_back(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, v, nvec));
      }
      got.push_back(load(at[0]));
      Value zero = arith::ConstantOp::create(b, loc, cast<TypedAttr>(b.getZeroAttr(vt)));
      for (int64_t j = 1; j < u; ++j) {
        auto ifOp = scf::IfOp::create(b, loc, TypeRange{vt}, inside[size_t(j)],
                                      /*addThenBlock=*/true, /*addElseBlock=*/true);
        OpBuilder::InsertionGuard inner(b);
        b.setInsertionPointToStart(ifOp.thenBlock());
        scf::YieldOp::create(b, loc, ValueRange{load(at[size_t(j)])});
        b.setInsertionPointToStart(ifOp.elseBlock());
        scf::YieldOp::create(b, loc, ValueRange{zero});
        got.push_back(ifOp.getResult(0));
      }
      store(at[0], got[0]);
      for (int64_t j = 1; j < u; ++j) {
        auto ifOp = scf::IfOp::create(b, loc, inside[size_t(j)], /*withElseRegion=*/false);
        OpBuilder::InsertionGuard inner(b);
        b.setInsertionPointToStart(ifOp.thenBlock());
        store(at[size_t(j)], got[size_t(j)]);
      }
      return;
    }
    if (u > 1) {
      // The unrolled part: u vectors a step apart, all loaded before any
      // is stored (the arena is one pointer, so the compiler may not move
      // a load past a store itself), while the last of them is in range:
      // v < nvec - (u-1)*step. It yields where the rest starts.
      Value span = arith::MulIOp::create(b, loc, step, c64(u - 1));
      Value ub = arith::SubIOp::create(b, loc, nvec, span);
      Value stride = arith::MulIOp::create(b, loc, step, c64(u));
      auto main = scf::ForOp::create(b, loc, first, ub, stride, ValueRange{first});
      {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(main.getBody());
        Value v0 = main.getInductionVar();
        llvm::SmallVector<Value, 8> at{offsetOf(v0)}, got;
        for (int64_t j = 1; j < u; ++j)
          at.push_back(offsetOf(arith::AddIOp::create(
              b, loc, v0, arith::MulIOp::create(b, loc, step, c64(j)))));
        for (Value off : at)
          got.push_back(load(off));
        for (int64_t j = 0; j < u; ++j)
          store(at[size_t(j)], got[size_t(j)]);
        scf::YieldOp::create(b, loc, ValueRange{arith::AddIOp::create(b, loc, v0, stride)});
      }
      rest = main.getResult(0);
    }
    // The rest (all of it when not unrolled): fewer than u steps.
    auto loop = scf::ForOp::create(b, loc, rest, nvec, step);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value off = offsetOf(loop.getInductionVar());
    store(off, load(off));
  }
};

void buildGpuKernel(OpBuilder &b, Location loc, const KernelSpec &k, bool amd) {
  auto ptr = LLVM::LLVMPointerType::get(b.getContext(), 1);
  auto fnTy = b.getFunctionType({ptr, ptr, ptr, b.getI64Type(), b.getI64Type()},
                                {});
  auto fn = gpu::GPUFuncOp::create(b, loc, k.name, fnTy);
  fn->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), b.getUnitAttr());
  fn.setKnownBlockSizeAttr(
      b.getDenseI32ArrayAttr({int32_t(kBlockThreads), 1, 1}));
  if (k.minBlocksPerSM)
    fn->setAttr(amd ? "rocdl.waves_per_eu" : "nvvm.minctasm",
                b.getI32IntegerAttr(int32_t(k.minBlocksPerSM)));
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&fn.getBody().front());
  Emitter e{b, loc, k, amd, 1, gpuUnrollOf(k), fn.getOperation(), 4};
  Block &entry = fn.getBody().front();
  Value arena = entry.getArgument(0), staging = entry.getArgument(1),
        ids = entry.getArgument(2), gridX = entry.getArgument(4);
  auto toI64 = [&](Value idx) {
    return arith::IndexCastOp::create(b, loc, b.getI64Type(), idx);
  };
  Value tid = toI64(gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x));
  Value bid = toI64(gpu::BlockIdOp::create(b, loc, gpu::Dimension::x));
  Value item = toI64(gpu::BlockIdOp::create(b, loc, gpu::Dimension::y));
  Value first = arith::AddIOp::create(
      b, loc, arith::MulIOp::create(b, loc, bid, e.c64(kBlockThreads)), tid);
  Value step = arith::MulIOp::create(b, loc, gridX, e.c64(kBlockThreads));
  e.blockX = bid;
  e.threadX = tid;
  e.gridX = gridX;
  e.threads = kBlockThreads;
  e.emitItem(arena, staging, ids, item, first, step);
  gpu::ReturnOp::create(b, loc);
}

void buildHostFunction(OpBuilder &b, Location loc, const KernelSpec &k) {
  auto ptr = LLVM::LLVMPointerType::get(b.getContext(), 0);
  auto fnTy = b.getFunctionType({ptr, ptr, ptr, b.getI64Type()}, {});
  auto fn = func::FuncOp::create(b, loc, k.name, fnTy);
  Block *entry = fn.addEntryBlock();
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(entry);
  Emitter e{b, loc, k, false, 0, std::max(1u, k.hostUnroll), fn.getOperation(), 0};
  e.blockX = e.c64(0);
  e.threadX = e.c64(0);
  e.gridX = e.c64(1);
  e.threads = 1;
  auto items = scf::ForOp::create(b, loc, e.c64(0), entry->getArgument(3),
                                  e.c64(1));
  {
    OpBuilder::InsertionGuard inner(b);
    b.setInsertionPointToStart(items.getBody());
    e.emitItem(entry->getArgument(0), entry->getArgument(1),
               entry->getArgument(2), items.getInductionVar(), e.c64(0),
               e.c64(1));
  }
  func::ReturnOp::create(b, loc);
}

/// A directory that looks like a ROCm toolkit to gpu-module-to-binary:
/// llvm/bin/ld.lld pointing at Debian's lld.
std::string amdToolkitDir(std::string &error) {
  llvm::SmallString<128> dir;
  if (auto ec = llvm::sys::fs::createUniqueDirectory("poolc-rocm", dir)) {
    error = "cannot create a temporary toolkit directory: " + ec.message();
    return "";
  }
  llvm::SmallString<128> bin(dir);
  llvm::sys::path::append(bin, "llvm", "bin");
  llvm::sys::fs::create_directories(bin);
  llvm::SmallString<128> lld(bin);
  llvm::sys::path::append(lld, "ld.lld");
  auto found = llvm::sys::findProgramByName("ld.lld-22");
  if (!found)
    found = llvm::sys::findProgramByName("ld.lld", {"/usr/lib/llvm-22/bin"});
  if (!found) {
    error = "ld.lld (Debian package lld-22) is needed to link AMD code objects";
    return "";
  }
  if (auto ec = llvm::sys::fs::create_link(*found, lld)) {
    error = "cannot link " + lld.str().str() + ": " + ec.message();
    return "";
  }
  return dir.str().str();
}

} // namespace

OwningOpRef<ModuleOp>
mlir::pool::buildKernelModule(MLIRContext *ctx,
                              const std::vector<KernelSpec> &specs,
                              llvm::StringRef target) {
  ctx->loadDialect<arith::ArithDialect, func::FuncDialect, gpu::GPUDialect,
                   LLVM::LLVMDialect, ROCDL::ROCDLDialect, scf::SCFDialect,
                   cf::ControlFlowDialect>();
  OpBuilder b(ctx);
  Location loc = UnknownLoc::get(ctx);
  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
  b.setInsertionPointToEnd(module->getBody());
  std::optional<Target> t = parseTarget(target);
  if (t == Target::Host) {
    for (const KernelSpec &k : specs)
      buildHostFunction(b, loc, k);
    return module;
  }
  (*module)->setAttr(gpu::GPUDialect::getContainerModuleAttrName(),
                     b.getUnitAttr());
  auto gm = gpu::GPUModuleOp::create(b, loc, "pool_kernels");
  b.setInsertionPointToStart(gm.getBody());
  bool amd = t && isAmdTarget(*t);
  for (const KernelSpec &k : specs)
    buildGpuKernel(b, loc, k, amd);
  return module;
}

/// The lowering itself; `error` says what failed (the caller puts it on the
/// model: the kernels live in their own context).
static bool lowerTo(MLIRContext *ctx, const std::vector<KernelSpec> &specs,
                    llvm::StringRef target, CodeFormat format,
                    std::string &code, std::string &error) {
  std::optional<Target> t = parseTarget(target);
  if (!t) {
    error = "unknown target '" + target.str() + "' (expected one of " +
            knownTargetList() + ")";
    return false;
  }
  OwningOpRef<ModuleOp> module = buildKernelModule(ctx, specs, target);
  std::string pipeline;
  std::string toolkit;
  if (*t == Target::Host) {
    pipeline = "builtin.module(convert-scf-to-cf,convert-arith-to-llvm,"
               "convert-func-to-llvm,convert-cf-to-llvm,"
               "reconcile-unrealized-casts)";
  } else if (*t == Target::Sm90) {
    pipeline = "builtin.module(gpu.module(convert-scf-to-cf),"
               "nvvm-attach-target{chip=sm_90 features=+ptx80 O=3},"
               "gpu.module(convert-gpu-to-nvvm{index-bitwidth=64},"
               "reconcile-unrealized-casts),gpu-module-to-binary{format=isa})";
  } else {
    const char *fmt = format == CodeFormat::Binary ? "bin" : "isa";
    if (format == CodeFormat::Binary) {
      toolkit = amdToolkitDir(error);
      if (toolkit.empty())
        return false;
    }
    pipeline = "builtin.module(gpu.module(convert-scf-to-cf,"
               "gpu.func(int-range-optimizations)),"
               "rocdl-attach-target{chip=" +
               target.str() + " abi=" + kAmdCodeObjectAbi +
               " O=3},gpu.module(convert-gpu-to-rocdl{index-bitwidth=64 "
               "runtime=HIP},reconcile-unrealized-casts),"
               "gpu-module-to-binary{format=" +
               fmt + (toolkit.empty() ? "" : " toolkit=" + toolkit) + "})";
  }
  PassManager pm(ctx);
  // The PassManager is anchored on builtin.module: hand it the inner list.
  llvm::StringRef inner(pipeline);
  inner.consume_front("builtin.module(");
  inner.consume_back(")");
  if (failed(parsePassPipeline(inner, pm))) {
    error = "internal error: cannot build the pass pipeline " + pipeline;
    return false;
  }
  LogicalResult ran = pm.run(*module);

  if (!toolkit.empty())
    llvm::sys::fs::remove_directories(toolkit);
  if (failed(ran)) {
    error = "lowering for " + target.str() + " failed";
    return false;
  }
  if (*t == Target::Host) {
    llvm::LLVMContext llctx;
    auto llmod = translateModuleToLLVMIR(*module, llctx, "pool_kernels");
    if (!llmod) {
      error = "translating the host kernels to LLVM IR failed";
      return false;
    }
    llvm::raw_string_ostream os(code);
    llmod->print(os, nullptr);
    return true;
  }
  for (gpu::BinaryOp bin : module->getOps<gpu::BinaryOp>())
    for (Attribute a : bin.getObjects()) {
      code = cast<gpu::ObjectAttr>(a).getObject().getValue().str();
      return true;
    }
  error = "lowering for " + target.str() + " produced no code object";
  return false;
}

FailureOr<std::string> mlir::pool::lowerKernels(ModelOp model,
                                                MLIRContext *kernelCtx,
                                                const std::vector<KernelSpec> &specs,
                                                llvm::StringRef target,
                                                CodeFormat format) {
  std::string code, error;
  if (!lowerTo(kernelCtx, specs, target, format, code, error))
    return model.emitError(error);
  return code;
}

FailureOr<std::vector<std::string>> mlir::pool::lowerKernelsForTargets(
    ModelOp model, MLIRContext *kernelCtx, const std::vector<KernelSpec> &specs,
    const std::vector<std::string> &targets, CodeFormat format) {
  size_t n = targets.size();
  std::vector<std::string> code(n), error(n);
  std::vector<char> ok(n, 0);
  auto lowerOne = [&](size_t i) {
    // A context per lowering: nothing is shared between the threads but
    // the (read-only) registry and the kernel specs.
    MLIRContext ctx(kernelCtx->getDialectRegistry(), MLIRContext::Threading::DISABLED);
    ctx.printOpOnDiagnostic(false);
    std::string diags;
    ScopedDiagnosticHandler handler(&ctx, [&](Diagnostic &d) {
      if (d.getSeverity() == DiagnosticSeverity::Error)
        diags += (diags.empty() ? "" : "; ") + d.str();
      return success();
    });
    ok[i] = lowerTo(&ctx, specs, targets[i], format, code[i], error[i]);
    if (!ok[i] && !diags.empty())
      error[i] += ": " + diags;
  };
  // The heaviest first (AMD, then NVPTX, then the host's LLVM IR), so the
  // last one to start is the lightest.
  std::vector<size_t> order(n);
  for (size_t i = 0; i < n; ++i)
    order[i] = i;
  auto weight = [&](size_t i) {
    std::optional<Target> t = parseTarget(targets[i]);
    return t && isAmdTarget(*t) ? 0 : t == Target::Sm90 ? 1 : 2;
  };
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return weight(a) < weight(b); });
  size_t workers = std::min<size_t>(n, std::max(1u, std::thread::hardware_concurrency()));
  if (workers <= 1) {
    for (size_t i : order)
      lowerOne(i);
  } else {
    std::atomic<size_t> next{0};
    std::vector<std::thread> pool;
    for (size_t w = 0; w < workers; ++w)
      pool.emplace_back([&] {
        for (size_t k; (k = next.fetch_add(1)) < n;)
          lowerOne(order[k]);
      });
    for (std::thread &t : pool)
      t.join();
  }
  for (size_t i = 0; i < n; ++i)
    if (!ok[i])
      return model.emitError(error[i]);
  return code;
}
