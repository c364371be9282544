//===- StateTransfer.h - How per-request state is handed over -*- C++ -*-===//
//
// Every checkpoint decision downstream follows from one of three answers:
//   none()      nothing can be handed over; nothing is ever checkpointed.
//               successor_room = inf (never qualifies).
//   fork(n)     rolling state: the owner gives its group to the checkpoint
//               index and takes a fresh one, and the *next* forward reads the
//               old group and writes the new one, which takes n committed
//               tokens to come out self-contained. successor_room = n.
//   copy(id)    the state has the canonical byte layout `id` and is scattered
//               into PAGE units without disturbing the owner. Nothing binds
//               the successor forward. successor_room = 0.
// The kind is explicit because the earlier single integer (`min_fork_tokens`,
// 0 = "no forkable state") could not tell none from copy: both read 0. Code
// that still tests `forkTokens() == 0` to mean "cannot checkpoint" silently
// treats a copy backend as stateless; ask `kind()` or `successorRoom()`.
//
// The wire form (runner RPC) is the JSON object
//   {"kind": "fork", "fork_tokens": 1, "paged_layout_id": null}
// with exactly these three keys; fromWire() re-validates everything, so a
// value that crossed a process boundary is as trustworthy as one built here.
//
// Errors: the reference's ValueError and TypeError (a non-integer or boolean
// fork_tokens) both map to ErrorKind::InvalidArgument; messages follow the
// reference word for word.
//
//===----------------------------------------------------------------------===//
#ifndef POOLRT_STATETRANSFER_H
#define POOLRT_STATETRANSFER_H

#include "poolrt/Status.h"
#include "poolrt/TransferKind.h"

#include <cstdint>
#include <optional>
#include <string>

namespace poolrt {

class StateTransfer {
public:
  /// The default of every backend without per-request state to hand over.
  static StateTransfer none() { return StateTransfer(); }
  /// `tokens` must be positive.
  static Result<StateTransfer> fork(int tokens) {
    return fork(int64_t(tokens));
  }
  static Result<StateTransfer> fork(int64_t tokens);
  /// A boolean is not a token count (the reference raises TypeError).
  static Result<StateTransfer> fork(bool) = delete;
  /// `layoutId` must be non-empty.
  static Result<StateTransfer> copy(std::string layoutId);
  /// The general constructor every path goes through, with the reference's
  /// checks in its order: copy binds no tokens and needs a layout id; fork
  /// needs positive tokens and no layout; none carries neither; any other
  /// kind is refused.
  static Result<StateTransfer> make(const std::string &kind, int64_t forkTokens,
                                    std::optional<std::string> pagedLayoutId);

  /// Parse and validate the wire object (see the file comment).
  static Result<StateTransfer> fromWire(const std::string &json);
  /// The wire object, keys in the order kind, fork_tokens, paged_layout_id.
  std::string toWire() const;

  TransferKind kind() const { return kind_; }
  const char *kindName() const { return transferKindName(kind_); }
  int64_t forkTokens() const { return forkTokens_; }
  const std::optional<std::string> &pagedLayoutId() const { return layout_; }
  bool forks() const { return kind_ == TransferKind::Fork; }
  bool copies() const { return kind_ == TransferKind::Copy; }

  /// Tokens the forward after a checkpoint must carry: inf for none,
  /// fork_tokens for fork, 0 for copy.
  double successorRoom() const;

  bool operator==(const StateTransfer &o) const {
    return kind_ == o.kind_ && forkTokens_ == o.forkTokens_ &&
           layout_ == o.layout_;
  }
  bool operator!=(const StateTransfer &o) const { return !(*this == o); }

private:
  StateTransfer() = default;

  TransferKind kind_ = TransferKind::None;
  int64_t forkTokens_ = 0;
  std::optional<std::string> layout_;
};

} // namespace poolrt

#endif // POOLRT_STATETRANSFER_H
