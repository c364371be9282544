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

#include "TierBackends.h"

#include <hiredis/hiredis.h>

#include <cerrno>
#include <csignal>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>

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

/// A reply, freed when it goes (or when the last TierBytes sharing it does).
struct ReplyFree {
  void operator()(redisReply *r) const { freeReplyObject(r); }
};
using Reply = std::unique_ptr<redisReply, ReplyFree>;

std::string textOf(const redisReply &r) { return std::string(r.str, r.len); }

class RedisTier final : public KeyCheckedBackend {
public:
  RedisTier(RedisUrl u, int64_t timeoutMs) : u_(std::move(u)), timeoutMs_(timeoutMs) {}
  ~RedisTier() override {
    if (ctx_)
      redisFree(ctx_);
  }
  std::string name() const override { return "redis"; }
  bool local() const override { return false; }
  TierUsage usage() const override { return {}; }

  /// Connects now (openRedisTier fails early on a bad password or a dead
  /// server, and a later call reconnects).
  TierResult connect() {
    std::lock_guard<std::mutex> lock(mu_);
    return connectLocked();
  }

protected:
  TierResult putChecked(const std::string &key, std::string_view bytes) override {
    Reply r;
    TierResult s = run(r, "SET %b %b", key.data(), key.size(), bytes.data(), bytes.size());
    if (!s.ok() || r->type != REDIS_REPLY_ERROR)
      return s;
    std::string m = textOf(*r);
    // OOM under maxmemory with a noeviction policy: the store did not fit.
    return TierResult::fail(m.rfind("OOM", 0) == 0 ? TierFault::Full : TierFault::Unavailable,
                            "redis tier: SET " + key + ": " + m);
  }

  TierGet getChecked(const std::string &key) override {
    Reply r;
    TierResult s = run(r, "GET %b", key.data(), key.size());
    if (!s.ok())
      return tierGetFailure(s);
    TierGet g;
    if (r->type == REDIS_REPLY_STRING) {
      // The reply owns the bytes: the object refers to it, no copy.
      const char *data = r->str;
      size_t size = r->len;
      g.bytes = TierBytes(std::shared_ptr<const void>(std::move(r)), data, size);
    } else if (r->type == REDIS_REPLY_NIL) {
      g.fault = TierFault::NotFound;
    } else {
      g.fault = TierFault::Unavailable;
      g.message = "redis tier: GET " + key + ": " +
                  (r->type == REDIS_REPLY_ERROR ? textOf(*r)
                                                : std::string("unexpected reply type"));
    }
    return g;
  }

  TierResult containsChecked(const std::string &key) override {
    Reply r;
    TierResult s = run(r, "EXISTS %b", key.data(), key.size());
    if (!s.ok())
      return s;
    if (r->type == REDIS_REPLY_ERROR)
      return TierResult::fail(TierFault::Unavailable, "redis tier: EXISTS: " + textOf(*r));
    if (r->type != REDIS_REPLY_INTEGER)
      return TierResult::fail(TierFault::Unavailable, "redis tier: EXISTS: unexpected reply type");
    return r->integer > 0 ? TierResult::success() : TierResult::fail(TierFault::NotFound, "");
  }

  TierResult removeChecked(const std::string &key) override {
    Reply r;
    TierResult s = run(r, "DEL %b", key.data(), key.size());
    if (!s.ok() || r->type != REDIS_REPLY_ERROR)
      return s;
    return TierResult::fail(TierFault::Unavailable, "redis tier: DEL " + key + ": " + textOf(*r));
  }

private:
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
    TierResult s = TierResult::success();
    if (!u_.password.empty())
      s = handshake("AUTH", "AUTH %b", u_.password.data(), u_.password.size());
    if (s.ok() && u_.db != 0)
      s = handshake("SELECT", "SELECT %d", u_.db);
    return s;
  }
  /// One command of a new connection's setup (AUTH, SELECT): one the
  /// server refuses drops the connection.
  template <typename... A>
  TierResult handshake(const char *verb, const char *fmt, A... args) {
    Reply r;
    TierResult s = raw(r, fmt, args...);
    if (!s.ok() || r->type != REDIS_REPLY_ERROR)
      return s;
    std::string m = textOf(*r);
    r.reset();
    drop();
    return TierResult::fail(TierFault::Unavailable, where() + ": " + verb + " refused: " + m);
  }
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
  template <typename... A> TierResult raw(Reply &out, const char *fmt, A... args) {
    void *rep = redisCommand(ctx_, fmt, args...);
    if (!rep) {
      std::string m = where() + ": " + (ctx_->err ? std::string(ctx_->errstr) : "no reply");
      if (ctx_->err == REDIS_ERR_IO && (errno == EAGAIN || errno == EWOULDBLOCK))
        m = where() + ": no reply within " + std::to_string(timeoutMs_) + " ms";
      drop();
      return TierResult::fail(TierFault::Unavailable, m);
    }
    out.reset(static_cast<redisReply *>(rep));
    return TierResult::success();
  }
  /// After a failure the server is left alone for a second: a dead or
  /// silent Redis costs one timeout a second, not one per object.
  template <typename... A> TierResult command(Reply &out, const char *fmt, A... args) {
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
  /// What every operation does with the connection: one command under its
  /// lock (the reply, once out, is the caller's alone).
  template <typename... A> TierResult run(Reply &out, const char *fmt, A... args) {
    std::lock_guard<std::mutex> lock(mu_);
    return command(out, fmt, args...);
  }

  std::mutex mu_; // the connection and the fields below
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
  if (TierResult c = t->connect(); !c.ok())
    return Error{ErrorKind::State, c.message};
  return std::unique_ptr<TierBackend>(std::move(t));
}

} // namespace poolrt
