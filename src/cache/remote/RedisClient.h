// A small synchronous Redis client over hiredis (private to the library: no
// hiredis type appears in this header).
//
// Every network wait is bounded: the connect by `timeout` (hiredis'
// redisConnectWithTimeout), and every read and write afterwards by the same
// timeout (SO_RCVTIMEO / SO_SNDTIMEO via redisSetTimeout). A transport error
// (refused, reset, timed out, protocol error) closes the connection; the next
// command reconnects. SIGPIPE from writing to a socket the server closed is
// blocked and consumed around each command, so a server that drops us never
// kills the process (a library must not change the process's signal
// dispositions).
//
// Not thread-safe: the owner serializes calls (RemoteStorage holds a mutex).
//
// URL: redis://[[user]:password@]host[:port][/db]. User and password may be
// percent-encoded. rediss:// (TLS) is refused with an explanation: Debian's
// hiredis (0.14) has no TLS support.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "superkernel/support/Error.h"

struct redisContext;

namespace sk::remote {

struct RedisUrl {
  std::string host;
  int port = 6379;
  int db = 0;
  std::string user;                 // empty: the default user (AUTH password)
  std::optional<std::string> password;
  /// The URL with the password replaced by "***" (for logs and tools).
  std::string redacted() const;
};

/// Parse redis://[[user]:password@]host[:port][/db]. BadInput with what is
/// wrong and an example.
Expected<RedisUrl> parseRedisUrl(std::string_view url);

/// One reply, flattened to what superkernel uses.
struct RedisReply {
  enum class Type : uint8_t { Nil, String, Status, Integer, Array, Error };
  Type type = Type::Nil;
  std::string str;                  // String, Status, Error
  int64_t integer = 0;
  std::vector<RedisReply> elements; // Array
};

/// A transport failure (the connection was dropped) vs a server reply error
/// (the connection stays usable, e.g. OOM or a refused command).
struct RedisFailure {
  bool transport = false;
  std::string message;
};

class RedisClient {
 public:
  RedisClient(RedisUrl url, std::chrono::milliseconds timeout);
  ~RedisClient();
  RedisClient(const RedisClient&) = delete;
  RedisClient& operator=(const RedisClient&) = delete;

  /// Run one command (argv, binary safe), connecting first when needed.
  /// A Redis error reply is returned as a failure with transport = false.
  std::optional<RedisFailure> command(const std::vector<std::string_view>& argv, RedisReply& reply);

  bool connected() const { return ctx_ != nullptr; }
  void disconnect();
  const RedisUrl& url() const { return url_; }
  std::chrono::milliseconds timeout() const { return timeout_; }

 private:
  std::optional<RedisFailure> connect();
  RedisUrl url_;
  std::chrono::milliseconds timeout_;
  redisContext* ctx_ = nullptr;
};

}  // namespace sk::remote
