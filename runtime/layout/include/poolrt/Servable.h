//===- Servable.h - What the runtime can serve, written once ----*- C++ -*-===//
//
// The one rule for "can the runtime serve this model?". Two callers:
//   * the compiler's pool-check-servable pass (passes/CheckServable.cpp)
//     builds a ServeShape from the declarations and refuses at the one that
//     asks for what the runtime cannot do, before an artifact is written;
//   * the runtime's cacheManagerConfig (pools/Setup.cpp) runs
//     checkServable(SolvedLayout) on every artifact it loads, which applies
//     the same shape rule to the manifest's classes and then the rules that
//     need solved numbers (block sizes, window reserves, kernels, the row
//     space's planning).
// The codegen backstop runs checkServable(SolvedLayout) on the manifest it
// is about to write, so no artifact the runtime refuses is ever written,
// and the compiler links no runtime library to know it.
//
// The pools' own create() functions still validate their arguments (they
// are an API of their own); a layout this rule accepts always passes them.
//
//===----------------------------------------------------------------------===//
#ifndef POOLRT_SERVABLE_H
#define POOLRT_SERVABLE_H

#include "poolrt/Attention.h"
#include "poolrt/Status.h"
#include "poolrt/TransferKind.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace poolrt {

struct SolvedLayout;

/// The hash block rule, for every reader of a declaration (the YAML front
/// end, the dialect's verifier, this rule on a manifest): a prefix-hash block
/// is one block, since the runtime does not serve decode-context parallelism.
/// Why `hashBlockSize` is refused, as the words after "hash_block_size N",
/// or none.
std::optional<std::string> hashBlockSizeRefusal(int64_t blockSize,
                                                int64_t hashBlockSize);

/// The window class rule, for the serve rule on a manifest and for the
/// pools' own WindowSet::create: a sliding or chunked pattern of >= 1
/// token, and a per-request reserve that passes its ring (of `margin`
/// rolled-back tokens at `blockSize`). Why not, as the words after
/// "window class 'NAME': ", or none.
std::optional<std::string> windowReserveRefusal(const AttentionPattern &pattern,
                                                int64_t reserveBlocks,
                                                int64_t margin, int64_t blockSize);

/// One entry class as the rule sees it.
struct ServeShapeClass {
  std::string name;
  bool page = false;   // a PAGE class (full or window); else STATE
  bool window = false; // a PAGE class with sliding or chunked attention
  /// A STATE class's declared transfer (an explicit none counts: it still
  /// claims a place in the request's state group).
  std::optional<TransferKind> transfer;
  bool slot = false; // the row space's slot (the derived STATE class)
  int64_t entriesPerReq = 1;
};

/// A model's classes in declaration order, and whether it has a row space.
struct ServeShape {
  std::string model;
  bool rowSpace = false;
  std::vector<ServeShapeClass> classes;
};

/// Why the runtime cannot serve a shape, and where to say it.
struct ServeRefusal {
  /// The class refused at; empty: the model itself.
  std::string subject;
  /// The refusal is about the subject's transfer (point at the declaration
  /// that carries it).
  bool atTransfer = false;
  /// A second class to point at (empty: none), with what to say there.
  std::string noteClass, noteText;
  std::string message;
};

/// The shape rule: the first refusal in declaration order, or none.
std::optional<ServeRefusal> checkServableShape(const ServeShape &shape);

/// The shape of a solved layout (a report's or an artifact's manifest).
ServeShape serveShapeOf(const SolvedLayout &layout);

/// The whole rule on a solved layout: the shape rule, then the solved
/// numbers. Errors are InvalidArgument, prefixed "artifact manifest: ", and
/// name the class or manifest key at fault. An artifact's layout (one with
/// kernels) must also carry the kernels its transfers need.
Status checkServable(const SolvedLayout &layout);

} // namespace poolrt

#endif
