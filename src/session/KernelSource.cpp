#include "superkernel/session/KernelSource.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fmt/format.h>
#include <fstream>
#include <sstream>

#include "superkernel/cache/Cache.h"
#include "superkernel/cache/Key.h"

namespace sk {
namespace fs = std::filesystem;

namespace {
bool validFileName(std::string_view n) {
  if (n.empty() || n.size() > 200 || n == "." || n == "..") return false;
  for (char c : n)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' ||
          c == '.'))
      return false;
  return true;
}

bool knownExtension(const fs::path& p) {
  const std::string e = p.extension().string();
  return e == ".c" || e == ".cpp" || e == ".cc" || e == ".cxx";
}

Expected<std::string> readAll(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) return ioError(fmt::format("cannot read {}: {}", p.string(), std::strerror(errno)));
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}
}  // namespace

Expected<fs::path> storeKernelSource(const fs::path& dir, std::string_view fileName, std::string_view text) {
  if (!validFileName(fileName) || !knownExtension(fs::path(std::string(fileName))))
    return badInput(fmt::format("kernel source name \"{}\": use a plain file name (letters, digits, _ - .) ending "
                                "in .c, .cpp, .cc or .cxx",
                                fileName));
  // The name is hashed too: the same text under two names is two files,
  // so a diagnostic always names the file the caller gave.
  std::string id = sha256Hex(std::string(fileName) + '\0' + std::string(text)).substr(0, 32);
  const fs::path sub = dir / id;
  const fs::path file = sub / std::string(fileName);
  std::error_code ec;
  if (fs::is_regular_file(file, ec)) {
    auto have = readAll(file);
    if (have && *have == text) return file;
  }
  for (const fs::path& d : {dir, sub}) {
    if (::mkdir(d.c_str(), 0700) != 0 && errno != EEXIST)
      return ioError(fmt::format("cannot create {}: {}", d.string(), std::strerror(errno)));
  }
  // Written under a unique temporary name, then renamed over: a reader never
  // sees a partial file, and concurrent writers of the same text agree.
  std::string tmpl = (sub / ".tmp.XXXXXX").string();
  int fd = ::mkstemp(tmpl.data());
  if (fd < 0) return ioError(fmt::format("cannot create a file in {}: {}", sub.string(), std::strerror(errno)));
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      int e = errno;
      ::close(fd);
      ::unlink(tmpl.c_str());
      return ioError(fmt::format("cannot write {}: {}", tmpl, std::strerror(e)));
    }
    done += static_cast<size_t>(n);
  }
  if (::close(fd) != 0 || ::rename(tmpl.c_str(), file.c_str()) != 0) {
    int e = errno;
    ::unlink(tmpl.c_str());
    return ioError(fmt::format("cannot write {}: {}", file.string(), std::strerror(e)));
  }
  return file;
}

namespace {
// A memory-only session has no cache directory: its sources go to one
// private directory per process (mkdtemp, 0700), removed at exit.
Expected<fs::path> privateSourceDir() {
  struct Dir {
    fs::path path;
    std::string error;
    Dir() {
      const char* t = std::getenv("TMPDIR");
      std::string tmpl = std::string(t && *t ? t : "/tmp") + "/superkernel-sources-XXXXXX";
      if (::mkdtemp(tmpl.data())) path = tmpl;
      else error = std::strerror(errno);
    }
    ~Dir() {
      std::error_code ec;
      if (!path.empty()) fs::remove_all(path, ec);
    }
  };
  static Dir dir;
  if (dir.path.empty()) return ioError("cannot create a private directory for kernel sources: " + dir.error);
  return dir.path;
}
}  // namespace

Expected<fs::path> storeKernelSource(Session& session, std::string_view fileName, std::string_view text) {
  const auto& cache = session.cache();
  if (cache->diskEnabled() && !cache->root().empty())
    return storeKernelSource(cache->root() / "sources", fileName, text);
  SK_ASSIGN_OR_RETURN(fs::path dir, privateSourceDir());
  return storeKernelSource(dir, fileName, text);
}

Status addKernelFromMemory(Graph& graph, Session& session, KernelDecl decl, std::string_view text) {
  auto path = storeKernelSource(session, decl.source, text);
  if (!path) return std::move(path).error().context("kernel " + decl.name);
  decl.source = path->string();
  decl.sourcePath = *path;
  return graph.addKernel(std::move(decl));
}

}  // namespace sk
