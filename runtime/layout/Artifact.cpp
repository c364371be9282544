//===- Artifact.cpp - The .poolpack artifact container --------------------===//
//
// Layout (specs/artifact-format.md), all integers little-endian:
//
//   header (64 bytes)
//     0  char[8] magic "POOLPACK"
//     8  u64     checksum: XXH64, seed 0, of bytes [16, total size)
//    16  u32     format version
//    20  u32     section count
//    24  u64     total size of the file in bytes
//    32  u8[32]  reserved, zero
//   section table at 64, count entries of 32 bytes
//     0  u64 name offset     8  u64 payload offset
//    16  u64 payload size   24  u32 name length   28  u32 reserved, zero
//   names, then payloads each at a 64-byte aligned file offset.
//
//===----------------------------------------------------------------------===//

#include "poolrt/Artifact.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <unordered_set>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <xxhash.h>

namespace poolrt {

namespace {

constexpr char kMagic[8] = {'P', 'O', 'O', 'L', 'P', 'A', 'C', 'K'};
constexpr size_t kChecksumOffset = 8;
constexpr size_t kChecksummedFrom = 16;
constexpr size_t kVersionOffset = 16;
constexpr size_t kCountOffset = 20;
constexpr size_t kTotalSizeOffset = 24;
constexpr size_t kReservedOffset = 32;

// --- little-endian byte access, byte by byte (no alignment assumptions) ---

uint64_t loadLE(const unsigned char *p, unsigned n) {
  uint64_t v = 0;
  for (unsigned i = 0; i < n; ++i)
    v |= uint64_t(p[i]) << (8 * i);
  return v;
}
uint32_t load32(const unsigned char *p) { return uint32_t(loadLE(p, 4)); }
uint64_t load64(const unsigned char *p) { return loadLE(p, 8); }

void storeLE(std::string &out, size_t at, uint64_t v, unsigned n) {
  for (unsigned i = 0; i < n; ++i)
    out[at + i] = char((v >> (8 * i)) & 0xff);
}

uint64_t alignUp(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

uint64_t checksumOf(const unsigned char *file, size_t size) {
  return XXH64(file + kChecksummedFrom, size - kChecksummedFrom, 0);
}

std::string hex64(uint64_t v) {
  static const char digits[] = "0123456789abcdef";
  std::string s = "0x";
  for (int i = 15; i >= 0; --i)
    s += digits[(v >> (4 * i)) & 0xf];
  return s;
}

bool validNameChar(unsigned char c) { return c >= 0x21 && c <= 0x7e; }

/// Why `name` is not a valid section name, or empty when it is.
std::string nameProblem(const std::string &name) {
  if (name.empty())
    return "empty section name";
  if (name.size() > kArtifactMaxNameLength)
    return "section name of " + std::to_string(name.size()) +
           " bytes, the limit is " + std::to_string(kArtifactMaxNameLength);
  for (size_t i = 0; i < name.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(name[i]);
    if (!validNameChar(c))
      return "section name has byte " + hex64(c).substr(0, 2) +
             hex64(c).substr(16) +
             " at position " + std::to_string(i) +
             ", names are printable ASCII without spaces";
  }
  return {};
}

Error corrupt(const std::string &what, uint64_t offset) {
  return Error::invalid("artifact: " + what + " (at offset " +
                        std::to_string(offset) + ")");
}

} // namespace

const ArtifactSection *Artifact::find(const std::string &name) const {
  for (const ArtifactSection &s : sections)
    if (s.name == name)
      return &s;
  return nullptr;
}

Status validateArtifact(const Artifact &a) {
  if (a.version != kArtifactVersion)
    return Error::invalid("artifact: format version " +
                          std::to_string(a.version) + ", this writer writes " +
                          std::to_string(kArtifactVersion));
  if (a.sections.size() > kArtifactMaxSections)
    return Error::invalid("artifact: " + std::to_string(a.sections.size()) +
                          " sections, the limit is " +
                          std::to_string(kArtifactMaxSections));
  std::unordered_set<std::string> seen;
  for (size_t i = 0; i < a.sections.size(); ++i) {
    const std::string &name = a.sections[i].name;
    std::string problem = nameProblem(name);
    if (!problem.empty())
      return Error::invalid("artifact: section " + std::to_string(i) + ": " +
                            problem);
    if (!seen.insert(name).second)
      return Error::invalid("artifact: duplicate section name \"" + name +
                            "\" (section " + std::to_string(i) + ")");
  }
  return Status::success();
}

std::string serializeArtifact(const Artifact &a) {
  const size_t count = a.sections.size();
  const uint64_t tableEnd =
      kArtifactHeaderSize + uint64_t(count) * kArtifactSectionEntrySize;
  uint64_t cursor = tableEnd;
  std::vector<uint64_t> nameOff(count), dataOff(count);
  for (size_t i = 0; i < count; ++i) {
    nameOff[i] = cursor;
    cursor += a.sections[i].name.size();
  }
  for (size_t i = 0; i < count; ++i) {
    cursor = alignUp(cursor, kArtifactPayloadAlign);
    dataOff[i] = cursor;
    cursor += a.sections[i].data.size();
  }
  const uint64_t total = cursor;

  std::string out(size_t(total), '\0');
  std::memcpy(&out[0], kMagic, sizeof(kMagic));
  storeLE(out, kVersionOffset, a.version, 4);
  storeLE(out, kCountOffset, count, 4);
  storeLE(out, kTotalSizeOffset, total, 8);
  for (size_t i = 0; i < count; ++i) {
    const ArtifactSection &s = a.sections[i];
    size_t e = kArtifactHeaderSize + i * kArtifactSectionEntrySize;
    storeLE(out, e + 0, nameOff[i], 8);
    storeLE(out, e + 8, dataOff[i], 8);
    storeLE(out, e + 16, s.data.size(), 8);
    storeLE(out, e + 24, s.name.size(), 4);
    if (!s.name.empty())
      std::memcpy(&out[size_t(nameOff[i])], s.name.data(), s.name.size());
    if (!s.data.empty())
      std::memcpy(&out[size_t(dataOff[i])], s.data.data(), s.data.size());
  }
  storeLE(out, kChecksumOffset,
          checksumOf(reinterpret_cast<const unsigned char *>(out.data()),
                     out.size()),
          8);
  return out;
}

Result<Artifact> parseArtifact(const void *data, size_t size) {
  const unsigned char *p = static_cast<const unsigned char *>(data);
  if (size > 0 && !p)
    return Error::invalid("artifact: null data with a non-zero size");

  // Magic. A short prefix of the magic is a truncated file, anything else is
  // not an artifact at all.
  size_t magicBytes = std::min(size, sizeof(kMagic));
  for (size_t i = 0; i < magicBytes; ++i)
    if (p[i] != static_cast<unsigned char>(kMagic[i]))
      return corrupt("bad magic: not a .poolpack artifact, expected "
                     "\"POOLPACK\"",
                     i);
  if (size < kArtifactHeaderSize)
    return corrupt("truncated: the file is " + std::to_string(size) +
                       " bytes, smaller than the " +
                       std::to_string(kArtifactHeaderSize) + "-byte header",
                   size);

  const uint32_t version = load32(p + kVersionOffset);
  if (version != kArtifactVersion)
    return corrupt("artifact format version " + std::to_string(version) +
                       ", this reader reads " +
                       std::to_string(kArtifactVersion),
                   kVersionOffset);

  const uint64_t total = load64(p + kTotalSizeOffset);
  if (uint64_t(size) < total)
    return corrupt("truncated: the file is " + std::to_string(size) +
                       " bytes, the header says " + std::to_string(total),
                   size);
  if (uint64_t(size) > total) {
    if (total < kArtifactHeaderSize)
      return corrupt("total size " + std::to_string(total) +
                         " is smaller than the header",
                     kTotalSizeOffset);
    return corrupt("trailing garbage: " + std::to_string(size - total) +
                       " bytes after the end the header states (" +
                       std::to_string(total) + " bytes)",
                   total);
  }

  const uint64_t stored = load64(p + kChecksumOffset);
  const uint64_t actual = checksumOf(p, size);
  if (stored != actual)
    return corrupt("checksum mismatch: the header says " + hex64(stored) +
                       ", bytes " + std::to_string(kChecksummedFrom) + ".." +
                       std::to_string(size) + " hash to " + hex64(actual),
                   kChecksumOffset);

  for (size_t i = kReservedOffset; i < kArtifactHeaderSize; ++i)
    if (p[i] != 0)
      return corrupt("reserved header byte is not zero", i);

  const uint32_t count = load32(p + kCountOffset);
  if (count > kArtifactMaxSections)
    return corrupt("section count " + std::to_string(count) +
                       " exceeds the limit of " +
                       std::to_string(kArtifactMaxSections),
                   kCountOffset);
  const uint64_t tableEnd =
      kArtifactHeaderSize + uint64_t(count) * kArtifactSectionEntrySize;
  if (tableEnd > total)
    return corrupt("section count " + std::to_string(count) + " needs a " +
                       std::to_string(tableEnd - kArtifactHeaderSize) +
                       "-byte section table, the artifact is " +
                       std::to_string(total) + " bytes",
                   kCountOffset);

  struct Region {
    uint64_t begin, end;
    std::string what;
  };
  std::vector<Region> regions;
  regions.reserve(size_t(count) * 2);
  Artifact a;
  a.version = version;
  a.sections.reserve(count);
  std::unordered_set<std::string> seen;

  for (uint32_t i = 0; i < count; ++i) {
    const uint64_t e = kArtifactHeaderSize + uint64_t(i) * kArtifactSectionEntrySize;
    const unsigned char *entry = p + e;
    const uint64_t nameOff = load64(entry + 0);
    const uint64_t dataOff = load64(entry + 8);
    const uint64_t dataSize = load64(entry + 16);
    const uint32_t nameLen = load32(entry + 24);
    const uint32_t reserved = load32(entry + 28);
    const std::string where = "section " + std::to_string(i);

    if (reserved != 0)
      return corrupt(where + ": reserved field is not zero", e + 28);
    if (nameLen == 0)
      return corrupt(where + ": empty section name", e + 24);
    if (nameLen > kArtifactMaxNameLength)
      return corrupt(where + ": name length " + std::to_string(nameLen) +
                         " exceeds the limit of " +
                         std::to_string(kArtifactMaxNameLength),
                     e + 24);
    if (nameOff < tableEnd || nameOff > total || nameLen > total - nameOff)
      return corrupt(where + ": name [" + std::to_string(nameOff) + ", +" +
                         std::to_string(nameLen) +
                         ") lies outside the name and payload area [" +
                         std::to_string(tableEnd) + ", " +
                         std::to_string(total) + ")",
                     e + 0);
    for (uint32_t k = 0; k < nameLen; ++k)
      if (!validNameChar(p[nameOff + k]))
        return corrupt(where + ": section name has a non-printable byte, "
                               "names are printable ASCII without spaces",
                       nameOff + k);
    std::string name(reinterpret_cast<const char *>(p + nameOff), nameLen);
    const std::string named = where + " (\"" + name + "\")";

    if (dataOff % kArtifactPayloadAlign != 0)
      return corrupt(named + ": payload offset " + std::to_string(dataOff) +
                         " is not a multiple of " +
                         std::to_string(kArtifactPayloadAlign),
                     e + 8);
    if (dataOff < tableEnd || dataOff > total || dataSize > total - dataOff)
      return corrupt(named + ": payload [" + std::to_string(dataOff) + ", +" +
                         std::to_string(dataSize) +
                         ") lies outside the name and payload area [" +
                         std::to_string(tableEnd) + ", " +
                         std::to_string(total) + ")",
                     e + 8);
    if (!seen.insert(name).second)
      return corrupt("duplicate section name \"" + name + "\" (" + where + ")",
                     e);

    regions.push_back({nameOff, nameOff + nameLen, named + " name"});
    if (dataSize > 0)
      regions.push_back({dataOff, dataOff + dataSize, named + " payload"});
    a.sections.push_back(
        {std::move(name),
         std::string(reinterpret_cast<const char *>(p + dataOff),
                     size_t(dataSize))});
  }

  std::sort(regions.begin(), regions.end(),
            [](const Region &x, const Region &y) {
              return x.begin != y.begin ? x.begin < y.begin : x.end < y.end;
            });
  for (size_t i = 1; i < regions.size(); ++i)
    if (regions[i].begin < regions[i - 1].end)
      return corrupt(regions[i].what + " overlaps " + regions[i - 1].what,
                     regions[i].begin);
  return a;
}

// --- files ---

namespace {

std::string sysError(const std::string &what, const std::string &path,
                     int err) {
  return what + " '" + path + "': " + std::strerror(err);
}

bool writeAll(int fd, const char *p, size_t n, int &err) {
  while (n > 0) {
    ssize_t w = ::write(fd, p, n);
    if (w < 0) {
      if (errno == EINTR)
        continue;
      err = errno;
      return false;
    }
    p += w;
    n -= size_t(w);
  }
  return true;
}

} // namespace

Result<Artifact> readArtifactFile(const std::string &path) {
  int fd;
  do
    fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  while (fd < 0 && errno == EINTR);
  if (fd < 0)
    return Error::invalid(sysError("cannot open artifact", path, errno));
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    int err = errno;
    ::close(fd);
    return Error::invalid(sysError("cannot stat artifact", path, err));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return Error::invalid("cannot read artifact '" + path +
                          "': not a regular file");
  }
  // Read until EOF rather than trusting st_size alone: the file may change
  // under us, and the parser judges the bytes actually read.
  std::string bytes;
  bytes.reserve(size_t(std::max<off_t>(st.st_size, 0)));
  char buf[1 << 16];
  for (;;) {
    ssize_t r = ::read(fd, buf, sizeof(buf));
    if (r < 0) {
      if (errno == EINTR)
        continue;
      int err = errno;
      ::close(fd);
      return Error::invalid(sysError("cannot read artifact", path, err));
    }
    if (r == 0)
      break;
    bytes.append(buf, size_t(r));
  }
  ::close(fd);
  Result<Artifact> parsed = parseArtifact(bytes.data(), bytes.size());
  if (!parsed.ok()) {
    Error e = parsed.error();
    e.message = path + ": " + e.message;
    return e;
  }
  return parsed;
}

static const char *nonRegularKind(mode_t mode) {
  if (S_ISLNK(mode))
    return "a symbolic link";
  if (S_ISDIR(mode))
    return "a directory";
  if (S_ISCHR(mode))
    return "a character device";
  if (S_ISBLK(mode))
    return "a block device";
  if (S_ISFIFO(mode))
    return "a FIFO";
  if (S_ISSOCK(mode))
    return "a socket";
  return "not a regular file";
}

Status writeFileAtomically(const std::string &path, const std::string &bytes,
                           const char *what) {
  if (path.empty())
    return Error::invalid(std::string("cannot write ") + what + ": empty path");
  // Renaming over a device, a FIFO or a link would silently replace it
  // with a regular file: refuse instead, and touch nothing.
  struct stat st;
  if (::lstat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode))
    return Error::invalid(path + ": is " + nonRegularKind(st.st_mode) +
                          "; refusing to replace it with the " + what);

  // The temporary name extends the target's, so it lies in the same
  // directory and rename() is atomic. O_EXCL with a per-process counter
  // keeps concurrent writers apart; 0666 lets the umask decide the mode.
  static std::atomic<unsigned> counter{0};
  std::string tmp;
  int fd = -1;
  for (int attempt = 0; attempt < 100 && fd < 0; ++attempt) {
    tmp = path + ".tmp." + std::to_string(::getpid()) + "." +
          std::to_string(counter.fetch_add(1));
    do
      fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    while (fd < 0 && errno == EINTR);
    if (fd < 0 && errno != EEXIST)
      break;
  }
  if (fd < 0)
    return Error::invalid(sysError(
        (std::string("cannot create a temporary file for ") + what).c_str(),
        path, errno));

  int err = 0;
  bool ok = writeAll(fd, bytes.data(), bytes.size(), err);
  if (ok && ::fsync(fd) != 0) {
    err = errno;
    ok = false;
  }
  if (::close(fd) != 0 && ok) {
    err = errno;
    ok = false;
  }
  std::string cannot = std::string("cannot write ") + what;
  if (ok && ::rename(tmp.c_str(), path.c_str()) != 0) {
    err = errno;
    ::unlink(tmp.c_str());
    return Error::invalid(sysError(cannot.c_str(), path, err));
  }
  if (!ok) {
    ::unlink(tmp.c_str());
    return Error::invalid(sysError(cannot.c_str(), path, err));
  }
  return Status::success();
}

Status writeArtifactFile(const std::string &path, const Artifact &a) {
  if (Status v = validateArtifact(a); !v.ok())
    return v;
  return writeFileAtomically(path, serializeArtifact(a), "artifact");
}

} // namespace poolrt
