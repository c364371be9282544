//===- BlockHash.cpp - Chained content hashes of hash blocks --------------===//

#include "poolrt/BlockHash.h"

#include <cstring>
#define XXH_STATIC_LINKING_ONLY // XXH64_state_t on the stack
#include <xxhash.h>

namespace poolrt {

static void putLE64(unsigned char *out, uint64_t v) {
  for (int i = 0; i < 8; ++i)
    out[i] = (unsigned char)(v >> (8 * i));
}

BlockHash hashBlock(std::optional<BlockHash> parent, const int64_t *tokens,
                    size_t count) {
  constexpr size_t kSmall = 64; // tokens hashed one-shot from a stack copy
  unsigned char buf[8 * (kSmall + 1)];
  size_t at = 0;
  if (parent) {
    putLE64(buf, *parent);
    at = 8;
  }
  if (count <= kSmall) {
    // One-shot: the streaming state's setup costs more than a small copy.
    for (size_t k = 0; k < count; ++k)
      putLE64(buf + at + 8 * k, uint64_t(tokens[k]));
    return XXH64(buf, at + 8 * count, 0);
  }
  XXH64_state_t state;
  XXH64_reset(&state, 0);
  XXH64_update(&state, buf, at);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  // The token ids already are little-endian int64s in memory.
  XXH64_update(&state, tokens, 8 * count);
#else
  // Little-endian int64 token ids: feed in chunks to keep memory flat.
  for (size_t i = 0; i < count;) {
    size_t n = count - i < kSmall ? count - i : kSmall;
    for (size_t k = 0; k < n; ++k)
      putLE64(buf + 8 * k, uint64_t(tokens[i + k]));
    XXH64_update(&state, buf, 8 * n);
    i += n;
  }
#endif
  return XXH64_digest(&state);
}

std::optional<BlockHash> saltRoot(const std::string &salt) {
  if (salt.empty())
    return std::nullopt;
  static const char kTag[] = "poolrt-cache-salt"; // with its NUL
  XXH64_state_t state;
  XXH64_reset(&state, 0);
  XXH64_update(&state, kTag, sizeof kTag);
  XXH64_update(&state, salt.data(), salt.size());
  return XXH64_digest(&state);
}

void hashBlocks(std::optional<BlockHash> parent, const int64_t *tokens,
                size_t blockTokens, size_t numBlocks, BlockHash *out) {
  for (size_t b = 0; b < numBlocks; ++b) {
    out[b] = hashBlock(parent, tokens + b * blockTokens, blockTokens);
    parent = out[b];
  }
}

uint64_t tokenPrint(const int32_t *tokens, size_t count) {
  return XXH3_64bits(tokens, count * sizeof(int32_t));
}

} // namespace poolrt
