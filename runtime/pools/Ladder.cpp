//===- Ladder.cpp - The checkpoint ladder of a chosen prompt, as run ------===//

#include "poolrt/Ladder.h"

namespace poolrt {

namespace {

// Token ids: the shared prompt counts up from 1; request k's output counts
// from (k+1) x 2 kSpan and its tail from that + kSpan, so no block of one
// request is a block of another unless it is the shared prompt's. Every id
// stays below 2^31 (the block hash reads int32 ids).
constexpr int64_t kSpan = 100'000'000;
int64_t outputBase(int k) { return int64_t(k + 1) * 2 * kSpan; }
int64_t tailBase(int k) { return outputBase(k) + kSpan; }

Error stuck(const std::string &role, const std::string &what) {
  return Error{ErrorKind::State, "ladder: the " + role + " request " + what};
}

/// Engine::forkCopy, before a forward and after the hashing that kept a
/// fork's checkpoint: the group copy ran, the request owns its group alone.
void forkCopied(Request &r) { r.state.forkSource = GroupId(); }

/// One request alone in the batch, pass by pass, as Engine runs it.
Result<LadderRequest> serve(CacheManager &m, Request &r, int k,
                            const std::string &role, const LadderQuery &q) {
  const int64_t bs = m.blockSize();
  LadderRequest out;
  out.role = role;
  out.promptTokens = r.numTokens();
  const CheckpointFates before = m.funnel().fates;

  m.completePreviousStateBatch();
  Admission a = m.admission(r);
  if (!a.admissible)
    return stuck(role, "(" + std::to_string(r.numTokens()) +
                           " tokens) cannot be admitted alone: not enough " +
                           a.reason);
  out.hitTokens = a.hitTokens;
  out.indexedTokens = a.indexedBlocks * bs;
  out.demandPos = r.checkpointDemandPos;
  out.limitTokens = m.checkpointLimit(r);
  out.reason = a.reason;
  int64_t start = a.hitTokens;
  int64_t chunk = CacheManager::chunkedPrefillSize(r.numTokens() - start,
                                                   q.maxBatchedTokens, 0, bs);
  if (chunk <= 0)
    return stuck(role, "gets no prefill chunk from a budget of " +
                           std::to_string(q.maxBatchedTokens) + " tokens");
  Status s = m.allocate(r, a.hitBlocks);
  if (!s.ok())
    return s.error();

  for (;;) {
    int64_t cutsBefore = m.funnel().chunksCutForDemand;
    chunk = m.finalizePrefillChunk(r, start, chunk);
    if (chunk <= 0)
      return stuck(role, "stalls at token " + std::to_string(start) +
                             " (no prefill chunk fits)");
    LadderChunk c;
    c.start = start;
    c.end = start + chunk;
    c.cutForDemand = m.funnel().chunksCutForDemand > cutsBefore;
    (void)m.takeStateMaintenanceOps(); // the copies a device would run
    forkCopied(r);
    int64_t lastBefore = r.lastCheckpointPos;
    if (!(s = m.hashBlocks(r, chunk)).ok() ||
        !(s = r.setNumCachedTokens(c.end)).ok())
      return s.error();
    forkCopied(r);
    c.checkpoint = r.lastCheckpointPos != lastBefore && r.lastCheckpointPos == c.end;
    out.prefill.push_back(c);
    start = c.end;
    if (start >= r.numTokens())
      break;
    m.completePreviousStateBatch();
    chunk = CacheManager::chunkedPrefillSize(r.numTokens() - start,
                                             q.maxBatchedTokens, 0, bs);
  }

  // The prefill's forward produced the first token; each decode step one.
  const int64_t base = outputBase(k);
  r.tokens.push_back(base);
  out.outputTokens = 1;
  while (out.outputTokens < q.outputTokens) {
    m.completePreviousStateBatch();
    int64_t need = r.numTokens();
    if (!m.canAppend(r, need))
      return stuck(role, "runs out of blocks in decode at token " +
                             std::to_string(need));
    if (!(s = m.appendSlots(r, need)).ok())
      return s.error();
    (void)m.takeStateMaintenanceOps();
    forkCopied(r);
    r.tokens.push_back(base + out.outputTokens);
    ++out.outputTokens;
    bool done = out.outputTokens >= q.outputTokens;
    int64_t committed = r.numTokens() - 1;
    int64_t lastBefore = r.lastCheckpointPos;
    if (!(s = m.hashDecodeBlocks(r, committed, done ? 0 : 1)).ok() ||
        !(s = r.setNumCachedTokens(committed)).ok())
      return s.error();
    forkCopied(r);
    if (r.lastCheckpointPos != lastBefore)
      out.decodeCheckpoints.push_back(r.lastCheckpointPos);
  }
  if (!(s = m.deallocate(r)).ok())
    return s.error();
  const CheckpointFates after = m.funnel().fates;
  out.kept = after.kept - before.kept;
  out.dropped = after.dropped - before.dropped;
  out.evicted = after.evicted - before.evicted;
  return out;
}

} // namespace

Result<Ladder> checkpointLadder(const CacheManagerConfig &config,
                                const LadderQuery &q) {
  if (q.promptTokens < 1 || q.promptTokens >= kSpan)
    return Error::invalid("ladder: the prompt must be 1 to " +
                          std::to_string(kSpan - 1) + " tokens, got " +
                          std::to_string(q.promptTokens));
  if (q.outputTokens < 1 || q.outputTokens >= kSpan)
    return Error::invalid("ladder: the output must be 1 to " +
                          std::to_string(kSpan - 1) + " tokens, got " +
                          std::to_string(q.outputTokens));
  if (q.tailTokens < 0 || q.tailTokens >= kSpan)
    return Error::invalid("ladder: the tail must be 0 to " +
                          std::to_string(kSpan - 1) + " tokens, got " +
                          std::to_string(q.tailTokens));
  if (q.maxBatchedTokens < config.blockSize)
    return Error::invalid("ladder: a budget of " + std::to_string(q.maxBatchedTokens) +
                          " tokens per pass is less than one block of " +
                          std::to_string(config.blockSize));
  auto made = CacheManager::create(config);
  if (!made.ok())
    return made.error();
  CacheManager &m = **made;

  Ladder L;
  L.interval = m.interval();
  L.blockSize = m.blockSize();
  L.note = m.snapWarning();
  L.groups = config.numGroups;
  bool stateful = config.numGroups > 0;
  if (!stateful)
    L.transfer = "stateless";
  else if (config.pagedCheckpoints)
    L.transfer = "copy (PAGE units)";
  else
    L.transfer = config.transfer.forks() ? "fork" : "none";
  if (!stateful && L.note.empty())
    L.note = "no state class: a hit is any indexed prefix, and nothing is checkpointed";
  else if (L.interval == 0 && L.note.empty())
    L.note = "checkpoint interval 0: the ladder is off";

  std::vector<int64_t> prompt(size_t(q.promptTokens));
  for (int64_t i = 0; i < q.promptTokens; ++i)
    prompt[size_t(i)] = i + 1;
  const char *roles[] = {"first", "follow-up", "repeat"};
  for (int k = 0; k < 3; ++k) {
    Request r;
    r.id = k + 1;
    r.state.hasPerReqCache = stateful;
    r.tokens = prompt;
    if (k > 0)
      for (int64_t i = 0; i < q.tailTokens; ++i)
        r.tokens.push_back(tailBase(k) + i);
    r.numPromptTokens = r.numTokens();
    r.responseEnd = r.numPromptTokens + q.outputTokens;
    auto one = serve(m, r, k, roles[k], q);
    if (!one.ok())
      return one.error();
    L.requests.push_back(one.take());
  }
  return L;
}

} // namespace poolrt
