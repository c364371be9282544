//===- TierTest.cpp - The tier's object codec and its backends ------------===//
//
// One conformance suite run against every backend (host memory, disk,
// host over disk, and Redis when POOLC_TEST_REDIS names a server: the ctest
// entry tier-redis starts one), then each backend's own faults: a store
// killed mid-write (kill -9 in a child), a full disk (RLIMIT_FSIZE), a
// restart, a damaged file, a Redis that is down, silent, or refuses the
// password.
//
//===----------------------------------------------------------------------===//

#include "poolrt/Tier.h"
#include "poolrt/TierTransfer.h"

#include "ByteLru.h" // the tier's private LRU (runtime/tier)

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <functional>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <random>
#include <condition_variable>
#include <mutex>
#include <thread>

using namespace poolrt;

namespace {

std::string tempDir(const std::string &tag) {
  std::string base = ::testing::TempDir() + "poolc-tier-" + tag + "-" +
                     std::to_string(::getpid()) + "-XXXXXX";
  std::vector<char> buf(base.begin(), base.end());
  buf.push_back('\0');
  char *d = ::mkdtemp(buf.data());
  EXPECT_NE(d, nullptr);
  return d ? std::string(d) : base;
}

std::string bytesOf(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::string s(n, '\0');
  for (char &c : s)
    c = char(rng() & 0xff);
  return s;
}

std::string keyOf(uint64_t fp, uint64_t h) { return TierKey{fp, h}.text(); }

const char *redisUrl() { return std::getenv("POOLC_TEST_REDIS"); }

// --- the object codec -------------------------------------------------------

TierGeometry geo() {
  TierGeometry g;
  g.layoutFingerprint = 0x1234abcd5678ef00ull;
  g.blockSize = 16;
  g.kvBlockBytes = 4096;
  g.checkpointBytes = 1000;
  return g;
}

TEST(TierObject, RoundTripsAndNamesEveryMismatch) {
  TierGeometry g = geo();
  TierKey k{g.layoutFingerprint, 0x77};
  std::string kv = bytesOf(3 * 4096, 1), ck = bytesOf(1000, 2);
  std::string obj = encodeTierObject(k, 3, kv, ck);
  ASSERT_EQ(int64_t(obj.size()), kTierHeaderBytes + 3 * 4096 + 1000);
  TierObjectView v;
  TierResult r = decodeTierObject(obj, k, g, 3, v);
  ASSERT_TRUE(r.ok()) << r.message;
  EXPECT_EQ(v.kv, kv);
  EXPECT_EQ(v.checkpoint, ck);

  auto fault = [&](const std::string &bytes, const TierKey &key, const TierGeometry &gg,
                   int64_t blocks) {
    TierObjectView w;
    return decodeTierObject(bytes, key, gg, blocks, w);
  };
  // Another boundary, another geometry, another size: intact, refused.
  EXPECT_EQ(fault(obj, {k.layoutFingerprint, 0x78}, g, 3).fault, TierFault::Mismatch);
  TierGeometry other = g;
  other.layoutFingerprint ^= 1;
  TierResult fp = fault(obj, {other.layoutFingerprint, 0x77}, other, 3);
  EXPECT_EQ(fp.fault, TierFault::Mismatch);
  EXPECT_NE(fp.message.find("layout fingerprint"), std::string::npos) << fp.message;
  EXPECT_EQ(fault(obj, k, g, 2).fault, TierFault::Mismatch);
  other = g;
  other.kvBlockBytes = 2048;
  EXPECT_EQ(fault(obj, k, other, 3).fault, TierFault::Mismatch);
  other = g;
  other.checkpointBytes = 999;
  EXPECT_EQ(fault(obj, k, other, 3).fault, TierFault::Mismatch);
  // Any flipped byte, in the header or the payload, and any truncation:
  // corrupt or mismatched, never accepted.
  for (size_t at : {size_t(0), size_t(9), size_t(20), size_t(33), size_t(60), size_t(70),
                    size_t(72), size_t(72 + 4096), obj.size() - 1}) {
    std::string bad = obj;
    bad[at] ^= 0x20;
    TierResult b = fault(bad, k, g, 3);
    EXPECT_FALSE(b.ok()) << "byte " << at;
    EXPECT_TRUE(b.fault == TierFault::Corrupt || b.fault == TierFault::Mismatch) << at;
  }
  for (size_t n : {size_t(0), size_t(10), size_t(71), size_t(72), obj.size() - 1})
    EXPECT_EQ(fault(obj.substr(0, n), k, g, 3).fault, TierFault::Corrupt) << n;
  EXPECT_EQ(fault(obj + "x", k, g, 3).fault, TierFault::Corrupt);
  // An object without a checkpoint (a chunk inside a save) is accepted,
  // with an empty one; a checkpoint of another size is not.
  TierObjectView bare;
  std::string kvOnly = encodeTierObject(k, 3, kv, "");
  ASSERT_TRUE(decodeTierObject(kvOnly, k, g, 3, bare).ok());
  EXPECT_TRUE(bare.checkpoint.empty());
  EXPECT_EQ(bare.kv, kv);
  EXPECT_EQ(fault(encodeTierObject(k, 3, kv, ck.substr(1)), k, g, 3).fault,
            TierFault::Mismatch);
}

TEST(TierObject, KeysArePrefixedByTheFingerprint) {
  EXPECT_EQ(TierKey({0xabc, 0x1}).text(), "poolc/0000000000000abc/0000000000000001");
  EXPECT_EQ(TierKey({0xabc, 0x1}).text().rfind(TierKey::prefix(0xabc), 0), 0u);
  EXPECT_TRUE(validTierKey(TierKey({1, 2}).text()));
  EXPECT_FALSE(validTierKey(""));
  EXPECT_FALSE(validTierKey("a b"));
  EXPECT_FALSE(validTierKey("../x"));
  EXPECT_FALSE(validTierKey("a_b"));
  EXPECT_FALSE(validTierKey(std::string(201, 'a')));
}

// --- one conformance suite, every backend -------------------------------------

struct Backend {
  std::string name;
  std::function<std::unique_ptr<TierBackend>(int64_t cap)> make;
  bool capped = true;
};

std::vector<Backend> backends() {
  std::vector<Backend> b;
  b.push_back({"host", [](int64_t cap) { return makeHostTier(cap); }});
  b.push_back({"disk", [](int64_t cap) {
                 DiskTierOptions o;
                 o.dir = tempDir("conf");
                 o.capBytes = cap;
                 auto t = openDiskTier(o);
                 EXPECT_TRUE(t.ok()) << t.error().message;
                 return t.ok() ? t.take() : nullptr;
               }});
  b.push_back({"host+disk", [](int64_t cap) {
                 DiskTierOptions o;
                 o.dir = tempDir("stack");
                 o.capBytes = cap;
                 auto d = openDiskTier(o);
                 EXPECT_TRUE(d.ok());
                 std::vector<std::unique_ptr<TierBackend>> l;
                 l.push_back(makeHostTier(cap));
                 l.push_back(d.take());
                 return makeStackedTier(std::move(l));
               }});
  if (redisUrl())
    b.push_back({"redis",
                 [](int64_t) {
                   RedisTierOptions o;
                   o.url = redisUrl();
                   auto t = openRedisTier(o);
                   EXPECT_TRUE(t.ok()) << t.error().message;
                   return t.ok() ? t.take() : nullptr;
                 },
                 false});
  return b;
}

std::string backendName(const ::testing::TestParamInfo<Backend> &i) {
  std::string n = i.param.name;
  for (char &c : n)
    if (!std::isalnum(static_cast<unsigned char>(c)))
      c = '_';
  return n;
}

class TierConformance : public ::testing::TestWithParam<Backend> {
protected:
  // Keys unique to this test run, so a shared Redis never sees stale ones.
  uint64_t fp = (uint64_t(::getpid()) << 32) ^
                uint64_t(std::chrono::steady_clock::now().time_since_epoch().count());
};

TEST_P(TierConformance, StoresExactBytesAndReplaces) {
  auto t = GetParam().make(1 << 20);
  ASSERT_TRUE(t);
  std::string a = bytesOf(5000, 3), b = bytesOf(777, 4);
  a[10] = '\0'; // binary-safe
  EXPECT_EQ(t->get(keyOf(fp, 1)).fault, TierFault::NotFound);
  EXPECT_EQ(t->contains(keyOf(fp, 1)).fault, TierFault::NotFound);
  ASSERT_TRUE(t->put(keyOf(fp, 1), a).ok());
  EXPECT_TRUE(t->contains(keyOf(fp, 1)).ok());
  TierGet g = t->get(keyOf(fp, 1));
  ASSERT_TRUE(g.ok()) << g.message;
  EXPECT_EQ(g.bytes, a);
  ASSERT_TRUE(t->put(keyOf(fp, 1), b).ok());
  EXPECT_EQ(t->get(keyOf(fp, 1)).bytes, b);
  ASSERT_TRUE(t->remove(keyOf(fp, 1)).ok());
  EXPECT_EQ(t->get(keyOf(fp, 1)).fault, TierFault::NotFound);
  EXPECT_TRUE(t->remove(keyOf(fp, 1)).ok()); // removing nothing is fine
}

TEST_P(TierConformance, RefusesBadKeysBeforeTouchingAnything) {
  auto t = GetParam().make(1 << 20);
  ASSERT_TRUE(t);
  for (const std::string &k : {std::string(""), std::string("a b"), std::string("../etc"),
                               std::string(300, 'k')}) {
    // One check, one message, whichever backend and operation.
    const std::string why = invalidTierKey(k).message;
    TierResult put = t->put(k, "x");
    EXPECT_EQ(put.fault, TierFault::Invalid) << k;
    EXPECT_EQ(put.message, why);
    TierGet get = t->get(k);
    EXPECT_EQ(get.fault, TierFault::Invalid) << k;
    EXPECT_EQ(get.message, why);
    EXPECT_EQ(t->contains(k).fault, TierFault::Invalid) << k;
    EXPECT_EQ(t->contains(k).message, why);
    EXPECT_EQ(t->remove(k).fault, TierFault::Invalid) << k;
    EXPECT_EQ(t->remove(k).message, why);
  }
  EXPECT_EQ(t->usage().objects, 0);
}

TEST_P(TierConformance, ConcurrentStoresAndLoadsKeepEveryObjectWhole) {
  auto t = GetParam().make(64 << 20);
  ASSERT_TRUE(t);
  std::atomic<int> bad{0};
  std::mutex mu;
  std::string why;
  auto note = [&](const std::string &m) {
    std::lock_guard<std::mutex> l(mu);
    if (why.empty())
      why = m;
  };
  std::vector<std::thread> threads;
  for (int w = 0; w < 4; ++w)
    threads.emplace_back([&, w] {
      for (uint64_t i = 0; i < 40; ++i) {
        uint64_t h = 100 + uint64_t(w) * 1000 + i; // never the shared key 7
        std::string v = bytesOf(2000 + size_t(i), uint32_t(h));
        TierResult p = t->put(keyOf(fp, h), v);
        if (!p.ok())
          ++bad, note("put: " + p.message);
        TierGet g = t->get(keyOf(fp, h));
        if (!g.ok() || g.bytes != v)
          ++bad, note("get: " + g.message);
        TierGet s = t->get(keyOf(fp, 7)); // a key every thread may race on
        if (!s.ok() && s.fault != TierFault::NotFound)
          ++bad, note("get 7: " + s.message);
        if (i % 8 == 0) {
          TierResult q = t->put(keyOf(fp, 7), std::string(100, char('a' + w)));
          if (!q.ok())
            ++bad, note("put 7: " + q.message);
        }
      }
    });
  for (auto &th : threads)
    th.join();
  EXPECT_EQ(bad.load(), 0) << why;
  TierGet last = t->get(keyOf(fp, 7));
  ASSERT_TRUE(last.ok());
  ASSERT_EQ(last.bytes.size(), 100u);
  EXPECT_EQ(last.bytes, std::string(100, last.bytes[0])); // one writer's, whole
}

INSTANTIATE_TEST_SUITE_P(Backends, TierConformance, ::testing::ValuesIn(backends()),
                         backendName);

// The byte cap is ours on the embedded backends only (a Redis is capped by
// the server's maxmemory policy: RedisServer.AFullServerRefusesTheStore),
// so this suite runs over the capped ones.
class CappedTierConformance : public TierConformance {};

TEST_P(CappedTierConformance, EvictsLeastRecentlyUsedUnderTheCap) {
  auto t = GetParam().make(10000);
  ASSERT_TRUE(t);
  for (uint64_t i = 0; i < 4; ++i)
    ASSERT_TRUE(t->put(keyOf(fp, i), bytesOf(3000, uint32_t(i))).ok());
  // 4 x 3000 > 10000: the oldest (0) went.
  EXPECT_EQ(t->get(keyOf(fp, 0)).fault, TierFault::NotFound);
  EXPECT_TRUE(t->get(keyOf(fp, 1)).ok()); // 1 is now the most recent
  ASSERT_TRUE(t->put(keyOf(fp, 9), bytesOf(3000, 9)).ok());
  EXPECT_EQ(t->get(keyOf(fp, 2)).fault, TierFault::NotFound); // LRU, not FIFO
  EXPECT_TRUE(t->get(keyOf(fp, 1)).ok());
  EXPECT_TRUE(t->get(keyOf(fp, 3)).ok());
  EXPECT_TRUE(t->get(keyOf(fp, 9)).ok());
  EXPECT_LE(t->usage().bytes, 10000);
  EXPECT_GE(t->usage().evictions, 2);
  // Larger than the whole cap: refused, nothing evicted for it.
  TierResult big = t->put(keyOf(fp, 50), bytesOf(10001, 5));
  EXPECT_EQ(big.fault, TierFault::TooLarge);
  EXPECT_TRUE(t->get(keyOf(fp, 9)).ok());
  EXPECT_EQ(t->get(keyOf(fp, 50)).fault, TierFault::NotFound);
}

std::vector<Backend> cappedBackends() {
  std::vector<Backend> all = backends(), out;
  for (const Backend &b : all)
    if (b.capped)
      out.push_back(b);
  return out;
}

INSTANTIATE_TEST_SUITE_P(Backends, CappedTierConformance, ::testing::ValuesIn(cappedBackends()),
                         backendName);

// --- the byte-capped LRU the host and disk tiers share ------------------------

using Lru = ByteLru<std::string, int>;

std::vector<std::string> evictAll(Lru &lru, int64_t incoming) {
  std::vector<std::string> gone;
  lru.evictFor(incoming, [&](const Lru::Entry &e) { gone.push_back(e.key); });
  return gone;
}

TEST(ByteLru, EvictsTheLeastRecentlyUsedByBytesNotByCount) {
  Lru lru(100);
  lru.insert("a", 60, 1);
  lru.insert("b", 10, 2);
  lru.insert("c", 10, 3);
  EXPECT_EQ(lru.bytes(), 80);
  EXPECT_TRUE(evictAll(lru, 20).empty()); // 80 + 20 fits exactly
  // 80 + 30 does not: the oldest goes, and with its 60 bytes that is enough.
  EXPECT_EQ(evictAll(lru, 30), std::vector<std::string>({"a"}));
  EXPECT_EQ(lru.bytes(), 20);
  EXPECT_EQ(lru.evictions(), 1);
  EXPECT_EQ(lru.keys(), std::vector<std::string>({"c", "b"}));
  // Small entries go oldest first, as many as it takes.
  lru.insert("d", 5, 4);
  EXPECT_EQ(evictAll(lru, 90), std::vector<std::string>({"b", "c"}));
  EXPECT_EQ(lru.keys(), std::vector<std::string>({"d"}));
  EXPECT_EQ(lru.evictions(), 3);
}

TEST(ByteLru, UseAndReinsertMoveAKeyToTheMostRecentEnd) {
  Lru lru(90);
  for (const char *k : {"a", "b", "c"})
    lru.insert(k, 30, 0);
  const Lru::Entry *a = lru.use("a");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->bytes, 30);
  EXPECT_EQ(lru.use("zz"), nullptr); // nothing to use: nothing moves
  EXPECT_EQ(lru.keys(), std::vector<std::string>({"a", "c", "b"}));
  // Re-inserting replaces the entry's size and value and makes it the
  // most recent: one entry of the key, never two.
  lru.insert("b", 40, 7);
  EXPECT_EQ(lru.keys(), std::vector<std::string>({"b", "a", "c"}));
  EXPECT_EQ(lru.size(), 3u);
  EXPECT_EQ(lru.bytes(), 100);
  EXPECT_EQ(lru.use("b")->value, 7);
  // Now over the cap: even nothing incoming evicts down to it, oldest first.
  EXPECT_EQ(evictAll(lru, 0), std::vector<std::string>({"c"}));
  EXPECT_EQ(lru.bytes(), 70);
}

TEST(ByteLru, EraseIsNotAnEvictionAndTheOrderCanBeRebuiltFromTheNewest) {
  Lru lru(1000);
  // A restart's rebuild: the newest first, each next one older.
  for (const char *k : {"new", "mid", "old"})
    lru.insertLeastRecent(k, 100, 0);
  EXPECT_EQ(lru.keys(), std::vector<std::string>({"new", "mid", "old"}));
  EXPECT_TRUE(lru.erase("mid"));
  EXPECT_FALSE(lru.erase("mid"));
  EXPECT_FALSE(lru.contains("mid"));
  EXPECT_EQ(lru.bytes(), 200);
  EXPECT_EQ(lru.evictions(), 0);
  EXPECT_EQ(evictAll(lru, 850), std::vector<std::string>({"old"}));
  EXPECT_EQ(lru.evictions(), 1);
}

TEST(ByteLru, AnEntryLargerThanTheCapEmptiesItAndIsTheNextToGo) {
  // The backends refuse such an object (TooLarge) before the LRU sees it;
  // the LRU itself makes what room there is and no more.
  Lru lru(100);
  lru.insert("a", 50, 1);
  lru.insert("b", 50, 2);
  EXPECT_EQ(evictAll(lru, 150), std::vector<std::string>({"a", "b"}));
  EXPECT_TRUE(lru.empty());
  EXPECT_EQ(lru.bytes(), 0);
  lru.insert("big", 150, 3);
  EXPECT_EQ(lru.bytes(), 150);
  EXPECT_EQ(evictAll(lru, 0), std::vector<std::string>({"big"}));
  EXPECT_EQ(lru.bytes(), 0);
  EXPECT_EQ(lru.evictions(), 3);
  EXPECT_TRUE(evictAll(lru, 1000).empty()); // nothing left to evict
}

// --- disk faults ------------------------------------------------------------------

std::unique_ptr<TierBackend> disk(const std::string &dir, int64_t cap) {
  DiskTierOptions o;
  o.dir = dir;
  o.capBytes = cap;
  auto t = openDiskTier(o);
  EXPECT_TRUE(t.ok()) << (t.ok() ? "" : t.error().message);
  return t.ok() ? t.take() : nullptr;
}

int countFiles(const std::string &dir, const std::string &needle) {
  int n = 0;
  if (DIR *d = ::opendir(dir.c_str())) {
    while (struct dirent *e = ::readdir(d))
      if (std::string(e->d_name).find(needle) != std::string::npos)
        ++n;
    ::closedir(d);
  }
  return n;
}

TEST(DiskTier, SurvivesARestartWithItsAccessOrder) {
  std::string dir = tempDir("restart");
  {
    auto t = disk(dir, 10000);
    for (uint64_t i = 0; i < 3; ++i)
      ASSERT_TRUE(t->put(keyOf(5, i), bytesOf(3000, uint32_t(i))).ok());
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    ASSERT_TRUE(t->get(keyOf(5, 0)).ok()); // 0 is now the most recent
  }
  auto t = disk(dir, 10000);
  EXPECT_EQ(t->usage().objects, 3);
  EXPECT_EQ(t->get(keyOf(5, 2)).bytes, bytesOf(3000, 2));
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  // Order after the restart: 1 (oldest), 0, 2. A new object evicts 1.
  ASSERT_TRUE(t->put(keyOf(5, 3), bytesOf(3000, 3)).ok());
  EXPECT_EQ(t->get(keyOf(5, 1)).fault, TierFault::NotFound);
  EXPECT_TRUE(t->get(keyOf(5, 0)).ok());
  // A smaller cap at the next open evicts down to it.
  t.reset();
  auto small = disk(dir, 3500);
  EXPECT_EQ(small->usage().objects, 1);
  EXPECT_LE(small->usage().bytes, 3500);
}

TEST(DiskTier, AStoreKilledMidWriteIsNeverServed) {
  std::string dir = tempDir("kill");
  TierGeometry g = geo();
  TierKey k{g.layoutFingerprint, 42};
  std::string obj = encodeTierObject(k, 2, bytesOf(8192, 7), bytesOf(1000, 8));
  {
    auto t = disk(dir, 1 << 20);
    ASSERT_TRUE(t->put(TierKey{g.layoutFingerprint, 41}.text(), obj.substr(0, 100)).ok());
  }
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    DiskTierOptions o;
    o.dir = dir;
    o.capBytes = 1 << 20;
    o.midWriteHook = [] { ::kill(::getpid(), SIGKILL); };
    auto t = openDiskTier(o);
    if (t.ok())
      (void)(*t)->put(k.text(), obj);
    ::_exit(3); // not reached: the hook kills the store half-written
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status)) << "the child was meant to die mid-store";
  EXPECT_EQ(WTERMSIG(status), SIGKILL);
  EXPECT_EQ(countFiles(dir, ".tmp."), 1); // the torn write is on disk...
  auto t = disk(dir, 1 << 20);
  EXPECT_EQ(t->get(k.text()).fault, TierFault::NotFound); // ...never served
  EXPECT_EQ(countFiles(dir, ".tmp."), 0);                  // and cleaned up
  EXPECT_TRUE(t->get(TierKey{g.layoutFingerprint, 41}.text()).ok()); // others kept
}

TEST(DiskTier, AFullDiskRefusesTheStoreAndKeepsTheRest) {
  std::string dir = tempDir("full");
  {
    auto t = disk(dir, 1 << 20);
    ASSERT_TRUE(t->put(keyOf(9, 1), bytesOf(1000, 1)).ok());
  }
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // Files may not grow past 4 KiB in this process: the write fails as on
    // a full disk (EFBIG; SIGXFSZ ignored so it is an error, not a kill).
    ::signal(SIGXFSZ, SIG_IGN);
    struct rlimit rl = {4096, 4096};
    ::setrlimit(RLIMIT_FSIZE, &rl);
    auto t = disk(dir, 1 << 20);
    TierResult r = t->put(keyOf(9, 2), bytesOf(100000, 2));
    bool good = r.fault == TierFault::Full && t->get(keyOf(9, 2)).fault == TierFault::NotFound &&
                t->get(keyOf(9, 1)).ok() && countFiles(dir, ".tmp.") == 0 &&
                r.message.find("disk tier: write") != std::string::npos;
    ::_exit(good ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  auto t = disk(dir, 1 << 20);
  EXPECT_EQ(t->usage().objects, 1);
}

TEST(DiskTier, AFileDamagedOnDiskIsRefusedByTheCodec) {
  std::string dir = tempDir("damage");
  TierGeometry g = geo();
  TierKey k{g.layoutFingerprint, 5};
  std::string obj = encodeTierObject(k, 1, bytesOf(4096, 1), bytesOf(1000, 2));
  auto t = disk(dir, 1 << 20);
  ASSERT_TRUE(t->put(k.text(), obj).ok());
  std::string file = k.text();
  std::replace(file.begin(), file.end(), '/', '_');
  {
    std::fstream f(dir + "/" + file + ".obj", std::ios::in | std::ios::out | std::ios::binary);
    ASSERT_TRUE(f.good());
    f.seekp(2000);
    f.put('\x5a');
  }
  TierGet got = t->get(k.text());
  ASSERT_TRUE(got.ok());
  TierObjectView v;
  EXPECT_EQ(decodeTierObject(got.bytes, k, g, 1, v).fault, TierFault::Corrupt);
  // A file grown behind the tier's back is not read at all.
  {
    std::ofstream f(dir + "/" + file + ".obj", std::ios::app | std::ios::binary);
    f << "more";
  }
  TierGet grown = t->get(k.text());
  EXPECT_EQ(grown.fault, TierFault::Corrupt);
  EXPECT_NE(grown.message.find("it was written with"), std::string::npos) << grown.message;
}

TEST(DiskTier, BadOptionsAreRefused) {
  DiskTierOptions o;
  o.dir = tempDir("opts");
  o.capBytes = 0;
  EXPECT_FALSE(openDiskTier(o).ok());
  o.capBytes = 100;
  o.dir = "/proc/poolc-no-such/dir";
  auto bad = openDiskTier(o);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("/proc/poolc-no-such"), std::string::npos);
}

TEST(TierSpec, ParsesAndRefuses) {
  std::string dir = tempDir("spec");
  auto a = openTier("host:1MiB+disk:" + dir + ":2MiB");
  ASSERT_TRUE(a.ok()) << a.error().message;
  EXPECT_EQ((*a)->name(), "host+disk");
  EXPECT_TRUE(openTier("host:4096").ok());
  for (const char *bad : {"", "host:", "host:0", "host:12XB", "disk:/tmp", "ftp://x",
                          "host:1MiB+", "redis://nohostport"}) {
    auto r = openTier(bad);
    EXPECT_FALSE(r.ok()) << bad;
  }
}

// --- Redis faults (no server needed) ------------------------------------------------

int freePort() {
  int s = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(s, reinterpret_cast<sockaddr *>(&a), sizeof a);
  socklen_t n = sizeof a;
  ::getsockname(s, reinterpret_cast<sockaddr *>(&a), &n);
  ::close(s);
  return ntohs(a.sin_port);
}

TEST(RedisTier, ADeadServerIsUnavailableNotAHang) {
  RedisTierOptions o;
  o.url = "redis://127.0.0.1:" + std::to_string(freePort());
  o.timeoutMs = 300;
  auto t = openRedisTier(o);
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.error().message.find("connect"), std::string::npos) << t.error().message;
}

TEST(RedisTier, ASilentServerTimesOutAndTheNextCallReconnects) {
  // Accepts connections (the kernel's backlog) and never answers.
  int s = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(s, reinterpret_cast<sockaddr *>(&a), sizeof a), 0);
  ASSERT_EQ(::listen(s, 8), 0);
  socklen_t n = sizeof a;
  ::getsockname(s, reinterpret_cast<sockaddr *>(&a), &n);
  RedisTierOptions o;
  // With a password, open sends AUTH and waits for the reply that never comes.
  o.url = "redis://:pw@127.0.0.1:" + std::to_string(ntohs(a.sin_port));
  o.timeoutMs = 200;
  auto t0 = std::chrono::steady_clock::now();
  auto t = openRedisTier(o);
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.error().message.find("redis tier 127.0.0.1"), std::string::npos)
      << t.error().message;
  EXPECT_LT(secs, 30.0) << "a hang guard, not a performance figure";
  ::close(s);
}

TEST(RedisTier, BadUrlsAreRefused) {
  for (const char *u : {"redis://", "redis://host", "redis://h:0", "redis://h:70000",
                        "redis://h:1/x", "http://h:1"}) {
    RedisTierOptions o;
    o.url = u;
    auto t = openRedisTier(o);
    ASSERT_FALSE(t.ok()) << u;
    EXPECT_EQ(t.error().kind, ErrorKind::InvalidArgument) << u;
  }
}

// --- Redis with a server (tier-redis) ------------------------------------------------

TEST(RedisServer, TwoClientsShareOneFleetCacheAndAWrongPasswordIsRefused) {
  const char *url = redisUrl();
  ASSERT_NE(url, nullptr) << "POOLC_TEST_REDIS is not set (ctest tier-redis "
                            "starts a server and sets it)";
  RedisTierOptions o;
  o.url = url;
  auto a = openRedisTier(o), b = openRedisTier(o);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_FALSE((*a)->local()); // looked up on the transfer thread only
  uint64_t fp = uint64_t(::getpid()) * 7919;
  std::string v = bytesOf(300000, 11);
  ASSERT_TRUE((*a)->put(keyOf(fp, 1), v).ok());
  TierGet g = (*b)->get(keyOf(fp, 1)); // another process would see the same
  ASSERT_TRUE(g.ok()) << g.message;
  EXPECT_EQ(g.bytes, v);
  ASSERT_TRUE((*b)->remove(keyOf(fp, 1)).ok());
  EXPECT_EQ((*a)->get(keyOf(fp, 1)).fault, TierFault::NotFound);

  std::string wrong = url;
  size_t at = wrong.find('@');
  if (at != std::string::npos) {
    wrong = "redis://:not-the-password" + wrong.substr(at);
    RedisTierOptions w;
    w.url = wrong;
    auto bad = openRedisTier(w);
    ASSERT_FALSE(bad.ok());
    EXPECT_NE(bad.error().message.find("AUTH refused"), std::string::npos)
        << bad.error().message;
  }
}

TEST(RedisServer, AFullServerRefusesTheStoreAndKeepsWhatItHeld) {
  // A server of its own, capped at 2 MiB with no eviction: a store that
  // does not fit is refused as Full (counted by the transfer thread as a
  // refused store), never a hang, and the objects stored before stay whole.
  int port = freePort();
  pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    int null = ::open("/dev/null", O_WRONLY);
    if (null >= 0) {
      ::dup2(null, 1);
      ::dup2(null, 2);
    }
    std::string p = std::to_string(port);
    ::execlp("redis-server", "redis-server", "--port", p.c_str(), "--bind", "127.0.0.1",
             "--save", "", "--appendonly", "no", "--maxmemory", "2mb",
             "--maxmemory-policy", "noeviction", static_cast<char *>(nullptr));
    ::_exit(127);
  }
  struct Reap { // the server goes with the test, failed assertions included
    pid_t pid;
    ~Reap() {
      ::kill(pid, SIGTERM);
      int status = 0;
      ::waitpid(pid, &status, 0);
    }
  } reap{pid};
  RedisTierOptions o;
  o.url = "redis://127.0.0.1:" + std::to_string(port);
  o.timeoutMs = 1000;
  std::unique_ptr<TierBackend> t;
  for (int i = 0; i < 100 && !t; ++i) {
    auto r = openRedisTier(o);
    if (r.ok())
      t = r.take();
    else
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_TRUE(t) << "redis-server on port " << port << " did not come up";
  uint64_t fp = 0xF011;
  std::string v = bytesOf(256 * 1024, 3);
  int stored = 0;
  TierResult last = TierResult::success();
  for (uint64_t i = 0; i < 64 && last.ok(); ++i) {
    last = t->put(keyOf(fp, i), v);
    stored += last.ok();
  }
  EXPECT_EQ(last.fault, TierFault::Full) << last.message;
  EXPECT_GE(stored, 1);
  EXPECT_LT(stored, 64);
  for (int i = 0; i < stored; ++i) {
    TierGet g = t->get(keyOf(fp, uint64_t(i)));
    ASSERT_TRUE(g.ok()) << g.message;
    EXPECT_EQ(g.bytes, v);
  }
  t.reset(); // disconnect before the server stops
}

// --- the transfer thread ------------------------------------------------------

/// A backend whose calls block until the test opens the gate.
class GatedBackend final : public TierBackend {
public:
  std::unique_ptr<TierBackend> inner = makeHostTier(1 << 20);
  std::mutex mu;
  std::condition_variable cv;
  bool open = false;
  std::atomic<int> calls{0};
  void wait() {
    ++calls;
    std::unique_lock<std::mutex> l(mu);
    cv.wait(l, [&] { return open; });
  }
  void release() {
    {
      std::lock_guard<std::mutex> l(mu);
      open = true;
    }
    cv.notify_all();
  }
  std::string name() const override { return "gated"; }
  TierResult put(const std::string &k, std::string_view b) override {
    wait();
    return inner->put(k, b);
  }
  TierGet get(const std::string &k) override {
    wait();
    return inner->get(k);
  }
  TierResult contains(const std::string &k) override {
    wait();
    return inner->contains(k);
  }
  TierResult remove(const std::string &k) override { return inner->remove(k); }
  TierUsage usage() const override { return inner->usage(); }
};

TEST(TierTransfer, StoresLandAndFetchesStopAtTheFirstMiss) {
  auto host = makeHostTier(1 << 20);
  TierTransfer t(*host, 1 << 20);
  EXPECT_TRUE(t.store(keyOf(1, 1), "one"));
  EXPECT_TRUE(t.store(keyOf(1, 2), "two"));
  EXPECT_TRUE(t.store(keyOf(1, 2), "again")); // held: skipped
  EXPECT_TRUE(t.store(keyOf(1, 2), "forced", /*skipIfHeld=*/false));
  ASSERT_TRUE(t.drain(std::chrono::seconds(10)).ok());
  uint64_t f = t.fetch({keyOf(1, 1), keyOf(1, 2), keyOf(1, 3), keyOf(1, 1)});
  ASSERT_TRUE(t.wait(f, std::chrono::steady_clock::now() + std::chrono::seconds(10)));
  auto r = t.take(f);
  ASSERT_TRUE(r.has_value());
  ASSERT_EQ(r->results.size(), 3u); // stopped at the miss
  EXPECT_EQ(r->results[0].bytes, "one");
  EXPECT_EQ(r->results[1].bytes, "forced");
  EXPECT_EQ(r->results[2].fault, TierFault::NotFound);
  EXPECT_FALSE(t.take(f).has_value()); // taken once
  TierTransferCounters c = t.counters();
  EXPECT_EQ(c.storesDone, 3);
  EXPECT_EQ(c.storesSkipped, 1);
  EXPECT_EQ(c.fetchesDone, 1);
}

// The seed's P1-1: a fence that misses queued or running transfers. drain
// sees a store that is queued behind a blocked one and one that is running,
// and fails (fail-stop) on its timeout instead of returning as if done.
TEST(TierTransfer, DrainCoversQueuedAndRunningJobsAndFailsOnTimeout) {
  GatedBackend gated;
  TierTransfer t(gated, 1 << 20);
  ASSERT_TRUE(t.store(keyOf(2, 1), "a")); // runs, blocks in the backend
  ASSERT_TRUE(t.store(keyOf(2, 2), "b")); // queued behind it
  while (gated.calls.load() == 0)
    std::this_thread::yield();
  EXPECT_EQ(t.pending(), 2);
  Status d = t.drain(std::chrono::milliseconds(100));
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.error().kind, ErrorKind::Internal);
  EXPECT_NE(d.error().message.find("2 transfers (1 queued) still pending"), std::string::npos)
      << d.error().message;
  gated.release();
  ASSERT_TRUE(t.drain(std::chrono::seconds(10)).ok());
  EXPECT_EQ(t.pending(), 0);
  EXPECT_TRUE(gated.inner->get(keyOf(2, 2)).ok());
}

TEST(TierTransfer, ALateFetchIsCancelledAndAFullQueueRefusesStores) {
  GatedBackend gated;
  TierTransfer t(gated, 10);
  uint64_t f = t.fetch({keyOf(3, 1)});
  EXPECT_FALSE(t.wait(f, std::chrono::steady_clock::now() + std::chrono::milliseconds(50)));
  t.cancel(f); // late: the step thread recomputes
  EXPECT_TRUE(t.store(keyOf(3, 2), "12345"));
  EXPECT_TRUE(t.store(keyOf(3, 3), "12345"));
  EXPECT_FALSE(t.store(keyOf(3, 4), "1")); // 11 > 10 queued bytes: refused, not blocking
  gated.release();
  ASSERT_TRUE(t.drain(std::chrono::seconds(10)).ok());
  EXPECT_FALSE(t.take(f).has_value()); // its result was dropped
  TierTransferCounters c = t.counters();
  EXPECT_EQ(c.fetchesCancelled, 1);
  EXPECT_EQ(c.storesRefused, 1);
  EXPECT_EQ(c.storesDone, 2);
}

// --- host memory: shared, page-locked, recycled, verified --------------------

/// A TierHostMemory that counts what it hands out (a device's page-locked
/// memory in serving), and can run dry.
class CountingMemory final : public TierHostMemory {
public:
  std::atomic<int> allocated{0}, released{0};
  std::atomic<bool> dry{false};
  std::string name() const override { return "counting"; }
  void *allocate(size_t bytes) override {
    if (dry)
      return nullptr;
    ++allocated;
    return std::malloc(bytes < 1 ? 1 : bytes);
  }
  void release(void *p) override {
    ++released;
    std::free(p);
  }
};

TEST(HostTier, AHitSharesTheStoredBufferAndOutlivesItsEviction) {
  auto mem = std::make_shared<CountingMemory>();
  auto t = makeHostTier(2500, mem);
  std::string a = bytesOf(1000, 1), b = bytesOf(1000, 2), c = bytesOf(1000, 3);
  ASSERT_TRUE(t->put(keyOf(7, 1), a).ok());
  TierGet g1 = t->get(keyOf(7, 1)), g2 = t->get(keyOf(7, 1));
  ASSERT_TRUE(g1.ok() && g2.ok());
  EXPECT_EQ(g1.bytes.data(), g2.bytes.data()); // one buffer, not two copies
  EXPECT_EQ(mem->allocated.load(), 1);
  ASSERT_TRUE(t->put(keyOf(7, 1), b).ok()); // replaced while g1 still reads it
  ASSERT_TRUE(t->put(keyOf(7, 2), c).ok());
  ASSERT_TRUE(t->put(keyOf(7, 3), c).ok()); // evicts what the hits still hold
  EXPECT_EQ(g1.bytes, a);
  EXPECT_EQ(t->get(keyOf(7, 1)).fault, TierFault::NotFound);
  EXPECT_EQ(t->get(keyOf(7, 2)).bytes, c);
  EXPECT_EQ(t->usage().objects, 2);
}

TEST(HostTier, EvictedBuffersAreReusedAndEveryOneGoesBack) {
  auto mem = std::make_shared<CountingMemory>();
  TierGet kept;
  {
    auto t = makeHostTier(4000, mem); // four objects of 1000
    std::string v = bytesOf(1000, 4);
    for (uint64_t i = 0; i < 40; ++i)
      ASSERT_TRUE(t->put(keyOf(8, i), v).ok());
    // Each store past the fourth evicts one first and takes its buffer.
    EXPECT_LE(mem->allocated.load(), 5);
    kept = t->get(keyOf(8, 39));
    ASSERT_TRUE(kept.ok());
    mem->dry = true; // no page-locked memory left: ordinary memory instead
    std::string w = bytesOf(1500, 5);
    ASSERT_TRUE(t->put(keyOf(8, 100), w).ok());
    EXPECT_EQ(t->get(keyOf(8, 100)).bytes, w);
  }
  // The tier is gone; the hit still reads its buffer, and only when it goes
  // does the buffer return to the memory it came from.
  EXPECT_EQ(kept.bytes, bytesOf(1000, 4));
  EXPECT_LT(mem->released.load(), mem->allocated.load());
  kept = TierGet();
  EXPECT_EQ(mem->released.load(), mem->allocated.load());
}

TEST(HostTier, OnlyAnIntactObjectIsVerifiedAndTheDecoderTrustsOnlyThat) {
  auto t = makeHostTier(1 << 20);
  TierGeometry g = geo();
  TierKey k{g.layoutFingerprint, 42};
  std::string obj = encodeTierObject(k, 2, bytesOf(2 * 4096, 6), bytesOf(1000, 7));
  ASSERT_TRUE(t->put(k.text(), obj).ok());
  TierGet good = t->get(k.text());
  ASSERT_TRUE(good.ok());
  EXPECT_TRUE(good.verified);
  TierObjectView v;
  EXPECT_TRUE(decodeTierObject(good.bytes, k, g, 2, v, good.verified).ok());
  // A payload byte flipped before the store: not intact, not verified, and
  // the decoder's own check refuses it.
  std::string bad = obj;
  bad[size_t(kTierHeaderBytes) + 100] ^= 0x20;
  ASSERT_TRUE(t->put(k.text(), bad).ok());
  TierGet flipped = t->get(k.text());
  ASSERT_TRUE(flipped.ok());
  EXPECT_FALSE(flipped.verified);
  TierResult d = decodeTierObject(flipped.bytes, k, g, 2, v, flipped.verified);
  EXPECT_EQ(d.fault, TierFault::Corrupt) << d.message;
  // Bytes that are no object at all are kept as given, never verified.
  ASSERT_TRUE(t->put(keyOf(9, 1), "not an object").ok());
  EXPECT_FALSE(t->get(keyOf(9, 1)).verified);
  EXPECT_FALSE(tierObjectIntact(obj.substr(0, obj.size() - 1)));
  EXPECT_TRUE(tierObjectIntact(obj));
  // Verified skips only the payload hash: the header is still checked.
  TierKey other{g.layoutFingerprint, 43};
  EXPECT_EQ(decodeTierObject(good.bytes, other, g, 2, v, true).fault, TierFault::Mismatch);
}

TEST(HostTier, ADiskHitIsServedFromTheHostCopyItWasPromotedTo) {
  auto mem = std::make_shared<CountingMemory>();
  std::string dir = tempDir("promote");
  DiskTierOptions o;
  o.dir = dir;
  o.capBytes = 1 << 20;
  o.fsync = false;
  auto disk = openDiskTier(o);
  ASSERT_TRUE(disk.ok()) << disk.error().message;
  TierGeometry g = geo();
  TierKey k{g.layoutFingerprint, 77};
  std::string obj = encodeTierObject(k, 1, bytesOf(4096, 8), "");
  ASSERT_TRUE(disk.value()->put(k.text(), obj).ok());
  std::vector<std::unique_ptr<TierBackend>> levels;
  levels.push_back(makeHostTier(1 << 20, mem));
  levels.push_back(disk.take());
  auto stack = makeStackedTier(std::move(levels));
  TierGet first = stack->get(k.text()); // from disk, promoted into host
  ASSERT_TRUE(first.ok()) << first.message;
  EXPECT_TRUE(first.verified); // the host copy, checked as it was stored
  EXPECT_EQ(mem->allocated.load(), 1);
  EXPECT_EQ(first.bytes, obj);
  TierGet second = stack->get(k.text());
  EXPECT_EQ(second.bytes.data(), first.bytes.data());
}

TEST(TierTransfer, AFetchGoesAheadOfStoresAndReadsTheQueuedOnes) {
  GatedBackend gated;
  TierTransfer t(gated, 1 << 20);
  ASSERT_TRUE(t.store(keyOf(4, 1), "running")); // blocks in the backend
  while (gated.calls.load() == 0)
    std::this_thread::yield();
  ASSERT_TRUE(t.store(keyOf(4, 2), "queued"));
  ASSERT_TRUE(t.store(keyOf(4, 3), "kv-only"));              // yields to a held one
  ASSERT_TRUE(t.store(keyOf(4, 4), "checkpointed", false));  // replaces
  // Held by the backend already, before the gate: a yielding store of the
  // same key must not shadow it.
  ASSERT_TRUE(gated.inner->put(keyOf(4, 3), "held").ok());
  ASSERT_TRUE(gated.inner->put(keyOf(4, 4), "old").ok());
  EXPECT_TRUE(t.storing(keyOf(4, 1))); // running
  EXPECT_TRUE(t.storing(keyOf(4, 2))); // queued
  EXPECT_FALSE(t.storing(keyOf(4, 5)));
  uint64_t f = t.fetch({keyOf(4, 1), keyOf(4, 2), keyOf(4, 3), keyOf(4, 4), keyOf(4, 5)});
  // The gate opens for the running store; the fetch runs next, ahead of
  // the three queued stores.
  gated.release();
  ASSERT_TRUE(t.wait(f, std::chrono::steady_clock::now() + std::chrono::seconds(10)));
  auto r = t.take(f);
  ASSERT_TRUE(r.has_value());
  ASSERT_EQ(r->results.size(), 5u);
  EXPECT_EQ(r->results[0].bytes, "running");
  EXPECT_EQ(r->results[1].bytes, "queued");       // not in the backend yet
  EXPECT_EQ(r->results[2].bytes, "held");         // the backend's, not the yielding store's
  EXPECT_EQ(r->results[3].bytes, "checkpointed"); // the replacing store's
  EXPECT_EQ(r->results[4].fault, TierFault::NotFound);
  ASSERT_TRUE(t.drain(std::chrono::seconds(10)).ok());
  EXPECT_EQ(gated.inner->get(keyOf(4, 4)).bytes, "checkpointed");
  EXPECT_EQ(gated.inner->get(keyOf(4, 3)).bytes, "held");
  EXPECT_FALSE(t.storing(keyOf(4, 2))); // landed
}

TEST(TierTransfer, ARemovalRunsOnTheTransferThread) {
  GatedBackend gated;
  ASSERT_TRUE(gated.inner->put(keyOf(5, 1), "x").ok());
  TierTransfer t(gated, 1 << 20);
  t.remove(keyOf(5, 1));
  ASSERT_TRUE(t.drain(std::chrono::seconds(10)).ok());
  EXPECT_EQ(gated.inner->contains(keyOf(5, 1)).fault, TierFault::NotFound);
}

TEST(TierBackends, MemoryAndDiskAreLocal) {
  EXPECT_TRUE(makeHostTier(1)->local());
  std::vector<std::unique_ptr<TierBackend>> l;
  l.push_back(makeHostTier(1));
  EXPECT_TRUE(makeStackedTier(std::move(l))->local());
}

} // namespace
