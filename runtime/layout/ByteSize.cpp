//===- ByteSize.cpp - Byte sizes as people write them ---------------------===//

#include "poolrt/ByteSize.h"

#include <cctype>

std::optional<int64_t> poolrt::parseByteSize(const std::string &text,
                                           std::string &why) {
  size_t i = 0;
  while (i < text.size() && std::isdigit((unsigned char)text[i]))
    ++i;
  if (i == 0) {
    why = "expected a number of bytes, optionally with KiB/MiB/GiB/TiB";
    return std::nullopt;
  }
  // Integer part and fraction kept exact: value = whole + frac/10^digits.
  unsigned __int128 whole = 0;
  for (size_t k = 0; k < i; ++k) {
    whole = whole * 10 + (text[k] - '0');
    if (whole > (unsigned __int128)INT64_MAX * 10) {
      why = "the size overflows 64 bits";
      return std::nullopt;
    }
  }
  unsigned __int128 frac = 0, scale = 1;
  if (i < text.size() && text[i] == '.') {
    ++i;
    size_t start = i;
    while (i < text.size() && std::isdigit((unsigned char)text[i])) {
      if (scale < (unsigned __int128)1e18) {
        frac = frac * 10 + (text[i] - '0');
        scale *= 10;
      } else if (text[i] != '0') {
        why = "more than 18 fraction digits";
        return std::nullopt;
      }
      ++i;
    }
    if (i == start) {
      why = "expected digits after '.'";
      return std::nullopt;
    }
  }
  while (i < text.size() && text[i] == ' ')
    ++i;
  std::string unit = text.substr(i);
  unsigned __int128 mult;
  if (unit.empty() || unit == "B")
    mult = 1;
  else if (unit == "KiB")
    mult = 1ull << 10;
  else if (unit == "MiB")
    mult = 1ull << 20;
  else if (unit == "GiB")
    mult = 1ull << 30;
  else if (unit == "TiB")
    mult = 1ull << 40;
  else {
    why = "unknown unit '" + unit + "' (use B, KiB, MiB, GiB or TiB)";
    return std::nullopt;
  }
  unsigned __int128 bytes = whole * mult;
  unsigned __int128 fracBytes = frac * mult;
  if (fracBytes % scale != 0) {
    why = "the size is not a whole number of bytes";
    return std::nullopt;
  }
  bytes += fracBytes / scale;
  if (bytes > (unsigned __int128)INT64_MAX) {
    why = "the size overflows 64 bits";
    return std::nullopt;
  }
  return int64_t(bytes);
}
