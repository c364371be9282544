//===- pool-kernel-check.cpp - Run the host kernels against a reference ---===//
//
//   pool-kernel-check MODEL.yaml --budget SIZE --max-num-seqs N
//                     [--items N] [--seed S] [--param K=V]...
//
// Compiles the model, lowers its kernels for the host, loads them into the
// runtime's host backend (which JIT-compiles them in-process, as it does an
// artifact's code/host) and runs every one on random data against a plain
// reference written from the solved layout's definitions (slot spans, the
// rows a window reaches, carried fields, envelopes), not from the kernel
// descriptions. The arena is a sparse mapping of the whole allocation
// (MAP_NORESERVE), so a 150 GiB layout puts its slots past 4 GiB while only
// the bytes a test touches are ever backed. Destinations start poisoned;
// after a run the kernel's arena and the reference's must agree on every
// byte of every source and destination span and of a guard band around
// each.
//
//===----------------------------------------------------------------------===//

#include "codegen/KernelGen.h"
#include "codegen/KernelSpec.h"
#include "codegen/Report.h"
#include "tools/lib/Driver.h"
#include "poolrt/ByteSize.h"
#include "poolrt/Checked.h"

#include "poolrt/Device.h"
#include "poolrt/SolvedLayout.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
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
using mlir::pool::KernelSpec;

static cl::opt<std::string> inputFile(cl::Positional, cl::desc("<model.yaml>"),
                                      cl::Required);
static cl::opt<std::string> budgetArg("budget", cl::Required);
static cl::opt<int64_t> maxNumSeqs("max-num-seqs", cl::Required);
static cl::opt<int64_t> numItems("items", cl::init(4),
                                 cl::desc("items per kernel launch"));
static cl::opt<unsigned> seed("seed", cl::init(1));
static cl::opt<bool> segmentTable(
    "segment-table",
    cl::desc("lower every kernel with a segment table (poolc --gpu-segment-table)"),
    cl::init(false));
static cl::opt<bool> chunkWalk(
    "chunk-walk",
    cl::desc("walk the segment tables in chunks, not the default tiles "
             "inside one segment (poolc --gpu-table-walk=chunk)"),
    cl::init(false));
static cl::opt<bool> tileWalk(
    "tile-walk",
    cl::desc("walk the segment tables in tiles that cross segments "
             "(poolc --gpu-table-walk=tile)"),
    cl::init(false));
static cl::opt<bool> runWalk(
    "run-walk",
    cl::desc("walk the segment tables in tiles inside one segment each "
             "(poolc --gpu-table-walk=run)"),
    cl::init(false));
static cl::opt<unsigned> hostUnroll(
    "host-unroll",
    cl::desc("vectors in flight in the host lowering, 1 to 8 (the GPUs' unrolled "
             "and bound-checked paths, checked here)"),
    cl::init(0));
static cl::opt<unsigned> hostThreads(
    "host-threads",
    cl::desc("threads a block the host lowering plays, one after another, over the "
             "segment tables' spans, 1 to 1024"),
    cl::init(0));
static cl::opt<int64_t> tileVectors(
    "tile-vectors", cl::desc("vectors a tile of a table walk (a multiple of 256)"),
    cl::init(0));
static cl::list<std::string> params("param");
static cl::opt<std::string> gpuPlan(
    "gpu-plan",
    cl::desc("write the GPU test plan (cases, inputs, expected XXH64 of the "
             "host lowering's outputs) to FILE instead of checking"),
    cl::value_desc("FILE"));
static cl::opt<int64_t> planItems(
    "plan-items",
    cl::desc("slot items of the plan's slot cases (block and unit cases take "
             "a quarter); 256 on a GPU, a handful for a host run"),
    cl::init(256));

namespace {

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

/// The generated kernels, loaded into the runtime's host backend from the
/// LLVM IR an artifact's code/host section holds (the same lowering), so
/// the check runs them the way an engine on the host does. The arena,
/// staging and ids passed are this tool's host memory, which the host
/// backend takes as device addresses as they are (poolrt/Device.h).
class HostKernels {
public:
  /// Loads the kernels' host lowering `ir`; "" or what failed.
  std::string load(std::string ir) {
    auto dev = poolrt::openDevice("host");
    if (!dev)
      return dev.error().message;
    device = dev.take();
    poolrt::Artifact code;
    code.sections.push_back({device->codeSection(), std::move(ir)});
    poolrt::Status loaded = device->loadKernels(code);
    return loaded ? "" : loaded.error().message;
  }

  /// Runs `kernel` on `n` items; "" or why it did not run.
  std::string run(const std::string &kernel, void *arena, void *staging,
                  const int32_t *ids, int64_t n) const {
    auto addr = [](const void *p) {
      return poolrt::DevicePtr{reinterpret_cast<uint64_t>(p)};
    };
    poolrt::Status ran =
        device->launch(kernel, addr(arena), addr(staging), addr(ids), n, 0);
    return ran ? "" : ran.error().message;
  }

private:
  std::unique_ptr<poolrt::Device> device;
};

int failures = 0;
int64_t bytesChecked = 0;
int roundTrips = 0;

void fail(const std::string &what) {
  llvm::errs() << "FAIL: " << what << "\n";
  ++failures;
}

/// The solved layout the reference reads, its row space (if any) and the
/// one allocation picked out.
struct Layout {
  const poolrt::SolvedLayout *solved = nullptr;
  const poolrt::SolvedRowSpace *rs = nullptr;
  int64_t allocation = 0;
};

/// Marks, in `mask` (one plane's slot, row-major), the runs of consecutive
/// carried fields of `plane` in declared order; the padding between two
/// carried fields rides along.
void markCarriedFields(const Layout &L, const std::string &plane,
                       std::vector<char> &mask) {
  std::vector<const poolrt::SolvedField *> fields;
  for (const poolrt::SolvedArena &a : L.solved->arenas)
    for (const poolrt::SolvedField &f : a.fields)
      if (f.plane && *f.plane == plane)
        fields.push_back(&f);
  for (size_t i = 0; i < fields.size(); ++i) {
    if (!fields[i]->inCheckpoint)
      continue;
    size_t j = i;
    while (j + 1 < fields.size() && fields[j + 1]->inCheckpoint)
      ++j;
    std::fill(mask.begin() + fields[i]->offset, mask.begin() + fields[j]->end,
              1);
    i = j;
  }
}

/// Marks, in `mask`, every window row some (layer, ring position) of some
/// row class reaches: the rows past the arena rows, layer-interleaved by
/// the class's ring stride.
void markWindowRows(const poolrt::SolvedRowSpace &rs, int64_t rowBytes,
                    std::vector<char> &mask) {
  for (const poolrt::SolvedRowClass &c : rs.classes) {
    int64_t layers = int64_t(c.layers.size());
    int64_t S = c.ringStride;
    for (int64_t li = 0; li < layers; ++li)
      for (int64_t q = 0; q < rs.ringSlots; ++q) {
        int64_t row = rs.arenaRows + c.entryOffset + li * S +
                      (q / S) * (layers * S) + q % S;
        std::fill(mask.begin() + row * rowBytes,
                  mask.begin() + (row + 1) * rowBytes, 1);
      }
  }
}

/// The maximal runs of set bytes of `mask`, in order.
std::vector<Span> runsOf(const std::vector<char> &mask) {
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
  return spans;
}

/// Every byte a checkpoint image carries, per plane, in image order: the
/// runs of consecutive carried fields (padding between them rides along)
/// and the window rows some (layer, position) reaches. Independent of the
/// kernel description: recomputed from fields, classes and the ring.
std::vector<std::vector<Span>> imageSpansOfSlot(const Layout &L) {
  const poolrt::SolvedRowSpace &rs = *L.rs;
  std::vector<std::vector<Span>> out;
  for (const poolrt::SolvedRowPlane &plane : rs.planes) {
    std::vector<char> mask(size_t(rs.slotRows * plane.rowBytes), 0);
    markCarriedFields(L, plane.name, mask);
    markWindowRows(rs, plane.rowBytes, mask);
    out.push_back(runsOf(mask));
  }
  return out;
}

/// Reference implementations, from the layout's definitions.
struct Reference {
  const Layout &L;
  int64_t slotStart(int64_t slot, size_t plane) const {
    const poolrt::SolvedRowSpace &rs = *L.rs;
    const poolrt::SolvedRowPlane &p = rs.planes[plane];
    int64_t origin = *rs.slotPositions - *rs.planeRows / rs.slotRows;
    return *p.offset + (slot - origin) * rs.slotRows * p.rowBytes;
  }
  /// A slot's span in every plane (row space).
  std::vector<Span> slotSpans(int64_t slot) const {
    std::vector<Span> s;
    for (size_t p = 0; p < L.rs->planes.size(); ++p) {
      int64_t b = slotStart(slot, p);
      s.push_back({b, b + L.rs->planes[p].slotBytes});
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
      int64_t env = L.rs->envelopeRows;
      for (const poolrt::SolvedRowPlane &p : L.rs->planes) {
        int64_t b = *p.offset + block * env * p.rowBytes;
        s.push_back({b, b + env * p.rowBytes});
      }
    }
    for (const poolrt::SolvedClass &c : L.solved->classes) {
      if (!c.isPage() || c.isWindow() || !c.regionOffset)
        continue; // window classes have no block kernels
      int64_t per = c.entryBytes;
      if (L.rs)
        for (const poolrt::SolvedRowPlane &p : L.rs->planes)
          per -= L.rs->envelopeRows * p.rowBytes;
      int64_t b = *c.regionOffset + block * per;
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
    for (int64_t i = 0; i < poolrt::ceilDiv(len, page); ++i) {
      if (!(resident[size_t(i)] & 1))
        continue;
      int64_t at = off + i * page;
      while (next < allowed.size() && allowed[next].begin / page * page <= at) {
        coveredTo =
            std::max(coveredTo, poolrt::alignUp(allowed[next].end, page));
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
  g.imageBytes = spanBytes(ref.imageSpans(*ref.L.rs->slotPositions - 1));
  g.unitBytes = spanBytes(ref.blockSpans(0));
  g.units = g.unitBytes ? poolrt::ceilDiv(g.imageBytes, g.unitBytes) : 0;
  return g;
}

/// Whether the row space's slot class keeps copy checkpoints (PAGE units).
bool copyTransfer(const Layout &L) {
  for (const poolrt::SolvedClass &c : L.solved->classes)
    if (c.name == L.rs->slotClass && c.transfer &&
        c.transfer->kind == poolrt::TransferKind::Copy)
      return true;
  return false;
}

int64_t pageEntryBytes(const Layout &L) {
  for (const poolrt::SolvedClass &c : L.solved->classes)
    if (c.name == L.rs->pageClass)
      return c.entryBytes;
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

/// The regions of `units` PAGE units from position `first` of `ids`, in
/// unit order: where a checkpoint image lies unit-major.
std::vector<Span> unitRegions(const Reference &ref,
                              const std::vector<int64_t> &ids, int64_t first,
                              int64_t units) {
  std::vector<Span> regions;
  for (int64_t u = 0; u < units; ++u)
    regions = concat(regions, ref.blockSpans(ids[size_t(first + u)]));
  return regions;
}

/// What every check of one run shares: the reference, the kernels, the
/// kernels' arena and the reference's, and the random stream.
struct CheckRun {
  const Reference &ref;
  const HostKernels &kernels;
  SparseArena &karena, &rarena;
  std::mt19937_64 rng;
  int64_t maxAddr = 0;
};

/// Runs `k` on the kernels' arena after tracing it; false (and a failure)
/// when it could not run.
bool runKernel(const CheckRun &run, const KernelSpec &k, void *staging,
               const int32_t *ids, int64_t n) {
  if (getenv("POOL_KERNEL_CHECK_TRACE"))
    llvm::errs() << "running " << k.name << " on " << n << " items\n";
  std::string why = run.kernels.run(k.name, run.karena.base, staging, ids, n);
  if (why.empty())
    return true;
  fail(k.name + ": not run: " + why);
  return false;
}

/// Image store / restore against the reference: the image (the slot's
/// carried spans, in image order) laid unit-major into the units' regions
/// (image byte b in unit b / unit_bytes at offset b % unit_bytes of its
/// concatenated regions), or read back. Destinations are poisoned whole
/// (every unit region for a store, the whole slot for a restore), so a byte
/// written outside the image shows; the stray-page check covers the rest of
/// the arena.
std::vector<Span> entrySpans(int64_t entry, const poolrt::SolvedClass &c,
                             int64_t count);
std::vector<Span> imageOf(const Reference &ref, const poolrt::SolvedClass *c,
                          int64_t id);

bool checkUnitKernel(const KernelSpec &k, CheckRun &run) {
  const Reference &ref = run.ref;
  const Layout &L = ref.L;
  // The image's owner: a row space's slot, or (a flat fork model, codegen's
  // forkImageKernels) an entry of its one STATE class.
  const poolrt::SolvedClass *owner = nullptr, *page = nullptr;
  for (const poolrt::SolvedClass &c : L.solved->classes) {
    if (!c.isPage() && !L.rs) {
      if (owner) {
        fail(k.name + ": a PAGE-unit image kernel in a flat model with more "
                      "than one STATE class");
        return false;
      }
      owner = &c;
    }
    if (c.isPage() && !c.isWindow())
      page = &c;
  }
  if (!L.rs && (!owner || !page || !owner->regionOffset)) {
    fail(k.name + ": a PAGE-unit image kernel in a flat model without one "
                  "STATE class and one PAGE class");
    return false;
  }
  auto imageSpans = [&](int64_t id) {
    return L.rs ? ref.imageSpans(id) : imageOf(ref, owner, id);
  };
  auto ownerSpans = [&](int64_t id) {
    return L.rs ? ref.slotSpans(id) : entrySpans(id, *owner, 1);
  };
  int64_t positions = L.rs ? *L.rs->slotPositions : owner->entries;
  int64_t live = L.rs ? *L.rs->numSlots : owner->entries;
  int64_t nb = L.rs ? *L.rs->numBlocks : page->entries;
  UnitGeometry g;
  g.imageBytes = spanBytes(imageSpans(positions - 1));
  g.unitBytes = spanBytes(ref.blockSpans(0));
  g.units = g.unitBytes ? poolrt::ceilDiv(g.imageBytes, g.unitBytes) : 0;
  int64_t entryBytes = L.rs ? pageEntryBytes(L) : page->entryBytes;
  if (g.unitBytes != entryBytes)
    fail(k.name + ": a block's regions hold " + std::to_string(g.unitBytes) +
         " bytes, a PAGE entry " + std::to_string(entryBytes));
  if (k.idsPerItem() != 1 + g.units) {
    fail(k.name + ": its item has " + std::to_string(k.idsPerItem()) +
         " ids; a " + std::to_string(g.imageBytes) + "-byte image in " +
         std::to_string(g.unitBytes) + "-byte units needs 1 + " +
         std::to_string(g.units));
    return false;
  }
  int64_t n = std::min<int64_t>({int64_t(numItems), live, nb / g.units});
  if (n <= 0)
    return false;
  std::set<int64_t> usedSlots, usedUnits;
  std::vector<int64_t> slots = pickDistinct(positions - live, positions, n,
                                            positions - 1, usedSlots, run.rng);
  std::vector<int64_t> units =
      pickDistinct(0, nb, n * g.units, nb - 1, usedUnits, run.rng);
  std::vector<int32_t> ids = unitTuples(slots, units, g.units);
  bool store = k.kind == "image_store";
  std::vector<std::vector<Span>> image(n), regions(n);
  std::vector<Span> srcs, dsts, slotWhole;
  for (int64_t i = 0; i < n; ++i) {
    image[i] = imageSpans(slots[i]);
    regions[i] = unitRegions(ref, units, i * g.units, g.units);
    slotWhole = concat(slotWhole, ownerSpans(slots[i]));
    srcs = concat(srcs, store ? image[i] : regions[i]);
    dsts = concat(dsts, store ? regions[i] : ownerSpans(slots[i]));
  }
  prepare(run.karena, run.rarena, srcs, dsts, unsigned(run.rng()));
  std::vector<Span> all = concat(concat(srcs, dsts), slotWhole);
  if (!runKernel(run, k, nullptr, ids.data(), n)) {
    release(run.karena, run.rarena, all, L.allocation);
    return false;
  }
  checkNoStray(k.name, run.karena, concat(srcs, dsts));
  for (int64_t i = 0; i < n; ++i) {
    if (store)
      streamCopy(run.rarena.base, image[i], regions[i], g.imageBytes);
    else
      streamCopy(run.rarena.base, regions[i], image[i], g.imageBytes);
  }
  for (Span s : all)
    run.maxAddr = std::max(run.maxAddr, s.end);
  compare(k.name.c_str(), run.karena, run.rarena, all, L.allocation);
  release(run.karena, run.rarena, all, L.allocation);
  return true;
}

/// Distinct ids for one launch of `k` (a copy, gather or scatter): live
/// slots, the top one (farthest from row 0) always among them, or random
/// blocks, entries and groups. Empty when the kernel has nothing to run on.
std::vector<int32_t> pickMoveIds(const KernelSpec &k, const Layout &L,
                                 std::mt19937_64 &rng) {
  int64_t n = std::min<int64_t>(numItems, k.pairs() ? k.maxId / 2 : k.maxId);
  if (n <= 0)
    return {};
  std::vector<int32_t> ids;
  std::set<int64_t> used;
  int64_t lo = 0, hi = k.maxId;
  bool slots = L.rs && k.entity == "slot";
  if (slots) {
    int64_t positions = *L.rs->slotPositions;
    lo = positions - *L.rs->numSlots;
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
  if (slots && !ids.empty())
    ids[0] = int32_t(hi - 1);
  return ids;
}

/// The class a group or entry kernel moves: the one its name ends with
/// ("pool_group_copy_<class>"), or nullptr.
const poolrt::SolvedClass *classOfKernel(const Layout &L, const KernelSpec &k) {
  const poolrt::SolvedClass *found = nullptr;
  for (const poolrt::SolvedClass &c : L.solved->classes)
    if ("_" + c.name == k.name.substr(k.name.rfind('_')))
      found = &c;
  return found;
}

/// `count` consecutive entries of class `c` from entry `entry * count`.
std::vector<Span> entrySpans(int64_t entry, const poolrt::SolvedClass &c,
                             int64_t count) {
  int64_t b = *c.regionOffset + entry * count * c.entryBytes;
  return {{b, b + count * c.entryBytes}};
}

/// The checkpoint image of entity `id`: a slot's carried spans in a row
/// space, else the checkpoint ranges of entry `id` of class `c`'s arena.
std::vector<Span> imageOf(const Reference &ref, const poolrt::SolvedClass *c,
                          int64_t id) {
  if (ref.L.rs)
    return ref.imageSpans(id);
  std::vector<Span> out;
  for (const poolrt::SolvedArena &a : ref.L.solved->arenas) {
    if (a.className != c->name)
      continue;
    int64_t base = *c->regionOffset + id * c->entryBytes;
    for (const poolrt::ByteRange &r : a.checkpointRanges)
      out.push_back({base + r.offset, base + r.offset + r.length});
  }
  return out;
}

/// One launch of a copy, gather or scatter kernel: per item, the arena
/// spans the reference reads and writes, in staging order (what the kind
/// means, from the layout definitions).
struct MoveItems {
  std::vector<std::vector<Span>> src, dst;
};
MoveItems referenceItems(const KernelSpec &k, const std::vector<int32_t> &ids,
                         int64_t n, const Reference &ref,
                         const poolrt::SolvedClass *cls) {
  MoveItems m;
  m.src.resize(size_t(n));
  m.dst.resize(size_t(n));
  for (int64_t i = 0; i < n; ++i) {
    if (k.kind == "slot_copy") {
      m.src[i] = ref.slotSpans(ids[2 * i]);
      m.dst[i] = ref.slotSpans(ids[2 * i + 1]);
    } else if (k.kind == "group_copy") {
      m.src[i] = entrySpans(ids[2 * i], *cls, cls->entriesPerReq);
      m.dst[i] = entrySpans(ids[2 * i + 1], *cls, cls->entriesPerReq);
    } else if (k.kind == "image_gather") {
      m.src[i] = imageOf(ref, cls, ids[i]);
    } else if (k.kind == "image_scatter") {
      m.dst[i] = imageOf(ref, cls, ids[i]);
    } else if (k.kind == "block_copy") {
      m.src[i] = ref.blockSpans(ids[2 * i]);
      m.dst[i] = ref.blockSpans(ids[2 * i + 1]);
    } else if (k.kind == "block_gather") {
      m.src[i] = ref.blockSpans(ids[i]);
    } else if (k.kind == "block_scatter") {
      m.dst[i] = ref.blockSpans(ids[i]);
    }
  }
  return m;
}

/// What a copy, gather or scatter does, done by the reference on its own
/// arena and staging.
void runReference(const KernelSpec &k, const MoveItems &m, SparseArena &arena,
                  std::vector<uint8_t> &staging) {
  int64_t stride = k.stagingStride;
  for (size_t i = 0; i < m.src.size(); ++i) {
    if (k.kind == "slot_copy" || k.kind == "group_copy" ||
        k.kind == "block_copy") {
      for (size_t s = 0; s < m.src[i].size(); ++s)
        std::memmove(arena.base + m.dst[i][s].begin,
                     arena.base + m.src[i][s].begin,
                     m.src[i][s].end - m.src[i][s].begin);
    } else if (k.dst == mlir::pool::Space::Staging) {
      int64_t at = int64_t(i) * stride;
      int64_t end = int64_t(i + 1) * stride, want = at;
      for (Span s : m.src[i])
        want += s.end - s.begin;
      if (want != end) {
        // Never copy past the item: a reference that disagrees with the
        // kernel's stride is reported, not written out of bounds.
        fail(k.name + ": the reference image of item " + std::to_string(i) +
             " has " + std::to_string(want - at) +
             " bytes, the kernel's staging stride is " + std::to_string(stride));
        continue;
      }
      for (Span s : m.src[i]) {
        std::memcpy(staging.data() + at, arena.base + s.begin, s.end - s.begin);
        at += s.end - s.begin;
      }
      if (at != end)
        fail(k.name + ": the reference image of item " + std::to_string(i) +
             " has " + std::to_string(at - int64_t(i) * stride) +
             " bytes, the kernel's staging stride is " +
             std::to_string(stride));
    } else {
      int64_t at = int64_t(i) * stride, want = 0;
      for (Span s : m.dst[i])
        want += s.end - s.begin;
      if (want != stride) {
        fail(k.name + ": the reference scatter of item " + std::to_string(i) +
             " has " + std::to_string(want) +
             " bytes, the kernel's staging stride is " + std::to_string(stride));
        continue;
      }
      for (Span s : m.dst[i]) {
        std::memcpy(arena.base + s.begin, staging.data() + at, s.end - s.begin);
        at += s.end - s.begin;
      }
    }
  }
}

/// A copy, gather or scatter against the reference: the same random
/// sources and poisoned destinations on both arenas (and staging), the
/// kernel on one, the reference on the other, then every byte compared.
bool checkMoveKernel(const KernelSpec &k, CheckRun &run) {
  const Layout &L = run.ref.L;
  std::vector<int32_t> ids = pickMoveIds(k, L, run.rng);
  if (ids.empty())
    return false;
  int64_t n = k.pairs() ? int64_t(ids.size()) / 2 : int64_t(ids.size());
  bool toStaging = k.dst == mlir::pool::Space::Staging;
  bool fromStaging = k.src == mlir::pool::Space::Staging;
  std::vector<uint8_t> kstage, rstage;
  if (toStaging || fromStaging) {
    kstage.assign(size_t(n * k.stagingStride), 0xA5);
    rstage.assign(size_t(n * k.stagingStride), 0xA5);
    if (fromStaging) {
      fillRandom(kstage.data(), n * k.stagingStride, run.rng);
      rstage = kstage;
    }
  }
  const poolrt::SolvedClass *cls = classOfKernel(L, k);
  MoveItems items = referenceItems(k, ids, n, run.ref, cls);
  std::vector<Span> srcs, dsts;
  for (int64_t i = 0; i < n; ++i) {
    for (Span s : items.src[i])
      srcs.push_back(s), run.maxAddr = std::max(run.maxAddr, s.end);
    for (Span s : items.dst[i])
      dsts.push_back(s), run.maxAddr = std::max(run.maxAddr, s.end);
  }
  // Scatter destinations: poison the whole entity around the image so a
  // write outside the image shows up.
  if (k.kind == "image_scatter")
    for (int64_t i = 0; i < n; ++i)
      for (Span s :
           L.rs ? run.ref.slotSpans(ids[i]) : entrySpans(ids[i], *cls, 1))
        dsts.push_back(s);
  prepare(run.karena, run.rarena, srcs, dsts, unsigned(run.rng()));
  std::vector<Span> all = concat(srcs, dsts);
  if (!runKernel(run, k, kstage.data(), ids.data(), n)) {
    release(run.karena, run.rarena, all, L.allocation);
    return false;
  }
  checkNoStray(k.name, run.karena, all);
  runReference(k, items, run.rarena, rstage);
  compare(k.name.c_str(), run.karena, run.rarena, all, L.allocation);
  if (toStaging) {
    if (kstage != rstage)
      fail(k.name + ": staging differs from the reference");
    bytesChecked += int64_t(kstage.size());
  }
  release(run.karena, run.rarena, all, L.allocation);
  return true;
}

/// A round trip's inputs: source slots `a` (random bytes, saved), poisoned
/// destination slots `b`, and the units in between (0x5A), every span
/// touched in `touched`.
struct RoundTrip {
  std::vector<int64_t> a, b, units;
  std::vector<Span> touched;
  std::vector<std::vector<uint8_t>> savedA; // a's slot spans, in order
};

RoundTrip prepareRoundTrip(const Reference &ref, SparseArena &arena, int64_t n,
                           int64_t unitsPer, std::mt19937_64 &rng) {
  const poolrt::SolvedRowSpace &rs = *ref.L.rs;
  int64_t positions = *rs.slotPositions, live = *rs.numSlots,
          nb = *rs.numBlocks;
  RoundTrip rt;
  std::set<int64_t> usedSlots, usedUnits;
  rt.a = pickDistinct(positions - live, positions, n, positions - 1, usedSlots,
                      rng);
  rt.b = pickDistinct(positions - live, positions, n, -1, usedSlots, rng);
  rt.units = pickDistinct(0, nb, n * unitsPer, nb - 1, usedUnits, rng);
  for (int64_t i = 0; i < n; ++i) {
    for (Span s : ref.slotSpans(rt.a[i])) {
      fillRandom(arena.base + s.begin, s.end - s.begin, rng);
      rt.savedA.emplace_back(arena.base + s.begin, arena.base + s.end);
      rt.touched.push_back(s);
    }
    for (Span s : ref.slotSpans(rt.b[i])) {
      std::memset(arena.base + s.begin, 0xA5, s.end - s.begin);
      rt.touched.push_back(s);
    }
    for (Span s : unitRegions(ref, rt.units, i * unitsPer, unitsPer)) {
      std::memset(arena.base + s.begin, 0x5A, s.end - s.begin);
      rt.touched.push_back(s);
    }
  }
  return rt;
}

std::vector<uint8_t> bytesOf(const SparseArena &arena,
                             const std::vector<Span> &spans) {
  std::vector<uint8_t> out;
  for (Span s : spans)
    out.insert(out.end(), arena.base + s.begin, arena.base + s.end);
  return out;
}

/// Whether slot `slot` outside its image still holds the poison (0xA5)
/// everywhere; a failure names the first byte that does not.
bool poisonKept(const Reference &ref, const SparseArena &arena, int64_t slot,
                const std::string &item) {
  bool ok = true;
  // Blank the image out of a copy of the slot: every byte left must be
  // poison.
  for (Span s : ref.slotSpans(slot)) {
    std::vector<uint8_t> rest(arena.base + s.begin, arena.base + s.end);
    for (Span m : ref.imageSpans(slot))
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
  return ok;
}

/// Checks item `i` of a round trip after store and restore; `saved` walks
/// rt.savedA. False (with failures) if any check failed.
bool roundTripItemOk(const Reference &ref, const SparseArena &arena,
                     const RoundTrip &rt, int64_t i, int64_t unitsPer,
                     size_t &saved) {
  std::string item = "round trip item " + std::to_string(i) + " (slot " +
                     std::to_string(rt.a[i]) + " -> slot " +
                     std::to_string(rt.b[i]) + "): ";
  bool ok = true;
  std::vector<uint8_t> kept = bytesOf(arena, ref.imageSpans(rt.a[i]));
  std::vector<uint8_t> resumed = bytesOf(arena, ref.imageSpans(rt.b[i]));
  if (kept != resumed) {
    fail(item + "the restored image differs from the stored one");
    ok = false;
  }
  ok = poisonKept(ref, arena, rt.b[i], item) && ok;
  for (Span s : ref.slotSpans(rt.a[i])) {
    if (std::memcmp(arena.base + s.begin, rt.savedA[saved].data(),
                    rt.savedA[saved].size()) != 0) {
      fail(item + "the store changed its source slot");
      ok = false;
    }
    bytesChecked += s.end - s.begin;
    ++saved;
  }
  std::vector<uint8_t> unitBytes =
      bytesOf(arena, unitRegions(ref, rt.units, i * unitsPer, unitsPer));
  if (!std::equal(kept.begin(), kept.end(), unitBytes.begin()))
    fail(item + "the units do not hold the image unit-major"), ok = false;
  if (!std::all_of(unitBytes.begin() + int64_t(kept.size()), unitBytes.end(),
                   [](uint8_t v) { return v == 0x5A; }))
    fail(item + "the store wrote past the image in its last unit"), ok = false;
  bytesChecked += int64_t(kept.size() + resumed.size() + unitBytes.size());
  return ok;
}

/// The kernel of kind `kind`, or nullptr.
const KernelSpec *kernelOfKind(const std::vector<KernelSpec> &specs,
                               const std::string &kind) {
  for (const KernelSpec &k : specs)
    if (k.kind == kind)
      return &k;
  return nullptr;
}

/// A copy checkpoint kept and resumed with the generated kernels alone:
/// store slots A into their units, restore the units into other, poisoned
/// slots B. B's image must equal A's byte for byte, B must keep its poison
/// outside the image, A and the units' bytes past the image must be
/// untouched, and no other page of the arena may be reached.
void checkImageRoundTrip(const std::vector<KernelSpec> &specs,
                         const CheckRun &run) {
  const Reference &ref = run.ref;
  const Layout &L = ref.L;
  const KernelSpec *store = kernelOfKind(specs, "image_store");
  const KernelSpec *restore = kernelOfKind(specs, "image_restore");
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
  UnitGeometry g = unitGeometry(ref);
  if (store->idsPerItem() != 1 + g.units)
    return; // reported by checkUnitKernel
  int64_t n = std::min<int64_t>(
      {int64_t(numItems), *L.rs->numSlots / 2, *L.rs->numBlocks / g.units});
  if (n <= 0)
    return;
  std::mt19937_64 rng(seed + 101);
  SparseArena &arena = run.karena;
  RoundTrip rt = prepareRoundTrip(ref, arena, n, g.units, rng);
  std::vector<int32_t> storeIds = unitTuples(rt.a, rt.units, g.units);
  std::vector<int32_t> restoreIds = unitTuples(rt.b, rt.units, g.units);
  std::string why =
      run.kernels.run(store->name, arena.base, nullptr, storeIds.data(), n);
  if (why.empty())
    why = run.kernels.run(restore->name, arena.base, nullptr, restoreIds.data(),
                          n);
  bool ok = why.empty();
  if (!ok)
    fail("the image store/restore kernels did not run: " + why);
  else
    checkNoStray("image store -> restore", arena, rt.touched);
  size_t saved = 0;
  for (int64_t i = 0; i < n && ok; ++i)
    ok = roundTripItemOk(ref, arena, rt, i, g.units, saved);
  if (ok)
    roundTrips += int(n);
  for (Span s : rt.touched) {
    int64_t b0 = s.begin / 4096 * 4096;
    madvise(arena.base + b0, s.end - b0, MADV_DONTNEED);
  }
}

/// Runs every kernel against the reference on two sparse arenas of the
/// whole allocation, then the checkpoint round trip, and prints the
/// summary line; the exit status.
int checkKernels(const Layout &L, const std::vector<KernelSpec> &specs,
                 const HostKernels &kernels) {
  SparseArena karena(L.allocation), rarena(L.allocation);
  if (!karena.base || !rarena.base) {
    llvm::errs() << "pool-kernel-check: cannot reserve " << L.allocation
                 << " bytes of address space\n";
    return 1;
  }
  Reference ref{L};
  CheckRun run{ref, kernels, karena, rarena, std::mt19937_64(seed)};
  int kernelsRun = 0;
  for (const KernelSpec &k : specs) {
    bool unit = k.kind == "image_store" || k.kind == "image_restore";
    if (unit ? checkUnitKernel(k, run) : checkMoveKernel(k, run))
      ++kernelsRun;
  }
  if (L.rs)
    checkImageRoundTrip(specs, run);
  llvm::outs() << llvm::formatv(
      "{0}: {1} kernels run on the host against the reference, {2} "
      "checkpoint store -> restore round trips, {3} bytes compared, highest "
      "arena byte touched {4} ({5} GiB into a {6}-byte allocation): {7}\n",
      L.solved->model, kernelsRun, roundTrips, bytesChecked, run.maxAddr,
      run.maxAddr >> 30, L.allocation, failures ? "FAILED" : "ok");
  return failures ? 1 : 0;
}

/// The fill both sides use: 8-byte words from splitmix64 of the word's
/// offset in its space, so the device fills exactly what the host filled.
uint64_t patternWord(uint64_t offset, uint64_t space) {
  uint64_t z =
      (offset >> 3) + space * 0x9E3779B97F4A7C15ull + 0x632BE59BD9B4E019ull;
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
  const KernelSpec *k;
  std::vector<int32_t> ids;
  int64_t items;
};

/// Slot copies (one pair: the top slot onto the lowest live one; 256 pairs:
/// the live slots onto 256 other positions of the plane) and 256-slot image
/// gathers and scatters.
void addSlotCases(std::vector<GpuCase> &cases, int64_t positions, int64_t n,
                  const std::vector<KernelSpec> &specs) {
  const KernelSpec *slotCopy = kernelOfKind(specs, "slot_copy");
  std::string xn = "_x" + std::to_string(n);
  cases.push_back({"slot_copy_x1",
                   slotCopy,
                   {int32_t(positions - 1), int32_t(positions - n)},
                   1});
  GpuCase c{"slot_copy" + xn, slotCopy, {}, n};
  for (int64_t i = 0; i < n; ++i) {
    c.ids.push_back(int32_t(positions - 1 - i));
    c.ids.push_back(int32_t(positions - n - 1 - i));
  }
  cases.push_back(c);
  for (const char *kind : {"image_gather", "image_scatter"}) {
    GpuCase c{std::string(kind) + xn, kernelOfKind(specs, kind), {}, n};
    for (int64_t i = 0; i < n; ++i)
      c.ids.push_back(int32_t(positions - 1 - i));
    cases.push_back(c);
  }
}

/// Block gathers and scatters of 64 blocks spread over the range, and 64
/// relocations from the top of the block range downwards.
void addBlockCases(std::vector<GpuCase> &cases, int64_t nb, int64_t q,
                   const std::vector<KernelSpec> &specs) {
  std::string xq = "_x" + std::to_string(q);
  for (const char *kind : {"block_gather", "block_scatter"}) {
    GpuCase c{std::string(kind) + xq, kernelOfKind(specs, kind), {}, q};
    for (int64_t i = 0; i < q; ++i)
      c.ids.push_back(int32_t((i * 2654435761ll) % nb)); // spread, distinct
    std::sort(c.ids.begin(), c.ids.end());
    c.ids.erase(std::unique(c.ids.begin(), c.ids.end()), c.ids.end());
    c.items = int64_t(c.ids.size());
    cases.push_back(c);
  }
  if (const KernelSpec *blockCopy = kernelOfKind(specs, "block_copy")) {
    GpuCase c{"block_copy" + xq, blockCopy, {}, q};
    for (int64_t i = 0; i < q; ++i) {
      c.ids.push_back(int32_t(nb - 1 - i));
      c.ids.push_back(int32_t(i * 3));
    }
    cases.push_back(c);
  }
}

/// 64 checkpoints kept and resumed through PAGE units: the live slots and
/// 64 x units_per_checkpoint distinct blocks spread over the whole range.
void addUnitCases(std::vector<GpuCase> &cases, int64_t positions, int64_t nb,
                  int64_t q, const std::vector<KernelSpec> &specs) {
  for (const char *kind : {"image_store", "image_restore"}) {
    const KernelSpec *k = kernelOfKind(specs, kind);
    if (!k)
      continue;
    int64_t units = k->idsPerItem() - 1;
    GpuCase c{std::string(kind) + "_x" + std::to_string(q), k, {}, q};
    std::set<int64_t> used;
    for (int64_t j = 0; int64_t(used.size()) < q * units; ++j) {
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
}

/// The arena spans case `c` reads (`src`) and writes (`dst`). The kernel
/// segments give them (the device must fill and hash exactly what the host
/// lowering touched); an image store or restore is checked over its whole
/// destinations (every unit region, every slot span, from the reference):
/// poisoned before, hashed after, so the device may write nothing there but
/// the image.
void gpuCaseSpans(const GpuCase &c, const Reference &ref,
                  std::vector<Span> &src, std::vector<Span> &dst) {
  const KernelSpec &k = *c.k;
  int per = k.idsPerItem();
  auto idOf = [&](int64_t i, const mlir::pool::CopySegment &s,
                  bool isSrc) -> int64_t {
    int index = mlir::pool::idIndex(k, s, isSrc);
    return index < 0 ? i : c.ids[size_t(i * per + index)];
  };
  for (int64_t i = 0; i < c.items; ++i)
    for (const auto &s : k.segments) {
      if (k.src == mlir::pool::Space::Arena) {
        int64_t b = idOf(i, s, true) * s.srcStride + s.srcOff;
        src.push_back({b, b + s.bytes});
      }
      if (k.dst == mlir::pool::Space::Arena) {
        int64_t b = idOf(i, s, false) * s.dstStride + s.dstOff;
        dst.push_back({b, b + s.bytes});
      }
    }
  if (k.kind != "image_store" && k.kind != "image_restore")
    return;
  dst.clear();
  for (int64_t i = 0; i < c.items; ++i) {
    if (k.kind == "image_restore") {
      dst = concat(dst, ref.slotSpans(c.ids[size_t(i * per)]));
      continue;
    }
    for (int u = 1; u < per; ++u)
      dst = concat(dst, ref.blockSpans(c.ids[size_t(i * per + u)]));
  }
}

/// XXH64 of what the kernel wrote: staging, or the destination spans.
uint64_t outputHash(const KernelSpec &k, const SparseArena &arena,
                    const std::vector<uint8_t> &staging,
                    const std::vector<Span> &dst) {
  XXH64_state_t *st = XXH64_createState();
  XXH64_reset(st, 0);
  if (k.dst == mlir::pool::Space::Staging)
    XXH64_update(st, staging.data(), staging.size());
  else
    for (Span s : dst)
      XXH64_update(st, arena.base + s.begin, s.end - s.begin);
  uint64_t h = XXH64_digest(st);
  XXH64_freeState(st);
  return h;
}

/// One case of the plan file: what to launch, fill, poison and hash, and
/// the hash to expect.
void writeGpuCaseEntry(std::ofstream &out, const GpuCase &c,
                       const std::vector<Span> &src,
                       const std::vector<Span> &dst, const char *hex) {
  const KernelSpec &k = *c.k;
  int64_t n = c.items;
  int64_t stagingBytes = k.stagingStride * n;
  out << "case " << c.name << " " << k.name << " items " << n << " staging "
      << stagingBytes << " moved " << k.itemBytes * n << " ids_per_item "
      << k.idsPerItem() << "\n";
  out << "ids";
  for (int32_t id : c.ids)
    out << " " << id;
  out << "\n";
  for (Span s : src)
    out << "fill " << s.begin << " " << s.end - s.begin << "\n";
  if (k.src == mlir::pool::Space::Staging)
    out << "fill_staging 0 " << stagingBytes << "\n";
  for (Span s : dst)
    out << "poison " << s.begin << " " << s.end - s.begin << "\n";
  if (k.dst == mlir::pool::Space::Staging)
    out << "hash_staging 0 " << stagingBytes << "\n";
  else
    for (Span s : dst)
      out << "hash " << s.begin << " " << s.end - s.begin << "\n";
  out << "expect " << hex << "\nend\n";
}

/// Runs case `c` on the host and writes its plan entry; "" or why not.
std::string writeGpuCase(std::ofstream &out, const GpuCase &c,
                         const Reference &ref, SparseArena &arena,
                         const HostKernels &kernels) {
  const KernelSpec &k = *c.k;
  int64_t n = c.items;
  if (int64_t(c.ids.size()) != n * k.idsPerItem())
    return "pool-kernel-check: case " + c.name + " has " +
           std::to_string(c.ids.size()) + " ids for " + std::to_string(n) +
           " items of " + std::to_string(k.idsPerItem());
  std::vector<Span> src, dst;
  gpuCaseSpans(c, ref, src, dst);
  int64_t stagingBytes = k.stagingStride * n;
  std::vector<uint8_t> staging(size_t(stagingBytes), 0xA5);
  for (Span s : dst)
    std::memset(arena.base + s.begin, 0xA5, s.end - s.begin);
  for (Span s : src)
    fillPattern(arena.base, s.begin, s.end - s.begin, 1);
  if (k.src == mlir::pool::Space::Staging)
    fillPattern(staging.data(), 0, stagingBytes, 2);
  std::string why =
      kernels.run(k.name, arena.base, staging.data(), c.ids.data(), n);
  if (!why.empty())
    return "pool-kernel-check: case " + c.name + ": " + why;
  char hex[32];
  std::snprintf(hex, sizeof hex, "%016llx",
                (unsigned long long)outputHash(k, arena, staging, dst));
  writeGpuCaseEntry(out, c, src, dst, hex);
  // Give the pages back before the next case.
  for (const std::vector<Span> *spans : {&src, &dst})
    for (Span s : *spans)
      madvise(arena.base + (s.begin & ~int64_t(4095)),
              s.end - (s.begin & ~int64_t(4095)), MADV_DONTNEED);
  llvm::outs() << "plan: " << c.name << " (" << k.name << ", " << n
               << " items, " << k.itemBytes * n << " bytes) expects " << hex
               << "\n";
  return "";
}

/// The GPU test plan (bench/gpu/run.sh, gpu_check.cpp): fixed cases, their
/// inputs, and the XXH64 the host lowering produced for them.
int writeGpuPlan(const std::string &path, const Layout &L,
                 const std::vector<KernelSpec> &specs,
                 const HostKernels &kernels) {
  if (!L.rs) {
    llvm::errs() << "pool-kernel-check: --gpu-plan needs a row-space model\n";
    return 2;
  }
  if (!L.rs->slotPositions || !L.rs->numBlocks) {
    llvm::errs() << "pool-kernel-check: --gpu-plan needs a planned row space\n";
    return 2;
  }
  int64_t positions = *L.rs->slotPositions;
  int64_t nb = *L.rs->numBlocks;
  // The cases copy n slots onto n others and keep n/4 checkpoints in
  // distinct PAGE units: a layout smaller than that cannot hold them.
  int64_t n = planItems, q = std::max<int64_t>(1, planItems / 4);
  if (n < 1) {
    llvm::errs() << "pool-kernel-check: --plan-items must be >= 1\n";
    return 2;
  }
  int64_t units = 1;
  for (const KernelSpec &k : specs)
    if (k.kind == "image_store")
      units = std::max<int64_t>(units, k.idsPerItem() - 1);
  if (positions < 2 * n || nb < std::max<int64_t>(q * units, 3 * q)) {
    llvm::errs() << "pool-kernel-check: --gpu-plan needs at least " << 2 * n
                 << " slot positions and " << std::max<int64_t>(q * units, 3 * q)
                 << " blocks; this layout has " << positions << " and " << nb
                 << " (give a larger budget, e.g. --budget 64GiB "
                    "--max-num-seqs 256, or fewer --plan-items)\n";
    return 2;
  }
  std::vector<GpuCase> cases;
  addSlotCases(cases, positions, n, specs);
  addBlockCases(cases, nb, q, specs);
  addUnitCases(cases, positions, nb, q, specs);

  std::ofstream out(path);
  out << "arena_bytes " << L.allocation << "\n";
  SparseArena arena(L.allocation);
  if (!arena.base) {
    llvm::errs() << "pool-kernel-check: cannot reserve the arena\n";
    return 1;
  }
  Reference ref{L};
  for (const GpuCase &c : cases) {
    std::string why = writeGpuCase(out, c, ref, arena, kernels);
    if (!why.empty()) {
      llvm::errs() << why << "\n";
      return 1;
    }
  }
  return out.good() ? 0 : 1;
}

/// The compile options from the command line; 0, or the exit status of a
/// bad argument (already reported).
int compileOptions(::pool::CompileOptions &opts) {
  std::string why;
  auto budget = poolrt::parseByteSize(budgetArg, why);
  if (!budget) {
    llvm::errs() << "pool-kernel-check: --budget: " << why << "\n";
    return 2;
  }
  opts.input = inputFile;
  opts.planPools.budget = *budget;
  opts.planPools.maxNumSeqs = maxNumSeqs;
  for (const std::string &p : params) {
    std::pair<std::string, std::string> kv;
    if (!::pool::parseParamArg(p, kv, why)) {
      llvm::errs() << "pool-kernel-check: --param " << why << "\n";
      return 2;
    }
    opts.params.push_back(kv);
  }
  return 0;
}

/// Compiles the model: what was solved, and the kernels. False if it failed
/// (already reported). `hostIr` receives the kernels lowered for the host.
bool compile(const ::pool::CompileOptions &opts, poolrt::SolvedLayout &layout,
             std::vector<KernelSpec> &specs, std::string &hostIr) {
  MLIRContext ctx;
  ctx.printOpOnDiagnostic(false);
  llvm::SourceMgr sm;
  SourceMgrDiagnosticHandler handler(sm, &ctx);
  auto module = ::pool::compileModel(ctx, sm, opts);
  if (!module)
    return false;
  FailureOr<mlir::pool::ModelOp> model = mlir::pool::firstModel(*module);
  if (failed(model))
    return false;
  auto solved = mlir::pool::solvedLayoutOf(*model, {inputFile, {}, -1});
  if (failed(solved))
    return false;
  layout = std::move(*solved);
  auto derived = mlir::pool::deriveKernelSpecs(*model);
  if (failed(derived))
    return false;
  specs = std::move(*derived);
  mlir::pool::KernelTuning tuning;
  if (segmentTable)
    tuning.segmentTable = 1;
  if (chunkWalk)
    tuning.tableWalk = 0;
  if (runWalk)
    tuning.tableWalk = 2;
  if (tileWalk)
    tuning.tableWalk = 1;
  tuning.hostUnroll = hostUnroll;
  tuning.hostThreads = hostThreads;
  tuning.tileVectors = tileVectors;
  tuning.apply(specs);
  MLIRContext kctx;
  kctx.printOpOnDiagnostic(false);
  ::pool::registerKernelLowering(kctx);
  FailureOr<std::string> lowered = mlir::pool::lowerKernels(
      *model, &kctx, specs, "host", mlir::pool::CodeFormat::Binary);
  if (failed(lowered))
    return false;
  hostIr = std::move(*lowered);
  return true;
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM y(argc, argv);
  cl::ParseCommandLineOptions(argc, argv,
                              "run the host kernels against a reference\n");
  if (hostUnroll > 8) {
    llvm::errs() << "pool-kernel-check: --host-unroll " << hostUnroll << ": expected 1 to 8\n";
    return 2;
  }
  if (hostThreads > 1024) {
    llvm::errs() << "pool-kernel-check: --host-threads " << hostThreads << ": expected 1 to 1024\n";
    return 2;
  }
  if (tileVectors.getNumOccurrences() &&
      (tileVectors < 256 || tileVectors > (1 << 20) || tileVectors % 256 != 0)) {
    llvm::errs() << "pool-kernel-check: --tile-vectors " << tileVectors
                 << ": expected a multiple of 256 from 256 to 1048576\n";
    return 2;
  }
  ::pool::CompileOptions opts;
  if (int rc = compileOptions(opts))
    return rc;
  poolrt::SolvedLayout solved;
  std::vector<KernelSpec> specs;
  std::string hostIr;
  if (!compile(opts, solved, specs, hostIr))
    return 1;
  Layout L{&solved, solved.rowSpace ? &*solved.rowSpace : nullptr,
           solved.allocationBytes};
  HostKernels kernels;
  std::string error = kernels.load(std::move(hostIr));
  if (!error.empty()) {
    llvm::errs() << "pool-kernel-check: " << error << "\n";
    return 1;
  }
  // A plan's hashes are the host lowering's: written only once the host
  // lowering has agreed with the independent reference on every kernel.
  int rc = checkKernels(L, specs, kernels);
  if (gpuPlan.empty() || rc != 0) {
    if (rc != 0 && !gpuPlan.empty())
      llvm::errs() << "pool-kernel-check: no plan written: the host kernels "
                      "disagree with the reference\n";
    return rc;
  }
  return writeGpuPlan(gpuPlan, L, specs, kernels);
}
