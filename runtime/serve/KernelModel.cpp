//===- KernelModel.cpp - Forward through a kernel compiled against the header ===//

#include "poolrt/serve/Model.h"

#include "poolmodel_abi.h"

#include <dlfcn.h>

#include <cstdio>
#include <vector>

namespace poolrt {
namespace serve {

Model::~Model() = default;

namespace {

const poolmodel_ops *opsOf(const void *p) {
  return static_cast<const poolmodel_ops *>(p);
}

const char *codeName(int code) {
  switch (code) {
  case POOLMODEL_BAD_ARGS:
    return "bad arguments";
  case POOLMODEL_PAST_TABLE:
    return "a position past the request's blocks";
  case POOLMODEL_BAD_BLOCK:
    return "a block id outside the PAGE class";
  case POOLMODEL_OUT_OF_ARENA:
    return "an offset outside the arena";
  case POOLMODEL_NO_PLAN:
    return "the layout lacks what the model needs";
  case POOLMODEL_BACKEND:
    return "the backend's call failed";
  default:
    return "an unknown error";
  }
}

} // namespace

/// A call's arguments and the buffers they point at.
struct KernelModel::Call {
  std::vector<int> table;
  std::vector<long long> tokens;
  poolmodel_call c{};

  Call(const Request &r, int32_t stateId, int64_t start, int64_t count) {
    table.reserve(r.blockTable.size());
    for (BlockId b : r.blockTable)
      table.push_back(int(b.value));
    tokens.assign(r.tokens.begin(), r.tokens.end());
    c.start = start;
    c.count = count;
    c.state_id = stateId;
    c.block_table = table.data();
    c.table_len = (long long)table.size();
    c.tokens_len = (long long)tokens.size();
  }
};

KernelModel::~KernelModel() {
  if (lib_)
    dlclose(lib_);
}

Result<std::unique_ptr<KernelModel>>
KernelModel::load(const std::string &path, const SolvedLayout &layout,
                  Device &device, DevicePtr arena) {
  if (!layout.windowClasses().empty())
    return Error::invalid("model kernel " + path + ": the layout has window PAGE "
                          "classes ('" + layout.windowClasses().front()->name +
                          "'), which the model kernel ABI (poolmodel_abi.h) does "
                          "not address; serve it with the reference model");
  std::unique_ptr<KernelModel> m(new KernelModel());
  m->path_ = path;
  m->arena_ = arena;
  dlerror();
  m->lib_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!m->lib_) {
    const char *why = dlerror();
    return Error::invalid("model kernel '" + path + "': cannot load: " +
                          (why ? why : "unknown dlopen error"));
  }
  auto get = reinterpret_cast<poolmodel_get_ops_fn>(dlsym(m->lib_, "poolmodel_get_ops"));
  if (!get)
    return Error::invalid("model kernel '" + path +
                          "': no poolmodel_get_ops (not a model kernel)");
  const poolmodel_ops *ops = get();
  if (!ops || ops->abi_version != POOLMODEL_ABI_VERSION || !ops->forward ||
      !ops->checksum || !ops->backend || !ops->model)
    return Error::invalid("model kernel '" + path + "': ABI version " +
                          std::to_string(ops ? ops->abi_version : -1) +
                          ", this runtime speaks " +
                          std::to_string(POOLMODEL_ABI_VERSION));
  m->ops_ = ops;
  m->backend_ = ops->backend;
  if (m->backend_ != device.name())
    return Error::invalid("model kernel '" + path + "' is built for the " +
                          m->backend_ + " backend; the engine runs on " +
                          device.name());
  uint64_t want = layout.layoutFingerprint;
  if (ops->layout_fingerprint != want)
    return Error{ErrorKind::InvalidArgument,
                 "model kernel '" + path + "' was compiled against layout " +
                     layoutFingerprintText(ops->layout_fingerprint) + " (model '" +
                     ops->model + "'); the artifact's layout is " +
                     layoutFingerprintText(want) + " (model '" + layout.model +
                     "'): rebuild the kernel against this artifact's header"};
  return m;
}

std::string KernelModel::describe() const {
  return "kernel " + path_ + " (" + backend_ + ")";
}

Error KernelModel::callError(const char *what, int code, int64_t at) const {
  return Error{ErrorKind::State, std::string("model kernel: ") + what + ": " +
                                     codeName(code) + " (at " + std::to_string(at) + ")"};
}

Result<int64_t> KernelModel::forward(Request &r, int32_t stateId, int64_t start,
                                     int64_t count, bool extend, int64_t rejected) {
  if (start < 0 || count < 1 || rejected < 0)
    return Error::invalid("model kernel: forward of " + std::to_string(count) +
                          " tokens at " + std::to_string(start));
  Call call(r, stateId, start, count);
  call.c.extend = extend ? 1 : 0;
  call.c.rejected = rejected;
  if (extend)
    call.tokens.resize(size_t(start + count)); // room for the samples fed back
  call.c.tokens = call.tokens.data();
  opsOf(ops_)->forward(arena_.addr, &call.c);
  accesses_ += call.c.accesses;
  if (call.c.error != POOLMODEL_OK)
    return callError("forward", call.c.error, call.c.error_at);
  if (extend)
    r.tokens.insert(r.tokens.end(), call.tokens.begin() + start + 1,
                    call.tokens.begin() + start + count);
  return int64_t(call.c.next);
}

Result<uint64_t> KernelModel::stateChecksum(const Request &r, int32_t stateId,
                                            int64_t pos) {
  Call call(r, stateId, pos, 0);
  call.c.tokens = call.tokens.data();
  opsOf(ops_)->checksum(arena_.addr, &call.c);
  accesses_ += call.c.accesses;
  if (call.c.error != POOLMODEL_OK)
    return callError("checksum", call.c.error, call.c.error_at);
  return uint64_t(call.c.checksum);
}

} // namespace serve
} // namespace poolrt
