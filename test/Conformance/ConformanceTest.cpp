//===- ConformanceTest.cpp - Run the reference's golden vectors -----------===//
//
// Every vector of ../shared/spec/vectors.json (copied beside this file) is
// either run here as its own GoogleTest case, or listed as deferred to the
// issue that builds its algorithm. A vector whose algorithm is neither makes
// the run fail: nothing is skipped silently. The counts are printed.
//
// Errors are compared by kind (the spec maps Python exceptions to kinds);
// where this project words a message exactly like the reference, the text is
// compared too.
//
//===----------------------------------------------------------------------===//

#include "Vectors.h"

#include "poolrt/RowSpace.h"
#include "poolrt/Runs.h"
#include "poolrt/StateArena.h"
#include "poolrt/SubPool.h"

#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Support/MemoryBuffer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <map>
#include <algorithm>
#include <cstdio>
#include <optional>
#include <set>

using namespace poolrt;
namespace json = llvm::json;

namespace conformance {

const json::Object *gVectorsById(const std::string &id);
const json::Object *vectorById(const std::string &id) { return gVectorsById(id); }

std::string render(const json::Value &v) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << v;
  return os.str();
}

int64_t i64(const json::Value &v) {
  auto i = v.getAsInteger();
  EXPECT_TRUE(i.has_value()) << "expected an integer in the vector";
  return i.value_or(0);
}

std::string str(const json::Value &v) {
  auto s = v.getAsString();
  return s ? s->str() : std::string();
}

double number(const json::Value &v) {
  if (auto s = v.getAsString()) {
    if (*s == "-inf")
      return -INFINITY;
    if (*s == "inf")
      return INFINITY;
  }
  return v.getAsNumber().value_or(NAN);
}

std::vector<int64_t> intList(const json::Value &v) {
  std::vector<int64_t> out;
  if (auto *a = v.getAsArray())
    for (const json::Value &e : *a)
      out.push_back(i64(e));
  return out;
}

ErrorKind kindOf(const std::string &python) {
  if (python == "ValueError")
    return ErrorKind::InvalidArgument;
  if (python == "InsufficientPoolBudget")
    return ErrorKind::InsufficientBudget;
  if (python == "KeyError")
    return ErrorKind::Lookup;
  if (python == "RuntimeError")
    return ErrorKind::State;
  return ErrorKind::Internal;
}

// Compare an error to {"raises": ..., "message": ..., ...}.
void expectError(const Error &e, const json::Object &exp, bool exactMessage) {
  EXPECT_EQ(e.kind, kindOf(str(*exp.get("raises"))))
      << "got " << errorKindName(e.kind) << ": " << e.message;
  if (exactMessage)
    EXPECT_EQ(e.message, str(*exp.get("message")));
  if (e.kind == ErrorKind::InsufficientBudget) {
    EXPECT_EQ(e.reservedBytes, *exp.getInteger("reserved_bytes"));
    EXPECT_EQ(e.availableBytes, *exp.getInteger("available_bytes"));
    EXPECT_EQ(e.entries, *exp.getInteger("entries"));
  }
}

} // namespace conformance

using namespace conformance;

namespace {

SubPoolSpec specFrom(const json::Value &v) {
  const json::Object &o = *v.getAsObject();
  auto pool = parsePool(str(*o.get("pool")));
  EXPECT_TRUE(pool.has_value());
  auto s = SubPoolSpec::make(*pool, str(*o.get("name")),
                             *o.getInteger("entry_bytes"),
                             o.getInteger("entries_per_req").value_or(0),
                             o.getInteger("extra_entries").value_or(0));
  EXPECT_TRUE(s.ok()) << s.error().message;
  return s.ok() ? s.value() : SubPoolSpec{};
}

std::vector<SubPoolSpec> specsFrom(const json::Value &v) {
  std::vector<SubPoolSpec> out;
  for (const json::Value &s : *v.getAsArray())
    out.push_back(specFrom(s));
  return out;
}

void expectPlan(const PoolPlan &plan, const json::Object &exp) {
  const json::Object &entries = *exp.getObject("entries");
  const json::Object &bytes = *exp.getObject("entry_bytes");
  const json::Object &reserved = *exp.getObject("reserved_bytes");
  const json::Object &perReq = *exp.getObject("entries_per_req");
  EXPECT_EQ(plan.classes().size(), bytes.size());
  for (const auto &kv : bytes) {
    std::string name = kv.first.str();
    const PlannedClass *c = plan.find(name);
    ASSERT_NE(c, nullptr) << "no class " << name;
    EXPECT_EQ(c->entryBytes, i64(kv.second)) << name;
    EXPECT_EQ(c->entries, *entries.getInteger(name)) << name;
    EXPECT_EQ(c->reservedBytes, *reserved.getInteger(name)) << name;
    EXPECT_EQ(c->entriesPerReq, *perReq.getInteger(name)) << name;
  }
  const json::Value *paged = exp.get("paged_class");
  if (paged->getAsNull())
    EXPECT_FALSE(plan.pagedClass().has_value());
  else
    EXPECT_EQ(plan.pagedClass().value_or(""), str(*paged));
  EXPECT_EQ(plan.pagedEntries(), *exp.getInteger("paged_entries"));
  EXPECT_EQ(plan.totalReservedBytes(), *exp.getInteger("total_reserved_bytes"));
}

std::vector<StateField> fieldsFrom(const json::Value &v) {
  if (auto ref = v.getAsString()) // "sa_v4_like": reuse that vector's fields
    return fieldsFrom(*gVectorsById(ref->str())->getObject("inputs")->get("fields"));
  std::vector<StateField> out;
  for (const json::Value &fv : *v.getAsArray()) {
    const json::Object &f = *fv.getAsObject();
    auto dtype = parseDType(str(*f.get("dtype")));
    EXPECT_TRUE(dtype.has_value());
    EXPECT_EQ(dtypeSize(*dtype), *f.getInteger("itemsize"));
    auto field = StateField::make(
        str(*f.get("name")), *f.getInteger("layers"), intList(*f.get("shape")),
        *dtype, number(*f.get("fill")), *f.getInteger("align"),
        *f.getBoolean("in_checkpoint"));
    EXPECT_TRUE(field.ok()) << field.error().message;
    if (field.ok())
      out.push_back(field.value());
  }
  return out;
}

void expectExtents(const std::vector<StateField> &fields,
                   const json::Value &exp) {
  auto ext = fieldExtents(fields);
  ASSERT_TRUE(ext.ok());
  const json::Array &e = *exp.getAsArray();
  ASSERT_EQ(ext->size(), e.size());
  for (size_t i = 0; i < e.size(); ++i) {
    const json::Array &row = *e[i].getAsArray();
    EXPECT_EQ((*ext)[i].name, str(row[0]));
    EXPECT_EQ((*ext)[i].begin, i64(row[1]));
    EXPECT_EQ((*ext)[i].end, i64(row[2]));
  }
}

void expectRanges(const std::vector<std::pair<int64_t, int64_t>> &got,
                  const json::Value &exp) {
  const json::Array &e = *exp.getAsArray();
  ASSERT_EQ(got.size(), e.size());
  for (size_t i = 0; i < e.size(); ++i) {
    auto pair = intList(e[i]);
    EXPECT_EQ(got[i].first, pair[0]);
    EXPECT_EQ(got[i].second, pair[1]);
  }
}

//===----------------------------------------------------------------------===//
// Handlers, one per algorithm.
//===----------------------------------------------------------------------===//

void runPlanPools(const json::Object &in, const json::Object &exp) {
  auto plan = planPools(specsFrom(*in.get("specs")),
                        *in.getInteger("available_bytes"),
                        *in.getInteger("max_num_seqs"));
  if (const json::Object *ok = exp.getObject("ok")) {
    ASSERT_TRUE(plan.ok()) << plan.error().message;
    expectPlan(plan.value(), *ok);
  } else {
    ASSERT_FALSE(plan.ok());
    expectError(plan.error(), exp, /*exactMessage=*/true);
  }
}

PoolPlan planOfVector(const std::string &id) {
  const json::Object &v = *gVectorsById(id);
  const json::Object &in = *v.getObject("inputs");
  auto plan = planPools(specsFrom(*in.get("specs")),
                        *in.getInteger("available_bytes"),
                        *in.getInteger("max_num_seqs"));
  EXPECT_TRUE(plan.ok());
  return plan.ok() ? plan.value() : PoolPlan::empty();
}

void runWithPagedEntries(const json::Object &in, const json::Object &exp) {
  PoolPlan base = planOfVector(str(*in.get("plan")));
  auto resized = base.withPagedEntries(*in.getInteger("count"));
  ASSERT_TRUE(resized.ok()) << resized.error().message;
  expectPlan(resized.value(), exp);
  // Without a PAGE class there is nothing to resize.
  auto none = PoolPlan::empty().withPagedEntries(1);
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.error().message, "no PAGE entry class to resize");
}

void runEmptyPlan(const json::Object &, const json::Object &exp) {
  expectPlan(PoolPlan::empty(), exp);
}

void runMergeSpecs(const json::Object &in, const json::Object &exp) {
  auto merged = mergeSpecs(specsFrom(*in.get("specs")));
  if (exp.get("raises")) {
    ASSERT_FALSE(merged.ok());
    expectError(merged.error(), exp, /*exactMessage=*/false);
    EXPECT_NE(merged.error().message.find("pool/multiplicity"),
              std::string::npos);
    return;
  }
  ASSERT_TRUE(merged.ok());
  ASSERT_EQ(merged->size(), exp.size());
  for (const SubPoolSpec &s : merged.value()) {
    const json::Object *e = exp.getObject(s.name);
    ASSERT_NE(e, nullptr);
    EXPECT_EQ(poolName(s.pool), str(*e->get("pool")));
    EXPECT_EQ(s.entryBytes, *e->getInteger("entry_bytes"));
    EXPECT_EQ(s.entriesPerReq, *e->getInteger("entries_per_req"));
    EXPECT_EQ(s.extraEntries, *e->getInteger("extra_entries"));
  }
}

void runParityGrid(const json::Object &, const json::Value &expV) {
  int rows = 0;
  for (const json::Value &rv : *expV.getAsArray()) {
    const json::Object &row = *rv.getAsObject();
    int64_t block = *row.getInteger("block_bytes"),
            swa = *row.getInteger("swa_block_bytes"),
            perReq = *row.getInteger("per_req_bytes"),
            slots = *row.getInteger("slots_per_req"),
            perDecode = *row.getInteger("per_decode"),
            avail = *row.getInteger("available"),
            seqs = *row.getInteger("max_num_seqs");
    std::vector<SubPoolSpec> specs{
        SubPoolSpec::make(Pool::Page, "kv", block - swa).value()};
    if (swa)
      specs.push_back(
          SubPoolSpec::make(Pool::State, "window", swa, perDecode, 64).value());
    if (perReq)
      specs.push_back(
          SubPoolSpec::make(Pool::State, "recurrent", perReq, slots).value());
    auto plan = planPools(specs, avail, seqs);
    const json::Value &want = *row.get("plan_pools");
    if (const json::Array *pair = want.getAsArray()) {
      ASSERT_TRUE(plan.ok()) << plan.error().message;
      EXPECT_EQ(plan->pagedEntries(), i64((*pair)[0]));
      const PlannedClass *w = plan->find("window");
      EXPECT_EQ(w ? w->entries : 0, i64((*pair)[1]));
    } else {
      const json::Object &err = *want.getAsObject();
      if (*err.getInteger("reserved_bytes") == *err.getInteger("available_bytes")) {
        // Quirk Q3 (the vector's note): an exact fit is a plan with the
        // STATE floor and 0 PAGE entries, not an error.
        ASSERT_TRUE(plan.ok()) << plan.error().message;
        EXPECT_EQ(plan->pagedEntries(), 0);
        const PlannedClass *r = plan->find("recurrent");
        ASSERT_NE(r, nullptr);
        EXPECT_EQ(r->entries, *err.getInteger("entries"));
        EXPECT_EQ(plan->totalReservedBytes(), avail);
      } else {
        ASSERT_FALSE(plan.ok());
        expectError(plan.error(), err, /*exactMessage=*/true);
      }
    }
    ++rows;
  }
  EXPECT_EQ(rows, 12);
}

void runEntryBytes(const json::Object &in, const json::Object &exp) {
  auto fields = fieldsFrom(*in.get("fields"));
  auto bytes = entryBytesFor(fields);
  ASSERT_TRUE(bytes.ok());
  EXPECT_EQ(*bytes, *exp.getInteger("entry_bytes"));
  if (const json::Value *e = exp.get("extents"))
    expectExtents(fields, *e);
  if (const json::Value *r = exp.get("checkpoint_ranges")) {
    auto ranges = checkpointRangesFor(fields);
    ASSERT_TRUE(ranges.ok());
    expectRanges(ranges.value(), *r);
  }
}

void runViewStrides(const json::Object &in, const json::Object &exp) {
  auto arena = StateArenaLayout::create(fieldsFrom(*in.get("fields")),
                                        *in.getInteger("entries"));
  ASSERT_TRUE(arena.ok()) << arena.error().message;
  auto view = arena->view(str(*in.get("field")));
  ASSERT_TRUE(view.ok());
  EXPECT_EQ(view->shape, intList(*exp.get("shape")));
  EXPECT_EQ(view->strideElems, intList(*exp.get("stride_elems")));
  for (const auto &kv : *exp.getObject("storage_offset_elems")) {
    auto v = arena->view(kv.first.str());
    ASSERT_TRUE(v.ok());
    EXPECT_EQ(v->storageOffsetElems, i64(kv.second)) << kv.first.str();
  }
  EXPECT_EQ(arena->totalBytes(), *exp.getInteger("total_bytes"));
  // A carved arena 512 B into a larger buffer: the buffer's own offset
  // counts (forgetting it was a real reference bug).
  auto carved = StateArenaLayout::create(fieldsFrom(*in.get("fields")),
                                         *in.getInteger("entries"),
                                         std::nullopt, std::nullopt, 512);
  ASSERT_TRUE(carved.ok());
  EXPECT_EQ(carved->view(str(*in.get("field")))->storageOffsetElems,
            view->storageOffsetElems + 512 / 4);
}

void runSlotStrideLive(const json::Object &in, const json::Object &exp) {
  auto arena = StateArenaLayout::create(
      fieldsFrom(*in.get("fields")), *in.getInteger("entries"),
      *in.getInteger("slot_stride"), *in.getInteger("live_entries"));
  ASSERT_TRUE(arena.ok()) << arena.error().message;
  EXPECT_EQ(arena->totalBytes(), *exp.getInteger("total_bytes"));
  EXPECT_EQ(arena->totalBytes(), *exp.getInteger("buf_bytes"));
  EXPECT_EQ(arena->view("csa_main_kv")->strideElems,
            intList(*exp.get("view_stride_elems")));
  auto [lo, hi] = arena->liveRange();
  std::vector<int64_t> filled;
  for (int64_t e = lo; e < hi; ++e)
    filled.push_back(e);
  EXPECT_EQ(filled, intList(*exp.get("filled_entry_indices")));
  // Fill for real and read csa_main_score back entry by entry.
  std::vector<uint8_t> buf(arena->totalBytes(), 0);
  arena->fillLive(buf.data());
  const json::Object &fill = *exp.getObject("csa_main_score_entry_fill");
  int64_t off = *arena->fieldOffset("csa_main_score");
  int64_t lastOff = 0;
  for (const StateField &f : arena->fields())
    if (f.name == "csa_main_score")
      lastOff = f.bytesPerEntry() - 4;
  ASSERT_GT(lastOff, 0);
  for (const auto &kv : fill) {
    std::string range = kv.first.str(); // "a..b"
    int64_t a = std::stoll(range.substr(0, range.find('.')));
    int64_t b = std::stoll(range.substr(range.rfind('.') + 1));
    double want = number(kv.second);
    for (int64_t e = a; e <= b; ++e) {
      float got;
      std::memcpy(&got, buf.data() + e * arena->slotStride() + off, 4);
      EXPECT_EQ(double(got), want) << "entry " << e;
      float last;
      std::memcpy(&last, buf.data() + e * arena->slotStride() + off + lastOff, 4);
      EXPECT_EQ(double(last), want) << "entry " << e << " last element";
    }
  }
}

void runArenaValidation(const json::Object &in, const json::Value &expV) {
  auto v4 = fieldsFrom(json::Value("sa_v4_like"));
  auto a12 = StateField::make("a", 1, {3}, DType::F32).value();
  const json::Array &cases = *in.getArray("cases");
  const json::Array &exp = *expV.getAsArray();
  ASSERT_EQ(cases.size(), exp.size());
  for (size_t i = 0; i < cases.size(); ++i) {
    std::string c = str(cases[i]);
    Result<StateArenaLayout> r = Error::invalid("unhandled case");
    if (c == "slot_stride=256")
      r = StateArenaLayout::create(v4, 5, 256);
    else if (c == "slot_stride=entry_bytes+8")
      r = StateArenaLayout::create(v4, 5, 74752 + 8);
    else if (c == "buf storage_offset=8")
      r = StateArenaLayout::create(v4, 5, std::nullopt, std::nullopt, 8);
    else if (c == "no fields")
      r = StateArenaLayout::create({}, 5);
    else if (c == "duplicate names")
      r = StateArenaLayout::create({a12, a12}, 5);
    else if (c == "live_entries=6 of 5")
      r = StateArenaLayout::create(v4, 5, std::nullopt, 6);
    else
      ADD_FAILURE() << "unknown validation case '" << c << "'";
    ASSERT_FALSE(r.ok()) << c;
    expectError(r.error(), *exp[i].getAsObject(), /*exactMessage=*/true);
  }
}

void runPlanRegions(const json::Object &in, const json::Object &exp) {
  auto plan = planRegions(intList(*in.get("sizes")));
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->offsets, intList(*exp.get("offsets")));
  EXPECT_EQ(plan->total, *exp.getInteger("total"));
}

void runCheckpointRanges(const json::Object &in, const json::Value &expV) {
  if (const json::Array *cases = in.getArray("cases")) {
    const json::Array &exp = *expV.getAsArray();
    ASSERT_EQ(cases->size(), exp.size());
    for (size_t i = 0; i < cases->size(); ++i) {
      auto ranges = checkpointRangesFor(fieldsFrom((*cases)[i]));
      ASSERT_TRUE(ranges.ok());
      expectRanges(ranges.value(), exp[i]);
    }
    return;
  }
  const json::Object &exp = *expV.getAsObject();
  auto fields = fieldsFrom(*in.get("fields"));
  auto ranges = checkpointRangesFor(fields);
  ASSERT_TRUE(ranges.ok());
  expectRanges(ranges.value(), *exp.get("ranges"));
  if (auto eb = exp.getInteger("entry_bytes"))
    EXPECT_EQ(*entryBytesFor(fields), *eb);
  if (const json::Value *e = exp.get("extents"))
    expectExtents(fields, *e);
}

void runPlaneSplit(const json::Object &in, const json::Value &expV) {
  if (const json::Array *cases = in.getArray("cases")) {
    const json::Array &exp = *expV.getAsArray();
    ASSERT_EQ(cases->size(), exp.size());
    for (size_t i = 0; i < cases->size(); ++i) {
      std::string c = str((*cases)[i]);
      Result<PlaneSplit> r = Error::invalid("unhandled");
      if (c == "no planes") {
        r = planFieldPlanes({StateField::make("a", 1, {4}, DType::F32).value()}, {});
      } else if (c == "17 fields x 2 planes") {
        std::vector<StateField> many;
        for (int k = 0; k < 17; ++k)
          many.push_back(
              StateField::make("f" + std::to_string(k), 1, {4}, DType::F32).value());
        r = planFieldPlanes(many, {512, 128});
      } else {
        ADD_FAILURE() << "unknown case '" << c << "'";
      }
      ASSERT_FALSE(r.ok());
      expectError(r.error(), *exp[i].getAsObject(), /*exactMessage=*/true);
    }
    return;
  }
  const json::Object &exp = *expV.getAsObject();
  auto fields = fieldsFrom(*in.get("fields"));
  const json::Array &widths = *in.getArray("plane_row_bytes");
  const char *keys[] = {"one_plane", "two_planes"};
  ASSERT_EQ(widths.size(), 2u);
  for (size_t w = 0; w < 2; ++w) {
    auto split = planFieldPlanes(fields, intList(widths[w]));
    ASSERT_TRUE(split.ok());
    const json::Object &want = *exp.getObject(keys[w]);
    EXPECT_EQ(split->rows, *want.getInteger("rows"));
    const json::Array &groups = *want.getArray("groups");
    ASSERT_EQ(split->groups.size(), groups.size());
    for (size_t p = 0; p < groups.size(); ++p) {
      std::vector<std::string> names;
      for (size_t k : split->groups[p])
        names.push_back(fields[k].name);
      std::vector<std::string> wantNames;
      for (const json::Value &n : *groups[p].getAsArray())
        wantNames.push_back(str(n));
      EXPECT_EQ(names, wantNames) << keys[w] << " plane " << p;
    }
  }
}

void runMergeAbutting(const json::Object &in, const json::Value &expV) {
  const json::Array &cases = *in.getArray("cases");
  const json::Array &exp = *expV.getAsArray();
  ASSERT_EQ(cases.size(), exp.size());
  for (size_t i = 0; i < cases.size(); ++i) {
    std::vector<Run> runs;
    for (const json::Value &r : *cases[i].getAsArray()) {
      auto p = intList(r);
      runs.push_back({p[0], p[1]});
    }
    auto merged = mergeAbutting(runs);
    const json::Object &e = *exp[i].getAsObject();
    if (const json::Value *ok = e.get("ok")) {
      ASSERT_TRUE(merged.ok()) << merged.error().message;
      expectRanges(merged.value(), *ok);
    } else {
      ASSERT_FALSE(merged.ok());
      expectError(merged.error(), e, /*exactMessage=*/true);
    }
  }
}


//===----------------------------------------------------------------------===//
// Row space (issue 3).
//===----------------------------------------------------------------------===//

RowSpaceGeometry geometryFrom(const json::Object &in,
                              std::optional<int64_t> planeRows = std::nullopt,
                              int64_t arenaRows = 0,
                              std::optional<int64_t> slotPositions = std::nullopt,
                              int64_t slotAlign = 2) {
  auto g = RowSpaceGeometry::create(
      intList(*in.get("ratios")), *in.getInteger("num_blocks"),
      *in.getInteger("num_slots"), *in.getInteger("ring_slots"),
      *in.getInteger("block_size"), planeRows, arenaRows, slotPositions,
      slotAlign);
  EXPECT_TRUE(g.ok()) << (g.ok() ? "" : g.error().message);
  return g.take();
}

void expectRuns(const std::vector<Run> &got, const json::Value &exp) {
  expectRanges(got, exp);
}

void expectParams(const WindowParams &p, const json::Object &e) {
  EXPECT_EQ(p.ringStart, *e.getInteger("ring_start"));
  EXPECT_EQ(p.slotRows, *e.getInteger("slot_rows"));
  EXPECT_EQ(p.ringSlots, *e.getInteger("ring_slots"));
  EXPECT_EQ(p.ringStride, *e.getInteger("ring_stride"));
  EXPECT_EQ(p.runRows, *e.getInteger("run_rows"));
}

void runGeometry(const json::Object &in, const json::Object &exp) {
  RowSpaceGeometry g = geometryFrom(in, std::nullopt,
                                    *in.getInteger("arena_rows"), std::nullopt,
                                    *in.getInteger("slot_align_rows"));
  EXPECT_EQ(g.envelopeRows(), *exp.getInteger("envelope_rows"));
  EXPECT_EQ(g.entryRows(), *exp.getInteger("entry_rows"));
  EXPECT_EQ(g.slotRows(), *exp.getInteger("slot_rows"));
  EXPECT_EQ(g.planeRows(), *exp.getInteger("plane_rows"));
  EXPECT_EQ(g.slotPositions(), *exp.getInteger("slot_positions"));
  EXPECT_EQ(g.slotOrigin(), *exp.getInteger("slot_origin"));
  const json::Object &classes = *exp.getObject("classes");
  EXPECT_EQ(g.classes().size(), classes.size());
  for (const auto &kv : classes) {
    int64_t ratio = std::stoll(kv.first.str());
    const ClassLayout *c = g.classFor(ratio);
    ASSERT_NE(c, nullptr) << ratio;
    const json::Object &e = *kv.second.getAsObject();
    EXPECT_EQ(c->layers, intList(*e.get("layers")));
    EXPECT_EQ(c->blockRows, *e.getInteger("block_rows"));
    EXPECT_EQ(c->ringStride, *e.getInteger("ring_stride"));
    EXPECT_EQ(c->envelopeOffset, *e.getInteger("envelope_offset"));
    EXPECT_EQ(c->entryOffset, *e.getInteger("entry_offset"));
    EXPECT_EQ(c->envelopeRows, *e.getInteger("envelope_rows"));
    EXPECT_EQ(c->entryRows, *e.getInteger("entry_rows"));
    expectRuns(c->entryRowRuns(), *e.get("entry_row_runs"));
    auto p = g.windowParams(ratio);
    ASSERT_TRUE(p.ok());
    expectParams(*p, *e.getObject("window_params"));
  }
  expectRuns(g.entryRowRuns(), *exp.get("entry_row_runs"));
  std::vector<int64_t> phys;
  for (int64_t grp = 0; grp < g.numSlots(); ++grp)
    phys.push_back(*g.physicalSlot(grp));
  EXPECT_EQ(phys, intList(*exp.get("physical_slots")));
  const json::Array &spans = *exp.getArray("slot_spans");
  const json::Array &arenas = *exp.getArray("arena_spans");
  for (size_t i = 0; i < phys.size(); ++i) {
    auto s = intList(spans[i]), a = intList(arenas[i]);
    EXPECT_EQ(g.slotSpan(phys[i]).first, s[0]);
    EXPECT_EQ(g.slotSpan(phys[i]).second, s[1]);
    EXPECT_EQ(g.arenaSpan(phys[i]).first, a[0]);
    EXPECT_EQ(g.arenaSpan(phys[i]).second, a[1]);
  }
  EXPECT_EQ(g.blockBytes(512) + g.blockBytes(128),
            *exp.getInteger("block_bytes_512_plus_128"));
  for (const auto &kv : *exp.getObject("layer_base_rows"))
    EXPECT_EQ(*g.layerBaseRow(std::stoll(kv.first.str())), i64(kv.second));
  for (const auto &kv : *exp.getObject("compress_index")) {
    int layer, block, row;
    ASSERT_EQ(std::sscanf(kv.first.str().c_str(), "layer%d_block%d_row%d",
                          &layer, &block, &row), 3);
    EXPECT_EQ(*g.compressIndex(layer, block, row), i64(kv.second));
  }
  for (const auto &kv : *exp.getObject("window_index")) {
    int layer, slot, pos;
    ASSERT_EQ(std::sscanf(kv.first.str().c_str(), "layer%d_slot%d_pos%d",
                          &layer, &slot, &pos), 3);
    EXPECT_EQ(*g.windowIndex(layer, slot, pos), i64(kv.second));
  }
  // Every window row of every layer and slot lands inside its own slot's
  // entry region, after the arena, and no two (layer, slot, pos) collide.
  std::set<int64_t> seen;
  for (int64_t grp = 0; grp < g.numSlots(); ++grp) {
    int64_t slot = *g.physicalSlot(grp);
    auto span = g.slotSpan(slot);
    for (size_t l = 0; l < g.ratios().size(); ++l) {
      int64_t base = *g.layerBaseRow(l);
      for (int64_t pos = 0; pos < g.ringSlots(); ++pos) {
        int64_t row = base + *g.windowIndex(l, slot, pos);
        EXPECT_GE(row, span.first + g.arenaRows());
        EXPECT_LT(row, span.second);
        EXPECT_TRUE(seen.insert(row).second) << "row " << row << " reused";
      }
    }
  }
  for (size_t l = 0; l < g.ratios().size(); ++l) {
    if (g.ratios()[l] <= 0)
      continue;
    const ClassLayout *c = *g.layerClass(l);
    for (int64_t b = 0; b < g.numBlocks(); ++b)
      for (int64_t r = 0; r < c->blockRows; ++r) {
        int64_t row = *g.layerBaseRow(l) + *g.compressIndex(l, b, r);
        EXPECT_LT(row, g.numBlocks() * g.envelopeRows());
        EXPECT_TRUE(seen.insert(row).second) << "row " << row << " reused";
      }
  }
}

void runGeometryErrors(const json::Object &, const json::Value &expV) {
  const json::Object &flashIn =
      *gVectorsById("geo_flash_test")->getObject("inputs");
  std::vector<int64_t> flash = intList(*flashIn.get("ratios"));
  auto make = [&](std::vector<int64_t> ratios, int64_t ring = 131,
                  std::optional<int64_t> planeRows = std::nullopt,
                  int64_t arena = 0, std::optional<int64_t> positions = std::nullopt,
                  int64_t align = 2) {
    return RowSpaceGeometry::create(std::move(ratios), 3, 2, ring, 256,
                                    planeRows, arena, positions, align);
  };
  auto geo = make(flash).take();
  const json::Array &exp = *expV.getAsArray();
  const json::Array &cases =
      *gVectorsById("geo_errors")->getObject("inputs")->getArray("cases");
  ASSERT_EQ(cases.size(), exp.size());
  for (size_t i = 0; i < cases.size(); ++i) {
    std::string c = str(cases[i]);
    std::optional<Error> err;
    auto take = [&](auto r) {
      if (!r.ok())
        err = r.error();
    };
    if (c == "ratios [0,4,7]")
      take(make({0, 4, 7}));
    else if (c == "ratios []")
      take(make({}));
    else if (c == "window_index pos=131 (ring 131)")
      take(geo.windowIndex(0, 0, 131));
    else if (c == "plane_rows=100")
      take(make(flash, 131, 100));
    else if (c == "physical_slot(2) with num_slots=2")
      take(geo.physicalSlot(2));
    else if (c == "ring_slots=0")
      take(make(flash, 0));
    else if (c == "slot_align_rows=0")
      take(make(flash, 131, std::nullopt, 0, std::nullopt, 0));
    else if (c == "arena_rows=-1")
      take(make(flash, 131, std::nullopt, -1));
    else if (c == "compress_index dense layer")
      take(geo.compressIndex(0, 0, 0));
    else if (c == "compress_index row=64 csa")
      take(geo.compressIndex(2, 0, 64));
    else if (c == "slot_positions smaller than held")
      take(make(flash, 131, 60000, 0, 3));
    else if (c == "layer_class of ABSENT layer") {
      auto absent = flash;
      absent[2] = kAbsentRatio;
      take(make(absent).take().layerClass(2));
    } else
      ADD_FAILURE() << "unknown case '" << c << "'";
    ASSERT_TRUE(err.has_value()) << c;
    expectError(*err, *exp[i].getAsObject(), /*exactMessage=*/true);
  }
}

void runEntryRowsTable(const json::Object &, const json::Object &exp) {
  for (const auto &kv : exp) {
    int64_t L, S, R;
    ASSERT_EQ(std::sscanf(kv.first.str().c_str(), "%ld,%ld,%ld", &L, &S, &R), 3);
    const json::Object &e = *kv.second.getAsObject();
    EXPECT_EQ(entryRowsFor(L, S, R), *e.getInteger("entry_rows"));
    EXPECT_EQ(ringOffsetFor(L, S, R - 1), *e.getInteger("ring_offset_last"));
    expectRuns(entryRowRunsFor(L, S, R), *e.get("runs"));
    // Minimal by brute force: the rows reached span exactly entry_rows.
    int64_t top = 0;
    for (int64_t i = 0; i < L; ++i)
      for (int64_t q = 0; q < R; ++q)
        top = std::max(top, i * S + ringOffsetFor(L, S, q) + 1);
    EXPECT_EQ(top, entryRowsFor(L, S, R));
  }
}

void runAbsentDraft(const json::Object &in, const json::Object &exp) {
  std::vector<int64_t> ratios = intList(*in.get("ratios_with_draft"));
  auto check = [&](const std::vector<int64_t> &r, const json::Object &e) {
    auto g = RowSpaceGeometry::create(r, *in.getInteger("num_blocks"),
                                      *in.getInteger("num_slots"),
                                      *in.getInteger("ring_slots"),
                                      *in.getInteger("block_size"));
    ASSERT_TRUE(g.ok()) << g.error().message;
    std::vector<int64_t> classes;
    for (const ClassLayout &c : g->classes())
      classes.push_back(c.ratio);
    std::sort(classes.begin(), classes.end());
    EXPECT_EQ(classes, intList(*e.get("classes")));
    EXPECT_EQ(g->envelopeRows(), *e.getInteger("envelope_rows"));
    EXPECT_EQ(g->entryRows(), *e.getInteger("entry_rows"));
    EXPECT_EQ(g->slotRows(), *e.getInteger("slot_rows"));
    if (const json::Object *err = e.getObject("window_params_dense")) {
      auto p = g->windowParams(kDenseRatio);
      ASSERT_FALSE(p.ok());
      expectError(p.error(), *err, /*exactMessage=*/true);
    }
  };
  check(ratios, *exp.getObject("with_dense"));
  ratios.back() = kAbsentRatio;
  check(ratios, *exp.getObject("absent"));
}

void runFieldWindowParams(const json::Object &in, const json::Object &exp) {
  for (const auto &kv : exp) {
    int64_t rpw = std::stoll(kv.first.str());
    RowSpaceGeometry g =
        geometryFrom(in, std::nullopt, 131 * rpw, std::nullopt, rpw);
    const json::Object &e = *kv.second.getAsObject();
    EXPECT_EQ(g.slotRows(), *e.getInteger("slot_rows"));
    auto p = g.fieldWindowParams(*in.getInteger("field_offset_rows"), rpw);
    ASSERT_TRUE(p.ok()) << p.error().message;
    expectParams(*p, *e.getObject("params"));
    std::vector<int64_t> phys;
    for (int64_t grp = 0; grp < g.numSlots(); ++grp)
      phys.push_back(*g.physicalSlot(grp));
    EXPECT_EQ(phys, intList(*e.get("physical_slots")));
    EXPECT_EQ(p->index(phys[0], 5), *e.getInteger("index_slot_top_pos5"));
    auto span = g.arenaSpan(phys[0]);
    auto want = intList(*e.get("arena_span_top"));
    EXPECT_EQ(span.first, want[0]);
    EXPECT_EQ(span.second, want[1]);
  }
}

void runFieldWindowErrors(const json::Object &in, const json::Value &expV) {
  const json::Object &geoIn =
      *gVectorsById("geo_field_window_params")->getObject("inputs");
  RowSpaceGeometry g = geometryFrom(geoIn, std::nullopt, 131 * 2, std::nullopt, 2);
  ASSERT_EQ(g.slotRows(), *in.getInteger("slot_rows"));
  const json::Array &cases = *in.getArray("cases");
  const json::Array &exp = *expV.getAsArray();
  ASSERT_EQ(cases.size(), exp.size());
  for (size_t i = 0; i < cases.size(); ++i) {
    std::string c = str(cases[i]);
    Result<WindowParams> r = Error::invalid("unhandled");
    if (c == "rpw=0")
      r = g.fieldWindowParams(0, 0);
    else if (c == "offset=1,rpw=2")
      r = g.fieldWindowParams(1, 2);
    else if (c == "rpw=4 (slot_rows 7528)")
      r = g.fieldWindowParams(0, 4);
    else
      ADD_FAILURE() << "unknown case '" << c << "'";
    const json::Object &e = *exp[i].getAsObject();
    if (const json::Value *ok = e.get("ok")) {
      ASSERT_TRUE(r.ok()) << r.error().message;
      EXPECT_EQ(r->str(), str(*ok));
    } else {
      ASSERT_FALSE(r.ok()) << c;
      expectError(r.error(), e, /*exactMessage=*/true);
    }
  }
}

//===----------------------------------------------------------------------===//
// Dispatch and coverage.
//===----------------------------------------------------------------------===//


template <typename F> Handler objectHandler(F f) {
  return [f](const json::Object &in, const json::Value &exp) {
    ASSERT_NE(exp.getAsObject(), nullptr);
    f(in, *exp.getAsObject());
  };
}

std::map<std::string, Handler> &registered() {
  static std::map<std::string, Handler> r;
  return r;
}

const std::map<std::string, Handler> &handlers() {
  static std::map<std::string, Handler> h = {
      {"plan_pools", objectHandler(runPlanPools)},
      {"PoolPlan.with_paged_entries", objectHandler(runWithPagedEntries)},
      {"PoolPlan.empty", objectHandler(runEmptyPlan)},
      {"merge_specs", objectHandler(runMergeSpecs)},
      {"plan_pools vs pre-refactor expression", runParityGrid},
      {"entry_bytes_for/field_extents", objectHandler(runEntryBytes)},
      {"entry_bytes_for", objectHandler(runEntryBytes)},
      {"StateArena.view strides", objectHandler(runViewStrides)},
      {"StateArena with slot_stride/live_entries", objectHandler(runSlotStrideLive)},
      {"StateArena validation", runArenaValidation},
      {"plan_regions", objectHandler(runPlanRegions)},
      {"checkpoint_ranges_for", runCheckpointRanges},
      {"plan_field_planes", runPlaneSplit},
      {"merge_abutting", runMergeAbutting},
      {"UnifiedPoolGeometry", objectHandler(runGeometry)},
      {"UnifiedPoolGeometry validation", runGeometryErrors},
      {"entry_rows_for / ring_offset_for / ClassLayout.entry_row_runs", objectHandler(runEntryRowsTable)},
      {"ABSENT_RATIO removes a class", objectHandler(runAbsentDraft)},
      {"field_window_params", objectHandler(runFieldWindowParams)},
      {"field_window_params validation", runFieldWindowErrors},
  };
  static bool merged = [] {
    for (auto &[algo, fn] : registered())
      h.emplace(algo, fn);
    return true;
  }();
  (void)merged;
  return h;
}

// Algorithms built by later issues. Listed by name so a new or renamed
// algorithm in vectors.json fails the run instead of vanishing.
const std::map<std::string, const char *> &deferred() {
  static const std::map<std::string, const char *> d = {
  };
  return d;
}

json::Value gRoot = nullptr;
std::map<std::string, const json::Object *> gById;
int gRun = 0, gDeferred = 0;
std::vector<std::string> gUnhandled;
int64_t gDeclaredCount = -1;
size_t gTotal = 0;

} // namespace

const json::Object *conformance::gVectorsById(const std::string &id) {
  auto it = gById.find(id);
  if (it == gById.end()) {
    ADD_FAILURE() << "no vector '" << id << "'";
    static const json::Object empty;
    return &empty;
  }
  return it->second;
}

namespace {

class VectorTest : public testing::Test {
public:
  VectorTest(Handler h, const json::Object *v) : h(std::move(h)), v(v) {}
  void TestBody() override {
    const json::Object *in = v->getObject("inputs");
    static const json::Object noInputs;
    h(in ? *in : noInputs, *v->get("expected"));
  }

private:
  Handler h;
  const json::Object *v;
};

TEST(Coverage, EveryVectorRunOrDeferred) {
  EXPECT_TRUE(gUnhandled.empty())
      << gUnhandled.size() << " vectors have no handler and no deferral, first: "
      << (gUnhandled.empty() ? "" : gUnhandled.front());
  EXPECT_EQ(int64_t(gTotal), gDeclaredCount) << "meta.count disagrees";
  EXPECT_EQ(gRun + gDeferred + int(gUnhandled.size()), int(gTotal));
  EXPECT_GT(gRun, 0);
}

} // namespace

conformance::Registrar::Registrar(const char *algorithm, Handler h) {
  registered().emplace(algorithm, std::move(h));
}

int main(int argc, char **argv) {
  testing::InitGoogleTest(&argc, argv);
  if (argc < 2) {
    std::fprintf(stderr, "usage: poolc-conformance vectors.json\n");
    return 2;
  }
  auto buf = llvm::MemoryBuffer::getFile(argv[1]);
  if (!buf) {
    std::fprintf(stderr, "%s: error: cannot read the vectors\n", argv[1]);
    return 1;
  }
  auto parsed = json::parse((*buf)->getBuffer());
  if (!parsed) {
    std::fprintf(stderr, "%s: error: %s\n", argv[1],
                 llvm::toString(parsed.takeError()).c_str());
    return 1;
  }
  gRoot = std::move(*parsed);
  const json::Object &root = *gRoot.getAsObject();
  gDeclaredCount = root.getObject("meta")->getInteger("count").value_or(-1);
  const json::Array &vectors = *root.getArray("vectors");
  gTotal = vectors.size();
  for (const json::Value &v : vectors)
    gById[str(*v.getAsObject()->get("id"))] = v.getAsObject();
  std::map<std::string, int> deferredBy;
  for (const json::Value &vv : vectors) {
    const json::Object *v = vv.getAsObject();
    std::string id = str(*v->get("id")), algo = str(*v->get("algorithm"));
    auto h = handlers().find(algo);
    if (h != handlers().end()) {
      ++gRun;
      Handler fn = h->second;
      testing::RegisterTest("Vectors", id.c_str(), nullptr, algo.c_str(),
                            __FILE__, __LINE__,
                            [fn, v]() -> testing::Test * { return new VectorTest(fn, v); });
    } else if (auto d = deferred().find(algo); d != deferred().end()) {
      ++gDeferred;
      ++deferredBy[d->second];
    } else {
      gUnhandled.push_back(id + " (" + algo + ")");
    }
  }
  std::printf("conformance: %zu vectors in %s: %d run here, %d deferred",
              gTotal, argv[1], gRun, gDeferred);
  for (const auto &[why, n] : deferredBy)
    std::printf(" [%d to %s]", n, why.c_str());
  std::printf(", %zu unhandled\n", gUnhandled.size());
  return RUN_ALL_TESTS();
}
