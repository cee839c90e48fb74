// A small synchronous Redis client (private to the library): RESP2 over a
// TCP socket, with a reply reader of its own that knows the few replies
// superkernel expects (no third-party client library).
//
// BOUNDED: every command has one deadline, `timeout` from its start, for
// everything it does: the connect when there is no connection (name lookup,
// TCP connect, AUTH, SELECT), writing the request and reading the whole
// reply. A server that trickles a reply, or answers nothing, costs at most
// the timeout. Every reply is read against ReplyLimits: the types the
// command can return, the largest string, the number of array elements and
// their nesting. A reply outside them (a 100 GB bulk length, an array header
// of 2^31 - 1 elements to a GET, bytes that are not RESP) is refused as soon
// as its header is read, never read in full, so a hostile server cannot make
// the client allocate more than the limits allow.
//
// A transport failure (refused, reset, closed, timed out, a refused reply)
// closes the connection; the next command reconnects. Writes use
// MSG_NOSIGNAL, so a server that drops us never raises SIGPIPE (a library
// must not change the process's signal dispositions).
//
// Not thread-safe: the owner serializes calls (RemoteStorage holds a mutex).
//
// URL: redis://[[user]:password@]host[:port][/db]. User and password may be
// percent-encoded. rediss:// (TLS) is refused with an explanation.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "superkernel/support/Error.h"

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

/// What a command may answer. An error reply (`-...`) is always accepted
/// (its line is bounded like a status line). Anything else outside these
/// limits is refused when its header is read.
struct ReplyLimits {
  static constexpr uint32_t bit(RedisReply::Type t) { return 1u << static_cast<uint32_t>(t); }
  uint32_t types = bit(RedisReply::Type::Nil) | bit(RedisReply::Type::String) | bit(RedisReply::Type::Status) |
                   bit(RedisReply::Type::Integer) | bit(RedisReply::Type::Array);
  uint64_t maxBytes = uint64_t{64} << 20;  // all bulk strings of the reply together
  uint32_t maxElements = 100000;           // array elements, all levels together
  uint32_t maxDepth = 2;                   // array nesting (0: no arrays)

  /// GET: a bulk string of at most `maxBytes`, or nil.
  static ReplyLimits value(uint64_t maxBytes);
  /// SET (NX: nil when not set), AUTH, SELECT, PING: a status line or nil.
  static ReplyLimits status();
  /// EXISTS, DEL, an EVAL that returns a number.
  static ReplyLimits integer();
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

  /// Run one command (argv, binary safe), connecting first when needed, all
  /// within one timeout. A Redis error reply is returned as a failure with
  /// transport = false; a reply outside `limits` as a transport failure.
  std::optional<RedisFailure> command(const std::vector<std::string_view>& argv, RedisReply& reply,
                                      const ReplyLimits& limits = {});

  bool connected() const { return fd_ >= 0; }
  void disconnect();
  const RedisUrl& url() const { return url_; }
  std::chrono::milliseconds timeout() const { return timeout_; }

 private:
  using Deadline = std::chrono::steady_clock::time_point;
  std::optional<RedisFailure> connect(Deadline deadline);
  std::optional<RedisFailure> exchange(const std::vector<std::string_view>& argv, RedisReply& reply,
                                       const ReplyLimits& limits, Deadline deadline);
  RedisUrl url_;
  std::chrono::milliseconds timeout_;
  int fd_ = -1;
};

}  // namespace sk::remote
