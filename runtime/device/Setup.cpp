//===- Setup.cpp - Runtime objects configured from an artifact ------------===//

#include "poolrt/Setup.h"

#include "poolrt/Kernels.h"

#include <nlohmann/json.hpp>

namespace poolrt {

namespace {

Error bad(const std::string &what) {
  return Error::invalid("artifact manifest: " + what);
}

/// An integer at `key` of `obj`, or nullopt when absent, null or not an
/// integer.
std::optional<int64_t> integer(const nlohmann::json &obj, const char *key) {
  if (!obj.is_object())
    return std::nullopt;
  auto it = obj.find(key);
  if (it == obj.end() || !it->is_number_integer())
    return std::nullopt;
  return it->get<int64_t>();
}

} // namespace

static Result<CacheManagerConfig> configFrom(const Artifact &artifact,
                                             const CachePolicy &policy) {
  const ArtifactSection *manifest = artifact.find("manifest");
  if (!manifest)
    return bad("no manifest section");
  nlohmann::json m = nlohmann::json::parse(manifest->data, nullptr, false);
  if (m.is_discarded() || !m.is_object() || !m.contains("layout"))
    return bad("not a JSON object with a layout");
  const nlohmann::json &layout = m["layout"];
  const nlohmann::json geometry = layout.value("geometry", nlohmann::json());
  auto blockSize = integer(geometry, "block_size");
  auto hashBlock = integer(geometry, "hash_block_size");
  if (!blockSize || *blockSize < 1)
    return bad("layout.geometry.block_size is missing or not positive");
  if (geometry.contains("hash_block_size") && !hashBlock)
    return bad("layout.geometry.hash_block_size is not an integer");
  if (hashBlock && *hashBlock != *blockSize)
    return bad("layout.geometry.hash_block_size " + std::to_string(*hashBlock) +
               " differs from block_size " + std::to_string(*blockSize) +
               " (decode-context parallelism > 1 is not supported)");

  CacheManagerConfig c;
  c.blockSize = *blockSize;
  c.checkpointIntervalTokens = policy.checkpointIntervalTokens;
  c.prefixCaching = policy.prefixCaching;
  const nlohmann::json *page = nullptr, *state = nullptr;
  const nlohmann::json classes = layout.value("entry_classes", nlohmann::json());
  if (!classes.is_array())
    return bad("layout.entry_classes is not a list");
  for (const nlohmann::json &cls : classes) {
    std::string pool = cls.value("pool", "");
    std::string name = cls.value("name", "?");
    if (cls.contains("transfer") && !cls["transfer"].is_null() &&
        !cls["transfer"].is_object())
      return bad("class '" + name + "': transfer is neither an object nor null");
    if (pool == "page") {
      if (page)
        return bad("more than one PAGE class ('" + name + "')");
      page = &cls;
    } else if (pool == "state" && cls.contains("transfer") &&
               cls["transfer"].is_object()) {
      if (state)
        return bad("more than one STATE class with a transfer ('" + name + "')");
      state = &cls;
    }
  }
  if (!page)
    return bad("no PAGE class");
  auto blocks = integer(*page, "entries");
  auto pageBytes = integer(*page, "entry_bytes");
  if (!blocks || !pageBytes)
    return bad("PAGE class: entries or entry_bytes missing");
  c.numBlocks = *blocks;

  if (state) {
    auto entries = integer(*state, "entries");
    auto perReq = integer(*state, "entries_per_req");
    auto slotBytes = integer(*state, "entry_bytes");
    if (!entries || !slotBytes)
      return bad("STATE class: entries or entry_bytes missing");
    c.numGroups = *entries / std::max<int64_t>(1, perReq.value_or(1));
    const nlohmann::json &t = (*state)["transfer"];
    std::string kind = t.value("kind", "");
    if (kind == "fork") {
      auto tokens = integer(t, "tokens");
      if (!tokens)
        return bad("STATE transfer fork without tokens");
      auto tr = StateTransfer::fork(*tokens);
      if (!tr.ok())
        return tr.error();
      c.transfer = *tr;
    } else if (kind == "copy") {
      std::string layoutId = t.value("layout_id", "");
      auto ks = KernelSet::fromArtifact(artifact);
      if (!ks.ok())
        return ks.error();
      const KernelInfo *image = ks->byKind("image_gather");
      int64_t imageBytes = image ? image->itemBytes : *slotBytes;
      auto spec = PagedStateCheckpointSpec::create(*pageBytes, *slotBytes,
                                                   layoutId, imageBytes);
      if (!spec.ok())
        return spec.error();
      c.pagedCheckpoints = *spec; // the groups are plain slots
    } else if (kind != "none") {
      return bad("STATE transfer kind '" + kind + "' is unknown");
    }
  }

  if (layout.contains("row_space") && !layout["row_space"].is_null()) {
    const nlohmann::json &rs = layout["row_space"];
    if (!rs.is_object())
      return bad("layout.row_space is neither an object nor null");
    if (state && integer(*state, "entries_per_req").value_or(1) > 1)
      return bad("a row-space STATE class with more than one slot per request "
                 "is not supported");
    PoolBoundaryGeometry g;
    auto env = integer(rs, "envelope_rows"), slot = integer(rs, "slot_rows"),
         plane = integer(rs, "plane_rows"), pos = integer(rs, "slot_positions");
    if (!env || !slot || !plane || !pos)
      return bad("row_space: envelope_rows, slot_rows, plane_rows or "
                 "slot_positions missing");
    g.envelopeRows = *env;
    g.slotRows = *slot;
    g.planeRows = *plane;
    g.slotPositions = *pos;
    g.maxBlocks = c.numBlocks; // the rider regions hold this many
    c.boundary = g;
  }
  return c;
}

Result<CacheManagerConfig> cacheManagerConfig(const Artifact &artifact,
                                              const CachePolicy &policy) {
  // nlohmann::json throws on a key of the wrong type (a string where a
  // number was expected); a wrong manifest is an error value here, never an
  // escaping exception.
  try {
    return configFrom(artifact, policy);
  } catch (const std::exception &e) {
    return bad(e.what());
  }
}

} // namespace poolrt
