// The link scratch files every recipe writes alike (see LinkFiles.h).
#include "backends/LinkFiles.h"

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

Expected<RunOnlyLinkInputs> writeRunOnlyLinkInputs(const LinkRequest& req, std::string_view sourceName,
                                                   std::string_view versionScript) {
  RunOnlyLinkInputs in;
  in.dir = linkScratchDir(req);
  in.source = in.dir / sourceName;
  SK_RETURN_IF_ERROR(writeScratchFile(in.source, req.source));
  in.versionScript = in.dir / "exports.map";
  SK_RETURN_IF_ERROR(writeScratchFile(in.versionScript, versionScript));
  for (const LinkObject& ob : req.objects) {
    SK_ASSIGN_OR_RETURN(fs::path p, writeLinkObject(in.dir, in.objects.size(), ob));
    in.objects.push_back(std::move(p));
  }
  return in;
}

Expected<LinkOutput> runLinkCommand(const RecipeTools& tools, const std::vector<std::string>& args,
                                    const std::string& what) {
  SK_ASSIGN_OR_RETURN(auto res, tools.runCompiler(args, what));
  LinkOutput out;
  out.command = tools.command(args);
  out.diagnostics = res.err;
  return out;
}

}  // namespace sk
