//===- pool-kernel-check.cpp - Run the host kernels against a reference ---===//
//
//   pool-kernel-check MODEL.yaml --budget SIZE --max-num-seqs N
//                     [--items N] [--seed S] [--param K=V]...
//
// Compiles the model, lowers its kernels for the host, JIT-compiles them
// in-process and runs every one on random data against a plain reference
// written from the layout's definitions (slot spans, the rows a window
// reaches, carried fields, envelopes), not from the kernel descriptions.
// The arena is a sparse mapping of the whole allocation (MAP_NORESERVE), so
// a 150 GiB layout puts its slots past 4 GiB while only the bytes a test
// touches are ever backed. Destinations start poisoned; after a run the
// kernel's arena and the reference's must agree on every byte of every
// source and destination span and of a guard band around each.
//
//===----------------------------------------------------------------------===//

#include "codegen/KernelGen.h"
#include "codegen/KernelSpec.h"
#include "codegen/Report.h"
#include "tools/lib/Driver.h"
#include "tools/lib/SizeArg.h"

#include "poolrt/RowSpace.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/IRReader/IRReader.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <sys/mman.h>
#include <xxhash.h>

#include <fstream>

#include <algorithm>
#include <cstring>
#include <random>
#include <set>

using namespace mlir;
namespace cl = llvm::cl;
namespace json = llvm::json;

static cl::opt<std::string> inputFile(cl::Positional, cl::desc("<model.yaml>"),
                                      cl::Required);
static cl::opt<std::string> budgetArg("budget", cl::Required);
static cl::opt<int64_t> maxNumSeqs("max-num-seqs", cl::Required);
static cl::opt<int64_t> numItems("items", cl::init(4),
                                 cl::desc("items per kernel launch"));
static cl::opt<unsigned> seed("seed", cl::init(1));
static cl::list<std::string> params("param");
static cl::opt<std::string> gpuPlan(
    "gpu-plan",
    cl::desc("write the GPU test plan (cases, inputs, expected XXH64 of the "
             "host lowering's outputs) to FILE instead of checking"),
    cl::value_desc("FILE"));

namespace {

using KernelFn = void (*)(void *, void *, void *, int64_t);

struct Span {
  int64_t begin, end; // byte offsets in the arena
};

/// A sparse, zero-initialized arena of `bytes` (only touched pages backed).
struct SparseArena {
  uint8_t *base = nullptr;
  size_t bytes = 0;
  explicit SparseArena(size_t n) : bytes(n) {
    void *p = mmap(nullptr, n, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    base = p == MAP_FAILED ? nullptr : static_cast<uint8_t *>(p);
    // Small pages only: a touched byte backs its own page and no more
    // (strayPage relies on it).
    if (base)
      madvise(base, n, MADV_NOHUGEPAGE);
  }
  ~SparseArena() {
    if (base)
      munmap(base, bytes);
  }
};

int failures = 0;
int64_t bytesChecked = 0;

void fail(const std::string &what) {
  llvm::errs() << "FAIL: " << what << "\n";
  ++failures;
}

struct Layout {
  const json::Object *report;
  const json::Object *rs = nullptr; // row space, if any
  int64_t allocation = 0;
};

/// Every byte a checkpoint image carries, per plane, in image order: the
/// runs of consecutive carried fields (padding between them rides along)
/// and the window rows some (layer, position) reaches. Independent of the
/// kernel description: recomputed from fields, classes and the ring.
std::vector<std::vector<Span>> imageSpansOfSlot(const Layout &L) {
  const json::Object &rs = *L.rs;
  int64_t arenaRows = *rs.getInteger("arena_rows");
  int64_t ring = *rs.getInteger("ring_slots");
  std::vector<std::vector<Span>> out;
  const json::Array &planes = *rs.getArray("planes");
  for (size_t p = 0; p < planes.size(); ++p) {
    const json::Object &plane = *planes[p].getAsObject();
    std::string name = plane.getString("name")->str();
    int64_t w = *plane.getInteger("row_bytes");
    std::vector<char> mask(size_t(*rs.getInteger("slot_rows") * w), 0);
    // Carried fields of this plane, in declared order, runs merged.
    std::vector<const json::Object *> fields;
    for (const json::Value &av : *L.report->getArray("arenas"))
      for (const json::Value &fv : *av.getAsObject()->getArray("fields")) {
        const json::Object &f = *fv.getAsObject();
        if (f.getString("plane") && *f.getString("plane") == name)
          fields.push_back(&f);
      }
    for (size_t i = 0; i < fields.size(); ++i) {
      if (!*fields[i]->getBoolean("in_checkpoint"))
        continue;
      size_t j = i;
      while (j + 1 < fields.size() && *fields[j + 1]->getBoolean("in_checkpoint"))
        ++j;
      std::fill(mask.begin() + *fields[i]->getInteger("offset"),
                mask.begin() + *fields[j]->getInteger("end"), 1);
      i = j;
    }
    for (const json::Value &cv : *rs.getArray("classes")) {
      const json::Object &c = *cv.getAsObject();
      int64_t L_ = int64_t(c.getArray("layers")->size());
      int64_t S = *c.getInteger("ring_stride");
      for (int64_t li = 0; li < L_; ++li)
        for (int64_t q = 0; q < ring; ++q) {
          int64_t row = arenaRows + *c.getInteger("entry_offset") + li * S +
                        (q / S) * (L_ * S) + q % S;
          std::fill(mask.begin() + row * w, mask.begin() + (row + 1) * w, 1);
        }
    }
    std::vector<Span> spans;
    for (int64_t b = 0; b < int64_t(mask.size());) {
      if (!mask[b]) {
        ++b;
        continue;
      }
      int64_t e = b;
      while (e < int64_t(mask.size()) && mask[e])
        ++e;
      spans.push_back({b, e});
      b = e;
    }
    out.push_back(spans);
  }
  return out;
}

/// Reference implementations, from the layout's definitions.
struct Reference {
  const Layout &L;
  int64_t slotStart(int64_t slot, size_t plane) const {
    const json::Object &rs = *L.rs;
    const json::Object &p = *(*rs.getArray("planes"))[plane].getAsObject();
    int64_t slotRows = *rs.getInteger("slot_rows");
    int64_t origin = *rs.getInteger("slot_positions") -
                     *rs.getInteger("plane_rows") / slotRows;
    return *p.getInteger("offset") +
           (slot - origin) * slotRows * *p.getInteger("row_bytes");
  }
  /// A slot's span in every plane (row space).
  std::vector<Span> slotSpans(int64_t slot) const {
    std::vector<Span> s;
    const json::Array &planes = *L.rs->getArray("planes");
    for (size_t p = 0; p < planes.size(); ++p) {
      int64_t b = slotStart(slot, p);
      s.push_back({b, b + *planes[p].getAsObject()->getInteger("slot_bytes")});
    }
    return s;
  }
  /// A block's regions, in order: its envelope in every plane, then what
  /// rides the block table with explicit bytes (a PAGE entry's bytes beyond
  /// the envelopes). In a row space this is also one PAGE unit of a
  /// checkpoint image (spec §9).
  std::vector<Span> blockSpans(int64_t block) const {
    std::vector<Span> s;
    if (L.rs) {
      int64_t env = *L.rs->getInteger("envelope_rows");
      for (const json::Value &pv : *L.rs->getArray("planes")) {
        const json::Object &p = *pv.getAsObject();
        int64_t w = *p.getInteger("row_bytes");
        int64_t b = *p.getInteger("offset") + block * env * w;
        s.push_back({b, b + env * w});
      }
    }
    for (const json::Value &cv : *L.report->getArray("entry_classes")) {
      const json::Object &c = *cv.getAsObject();
      if (*c.getString("pool") != "page" || !c.getInteger("region_offset"))
        continue;
      int64_t per = *c.getInteger("entry_bytes");
      if (L.rs)
        for (const json::Value &pv : *L.rs->getArray("planes"))
          per -= *L.rs->getInteger("envelope_rows") *
                 *pv.getAsObject()->getInteger("row_bytes");
      int64_t b = *c.getInteger("region_offset") + block * per;
      s.push_back({b, b + per});
    }
    return s;
  }
  /// The bytes a slot's checkpoint image carries, in image order (row
  /// space): per plane, the carried fields and reached window rows.
  std::vector<Span> imageSpans(int64_t slot) const {
    if (perPlaneImage.empty())
      perPlaneImage = imageSpansOfSlot(L);
    std::vector<Span> out;
    for (size_t p = 0; p < perPlaneImage.size(); ++p) {
      int64_t base = slotStart(slot, p);
      for (Span s : perPlaneImage[p])
        out.push_back({base + s.begin, base + s.end});
    }
    return out;
  }
  mutable std::vector<std::vector<Span>> perPlaneImage;
};

int64_t spanBytes(const std::vector<Span> &spans) {
  int64_t n = 0;
  for (Span s : spans)
    n += s.end - s.begin;
  return n;
}

/// Copy the first `bytes` bytes of the concatenation of `from` into the
/// concatenation of `to` (a checkpoint image into its units, unit-major,
/// or back).
void streamCopy(uint8_t *base, const std::vector<Span> &from,
                const std::vector<Span> &to, int64_t bytes) {
  size_t fi = 0, ti = 0;
  int64_t fo = 0, to_ = 0;
  while (bytes > 0 && fi < from.size() && ti < to.size()) {
    int64_t n = std::min({bytes, from[fi].end - from[fi].begin - fo,
                          to[ti].end - to[ti].begin - to_});
    std::memmove(base + to[ti].begin + to_, base + from[fi].begin + fo, n);
    bytes -= n;
    fo += n;
    to_ += n;
    if (fo == from[fi].end - from[fi].begin)
      ++fi, fo = 0;
    if (to_ == to[ti].end - to[ti].begin)
      ++ti, to_ = 0;
  }
}

void fillRandom(uint8_t *p, int64_t n, std::mt19937_64 &rng) {
  for (int64_t i = 0; i + 8 <= n; i += 8) {
    uint64_t v = rng();
    std::memcpy(p + i, &v, 8);
  }
  for (int64_t i = n & ~int64_t(7); i < n; ++i)
    p[i] = uint8_t(rng());
}

/// Both arenas get the same random sources and poisoned destinations.
void prepare(SparseArena &a, SparseArena &b, const std::vector<Span> &srcs,
             const std::vector<Span> &dsts, unsigned s) {
  for (const Span &d : dsts) {
    std::memset(a.base + d.begin, 0xA5, d.end - d.begin);
    std::memset(b.base + d.begin, 0xA5, d.end - d.begin);
  }
  std::mt19937_64 rng(s);
  for (const Span &sp : srcs) {
    fillRandom(a.base + sp.begin, sp.end - sp.begin, rng);
    std::memcpy(b.base + sp.begin, a.base + sp.begin, sp.end - sp.begin);
  }
}

/// The first page of `a` that is resident outside the pages `allowed`
/// covers, as a byte offset, or -1. A run backs exactly the pages it
/// touches (the arena is sparse, not huge-page backed, and every check
/// gives its pages back), so any other resident page was reached by the
/// kernel: a stray read or write, anywhere in the arena.
int64_t strayPage(const SparseArena &a, std::vector<Span> allowed) {
  const int64_t page = 4096;
  std::sort(allowed.begin(), allowed.end(),
            [](Span x, Span y) { return x.begin < y.begin; });
  size_t next = 0;
  int64_t coveredTo = 0; // pages below this (in bytes) are allowed
  const int64_t chunk = int64_t(1) << 30;
  std::vector<unsigned char> resident(size_t(chunk / page));
  for (int64_t off = 0; off < int64_t(a.bytes); off += chunk) {
    int64_t len = std::min<int64_t>(chunk, int64_t(a.bytes) - off);
    if (mincore(a.base + off, size_t(len), resident.data()) != 0)
      return -1; // cannot tell; the byte comparison still runs
    for (int64_t i = 0; i < (len + page - 1) / page; ++i) {
      if (!(resident[size_t(i)] & 1))
        continue;
      int64_t at = off + i * page;
      while (next < allowed.size() && allowed[next].begin / page * page <= at) {
        coveredTo =
            std::max(coveredTo, (allowed[next].end + page - 1) / page * page);
        ++next;
      }
      if (at >= coveredTo)
        return at;
    }
  }
  return -1;
}

void checkNoStray(const std::string &kernel, const SparseArena &a,
                  const std::vector<Span> &allowed) {
  int64_t at = strayPage(a, allowed);
  if (at >= 0)
    fail(kernel + ": the arena page at byte " + std::to_string(at) +
         " was touched, outside every source and destination");
}

/// Give back the pages around `spans` in both arenas, so a long run stays
/// small and the next stray-page check starts clean.
void release(SparseArena &k, SparseArena &r, const std::vector<Span> &spans,
             int64_t allocation) {
  for (Span s : spans) {
    int64_t page = 4096;
    int64_t b = std::max<int64_t>(0, (s.begin - 4096) / page * page);
    int64_t e = std::min<int64_t>(allocation, s.end + 4096);
    madvise(k.base + b, e - b, MADV_DONTNEED);
    madvise(r.base + b, e - b, MADV_DONTNEED);
  }
}

void compare(const char *kernel, SparseArena &k, SparseArena &r,
             std::vector<Span> spans, int64_t allocation) {
  const int64_t guard = 4096;
  for (Span s : spans) {
    int64_t lo = std::max<int64_t>(0, s.begin - guard);
    int64_t hi = std::min<int64_t>(allocation, s.end + guard);
    if (std::memcmp(k.base + lo, r.base + lo, hi - lo) != 0) {
      int64_t at = lo;
      while (k.base[at] == r.base[at])
        ++at;
      fail(std::string(kernel) + ": arena differs from the reference at byte " +
           std::to_string(at) + " (span " + std::to_string(s.begin) + ".." +
           std::to_string(s.end) + ")");
      return;
    }
    bytesChecked += hi - lo;
  }
}

/// The PAGE-unit geometry of a row space, from the layout definitions: an
/// image is the carried spans of a slot, a unit is one block's regions
/// (which must be exactly one PAGE entry), and a checkpoint takes
/// ceil(image / unit) units (spec §9).
struct UnitGeometry {
  int64_t imageBytes = 0, unitBytes = 0, units = 0;
};
UnitGeometry unitGeometry(const Reference &ref) {
  UnitGeometry g;
  g.imageBytes =
      spanBytes(ref.imageSpans(*ref.L.rs->getInteger("slot_positions") - 1));
  g.unitBytes = spanBytes(ref.blockSpans(0));
  g.units = g.unitBytes ? (g.imageBytes + g.unitBytes - 1) / g.unitBytes : 0;
  return g;
}

/// Whether the row space's slot class keeps copy checkpoints (PAGE units).
bool copyTransfer(const Layout &L) {
  for (const json::Value &cv : *L.report->getArray("entry_classes")) {
    const json::Object &c = *cv.getAsObject();
    const json::Object *t = c.getObject("transfer");
    if (*c.getString("name") == *L.rs->getString("slot_class") && t &&
        t->getString("kind") && *t->getString("kind") == "copy")
      return true;
  }
  return false;
}

int64_t pageEntryBytes(const Layout &L) {
  for (const json::Value &cv : *L.report->getArray("entry_classes")) {
    const json::Object &c = *cv.getAsObject();
    if (*c.getString("name") == *L.rs->getString("page_class"))
      return *c.getInteger("entry_bytes");
  }
  return -1;
}

/// `count` ids of [lo, hi) not yet in `used` (and added to it), `first`
/// (when >= 0 and unused) leading; the rest at random.
std::vector<int64_t> pickDistinct(int64_t lo, int64_t hi, int64_t count,
                                  int64_t first, std::set<int64_t> &used,
                                  std::mt19937_64 &rng) {
  std::vector<int64_t> out;
  if (first >= 0 && count > 0 && used.insert(first).second)
    out.push_back(first);
  std::uniform_int_distribution<int64_t> pick(lo, hi - 1);
  while (int64_t(out.size()) < count) {
    int64_t id = pick(rng);
    if (used.insert(id).second)
      out.push_back(id);
  }
  return out;
}

std::vector<Span> concat(std::vector<Span> a, const std::vector<Span> &b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

/// Items of (slot, unit_0, ..., unit_{n-1}): the image kernels' id tuples.
std::vector<int32_t> unitTuples(const std::vector<int64_t> &slots,
                                const std::vector<int64_t> &units,
                                int64_t perItem) {
  std::vector<int32_t> ids;
  for (size_t i = 0; i < slots.size(); ++i) {
    ids.push_back(int32_t(slots[i]));
    for (int64_t u = 0; u < perItem; ++u)
      ids.push_back(int32_t(units[i * size_t(perItem) + size_t(u)]));
  }
  return ids;
}

/// Image store / restore against the reference: the image (the slot's
/// carried spans, in image order) laid unit-major into the units' regions
/// (image byte b in unit b / unit_bytes at offset b % unit_bytes of its
/// concatenated regions), or read back. Destinations are poisoned whole
/// (every unit region for a store, the whole slot for a restore), so a byte
/// written outside the image shows; the stray-page check covers the rest of
/// the arena.
bool checkUnitKernel(const mlir::pool::KernelSpec &k, KernelFn fn,
                     const Reference &ref, SparseArena &karena,
                     SparseArena &rarena, std::mt19937_64 &rng,
                     int64_t &maxAddr) {
  const Layout &L = ref.L;
  if (!L.rs) {
    fail(k.name + ": a PAGE-unit image kernel in a model without a row space");
    return false;
  }
  UnitGeometry g = unitGeometry(ref);
  if (g.unitBytes != pageEntryBytes(L))
    fail(k.name + ": a block's regions hold " + std::to_string(g.unitBytes) +
         " bytes, a PAGE entry " + std::to_string(pageEntryBytes(L)));
  if (k.idsPerItem() != 1 + g.units) {
    fail(k.name + ": its item has " + std::to_string(k.idsPerItem()) +
         " ids; a " + std::to_string(g.imageBytes) + "-byte image in " +
         std::to_string(g.unitBytes) + "-byte units needs 1 + " +
         std::to_string(g.units));
    return false;
  }
  int64_t positions = *L.rs->getInteger("slot_positions");
  int64_t live = *L.rs->getInteger("num_slots");
  int64_t nb = *L.rs->getInteger("num_blocks");
  int64_t n = std::min<int64_t>({int64_t(numItems), live, nb / g.units});
  if (n <= 0)
    return false;
  std::set<int64_t> usedSlots, usedUnits;
  std::vector<int64_t> slots = pickDistinct(positions - live, positions, n,
                                            positions - 1, usedSlots, rng);
  std::vector<int64_t> units =
      pickDistinct(0, nb, n * g.units, nb - 1, usedUnits, rng);
  std::vector<int32_t> ids = unitTuples(slots, units, g.units);
  bool store = k.kind == "image_store";
  std::vector<std::vector<Span>> image(n), regions(n);
  std::vector<Span> srcs, dsts, slotWhole;
  for (int64_t i = 0; i < n; ++i) {
    image[i] = ref.imageSpans(slots[i]);
    for (int64_t u = 0; u < g.units; ++u)
      regions[i] = concat(regions[i], ref.blockSpans(units[i * g.units + u]));
    slotWhole = concat(slotWhole, ref.slotSpans(slots[i]));
    srcs = concat(srcs, store ? image[i] : regions[i]);
    dsts = concat(dsts, store ? regions[i] : ref.slotSpans(slots[i]));
  }
  prepare(karena, rarena, srcs, dsts, unsigned(rng()));
  if (getenv("POOL_KERNEL_CHECK_TRACE"))
    llvm::errs() << "running " << k.name << " on " << n << " items\n";
  fn(karena.base, nullptr, ids.data(), n);
  checkNoStray(k.name, karena, concat(srcs, dsts));
  for (int64_t i = 0; i < n; ++i) {
    if (store)
      streamCopy(rarena.base, image[i], regions[i], g.imageBytes);
    else
      streamCopy(rarena.base, regions[i], image[i], g.imageBytes);
  }
  std::vector<Span> all = concat(concat(srcs, dsts), slotWhole);
  for (Span s : all)
    maxAddr = std::max(maxAddr, s.end);
  compare(k.name.c_str(), karena, rarena, all, L.allocation);
  release(karena, rarena, all, L.allocation);
  return true;
}

int roundTrips = 0;

/// A copy checkpoint kept and resumed with the generated kernels alone:
/// store slots A into their units, restore the units into other, poisoned
/// slots B. B's image must equal A's byte for byte, B must keep its poison
/// outside the image, A and the units' bytes past the image must be
/// untouched, and no other page of the arena may be reached.
void checkImageRoundTrip(const std::vector<mlir::pool::KernelSpec> &specs,
                         llvm::orc::LLJIT &jit, const Reference &ref,
                         SparseArena &arena) {
  const Layout &L = ref.L;
  const mlir::pool::KernelSpec *store = nullptr, *restore = nullptr;
  for (const auto &k : specs) {
    if (k.kind == "image_store")
      store = &k;
    if (k.kind == "image_restore")
      restore = &k;
  }
  if (!copyTransfer(L)) {
    if (store || restore)
      fail("PAGE-unit image kernels in a model whose checkpoints are not "
           "copies");
    return;
  }
  if (!store || !restore) {
    fail("a copy-checkpoint model without pool_image_store and "
         "pool_image_restore");
    return;
  }
  auto storeSym = jit.lookup(store->name),
       restoreSym = jit.lookup(restore->name);
  if (!storeSym || !restoreSym) {
    fail("the image store/restore kernels are not in the JIT");
    if (!storeSym)
      llvm::consumeError(storeSym.takeError());
    if (!restoreSym)
      llvm::consumeError(restoreSym.takeError());
    return;
  }
  UnitGeometry g = unitGeometry(ref);
  if (store->idsPerItem() != 1 + g.units)
    return; // reported by checkUnitKernel
  int64_t positions = *L.rs->getInteger("slot_positions");
  int64_t live = *L.rs->getInteger("num_slots");
  int64_t nb = *L.rs->getInteger("num_blocks");
  int64_t n = std::min<int64_t>({int64_t(numItems), live / 2, nb / g.units});
  if (n <= 0)
    return;
  std::mt19937_64 rng(seed + 101);
  std::set<int64_t> usedSlots, usedUnits;
  std::vector<int64_t> a = pickDistinct(positions - live, positions, n,
                                        positions - 1, usedSlots, rng);
  std::vector<int64_t> b =
      pickDistinct(positions - live, positions, n, -1, usedSlots, rng);
  std::vector<int64_t> units =
      pickDistinct(0, nb, n * g.units, nb - 1, usedUnits, rng);
  std::vector<Span> touched;
  std::vector<std::vector<uint8_t>> savedA;
  for (int64_t i = 0; i < n; ++i) {
    for (Span s : ref.slotSpans(a[i])) {
      fillRandom(arena.base + s.begin, s.end - s.begin, rng);
      savedA.emplace_back(arena.base + s.begin, arena.base + s.end);
      touched.push_back(s);
    }
    for (Span s : ref.slotSpans(b[i])) {
      std::memset(arena.base + s.begin, 0xA5, s.end - s.begin);
      touched.push_back(s);
    }
    for (int64_t u = 0; u < g.units; ++u)
      for (Span s : ref.blockSpans(units[i * g.units + u])) {
        std::memset(arena.base + s.begin, 0x5A, s.end - s.begin);
        touched.push_back(s);
      }
  }
  std::vector<int32_t> storeIds = unitTuples(a, units, g.units);
  std::vector<int32_t> restoreIds = unitTuples(b, units, g.units);
  storeSym->toPtr<KernelFn>()(arena.base, nullptr, storeIds.data(), n);
  restoreSym->toPtr<KernelFn>()(arena.base, nullptr, restoreIds.data(), n);
  checkNoStray("image store -> restore", arena, touched);

  auto bytesOf = [&](const std::vector<Span> &spans) {
    std::vector<uint8_t> out;
    for (Span s : spans)
      out.insert(out.end(), arena.base + s.begin, arena.base + s.end);
    return out;
  };
  bool ok = true;
  size_t saved = 0;
  for (int64_t i = 0; i < n && ok; ++i) {
    std::string item = "round trip item " + std::to_string(i) + " (slot " +
                       std::to_string(a[i]) + " -> slot " +
                       std::to_string(b[i]) + "): ";
    std::vector<uint8_t> kept = bytesOf(ref.imageSpans(a[i]));
    std::vector<uint8_t> resumed = bytesOf(ref.imageSpans(b[i]));
    if (kept != resumed) {
      fail(item + "the restored image differs from the stored one");
      ok = false;
    }
    // B outside its image keeps the poison: blank the image out of a copy
    // of the slot, and every byte left must be poison.
    for (Span s : ref.slotSpans(b[i])) {
      std::vector<uint8_t> rest(arena.base + s.begin, arena.base + s.end);
      for (Span m : ref.imageSpans(b[i]))
        if (m.begin >= s.begin && m.end <= s.end)
          std::memset(rest.data() + (m.begin - s.begin), 0xA5, m.end - m.begin);
      auto bad = std::find_if(rest.begin(), rest.end(),
                              [](uint8_t v) { return v != 0xA5; });
      if (bad != rest.end()) {
        fail(item + "the restore wrote slot byte " +
             std::to_string(s.begin + (bad - rest.begin())) +
             " outside the image");
        ok = false;
      }
      bytesChecked += s.end - s.begin;
    }
    for (Span s : ref.slotSpans(a[i])) {
      if (std::memcmp(arena.base + s.begin, savedA[saved].data(),
                      savedA[saved].size()) != 0) {
        fail(item + "the store changed its source slot");
        ok = false;
      }
      bytesChecked += s.end - s.begin;
      ++saved;
    }
    std::vector<Span> regions;
    for (int64_t u = 0; u < g.units; ++u)
      regions = concat(regions, ref.blockSpans(units[i * g.units + u]));
    std::vector<uint8_t> unitBytes = bytesOf(regions);
    if (!std::equal(kept.begin(), kept.end(), unitBytes.begin()))
      fail(item + "the units do not hold the image unit-major"), ok = false;
    if (!std::all_of(unitBytes.begin() + int64_t(kept.size()), unitBytes.end(),
                     [](uint8_t v) { return v == 0x5A; }))
      fail(item + "the store wrote past the image in its last unit"),
          ok = false;
    bytesChecked += int64_t(kept.size() + resumed.size() + unitBytes.size());
  }
  if (ok)
    roundTrips += int(n);
  for (Span s : touched) {
    int64_t b0 = s.begin / 4096 * 4096;
    madvise(arena.base + b0, s.end - b0, MADV_DONTNEED);
  }
}

} // namespace

namespace {
/// The fill both sides use: 8-byte words from splitmix64 of the word's
/// offset in its space, so the device fills exactly what the host filled.
uint64_t patternWord(uint64_t offset, uint64_t space) {
  uint64_t z = (offset >> 3) + space * 0x9E3779B97F4A7C15ull + 0x632BE59BD9B4E019ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
void fillPattern(uint8_t *base, int64_t off, int64_t len, uint64_t space) {
  for (int64_t o = off; o < off + len; o += 8) {
    uint64_t w = patternWord(uint64_t(o), space);
    std::memcpy(base + o, &w, std::min<int64_t>(8, off + len - o));
  }
}

struct GpuCase {
  std::string name;
  const mlir::pool::KernelSpec *k;
  std::vector<int32_t> ids;
  int64_t items;
};

int writeGpuPlan(const std::string &path, const Layout &L,
                 const std::vector<mlir::pool::KernelSpec> &specs,
                 llvm::orc::LLJIT &jit) {
  auto find = [&](const std::string &kind) -> const mlir::pool::KernelSpec * {
    for (const auto &k : specs)
      if (k.kind == kind)
        return &k;
    return nullptr;
  };
  if (!L.rs) {
    llvm::errs() << "pool-kernel-check: --gpu-plan needs a row-space model\n";
    return 2;
  }
  int64_t positions = *L.rs->getInteger("slot_positions");
  int64_t nb = *L.rs->getInteger("num_blocks");
  std::vector<GpuCase> cases;
  auto slotCopy = find("slot_copy");
  // One pair: the top slot onto the lowest live one.
  cases.push_back({"slot_copy_x1", slotCopy,
                   {int32_t(positions - 1), int32_t(positions - 256)}, 1});
  // 256 pairs: the live slots onto 256 other positions of the plane.
  {
    GpuCase c{"slot_copy_x256", slotCopy, {}, 256};
    for (int64_t i = 0; i < 256; ++i) {
      c.ids.push_back(int32_t(positions - 1 - i));
      c.ids.push_back(int32_t(positions - 257 - i));
    }
    cases.push_back(c);
  }
  for (const char *kind : {"image_gather", "image_scatter"}) {
    GpuCase c{std::string(kind) + "_x256", find(kind), {}, 256};
    for (int64_t i = 0; i < 256; ++i)
      c.ids.push_back(int32_t(positions - 1 - i));
    cases.push_back(c);
  }
  for (const char *kind : {"block_gather", "block_scatter"}) {
    GpuCase c{std::string(kind) + "_x64", find(kind), {}, 64};
    for (int64_t i = 0; i < 64; ++i)
      c.ids.push_back(int32_t((i * 2654435761ll) % nb)); // spread, distinct
    std::sort(c.ids.begin(), c.ids.end());
    c.ids.erase(std::unique(c.ids.begin(), c.ids.end()), c.ids.end());
    c.items = int64_t(c.ids.size());
    cases.push_back(c);
  }

  // 64 pairs: relocations from the top of the block range downwards.
  if (const auto *blockCopy = find("block_copy")) {
    GpuCase c{"block_copy_x64", blockCopy, {}, 64};
    for (int64_t i = 0; i < 64; ++i) {
      c.ids.push_back(int32_t(nb - 1 - i));
      c.ids.push_back(int32_t(i * 3));
    }
    cases.push_back(c);
  }

  // 64 checkpoints kept and resumed through PAGE units: the live slots and
  // 64 x units_per_checkpoint distinct blocks spread over the whole range.
  for (const char *kind : {"image_store", "image_restore"}) {
    const mlir::pool::KernelSpec *k = find(kind);
    if (!k)
      continue;
    int64_t units = k->idsPerItem() - 1;
    GpuCase c{std::string(kind) + "_x64", k, {}, 64};
    std::set<int64_t> used;
    for (int64_t j = 0; int64_t(used.size()) < 64 * units; ++j) {
      int64_t unit = (j * 2654435761ll) % nb;
      if (used.insert(unit).second) {
        if (int64_t(used.size() - 1) % units == 0)
          c.ids.push_back(
              int32_t(positions - 1 - int64_t(used.size() - 1) / units));
        c.ids.push_back(int32_t(unit));
      }
    }
    cases.push_back(c);
  }

  std::ofstream out(path);
  out << "arena_bytes " << L.allocation << "\n";
  SparseArena arena(L.allocation);
  if (!arena.base) {
    llvm::errs() << "pool-kernel-check: cannot reserve the arena\n";
    return 1;
  }
  for (const GpuCase &c : cases) {
    const mlir::pool::KernelSpec &k = *c.k;
    int64_t n = c.items;
    if (int64_t(c.ids.size()) != n * k.idsPerItem()) {
      llvm::errs() << "pool-kernel-check: case " << c.name << " has "
                   << c.ids.size() << " ids for " << n << " items of "
                   << k.idsPerItem() << "\n";
      return 1;
    }
    auto idOf = [&](int64_t i, const mlir::pool::CopySegment &s,
                    bool src) -> int64_t {
      int index = mlir::pool::idIndex(k, s, src);
      return index < 0 ? i : c.ids[size_t(i * k.idsPerItem() + index)];
    };
    std::vector<Span> srcArena, dstArena;
    for (int64_t i = 0; i < n; ++i)
      for (const auto &s : k.segments) {
        if (k.src == mlir::pool::Space::Arena) {
          int64_t b = idOf(i, s, true) * s.srcStride + s.srcOff;
          srcArena.push_back({b, b + s.bytes});
        }
        if (k.dst == mlir::pool::Space::Arena) {
          int64_t b = idOf(i, s, false) * s.dstStride + s.dstOff;
          dstArena.push_back({b, b + s.bytes});
        }
      }
    // An image store or restore is checked over its whole destinations
    // (every unit region, every slot span): poisoned before, hashed after,
    // so the device may write nothing there but the image.
    if (k.kind == "image_store" || k.kind == "image_restore") {
      Reference ref{L};
      dstArena.clear();
      for (int64_t i = 0; i < n; ++i) {
        if (k.kind == "image_restore") {
          dstArena = concat(dstArena,
                            ref.slotSpans(c.ids[size_t(i * k.idsPerItem())]));
          continue;
        }
        for (int u = 1; u < k.idsPerItem(); ++u)
          dstArena = concat(
              dstArena, ref.blockSpans(c.ids[size_t(i * k.idsPerItem() + u)]));
      }
    }
    int64_t stagingBytes = k.stagingStride * n;
    std::vector<uint8_t> staging(size_t(stagingBytes), 0xA5);
    for (Span s : dstArena)
      std::memset(arena.base + s.begin, 0xA5, s.end - s.begin);
    for (Span s : srcArena)
      fillPattern(arena.base, s.begin, s.end - s.begin, 1);
    if (k.src == mlir::pool::Space::Staging)
      fillPattern(staging.data(), 0, stagingBytes, 2);
    auto sym = jit.lookup(k.name);
    if (!sym) {
      llvm::errs() << llvm::toString(sym.takeError()) << "\n";
      return 1;
    }
    sym->toPtr<KernelFn>()(arena.base, staging.data(),
                           const_cast<int32_t *>(c.ids.data()), n);
    XXH64_state_t *st = XXH64_createState();
    XXH64_reset(st, 0);
    if (k.dst == mlir::pool::Space::Staging)
      XXH64_update(st, staging.data(), staging.size());
    else
      for (Span s : dstArena)
        XXH64_update(st, arena.base + s.begin, s.end - s.begin);
    uint64_t h = XXH64_digest(st);
    XXH64_freeState(st);
    out << "case " << c.name << " " << k.name << " items " << n << " staging "
        << stagingBytes << " moved " << k.itemBytes * n << " ids_per_item "
        << k.idsPerItem() << "\n";
    out << "ids";
    for (int32_t id : c.ids)
      out << " " << id;
    out << "\n";
    for (Span s : srcArena)
      out << "fill " << s.begin << " " << s.end - s.begin << "\n";
    if (k.src == mlir::pool::Space::Staging)
      out << "fill_staging 0 " << stagingBytes << "\n";
    for (Span s : dstArena)
      out << "poison " << s.begin << " " << s.end - s.begin << "\n";
    if (k.dst == mlir::pool::Space::Staging)
      out << "hash_staging 0 " << stagingBytes << "\n";
    else
      for (Span s : dstArena)
        out << "hash " << s.begin << " " << s.end - s.begin << "\n";
    char hex[32];
    std::snprintf(hex, sizeof hex, "%016llx", (unsigned long long)h);
    out << "expect " << hex << "\nend\n";
    // Give the pages back before the next case.
    for (Span s : srcArena)
      madvise(arena.base + (s.begin & ~int64_t(4095)),
              s.end - (s.begin & ~int64_t(4095)), MADV_DONTNEED);
    for (Span s : dstArena)
      madvise(arena.base + (s.begin & ~int64_t(4095)),
              s.end - (s.begin & ~int64_t(4095)), MADV_DONTNEED);
    llvm::outs() << "plan: " << c.name << " (" << k.name << ", " << n
                 << " items, " << k.itemBytes * n << " bytes) expects "
                 << hex << "\n";
  }
  return out.good() ? 0 : 1;
}
} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM y(argc, argv);
  cl::ParseCommandLineOptions(argc, argv, "run the host kernels against a reference\n");
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  std::string why;
  auto budget = ::pool::parseByteSize(budgetArg, why);
  if (!budget) {
    llvm::errs() << "pool-kernel-check: --budget: " << why << "\n";
    return 2;
  }

  MLIRContext ctx;
  ctx.printOpOnDiagnostic(false);
  llvm::SourceMgr sm;
  SourceMgrDiagnosticHandler handler(sm, &ctx);
  ::pool::CompileOptions opts;
  opts.input = inputFile;
  opts.planPools.budget = *budget;
  opts.planPools.maxNumSeqs = maxNumSeqs;
  for (const std::string &p : params) {
    std::pair<std::string, int64_t> kv;
    if (!::pool::parseParamArg(p, kv, why)) {
      llvm::errs() << "pool-kernel-check: --param " << why << "\n";
      return 2;
    }
    opts.params.push_back(kv);
  }
  auto module = ::pool::compileModel(ctx, sm, opts);
  if (!module)
    return 1;
  FailureOr<mlir::pool::ModelOp> model = mlir::pool::firstModel(*module);
  if (failed(model))
    return 1;
  FailureOr<json::Value> report =
      mlir::pool::buildReport(*model, {inputFile, {}, -1});
  if (failed(report))
    return 1;
  json::Value reportV = std::move(*report);
  Layout L{reportV.getAsObject()};
  L.rs = L.report->getObject("row_space");
  L.allocation = *L.report->getInteger("allocation_bytes");
  FailureOr<std::vector<mlir::pool::KernelSpec>> derived =
      mlir::pool::deriveKernelSpecs(*model);
  if (failed(derived))
    return 1;
  std::vector<mlir::pool::KernelSpec> specs = std::move(*derived);

  MLIRContext kctx;
  ::pool::registerKernelLowering(kctx);
  FailureOr<std::string> lowered = mlir::pool::lowerKernels(
      *model, &kctx, specs, "host", mlir::pool::CodeFormat::Binary);
  if (failed(lowered))
    return 1;
  std::string ir = std::move(*lowered);
  auto jit = llvm::orc::LLJITBuilder().create();
  if (!jit) {
    llvm::errs() << "pool-kernel-check: " << llvm::toString(jit.takeError()) << "\n";
    return 1;
  }
  auto llctx = std::make_unique<llvm::LLVMContext>();
  llvm::SMDiagnostic diag;
  auto llmod = llvm::parseIR(llvm::MemoryBufferRef(ir, "pool_kernels"), diag, *llctx);
  if (!llmod) {
    llvm::errs() << "pool-kernel-check: the host IR does not parse: "
                 << diag.getMessage() << "\n";
    return 1;
  }
  if (auto err = (*jit)->addIRModule(
          llvm::orc::ThreadSafeModule(std::move(llmod), std::move(llctx)))) {
    llvm::errs() << llvm::toString(std::move(err)) << "\n";
    return 1;
  }

  if (!gpuPlan.empty())
    return writeGpuPlan(gpuPlan, L, specs, **jit);

  SparseArena karena(L.allocation), rarena(L.allocation);
  if (!karena.base || !rarena.base) {
    llvm::errs() << "pool-kernel-check: cannot reserve " << L.allocation
                 << " bytes of address space\n";
    return 1;
  }
  std::mt19937_64 rng(seed);
  int64_t maxAddr = 0;
  int kernelsRun = 0;
  Reference ref{L};

  for (const mlir::pool::KernelSpec &k : specs) {
    auto sym = (*jit)->lookup(k.name);
    if (!sym) {
      fail(k.name + ": not in the JIT: " + llvm::toString(sym.takeError()));
      continue;
    }
    KernelFn fn = sym->toPtr<KernelFn>();
    if (k.kind == "image_store" || k.kind == "image_restore") {
      if (checkUnitKernel(k, fn, ref, karena, rarena, rng, maxAddr))
        ++kernelsRun;
      continue;
    }
    int64_t n = std::min<int64_t>(numItems, k.pairs() ? k.maxId / 2 : k.maxId);
    if (n <= 0)
      continue;
    // Choose distinct ids: live slots (the top positions) or random blocks,
    // entries and groups.
    std::vector<int32_t> ids;
    std::set<int64_t> used;
    int64_t lo = 0, hi = k.maxId;
    if (L.rs && k.entity == "slot") {
      int64_t positions = *L.rs->getInteger("slot_positions");
      lo = positions - *L.rs->getInteger("num_slots");
      hi = positions;
    }
    std::uniform_int_distribution<int64_t> pick(lo, hi - 1);
    int64_t want = k.pairs() ? 2 * n : n;
    if (hi - lo < want)
      want = (hi - lo) / (k.pairs() ? 2 : 1) * (k.pairs() ? 2 : 1);
    while (int64_t(ids.size()) < want) {
      int64_t id = pick(rng);
      if (used.insert(id).second)
        ids.push_back(int32_t(id));
    }
    if (ids.empty())
      continue;
    n = k.pairs() ? int64_t(ids.size()) / 2 : int64_t(ids.size());
    // Make sure the top slot (farthest from row 0) is exercised.
    if (L.rs && k.entity == "slot")
      ids[0] = int32_t(hi - 1), used.insert(hi - 1);

    std::vector<Span> srcs, dsts;
    std::vector<uint8_t> kstage, rstage;
    bool toStaging = k.dst == mlir::pool::Space::Staging;
    bool fromStaging = k.src == mlir::pool::Space::Staging;
    int64_t stride = k.stagingStride;
    if (toStaging || fromStaging) {
      kstage.assign(size_t(n * stride), 0xA5);
      rstage.assign(size_t(n * stride), 0xA5);
      if (fromStaging) {
        fillRandom(kstage.data(), n * stride, rng);
        rstage = kstage;
      }
    }

    // The reference: what the kind means, from the layout definitions.
    auto refSlotSpans = [&](int64_t slot) { return ref.slotSpans(slot); };
    auto refBlockSpans = [&](int64_t block) { return ref.blockSpans(block); };
    const json::Object *arenaClass = nullptr; // for group / entry kernels
    for (const json::Value &cv : *L.report->getArray("entry_classes")) {
      const json::Object &c = *cv.getAsObject();
      if ("_" + c.getString("name")->str() ==
          k.name.substr(k.name.rfind('_')))
        arenaClass = &c;
    }
    auto refEntrySpans = [&](int64_t entry, const json::Object &c,
                             int64_t count) {
      int64_t eb = *c.getInteger("entry_bytes");
      int64_t b = *c.getInteger("region_offset") + entry * count * eb;
      return std::vector<Span>{{b, b + count * eb}};
    };
    auto imageOf = [&](int64_t id) -> std::vector<Span> {
      if (L.rs)
        return ref.imageSpans(id);
      std::vector<Span> out;
      for (const json::Value &av : *L.report->getArray("arenas")) {
        const json::Object &a = *av.getAsObject();
        if (*a.getString("class") != *arenaClass->getString("name"))
          continue;
        int64_t base = *arenaClass->getInteger("region_offset") +
                       id * *arenaClass->getInteger("entry_bytes");
        for (const json::Value &rv : *a.getArray("checkpoint_ranges")) {
          const json::Array &r = *rv.getAsArray();
          out.push_back({base + *r[0].getAsInteger(),
                         base + *r[0].getAsInteger() + *r[1].getAsInteger()});
        }
      }
      return out;
    };

    // Spans per item on the arena side, in staging order.
    std::vector<std::vector<Span>> itemSrc(n), itemDst(n);
    for (int64_t i = 0; i < n; ++i) {
      if (k.kind == "slot_copy") {
        itemSrc[i] = refSlotSpans(ids[2 * i]);
        itemDst[i] = refSlotSpans(ids[2 * i + 1]);
      } else if (k.kind == "group_copy") {
        int64_t perReq = *arenaClass->getInteger("entries_per_req");
        itemSrc[i] = refEntrySpans(ids[2 * i], *arenaClass, perReq);
        itemDst[i] = refEntrySpans(ids[2 * i + 1], *arenaClass, perReq);
      } else if (k.kind == "image_gather") {
        itemSrc[i] = imageOf(ids[i]);
      } else if (k.kind == "image_scatter") {
        itemDst[i] = imageOf(ids[i]);
      } else if (k.kind == "block_copy") {
        itemSrc[i] = refBlockSpans(ids[2 * i]);
        itemDst[i] = refBlockSpans(ids[2 * i + 1]);
      } else if (k.kind == "block_gather") {
        itemSrc[i] = refBlockSpans(ids[i]);
      } else if (k.kind == "block_scatter") {
        itemDst[i] = refBlockSpans(ids[i]);
      }
      for (Span s : itemSrc[i])
        srcs.push_back(s), maxAddr = std::max(maxAddr, s.end);
      for (Span s : itemDst[i])
        dsts.push_back(s), maxAddr = std::max(maxAddr, s.end);
    }
    // Scatter destinations: poison the whole entity around the image so a
    // write outside the image shows up.
    if (k.kind == "image_scatter")
      for (int64_t i = 0; i < n; ++i)
        for (Span s : L.rs ? refSlotSpans(ids[i])
                           : refEntrySpans(ids[i], *arenaClass, 1))
          dsts.push_back(s);
    prepare(karena, rarena, srcs, dsts, unsigned(rng()));

    if (getenv("POOL_KERNEL_CHECK_TRACE"))
      llvm::errs() << "running " << k.name << " on " << n << " items\n";
    fn(karena.base, kstage.data(), ids.data(), n);
    {
      std::vector<Span> touched = srcs;
      touched.insert(touched.end(), dsts.begin(), dsts.end());
      checkNoStray(k.name, karena, touched);
    }

    // Reference run on the other arena.
    for (int64_t i = 0; i < n; ++i) {
      if (k.kind == "slot_copy" || k.kind == "group_copy" ||
          k.kind == "block_copy") {
        for (size_t s = 0; s < itemSrc[i].size(); ++s)
          std::memmove(rarena.base + itemDst[i][s].begin,
                       rarena.base + itemSrc[i][s].begin,
                       itemSrc[i][s].end - itemSrc[i][s].begin);
      } else if (toStaging) {
        int64_t at = i * stride;
        for (Span s : itemSrc[i]) {
          std::memcpy(rstage.data() + at, rarena.base + s.begin, s.end - s.begin);
          at += s.end - s.begin;
        }
        if (at != (i + 1) * stride)
          fail(k.name + ": the reference image of item " + std::to_string(i) +
               " has " + std::to_string(at - i * stride) +
               " bytes, the kernel's staging stride is " + std::to_string(stride));
      } else {
        int64_t at = i * stride;
        for (Span s : itemDst[i]) {
          std::memcpy(rarena.base + s.begin, rstage.data() + at, s.end - s.begin);
          at += s.end - s.begin;
        }
      }
    }
    std::vector<Span> all = srcs;
    all.insert(all.end(), dsts.begin(), dsts.end());
    compare(k.name.c_str(), karena, rarena, all, L.allocation);
    if (toStaging) {
      if (kstage != rstage)
        fail(k.name + ": staging differs from the reference");
      bytesChecked += int64_t(kstage.size());
    }
    ++kernelsRun;
    release(karena, rarena, all, L.allocation);
  }
  if (L.rs)
    checkImageRoundTrip(specs, **jit, ref, karena);
  llvm::outs() << llvm::formatv(
      "{0}: {1} kernels run on the host against the reference, {2} "
      "checkpoint store -> restore round trips, {3} bytes compared, highest "
      "arena byte touched {4} ({5} GiB into a {6}-byte allocation): {7}\n",
      *L.report->getString("model"), kernelsRun, roundTrips, bytesChecked,
      maxAddr, maxAddr >> 30, L.allocation, failures ? "FAILED" : "ok");
  return failures ? 1 : 0;
}
