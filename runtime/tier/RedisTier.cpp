//===- RedisTier.cpp - The Redis tier backend (hiredis) -------------------===//
//
// SET / GET / EXISTS / DEL over one blocking hiredis connection, guarded by
// a mutex. Every connect and command has a timeout: a server that is down
// answers Unavailable at once, one that accepts and never replies answers
// Unavailable after the timeout, and the connection is dropped so the next
// call reconnects (and AUTHs / SELECTs again). Objects carry their own
// checksum (the object codec), so nothing Redis returns is trusted unread.
//
//===----------------------------------------------------------------------===//

#include "poolrt/Tier.h"

#include <hiredis/hiredis.h>

#include <cerrno>
#include <csignal>
#include <chrono>
#include <cstdlib>
#include <cstring>

namespace poolrt {

namespace {

struct RedisUrl {
  std::string host, password;
  int port = 6379, db = 0;
};

Result<RedisUrl> parseRedisUrl(const std::string &url) {
  std::string shown = url; // never the password
  if (size_t at = shown.rfind('@'); at != std::string::npos && shown.size() > 8)
    shown = "redis://:***" + shown.substr(at);
  auto bad = [&](const std::string &why) {
    return Error::invalid("redis tier '" + shown + "': " + why +
                          " (expected redis://[:PASSWORD@]HOST:PORT[/DB])");
  };
  const std::string scheme = "redis://";
  if (url.rfind(scheme, 0) != 0)
    return bad("not a redis:// URL");
  std::string rest = url.substr(scheme.size());
  RedisUrl u;
  size_t at = rest.rfind('@');
  if (at != std::string::npos) {
    std::string cred = rest.substr(0, at);
    rest = rest.substr(at + 1);
    size_t colon = cred.find(':');
    u.password = colon == std::string::npos ? cred : cred.substr(colon + 1);
  }
  size_t slash = rest.find('/');
  if (slash != std::string::npos) {
    std::string db = rest.substr(slash + 1);
    rest = rest.substr(0, slash);
    if (!db.empty()) {
      char *end = nullptr;
      long v = std::strtol(db.c_str(), &end, 10);
      if (*end || v < 0 || v > 1000000)
        return bad("database '" + db + "' is not a number");
      u.db = int(v);
    }
  }
  size_t colon = rest.rfind(':');
  if (colon == std::string::npos || colon == 0)
    return bad("no HOST:PORT");
  u.host = rest.substr(0, colon);
  char *end = nullptr;
  long port = std::strtol(rest.c_str() + colon + 1, &end, 10);
  if (*end || port < 1 || port > 65535)
    return bad("port '" + rest.substr(colon + 1) + "' is not 1-65535");
  u.port = int(port);
  return u;
}

class RedisTier final : public TierBackend {
public:
  RedisTier(RedisUrl u, int64_t timeoutMs) : u_(std::move(u)), timeoutMs_(timeoutMs) {}
  ~RedisTier() override {
    if (ctx_)
      redisFree(ctx_);
  }
  std::string name() const override { return "redis"; }
  bool local() const override { return false; }

  TierResult put(const std::string &key, std::string_view bytes) override {
    if (!validTierKey(key))
      return invalidTierKey(key);
    std::lock_guard<std::mutex> lock(mu_);
    redisReply *r = nullptr;
    TierResult s = command(r, "SET %b %b", key.data(), key.size(), bytes.data(), bytes.size());
    if (!s.ok())
      return s;
    TierResult out = TierResult::success();
    if (r->type == REDIS_REPLY_ERROR) {
      std::string m(r->str, r->len);
      // OOM under maxmemory with a noeviction policy: the store did not fit.
      out = TierResult::fail(m.rfind("OOM", 0) == 0 ? TierFault::Full : TierFault::Unavailable,
                             "redis tier: SET " + key + ": " + m);
    }
    freeReplyObject(r);
    return out;
  }

  TierGet get(const std::string &key) override {
    TierGet g;
    if (!validTierKey(key)) {
      TierResult r = invalidTierKey(key);
      g.fault = r.fault;
      g.message = r.message;
      return g;
    }
    std::lock_guard<std::mutex> lock(mu_);
    redisReply *r = nullptr;
    TierResult s = command(r, "GET %b", key.data(), key.size());
    if (!s.ok()) {
      g.fault = s.fault;
      g.message = s.message;
      return g;
    }
    if (r->type == REDIS_REPLY_STRING) {
      // The reply owns the bytes: the object refers to it, no copy.
      std::shared_ptr<const void> owner(r, [](const void *p) {
        freeReplyObject(const_cast<void *>(p));
      });
      g.bytes = TierBytes(std::move(owner), r->str, r->len);
      return g;
    } else if (r->type == REDIS_REPLY_NIL)
      g.fault = TierFault::NotFound;
    else {
      g.fault = TierFault::Unavailable;
      g.message = "redis tier: GET " + key + ": " +
                  (r->type == REDIS_REPLY_ERROR ? std::string(r->str, r->len)
                                                : std::string("unexpected reply type"));
    }
    freeReplyObject(r);
    return g;
  }

  TierResult contains(const std::string &key) override {
    if (!validTierKey(key))
      return invalidTierKey(key);
    std::lock_guard<std::mutex> lock(mu_);
    redisReply *r = nullptr;
    TierResult s = command(r, "EXISTS %b", key.data(), key.size());
    if (!s.ok())
      return s;
    TierResult out = r->type == REDIS_REPLY_INTEGER && r->integer > 0
                         ? TierResult::success()
                         : TierResult::fail(TierFault::NotFound, "");
    if (r->type == REDIS_REPLY_ERROR)
      out = TierResult::fail(TierFault::Unavailable,
                             "redis tier: EXISTS: " + std::string(r->str, r->len));
    else if (r->type != REDIS_REPLY_INTEGER)
      out = TierResult::fail(TierFault::Unavailable, "redis tier: EXISTS: unexpected reply type");
    freeReplyObject(r);
    return out;
  }

  TierResult remove(const std::string &key) override {
    if (!validTierKey(key))
      return invalidTierKey(key);
    std::lock_guard<std::mutex> lock(mu_);
    redisReply *r = nullptr;
    TierResult s = command(r, "DEL %b", key.data(), key.size());
    if (!s.ok())
      return s;
    TierResult out = r->type == REDIS_REPLY_ERROR
                         ? TierResult::fail(TierFault::Unavailable,
                                            "redis tier: DEL " + key + ": " +
                                                std::string(r->str, r->len))
                         : TierResult::success();
    freeReplyObject(r);
    return out;
  }

  TierUsage usage() const override { return {}; }

  /// Connects now (openRedisTier fails early on a bad password or a dead
  /// server, and a later call reconnects).
  TierResult connectLocked() {
    if (ctx_)
      return TierResult::success();
    struct timeval tv;
    tv.tv_sec = timeoutMs_ / 1000;
    tv.tv_usec = (timeoutMs_ % 1000) * 1000;
    redisContext *c = redisConnectWithTimeout(u_.host.c_str(), u_.port, tv);
    if (!c)
      return TierResult::fail(TierFault::Unavailable, "redis tier: out of memory connecting");
    if (c->err) {
      std::string m = where() + ": connect: " + c->errstr;
      redisFree(c);
      return TierResult::fail(TierFault::Unavailable, m);
    }
    redisSetTimeout(c, tv);
    ctx_ = c;
    if (!u_.password.empty()) {
      redisReply *r = nullptr;
      TierResult s = raw(r, "AUTH %b", u_.password.data(), u_.password.size());
      if (!s.ok())
        return s;
      bool ok = r->type != REDIS_REPLY_ERROR;
      std::string m = ok ? "" : std::string(r->str, r->len);
      freeReplyObject(r);
      if (!ok) {
        drop();
        return TierResult::fail(TierFault::Unavailable, where() + ": AUTH refused: " + m);
      }
    }
    if (u_.db != 0) {
      redisReply *r = nullptr;
      TierResult s = raw(r, "SELECT %d", u_.db);
      if (!s.ok())
        return s;
      bool ok = r->type != REDIS_REPLY_ERROR;
      std::string m = ok ? "" : std::string(r->str, r->len);
      freeReplyObject(r);
      if (!ok) {
        drop();
        return TierResult::fail(TierFault::Unavailable, where() + ": SELECT refused: " + m);
      }
    }
    return TierResult::success();
  }
  std::mutex mu_;

private:
  std::string where() const {
    return "redis tier " + u_.host + ":" + std::to_string(u_.port);
  }
  void drop() {
    if (ctx_)
      redisFree(ctx_);
    ctx_ = nullptr;
  }
  /// One command on the open connection; on an I/O error or timeout the
  /// connection is dropped (its state is unknown) and Unavailable returned.
  template <typename... A> TierResult raw(redisReply *&out, const char *fmt, A... args) {
    void *rep = redisCommand(ctx_, fmt, args...);
    if (!rep) {
      std::string m = where() + ": " + (ctx_->err ? std::string(ctx_->errstr) : "no reply");
      if (ctx_->err == REDIS_ERR_IO && (errno == EAGAIN || errno == EWOULDBLOCK))
        m = where() + ": no reply within " + std::to_string(timeoutMs_) + " ms";
      drop();
      return TierResult::fail(TierFault::Unavailable, m);
    }
    out = static_cast<redisReply *>(rep);
    return TierResult::success();
  }
  /// After a failure the server is left alone for a second: a dead or
  /// silent Redis costs one timeout a second, not one per object.
  template <typename... A> TierResult command(redisReply *&out, const char *fmt, A... args) {
    auto now = std::chrono::steady_clock::now();
    if (now < downUntil_)
      return TierResult::fail(TierFault::Unavailable, lastFailure_ + " (not retried yet)");
    TierResult c = connectLocked();
    if (c.ok())
      c = raw(out, fmt, args...);
    if (!c.ok()) {
      lastFailure_ = c.message;
      downUntil_ = std::chrono::steady_clock::now() + std::chrono::seconds(1);
    }
    return c;
  }
  std::chrono::steady_clock::time_point downUntil_{};
  std::string lastFailure_;

  RedisUrl u_;
  int64_t timeoutMs_;
  redisContext *ctx_ = nullptr;
};

} // namespace

Result<std::unique_ptr<TierBackend>> openRedisTier(const RedisTierOptions &o) {
  // hiredis writes with write(): a server that closes the connection in
  // the middle of a large SET would raise SIGPIPE and kill the process.
  // Ignored process-wide, the write fails with EPIPE: an Unavailable.
  std::signal(SIGPIPE, SIG_IGN);
  auto u = parseRedisUrl(o.url);
  if (!u.ok())
    return u.error();
  if (o.timeoutMs < 1)
    return Error::invalid("redis tier: the timeout must be at least 1 ms");
  auto t = std::make_unique<RedisTier>(u.take(), o.timeoutMs);
  {
    std::lock_guard<std::mutex> lock(t->mu_);
    TierResult c = t->connectLocked();
    if (!c.ok())
      return Error{ErrorKind::State, c.message};
  }
  return std::unique_ptr<TierBackend>(std::move(t));
}

} // namespace poolrt
