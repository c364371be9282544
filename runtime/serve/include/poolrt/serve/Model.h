//===- Model.h - What the serving loop forwards tokens through ----*- C++ -*-===//
//
// Two implementations of one deterministic stateful model (see
// ReferenceModel.h for what it computes):
//
//   * ReferenceModel reads the artifact's manifest (SolvedLayout) at run
//     time and reaches the arena through Device copies;
//   * KernelModel runs a kernel compiled against the artifact's address
//     header (models/reference/token_model.h, one shared object per model
//     and backend) on the arena directly.
//
// Their outputs must be byte-identical: the header and the manifest are
// two carriers of one solved layout.
//
//===----------------------------------------------------------------------===//
#ifndef POOLRT_SERVE_MODEL_H
#define POOLRT_SERVE_MODEL_H

#include "poolrt/CacheManager.h"
#include "poolrt/Device.h"
#include "poolrt/SolvedLayout.h"

#include <cstdint>
#include <memory>
#include <string>

namespace poolrt {
namespace serve {

class Model {
public:
  virtual ~Model();
  /// Forward positions [start, start + count) of `r` with state in
  /// `stateId` (a physical slot in a row space, a group otherwise; ignored
  /// without state); returns the token sampled after the last one. With
  /// `extend`, the model feeds its own samples (count - 1 are appended to
  /// r.tokens); `rejected` junk window rows follow the last position.
  virtual Result<int64_t> forward(Request &r, int32_t stateId, int64_t start,
                                  int64_t count, bool extend = false,
                                  int64_t rejected = 0) = 0;
  /// A checksum of everything a forward at `pos` would read.
  virtual Result<uint64_t> stateChecksum(const Request &r, int32_t stateId,
                                         int64_t pos) = 0;
  /// 8-byte arena accesses so far.
  virtual int64_t accesses() const = 0;
  /// "reference (manifest)" or "kernel PATH (host)".
  virtual std::string describe() const = 0;
};

/// A compiled model kernel (models/reference/poolmodel_abi.h) loaded from
/// a shared object. Refused: a file that is not one, an ABI of another
/// version, a kernel for another backend than `device`, or one compiled
/// against another layout than `layout` (its fingerprint, recomputed from
/// the manifest read, never taken from a stored copy).
class KernelModel : public Model {
public:
  static Result<std::unique_ptr<KernelModel>>
  load(const std::string &path, const SolvedLayout &layout, Device &device,
       DevicePtr arena);
  ~KernelModel() override;

  Result<int64_t> forward(Request &r, int32_t stateId, int64_t start,
                          int64_t count, bool extend = false,
                          int64_t rejected = 0) override;
  Result<uint64_t> stateChecksum(const Request &r, int32_t stateId,
                                 int64_t pos) override;
  int64_t accesses() const override { return accesses_; }
  std::string describe() const override;

private:
  KernelModel() = default;
  struct Call;
  Error callError(const char *what, int code, int64_t at) const;

  void *lib_ = nullptr;
  const void *ops_ = nullptr; // const poolmodel_ops *
  std::string path_, backend_;
  DevicePtr arena_;
  int64_t accesses_ = 0;
};

} // namespace serve
} // namespace poolrt

#endif
