//===- poolrt_py.cpp - The Python module `poolrt` --------------------------===//
//
// A pybind11 layer over libpoolrt: artifacts, backends and arenas with
// DLPack views (device_py.cpp), the block pool, the state-group pool, the
// cache manager and its admission, the serving engine (serve_py.cpp).
// Errors become poolrt's typed exceptions (exceptions.cpp), each also the
// builtin it used to be: InvalidArgument is a ValueError, InvalidId a
// KeyError, StateError and the rest RuntimeErrors. Nothing here re-derives
// a count: sizes come from the artifact.
//
//===----------------------------------------------------------------------===//

#include "poolrt/Artifact.h"
#include "poolrt/BlockHash.h"
#include "poolrt/BlockPool.h"
#include "poolrt/CacheManager.h"
#include "poolrt/Device.h"
#include "poolrt/Kernels.h"
#include "poolrt/Setup.h"
#include "poolrt/StateGroupPool.h"
#include "poolrt/StateTransfer.h"

#include "PyCommon.h"

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <atomic>

namespace py = pybind11;
using namespace poolrt;
using namespace poolrt::py_common;

namespace {

/// read_artifact's answer: its fields as attributes (and, as before, as
/// keys), printed in one line instead of every section's bytes.
struct ArtifactInfo {
  py::dict d;
};

void bindArtifactInfo(py::module_ &m) {
  py::class_<ArtifactInfo>(m, "ArtifactInfo",
                           "A .poolpack read and verified: model, fingerprints, kernels, sections")
      .def("__getitem__", [](const ArtifactInfo &a, const std::string &k) -> py::object {
        if (!a.d.contains(k))
          throw py::key_error(k);
        return a.d[py::str(k)];
      })
      .def("keys", [](const ArtifactInfo &a) { return a.d.attr("keys")(); },
           "The summary's keys (version, sections, model, fingerprint, ...)")
      .def("__contains__", [](const ArtifactInfo &a, const std::string &k) { return a.d.contains(k); })
      .def("__getattr__", [](const ArtifactInfo &a, const std::string &k) -> py::object {
        if (!a.d.contains(k))
          throw py::attribute_error("ArtifactInfo has no attribute '" + k + "'");
        return a.d[py::str(k)];
      })
      .def("__repr__", [](const ArtifactInfo &a) {
        return "<poolrt.ArtifactInfo " + py::str(a.d["model"]).cast<std::string>() +
               ", fingerprint " + py::str(a.d["fingerprint"]).cast<std::string>() + ", " +
               std::to_string(py::len(a.d["kernels"])) + " kernels, " +
               std::to_string(py::len(a.d["sections"])) + " sections, arena " +
               py::str(a.d["allocation_bytes"]).cast<std::string>() + " bytes>";
      });
}

/// One generated kernel as the manifest describes it: what its ids name,
/// and the byte segments it moves (offsets from the arena's base; a side
/// whose id is -1 is the staging buffer, addressed by the item index).
py::dict kernelDict(const KernelInfo &k) {
  py::list tuple, segments;
  for (const KernelIdSlot &slot : k.idTuple)
    tuple.append(py::dict(py::arg("entity") = slot.entity, py::arg("id_max") = slot.idMax,
                          py::arg("read") = slot.read, py::arg("written") = slot.written));
  for (const KernelSegment &sg : k.segments)
    segments.append(py::dict(
        py::arg("what") = sg.what, py::arg("bytes") = sg.bytes,
        py::arg("src_off") = sg.srcOff, py::arg("src_stride") = sg.srcStride,
        py::arg("src_id") = sg.srcId, py::arg("dst_off") = sg.dstOff,
        py::arg("dst_stride") = sg.dstStride, py::arg("dst_id") = sg.dstId));
  return py::dict(py::arg("name") = k.name, py::arg("kind") = k.kind,
                  py::arg("entity") = k.entity, py::arg("item_bytes") = k.itemBytes,
                  py::arg("id_max") = k.idMax, py::arg("ids_per_item") = k.idsPerItem,
                  py::arg("id_tuple") = tuple, py::arg("staging_stride") = k.stagingStride,
                  py::arg("segments") = segments);
}

/// The module-level functions: backends, the artifact container, block hashes.
void bindArtifactFunctions(py::module_ &m) {
  m.def("probe_backends", [] {
    py::list out;
    for (const BackendInfo &b : probeBackends())
      out.append(py::make_tuple(b.name, b.available, b.detail));
    return out;
  }, "Which device backends this machine has: [(name, available, detail)]");

  m.def("read_artifact", [](const std::string &path) {
    Artifact a = takeArtifact(readArtifactFile(path));
    KernelSet ks = takeArtifact(KernelSet::fromArtifact(a));
    SolvedLayout layout = takeArtifact(readSolvedLayout(a));
    py::dict d;
    py::dict sections;
    for (const ArtifactSection &s : a.sections)
      sections[py::str(s.name)] = py::bytes(s.data);
    d["version"] = a.version;
    d["sections"] = sections;
    d["model"] = ks.model();
    d["fingerprint"] = ks.fingerprint();
    d["allocation_bytes"] = ks.allocationBytes();
    py::list kernels;
    for (const KernelInfo &k : ks.kernels())
      kernels.append(kernelDict(k));
    d["kernels"] = kernels;
    d["layout_fingerprint"] = layoutFingerprintText(layout.layoutFingerprint);
    return ArtifactInfo{d};
  }, py::arg("path"),
     "Read and verify a .poolpack (checksum, version, manifest) and summarize it; "
     "CorruptArtifact when it does not read");

  m.def("write_artifact", [](const std::string &path, py::list sections) {
    Artifact a;
    for (py::handle item : sections) {
      auto pair = item.cast<std::pair<std::string, py::bytes>>();
      a.sections.push_back({pair.first, std::string(pair.second)});
    }
    check(writeArtifactFile(path, a));
  }, py::arg("path"), py::arg("sections"),
     "Write a .poolpack container of [(name, bytes)] sections atomically "
     "(checksummed; the contents are not checked: read_artifact does that)");

  m.def("hash_block", [](py::object parent, const std::vector<int64_t> &tokens,
                         const std::string &scheme) {
    std::optional<BlockHash> p;
    if (!parent.is_none())
      p = parent.cast<BlockHash>();
    return hashBlock(schemeArg(scheme), p, tokens.data(), tokens.size());
  }, py::arg("parent"), py::arg("tokens"), py::arg("scheme") = "xxh3",
     "The chained hash of one hash block (parent None for the first) under a "
     "scheme: 'xxh3' (the default: XXH3-64 of the ids as int64 LE seeded with "
     "the parent) or 'xxh64' (the reference's chain). Raises InvalidArgument "
     "for another scheme.");
}

void bindAdmission(py::module_ &m) {
  py::class_<Admission>(m, "Admission",
                        "CacheManager.admission's answer: can the request be admitted "
                        "now, its prefix hit in tokens and blocks, and why not")
      .def_readonly("admissible", &Admission::admissible,
                    "Whether allocate() can take the request now (also bool(admission))")
      .def_readonly("hit_tokens", &Admission::hitTokens, "tokens served from the cache")
      .def_readonly("hit_blocks", &Admission::hitBlocks, "blocks served from the cache")
      .def_readonly("indexed_blocks", &Admission::indexedBlocks,
                    "blocks of the prefix in the index, before the checkpoint gate")
      .def_readonly("needed_blocks", &Admission::neededBlocks, "blocks the request needs")
      .def_readonly("reason", &Admission::reason,
                    "refused: 'blocks' or 'state groups'; a hit cut short: "
                    "'checkpoint missing'; else ''")
      .def("__bool__", [](const Admission &a) { return a.admissible; })
      .def("__repr__", [](const Admission &a) {
        std::string s = a.admissible ? "<poolrt.Admission admissible, hit " +
                                           std::to_string(a.hitTokens) + " tokens (" +
                                           std::to_string(a.hitBlocks) + " blocks)"
                                     : "<poolrt.Admission refused";
        if (!a.reason.empty())
          s += ", reason '" + a.reason + "'";
        return s + ">";
      });
}

void bindStateTransfer(py::module_ &m) {
  py::class_<StateTransfer>(m, "StateTransfer",
                            "How a STATE checkpoint moves to the request that resumes "
                            "it: none (plain slots, no resume), fork(n) (the checkpoint "
                            "stays in its group, the resumer forks from it; n tokens of "
                            "room) or copy(layout) (an image copied into PAGE units)")
      .def_static("none", &StateTransfer::none, "No transfer: state cannot be resumed")
      .def_static("fork", [](int64_t n) { return take(StateTransfer::fork(n)); },
                  py::arg("fork_tokens"),
                  "Fork transfer with fork_tokens (>= 1) tokens of room; InvalidArgument "
                  "otherwise")
      .def_static("copy", [](const std::string &id) { return take(StateTransfer::copy(id)); },
                  py::arg("paged_layout_id"),
                  "Copy transfer into the PAGE layout named paged_layout_id")
      .def_property_readonly("successor_room", &StateTransfer::successorRoom,
                             "tokens a checkpoint needs after it for the resumer's "
                             "first forward (0 unless fork)")
      .def("__repr__", &StateTransfer::toWire);
}

void bindBlockPool(py::module_ &m) {
  py::class_<BlockPool>(m, "BlockPool",
                        "The PAGE block pool alone (the CacheManager owns one): a free "
                        "list, reference counts and the hash index of published "
                        "blocks, evicted least recently used first")
      .def(py::init([](int64_t n) { return take(BlockPool::create(n)); }), py::arg("num_blocks"),
           "A pool of num_blocks blocks, all free")
      .def_property_readonly("num_blocks", &BlockPool::numBlocks, "blocks in the pool")
      .def_property_readonly("num_free", &BlockPool::numFree,
                             "blocks no one holds (cached ones included)")
      .def_property_readonly("num_used", &BlockPool::numUsed, "blocks someone holds")
      .def_property_readonly("num_indexed", &BlockPool::numIndexed,
                             "blocks published in the hash index")
      .def("lookup", [](const BlockPool &p, BlockHash h) { return p.lookup(h).value; },
           py::arg("hash"), "The block published under hash, or -1")
      .def("pop", [](BlockPool &p) { return take(p.pop()).value; },
           "The next free block (vacant lowest id first, else the least recently "
           "freed cached one), off the free list but not yet used: follow with "
           "allocate or claim. OutOfBlocks when none is free")
      .def("allocate", [](BlockPool &p, int32_t b) { check(p.allocate(BlockId(b))); },
           py::arg("block"), "Take a free or popped block for fresh content, evicting "
           "what it held")
      .def("claim", [](BlockPool &p, int32_t b) { check(p.claim(BlockId(b))); },
           py::arg("block"), "Take a share of a block for the content it holds (a "
           "prefix hit): a held block gains a reference, a free one becomes held")
      .def("free", [](BlockPool &p, int32_t b) { check(p.free(BlockId(b))); },
           py::arg("block"), "Drop one reference; at 0 the block is cached (still "
           "indexed) or vacant. StateError when none is held")
      .def("publish", [](BlockPool &p, int32_t b, BlockHash h, std::vector<int32_t> tokens) {
        check(p.publish(BlockId(b), h, tokens.data(), tokens.size()));
      }, py::arg("block"), py::arg("hash"), py::arg("tokens") = std::vector<int32_t>{},
         "Put a held block in the hash index under hash (its tokens for the check "
         "against collisions)")
      .def("ref_count", [](const BlockPool &p, int32_t b) { return take(p.refCount(BlockId(b))); },
           py::arg("block"), "References held; InvalidId for an id the pool never had")
      .def("invariants_hold", &BlockPool::invariantsHold,
           "Whether the free list, counts and index agree (tests)");
}

/// Needs StateTransfer bound first: its default argument is converted here.
void bindStateGroupPool(py::module_ &m) {
  py::class_<StateGroupPool>(m, "StateGroupPool",
                             "The STATE group pool alone (the CacheManager owns one): "
                             "free groups, groups of live requests, and checkpointed "
                             "groups indexed by the hash of their last block")
      .def(py::init([](int64_t n, StateTransfer t, int64_t hbs) {
             return take(StateGroupPool::create(n, t, hbs));
           }),
           py::arg("num_groups"), py::arg("transfer") = StateTransfer::none(),
           py::arg("hash_block_size") = 1,
           "A pool of num_groups groups, all free; hash_block_size in tokens")
      .def_property_readonly("num_free", &StateGroupPool::numFree,
                             "groups no live request holds (kept checkpoints included)")
      .def("pop", [](StateGroupPool &p) { return take(p.pop()).value; },
           "Hand out a group: the lowest vacant one, else the least recently used "
           "checkpoint (counted evicted). OutOfStateGroups when none is free")
      .def("claim", [](StateGroupPool &p, int32_t g) { check(p.claim(GroupId(g))); },
           py::arg("group"), "Take one specific free group, content and hash kept (a "
           "resume)")
      .def("release", [](StateGroupPool &p, int32_t g) { check(p.release(GroupId(g))); },
           py::arg("group"), "Hand a held, unpinned group back: an indexed one stays "
           "a checkpoint, otherwise it becomes vacant")
      .def("index", [](StateGroupPool &p, BlockHash h, int32_t g) { check(p.index(h, GroupId(g))); },
           py::arg("hash"), py::arg("group"),
           "Keep group as the checkpoint of the block hashed hash")
      .def("lookup_group", [](const StateGroupPool &p, BlockHash h) { return p.lookupGroup(h).value; },
           py::arg("hash"), "The checkpoint group indexed under hash, or -1")
      .def("release_pins", &StateGroupPool::releasePins,
           "Top of every scheduling pass: release the groups the previous batch "
           "pinned");
}

/// Ids Python hands out: unique in the process, never 0.
int64_t nextRequestId() {
  static std::atomic<int64_t> next{1};
  return next++;
}

std::string requestRepr(const Request &r) {
  std::string s = "<poolrt.Request id=" + std::to_string(r.id) + ", " +
                  std::to_string(r.numTokens()) + " tokens, " +
                  std::to_string(r.numCachedTokens) + " cached";
  if (r.allocated)
    s += ", " + std::to_string(r.blockTable.size()) + " blocks";
  if (r.state.group.valid())
    s += ", group " + std::to_string(r.state.group.value);
  return s + (r.allocated ? ", allocated>" : ">");
}

void bindRequest(py::module_ &m) {
  py::class_<Request>(m, "Request",
                      "One request: its tokens (prompt, then generated), its block "
                      "table once allocated, and its state group. Every request has "
                      "a unique id (given, or handed out here).")
      .def(py::init([](py::object prompt, py::object id) {
             Request r;
             r.tokens = tokenList(prompt, "Request: prompt");
             r.numPromptTokens = int64_t(r.tokens.size());
             r.id = id.is_none() ? nextRequestId() : castArg<int64_t>(id, "Request: id", "an int");
             return r;
           }),
           py::arg("prompt"), py::arg("id") = py::none(),
           "prompt: list of int token ids; id: unique among live requests (None: "
           "the next id of this process)")
      .def_readonly("id", &Request::id, "The id checkpoint intents are kept by")
      .def("__repr__", &requestRepr)
      .def("__len__", [](const Request &r) { return r.numTokens(); }, "tokens (prompt + generated)")
      .def("append_tokens", [](Request &r, py::object tokens) {
        for (int64_t t : tokenList(tokens, "append_tokens: tokens"))
          r.tokens.push_back(t);
      }, py::arg("tokens"), "Append generated token ids (after a forward)")
      .def_property_readonly("tokens", [](const Request &r) { return r.tokens; },
                             "Every token id: prompt, then generated")
      .def_property("num_cached_tokens",
                    [](const Request &r) { return r.numCachedTokens; },
                    [](Request &r, int64_t n) { check(r.setNumCachedTokens(n)); },
                    "KV computed, in tokens; ValueError outside [0, len(tokens)]")
      .def_property(
          "cache_salt", [](const Request &r) { return r.cacheSalt; },
          [](Request &r, std::string salt) { check(r.setCacheSalt(std::move(salt))); },
          "The tenant's cache salt (vLLM's cache_salt): requests hit only blocks "
          "published under the same salt. Set before admission; '' for none.")
      .def_readonly("allocated", &Request::allocated,
                    "Whether the request holds its blocks (between allocate and deallocate)")
      .def_readonly("checkpoint_demand_pos", &Request::checkpointDemandPos,
                    "The token position whose checkpoint admission asked the ladder to "
                    "keep (finalize_prefill_chunk cuts a chunk there); 0 for none")
      .def_property_readonly("group", [](const Request &r) { return r.state.group.value; },
                             "The request's own state group (STATE slot); -1 for none")
      .def_property_readonly("fork_source", [](const Request &r) { return r.state.forkSource.value; },
                             "The group its next forward reads its state from (a fork "
                             "checkpoint it resumes, or its previous group after a "
                             "checkpoint fork); -1 for none. The forward (here: "
                             "arena.launch('group_copy', [fork_source, group])) moves it.")
      .def_property(
          "stateful", [](const Request &r) { return r.state.hasPerReqCache; },
          [](Request &r, bool v) {
            if (r.allocated)
              raise(Error{ErrorKind::State, "stateful: set before the request is allocated"});
            r.state.hasPerReqCache = v;
          },
          "Whether the request holds per-request state (a STATE group); True by "
          "default. Set before admission; a stateless request on a stateful model "
          "takes no group (the reference's has_per_req_cache)")
      .def_property_readonly("block_table", [](const Request &r) {
        std::vector<int32_t> ids;
        for (BlockId b : r.blockTable)
          ids.push_back(b.value);
        return ids;
      }, "The PAGE block ids holding its KV, in token order (block i holds tokens "
         "[i * block_size, (i + 1) * block_size)); a list to iterate or index")
      .def_property_readonly("window_tables", [](const Request &r) {
        std::vector<std::vector<int32_t>> out;
        for (const std::vector<BlockId> &t : r.windowTables) {
          out.emplace_back();
          for (BlockId b : t)
            out.back().push_back(b.valid() ? b.value : -1);
        }
        return out;
      }, "One block table per window class (sliding / chunked attention, "
         "specs/window-classes.md), indexed like block_table; -1 where a block "
         "was released (it left the window) or never needed (before a hit's "
         "window). Empty for a model without window classes");
}

/// CacheManager(boundary=...): the row-space geometry from a dict, each key
/// required and an int, named in the error when it is not.
PoolBoundaryGeometry boundaryArg(py::object boundary) {
  if (!py::isinstance<py::dict>(boundary))
    throw py::type_error("CacheManager: boundary must be a dict, got " +
                         typeName(boundary));
  py::dict b = boundary.cast<py::dict>();
  auto field = [&](const char *key) {
    if (!b.contains(key))
      throw py::value_error(std::string("CacheManager: boundary "
                                        "needs the key '") + key + "'");
    return castArg<int64_t>(b[key], std::string("CacheManager: boundary['") +
                                        key + "']", "an int");
  };
  PoolBoundaryGeometry g;
  g.envelopeRows = field("envelope_rows");
  g.slotRows = field("slot_rows");
  g.planeRows = field("plane_rows");
  g.slotPositions = field("slot_positions");
  g.maxBlocks = field("max_blocks");
  return g;
}

std::unique_ptr<CacheManager>
makeCacheManager(int64_t blockSize, int64_t numBlocks, int64_t numGroups,
                 StateTransfer transfer, int64_t interval, bool prefixCaching,
                 py::object boundary, const std::string &scheme,
                 const std::vector<std::string> &checkpointAt) {
  CacheManagerConfig c;
  if (!boundary.is_none())
    c.boundary = boundaryArg(boundary);
  c.blockSize = blockSize;
  c.numBlocks = numBlocks;
  c.numGroups = numGroups;
  c.transfer = transfer;
  c.policy.checkpointIntervalTokens = interval;
  c.policy.prefixCaching = prefixCaching;
  c.policy.hashScheme = schemeArg(scheme);
  placementArgs(c.policy, checkpointAt, "groups");
  return take(CacheManager::create(c));
}

py::dict boundaryMoveDict(const BoundaryMove &mv) {
  py::dict d;
  d["num_blocks"] = mv.numBlocks;
  d["num_groups"] = mv.numGroups;
  d["reached_target"] = mv.reachedTarget;
  d["stop_reason"] = mv.stopReason;
  d["block_copy_ids"] = mv.blockCopyIds;
  d["slot_copy_ids"] = mv.slotCopyIds;
  d["units_moved"] = mv.unitsMoved;
  d["table_entries_repointed"] = mv.tableEntriesRepointed;
  return d;
}

SlotIndex slotOf(const CheckpointStoreOp &op) { return op.srcSlot; }
SlotIndex slotOf(const CheckpointRestoreOp &op) { return op.dstSlot; }

py::dict funnelDict(const CacheFunnel &f) {
  py::dict d;
  CacheFunnel::describe(
      [&](const CounterKey &k, auto get) { d[k.key] = get(f); });
  return d;
}

py::dict statsDict(const CacheStats &s) {
  py::dict d;
  CacheStats::describe([&](const CounterKey &k, auto get) { d[k.key] = get(s); });
  s.describeRatios([&](const char *key, double v) { d[key] = v; });
  return d;
}

/// Counters of several managers (one per rank) summed, the rates derived
/// once from the sums (spec 10.4: counters merge by summation).
py::dict mergedCounters(py::handle managers) {
  if (!py::isinstance<py::list>(managers) && !py::isinstance<py::tuple>(managers))
    throw py::type_error("merged_counters: managers must be a list of "
                         "poolrt.CacheManager, got " + typeName(managers));
  CacheStats stats;
  CacheFunnel funnel;
  size_t i = 0;
  for (py::handle h : managers) {
    if (!py::isinstance<CacheManager>(h))
      throw py::type_error("merged_counters: managers[" + std::to_string(i) +
                           "] must be a poolrt.CacheManager, got " + typeName(h));
    const CacheManager &cm = h.cast<const CacheManager &>();
    stats += cm.stats();
    funnel += cm.funnel();
    ++i;
  }
  py::dict d;
  d["ranks"] = i;
  d["stats"] = statsDict(stats);
  d["funnel"] = funnelDict(funnel);
  return d;
}

/// CacheManager(...) from explicit counts and CacheManager.from_artifact.
/// Needs StateTransfer bound first: the constructor's default argument is
/// converted here.
void addCacheManagerConstructors(py::class_<CacheManager> &cls) {
  cls
      .def(py::init(&makeCacheManager),
           py::arg("block_size"), py::arg("num_blocks"), py::arg("num_groups") = 0,
           py::arg("transfer") = StateTransfer::none(), py::arg("interval") = kDefaultCheckpointInterval,
           py::arg("prefix_caching") = true, py::arg("boundary") = py::none(),
           py::arg("hash_scheme") = "xxh3", py::arg("checkpoint_at") = kDefaultPlacement,
           "A cache manager from explicit counts (tests, experiments; "
           "from_artifact reads them from a compiled model).\n\n"
           "Args:\n"
           "    block_size: tokens per PAGE block.\n"
           "    num_blocks: PAGE blocks in the pool.\n"
           "    num_groups: STATE groups (0: a stateless model).\n"
           "    transfer: how a state checkpoint moves: StateTransfer.none(), "
           ".fork(n) or .copy(layout_id).\n"
           "    interval: the checkpoint ladder's interval in tokens (0: off).\n"
           "    prefix_caching: False turns the hash index off.\n"
           "    boundary: {envelope_rows, slot_rows, plane_rows, slot_positions, "
           "max_blocks} of a row-space artifact, to allow move_boundary.\n"
           "    hash_scheme: the prefix hashes' chain, 'xxh3' or 'xxh64' (the "
           "reference's; see hash_block).\n"
           "    checkpoint_at: where checkpoints are kept besides the ladder "
           "(specs/checkpoint-placement.md): any of 'prompt-end', 'branch', "
           "'response-end'; ['ladder']: the reference's ladder and demand rungs.\n\n"
           "Raises:\n"
           "    InvalidArgument: a count out of range, a negative interval, an "
           "unknown hash scheme or placement.")
      .def_static("from_artifact", [](const std::string &path, int64_t interval,
                                      bool prefixCaching, const std::string &scheme,
                                      const std::vector<std::string> &checkpointAt,
                                      const std::string &forkCheckpoints) {
        HashScheme hs = schemeArg(scheme);
        CachePolicy policy{interval, prefixCaching, hs};
        placementArgs(policy, checkpointAt, forkCheckpoints);
        Artifact a = takeArtifact(readArtifactFile(path));
        CacheManagerConfig c = take(cacheManagerConfig(a, policy));
        return take(CacheManager::create(c));
      }, py::arg("path"), py::arg("interval") = kDefaultCheckpointInterval, py::arg("prefix_caching") = true,
         py::arg("hash_scheme") = "xxh3", py::arg("checkpoint_at") = kDefaultPlacement,
         py::arg("fork_checkpoints") = "page-units",
         "A cache manager with every count (blocks, groups, transfer, PAGE-unit "
         "checkpoints, boundary rows) read from a .poolpack.\n\n"
         "Args:\n"
         "    path: the artifact (poolc --targets ... -o model.poolpack).\n"
         "    interval: the checkpoint ladder's interval in tokens, snapped to a "
         "multiple of the block size (0: off).\n"
         "    prefix_caching: False turns the hash index off.\n"
         "    hash_scheme: 'xxh3' or 'xxh64' (see hash_block).\n"
         "    checkpoint_at: where checkpoints are kept besides the ladder: "
         "any of 'prompt-end', 'branch', 'response-end'; ['ladder']: the "
         "reference's placement.\n"
         "    fork_checkpoints: 'page-units' (a fork model's images in the "
         "block pool, when the artifact has image_store kernels) or 'groups' "
         "(a free state group each).\n\n"
         "Raises:\n"
         "    CorruptArtifact: the file does not read or verify.\n"
         "    InvalidArgument: a negative interval, an unknown hash scheme or "
         "placement.");
}

/// CacheManager.move_boundary: re-splitting a row space between PAGE and STATE.
void addCacheManagerBoundaryMove(py::class_<CacheManager> &cls) {
  cls
      .def("move_boundary", [](CacheManager &m, int64_t target, py::list live) {
        std::vector<Request *> ptrs;
        for (size_t i = 0; i < live.size(); ++i)
          ptrs.push_back(&requestArg(live[i], "move_boundary: live[" +
                                                  std::to_string(i) + "]"));
        return boundaryMoveDict(take(m.moveBoundary(target, ptrs)));
      }, py::arg("target_groups"), py::arg("live"),
         "Re-split the rows PAGE blocks and STATE slots share (a row-space model).\n\n"
         "Args:\n"
         "    target_groups: the number of STATE groups wanted.\n"
         "    live: every live request (their block tables and groups are "
         "repointed when their blocks or slots move).\n\n"
         "Returns:\n"
         "    {num_blocks, num_groups, reached_target, stop_reason, block_copy_ids, "
         "slot_copy_ids, units_moved, table_entries_repointed}: the id pairs "
         "(flat, src, dst, src, dst, ...) to run through arena.launch('block_copy') "
         "and ('slot_copy') before the next forward.\n\n"
         "Raises:\n"
         "    InvalidArgument: a target outside [0, slot_positions], a request "
         "listed twice or not live.");
}

/// CacheManager's read-only properties (the pools' sizes, the ladder) and
/// its repr.
void addCacheManagerProperties(py::class_<CacheManager> &cls) {
  cls
      .def_property_readonly("hash_scheme",
                             [](const CacheManager &m) { return std::string(hashSchemeName(m.hashScheme())); },
                             "The prefix hashes' chain: 'xxh3' or 'xxh64'")
      .def_property_readonly("interval", &CacheManager::interval,
                             "The checkpoint ladder's interval in tokens after snapping "
                             "to a multiple of block_size (0: the ladder is off)")
      .def_property_readonly("block_size", &CacheManager::blockSize,
                             "Tokens per PAGE block (and per hash block)")
      .def_property_readonly("num_blocks", [](CacheManager &m) { return m.blocks().numBlocks(); },
                             "PAGE blocks in the pool now (a boundary move changes it)")
      .def_property_readonly("num_free_blocks", [](CacheManager &m) { return m.blocks().numFree(); },
                             "PAGE blocks no request holds (cached ones included: "
                             "they are evicted on demand)")
      .def_property_readonly("num_groups", [](CacheManager &m) -> int64_t {
        return m.groups() ? m.groups()->numGroups() : 0;
      }, "STATE groups (slots) in the pool now; 0 for a stateless model")
      .def_property_readonly("num_free_groups", [](CacheManager &m) -> int64_t {
        return m.groups() ? m.groups()->numFree() : 0;
      }, "STATE groups no live request holds (kept checkpoints included)")
      .def("__repr__", [](CacheManager &m) {
        std::string s = "<poolrt.CacheManager block_size " + std::to_string(m.blockSize()) +
                        ", " + std::to_string(m.blocks().numFree()) + "/" +
                        std::to_string(m.blocks().numBlocks()) + " blocks free";
        if (m.groups())
          s += ", " + std::to_string(m.groups()->numFree()) + "/" +
               std::to_string(m.groups()->numGroups()) + " groups free, transfer " +
               m.groups()->transfer().toWire();
        return s + ", interval " + std::to_string(m.interval()) + ">";
      });
}

/// CacheManager's admission and a request's allocation life cycle:
/// can_allocate, admission, allocate, hash_blocks, deallocate.
void addCacheManagerAdmission(py::class_<CacheManager> &cls) {
  cls
      // Requests through requestArg: a TypeError that names the argument.
      .def("can_allocate", [](CacheManager &m, py::object r) {
        return m.canAllocate(requestArg(r, "can_allocate: request"));
      }, py::arg("request"),
         "Prefix hit in blocks (hash blocks of block_size tokens), or -1: cannot be "
         "admitted now (vLLM's get_computed_blocks and can-allocate in one). "
         "admission() says the same in tokens and blocks, and why. Records the "
         "checkpoint the hit wants (a later request may then find it).")
      .def("admission", [](CacheManager &m, py::object r) {
        return m.admission(requestArg(r, "admission: request"));
      }, py::arg("request"),
         "Whether the request can be admitted now, and its prefix hit.\n\n"
         "Returns:\n"
         "    An Admission (true when admissible) with hit_tokens, hit_blocks, "
         "indexed_blocks (found in the index, before the checkpoint gate), "
         "needed_blocks and reason: 'blocks' or 'state groups' when refused, "
         "'checkpoint missing' when a stateful hit stops short of what the index "
         "holds. Pass it to allocate().")
      .def("allocate", [](CacheManager &m, py::object r, py::object hit) {
        Request &req = requestArg(r, "allocate: request");
        int64_t blocks;
        if (py::isinstance<Admission>(hit)) {
          const Admission &a = hit.cast<const Admission &>();
          if (!a.admissible)
            raise(Error{ErrorKind::State, "allocate: the admission was refused (" +
                                              a.reason + ")"});
          blocks = a.hitBlocks;
        } else {
          blocks = castArg<int64_t>(hit, "allocate: num_cached_blocks",
                                    "an int or a poolrt.Admission");
        }
        check(m.allocate(req, blocks));
      }, py::arg("request"), py::arg("num_cached_blocks"),
         "Take the request's blocks and its state group (vLLM's allocate_slots "
         "for a new request).\n\n"
         "Args:\n"
         "    request: not yet allocated.\n"
         "    num_cached_blocks: its prefix hit in blocks (can_allocate), or the "
         "Admission from admission().\n\n"
         "Raises:\n"
         "    StateError: already allocated, or the Admission was refused.\n"
         "    InvalidId: another live request has its id (checkpoint intents are "
         "kept by id).\n"
         "    OutOfBlocks, OutOfStateGroups: the pools ran dry; nothing is taken.")
      .def("hash_blocks", [](CacheManager &m, py::object r, int64_t n) {
        check(m.hashBlocks(requestArg(r, "hash_blocks: request"), n));
      }, py::arg("request"), py::arg("num_new_tokens"),
         "After a forward over num_new_tokens tokens from num_cached_tokens: "
         "publish the request's newly full blocks in the hash index and keep the "
         "checkpoints due (on a fork model the request moves to a fresh group and "
         "fork_source names the kept one). Then advance num_cached_tokens.\n\n"
         "Raises:\n"
         "    StateError: the request is not allocated.\n"
         "    InvalidArgument: num_new_tokens past the request's tokens.")
      .def("deallocate", [](CacheManager &m, py::object r) {
        check(m.deallocate(requestArg(r, "deallocate: request")));
      }, py::arg("request"),
         "The request finished (or is preempted): give back its blocks (published "
         "ones stay cached until evicted) and its group (kept checkpoints stay "
         "indexed).\n\n"
         "Raises:\n"
         "    StateError: the request is not allocated (freed twice, or never "
         "allocated).");
}

/// CacheManager's per-step protocol past admission: chunking on the checkpoint
/// ladder, the state maintenance ops, the slot kernel ids, decode growth.
/// Requests through requestArg, as in addCacheManagerAdmission.
void addCacheManagerStepMethods(py::class_<CacheManager> &cls) {
  cls
      .def("checkpoint_limit", [](const CacheManager &m, py::object r) {
        return m.checkpointLimit(requestArg(r, "checkpoint_limit: request"));
      }, py::arg("request"),
         "The last ladder rung (in tokens) a prefill chunk of the request may end on "
         "and still leave a fork its room; 0 when none")
      .def("complete_previous_state_batch", &CacheManager::completePreviousStateBatch,
           "Top of every scheduling step: the previous batch's pins drain (the state "
           "groups its forwards read may now be reused, the images its stores wrote "
           "are ready)")
      .def("finalize_prefill_chunk", [](CacheManager &m, py::object r, int64_t start,
                                        int64_t chunk) {
        Request &req = requestArg(r, "finalize_prefill_chunk: request");
        if (start < 0 || chunk < 1 || start + chunk > req.numTokens())
          raise(Error::invalid("finalize_prefill_chunk: tokens [" + std::to_string(start) +
                               ", " + std::to_string(start + chunk) + ") are outside the "
                               "request's " + std::to_string(req.numTokens())));
        return m.finalizePrefillChunk(req, start, chunk);
      }, py::arg("request"), py::arg("start"), py::arg("chunk"),
         "The prefill chunk to forward, in tokens.\n\n"
         "Args:\n"
         "    start: the first token of the chunk (num_cached_tokens).\n"
         "    chunk: the most tokens the scheduler would forward.\n\n"
         "Returns:\n"
         "    The chunk, cut to end on a checkpoint the ladder demands, or widened "
         "for a fork's room.\n\n"
         "Raises:\n"
         "    InvalidArgument: [start, start + chunk) outside the request's tokens.")
      .def("take_state_maintenance_ops", [](CacheManager &m) {
        PageUnitCheckpointStore::CheckpointOps ops = m.takeStateMaintenanceOps();
        // Both kinds of op launch on (the slot's kernel id, its units...).
        auto opList = [&m](const auto &list) {
          py::list out;
          for (const auto &op : list) {
            std::vector<int32_t> ids{m.slotKernelId(GroupId(slotOf(op).value))};
            for (BlockId u : op.unitIds)
              ids.push_back(u.value);
            out.append(py::dict(py::arg("kernel_ids") = ids,
                                py::arg("image_bytes") = op.imageBytes));
          }
          return out;
        };
        py::list stores = opList(ops.stores), restores = opList(ops.restores);
        py::dict d;
        d["stores"] = stores;
        d["restores"] = restores;
        return d;
      }, "At batch construction, before the forward: the checkpoint copies to launch "
         "(a copy-transfer model such as DeepSeek-V4 keeps its state images in PAGE "
         "units).\n\n"
         "Returns:\n"
         "    {'stores': [...], 'restores': [...]}, each op {'kernel_ids': [slot, "
         "unit, ...], 'image_bytes'}: run arena.launch('image_store', kernel_ids) / "
         "('image_restore', kernel_ids). The ops are handed out once.")
      .def("slot_kernel_id", [](const CacheManager &m, py::object r) {
        Request &req = requestArg(r, "slot_kernel_id: request");
        if (!req.state.group.valid())
          raise(Error{ErrorKind::State, "slot_kernel_id: the request holds no state group"});
        return m.slotKernelId(req.state.group);
      }, py::arg("request"),
         "The id the slot kernels take for the request's state (a physical slot in a "
         "row space, the group otherwise)")
      .def("can_append", [](const CacheManager &m, py::object r, int64_t total) {
        return m.canAppend(requestArg(r, "can_append: request"), total);
      }, py::arg("request"), py::arg("total_tokens"),
         "Whether the request's block table can grow to hold total_tokens tokens "
         "(decode, speculative drafts) now")
      .def("append_slots", [](CacheManager &m, py::object r, int64_t total) {
        check(m.appendSlots(requestArg(r, "append_slots: request"), total));
      }, py::arg("request"), py::arg("total_tokens"),
         "Grow the request's block table to hold total_tokens; takes nothing unless "
         "it can take every block (OutOfBlocks)");
}

/// CacheManager's introspection: the prefix hashes, the funnel and the
/// prefix-cache statistics (counters that merge across ranks).
/// Requests through requestArg, as in addCacheManagerAdmission.
void addCacheManagerCounters(py::class_<CacheManager> &cls) {
  cls
      .def("prefix_hashes", [](const CacheManager &m, py::object r, int64_t n) {
        Request &req = requestArg(r, "prefix_hashes: request");
        if (n < 0 || n > req.numTokens() / m.blockSize())
          raise(Error::invalid("prefix_hashes: n must be in [0, " +
                               std::to_string(req.numTokens() / m.blockSize()) +
                               "] (the request's full blocks), got " + std::to_string(n)));
        return m.prefixHashes(req, n);
      }, py::arg("request"), py::arg("n"),
         "The chained hashes of the request's first n full blocks (its cache salt "
         "included), as the index keys them")
      .def("funnel", [](const CacheManager &m) { return funnelDict(m.funnel()); },
           "What became of checkpoint demand: demands_recorded, "
           "demands_declined_no_room, chunks_cut_for_demand, checkpoints_kept / "
           "dropped / evicted / orphaned, blocks_evicted. Counts that merge across "
           "ranks by summation")
      .def("stats", [](const CacheManager &m) { return statsDict(m.stats()); },
           "Prefix-cache statistics over admitted prefills (spec 10.4): requests, "
           "full_tokens, cached_tokens, wanted_tokens, compressed_tokens (tokens), and "
           "the rates hit, compressed_hit, lost_to_checkpoint, lost_unrecoverable "
           "(fractions of full_tokens). The token counters merge across ranks by "
           "summation");
}

/// Needs StateTransfer bound first: its default argument is converted here.
void bindCacheManager(py::module_ &m) {
  m.def("merged_counters", &mergedCounters, py::arg("managers"),
        "The prefix-cache statistics and the funnel of several managers (one per "
        "rank) summed, rates derived from the sums: {ranks, stats, funnel}");
  py::class_<CacheManager> cls(m, "CacheManager", R"doc(The KV-cache and state manager of one rank, shaped like vLLM's KVCacheManager.

It owns the PAGE block pool (KV blocks of block_size tokens, shared by
prefix hits through a hash index) and, for a stateful model, the STATE group
pool (one group per live request, plus kept checkpoints) with its checkpoint
ladder, so that a prefix hit on a stateful model resumes the exact state of
the hit's last token.

Build it from a compiled artifact (every count comes from there)::

    m = poolrt.CacheManager.from_artifact("model.poolpack", interval=1024)

The per-step protocol, each scheduling step:

1. ``complete_previous_state_batch()``: the previous batch's state pins drain.
2. Admission, per waiting request: ``adm = admission(r)``; when ``adm`` is
   true, ``allocate(r, adm)`` takes the hit's blocks, fresh blocks for the
   rest and a state group. ``r.num_cached_tokens = adm.hit_tokens``.
3. Chunking: ``finalize_prefill_chunk(r, start, chunk)`` cuts a chunk to land
   on a checkpoint the ladder demands (or widens it for a fork's room).
4. ``take_state_maintenance_ops()``: the checkpoint copies to launch before
   the forward (``arena.launch('image_store' / 'image_restore', ids)``); on
   a fork model, a request whose ``fork_source`` is set reads its state from
   there (``arena.launch('group_copy', [fork_source, group])``).
5. The forward; then ``hash_blocks(r, n)`` publishes the full blocks of the
   n new tokens (and keeps the checkpoints due), and
   ``r.num_cached_tokens += n``.
6. Decode: ``can_append`` / ``append_slots`` grow the block table.
7. ``deallocate(r)`` when the request finishes: its published blocks stay
   cached until evicted.

``move_boundary`` re-splits the rows PAGE blocks and STATE slots share (a
row-space model) and returns the byte moves to run. ``stats()`` and
``funnel()`` are counters that merge across ranks by summation
(``poolrt.merged_counters``).

Units: tokens are token positions; blocks are PAGE blocks of block_size
tokens (hash blocks are the same size); groups are STATE groups (slots).

Errors are ``poolrt.Error`` subclasses with the C++ runtime's messages:
``InvalidArgument`` (a bad value), ``InvalidId`` (an id this manager does not
know), ``StateError`` (misuse of a request's life cycle), ``OutOfBlocks`` /
``OutOfStateGroups`` (the pools ran dry).)doc");
  addCacheManagerConstructors(cls);
  addCacheManagerBoundaryMove(cls);
  addCacheManagerProperties(cls);
  addCacheManagerAdmission(cls);
  addCacheManagerStepMethods(cls);
  addCacheManagerCounters(cls);
}

} // namespace

// Classes in dependency order: a default argument or a cast of a bound type
// needs that type registered first.
PYBIND11_MODULE(poolrt, m) {
  m.doc() = R"doc(poolrt: the runtime of a poolc-compiled model, from Python.

poolc compiles a model's KV-cache and state geometry into an artifact
(.poolpack): the solved layout, the generated copy kernels and every count.
This module runs it:

* read_artifact(path) -> ArtifactInfo: verify and summarize an artifact.
* CacheManager.from_artifact(path): the KV-cache and state manager (prefix
  cache, state checkpoints, the per-step protocol; see help(CacheManager)).
* Request(prompt): a request's tokens, block table and state group.
* Device(name).arena(path) -> Arena: the allocation, carved at the compiled
  offsets; its planes, fields and class regions are TensorViews that numpy
  and torch wrap without a copy (DLPack); Arena.launch runs the generated
  kernels, Arena.staging(kernel, items) the staging side of gathers and
  scatters.
* ServeEngine(path): the serving loop of pool-serve (a scheduler, the
  reference model, prefix caching, metrics).
* merged_counters(managers): counters of several ranks, summed.

Errors are poolrt.Error subclasses (InvalidArgument, CorruptArtifact,
InvalidId, StateError, OutOfBlocks, OutOfStateGroups, InsufficientBudget,
InternalError), each also the builtin exception it specializes.)doc";
  bindExceptions(m);
  bindArtifactInfo(m);
  bindAdmission(m);
  bindArtifactFunctions(m);
  bindStateTransfer(m);
  bindBlockPool(m);
  bindStateGroupPool(m);
  bindRequest(m);
  bindCacheManager(m);
  bindDevices(m);
  bindServe(m);
}
