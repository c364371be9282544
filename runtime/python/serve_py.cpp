//===- serve_py.cpp - poolrt.ServeEngine: the serving loop from Python ----===//
//
// The engine pool-serve runs (runtime/serve): an engine developer loads an
// artifact, submits requests (or a trace), and steps batches one at a time
// or runs to the end, reading each request's outcome and the counters.
//
//===----------------------------------------------------------------------===//

#include "PyCommon.h"

#include "poolrt/serve/Engine.h"
#include "poolrt/serve/Trace.h"

#include <pybind11/stl.h>

#include <memory>

namespace py = pybind11;
using namespace poolrt;
using namespace poolrt::serve;
using namespace poolrt::py_common;

namespace {

/// The engine with the device it runs on (the engine borrows it).
struct PyEngine {
  std::unique_ptr<Device> device;
  std::unique_ptr<Engine> engine;
  Trace submitted; // every submitted request, for the ceiling
};

py::dict outcomeDict(const RequestOutcome &o) {
  py::dict d;
  d["name"] = o.name;
  d["finished"] = o.finished;
  d["refused"] = o.refused;
  d["reason"] = o.reason;
  d["prompt_tokens"] = o.promptTokens;
  d["output_tokens"] = o.outputTokens;
  d["hit_tokens"] = o.hitTokens;
  d["preemptions"] = o.preemptions;
  d["output"] = o.output;
  d["output_checksum"] = o.outputChecksum;
  d["state_checksum"] = o.stateChecksum;
  return d;
}

py::dict snapshotDict(const EngineSnapshot &s) {
  py::dict d;
  d["requests_total"] = s.requestsTotal;
  d["requests_finished"] = s.requestsFinished;
  d["requests_refused"] = s.requestsRefused;
  d["requests_running"] = s.requestsRunning;
  d["requests_waiting"] = s.requestsWaiting;
  d["prompt_tokens"] = s.promptTokens;
  d["generated_tokens"] = s.generatedTokens;
  d["forward_tokens"] = s.forwardTokens;
  d["preemptions"] = s.preemptions;
  d["prefill_steps"] = s.prefillSteps;
  d["decode_steps"] = s.decodeSteps;
  d["image_stores"] = s.imageStores;
  d["image_restores"] = s.imageRestores;
  d["fork_copies"] = s.forkCopies;
  d["boundary_moves"] = s.boundaryMoves;
  d["block_copies"] = s.blockCopies;
  d["slot_copies"] = s.slotCopies;
  d["draft_tokens"] = s.draftsOffered;
  d["accepted_tokens"] = s.draftsAccepted;
  d["blocks_total"] = s.blocksTotal;
  d["blocks_free"] = s.blocksFree;
  d["blocks_cached"] = s.blocksIndexed;
  d["blocks_held"] = s.blocksUsed;
  d["groups_total"] = s.groupsTotal;
  d["groups_free"] = s.groupsFree;
  d["prefix_cache_queries"] = s.prefixQueryTokens;
  d["prefix_cache_hits"] = s.prefixHitTokens;
  d["full_tokens"] = s.stats.fullTokens;
  d["cached_tokens"] = s.stats.cachedTokens;
  d["wanted_tokens"] = s.stats.wantedTokens;
  d["compressed_tokens"] = s.stats.compressedTokens;
  d["hit_rate"] = s.stats.hit();
  d["checkpoints_kept"] = s.funnel.fates.kept;
  d["checkpoints_dropped"] = s.funnel.fates.dropped;
  d["checkpoints_evicted"] = s.funnel.fates.evicted;
  d["checkpoints_orphaned"] = s.funnel.fates.orphaned;
  d["demands_recorded"] = s.funnel.demandsRecorded;
  d["demands_declined_no_room"] = s.funnel.demandsDeclinedNoRoom;
  d["chunks_cut_for_demand"] = s.funnel.chunksCutForDemand;
  return d;
}

/// Requests from Python: dicts with "prompt" (token ids), "max_output"
/// and optionally "name" and "follows" (the index of the turn before).
Trace requestsArg(py::handle h) {
  if (!py::isinstance<py::list>(h) && !py::isinstance<py::tuple>(h))
    throw py::type_error("requests must be a list of dicts, got " + typeName(h));
  Trace t;
  t.source = "python";
  t.format = "python";
  size_t i = 0;
  for (py::handle item : h) {
    std::string where = "requests[" + std::to_string(i) + "]";
    if (!py::isinstance<py::dict>(item))
      throw py::type_error(where + " must be a dict, got " + typeName(item));
    py::dict d = py::reinterpret_borrow<py::dict>(item);
    for (auto kv : d) {
      std::string k = castArg<std::string>(kv.first, where + " key", "a str");
      if (k != "prompt" && k != "max_output" && k != "name" && k != "follows")
        throw py::value_error(where + ": unknown key '" + k +
                              "' (prompt, max_output, name, follows)");
    }
    if (!d.contains("prompt") || !d.contains("max_output"))
      throw py::value_error(where + " needs 'prompt' and 'max_output'");
    TraceRequest r;
    r.prompt = tokenList(d["prompt"], (where + "['prompt']").c_str());
    for (int64_t tok : r.prompt)
      if (tok < 0 || tok > INT32_MAX)
        throw py::value_error(where + "['prompt']: token " + std::to_string(tok) +
                              " is outside [0, 2^31)");
    r.maxOutput = castArg<int64_t>(d["max_output"], where + "['max_output']", "an int");
    if (r.maxOutput < 1)
      throw py::value_error(where + "['max_output'] must be >= 1");
    r.name = d.contains("name") ? castArg<std::string>(d["name"], where + "['name']", "a str")
                                : "request " + std::to_string(i);
    if (d.contains("follows")) {
      r.followUpOf = castArg<int64_t>(d["follows"], where + "['follows']", "an int");
      if (r.followUpOf < 0 || r.followUpOf >= int64_t(i))
        throw py::value_error(where + "['follows'] must name an earlier request");
    } else if (r.prompt.empty()) {
      throw py::value_error(where + "['prompt'] is empty");
    }
    t.requests.push_back(std::move(r));
    ++i;
  }
  return t;
}

void submitTrace(PyEngine &p, const Trace &t) {
  p.engine->submit(t);
  size_t base = p.submitted.requests.size();
  for (TraceRequest r : t.requests) {
    if (r.followUpOf >= 0)
      r.followUpOf += int64_t(base);
    p.submitted.requests.push_back(std::move(r));
  }
}

} // namespace

void bindServe(py::module_ &m) {
  py::class_<PyEngine>(m, "ServeEngine",
                       "The serving loop over a compiled artifact: scheduler, cache "
                       "manager, generated kernels and the stateful reference model")
      .def(py::init([](const std::string &artifact, const std::string &device,
                       int64_t maxNumSeqs, int64_t maxBatchedTokens, int64_t numSpec,
                       int64_t acceptPercent, uint64_t seed, int64_t interval,
                       bool prefixCaching, int64_t maxModelLen, bool referenceModel,
                       bool elasticBoundary, int64_t boundaryChurn,
                       const std::string &modelKernel, const std::string &scheme,
                       const std::vector<std::string> &checkpointAt,
                       const std::string &forkCheckpoints) {
             auto p = std::make_unique<PyEngine>();
             Artifact a = takeArtifact(readArtifactFile(artifact));
             p->device = take(openDevice(device));
             ServeOptions o;
             o.maxNumSeqs = maxNumSeqs;
             o.maxBatchedTokens = maxBatchedTokens;
             o.numSpec = numSpec;
             o.acceptPercent = acceptPercent;
             o.seed = seed;
             o.policy.checkpointIntervalTokens = interval;
             o.policy.prefixCaching = prefixCaching;
             o.policy.hashScheme = schemeArg(scheme);
             placementArgs(o.policy, checkpointAt, forkCheckpoints);
             o.maxModelLen = maxModelLen;
             o.runModel = referenceModel;
             o.elasticBoundary = elasticBoundary;
             o.boundaryChurn = boundaryChurn;
             o.modelKernel = modelKernel;
             p->engine = take(Engine::create(a, *p->device, o));
             return p;
           }),
           py::arg("artifact"), py::arg("device") = "host", py::arg("max_num_seqs") = 0,
           py::arg("max_batched_tokens") = 2048, py::arg("num_spec") = 0,
           py::arg("accept_percent") = 70, py::arg("seed") = 1,
           py::arg("checkpoint_interval") = kDefaultCheckpointInterval,
           py::arg("prefix_caching") = true, py::arg("max_model_len") = 0,
           py::arg("reference_model") = true, py::arg("elastic_boundary") = true,
           py::arg("boundary_churn") = 0, py::arg("model_kernel") = "",
           py::arg("hash_scheme") = "xxh3", py::arg("checkpoint_at") = kDefaultPlacement,
           py::arg("fork_checkpoints") = "page-units",
           "Load a .poolpack on a backend (host, cuda, hip); every count from the artifact. "
           "model_kernel: a compiled model kernel (libpoolmodel-MODEL.so, built against "
           "this artifact's header) to forward through instead of the reference model. "
           "hash_scheme: the prefix hashes' chain, 'xxh3' or 'xxh64' (the reference's). "
           "checkpoint_at, fork_checkpoints: where state checkpoints are kept and in "
           "which bytes, as pool-serve's --checkpoint-at and --fork-checkpoints "
           "(specs/checkpoint-placement.md)")
      .def("submit", [](PyEngine &p, py::handle requests) { submitTrace(p, requestsArg(requests)); },
           py::arg("requests"),
           "Queue requests: a list of dicts {prompt: [int], max_output: int, name: str, "
           "follows: index of an earlier request whose prompt and answer come first}")
      .def("submit_trace",
           [](PyEngine &p, const std::string &trace) {
             TraceOptions to;
             to.tokensPerPrefixHash = p.engine->layout().geometry.hashBlockSize;
             submitTrace(p, take(loadTrace(trace, to)));
           },
           py::arg("trace"),
           "Queue a trace: a Mooncake JSONL or shared-prefix file, or 'multi-turn:...'")
      .def("step", [](PyEngine &p) { return take(p.engine->step()); },
           "Run one scheduling step (one batch); False when nothing is left")
      .def("run", [](PyEngine &p) { check(p.engine->run()); }, "Step until done")
      .def_property_readonly("last_step",
                             [](const PyEngine &p) {
                               auto s = p.engine->lastStep();
                               return py::dict(py::arg("prefill") = s.first,
                                               py::arg("requests") = s.second);
                             },
                             "What the last step ran: a prefill batch or not, and how many requests")
      .def_property_readonly("outcomes",
                             [](const PyEngine &p) {
                               py::list out;
                               for (const RequestOutcome &o : p.engine->outcomes())
                                 out.append(outcomeDict(o));
                               return out;
                             },
                             "Each submitted request's outcome, in submission order")
      .def("snapshot", [](const PyEngine &p) { return snapshotDict(p.engine->snapshot()); },
           "The counters (/metrics' numbers) as a dict")
      .def("ceiling_hit_rate",
           [](const PyEngine &p) {
             return ceilingHitRate(p.submitted, p.engine->outcomes(),
                                   p.engine->layout().geometry.hashBlockSize);
           },
           "The hit rate an unbounded cache would reach on the submitted requests")
      .def_property_readonly("step_overhead_us",
                             [](const PyEngine &p) { return p.engine->stepOverheadMicros(); },
                             "Host time of each step (less the model and the kernels), in us")
      .def_property_readonly("max_num_seqs", [](const PyEngine &p) { return p.engine->maxNumSeqs(); },
                             "the most requests a step runs (the artifact's, unless given)")
      .def_property_readonly("token_limit", [](const PyEngine &p) { return p.engine->tokenLimit(); },
                             "The longest request (prompt + output + drafts) the engine runs")
      .def("__repr__", [](const PyEngine &p) {
        EngineSnapshot s = p.engine->snapshot();
        return "<poolrt.ServeEngine " + p.engine->layout().model + " on " +
               std::string(p.device->name()) + ": " + std::to_string(s.requestsTotal) +
               " requests, " + std::to_string(s.requestsFinished) + " finished>";
      });
}
