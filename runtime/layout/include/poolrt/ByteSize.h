//===- SizeArg.h - Byte sizes on the command line ---------------*- C++ -*-===//
#ifndef POOL_TOOLS_SIZEARG_H
#define POOL_TOOLS_SIZEARG_H

#include <cstdint>
#include <optional>
#include <string>

namespace pool {
/// Parse "4096", "150GiB", "1.5 GiB", "512MiB", "64KiB", "1TiB" (binary
/// units; a trailing "B" alone means bytes). The result must be a whole
/// number of bytes in 0..2^63-1. On failure returns nullopt and a reason.
std::optional<int64_t> parseByteSize(const std::string &text,
                                     std::string &why);
} // namespace pool

#endif
