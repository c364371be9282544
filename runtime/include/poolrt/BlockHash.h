//===- BlockHash.h - Chained content hashes of hash blocks ------*- C++ -*-===//
//
// h_i = XXH64(seed 0) over [h_{i-1} as 8 little-endian bytes, unless i is
// the first block] ++ [the block's token ids as int64 little-endian]. A
// block's hash names its whole prefix, so equal hashes mean equal prefixes
// (up to 64-bit collisions). Hash values are unsigned 64-bit; kNoHash is the
// "no hash" sentinel (the reference's -1).
//
//===----------------------------------------------------------------------===//
#ifndef POOLRT_BLOCKHASH_H
#define POOLRT_BLOCKHASH_H

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace poolrt {

using BlockHash = uint64_t;

/// "No hash": a block or record that holds no indexed content. Never a
/// valid key of a content index (publishing it is refused).
inline constexpr BlockHash kNoHash = ~BlockHash(0);

/// The hash of one block given its parent's (nullopt for the first block).
BlockHash hashBlock(std::optional<BlockHash> parent, const int64_t *tokens,
                    size_t count);

/// The parent of a request's first block under a cache salt (vLLM's
/// `cache_salt`, one per tenant): nullopt for no salt (the reference's
/// chain), else XXH64 of "poolrt-cache-salt\0" + salt. Folding it into the
/// first block changes every hash of the chain, so requests of different
/// tenants never share a prefix hit, and a hit cannot leak by timing what
/// another tenant asked.
std::optional<BlockHash> saltRoot(const std::string &salt);

/// Hash `numBlocks` consecutive blocks of `blockTokens` tokens each, chained
/// from `parent`, into `out`.
void hashBlocks(std::optional<BlockHash> parent, const int64_t *tokens,
                size_t blockTokens, size_t numBlocks, BlockHash *out);

/// A block's token fingerprint: XXH3-64 of its token ids as stored (int32,
/// native order). The collision check compares fingerprints instead of the
/// tokens themselves: a false hit then needs the chained hash and this
/// independent hash to collide together (about 2^-128 per block), and the
/// check reads 8 bytes a block instead of 4 per token.
uint64_t tokenPrint(const int32_t *tokens, size_t count);

} // namespace poolrt

#endif
