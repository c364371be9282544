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
      .def("keys", [](const ArtifactInfo &a) { return a.d.attr("keys")(); })
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
      kernels.append(py::dict(
          py::arg("name") = k.name, py::arg("kind") = k.kind,
          py::arg("entity") = k.entity, py::arg("item_bytes") = k.itemBytes,
          py::arg("id_max") = k.idMax, py::arg("ids_per_item") = k.idsPerItem));
    d["kernels"] = kernels;
    d["layout_fingerprint"] = layoutFingerprintText(layoutFingerprint(layout));
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

  m.def("hash_block", [](py::object parent, const std::vector<int64_t> &tokens) {
    std::optional<BlockHash> p;
    if (!parent.is_none())
      p = parent.cast<BlockHash>();
    return hashBlock(p, tokens.data(), tokens.size());
  }, py::arg("parent"), py::arg("tokens"),
     "Chained XXH64 of one hash block (parent None for the first)");
}

void bindAdmission(py::module_ &m) {
  py::class_<Admission>(m, "Admission",
                        "CacheManager.admission's answer: can the request be admitted "
                        "now, its prefix hit in tokens and blocks, and why not")
      .def_readonly("admissible", &Admission::admissible)
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
  py::class_<StateTransfer>(m, "StateTransfer")
      .def_static("none", &StateTransfer::none)
      .def_static("fork", [](int64_t n) { return take(StateTransfer::fork(n)); })
      .def_static("copy", [](const std::string &id) { return take(StateTransfer::copy(id)); })
      .def_property_readonly("successor_room", &StateTransfer::successorRoom)
      .def("__repr__", &StateTransfer::toWire);
}

void bindBlockPool(py::module_ &m) {
  py::class_<BlockPool>(m, "BlockPool")
      .def(py::init([](int64_t n) { return take(BlockPool::create(n)); }), py::arg("num_blocks"))
      .def_property_readonly("num_blocks", &BlockPool::numBlocks)
      .def_property_readonly("num_free", &BlockPool::numFree)
      .def_property_readonly("num_used", &BlockPool::numUsed)
      .def_property_readonly("num_indexed", &BlockPool::numIndexed)
      .def("lookup", [](const BlockPool &p, BlockHash h) { return p.lookup(h).value; })
      .def("pop", [](BlockPool &p) { return take(p.pop()).value; })
      .def("allocate", [](BlockPool &p, int32_t b) { check(p.allocate(BlockId(b))); })
      .def("claim", [](BlockPool &p, int32_t b) { check(p.claim(BlockId(b))); })
      .def("free", [](BlockPool &p, int32_t b) { check(p.free(BlockId(b))); })
      .def("publish", [](BlockPool &p, int32_t b, BlockHash h, std::vector<int32_t> tokens) {
        check(p.publish(BlockId(b), h, tokens.data(), tokens.size()));
      }, py::arg("block"), py::arg("hash"), py::arg("tokens") = std::vector<int32_t>{})
      .def("ref_count", [](const BlockPool &p, int32_t b) { return take(p.refCount(BlockId(b))); },
           py::arg("block"), "KeyError for an id the pool never had")
      .def("invariants_hold", &BlockPool::invariantsHold);
}

/// Needs StateTransfer bound first: its default argument is converted here.
void bindStateGroupPool(py::module_ &m) {
  py::class_<StateGroupPool>(m, "StateGroupPool")
      .def(py::init([](int64_t n, StateTransfer t, int64_t hbs) {
             return take(StateGroupPool::create(n, t, hbs));
           }),
           py::arg("num_groups"), py::arg("transfer") = StateTransfer::none(),
           py::arg("hash_block_size") = 1)
      .def_property_readonly("num_free", &StateGroupPool::numFree)
      .def("pop", [](StateGroupPool &p) { return take(p.pop()).value; })
      .def("claim", [](StateGroupPool &p, int32_t g) { check(p.claim(GroupId(g))); })
      .def("release", [](StateGroupPool &p, int32_t g) { check(p.release(GroupId(g))); })
      .def("index", [](StateGroupPool &p, BlockHash h, int32_t g) { check(p.index(h, GroupId(g))); })
      .def("lookup_group", [](const StateGroupPool &p, BlockHash h) { return p.lookupGroup(h).value; })
      .def("release_pins", &StateGroupPool::releasePins);
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
      .def_readonly("allocated", &Request::allocated)
      .def_readonly("checkpoint_demand_pos", &Request::checkpointDemandPos)
      .def_property_readonly("group", [](const Request &r) { return r.state.group.value; })
      .def_property_readonly("block_table", [](const Request &r) {
        std::vector<int32_t> ids;
        for (BlockId b : r.blockTable)
          ids.push_back(b.value);
        return ids;
      });
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
                 py::object boundary) {
  CacheManagerConfig c;
  if (!boundary.is_none())
    c.boundary = boundaryArg(boundary);
  c.blockSize = blockSize;
  c.numBlocks = numBlocks;
  c.numGroups = numGroups;
  c.transfer = transfer;
  c.policy.checkpointIntervalTokens = interval;
  c.policy.prefixCaching = prefixCaching;
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
  d["demands_recorded"] = f.demandsRecorded;
  d["demands_declined_no_room"] = f.demandsDeclinedNoRoom;
  d["chunks_cut_for_demand"] = f.chunksCutForDemand;
  d["checkpoints_kept"] = f.fates.kept;
  d["checkpoints_dropped"] = f.fates.dropped;
  d["checkpoints_evicted"] = f.fates.evicted;
  d["checkpoints_orphaned"] = f.fates.orphaned;
  d["blocks_evicted"] = f.blocksEvicted;
  return d;
}

py::dict statsDict(const CacheStats &s) {
  py::dict d;
  d["requests"] = s.requests;
  d["full_tokens"] = s.fullTokens;
  d["cached_tokens"] = s.cachedTokens;
  d["wanted_tokens"] = s.wantedTokens;
  d["compressed_tokens"] = s.compressedTokens;
  d["hit"] = s.hit();
  d["compressed_hit"] = s.compressedHit();
  d["lost_to_checkpoint"] = s.lostToCheckpoint();
  d["lost_unrecoverable"] = s.lostUnrecoverable();
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

/// Needs StateTransfer bound first: its default argument is converted here.
void bindCacheManager(py::module_ &m) {
  m.def("merged_counters", &mergedCounters, py::arg("managers"),
        "The prefix-cache statistics and the funnel of several managers (one per "
        "rank) summed, rates derived from the sums: {ranks, stats, funnel}");
  py::class_<CacheManager>(m, "CacheManager")
      .def(py::init(&makeCacheManager),
           py::arg("block_size"), py::arg("num_blocks"), py::arg("num_groups") = 0,
           py::arg("transfer") = StateTransfer::none(), py::arg("interval") = kDefaultCheckpointInterval,
           py::arg("prefix_caching") = true, py::arg("boundary") = py::none(),
           "boundary: {envelope_rows, slot_rows, plane_rows, slot_positions, "
           "max_blocks} of a row-space artifact, to allow move_boundary")
      .def_static("from_artifact", [](const std::string &path, int64_t interval,
                                      bool prefixCaching) {
        Artifact a = takeArtifact(readArtifactFile(path));
        CacheManagerConfig c =
            take(cacheManagerConfig(a, CachePolicy{interval, prefixCaching}));
        return take(CacheManager::create(c));
      }, py::arg("path"), py::arg("interval") = kDefaultCheckpointInterval, py::arg("prefix_caching") = true,
         "A cache manager with every count (blocks, groups, transfer, PAGE-unit "
         "checkpoints, boundary rows) read from a .poolpack")
      .def("move_boundary", [](CacheManager &m, int64_t target, py::list live) {
        std::vector<Request *> ptrs;
        for (size_t i = 0; i < live.size(); ++i)
          ptrs.push_back(&requestArg(live[i], "move_boundary: live[" +
                                                  std::to_string(i) + "]"));
        return boundaryMoveDict(take(m.moveBoundary(target, ptrs)));
      }, py::arg("target_groups"), py::arg("live"),
         "Re-split the rows blocks and slots share; returns the byte moves "
         "(block_copy / slot_copy id pairs) to run before the next forward")
      .def_property_readonly("interval", &CacheManager::interval)
      // Requests through requestArg: a TypeError that names the argument.
      .def("can_allocate", [](CacheManager &m, py::object r) {
        return m.canAllocate(requestArg(r, "can_allocate: request"));
      }, py::arg("request"),
         "Prefix hit in blocks (hash blocks of block_size tokens), or -1: cannot be "
         "admitted now. admission() says the same in tokens and blocks, and why.")
      .def("admission", [](CacheManager &m, py::object r) {
        return m.admission(requestArg(r, "admission: request"));
      }, py::arg("request"),
         "Whether the request can be admitted now: an Admission with hit_tokens, "
         "hit_blocks, indexed_blocks (before the checkpoint gate), needed_blocks and "
         "reason ('blocks' / 'state groups' when refused, 'checkpoint missing' when "
         "the hit stops short of what the index holds)")
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
         "Take the request's blocks (its prefix hit of num_cached_blocks, or an "
         "Admission's) and its state group. StateError when already allocated, "
         "InvalidId when another live request has its id, OutOfBlocks / "
         "OutOfStateGroups when the pools run dry")
      .def("hash_blocks", [](CacheManager &m, py::object r, int64_t n) {
        check(m.hashBlocks(requestArg(r, "hash_blocks: request"), n));
      }, py::arg("request"), py::arg("num_new_tokens"),
         "RuntimeError when the request is not allocated")
      .def("deallocate", [](CacheManager &m, py::object r) {
        check(m.deallocate(requestArg(r, "deallocate: request")));
      }, py::arg("request"),
         "RuntimeError when the request is not allocated (twice, or never)")
      .def("checkpoint_limit", [](const CacheManager &m, py::object r) {
        return m.checkpointLimit(requestArg(r, "checkpoint_limit: request"));
      }, py::arg("request"))
      .def("complete_previous_state_batch", &CacheManager::completePreviousStateBatch,
           "Top of every scheduling step: the previous batch's pins drain")
      .def("finalize_prefill_chunk", [](CacheManager &m, py::object r, int64_t start,
                                        int64_t chunk) {
        Request &req = requestArg(r, "finalize_prefill_chunk: request");
        if (start < 0 || chunk < 1 || start + chunk > req.numTokens())
          raise(Error::invalid("finalize_prefill_chunk: tokens [" + std::to_string(start) +
                               ", " + std::to_string(start + chunk) + ") are outside the "
                               "request's " + std::to_string(req.numTokens())));
        return m.finalizePrefillChunk(req, start, chunk);
      }, py::arg("request"), py::arg("start"), py::arg("chunk"),
         "The chunk to forward from token `start` (at most `chunk` tokens): cut to "
         "land on a demanded checkpoint, or widened for a fork's room")
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
      }, "At batch construction, before the forward: the checkpoint copies to launch. "
         "{'stores': [...], 'restores': [...]}, each {'kernel_ids': (slot, unit...), "
         "'image_bytes'}: arena.launch('image_store' / 'image_restore', kernel_ids)")
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
         "Whether the request's table can grow to total_tokens (decode, drafts)")
      .def("append_slots", [](CacheManager &m, py::object r, int64_t total) {
        check(m.appendSlots(requestArg(r, "append_slots: request"), total));
      }, py::arg("request"), py::arg("total_tokens"),
         "Grow the request's block table to hold total_tokens; takes nothing unless "
         "it can take every block (OutOfBlocks)")
      .def("funnel", [](const CacheManager &m) { return funnelDict(m.funnel()); },
           "Counters that merge across ranks by summation")
      .def("stats", [](const CacheManager &m) { return statsDict(m.stats()); },
           "Prefix-cache statistics over admitted prefills (spec 10.4); the "
           "token counters merge across ranks by summation");
}

} // namespace

// Classes in dependency order: a default argument or a cast of a bound type
// needs that type registered first.
PYBIND11_MODULE(poolrt, m) {
  m.doc() = "libpoolrt: pools, cache manager and kernels of a compiled poolc artifact";
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
