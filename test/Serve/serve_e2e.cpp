//===- serve_e2e.cpp - The serving loop, end to end on the host -----------===//
//
//   poolrt-serve-e2e QWEN.poolpack V4.poolpack LLAMA.poolpack
//
// QWEN: a fork-transfer model (Qwen3.5, GDN); V4: a copy-transfer row
// space with speculative decoding (DeepSeek-V4-Flash DSpark bf16); LLAMA:
// PAGE only. On each:
//   * the seed's walks: a 1250-token prompt sent three times at interval
//     64 is cached 0 -> 1216 -> 1248 (fork, Qwen3.5); four requests of one
//     1000-token prompt at the default interval reuse 0 / 0 / 76.8% / 76.8%
//     (the demand rung, V4);
//   * bit-identical hits: a multi-turn trace (follow-ups replay the
//     generated answers) gives the same output and final-state checksums
//     for every request with the prefix cache on and off, while the cache
//     on actually hits and keeps checkpoints;
//   * a layout that breaks one offset (the manifest moves a checkpointed
//     state field out of the checkpoint image the kernels copy) makes that
//     comparison fail;
//   * refusals: options the artifact cannot honour, requests longer than
//     the model, malformed traces named by file and line.
//
//===----------------------------------------------------------------------===//

#include "../E2E/E2E.h"

#include "poolrt/serve/Engine.h"
#include "poolrt/serve/Trace.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <string>
#include <vector>

using namespace poolrt;
using namespace poolrt::serve;
using e2e::expect;

namespace {

std::optional<Artifact> load(const char *path) {
  auto a = readArtifactFile(path);
  if (!a.ok()) {
    std::printf("FAIL: %s: %s\n", path, a.error().message.c_str());
    return std::nullopt;
  }
  return a.take();
}

/// Replays `trace` on a fresh host engine; nullopt (and why) on an error.
std::optional<std::vector<RequestOutcome>>
replay(const Artifact &a, const Trace &trace, ServeOptions o,
       EngineSnapshot *snap = nullptr, std::string *error = nullptr) {
  auto dev = openDevice("host");
  if (!dev.ok()) {
    std::printf("FAIL: host device: %s\n", dev.error().message.c_str());
    return std::nullopt;
  }
  auto e = Engine::create(a, **dev, o);
  if (!e.ok()) {
    if (error)
      *error = e.error().message;
    else
      std::printf("FAIL: engine: %s\n", e.error().message.c_str());
    return std::nullopt;
  }
  (*e)->submit(trace);
  Status ran = (*e)->run();
  if (!ran.ok()) {
    if (error)
      *error = ran.error().message;
    else
      std::printf("FAIL: replay: %s\n", ran.error().message.c_str());
    return std::nullopt;
  }
  if (snap)
    *snap = (*e)->snapshot();
  return (*e)->outcomes();
}

/// `copies` requests of one prompt of `tokens` synthetic tokens.
Trace samePrompt(int64_t tokens, int copies, int64_t output) {
  Trace t;
  t.source = "same-prompt";
  for (int i = 0; i < copies; ++i) {
    TraceRequest r;
    r.name = "copy " + std::to_string(i);
    for (int64_t j = 0; j < tokens; ++j)
      r.prompt.push_back(syntheticToken(42, j));
    r.maxOutput = output;
    t.requests.push_back(r);
  }
  return t;
}

bool sameResults(const std::vector<RequestOutcome> &a,
                 const std::vector<RequestOutcome> &b) {
  if (a.size() != b.size())
    return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].finished != b[i].finished || a[i].refused != b[i].refused ||
        a[i].output != b[i].output || a[i].stateChecksum != b[i].stateChecksum)
      return false;
  return true;
}

int64_t allFinished(const std::vector<RequestOutcome> &v) {
  int64_t n = 0;
  for (const RequestOutcome &o : v)
    n += o.finished;
  return n;
}

/// An artifact whose manifest puts state field `field` at `offset`.
Artifact movedField(const Artifact &a, const std::string &field, int64_t offset) {
  nlohmann::json j = nlohmann::json::parse(a.find("manifest")->data);
  for (auto &arena : j["layout"]["arenas"])
    for (auto &f : arena["fields"])
      if (f["name"] == field) {
        int64_t size = f["end"].get<int64_t>() - f["offset"].get<int64_t>();
        f["offset"] = offset;
        f["end"] = offset + size;
      }
  Artifact bad = a;
  for (ArtifactSection &s : bad.sections)
    if (s.name == "manifest")
      s.data = j.dump();
  return bad;
}

void ladderWalk(const Artifact &qwen) {
  ServeOptions o;
  o.maxNumSeqs = 1; // serial
  o.policy.checkpointIntervalTokens = 64;
  // The reference's placement over fork groups (placementWalk: the default).
  o.policy.placeAsReference();
  o.policy.forkCheckpointsInPageUnits = false;
  EngineSnapshot s;
  auto out = replay(qwen, samePrompt(1250, 3, 4), o, &s);
  expect(out && out->size() == 3, "ladder walk: three requests ran");
  if (!out || out->size() != 3)
    return;
  std::printf("  ladder walk (fork, interval 64): cached %lld -> %lld -> %lld\n",
              (long long)(*out)[0].hitTokens, (long long)(*out)[1].hitTokens,
              (long long)(*out)[2].hitTokens);
  expect((*out)[0].hitTokens == 0 && (*out)[1].hitTokens == 1216 &&
             (*out)[2].hitTokens == 1248,
         "ladder walk: cached 0 -> 1216 -> 1248 (the last rung, then the demand)");
  expect(s.funnel.demandsRecorded == 1 && s.funnel.chunksCutForDemand == 1,
         "ladder walk: one demand recorded and cut for");
  expect((*out)[0].output == (*out)[1].output && (*out)[1].output == (*out)[2].output &&
             (*out)[0].stateChecksum == (*out)[2].stateChecksum,
         "ladder walk: the resumed requests answer as the cold one did");
  expect(s.forkCopies >= 2, "ladder walk: resumes ran the generated group copy");
}

void demandWalk(const Artifact &v4) {
  ServeOptions o;
  o.maxNumSeqs = 1;
  o.numSpec = 3;
  o.policy.placeAsReference();
  EngineSnapshot s;
  auto out = replay(v4, samePrompt(1000, 4, 8), o, &s);
  expect(out && out->size() == 4, "demand walk: four requests ran");
  if (!out || out->size() != 4)
    return;
  std::vector<double> reuse;
  for (const RequestOutcome &r : *out)
    reuse.push_back(double(r.hitTokens) / double(r.promptTokens));
  std::printf("  demand walk (copy, interval 8192): reuse %.1f%% / %.1f%% / %.1f%% / %.1f%%\n",
              100 * reuse[0], 100 * reuse[1], 100 * reuse[2], 100 * reuse[3]);
  expect((*out)[0].hitTokens == 0 && (*out)[1].hitTokens == 0 &&
             (*out)[2].hitTokens == 768 && (*out)[3].hitTokens == 768,
         "demand walk: reuse 0 / 0 / 76.8% / 76.8%");
  expect(s.imageStores >= 1 && s.imageRestores == 2,
         "demand walk: one image kept, two restores");
  expect((*out)[0].output == (*out)[3].output &&
             (*out)[0].stateChecksum == (*out)[3].stateChecksum,
         "demand walk: the resumed requests answer as the cold one did");
}

/// The default placement (specs/checkpoint-placement.md) on the same
/// prompts: the first request keeps its prompt end, and every later one
/// resumes there; a fork model's image lands in PAGE units and comes back
/// through the generated image_restore, with no fork copy.
void placementWalk(const char *what, const Artifact &a, int64_t numSpec) {
  ServeOptions o;
  o.maxNumSeqs = 1;
  o.numSpec = numSpec;
  EngineSnapshot s;
  auto out = replay(a, samePrompt(1000, 4, 8), o, &s);
  expect(out && out->size() == 4, (std::string(what) + ": four requests ran").c_str());
  if (!out || out->size() != 4)
    return;
  std::printf("  %s placement walk: cached %lld -> %lld -> %lld -> %lld, prompt ends "
              "taken %lld, read back %lld, %lld image stores, %lld restores\n",
              what, (long long)(*out)[0].hitTokens, (long long)(*out)[1].hitTokens,
              (long long)(*out)[2].hitTokens, (long long)(*out)[3].hitTokens,
              (long long)s.funnel.taken[int(CheckpointKind::PromptEnd)],
              (long long)s.funnel.readBack[int(CheckpointKind::PromptEnd)],
              (long long)s.imageStores, (long long)s.imageRestores);
  int64_t end = (*out)[1].hitTokens;
  expect((*out)[0].hitTokens == 0 && end > 1000 - 256 && end <= 1000 &&
             (*out)[2].hitTokens == end && (*out)[3].hitTokens == end,
         (std::string(what) + ": every later request resumes at the first's prompt end").c_str());
  expect(s.funnel.readBack[int(CheckpointKind::PromptEnd)] == 3 &&
             s.imageRestores == 3 && s.forkCopies == 0,
         (std::string(what) + ": three images read back, no fork copy").c_str());
  expect((*out)[0].output == (*out)[3].output &&
             (*out)[0].stateChecksum == (*out)[3].stateChecksum,
         (std::string(what) + ": the resumed requests answer as the cold one did").c_str());
}

void identical(const char *what, const Artifact &a, int64_t numSpec,
               int64_t interval, int64_t maxNumSeqs = 0) {
  MultiTurnSpec spec;
  spec.conversations = 40;
  spec.turns = 3;
  spec.systemTokens = 600;
  spec.outputMax = 48;
  Trace t = multiTurnTrace(spec);
  ServeOptions on;
  on.numSpec = numSpec;
  on.maxNumSeqs = maxNumSeqs;
  on.policy.checkpointIntervalTokens = interval;
  ServeOptions off = on;
  off.policy.prefixCaching = false;
  EngineSnapshot sOn, sOff;
  auto a1 = replay(a, t, on, &sOn), a2 = replay(a, t, off, &sOff);
  expect(a1 && a2, "multi-turn: both replays ran");
  if (!a1 || !a2)
    return;
  std::printf("  %s: %lld/%zu finished, hit %.1f%%, %lld checkpoints kept, "
              "%lld restores, %lld fork copies\n",
              what, (long long)allFinished(*a1), a1->size(), 100 * sOn.stats.hit(),
              (long long)sOn.funnel.fates.kept, (long long)sOn.imageRestores,
              (long long)sOn.forkCopies);
  expect(allFinished(*a1) == int64_t(t.requests.size()), "multi-turn: every request finished");
  expect(sOn.stats.cachedTokens > 0 && sOff.stats.cachedTokens == 0,
         "multi-turn: the cache on hits, the cache off never does");
  expect(sameResults(*a1, *a2),
         "multi-turn: outputs and final states are identical with the cache on and off");
}

/// The moving boundary under load: slots shrink to those in use and grow
/// back every three steps, live slots move with the generated slot copy,
/// and every request still answers as with the cache off and the boundary
/// fixed.
void churnedBoundary(const Artifact &v4) {
  MultiTurnSpec spec;
  spec.conversations = 40;
  spec.turns = 3;
  spec.systemTokens = 600;
  spec.outputMax = 48;
  Trace t = multiTurnTrace(spec);
  ServeOptions churn;
  churn.numSpec = 3;
  churn.policy.checkpointIntervalTokens = 256;
  churn.boundaryChurn = 3;
  ServeOptions fixed = churn;
  fixed.boundaryChurn = 0;
  fixed.elasticBoundary = false;
  fixed.policy.prefixCaching = false;
  EngineSnapshot s;
  auto a1 = replay(v4, t, churn, &s), a2 = replay(v4, t, fixed);
  expect(a1 && a2, "churned boundary: both replays ran");
  if (!a1 || !a2)
    return;
  std::printf("  churned boundary (V4): %lld moves, %lld live slots and %lld blocks "
              "moved, %lld restores\n",
              (long long)s.boundaryMoves, (long long)s.slotCopies, (long long)s.blockCopies,
              (long long)s.imageRestores);
  expect(s.boundaryMoves >= 10 && s.slotCopies > 0,
         "churned boundary: the boundary moved, live slots with it");
  expect(sameResults(*a1, *a2),
         "churned boundary: outputs and states equal a fixed boundary without the cache");
}

void brokenOffsetFails(const Artifact &v4) {
  SolvedLayout layout = e2e::layoutOf(v4);
  // Move one checkpointed field past the image the kernels copy (still
  // inside the slot's state rows): the manifest and the code disagree.
  const SolvedArena *arena = layout.arenaOf(layout.rowSpace->slotClass);
  const SolvedField *victim = nullptr;
  int64_t imageEnd = 0;
  for (const SolvedField &f : arena->fields)
    if (f.inCheckpoint && !f.window && f.plane == arena->fields[0].plane) {
      victim = &f;
      imageEnd = std::max(imageEnd, f.end);
    }
  expect(victim != nullptr, "broken offset: a checkpointed field to move");
  if (!victim)
    return;
  Artifact bad = movedField(v4, victim->name, imageEnd + 4096);
  MultiTurnSpec spec;
  spec.conversations = 24;
  spec.turns = 2;
  spec.systemTokens = 600;
  Trace t = multiTurnTrace(spec);
  ServeOptions on;
  on.numSpec = 3;
  on.policy.checkpointIntervalTokens = 256;
  ServeOptions off = on;
  off.policy.prefixCaching = false;
  std::string err1, err2;
  auto a1 = replay(bad, t, on, nullptr, &err1), a2 = replay(bad, t, off, nullptr, &err2);
  bool caught = !a1 || !a2 || !sameResults(*a1, *a2);
  std::printf("  broken offset ('%s' moved out of the image): %s\n",
              victim->name.c_str(), caught ? "the comparison fails" : "NOT CAUGHT");
  expect(caught, "broken offset: the on/off comparison fails");
}

void refusals(const Artifact &v4, const Artifact &llama) {
  auto dev = openDevice("host");
  if (!dev.ok())
    return;
  ServeOptions o;
  o.numSpec = 99;
  auto e = Engine::create(v4, **dev, o);
  expect(!e.ok() && e.error().message.find("speculative") != std::string::npos,
         "refused: more drafts than the artifact was compiled for");
  o = ServeOptions();
  o.maxNumSeqs = 1 << 20;
  e = Engine::create(llama, **dev, o);
  expect(!e.ok() && e.error().message.find("max_num_seqs") != std::string::npos,
         "refused: more running requests than the artifact's max_num_seqs");
  o = ServeOptions();
  o.maxModelLen = 600;
  auto out = replay(llama, samePrompt(700, 2, 4), o);
  expect(out && out->size() == 2 && (*out)[0].refused &&
             (*out)[0].reason.find("needs 704 tokens") != std::string::npos,
         "refused: a request longer than the model's limit, with its reason");

  auto bad = [](const std::string &text, const std::string &words) {
    auto t = parseTrace(text, "t.jsonl");
    bool ok = !t.ok() && t.error().message.find(words) != std::string::npos;
    if (!ok)
      std::printf("  %s\n", t.ok() ? "accepted" : t.error().message.c_str());
    return ok;
  };
  expect(bad("{\"timestamp\":0,\"input_length\":10,\"output_length\":2,\"hash_ids\":[1]}\n{oops\n",
             "t.jsonl:2: error: not a JSON object"),
         "trace: a malformed line is named by file and line");
  expect(bad("{\"timestamp\":0,\"input_length\":1000,\"output_length\":2,\"hash_ids\":[1]}\n",
             "t.jsonl:1: error: 'hash_ids' has 1 ids; input_length 1000 needs 2"),
         "trace: hash ids that do not cover the input are refused");
  expect(bad("{\"timestamp\":0,\"input_length\":-3,\"output_length\":2,\"hash_ids\":[]}\n",
             "'input_length' is -3"),
         "trace: a negative length is refused");
  expect(bad("{\"timestamp\":0,\"input_length\":4,\"output_length\":2,\"hash_ids\":[-1]}\n",
             "'hash_ids'[0] must be a non-negative integer"),
         "trace: a negative hash id is refused");
  expect(bad("admit 0 1 2\nfinish 1\n", "t.jsonl:2: error: finish of request 1, which was never admitted"),
         "trace: a finish of an unknown request is refused");
  expect(bad("admit 0 1 x\n", "t.jsonl:1: error: hash 2 'x'"),
         "trace: a hash that is not a number is refused");
  expect(bad("frobnicate 1\n", "unknown event 'frobnicate'"), "trace: an unknown event is refused");
  expect(!parseMultiTurnSpec("multi-turn:turns=0").ok() &&
             !parseMultiTurnSpec("multi-turn:bogus=1").ok() &&
             !parseMultiTurnSpec("multi-turn:user-min=9,user-max=3").ok(),
         "trace: bad multi-turn specs are refused");
}

} // namespace

int main(int argc, char **argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s QWEN.poolpack V4.poolpack LLAMA.poolpack\n", argv[0]);
    return 2;
  }
  auto qwen = load(argv[1]), v4 = load(argv[2]), llama = load(argv[3]);
  if (!qwen || !v4 || !llama)
    return 1;
  ladderWalk(*qwen);
  demandWalk(*v4);
  placementWalk("qwen (fork)", *qwen, 0);
  placementWalk("v4 (copy)", *v4, 3);
  // Fewer running requests than groups: a checkpoint has a group to fork
  // into.
  identical("fork (Qwen3.5)", *qwen, 0, 64, 6);
  identical("copy (V4 DSpark, 3 drafts)", *v4, 3, 256);
  identical("PAGE only (Llama)", *llama, 0, 8192);
  churnedBoundary(*v4);
  brokenOffsetFails(*v4);
  refusals(*v4, *llama);
  std::printf("serve e2e: %d passed, %d failed\n", e2e::passed, e2e::failed);
  return e2e::failed ? 1 : 0;
}
