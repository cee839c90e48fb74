// The link scratch files every recipe writes alike (see LinkFiles.h).
#include "target/LinkFiles.h"

#include <fmt/format.h>

#include "support/BuildFiles.h"

namespace sk {
namespace fs = std::filesystem;

fs::path linkScratchDir(const LinkRequest& req) {
  fs::path dir = req.outputFile.parent_path();
  if (dir.empty()) dir = ".";
  return dir;
}

Expected<fs::path> writeLinkObject(const fs::path& dir, size_t index, const LinkObject& object) {
  if (!object.bytes) return internalError("link: an object without bytes");
  fs::path p = dir / fmt::format("obj_{}_{}.o", index, object.key.substr(0, 12));
  SK_RETURN_IF_ERROR(writeScratchFile(p, *object.bytes));
  return p;
}

}  // namespace sk
