//===- KernelPlan.h - The kernel test plan pool-kernel-check writes -*- C++ -*-===//
//
// `pool-kernel-check MODEL --gpu-plan FILE` checks the model's host kernels
// against its independent reference (written from the solved layout's
// definitions, not from the kernel descriptions) and, only if every check
// passes, writes fixed cases: the kernel and its ids, the arena spans to
// fill with patternWord and to poison with 0xA5, the spans to hash after,
// and the XXH64 the verified host lowering produced. A device run of the
// same cases (bench/gpu/gpu_check.cpp on raw CUDA, pool-device-check --plan
// through libpoolrt on any backend) must reproduce every hash: its
// expectations come from the reference, never from the artifact it tests.
//
// Header-only, plain C++17: the GPU machine builds gpu_check with g++.
//
//===----------------------------------------------------------------------===//
#ifndef POOL_TOOLS_KERNELPLAN_H
#define POOL_TOOLS_KERNELPLAN_H

#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace pool {
namespace plan {

/// The fill both sides use: 8-byte words from splitmix64 of the word's
/// offset in its space (1: the arena, 2: staging).
inline uint64_t patternWord(uint64_t offset, uint64_t space) {
  uint64_t z =
      (offset >> 3) + space * 0x9E3779B97F4A7C15ull + 0x632BE59BD9B4E019ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

struct Span {
  int64_t off = 0, len = 0;
};

struct Case {
  std::string name, kernel;
  int64_t items = 0, staging = 0, moved = 0;
  int64_t idsPerItem = 1; // (slot, unit_0, ..., unit_n-1): image store/restore
  std::vector<int32_t> ids;
  std::vector<Span> fill, fillStaging, poison, hash, hashStaging;
  std::string expect; // 16 hex digits
};

struct Plan {
  int64_t arenaBytes = 0;
  std::vector<Case> cases;
};

/// Reads a plan; false with `why` ("FILE:LINE: what") on anything but the
/// format pool-kernel-check writes.
inline bool readPlan(const std::string &path, Plan &plan, std::string &why) {
  std::ifstream in(path);
  if (!in) {
    why = path + ": cannot open";
    return false;
  }
  std::string line;
  int64_t lineNo = 0;
  auto bad = [&](const std::string &what) {
    why = path + ":" + std::to_string(lineNo) + ": " + what;
    return false;
  };
  while (std::getline(in, line)) {
    ++lineNo;
    std::istringstream ls(line);
    std::string key;
    if (!(ls >> key))
      continue;
    if (key == "arena_bytes") {
      if (!(ls >> plan.arenaBytes) || plan.arenaBytes < 1)
        return bad("arena_bytes needs a positive size");
    } else if (key == "case") {
      Case c;
      std::string w1, w2, w3;
      if (!(ls >> c.name >> c.kernel >> w1 >> c.items >> w2 >> c.staging >> w3 >>
            c.moved) ||
          w1 != "items" || w2 != "staging" || w3 != "moved")
        return bad("expected 'case NAME KERNEL items N staging B moved B'");
      std::string w;
      if (ls >> w) {
        if (w != "ids_per_item" || !(ls >> c.idsPerItem))
          return bad("expected 'ids_per_item N'");
      }
      plan.cases.push_back(c);
    } else if (plan.cases.empty() || key == "end") {
      if (key != "end")
        return bad("'" + key + "' before any case");
    } else if (key == "ids") {
      int32_t id;
      while (ls >> id)
        plan.cases.back().ids.push_back(id);
    } else if (key == "fill" || key == "fill_staging" || key == "poison" ||
               key == "hash" || key == "hash_staging") {
      Span s;
      if (!(ls >> s.off >> s.len) || s.off < 0 || s.len < 0)
        return bad(key + " needs OFFSET LENGTH >= 0");
      Case &c = plan.cases.back();
      (key == "fill" ? c.fill : key == "fill_staging" ? c.fillStaging
       : key == "poison" ? c.poison : key == "hash" ? c.hash : c.hashStaging)
          .push_back(s);
    } else if (key == "expect") {
      if (!(ls >> plan.cases.back().expect) || plan.cases.back().expect.size() != 16)
        return bad("expect needs 16 hex digits");
    } else {
      return bad("unknown key '" + key + "'");
    }
  }
  for (const Case &c : plan.cases) {
    if (c.items < 1 || c.idsPerItem < 1 ||
        int64_t(c.ids.size()) != c.items * c.idsPerItem) {
      why = path + ": case " + c.name + ": " + std::to_string(c.ids.size()) +
            " ids for " + std::to_string(c.items) + " items of " +
            std::to_string(c.idsPerItem) + " ids";
      return false;
    }
    if (c.expect.empty()) {
      why = path + ": case " + c.name + " has no expect line";
      return false;
    }
  }
  if (plan.arenaBytes < 1) {
    why = path + ": no arena_bytes line";
    return false;
  }
  return true;
}

} // namespace plan
} // namespace pool

#endif
