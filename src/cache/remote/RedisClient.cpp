#include "cache/remote/RedisClient.h"

#include <hiredis/hiredis.h>
#include <pthread.h>
#include <signal.h>
#include <sys/time.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>

#include <fmt/format.h>

namespace sk::remote {

namespace {

constexpr const char* kUrlExample = "redis://host:6379/0 or redis://user:password@host:6379";

Expected<std::string> percentDecode(std::string_view s, std::string_view what) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '%') {
      out += s[i];
      continue;
    }
    auto hex = [](char c) -> int {
      if (c >= '0' && c <= '9') return c - '0';
      if (c >= 'a' && c <= 'f') return c - 'a' + 10;
      if (c >= 'A' && c <= 'F') return c - 'A' + 10;
      return -1;
    };
    int hi = i + 1 < s.size() ? hex(s[i + 1]) : -1, lo = i + 2 < s.size() ? hex(s[i + 2]) : -1;
    if (hi < 0 || lo < 0) return badInput(fmt::format("bad percent escape in the {}", what));
    out += static_cast<char>(hi * 16 + lo);
    i += 2;
  }
  return out;
}

bool allDigits(std::string_view s) {
  return !s.empty() && s.size() <= 9 &&
         std::all_of(s.begin(), s.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; });
}

RedisReply convert(const redisReply* r) {
  RedisReply out;
  switch (r->type) {
    case REDIS_REPLY_STRING: out.type = RedisReply::Type::String; out.str.assign(r->str, r->len); break;
    case REDIS_REPLY_STATUS: out.type = RedisReply::Type::Status; out.str.assign(r->str, r->len); break;
    case REDIS_REPLY_ERROR: out.type = RedisReply::Type::Error; out.str.assign(r->str, r->len); break;
    case REDIS_REPLY_INTEGER: out.type = RedisReply::Type::Integer; out.integer = r->integer; break;
    case REDIS_REPLY_ARRAY:
      out.type = RedisReply::Type::Array;
      for (size_t i = 0; i < r->elements; ++i) out.elements.push_back(convert(r->element[i]));
      break;
    default: out.type = RedisReply::Type::Nil; break;
  }
  return out;
}

// Blocks SIGPIPE in this thread for the scope and discards one that the scope
// raised (a write to a socket the server closed), leaving one that was
// already pending alone.
class SigpipeGuard {
 public:
  SigpipeGuard() {
    sigemptyset(&pipe_);
    sigaddset(&pipe_, SIGPIPE);
    sigset_t pending;
    sigemptyset(&pending);
    ::sigpending(&pending);
    wasPending_ = sigismember(&pending, SIGPIPE) == 1;
    ::pthread_sigmask(SIG_BLOCK, &pipe_, &old_);
  }
  ~SigpipeGuard() {
    if (!wasPending_) {
      sigset_t pending;
      sigemptyset(&pending);
      ::sigpending(&pending);
      if (sigismember(&pending, SIGPIPE) == 1) {
        struct timespec zero {};
        while (::sigtimedwait(&pipe_, nullptr, &zero) < 0 && errno == EINTR) {
        }
      }
    }
    ::pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }
  SigpipeGuard(const SigpipeGuard&) = delete;
  SigpipeGuard& operator=(const SigpipeGuard&) = delete;

 private:
  sigset_t pipe_, old_;
  bool wasPending_ = false;
};

struct timeval toTimeval(std::chrono::milliseconds ms) {
  struct timeval tv {};
  tv.tv_sec = static_cast<time_t>(ms.count() / 1000);
  tv.tv_usec = static_cast<suseconds_t>((ms.count() % 1000) * 1000);
  return tv;
}

}  // namespace

std::string RedisUrl::redacted() const {
  std::string auth;
  if (!user.empty() || password) auth = user + (password ? ":***" : "") + "@";
  std::string h = host.find(':') != std::string::npos ? "[" + host + "]" : host;
  return fmt::format("redis://{}{}:{}/{}", auth, h, port, db);
}

Expected<RedisUrl> parseRedisUrl(std::string_view url) {
  auto bad = [&](std::string why) {
    return badInput(fmt::format("remote cache URL '{}': {} (expected {})", url, why, kUrlExample));
  };
  if (url.rfind("rediss://", 0) == 0) {
    return badInput(fmt::format(
        "remote cache URL '{}': TLS (rediss://) is not supported by this build: Debian's hiredis (0.14) has no TLS. "
        "Reach a TLS-only server through a local tunnel (stunnel, spiped) and point SK_REMOTE_CACHE at its "
        "loopback port",
        url));
  }
  constexpr std::string_view scheme = "redis://";
  if (url.rfind(scheme, 0) != 0) return bad("it does not start with redis://");
  std::string_view rest = url.substr(scheme.size());
  RedisUrl u;
  if (size_t at = rest.rfind('@'); at != std::string_view::npos) {
    std::string_view info = rest.substr(0, at);
    rest = rest.substr(at + 1);
    size_t colon = info.find(':');
    auto user = percentDecode(info.substr(0, colon), "user name");
    if (!user) return bad(user.error().message());
    u.user = *user;
    if (colon != std::string_view::npos) {
      auto pw = percentDecode(info.substr(colon + 1), "password");
      if (!pw) return bad(pw.error().message());
      u.password = *pw;
    }
  }
  std::string_view hostport = rest, dbText;
  if (size_t slash = rest.find('/'); slash != std::string_view::npos) {
    hostport = rest.substr(0, slash);
    dbText = rest.substr(slash + 1);
  }
  std::string_view portText;
  if (!hostport.empty() && hostport.front() == '[') {
    size_t close = hostport.find(']');
    if (close == std::string_view::npos) return bad("unterminated [IPv6] host");
    u.host = std::string(hostport.substr(1, close - 1));
    std::string_view after = hostport.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') return bad("junk after the [IPv6] host");
      portText = after.substr(1);
      if (portText.empty()) return bad("empty port");
    }
  } else {
    size_t colon = hostport.rfind(':');
    u.host = std::string(hostport.substr(0, colon));
    if (colon != std::string_view::npos) {
      portText = hostport.substr(colon + 1);
      if (portText.empty()) return bad("empty port");
    }
  }
  if (u.host.empty()) return bad("no host");
  if (!portText.empty()) {
    if (!allDigits(portText)) return bad(fmt::format("port '{}' is not a number", portText));
    u.port = std::stoi(std::string(portText));
    if (u.port < 1 || u.port > 65535) return bad(fmt::format("port {} is out of range", u.port));
  }
  if (!dbText.empty()) {
    if (!allDigits(dbText)) return bad(fmt::format("database '{}' is not a number", dbText));
    u.db = std::stoi(std::string(dbText));
  }
  return u;
}

RedisClient::RedisClient(RedisUrl url, std::chrono::milliseconds timeout) : url_(std::move(url)), timeout_(timeout) {}

RedisClient::~RedisClient() { disconnect(); }

void RedisClient::disconnect() {
  if (ctx_) ::redisFree(ctx_);
  ctx_ = nullptr;
}

std::optional<RedisFailure> RedisClient::connect() {
  disconnect();
  SigpipeGuard guard;
  redisContext* c = ::redisConnectWithTimeout(url_.host.c_str(), url_.port, toTimeval(timeout_));
  if (!c) return RedisFailure{true, "cannot allocate a Redis context"};
  if (c->err) {
    std::string why = c->errstr;
    ::redisFree(c);
    return RedisFailure{true, fmt::format("cannot connect to {}:{}: {}", url_.host, url_.port, why)};
  }
  if (::redisSetTimeout(c, toTimeval(timeout_)) != REDIS_OK) {
    ::redisFree(c);
    return RedisFailure{true, "cannot set the socket timeout"};
  }
  (void)::redisEnableKeepAlive(c);
  ctx_ = c;
  auto handshake = [&](std::vector<std::string_view> argv, const char* what) -> std::optional<RedisFailure> {
    RedisReply r;
    if (auto f = command(argv, r)) {
      disconnect();
      f->transport = true;  // a failed handshake leaves no usable connection
      f->message = fmt::format("{} failed: {}", what, f->message);
      return f;
    }
    return std::nullopt;
  };
  if (url_.password) {
    std::vector<std::string_view> argv{"AUTH"};
    if (!url_.user.empty()) argv.push_back(url_.user);
    argv.push_back(*url_.password);
    if (auto f = handshake(argv, "AUTH")) return f;
  }
  if (url_.db != 0) {
    std::string db = std::to_string(url_.db);
    if (auto f = handshake({"SELECT", db}, fmt::format("SELECT {}", db).c_str())) return f;
  }
  return std::nullopt;
}

std::optional<RedisFailure> RedisClient::command(const std::vector<std::string_view>& argv, RedisReply& reply) {
  if (!ctx_) {
    if (auto f = connect()) return f;
  }
  std::vector<const char*> ptrs;
  std::vector<size_t> lens;
  for (auto a : argv) {
    ptrs.push_back(a.data());
    lens.push_back(a.size());
  }
  redisReply* r = nullptr;
  {
    SigpipeGuard guard;
    r = static_cast<redisReply*>(
        ::redisCommandArgv(ctx_, static_cast<int>(ptrs.size()), ptrs.data(), lens.data()));
  }
  if (!r) {
    std::string why = ctx_->errstr[0] ? ctx_->errstr : "connection lost";
    int err = ctx_->err;
    disconnect();
    if (err == REDIS_ERR_IO && (why.find("Resource temporarily unavailable") != std::string::npos ||
                                why.find("timed out") != std::string::npos))
      why = fmt::format("timed out after {} ms", timeout_.count());
    return RedisFailure{true, fmt::format("{} {}:{}: {}", std::string(argv.empty() ? "" : argv[0]), url_.host,
                                          url_.port, why)};
  }
  reply = convert(r);
  ::freeReplyObject(r);
  if (reply.type == RedisReply::Type::Error) {
    // After a protocol error (e.g. a value over proto-max-bulk-len) the
    // server closes the connection: drop it now so the next command
    // reconnects instead of failing too.
    const bool closed = reply.str.find("Protocol error") != std::string::npos;
    if (closed) disconnect();
    return RedisFailure{closed, fmt::format("{} refused by {}:{}: {}", std::string(argv[0]), url_.host, url_.port,
                                           reply.str)};
  }
  return std::nullopt;
}

}  // namespace sk::remote
