//===- DiskTier.cpp - The local-disk tier backend -------------------------===//
//
// One file per object, named by its key ('/' -> '_') with ".obj". A store
// writes "<name>.tmp.<pid>.<n>", fsyncs it, renames it over the name and
// fsyncs the directory: a reader sees the old object or the whole new one,
// and a store killed at any point leaves only a temporary file, which
// opening removes. The LRU is rebuilt at open from the files' modification
// times (a get touches the file), so it survives a restart of pool-serve.
// Content is checked by the object codec on load, not here: a file damaged
// on disk is refused there (Corrupt) and removed by the caller.
//
//===----------------------------------------------------------------------===//

#include "poolrt/Tier.h"

#include "TierBackends.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>

namespace poolrt {

namespace {

std::string errnoText(int e) { return std::string(std::strerror(e)); }

bool endsWith(const std::string &s, const std::string &suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

/// A file's entry in the index: its key and size are all it keeps.
struct DiskFile {};

class DiskTier final : public ByteCappedBackend<DiskFile> {
public:
  explicit DiskTier(DiskTierOptions o) : ByteCappedBackend(o.capBytes), o_(std::move(o)) {}

  Status open() {
    if (o_.capBytes < 1)
      return Error::invalid("disk tier '" + o_.dir + "': the cap must be at least 1 byte");
    if (o_.dir.empty())
      return Error::invalid("disk tier: no directory");
    // mkdir -p
    for (size_t i = 1; i <= o_.dir.size(); ++i)
      if (i == o_.dir.size() || o_.dir[i] == '/') {
        std::string d = o_.dir.substr(0, i);
        if (::mkdir(d.c_str(), 0755) != 0 && errno != EEXIST)
          return Error{ErrorKind::State, "disk tier: cannot create '" + d + "': " + errnoText(errno)};
      }
    DIR *dir = ::opendir(o_.dir.c_str());
    if (!dir)
      return Error{ErrorKind::State, "disk tier: cannot open '" + o_.dir + "': " + errnoText(errno)};
    struct Found {
      std::string key;
      int64_t bytes;
      struct timespec mtime;
    };
    std::vector<Found> found;
    while (struct dirent *e = ::readdir(dir)) {
      std::string n = e->d_name;
      if (n == "." || n == "..")
        continue;
      std::string path = o_.dir + "/" + n;
      if (n.find(".tmp.") != std::string::npos) {
        ::unlink(path.c_str()); // a store that never finished
        ++leftovers_;
        continue;
      }
      if (!endsWith(n, ".obj"))
        continue;
      struct stat st;
      if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode))
        continue;
      std::string key = n.substr(0, n.size() - 4);
      std::replace(key.begin(), key.end(), '_', '/');
      if (!validTierKey(key))
        continue;
      found.push_back({key, int64_t(st.st_size), st.st_mtim});
    }
    ::closedir(dir);
    std::sort(found.begin(), found.end(), [](const Found &a, const Found &b) {
      return a.mtime.tv_sec != b.mtime.tv_sec ? a.mtime.tv_sec > b.mtime.tv_sec
                                              : a.mtime.tv_nsec > b.mtime.tv_nsec;
    });
    for (const Found &f : found)
      lru_.insertLeastRecent(f.key, f.bytes, {});
    // A smaller cap than the last run's: evict down to it now.
    evictLocked(0);
    return Status::success();
  }

  std::string name() const override { return "disk"; }

  void touch(const std::string &key) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (!lru_.use(key))
      return;
    struct timespec now[2] = {{0, UTIME_NOW}, {0, UTIME_NOW}};
    ::utimensat(AT_FDCWD, pathOf(key).c_str(), now, 0);
  }

  int64_t leftovers() const { return leftovers_; }

protected:
  TierResult putChecked(const std::string &key, std::string_view bytes) override {
    if (TierResult fits = checkFits(key, bytes.size()); !fits.ok())
      return fits;
    std::string final = pathOf(key);
    std::string tmp = final + ".tmp." + std::to_string(::getpid()) + "." +
                      std::to_string(seq_.fetch_add(1));
    // Write outside the lock: several stores may run at once; the rename
    // is what publishes.
    TierResult w = writeFile(tmp, bytes);
    if (!w.ok()) {
      ::unlink(tmp.c_str());
      return w;
    }
    std::lock_guard<std::mutex> lock(mu_);
    lru_.erase(key);
    evictLocked(int64_t(bytes.size()));
    if (::rename(tmp.c_str(), final.c_str()) != 0) {
      int e = errno;
      ::unlink(tmp.c_str());
      return TierResult::fail(TierFault::Unavailable,
                              "disk tier: rename to '" + final + "': " + errnoText(e));
    }
    if (o_.fsync) {
      int dfd = ::open(o_.dir.c_str(), O_RDONLY | O_DIRECTORY);
      if (dfd >= 0) {
        ::fsync(dfd);
        ::close(dfd);
      }
    }
    lru_.insert(key, int64_t(bytes.size()), {});
    return TierResult::success();
  }

  TierGet getChecked(const std::string &key) override {
    TierGet g;
    std::string path = pathOf(key);
    int64_t indexed = 0;
    {
      std::lock_guard<std::mutex> lock(mu_);
      const auto *e = lru_.use(key);
      if (!e) {
        g.fault = TierFault::NotFound;
        return g;
      }
      indexed = e->bytes;
    }
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      int e = errno;
      std::lock_guard<std::mutex> lock(mu_);
      if (e == ENOENT) { // evicted or removed meanwhile
        lru_.erase(key);
        g.fault = TierFault::NotFound;
      } else {
        g.fault = TierFault::Unavailable;
        g.message = "disk tier: open '" + path + "': " + errnoText(e);
      }
      return g;
    }
    struct stat st;
    if (::fstat(fd, &st) != 0) {
      g.fault = TierFault::Unavailable;
      g.message = "disk tier: stat '" + path + "': " + errnoText(errno);
      ::close(fd);
      return g;
    }
    // A file that is not the size this tier wrote (grown, truncated or
    // replaced behind its back) is not read: never a huge allocation.
    if (int64_t(st.st_size) != indexed) {
      g.fault = TierFault::Corrupt;
      g.message = "disk tier: '" + path + "' is " + std::to_string(st.st_size) +
                  " bytes, it was written with " + std::to_string(indexed);
      ::close(fd);
      return g;
    }
    std::string data(size_t(st.st_size), '\0');
    size_t done = 0;
    while (done < data.size()) {
      ssize_t n = ::read(fd, &data[done], data.size() - done);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0) {
        g.fault = TierFault::Unavailable;
        g.message = "disk tier: read '" + path + "': " + (n < 0 ? errnoText(errno) : "short file");
        ::close(fd);
        return g;
      }
      done += size_t(n);
    }
    g.bytes = TierBytes(std::move(data));
    ::futimens(fd, nullptr); // access order survives a restart
    ::close(fd);
    return g;
  }

  TierResult removeChecked(const std::string &key) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (lru_.erase(key))
      ::unlink(pathOf(key).c_str());
    return TierResult::success();
  }

private:
  std::string pathOf(const std::string &key) const {
    std::string n = key;
    std::replace(n.begin(), n.end(), '/', '_');
    return o_.dir + "/" + n + ".obj";
  }

  TierResult writeFile(const std::string &tmp, std::string_view bytes) {
    int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0)
      return TierResult::fail(TierFault::Unavailable,
                              "disk tier: create '" + tmp + "': " + errnoText(errno));
    size_t half = bytes.size() / 2, done = 0;
    bool hooked = false;
    while (done < bytes.size()) {
      size_t until = !hooked && o_.midWriteHook ? half : bytes.size();
      if (done >= until) {
        hooked = true;
        o_.midWriteHook();
        continue;
      }
      ssize_t n = ::write(fd, bytes.data() + done, until - done);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0) {
        int e = n < 0 ? errno : ENOSPC;
        ::close(fd);
        bool full = e == ENOSPC || e == EFBIG || e == EDQUOT;
        return TierResult::fail(full ? TierFault::Full : TierFault::Unavailable,
                                "disk tier: write '" + tmp + "': " + errnoText(e));
      }
      done += size_t(n);
    }
    if (o_.fsync && ::fsync(fd) != 0) {
      int e = errno;
      ::close(fd);
      return TierResult::fail(e == ENOSPC ? TierFault::Full : TierFault::Unavailable,
                              "disk tier: fsync '" + tmp + "': " + errnoText(e));
    }
    if (::close(fd) != 0)
      return TierResult::fail(TierFault::Unavailable,
                              "disk tier: close '" + tmp + "': " + errnoText(errno));
    return TierResult::success();
  }

  /// Evicts (files and entries) until `incoming` more bytes fit the cap.
  void evictLocked(int64_t incoming) {
    lru_.evictFor(incoming, [this](const auto &e) { ::unlink(pathOf(e.key).c_str()); });
  }

  DiskTierOptions o_;
  int64_t leftovers_ = 0;
  std::atomic<uint64_t> seq_{0};
};

} // namespace

Result<std::unique_ptr<TierBackend>> openDiskTier(const DiskTierOptions &o) {
  auto t = std::make_unique<DiskTier>(o);
  Status s = t->open();
  if (!s.ok())
    return s.error();
  return std::unique_ptr<TierBackend>(std::move(t));
}

} // namespace poolrt
