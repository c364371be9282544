//===- Attention.h - Window rules of PAGE classes (full, sliding, chunked) -*- C++ -*-===//
//
// A PAGE class's attention pattern decides which of a request's blocks a
// forward reads, so which blocks it must hold, which it may release as the
// request advances, and which a prefix hit must find (specs/window-classes.md).
// These are the rules, as pure functions: the cache manager, the compiler's
// sizing and the reference model all call them, and the hand-computed
// vectors in test/Unit/WindowClassTest.cpp pin them.
//
//   full      a query at position t reads [0, t].
//   sliding W a query at t reads [max(0, t - (W - 1)), t]  (Mistral, Gemma 3,
//             gpt-oss: W tokens including itself).
//   chunked C a query at t reads [t - t mod C, t]           (Llama 4: local
//             attention inside aligned chunks of C tokens).
//
// Plain C++17, no exceptions.
//
//===----------------------------------------------------------------------===//
#ifndef POOLRT_ATTENTION_H
#define POOLRT_ATTENTION_H

#include "poolrt/Checked.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>

namespace poolrt {

enum class AttentionKind { Full, Sliding, Chunked };

inline const char *attentionKindName(AttentionKind k) {
  switch (k) {
  case AttentionKind::Full:
    return "full";
  case AttentionKind::Sliding:
    return "sliding";
  case AttentionKind::Chunked:
    return "chunked";
  }
  return "full";
}

inline std::optional<AttentionKind> parseAttentionKind(const std::string &s) {
  if (s == "full")
    return AttentionKind::Full;
  if (s == "sliding")
    return AttentionKind::Sliding;
  if (s == "chunked")
    return AttentionKind::Chunked;
  return std::nullopt;
}

/// The pattern of one PAGE class: its kind and its window (sliding: W) or
/// chunk (chunked: C) in tokens; `tokens` is 0 for full attention.
struct AttentionPattern {
  AttentionKind kind = AttentionKind::Full;
  int64_t tokens = 0;

  bool isWindow() const { return kind != AttentionKind::Full; }
  bool operator==(const AttentionPattern &o) const {
    return kind == o.kind && tokens == o.tokens;
  }

  /// The first position a query at position `t` (>= 0) reads.
  int64_t firstAttended(int64_t t) const {
    switch (kind) {
    case AttentionKind::Full:
      return 0;
    case AttentionKind::Sliding:
      return std::max<int64_t>(0, t - (tokens - 1));
    case AttentionKind::Chunked:
      return t - t % tokens;
    }
    return 0;
  }

  /// The first block a request must still hold when its next query is at
  /// position `next` (the computed-KV mark) and up to `margin` computed
  /// tokens may be rolled back (speculative drafts): blocks j < this are
  /// wholly before every position a later query reads, and are released.
  int64_t keptFrom(int64_t next, int64_t margin, int64_t blockSize) const {
    return firstAttended(std::max<int64_t>(0, next - margin)) / blockSize;
  }

  /// Most blocks a request holds between forwards: blocks
  /// [keptFrom(n, margin), ceil(n / bs)) for any n. Sliding:
  /// ceil((W - 1 + margin) / bs) + 1; chunked: ceil((C - 1 + margin) / bs) + 1.
  /// Full attention has no bound (0 here).
  int64_t ringBlocks(int64_t margin, int64_t blockSize) const {
    if (!isWindow())
      return 0;
    return ceilDiv(tokens - 1 + margin, blockSize) + 1;
  }

  /// The blocks a window class reserves per running request: its ring plus
  /// the fresh blocks of one forward of up to `forwardTokens` tokens. A
  /// request never holds more (forwards are capped to fit), so a pool of
  /// R x max_num_seqs blocks can never run dry under max_num_seqs requests.
  int64_t reserveBlocks(int64_t margin, int64_t forwardTokens,
                        int64_t blockSize) const {
    if (!isWindow())
      return 0;
    return ringBlocks(margin, blockSize) +
           ceilDiv(forwardTokens, blockSize);
  }

  /// Whether a prefix hit of `hitBlocks` blocks can resume this class:
  /// the first forward then starts at hitBlocks * bs and reads blocks
  /// [keptFrom(hitBlocks * bs, 0), hitBlocks), so exactly those must be in
  /// the class's index. `presentRun` is the length of the run of indexed
  /// blocks that ends at block hitBlocks - 1.
  bool hitResumable(int64_t hitBlocks, int64_t presentRun,
                    int64_t blockSize) const {
    if (hitBlocks <= 0)
      return true;
    int64_t need = hitBlocks - keptFrom(hitBlocks * blockSize, 0, blockSize);
    return presentRun >= need;
  }
};

} // namespace poolrt

#endif // POOLRT_ATTENTION_H
