//===- PoolOps.cpp - pool dialect operations ------------------------------===//
//
// Op verifiers check what one op can check on its own; ModelOp's region
// verifier checks what needs the whole declaration (unique names, field
// ownership, ratio divisibility). Both run on every parse and import, so no
// pass ever sees a malformed declaration.
//
//===----------------------------------------------------------------------===//

#include "dialects/Pool/IR/PoolOps.h"

#include "poolrt/Checked.h"
#include "poolrt/Servable.h"
#include "poolrt/StateArena.h"
#include "poolrt/SubPool.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/StringMap.h"

using namespace mlir;
using namespace mlir::pool;

#define GET_OP_CLASSES
#include "dialects/Pool/IR/PoolOps.cpp.inc"

bool mlir::pool::isKnownRatio(int64_t ratio) {
  return ratio == kDenseRatio || ratio == kCsaRatio || ratio == kHcaRatio ||
         ratio == kAbsentRatio;
}

static int64_t s64(uint64_t v) { return static_cast<int64_t>(v); }

//===----------------------------------------------------------------------===//
// ModelOp
//===----------------------------------------------------------------------===//

LogicalResult ModelOp::verify() {
  int64_t bs = s64(getBlockSize()), hbs = s64(getHashBlockSize());
  if (bs < 1 || bs > poolrt::kMaxBlockSize)
    return emitOpError("block_size must be in 1..")
           << poolrt::kMaxBlockSize << ", got " << bs;
  // A hash block of several blocks is decode-context parallelism > 1,
  // which the runtime does not serve: the compiler never writes what the
  // runtime would refuse.
  if (auto why = poolrt::hashBlockSizeRefusal(bs, hbs))
    return emitOpError("hash_block_size ") << hbs << " " << *why;
  if (s64(getSlidingWindow()) < 0)
    return emitOpError("sliding_window must be >= 0, got ")
           << s64(getSlidingWindow());
  if (s64(getSpecDepth()) < 0)
    return emitOpError("spec_depth must be >= 0, got ") << s64(getSpecDepth());
  return success();
}

//===----------------------------------------------------------------------===//
// ModelOp lookups
//===----------------------------------------------------------------------===//

llvm::iterator_range<Block::op_iterator<EntryClassOp>>
ModelOp::getEntryClasses() {
  return getBodyBlock().getOps<EntryClassOp>();
}

llvm::iterator_range<Block::op_iterator<StateFieldOp>>
ModelOp::getStateFields() {
  return getBodyBlock().getOps<StateFieldOp>();
}

SmallVector<PlaneOp, 4> ModelOp::getPlanes() {
  return llvm::to_vector(getBodyBlock().getOps<PlaneOp>());
}

bool ModelOp::inRowSpace() { return !getBodyBlock().getOps<PlaneOp>().empty(); }

PlaneOp ModelOp::findPlane(StringRef name) {
  for (PlaneOp p : getBodyBlock().getOps<PlaneOp>())
    if (p.getName() == name)
      return p;
  return PlaneOp();
}

LayersOp ModelOp::getLayersOp() {
  auto ops = getBodyBlock().getOps<LayersOp>();
  return ops.empty() ? LayersOp() : *ops.begin();
}

RowSpaceOp ModelOp::getRowSpace() {
  auto ops = getBodyBlock().getOps<RowSpaceOp>();
  return ops.empty() ? RowSpaceOp() : *ops.begin();
}

EntryClassOp ModelOp::findClass(StringRef name) {
  for (EntryClassOp c : getEntryClasses())
    if (c.getName() == name)
      return c;
  return EntryClassOp();
}

SmallVector<StateFieldOp, 8> ModelOp::fieldsOf(StringRef cls) {
  SmallVector<StateFieldOp, 8> out;
  for (StateFieldOp f : getStateFields())
    if (f.getEntryClass() == cls)
      out.push_back(f);
  return out;
}

EntryClassOp ModelOp::getSlotClass() {
  for (EntryClassOp c : getEntryClasses())
    if (c.isState() && c.getDerived())
      return c;
  return EntryClassOp();
}

EntryClassOp ModelOp::getPageClass() {
  for (EntryClassOp c : getEntryClasses())
    if (c.isPage())
      return c;
  return EntryClassOp();
}

bool ModelOp::isPlanned() {
  if (!getBudget() || !getMaxNumSeqs() || !getTotalReservedBytes() ||
      !getAllocationBytes())
    return false;
  for (EntryClassOp c : getEntryClasses())
    if (!c.getEntries() || !c.getEntryBytes() || !c.getReservedBytes())
      return false;
  RowSpaceOp rs = getRowSpace();
  return !rs || (rs.getNumBlocks() && rs.getNumSlots() && rs.getPlaneRows() &&
                 rs.getSlotPositions() && rs.getPlaneOffsets());
}

LogicalResult ModelOp::requirePlanned() {
  if (isPlanned())
    return success();
  return emitError("the model is not planned (run pool-plan-pools first)");
}

FailureOr<ModelOp> mlir::pool::firstModel(ModuleOp module) {
  auto models = module.getOps<ModelOp>();
  if (models.empty())
    return module.emitError("no pool.model in the module");
  return *models.begin();
}

LogicalResult ModelOp::requireMergedClasses() {
  llvm::StringMap<EntryClassOp> first;
  for (EntryClassOp cls : getEntryClasses()) {
    EntryClassOp earlier = first.try_emplace(cls.getName(), cls).first->second;
    if (earlier == cls)
      continue;
    InFlightDiagnostic repeat = cls.emitOpError();
    repeat << "entry class '" << cls.getName()
           << "' is declared more than once; run pool-merge-entry-classes "
              "first";
    repeat.attachNote(earlier.getLoc()) << "first declared here";
    return repeat;
  }
  return success();
}

LogicalResult ModelOp::verifyRegions() {
  llvm::StringMap<Operation *> planes, fields;
  llvm::StringMap<EntryClassOp> classes;
  LayersOp layers;
  for (Operation &op : getBodyBlock()) {
    if (!isa<PlaneOp, LayersOp, StateFieldOp, EntryClassOp, RowSpaceOp>(op))
      return op.emitOpError("is not a declaration a pool.model can hold");
    if (auto plane = dyn_cast<PlaneOp>(op)) {
      auto [it, inserted] = planes.try_emplace(plane.getName(), &op);
      if (!inserted) {
        auto diag = plane.emitOpError("duplicate plane name '")
                    << plane.getName() << "'";
        diag.attachNote(it->second->getLoc()) << "first declared here";
        return diag;
      }
    } else if (auto field = dyn_cast<StateFieldOp>(op)) {
      auto [it, inserted] = fields.try_emplace(field.getName(), &op);
      if (!inserted) {
        auto diag = field.emitOpError("duplicate state field name '")
                    << field.getName() << "'";
        diag.attachNote(it->second->getLoc()) << "first declared here";
        return diag;
      }
    } else if (auto l = dyn_cast<LayersOp>(op)) {
      if (layers) {
        auto diag = l.emitOpError("a model declares its layers once");
        diag.attachNote(layers.getLoc()) << "first declared here";
        return diag;
      }
      layers = l;
    } else if (auto cls = dyn_cast<EntryClassOp>(op)) {
      classes.try_emplace(cls.getName(), cls);
    }
  }
  for (Operation &op : getBodyBlock()) {
    auto field = dyn_cast<StateFieldOp>(op);
    if (!field)
      continue;
    auto it = classes.find(field.getEntryClass());
    if (it == classes.end())
      return field.emitOpError("names entry class '")
             << field.getEntryClass() << "', which this model does not declare";
    if (!it->second.isState()) {
      auto diag = field.emitOpError("names entry class '")
                  << field.getEntryClass()
                  << "', which is a PAGE class; state fields live in STATE "
                     "entries";
      diag.attachNote(it->second.getLoc()) << "declared here";
      return diag;
    }
  }
  if (layers) {
    int64_t bs = s64(getBlockSize());
    bool anyPresent = false;
    for (auto [i, ratio] : llvm::enumerate(layers.getRatios())) {
      if (ratio != kAbsentRatio)
        anyPresent = true;
      if (ratio > 0 && bs % ratio != 0)
        return layers.emitOpError("block_size ")
               << bs << " is not a multiple of compress ratio " << ratio
               << " (layer " << i
               << "): a block would hold a fractional compressed row";
    }
    if (!anyPresent && !layers.getRatios().empty())
      return layers.emitOpError(
          "every layer is absent (-1): a row space needs at least one layer");
  }
  return success();
}

//===----------------------------------------------------------------------===//
// PlaneOp, LayersOp
//===----------------------------------------------------------------------===//

LogicalResult PlaneOp::verify() {
  if (s64(getRowBytes()) < 1)
    return emitOpError("plane '")
           << getName() << "': row_bytes must be >= 1, got "
           << s64(getRowBytes());
  if (!poolrt::parseDType(getDtype().str()))
    return emitOpError("plane '")
           << getName() << "': unknown dtype '" << getDtype()
           << "' (expected one of " << poolrt::dtypeNameList() << ")";
  return success();
}

LogicalResult LayersOp::verify() {
  if (getRatios().empty())
    return emitOpError("needs at least one layer");
  for (auto [i, ratio] : llvm::enumerate(getRatios()))
    if (!isKnownRatio(ratio))
      return emitOpError("unknown compress ratio ")
             << ratio << " at layer " << i
             << " (expected 0 dense, 4 CSA, 128 HCA or -1 absent)";
  return success();
}

//===----------------------------------------------------------------------===//
// StateFieldOp
//===----------------------------------------------------------------------===//

LogicalResult StateFieldOp::verify() {
  auto dtype = poolrt::parseDType(getDtype().str());
  if (!dtype)
    return emitOpError("state field '")
           << getName() << "': unknown dtype '" << getDtype()
           << "' (expected one of " << poolrt::dtypeNameList() << ")";
  // One validation for the dialect, the YAML front end and the runtime.
  auto field = toStateField(*this);
  if (!field)
    return emitOpError(field.error().message);
  return success();
}

poolrt::Result<poolrt::StateField>
mlir::pool::toStateField(StateFieldOp op) {
  auto dtype = poolrt::parseDType(op.getDtype().str());
  if (!dtype)
    return poolrt::Error::invalid("unknown dtype '" + op.getDtype().str() +
                                  "'");
  return poolrt::StateField::make(
      op.getName().str(), s64(op.getLayers()), std::vector<int64_t>(op.getShape().begin(), op.getShape().end()),
      *dtype, op.getFill().convertToDouble(), s64(op.getAlign()),
      op.getInCheckpoint());
}

//===----------------------------------------------------------------------===//
// EntryClassOp
//===----------------------------------------------------------------------===//

LogicalResult EntryClassOp::verify() {
  StringRef name = getName();
  if (name.empty())
    return emitOpError("an entry class needs a non-empty name");
  if (!isPage() && !isState())
    return emitOpError("entry class '")
           << name << "': unknown pool '" << getPool()
           << "' (expected \"page\" or \"state\")";
  if (!getBytes() && !getDerived())
    return emitOpError("entry class '")
           << name << "' declares neither bytes nor derived";
  if (getBytes() && s64(*getBytes()) < 1)
    return emitOpError("entry class '")
           << name << "': bytes must be >= 1, got " << s64(*getBytes());
  int64_t perReq = s64(getEntriesPerReq()), extra = s64(getExtraEntries());
  if (isState() && perReq < 1)
    return emitOpError("'") << name
                            << "': STATE entries need entries_per_req >= 1";
  if (isPage() && (perReq != 0 || extra != 0))
    return emitOpError("'") << name
                            << "': PAGE entries are sized from the remainder "
                               "(no entries_per_req or extra_entries)";
  if (extra < 0)
    return emitOpError("'") << name << "': extra_entries must be >= 0, got "
                            << extra;
  if (isPage() && getTransfer())
    return emitOpError("'") << name
                            << "': a PAGE class has no state transfer";
  if (auto a = getAttention()) {
    if (!isPage())
      return emitOpError("'") << name
                              << "': only a PAGE class has an attention pattern";
    if (*a != "full" && *a != "sliding" && *a != "chunked")
      return emitOpError("'") << name << "': unknown attention '" << *a
                              << "' (expected full, sliding or chunked)";
  }
  int64_t tokens = s64(getAttentionTokens()), fwd = s64(getForwardTokens());
  int64_t cache = s64(getCachePercent());
  if (cache < 0 || cache > 100 || (cache != 0 && !isWindow()))
    return emitOpError("'") << name
                            << "': cache_percent is a window class's share of "
                               "the budget, 0 to 100, got "
                            << cache;
  if (isWindow() && tokens < 1)
    return emitOpError("'") << name << "': " << *getAttention()
                            << " attention needs tokens >= 1, got " << tokens;
  if (!isWindow() && (tokens != 0 || fwd != 0))
    return emitOpError("'") << name
                            << "': attention tokens and forward_tokens belong "
                               "to a sliding or chunked PAGE class";
  if (fwd < 0)
    return emitOpError("'") << name << "': forward_tokens must be >= 0, got "
                            << fwd;
  return success();
}
