//===- Trace.h - Request traces pool-serve replays ---------------*- C++ -*-===//
//
// Three sources of requests, one shape (TraceRequest):
//
//   * the Mooncake trace (JSONL: timestamp, input_length, output_length,
//     hash_ids): every hash id stands for 512 tokens synthesised from the
//     id alone, so equal ids give equal tokens and a shared id prefix is a
//     shared token prefix;
//   * the shared-prefix trace of ../shared/bench/make_prefix_trace.py
//     ("admit REQ H1 ... Hn" / "finish REQ"): every chained hash stands for
//     one hash block of tokens synthesised from it; finish lines are the
//     block-pool driver's and are checked, not replayed (the scheduler
//     decides when a request ends);
//   * a multi-turn generator ("multi-turn:conversations=64,turns=4,..."):
//     a follow-up turn's prompt is the previous turn's prompt, the model's
//     *generated* answer and a new user message, so a hit on the answer
//     needs blocks published by decode.
//
// A malformed line is refused as "FILE:LINE: error: what"; nothing is
// half-read (the whole trace or an error).
//
//===----------------------------------------------------------------------===//
#ifndef POOLRT_SERVE_TRACE_H
#define POOLRT_SERVE_TRACE_H

#include "poolrt/Status.h"

#include <cstdint>
#include <string>
#include <vector>

namespace poolrt {
namespace serve {

/// Tokens one Mooncake hash id stands for.
constexpr int64_t kMooncakeTokensPerHash = 512;
/// Synthetic token ids lie in [0, kSyntheticVocab) (they must fit int32:
/// the block pool fingerprints int32 ids).
constexpr int64_t kSyntheticVocab = int64_t(1) << 20;

/// Token `j` of the tokens a hash id (or any 64-bit key) stands for.
int64_t syntheticToken(uint64_t key, int64_t j);

struct TraceRequest {
  std::string name;     // how outputs name it ("line 12", "conv 3 turn 1")
  double arrivalMs = 0; // ordering only: replay runs as fast as it can
  /// The prompt; for a follow-up, only the new user tokens (the engine
  /// puts the previous turn's prompt and answer before them).
  std::vector<int64_t> prompt;
  int64_t maxOutput = 1;
  /// Index (in the trace) of the turn this one follows, or -1.
  int64_t followUpOf = -1;
  int64_t line = 0; // 0 for generated requests
  /// What seeds the request's draft acceptance: its index in the whole
  /// trace, kept when the trace is split over ranks (-1: its index in the
  /// engine it is submitted to), so a request's output does not depend on
  /// which rank runs it.
  int64_t seedIndex = -1;
};

struct Trace {
  std::string source;
  std::string format; // "mooncake", "prefix", "multi-turn"
  std::vector<TraceRequest> requests;
};

struct TraceOptions {
  /// Tokens a prefix-trace hash stands for (the model's hash block).
  int64_t tokensPerPrefixHash = 16;
  /// Output length of prefix-trace requests (the format has none).
  int64_t prefixOutputTokens = 16;
};

/// Parses a trace's text; `source` names it in errors.
Result<Trace> parseTrace(const std::string &text, const std::string &source,
                         const TraceOptions &options = {});
/// Reads and parses a trace file.
Result<Trace> readTraceFile(const std::string &path,
                            const TraceOptions &options = {});

struct MultiTurnSpec {
  int64_t conversations = 64;
  int64_t turns = 4;
  int64_t systemPrompts = 4; // shared system prompts (Zipf-like choice)
  int64_t systemTokens = 512;
  int64_t userMin = 16, userMax = 128;
  int64_t outputMin = 8, outputMax = 64;
  uint64_t seed = 1;
};

/// Parses "multi-turn[:key=value,...]" (keys: the members above).
Result<MultiTurnSpec> parseMultiTurnSpec(const std::string &spec);
/// The generated trace: turn t of conversation c follows turn t-1; the
/// first turns arrive in conversation order.
Trace multiTurnTrace(const MultiTurnSpec &spec);

/// A trace from a file path or a "multi-turn:..." spec.
Result<Trace> loadTrace(const std::string &pathOrSpec,
                        const TraceOptions &options = {});

} // namespace serve
} // namespace poolrt

#endif
