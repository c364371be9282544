//===- HashVectors.cpp - Content hashing vectors --------------------------===//

#include "Vectors.h"

#include "poolrt/BlockHash.h"

using namespace conformance;
using namespace poolrt;

namespace {

void runHashChain(const json::Object &in, const json::Value &expV) {
  const json::Object &exp = *expV.getAsObject();
  ASSERT_EQ(i64(*in.get("first_parent")), -1);
  std::vector<BlockHash> chain;
  std::optional<BlockHash> parent;
  for (const json::Value &b : *in.getArray("blocks")) {
    std::vector<int64_t> tokens = intList(b);
    chain.push_back(hashBlock(HashScheme::Xxh64, parent, tokens.data(), tokens.size()));
    parent = chain.back();
  }
  // Digests pass 2^63: compare through their unsigned text.
  auto u64 = [](const json::Value &v) {
    if (auto u = v.getAsUINT64())
      return *u;
    return uint64_t(v.getAsInteger().value_or(0));
  };
  EXPECT_EQ(chain[0], u64(*exp.get("h0")));
  EXPECT_EQ(chain[1], u64(*exp.get("h1")));
  EXPECT_EQ(chain[2], u64(*exp.get("h2")));
  const json::Array &hex = *exp.getArray("hex");
  for (size_t i = 0; i < 3; ++i) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "0x%016llx", (unsigned long long)chain[i]);
    EXPECT_EQ(std::string(buf), str(hex[i]));
  }
  int64_t seven = 7;
  EXPECT_EQ(hashBlock(HashScheme::Xxh64, std::nullopt, &seven, 1), u64(*exp.get("single_token_7")));
  EXPECT_EQ(hashBlock(HashScheme::Xxh64, std::nullopt, nullptr, 0), u64(*exp.get("empty_block")));
  int64_t t123[] = {1, 2, 3};
  EXPECT_EQ(hashBlock(HashScheme::Xxh64, std::nullopt, t123, 3), u64(*exp.get("tokens_1_2_3_noparent")));
  // The batch form chains the same way.
  std::vector<int64_t> all;
  for (const json::Value &b : *in.getArray("blocks"))
    for (int64_t t : intList(b))
      all.push_back(t);
  BlockHash out[3];
  hashBlocks(HashScheme::Xxh64, std::nullopt, all.data(), 4, 3, out);
  EXPECT_EQ(out[2], chain[2]);
}

} // namespace

REGISTER_VECTORS("BlockManager.compute_hash (xxh64, seed 0; prefix = parent's "
                 "64-bit digest little-endian; tokens as int64 LE)",
                 runHashChain);
