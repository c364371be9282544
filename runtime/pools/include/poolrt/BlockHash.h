//===- BlockHash.h - Chained content hashes of hash blocks ------*- C++ -*-===//
//
// A block's hash names its whole prefix: it is a function of its parent's
// hash and its own token ids, so equal hashes mean equal prefixes (up to
// 64-bit collisions). Two chains exist (specs/block-hash.md):
//
//   Xxh3 (the default): h_i = XXH3-64 of the block's token ids as int64
//     little-endian, seeded with h_{i-1} (with the root, 0 unless a cache
//     salt gives one, for the first block). The parent enters as the seed,
//     so a link costs one short XXH3 (about 12 ns at 16 tokens) instead of
//     an XXH64 whose first lane waits for the parent.
//   Xxh64 (the reference's, spec/semantics.md "hash_chain"): h_i =
//     XXH64(seed 0) over [h_{i-1} as 8 little-endian bytes, unless i is the
//     first block] ++ [the token ids as int64 little-endian]. Kept for
//     compatibility with hashes an engine computes the reference's way
//     (the conformance vectors, KV-event consumers that hash themselves).
//
// Hash values are unsigned 64-bit; kNoHash is the "no hash" sentinel (the
// reference's -1).
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

/// Which chain a cache hashes with (see the file comment). One cache uses
/// one scheme; the tier folds it into the layout fingerprint, so caches of
/// different schemes never read each other's objects.
enum class HashScheme : uint8_t { Xxh3 = 0, Xxh64 = 1 };

/// "xxh3" / "xxh64".
const char *hashSchemeName(HashScheme s);
/// The scheme a name (hashSchemeName's) gives, or nullopt.
std::optional<HashScheme> parseHashScheme(const std::string &name);

/// "No hash": a block or record that holds no indexed content. Never a
/// valid key of a content index (publishing it is refused).
inline constexpr BlockHash kNoHash = ~BlockHash(0);

/// The hash of one block given its parent's (nullopt for the first block).
BlockHash hashBlock(HashScheme scheme, std::optional<BlockHash> parent,
                    const int64_t *tokens, size_t count);

/// The parent of a request's first block under a cache salt (vLLM's
/// `cache_salt`, one per tenant): nullopt for no salt (the reference's
/// chain), else XXH64 of "poolrt-cache-salt\0" + salt. Folding it into the
/// first block changes every hash of the chain, so requests of different
/// tenants never share a prefix hit, and a hit cannot leak by timing what
/// another tenant asked.
std::optional<BlockHash> saltRoot(const std::string &salt);

/// Hash `numBlocks` consecutive blocks of `blockTokens` tokens each, chained
/// from `parent`, into `out`.
void hashBlocks(HashScheme scheme, std::optional<BlockHash> parent,
                const int64_t *tokens, size_t blockTokens, size_t numBlocks,
                BlockHash *out);


/// A block's token fingerprint: XXH3-64 of its token ids as stored (int32,
/// native order). The collision check compares fingerprints instead of the
/// tokens themselves: a false hit then needs the chained hash and this
/// independent hash to collide together (about 2^-128 per block), and the
/// check reads 8 bytes a block instead of 4 per token.
uint64_t tokenPrint(const int32_t *tokens, size_t count);

} // namespace poolrt

#endif
