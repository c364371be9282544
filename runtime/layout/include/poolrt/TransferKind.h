//===- TransferKind.h - How a STATE class's state is handed over -*- C++ -*-===//
//
// The three answers a STATE class's `transfer` gives (specs/state-classes.md):
// none (never checkpointed), fork (a group handed to the checkpoint index and
// a fresh one taken), copy (the image scattered into PAGE units). The layout
// reads it from a manifest; the pools' StateTransfer builds on it. It lives
// here, at the bottom, so the layout need not know the pools.
//
//===----------------------------------------------------------------------===//
#ifndef POOLRT_TRANSFERKIND_H
#define POOLRT_TRANSFERKIND_H

namespace poolrt {

enum class TransferKind { None, Fork, Copy };

/// "none" / "fork" / "copy" (the wire spelling).
inline const char *transferKindName(TransferKind kind) {
  switch (kind) {
  case TransferKind::None:
    return "none";
  case TransferKind::Fork:
    return "fork";
  case TransferKind::Copy:
    return "copy";
  }
  return "?";
}

} // namespace poolrt

#endif
