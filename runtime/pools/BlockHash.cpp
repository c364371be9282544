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
  XXH64_state_t state;
  XXH64_reset(&state, 0);
  unsigned char word[8];
  if (parent) {
    putLE64(word, *parent);
    XXH64_update(&state, word, 8);
  }
  // Little-endian int64 token ids: feed in chunks to keep memory flat.
  unsigned char buf[8 * 64];
  size_t i = 0;
  while (i < count) {
    size_t n = count - i < 64 ? count - i : 64;
    for (size_t k = 0; k < n; ++k)
      putLE64(buf + 8 * k, uint64_t(tokens[i + k]));
    XXH64_update(&state, buf, 8 * n);
    i += n;
  }
  return XXH64_digest(&state);
}

void hashBlocks(std::optional<BlockHash> parent, const int64_t *tokens,
                size_t blockTokens, size_t numBlocks, BlockHash *out) {
  for (size_t b = 0; b < numBlocks; ++b) {
    out[b] = hashBlock(parent, tokens + b * blockTokens, blockTokens);
    parent = out[b];
  }
}

} // namespace poolrt
