//===- StateArena.cpp - Per-request state entry layout --------------------===//

#include "poolrt/StateArena.h"
#include "poolrt/Checked.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>

namespace poolrt {

namespace {
struct DTypeInfo {
  DType type;
  const char *name;
  int64_t size;
};
constexpr DTypeInfo kDTypes[] = {
    {DType::F64, "f64", 8},         {DType::F32, "f32", 4},
    {DType::F16, "f16", 2},         {DType::BF16, "bf16", 2},
    {DType::FP8E4M3, "fp8_e4m3", 1}, {DType::FP8E5M2, "fp8_e5m2", 1},
    {DType::I64, "i64", 8},         {DType::I32, "i32", 4},
    {DType::I8, "i8", 1},           {DType::U8, "u8", 1},
};
struct Alias {
  const char *alias;
  DType type;
};
constexpr Alias kAliases[] = {
    {"float64", DType::F64},        {"float32", DType::F32},
    {"float16", DType::F16},        {"bfloat16", DType::BF16},
    {"fp8", DType::FP8E4M3},        {"float8_e4m3fn", DType::FP8E4M3},
    {"float8_e4m3fnuz", DType::FP8E4M3}, {"float8_e5m2", DType::FP8E5M2},
    {"int64", DType::I64},          {"int32", DType::I32},
    {"int8", DType::I8},            {"uint8", DType::U8},
};

std::string formatDouble(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

uint32_t floatBits(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}

// Exact float -> IEEE half for values fillRepresentable() accepted.
uint16_t toHalf(float f) {
  uint32_t b = floatBits(f);
  uint16_t sign = (b >> 16) & 0x8000;
  if (std::isinf(f))
    return sign | 0x7c00;
  if (f == 0.0f)
    return sign;
  int exp = int((b >> 23) & 0xff) - 127 + 15;
  return sign | uint16_t(exp << 10) | uint16_t((b >> 13) & 0x3ff);
}
} // namespace

const char *dtypeName(DType t) {
  for (const DTypeInfo &d : kDTypes)
    if (d.type == t)
      return d.name;
  return "?";
}

std::optional<DType> parseDType(const std::string &name) {
  for (const DTypeInfo &d : kDTypes)
    if (name == d.name)
      return d.type;
  for (const Alias &a : kAliases)
    if (name == a.alias)
      return a.type;
  return std::nullopt;
}

int64_t dtypeSize(DType t) {
  for (const DTypeInfo &d : kDTypes)
    if (d.type == t)
      return d.size;
  return 0;
}

const char *dtypeNameList() {
  return "f64, f32, f16, bf16, fp8_e4m3, fp8_e5m2, i64, i32, i8, u8";
}

bool fillRepresentable(DType t, double fill) {
  if (std::isnan(fill))
    return false;
  switch (t) {
  case DType::F64:
    return true;
  case DType::F32:
    return std::isinf(fill) || double(float(fill)) == fill;
  case DType::BF16:
    return std::isinf(fill) || (double(float(fill)) == fill &&
                                (floatBits(float(fill)) & 0xffff) == 0);
  case DType::F16: {
    if (std::isinf(fill) || fill == 0.0)
      return true;
    if (double(float(fill)) != fill)
      return false;
    uint32_t b = floatBits(float(fill));
    int exp = int((b >> 23) & 0xff) - 127;
    return exp >= -14 && exp <= 15 && (b & 0x1fff) == 0;
  }
  case DType::FP8E4M3:
  case DType::FP8E5M2:
    return fill == 0.0;
  case DType::I64:
    return std::floor(fill) == fill && fill >= -9.2e18 && fill <= 9.2e18;
  case DType::I32:
    return std::floor(fill) == fill && fill >= INT32_MIN && fill <= INT32_MAX;
  case DType::I8:
    return std::floor(fill) == fill && fill >= -128 && fill <= 127;
  case DType::U8:
    return std::floor(fill) == fill && fill >= 0 && fill <= 255;
  }
  return false;
}

Result<StateField> StateField::make(std::string name, int64_t layers,
                                    std::vector<int64_t> shape, DType dtype,
                                    double fill, int64_t align,
                                    bool inCheckpoint) {
  if (name.empty())
    return Error::invalid("a state field needs a non-empty name");
  if (layers < 0)
    return Error::invalid(name + ": layers must be >= 0, got " +
                          std::to_string(layers));
  for (int64_t d : shape)
    if (d < 0)
      return Error::invalid(name + ": shape dimensions must be >= 0, got " +
                            std::to_string(d));
  if (align < 0 || align % kArenaAlign != 0)
    return Error::invalid(name + ": alignment " + std::to_string(align) +
                          " must be a multiple of 256");
  if (!fillRepresentable(dtype, fill))
    return Error::invalid(name + ": fill value " + formatDouble(fill) +
                          " is not representable in " + dtypeName(dtype));
  int64_t numel = 1;
  for (int64_t d : shape) {
    auto r = checkedMul(numel, d, (name + " shape").c_str());
    if (!r)
      return r.error();
    numel = *r;
  }
  auto perLayer = checkedMul(numel, dtypeSize(dtype), (name + " bytes").c_str());
  if (!perLayer)
    return perLayer.error();
  auto total = checkedMul(*perLayer, layers, (name + " bytes").c_str());
  if (!total)
    return total.error();
  // Leave headroom for the 256 B rounding of the walk.
  if (*total > std::numeric_limits<int64_t>::max() / 4)
    return Error::invalid(name + ": " + std::to_string(*total) +
                          " bytes per entry is too large");
  StateField f;
  f.name = std::move(name);
  f.layers = layers;
  f.shape = std::move(shape);
  f.dtype = dtype;
  f.fill = fill;
  f.align = align;
  f.inCheckpoint = inCheckpoint;
  return f;
}

int64_t StateField::perLayerNumel() const {
  int64_t numel = 1;
  for (int64_t d : shape)
    numel *= d;
  return numel;
}

int64_t StateField::bytesPerEntry() const {
  return layers * perLayerNumel() * dtypeSize(dtype);
}

Result<std::vector<FieldExtent>>
fieldExtents(const std::vector<StateField> &fields) {
  std::vector<FieldExtent> out;
  int64_t offset = 0;
  for (const StateField &f : fields) {
    int64_t a = f.align > kArenaAlign ? f.align : kArenaAlign;
    auto start = checkedAlignUp(offset, a, "state entry");
    if (!start)
      return start.error();
    auto end = checkedAdd(*start, f.bytesPerEntry(), "state entry");
    if (!end)
      return end.error();
    out.push_back({f.name, *start, *end});
    offset = *end;
  }
  return out;
}

Result<int64_t> entryBytesFor(const std::vector<StateField> &fields) {
  auto ext = fieldExtents(fields);
  if (!ext)
    return ext.error();
  int64_t end = ext->empty() ? 0 : ext->back().end;
  return checkedAlignUp(end, kArenaAlign, "state entry");
}

Result<std::vector<std::pair<int64_t, int64_t>>>
checkpointRangesFor(const std::vector<StateField> &fields) {
  auto ext = fieldExtents(fields);
  if (!ext)
    return ext.error();
  std::vector<std::pair<int64_t, int64_t>> ranges;
  size_t i = 0;
  while (i < fields.size()) {
    if (!fields[i].inCheckpoint) {
      ++i;
      continue;
    }
    size_t j = i;
    while (j + 1 < fields.size() && fields[j + 1].inCheckpoint)
      ++j;
    int64_t begin = (*ext)[i].begin, end = (*ext)[j].end;
    if (end > begin)
      ranges.push_back({begin, end - begin});
    i = j + 1;
  }
  return ranges;
}

Result<RegionPlan> planRegions(const std::vector<int64_t> &sizes) {
  RegionPlan plan;
  int64_t offset = 0;
  for (int64_t size : sizes) {
    if (size < 0)
      return Error::invalid("region size must be >= 0, got " +
                            std::to_string(size));
    auto start = checkedAlignUp(offset, kArenaAlign, "region plan");
    if (!start)
      return start.error();
    plan.offsets.push_back(*start);
    auto end = checkedAdd(*start, size, "region plan");
    if (!end)
      return end.error();
    offset = *end;
  }
  auto total = checkedAlignUp(offset, kArenaAlign, "region plan");
  if (!total)
    return total.error();
  plan.total = *total;
  return plan;
}

Result<PlaneSplit>
planFieldPlanes(const std::vector<StateField> &fields,
                const std::vector<int64_t> &planeRowBytes,
                const std::vector<std::vector<bool>> *allowed) {
  const int64_t P = int64_t(planeRowBytes.size());
  if (P == 0)
    return Error::invalid("a row space needs at least one plane");
  for (int64_t w : planeRowBytes)
    if (w < 1)
      return Error::invalid("plane row bytes must be >= 1, got " +
                            std::to_string(w));
  const int64_t limit = 65536;
  int64_t count = 1;
  for (size_t k = 0; k < fields.size(); ++k) {
    if (count > limit / P + 1) { // keep the product from overflowing
      count = limit + 1;
      break;
    }
    count *= P;
  }
  if (count > limit) {
    // Report the true count where it is representable.
    std::string n;
    if (fields.size() < 63 && P == 2)
      n = std::to_string(int64_t(1) << fields.size());
    else {
      long double c = std::pow((long double)P, (long double)fields.size());
      n = c < 9e18L ? std::to_string((int64_t)c) : std::string("more than 2^63");
    }
    return Error::invalid("refusing to enumerate " + n + " assignments of " +
                          std::to_string(fields.size()) + " fields over " +
                          std::to_string(P) + " planes");
  }
  PlaneSplit best;
  best.rows = -1;
  std::vector<std::vector<size_t>> groups(P);
  std::vector<StateField> groupFields;
  for (int64_t code = 0; code < count; ++code) {
    for (auto &g : groups)
      g.clear();
    int64_t c = code;
    bool ok = true;
    for (size_t k = 0; k < fields.size(); ++k) {
      if (allowed && !(*allowed)[k][c % P])
        ok = false;
      groups[c % P].push_back(k);
      c /= P;
    }
    if (!ok)
      continue;
    int64_t rows = 0;
    for (int64_t p = 0; p < P; ++p) {
      groupFields.clear();
      for (size_t k : groups[p])
        groupFields.push_back(fields[k]);
      auto bytes = entryBytesFor(groupFields);
      if (!bytes)
        return bytes.error();
      int64_t r = ceilDiv(*bytes, planeRowBytes[p]);
      if (r > rows)
        rows = r;
    }
    if (best.rows < 0 || rows < best.rows) {
      best.rows = rows;
      best.groups = groups;
    }
  }
  if (best.rows < 0)
    return Error::invalid("no assignment of fields to planes satisfies every "
                          "field's plane constraint");
  return best;
}

Result<StateArenaLayout>
StateArenaLayout::create(std::vector<StateField> fields, int64_t entries,
                         std::optional<int64_t> slotStride,
                         std::optional<int64_t> liveEntries,
                         int64_t bufOffsetBytes,
                         std::optional<int64_t> bufBytes) {
  if (fields.empty())
    return Error::invalid("a state arena needs at least one field");
  for (size_t i = 0; i < fields.size(); ++i)
    for (size_t j = i + 1; j < fields.size(); ++j)
      if (fields[i].name == fields[j].name) {
        std::string list = "[";
        for (size_t k = 0; k < fields.size(); ++k)
          list += (k ? ", '" : "'") + fields[k].name + "'";
        return Error::invalid("duplicate field names: " + list + "]");
      }
  if (entries < 0)
    return Error::invalid("entries must be >= 0, got " +
                          std::to_string(entries));
  StateArenaLayout a;
  auto ext = fieldExtents(fields);
  if (!ext)
    return ext.error();
  auto eb = entryBytesFor(fields);
  if (!eb)
    return eb.error();
  a.ext = ext.take();
  a.entryB = *eb;
  for (const StateField &f : fields)
    if (f.align > a.align)
      a.align = f.align;
  a.stride = slotStride.value_or(a.entryB);
  if (a.stride < a.entryB)
    return Error::invalid("slot stride " + std::to_string(a.stride) +
                          " is under the " + std::to_string(a.entryB) +
                          " an entry takes");
  if (a.stride % a.align != 0)
    return Error::invalid(
        "slot stride " + std::to_string(a.stride) + " must be a multiple of " +
        std::to_string(a.align) +
        ", or entries past the first fall off the boundary their field views "
        "retype from");
  a.n = entries;
  a.live = liveEntries.value_or(entries);
  if (a.live < 0 || a.live > entries)
    return Error::invalid("live_entries " + std::to_string(a.live) +
                          " outside 0.." + std::to_string(entries));
  if (bufOffsetBytes < 0 || bufOffsetBytes % a.align != 0)
    return Error::invalid(
        "buf must start on a " + std::to_string(a.align) +
        "B boundary, got storage offset " + std::to_string(bufOffsetBytes) +
        ": field views retype the buffer, which needs the offset to divide "
        "every itemsize");
  if (entries > 0) {
    auto body = checkedMul(entries - 1, a.stride, "state arena bytes");
    if (!body)
      return body.error();
    auto total = checkedAdd(*body, a.entryB, "state arena bytes");
    if (!total)
      return total.error();
    a.total = *total;
  }
  if (bufBytes && *bufBytes < a.total)
    return Error::invalid("buf of " + std::to_string(*bufBytes) +
                          " bytes is under the " + std::to_string(a.total) +
                          " the arena takes");
  a.bufOffset = bufOffsetBytes;
  a.flds = std::move(fields);
  return a;
}

Result<int64_t> StateArenaLayout::fieldOffset(const std::string &name) const {
  for (const FieldExtent &e : ext)
    if (e.name == name)
      return e.begin;
  return Error{ErrorKind::Lookup, "no state field named '" + name + "'"};
}

Result<FieldView> StateArenaLayout::view(const std::string &name) const {
  for (size_t i = 0; i < flds.size(); ++i) {
    const StateField &f = flds[i];
    if (f.name != name)
      continue;
    int64_t item = dtypeSize(f.dtype);
    FieldView v;
    v.dtype = f.dtype;
    v.shape = {f.layers, n};
    v.shape.insert(v.shape.end(), f.shape.begin(), f.shape.end());
    std::vector<int64_t> inner(f.shape.size());
    int64_t s = 1;
    for (size_t d = f.shape.size(); d-- > 0;) {
      inner[d] = s;
      s *= f.shape[d];
    }
    v.strideElems = {f.perLayerNumel(), stride / item};
    v.strideElems.insert(v.strideElems.end(), inner.begin(), inner.end());
    // The buffer's own offset counts: forgetting it wrote through the front
    // of the host allocation in the reference.
    v.storageOffsetElems = (bufOffset + ext[i].begin) / item;
    return v;
  }
  return Error{ErrorKind::Lookup, "no state field named '" + name + "'"};
}

void StateArenaLayout::fillLive(uint8_t *arenaBase) const {
  for (size_t i = 0; i < flds.size(); ++i) {
    const StateField &f = flds[i];
    int64_t item = dtypeSize(f.dtype);
    uint8_t pattern[8] = {0};
    float f32 = float(f.fill);
    switch (f.dtype) {
    case DType::F64:
      std::memcpy(pattern, &f.fill, 8);
      break;
    case DType::F32:
      std::memcpy(pattern, &f32, 4);
      break;
    case DType::BF16: {
      uint16_t h = uint16_t(floatBits(f32) >> 16);
      std::memcpy(pattern, &h, 2);
      break;
    }
    case DType::F16: {
      uint16_t h = toHalf(f32);
      std::memcpy(pattern, &h, 2);
      break;
    }
    case DType::FP8E4M3:
    case DType::FP8E5M2:
      break; // only 0 is accepted
    case DType::I64: {
      int64_t v = int64_t(f.fill);
      std::memcpy(pattern, &v, 8);
      break;
    }
    case DType::I32: {
      int32_t v = int32_t(f.fill);
      std::memcpy(pattern, &v, 4);
      break;
    }
    case DType::I8:
    case DType::U8:
      pattern[0] = uint8_t(int(f.fill));
      break;
    }
    int64_t bytes = f.bytesPerEntry();
    for (int64_t e = n - live; e < n; ++e) {
      uint8_t *p = arenaBase + e * stride + ext[i].begin;
      for (int64_t b = 0; b < bytes; b += item)
        std::memcpy(p + b, pattern, item);
    }
  }
}

} // namespace poolrt
