//===- ArtifactTest.cpp - The .poolpack container -------------------------===//
//
// Round trips, and refusal of every kind of damage: truncation at every
// length, every single-bit flip, wrong version, bad magic, trailing bytes,
// structural corruption behind a valid checksum. Runs under ASan/UBSan in CI,
// so every parse reads from a buffer of exactly the size it is given.
//
//===----------------------------------------------------------------------===//

#include "poolrt/Artifact.h"

#include <gtest/gtest.h>

#include <xxhash.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <random>
#include <sstream>

#include <sys/stat.h>
#include <unistd.h>
#include "test/Unit/TestKinds.h"

using namespace poolrt;
namespace fs = std::filesystem;

namespace {

Artifact sample() {
  Artifact a;
  a.sections.push_back({"manifest", "{\"fingerprint\":\"0123456789abcdef\"}"});
  a.sections.push_back({"header", "#pragma once\nconstexpr int kRows = 7;\n"});
  std::string elf("\x7f" "ELF\x02\x01\x01\0\0\0\0\0\0\0\0\0", 16);
  for (int i = 0; i < 300; ++i)
    elf.push_back(char(i * 37));
  a.sections.push_back({"code/gfx942", elf});
  a.sections.push_back({"code/empty", ""});
  a.sections.push_back({"code/host", std::string("a\0b\0\0c", 6)});
  return a;
}

Artifact small() {
  Artifact a;
  a.sections.push_back({"manifest", "{}"});
  a.sections.push_back({"code/x", std::string("\0\1\2", 3)});
  return a;
}

Result<Artifact> parseExact(const std::string &bytes, size_t len) {
  // A heap block of exactly `len` bytes so ASan sees any read past it.
  if (len == 0)
    return parseArtifact(nullptr, 0);
  std::unique_ptr<unsigned char[]> buf(new unsigned char[len]);
  std::memcpy(buf.get(), bytes.data(), len);
  return parseArtifact(buf.get(), len);
}
Result<Artifact> parseExact(const std::string &bytes) {
  return parseExact(bytes, bytes.size());
}

void put(std::string &b, size_t at, uint64_t v, unsigned n) {
  for (unsigned i = 0; i < n; ++i)
    b[at + i] = char((v >> (8 * i)) & 0xff);
}
uint64_t get(const std::string &b, size_t at, unsigned n) {
  uint64_t v = 0;
  for (unsigned i = 0; i < n; ++i)
    v |= uint64_t(static_cast<unsigned char>(b[at + i])) << (8 * i);
  return v;
}
// The checksum as specs/artifact-format.md defines it, computed
// independently of the implementation.
void reseal(std::string &b) {
  put(b, 8, XXH64(b.data() + 16, b.size() - 16, 0), 8);
}
size_t entry(size_t i) { return 64 + 32 * i; }

void expectRefused(const std::string &bytes, const std::string &needle,
                   const std::string &offset = "") {
  auto r = parseExact(bytes);
  ASSERT_FALSE(r.ok()) << "accepted; wanted: " << needle;
  EXPECT_EQ(r.error().kind, ErrorKind::InvalidArgument);
  EXPECT_NE(r.error().message.find(needle), std::string::npos)
      << r.error().message;
  if (!offset.empty()) {
    EXPECT_NE(r.error().message.find("(at offset " + offset + ")"),
              std::string::npos)
        << r.error().message;
  }
}

void expectSame(const Artifact &x, const Artifact &y) {
  EXPECT_EQ(x.version, y.version);
  ASSERT_EQ(x.sections.size(), y.sections.size());
  for (size_t i = 0; i < x.sections.size(); ++i) {
    EXPECT_EQ(x.sections[i].name, y.sections[i].name);
    EXPECT_EQ(x.sections[i].data, y.sections[i].data);
  }
}

TEST(Artifact, RoundTrip) {
  Artifact a = sample();
  ASSERT_TRUE(validateArtifact(a).ok());
  std::string bytes = serializeArtifact(a);
  EXPECT_EQ(bytes.compare(0, 8, "POOLPACK"), 0);
  EXPECT_EQ(get(bytes, 16, 4), kArtifactVersion);
  EXPECT_EQ(get(bytes, 20, 4), a.sections.size());
  EXPECT_EQ(get(bytes, 24, 8), bytes.size());
  // Payloads lie aligned and in place, so a loader can take them as is.
  for (size_t i = 0; i < a.sections.size(); ++i) {
    uint64_t off = get(bytes, entry(i) + 8, 8);
    EXPECT_EQ(off % kArtifactPayloadAlign, 0u);
    EXPECT_EQ(get(bytes, entry(i) + 16, 8), a.sections[i].data.size());
    EXPECT_EQ(bytes.substr(off, a.sections[i].data.size()), a.sections[i].data);
  }
  auto r = parseExact(bytes);
  ASSERT_TRUE(r.ok()) << r.error().message;
  expectSame(a, *r);
  ASSERT_NE(r->find("code/host"), nullptr);
  EXPECT_EQ(r->find("code/host")->data, std::string("a\0b\0\0c", 6));
  ASSERT_NE(r->find("code/empty"), nullptr);
  EXPECT_TRUE(r->find("code/empty")->data.empty());
  EXPECT_EQ(r->find("code/sm_90"), nullptr);
  // Deterministic bytes.
  EXPECT_EQ(serializeArtifact(*r), bytes);
}

TEST(Artifact, RoundTripNoSections) {
  Artifact a;
  std::string bytes = serializeArtifact(a);
  EXPECT_EQ(bytes.size(), kArtifactHeaderSize);
  auto r = parseExact(bytes);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_TRUE(r->sections.empty());
}

TEST(Artifact, RoundTripLargeBinary) {
  Artifact a;
  std::string big(1 << 20, '\0');
  std::mt19937 rng(7);
  for (char &c : big)
    c = char(rng());
  a.sections.push_back({"code/gfx950", big});
  a.sections.push_back({"code/sm_90", ".version 8.0\n.target sm_90\n"});
  auto r = parseExact(serializeArtifact(a));
  ASSERT_TRUE(r.ok()) << r.error().message;
  expectSame(a, *r);
}

TEST(Artifact, TruncatedAtEveryLength) {
  std::string bytes = serializeArtifact(sample());
  for (size_t len = 0; len < bytes.size(); ++len) {
    auto r = parseExact(bytes, len);
    ASSERT_FALSE(r.ok()) << "accepted a file truncated to " << len;
    EXPECT_EQ(r.error().kind, ErrorKind::InvalidArgument);
    EXPECT_NE(r.error().message.find("truncated"), std::string::npos)
        << len << ": " << r.error().message;
  }
  auto r = parseExact(bytes, 40);
  EXPECT_EQ(r.error().message,
            "artifact: truncated: the file is 40 bytes, smaller than the "
            "64-byte header (at offset 40)");
  r = parseExact(bytes, bytes.size() - 1);
  EXPECT_EQ(r.error().message,
            "artifact: truncated: the file is " +
                std::to_string(bytes.size() - 1) + " bytes, the header says " +
                std::to_string(bytes.size()) + " (at offset " +
                std::to_string(bytes.size() - 1) + ")");
}

TEST(Artifact, EveryBitFlipRefused) {
  for (const Artifact &a : {small(), sample()}) {
    const std::string good = serializeArtifact(a);
    ASSERT_TRUE(parseExact(good).ok());
    for (size_t bit = 0; bit < good.size() * 8; ++bit) {
      std::string bad = good;
      bad[bit / 8] = char(bad[bit / 8] ^ (1 << (bit % 8)));
      auto r = parseExact(bad);
      ASSERT_FALSE(r.ok()) << "accepted a flip of bit " << bit % 8
                           << " of byte " << bit / 8;
      EXPECT_EQ(r.error().kind, ErrorKind::InvalidArgument);
      EXPECT_FALSE(r.error().message.empty());
    }
  }
}

TEST(Artifact, ChecksumMismatchNamesTheField) {
  std::string bytes = serializeArtifact(small());
  bytes.back() = char(bytes.back() ^ 0x10);
  expectRefused(bytes, "checksum mismatch: the header says 0x", "8");
}

TEST(Artifact, WrongVersion) {
  std::string bytes = serializeArtifact(small());
  put(bytes, 16, 2, 4);
  reseal(bytes); // only the version is wrong
  auto r = parseExact(bytes);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, ErrorKind::InvalidArgument);
  EXPECT_EQ(r.error().message, "artifact: artifact format version 2, this "
                               "reader reads 1 (at offset 16)");
  // A writer asked for another version writes it; the reader refuses it.
  Artifact v0 = small();
  v0.version = 0;
  expectRefused(serializeArtifact(v0), "artifact format version 0", "16");
  EXPECT_ERROR_KIND(validateArtifact(v0), InvalidArgument);
}

TEST(Artifact, BadMagic) {
  std::string bytes = serializeArtifact(small());
  bytes[4] = 'X';
  reseal(bytes);
  expectRefused(bytes, "bad magic", "4");
  expectRefused("\x7f" "ELF", "bad magic", "0");
  expectRefused(std::string(200, '\0'), "bad magic", "0");
  expectRefused("POOLPACX" + std::string(100, '\0'), "bad magic", "7");
}

TEST(Artifact, TrailingBytes) {
  std::string bytes = serializeArtifact(small());
  const size_t n = bytes.size();
  expectRefused(bytes + '\0', "trailing garbage: 1 bytes", std::to_string(n));
  std::string more = bytes + "garbage";
  expectRefused(more, "trailing garbage: 7 bytes", std::to_string(n));
  reseal(more); // even with a checksum over the extra bytes
  expectRefused(more, "trailing garbage", std::to_string(n));
}

TEST(Artifact, DuplicateNames) {
  Artifact a = small();
  a.sections.push_back({"manifest", "{\"again\":1}"});
  EXPECT_ERROR_KIND(validateArtifact(a), InvalidArgument);
  expectRefused(serializeArtifact(a),
                "duplicate section name \"manifest\" (section 2)",
                std::to_string(entry(2)));
}

TEST(Artifact, BadNames) {
  for (std::string name : {std::string(""), std::string("a b"),
                           std::string("code\n"), std::string("x\0y", 3),
                           std::string("\xc3\xa9"), std::string(256, 'n')}) {
    Artifact a = small();
    a.sections[1].name = name;
    EXPECT_ERROR_KIND(validateArtifact(a), InvalidArgument);
    auto r = parseExact(serializeArtifact(a));
    ASSERT_FALSE(r.ok()) << "accepted name of " << name.size() << " bytes";
    EXPECT_EQ(r.error().kind, ErrorKind::InvalidArgument);
    EXPECT_NE(r.error().message.find("section 1"), std::string::npos)
        << r.error().message;
  }
  Artifact a = small();
  a.sections[0].name = "";
  expectRefused(serializeArtifact(a), "section 0: empty section name",
                std::to_string(entry(0) + 24));
}

// Structural damage behind a valid checksum: what a buggy writer, not a
// flipped bit, would produce.
TEST(Artifact, SectionTableOutOfBoundsOrOverlapping) {
  const std::string good = serializeArtifact(sample());
  const uint64_t total = good.size();
  auto edit = [&](size_t at, uint64_t v, unsigned n) {
    std::string b = good;
    put(b, at, v, n);
    reseal(b);
    return b;
  };
  // Absurd counts: refused before any allocation sized by them.
  expectRefused(edit(20, 0xffffffffu, 4),
                "section count 4294967295 exceeds the limit", "20");
  expectRefused(edit(20, kArtifactMaxSections, 4),
                "section count 4096 needs a 131072-byte section table", "20");
  // Payload runs past the end; size near 2^64 must not wrap.
  expectRefused(edit(entry(2) + 16, total, 8), "lies outside",
                std::to_string(entry(2) + 8));
  expectRefused(edit(entry(2) + 16, ~uint64_t(0), 8), "lies outside",
                std::to_string(entry(2) + 8));
  expectRefused(edit(entry(2) + 8, ~uint64_t(63), 8), "lies outside",
                std::to_string(entry(2) + 8));
  // Payload inside the header / section table.
  expectRefused(edit(entry(0) + 8, 64, 8), "lies outside",
                std::to_string(entry(0) + 8));
  // Misaligned payload.
  expectRefused(edit(entry(2) + 8, get(good, entry(2) + 8, 8) + 8, 8),
                "is not a multiple of 64", std::to_string(entry(2) + 8));
  // Two payloads on the same bytes.
  const uint64_t off0 = get(good, entry(0) + 8, 8);
  expectRefused(edit(entry(1) + 8, off0, 8), "overlaps",
                std::to_string(off0));
  // A name inside the table, past the end, or on top of another name.
  expectRefused(edit(entry(0), 70, 8), "name [70, +8) lies outside",
                std::to_string(entry(0)));
  expectRefused(edit(entry(0), total - 2, 8), "lies outside",
                std::to_string(entry(0)));
  expectRefused(edit(entry(1), get(good, entry(0), 8) + 2, 8), "overlaps");
  // Name lengths: zero and over the limit.
  expectRefused(edit(entry(1) + 24, 0, 4), "empty section name",
                std::to_string(entry(1) + 24));
  expectRefused(edit(entry(1) + 24, 0xffffffffu, 4), "name length",
                std::to_string(entry(1) + 24));
  // Reserved fields.
  expectRefused(edit(entry(3) + 28, 1, 4), "reserved field is not zero",
                std::to_string(entry(3) + 28));
  expectRefused(edit(40, 1, 1), "reserved header byte", "40");
  // A total size smaller than the header, with the file cut to match.
  expectRefused(edit(24, 10, 8), "total size 10 is smaller than the header",
                "24");
}

// Random damage with the checksum recomputed, so the structural checks (not
// the checksum) have to hold. Must never crash; whatever parses must
// re-serialize to something that parses the same.
TEST(Artifact, RandomStructuralDamageNeverCrashes) {
  const std::string good = serializeArtifact(sample());
  const size_t tableEnd = entry(sample().sections.size());
  std::mt19937_64 rng(12345);
  int accepted = 0;
  for (int iter = 0; iter < 20000; ++iter) {
    std::string b = good;
    int edits = 1 + int(rng() % 4);
    for (int k = 0; k < edits; ++k) {
      size_t at = 16 + rng() % (tableEnd - 16);
      switch (rng() % 3) {
      case 0:
        b[at] = char(rng());
        break;
      case 1:
        b[at] = char(b[at] ^ (1 << (rng() % 8)));
        break;
      default: // a small or boundary value in a whole field
        at = at & ~size_t(7);
        put(b, at, (rng() & 1) ? rng() % (good.size() + 64) : ~uint64_t(0) - rng() % 4, 8);
      }
    }
    reseal(b);
    auto r = parseExact(b);
    if (r.ok()) {
      ++accepted;
      auto again = parseExact(serializeArtifact(*r));
      ASSERT_TRUE(again.ok()) << again.error().message;
      expectSame(*r, *again);
    }
  }
  RecordProperty("accepted", accepted);
  // Most damage is refused.
  EXPECT_LT(accepted, 20000 / 2);
}

// --- files ---

class ArtifactFile : public ::testing::Test {
protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "poolpack-test-XXXXXX");
    std::vector<char> buf(tmpl.begin(), tmpl.end());
    buf.push_back('\0');
    ASSERT_NE(::mkdtemp(buf.data()), nullptr);
    dir = buf.data();
  }
  void TearDown() override {
    std::error_code ec;
    fs::permissions(dir, fs::perms::owner_all, fs::perm_options::add, ec);
    fs::remove_all(dir, ec);
  }
  std::vector<std::string> entries(const fs::path &d) const {
    std::vector<std::string> names;
    for (const auto &e : fs::directory_iterator(d))
      names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  }
  static std::string slurp(const fs::path &p) {
    std::ifstream in(p, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
  }
  fs::path dir;
};

TEST_F(ArtifactFile, WriteReadRoundTripAndReplace) {
  const std::string path = (dir / "m.poolpack").string();
  ASSERT_TRUE(writeArtifactFile(path, sample()).ok());
  auto r = readArtifactFile(path);
  ASSERT_TRUE(r.ok()) << r.error().message;
  expectSame(sample(), *r);
  EXPECT_EQ(slurp(path), serializeArtifact(sample()));
  // A second write replaces the file.
  ASSERT_TRUE(writeArtifactFile(path, small()).ok());
  r = readArtifactFile(path);
  ASSERT_TRUE(r.ok()) << r.error().message;
  expectSame(small(), *r);
  EXPECT_EQ(entries(dir), std::vector<std::string>{"m.poolpack"});
}

TEST_F(ArtifactFile, FailedWriteKeepsTheGoodFileAndLeavesNoTemp) {
  const std::string path = (dir / "m.poolpack").string();
  ASSERT_TRUE(writeArtifactFile(path, sample()).ok());
  const std::string before = slurp(path);

  // An invalid artifact is refused before anything is written.
  Artifact dup = small();
  dup.sections.push_back({"manifest", ""});
  Status s = writeArtifactFile(path, dup);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().kind, ErrorKind::InvalidArgument);
  EXPECT_NE(s.error().message.find("duplicate section name"), std::string::npos);
  EXPECT_EQ(slurp(path), before);
  EXPECT_EQ(entries(dir), std::vector<std::string>{"m.poolpack"});

  // The target is a directory: the rename fails, the temp file goes.
  fs::create_directory(dir / "adir");
  s = writeArtifactFile((dir / "adir").string(), small());
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().kind, ErrorKind::InvalidArgument);
  EXPECT_NE(s.error().message.find("adir"), std::string::npos)
      << s.error().message;
  EXPECT_TRUE(fs::is_directory(dir / "adir"));
  EXPECT_TRUE(entries(dir / "adir").empty());
  EXPECT_EQ(entries(dir), (std::vector<std::string>{"adir", "m.poolpack"}));

  // The parent is a regular file.
  s = writeArtifactFile(path + "/x.poolpack", small());
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().kind, ErrorKind::InvalidArgument);
  EXPECT_NE(s.error().message.find("Not a directory"), std::string::npos)
      << s.error().message;
  EXPECT_EQ(slurp(path), before);

  // The directory is not writable (root writes anyway, so only as a user).
  if (::geteuid() != 0) {
    fs::permissions(dir, fs::perms::owner_read | fs::perms::owner_exec);
    s = writeArtifactFile(path, small());
    fs::permissions(dir, fs::perms::owner_all);
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.error().kind, ErrorKind::InvalidArgument);
    EXPECT_NE(s.error().message.find("Permission denied"), std::string::npos)
        << s.error().message;
    EXPECT_EQ(slurp(path), before);
  }
  EXPECT_EQ(entries(dir), (std::vector<std::string>{"adir", "m.poolpack"}));
  auto r = readArtifactFile(path);
  ASSERT_TRUE(r.ok()) << r.error().message;
  expectSame(sample(), *r);
}

TEST_F(ArtifactFile, ReadErrors) {
  const std::string missing = (dir / "missing.poolpack").string();
  auto r = readArtifactFile(missing);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, ErrorKind::InvalidArgument);
  EXPECT_EQ(r.error().message,
            "cannot open artifact '" + missing + "': No such file or directory");

  r = readArtifactFile(dir.string());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, ErrorKind::InvalidArgument);
  EXPECT_NE(r.error().message.find("not a regular file"), std::string::npos);

  const std::string path = (dir / "bad.poolpack").string();
  std::string bytes = serializeArtifact(small());
  bytes.resize(bytes.size() - 3);
  std::ofstream(path, std::ios::binary) << bytes;
  r = readArtifactFile(path);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, ErrorKind::InvalidArgument);
  EXPECT_EQ(r.error().message.rfind(path + ": artifact: truncated", 0), 0u)
      << r.error().message;

  std::ofstream(path, std::ios::binary | std::ios::trunc); // empty file
  r = readArtifactFile(path);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, ErrorKind::InvalidArgument);
  EXPECT_NE(r.error().message.find("truncated: the file is 0 bytes"),
            std::string::npos)
      << r.error().message;
}

} // namespace
