//===- BlockHash.cpp - Chained content hashes of hash blocks --------------===//

#include "poolrt/BlockHash.h"

#include <cstring>
#define XXH_STATIC_LINKING_ONLY // the hash states on the stack
#include <xxhash.h>

namespace poolrt {

static void putLE64(unsigned char *out, uint64_t v) {
  for (int i = 0; i < 8; ++i)
    out[i] = (unsigned char)(v >> (8 * i));
}

const char *hashSchemeName(HashScheme s) {
  return s == HashScheme::Xxh64 ? "xxh64" : "xxh3";
}

std::optional<HashScheme> parseHashScheme(const std::string &name) {
  if (name == "xxh3")
    return HashScheme::Xxh3;
  if (name == "xxh64")
    return HashScheme::Xxh64;
  return std::nullopt;
}

namespace {

constexpr bool kLittleEndian =
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    true;
#else
    false;
#endif

/// The default chain's link: XXH3-64 of the ids (int64 LE) seeded with the
/// parent (0 for the first block).
BlockHash xxh3Link(std::optional<BlockHash> parent, const int64_t *tokens,
                   size_t count) {
  XXH64_hash_t seed = parent.value_or(0);
  if (kLittleEndian)
    return XXH3_64bits_withSeed(tokens, 8 * count, seed);
  unsigned char buf[8 * 64];
  XXH3_state_t state;
  XXH3_64bits_reset_withSeed(&state, seed);
  for (size_t i = 0; i < count;) {
    size_t n = count - i < 64 ? count - i : 64;
    for (size_t k = 0; k < n; ++k)
      putLE64(buf + 8 * k, uint64_t(tokens[i + k]));
    XXH3_64bits_update(&state, buf, 8 * n);
    i += n;
  }
  return XXH3_64bits_digest(&state);
}

/// The reference's link.
BlockHash xxh64Link(std::optional<BlockHash> parent, const int64_t *tokens,
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
    if (kLittleEndian && count > 0)
      std::memcpy(buf + at, tokens, 8 * count);
    else
      for (size_t k = 0; k < count; ++k)
        putLE64(buf + at + 8 * k, uint64_t(tokens[k]));
    return XXH64(buf, at + 8 * count, 0);
  }
  XXH64_state_t state;
  XXH64_reset(&state, 0);
  XXH64_update(&state, buf, at);
  if (kLittleEndian) {
    // The token ids already are little-endian int64s in memory.
    XXH64_update(&state, tokens, 8 * count);
  } else {
    // Little-endian int64 token ids: feed in chunks to keep memory flat.
    for (size_t i = 0; i < count;) {
      size_t n = count - i < kSmall ? count - i : kSmall;
      for (size_t k = 0; k < n; ++k)
        putLE64(buf + 8 * k, uint64_t(tokens[i + k]));
      XXH64_update(&state, buf, 8 * n);
      i += n;
    }
  }
  return XXH64_digest(&state);
}

} // namespace

BlockHash hashBlock(HashScheme scheme, std::optional<BlockHash> parent,
                    const int64_t *tokens, size_t count) {
  return scheme == HashScheme::Xxh64 ? xxh64Link(parent, tokens, count)
                                     : xxh3Link(parent, tokens, count);
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

void hashBlocks(HashScheme scheme, std::optional<BlockHash> parent,
                const int64_t *tokens, size_t blockTokens, size_t numBlocks,
                BlockHash *out) {
  for (size_t b = 0; b < numBlocks; ++b) {
    out[b] = hashBlock(scheme, parent, tokens + b * blockTokens, blockTokens);
    parent = out[b];
  }
}

uint64_t tokenPrint(const int32_t *tokens, size_t count) {
  return XXH3_64bits(tokens, count * sizeof(int32_t));
}

} // namespace poolrt
