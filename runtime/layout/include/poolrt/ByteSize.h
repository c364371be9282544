//===- ByteSize.h - Byte sizes as people write them -------------*- C++ -*-===//
//
// The one grammar for a size in bytes: poolc's --budget, pool-explore's
// budgets, the tier specs (host:4GiB, disk:DIR:64GiB) all read it here.
#ifndef POOLRT_BYTESIZE_H
#define POOLRT_BYTESIZE_H

#include <cstdint>
#include <optional>
#include <string>

namespace poolrt {
/// Parse "4096", "150GiB", "1.5 GiB", "512MiB", "64KiB", "1TiB" (binary
/// units; a trailing "B" alone means bytes). The result must be a whole
/// number of bytes in 0..2^63-1. On failure returns nullopt and a reason.
std::optional<int64_t> parseByteSize(const std::string &text,
                                     std::string &why);
} // namespace poolrt

#endif
