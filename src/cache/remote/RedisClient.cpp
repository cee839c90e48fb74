#include "cache/remote/RedisClient.h"

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <condition_variable>
#include <cstring>
#include <memory>
#include <mutex>
#include <system_error>
#include <thread>

#include <fmt/format.h>

#include "support/Fd.h"

namespace sk::remote {

namespace {

using Clock = std::chrono::steady_clock;
using Deadline = Clock::time_point;

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

// A status, error or integer line: longer is not a reply superkernel asks for.
constexpr size_t kMaxLine = 64 * 1024;
// A '$' or '*' header line ("$-1", "*2147483647"): 20 digits at most.
constexpr size_t kMaxHeader = 24;

std::string typeName(RedisReply::Type t) {
  switch (t) {
    case RedisReply::Type::Nil: return "nil";
    case RedisReply::Type::String: return "a string";
    case RedisReply::Type::Status: return "a status reply";
    case RedisReply::Type::Integer: return "an integer";
    case RedisReply::Type::Array: return "an array";
    case RedisReply::Type::Error: return "an error";
  }
  return "?";
}

std::string printable(std::string_view s) {
  std::string out;
  for (char c : s.substr(0, 32)) {
    const auto u = static_cast<unsigned char>(c);
    out += std::isprint(u) ? std::string(1, c) : fmt::format("\\x{:02x}", u);
  }
  return s.size() > 32 ? out + "..." : out;
}

// Milliseconds left until `deadline`, rounded up (poll's unit); 0 when past.
int msLeft(Deadline deadline) {
  const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return left <= 0 ? 0 : static_cast<int>(std::min<int64_t>(left, 1 << 30));
}

// The socket of one command, under its deadline. Every failure is a
// sentence for the caller's "<cmd> <host>:<port>: ..." message.
class Wire {
 public:
  Wire(int fd, Deadline deadline, std::chrono::milliseconds timeout) : fd_(fd), deadline_(deadline), timeout_(timeout) {}

  /// Wait until the socket is ready for `events`; an error text on timeout.
  std::optional<std::string> wait(short events, std::string_view doing) const {
    while (true) {
      const int left = msLeft(deadline_);
      if (left == 0) return fmt::format("timed out after {} ms ({})", timeout_.count(), doing);
      struct pollfd p {fd_, events, 0};
      const int n = ::poll(&p, 1, left);
      if (n > 0) return std::nullopt;  // ready, or an error the next call reports
      if (n < 0 && errno != EINTR) return fmt::format("poll: {}", std::strerror(errno));
    }
  }

  std::optional<std::string> sendAll(std::string_view data) {
    size_t done = 0;
    while (done < data.size()) {
      const ssize_t n = ::send(fd_, data.data() + done, data.size() - done, MSG_NOSIGNAL);
      if (n > 0) {
        done += static_cast<size_t>(n);
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
        if (auto e = wait(POLLOUT, "sending the request")) return e;
        continue;
      }
      const int err = errno;
      // A server that drops the connection mid-request (a value over its
      // proto-max-bulk-len) usually said why first.
      char why[256];
      const ssize_t m = ::recv(fd_, why, sizeof why, MSG_DONTWAIT);
      std::string said = m > 1 && why[0] == '-' ? std::string(why + 1, static_cast<size_t>(m) - 1) : std::string();
      said = said.substr(0, said.find('\r'));
      return said.empty() ? fmt::format("connection lost while sending the request: {}", std::strerror(err))
                          : fmt::format("the server closed the connection: {}", said);
    }
    return std::nullopt;
  }

  /// Up to `cap` bytes into `out` (at least one); an error text otherwise.
  std::optional<std::string> recvSome(char* out, size_t cap, size_t& got) {
    while (true) {
      const ssize_t n = ::recv(fd_, out, cap, 0);
      if (n > 0) {
        got = static_cast<size_t>(n);
        received_ += got;
        return std::nullopt;
      }
      if (n == 0) return fmt::format("connection closed by the server after {} bytes of the reply", received_);
      if (errno == EINTR) continue;
      if (errno != EAGAIN && errno != EWOULDBLOCK)
        return fmt::format("connection lost while reading the reply: {}", std::strerror(errno));
      if (auto e = wait(POLLIN, fmt::format("{} bytes of the reply read", received_))) return e;
    }
  }

  /// Up to `cap` more bytes (at least one) appended to `out`.
  std::optional<std::string> recvAppend(std::string& out, size_t cap) {
    const size_t old = out.size();
    out.resize(old + cap);
    size_t got = 0;
    auto e = recvSome(out.data() + old, cap, got);
    out.resize(old + (e ? 0 : got));
    return e;
  }

  /// Make `n` unread bytes available in the buffer.
  std::optional<std::string> need(size_t n) {
    while (in_.size() - pos_ < n) {
      if (pos_ > 0 && pos_ * 2 >= in_.size()) {
        in_.erase(0, pos_);
        pos_ = 0;
      }
      if (auto e = recvAppend(in_, std::max<size_t>(n - (in_.size() - pos_), 16 * 1024))) return e;
    }
    return std::nullopt;
  }

  /// One line without its CRLF; refused when it is longer than `max`.
  std::optional<std::string> line(size_t max, std::string& out) {
    size_t scanned = 0;
    while (true) {
      const std::string_view avail(in_.data() + pos_, in_.size() - pos_);
      const size_t crlf = avail.find("\r\n", scanned ? scanned - 1 : 0);
      if (crlf != std::string_view::npos && crlf <= max) {
        out.assign(avail.substr(0, crlf));
        pos_ += crlf + 2;
        return std::nullopt;
      }
      if (avail.size() > max + 1)
        return fmt::format("reply refused: a line longer than {} bytes ('{}')", max, printable(avail));
      scanned = avail.size();
      if (auto e = need(avail.size() + 1)) return e;
    }
  }

  /// `n` bytes appended to `out`: what is buffered, then straight from the
  /// socket (a large value is not copied twice).
  std::optional<std::string> bytes(size_t n, std::string& out) {
    const size_t take = std::min(n, in_.size() - pos_);
    out.append(in_, pos_, take);
    pos_ += take;
    while (out.size() < n) {
      if (auto e = recvAppend(out, std::min<size_t>(n - out.size(), 1 << 20))) return e;
    }
    return std::nullopt;
  }

  char peek() const { return in_[pos_]; }
  void skip(size_t n) { pos_ += n; }
  /// Bytes after the reply: buffered, or waiting in the socket (or its end).
  bool trailing() const {
    struct pollfd p {fd_, POLLIN, 0};
    return pos_ < in_.size() || ::poll(&p, 1, 0) > 0;
  }

 private:
  int fd_;
  Deadline deadline_;
  std::chrono::milliseconds timeout_;
  std::string in_;
  size_t pos_ = 0;
  uint64_t received_ = 0;
};

// RESP2 replies, refused at the header when outside the limits.
class ReplyReader {
 public:
  ReplyReader(Wire& wire, const ReplyLimits& limits, std::string_view command)
      : wire_(wire), limits_(limits), command_(command) {}

  std::optional<std::string> read(RedisReply& out) { return value(out, 0); }

 private:
  bool allowed(RedisReply::Type t, uint32_t depth) const {
    return depth > 0 || t == RedisReply::Type::Error || (limits_.types & ReplyLimits::bit(t)) != 0;
  }
  std::string refuse(std::string what) const {
    return fmt::format("reply refused: {}, which {} does not return", what, command_);
  }
  std::optional<std::string> count(std::string_view text, int64_t& n) const {
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
    if (text.empty() || ec != std::errc() || end != text.data() + text.size())
      return fmt::format("reply refused: '{}' is not a number", printable(text));
    return std::nullopt;
  }
  std::optional<std::string> charge(uint64_t n, std::string_view what) {
    if (n > limits_.maxBytes - bytes_)
      return fmt::format("reply refused: {} of {} bytes is over the limit of {} bytes for a {} reply", what, n,
                         limits_.maxBytes, command_);
    bytes_ += n;
    return std::nullopt;
  }

  std::optional<std::string> value(RedisReply& out, uint32_t depth) {
    if (auto e = wire_.need(1)) return e;
    const char kind = wire_.peek();
    using T = RedisReply::Type;
    T type;
    switch (kind) {
      case '+': type = T::Status; break;
      case '-': type = T::Error; break;
      case ':': type = T::Integer; break;
      case '$': type = T::String; break;
      case '*': type = T::Array; break;
      default:
        return fmt::format("reply refused: not a Redis reply (starts with '{}')", printable(std::string(1, kind)));
    }
    const bool nullable = type == T::String || type == T::Array;
    if (!allowed(type, depth) && !(nullable && allowed(T::Nil, depth))) return refuse(typeName(type) + " reply");
    wire_.skip(1);
    std::string text;
    if (auto e = wire_.line(nullable ? kMaxHeader : kMaxLine, text)) return e;
    if (!nullable) {
      if (auto e = charge(text.size(), "a line")) return e;
      out.type = type;
      if (type == T::Integer) return count(text, out.integer);
      out.str = std::move(text);
      return std::nullopt;
    }
    int64_t n = 0;
    if (auto e = count(text, n)) return e;
    if (n == -1) {
      if (!allowed(T::Nil, depth)) return refuse("nil");
      out.type = T::Nil;
      return std::nullopt;
    }
    if (n < 0) return fmt::format("reply refused: negative length {}{}", kind, n);
    if (!allowed(type, depth))
      return refuse(fmt::format("{} of {} {}{}", typeName(type), n, type == T::Array ? "element" : "byte", n == 1 ? "" : "s"));
    out.type = type;
    if (type == T::String) {
      if (auto e = charge(static_cast<uint64_t>(n), "a string")) return e;
      if (auto e = wire_.bytes(static_cast<size_t>(n), out.str)) return e;
      if (auto e = wire_.need(2)) return e;
      std::string crlf;
      (void)wire_.bytes(2, crlf);
      if (crlf != "\r\n") return "reply refused: a string not followed by CRLF";
      return std::nullopt;
    }
    if (depth >= limits_.maxDepth)
      return refuse(fmt::format("an array nested {} deep", depth + 1));
    if (static_cast<uint64_t>(n) > limits_.maxElements - elements_)
      return fmt::format("reply refused: an array of {} elements is over the limit of {} for a {} reply", n,
                         limits_.maxElements, command_);
    elements_ += static_cast<uint32_t>(n);
    out.elements.resize(static_cast<size_t>(n));
    for (RedisReply& e : out.elements)
      if (auto f = value(e, depth + 1)) return f;
    return std::nullopt;
  }

  Wire& wire_;
  const ReplyLimits& limits_;
  std::string_view command_;
  uint64_t bytes_ = 0;
  uint32_t elements_ = 0;
};

struct Address {
  sockaddr_storage addr{};
  socklen_t len = 0;
  int family = 0;
};

std::vector<Address> copyAddresses(const addrinfo* list) {
  std::vector<Address> out;
  for (const addrinfo* a = list; a; a = a->ai_next) {
    if (a->ai_addrlen > sizeof(sockaddr_storage)) continue;
    Address x;
    std::memcpy(&x.addr, a->ai_addr, a->ai_addrlen);
    x.len = a->ai_addrlen;
    x.family = a->ai_family;
    out.push_back(x);
  }
  return out;
}

int lookup(const std::string& host, const std::string& port, int flags, std::vector<Address>& out) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = flags | AI_NUMERICSERV;
  addrinfo* res = nullptr;
  const int rc = ::getaddrinfo(host.c_str(), port.c_str(), &hints, &res);
  if (rc == 0) out = copyAddresses(res);
  if (res) ::freeaddrinfo(res);
  return rc;
}

// Host name to addresses within the deadline. A numeric address needs no
// lookup; a name is resolved on a helper thread (getaddrinfo has no
// timeout), which is left to finish on its own when the deadline passes.
std::optional<std::string> resolve(const std::string& host, int port, Deadline deadline, std::vector<Address>& out) {
  const std::string service = std::to_string(port);
  int rc = lookup(host, service, AI_NUMERICHOST, out);
  if (rc == 0) return std::nullopt;
  struct Shared {
    std::mutex mu;
    std::condition_variable cv;
    bool done = false;
    int rc = 0;
    std::vector<Address> addrs;
  };
  auto shared = std::make_shared<Shared>();
  try {
    std::thread([shared, host, service] {
      std::vector<Address> addrs;
      const int r = lookup(host, service, 0, addrs);
      std::lock_guard<std::mutex> g(shared->mu);
      shared->rc = r;
      shared->addrs = std::move(addrs);
      shared->done = true;
      shared->cv.notify_all();
    }).detach();
  } catch (const std::system_error& e) {
    return fmt::format("cannot start the name lookup: {}", e.what());
  }
  std::unique_lock<std::mutex> lock(shared->mu);
  if (!shared->cv.wait_until(lock, deadline, [&] { return shared->done; })) return "timed out resolving the host name";
  if (shared->rc != 0) return fmt::format("cannot resolve the host name: {}", ::gai_strerror(shared->rc));
  out = std::move(shared->addrs);
  return std::nullopt;
}

std::string request(const std::vector<std::string_view>& argv) {
  size_t total = 16;
  for (auto a : argv) total += a.size() + 24;
  std::string out;
  out.reserve(total);
  out += fmt::format("*{}\r\n", argv.size());
  for (auto a : argv) {
    out += fmt::format("${}\r\n", a.size());
    out += a;
    out += "\r\n";
  }
  return out;
}

}  // namespace

ReplyLimits ReplyLimits::value(uint64_t maxBytes) {
  ReplyLimits l;
  l.types = bit(RedisReply::Type::String) | bit(RedisReply::Type::Nil);
  l.maxBytes = maxBytes;
  l.maxElements = 0;
  l.maxDepth = 0;
  return l;
}

ReplyLimits ReplyLimits::status() {
  ReplyLimits l = value(kMaxLine);
  l.types = bit(RedisReply::Type::Status) | bit(RedisReply::Type::Nil);
  return l;
}

ReplyLimits ReplyLimits::integer() {
  ReplyLimits l = value(kMaxLine);
  l.types = bit(RedisReply::Type::Integer);
  return l;
}

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
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

std::optional<RedisFailure> RedisClient::connect(Deadline deadline) {
  disconnect();
  auto fail = [&](std::string why) {
    return RedisFailure{true, fmt::format("cannot connect to {}:{}: {}", url_.host, url_.port, why)};
  };
  std::vector<Address> addrs;
  if (auto e = resolve(url_.host, url_.port, deadline, addrs)) return fail(*e);
  std::string why = "no address";
  for (const Address& a : addrs) {
    detail::UniqueFd fd(::socket(a.family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    if (!fd.valid()) {
      why = std::strerror(errno);
      continue;
    }
    int rc = ::connect(fd.get(), reinterpret_cast<const sockaddr*>(&a.addr), a.len);
    if (rc != 0 && errno == EINPROGRESS) {
      if (auto e = Wire(fd.get(), deadline, timeout_).wait(POLLOUT, "connecting")) return fail(*e);
      int err = 0;
      socklen_t len = sizeof err;
      rc = ::getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &err, &len) == 0 && err == 0 ? 0 : -1;
      errno = err;
    }
    if (rc != 0) {
      why = std::strerror(errno);
      continue;
    }
    const int one = 1;
    (void)::setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    (void)::setsockopt(fd.get(), SOL_SOCKET, SO_KEEPALIVE, &one, sizeof one);
    fd_ = fd.release();
    break;
  }
  if (fd_ < 0) return fail(why);
  auto handshake = [&](std::vector<std::string_view> argv, std::string what) -> std::optional<RedisFailure> {
    RedisReply r;
    if (auto f = exchange(argv, r, ReplyLimits::status(), deadline)) {
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
    if (auto f = handshake({"SELECT", db}, "SELECT " + db)) return f;
  }
  return std::nullopt;
}

std::optional<RedisFailure> RedisClient::command(const std::vector<std::string_view>& argv, RedisReply& reply,
                                                 const ReplyLimits& limits) {
  const Deadline deadline = Clock::now() + timeout_;
  if (fd_ < 0) {
    if (auto f = connect(deadline)) return f;
  }
  return exchange(argv, reply, limits, deadline);
}

std::optional<RedisFailure> RedisClient::exchange(const std::vector<std::string_view>& argv, RedisReply& reply,
                                                  const ReplyLimits& limits, Deadline deadline) {
  const std::string name = argv.empty() ? std::string() : std::string(argv[0]);
  Wire wire(fd_, deadline, timeout_);
  reply = RedisReply{};
  std::optional<std::string> problem = wire.sendAll(request(argv));
  if (!problem) problem = ReplyReader(wire, limits, name).read(reply);
  if (problem) {
    disconnect();
    reply = RedisReply{};
    return RedisFailure{true, fmt::format("{} {}:{}: {}", name, url_.host, url_.port, *problem)};
  }
  // Bytes after the reply (a second reply, garbage, the connection's end):
  // the stream is out of step with our commands, so start a new one.
  if (wire.trailing()) disconnect();
  if (reply.type == RedisReply::Type::Error) {
    // After a protocol error (e.g. a value over proto-max-bulk-len) the
    // server closes the connection: drop it now so the next command
    // reconnects instead of failing too.
    const bool closed = reply.str.find("Protocol error") != std::string::npos;
    if (closed) disconnect();
    return RedisFailure{closed, fmt::format("{} refused by {}:{}: {}", name, url_.host, url_.port, reply.str)};
  }
  return std::nullopt;
}

}  // namespace sk::remote
