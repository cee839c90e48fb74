// A fake Redis server for the remote-cache fault tests: it listens on
// 127.0.0.1 (a free port the kernel picks), reads RESP commands and answers
// each one as the test's script says: a good reply, a bad one (garbage, a
// 100 GB length, an array header of 2^31 - 1 elements, ...), a reply cut
// mid-frame, one trickled a byte at a time, an endless value, or nothing.
//
// One thread with bounded loops: every wait is a poll of at most 10 ms, and
// the thread stops on destruction or by itself after `lifetime`. It reads at
// most 16 MiB of requests per connection and never answers anything but the
// loopback interface.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <functional>
#include <list>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

namespace sk::test {

/// How the server answers one command.
struct Answer {
  std::string bytes;                        // sent first; empty and nothing else set: never answer
  std::chrono::milliseconds pace{0};        // 0: all at once; else `chunk` bytes per `pace`
  size_t chunk = 1;
  bool endless = false;                     // then 'x' bytes at the pace, forever (a huge value sent slowly)
  bool close = false;                       // close the connection once `bytes` are sent

  static Answer reply(std::string b) {
    Answer a;
    a.bytes = std::move(b);
    return a;
  }
  static Answer silence() { return Answer(); }
  static Answer closed(std::string b = {}) {
    Answer a = reply(std::move(b));
    a.close = true;
    return a;
  }
  static Answer trickle(std::string b, std::chrono::milliseconds every) {
    Answer a = reply(std::move(b));
    a.pace = every;
    return a;
  }
};

/// argv of one request (binary safe) -> its answer. Runs on the server thread.
using Script = std::function<Answer(const std::vector<std::string>& argv)>;

class HostileRedis {
 public:
  explicit HostileRedis(Script script, std::chrono::seconds lifetime = std::chrono::seconds(60))
      : script_(std::move(script)), end_(Clock::now() + lifetime) {
    listener_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    if (listener_ < 0 || ::bind(listener_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
        ::listen(listener_, 16) != 0 || ::getsockname(listener_, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
      reason_ = fmt::format("cannot listen on 127.0.0.1: {}", std::strerror(errno));
      return;
    }
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this] { loop(); });
  }
  ~HostileRedis() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
    if (listener_ >= 0) ::close(listener_);
  }
  HostileRedis(const HostileRedis&) = delete;
  HostileRedis& operator=(const HostileRedis&) = delete;

  bool ok() const { return port_ > 0; }
  const std::string& reason() const { return reason_; }
  int port() const { return port_; }
  std::string url() const { return fmt::format("redis://127.0.0.1:{}/0", port_); }
  /// Command names received so far, in order.
  std::vector<std::string> commands() const {
    std::lock_guard<std::mutex> g(mu_);
    return seen_;
  }

 private:
  using Clock = std::chrono::steady_clock;
  struct Conn {
    int fd = -1;
    std::string in, out;
    size_t sent = 0;
    Answer how;                 // pacing of what is in `out`
    Clock::time_point next{};   // when the next paced chunk may go
    bool mute = false;          // answered with silence: reads and ignores everything after
  };

  void loop() {
    std::list<Conn> conns;
    while (!stop_ && Clock::now() < end_) {
      std::vector<pollfd> fds{{listener_, POLLIN, 0}};
      const auto now = Clock::now();
      for (Conn& c : conns) {
        const bool due = pending(c) && (c.how.pace.count() == 0 || now >= c.next);  // a paced send waits for poll's 10 ms
        fds.push_back({c.fd, static_cast<short>(POLLIN | (due ? POLLOUT : 0)), 0});
      }
      (void)::poll(fds.data(), fds.size(), 10);
      if (fds[0].revents & POLLIN) {
        int fd = ::accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (fd >= 0) conns.emplace_back().fd = fd;
      }
      for (auto it = conns.begin(); it != conns.end();) {
        if (serve(*it)) {
          ++it;
        } else {
          ::close(it->fd);
          it = conns.erase(it);
        }
      }
    }
    for (Conn& c : conns) ::close(c.fd);
  }

  static bool pending(const Conn& c) { return c.sent < c.out.size() || c.how.endless; }

  // false: close the connection.
  bool serve(Conn& c) {
    char buf[65536];
    while (true) {
      ssize_t n = ::recv(c.fd, buf, sizeof buf, MSG_DONTWAIT);
      if (n > 0) {
        c.in.append(buf, static_cast<size_t>(n));
        if (c.in.size() > (16u << 20)) return false;
        continue;
      }
      if (n == 0) return false;
      if (errno == EINTR) continue;
      if (errno != EAGAIN && errno != EWOULDBLOCK) return false;
      break;
    }
    if (c.mute) c.in.clear();
    std::vector<std::string> argv;
    while (!pending(c) && parse(c.in, argv)) {
      {
        std::lock_guard<std::mutex> g(mu_);
        seen_.push_back(argv.empty() ? std::string() : argv[0]);
      }
      c.how = script_(argv);
      c.out = c.how.bytes;
      c.sent = 0;
      c.next = Clock::now();
      c.mute = c.out.empty() && !c.how.endless && !c.how.close;
      if (c.mute) c.in.clear();
    }
    return send(c);
  }

  bool send(Conn& c) {
    while (pending(c)) {
      const auto now = Clock::now();
      if (c.how.pace.count() > 0 && now < c.next) return true;
      if (c.sent >= c.out.size()) {  // endless: keep the value coming
        c.out.assign(std::max<size_t>(c.how.chunk, 1), 'x');
        c.sent = 0;
      }
      const size_t n = c.how.pace.count() > 0 ? std::min(c.how.chunk, c.out.size() - c.sent) : c.out.size() - c.sent;
      const ssize_t w = ::send(c.fd, c.out.data() + c.sent, n, MSG_NOSIGNAL | MSG_DONTWAIT);
      if (w < 0) return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
      c.sent += static_cast<size_t>(w);
      c.next = now + c.how.pace;
    }
    return !c.how.close;
  }

  // One "*N\r\n$len\r\n...\r\n" request off the front of `in`.
  static bool parse(std::string& in, std::vector<std::string>& argv) {
    argv.clear();
    size_t pos = 0;
    auto number = [&](char kind, long long& out) {
      if (pos >= in.size() || in[pos] != kind) return false;
      size_t end = in.find("\r\n", pos);
      if (end == std::string::npos) return false;
      out = std::stoll(in.substr(pos + 1, end - pos - 1));
      pos = end + 2;
      return true;
    };
    long long n = 0;
    if (!number('*', n)) return false;
    for (long long i = 0; i < n; ++i) {
      long long len = 0;
      if (!number('$', len) || in.size() < pos + static_cast<size_t>(len) + 2) return false;
      argv.push_back(in.substr(pos, static_cast<size_t>(len)));
      pos += static_cast<size_t>(len) + 2;
    }
    in.erase(0, pos);
    return true;
  }

  Script script_;
  Clock::time_point end_;
  int listener_ = -1, port_ = -1;
  std::string reason_;
  std::atomic<bool> stop_{false};
  mutable std::mutex mu_;
  std::vector<std::string> seen_;
  std::thread thread_;
};

}  // namespace sk::test
