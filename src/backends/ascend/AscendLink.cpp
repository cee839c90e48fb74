// The link both ascend recipes share, for targets ascend and ascend-sim (see AscendLink.h).
#include "backends/ascend/AscendLink.h"

#include <fmt/format.h>

#include "backends/LinkFiles.h"
#include "backends/ascend/AscendBuild.h"
#include "support/BuildFiles.h"

namespace sk::ascend {
namespace fs = std::filesystem;

Expected<LinkInputs> prepareLink(const LinkRequest& req, const RecipeTools& tools, const fs::path& objcopy,
                                 const CompileSuperKernel& compile) {
  // The emitter's descriptor, given beside the source (GeneratedSource::launch): which objects to split-copy.
  if (req.launch.empty()) {
    return internalError("ascend link: no launch descriptor beside the source (GeneratedSource::launch, set by the "
                         "ascend emitter)");
  }
  LinkInputs in;
  SK_ASSIGN_OR_RETURN(in.launch, parseLaunchDescriptor(req.launch));
  const LaunchDescriptor& d = in.launch;
  if (d.objects.size() != req.objects.size()) {
    return internalError(fmt::format("ascend link: the descriptor names {} object(s), {} given", d.objects.size(),
                                     req.objects.size()));
  }
  in.dir = linkScratchDir(req);
  const fs::path src = in.dir / "superkernel.cpp";
  SK_RETURN_IF_ERROR(writeScratchFile(src, req.source));
  SK_ASSIGN_OR_RETURN(in.objects, compile(src, d, in.diagnostics));
  for (size_t i = 0; i < req.objects.size(); ++i) {
    SK_ASSIGN_OR_RETURN(const fs::path p, writeLinkObject(in.dir, i, req.objects[i]));
    in.objects.push_back(p);
    if (!d.fused) continue;  // an unfused step launches its one object's entry as it is
    in.subKernelSymbols.push_back(d.objects[i]);
    for (int k = 1; k < d.split; ++k) {
      if (objcopy.empty()) {
        return compileError(fmt::format("llvm-objcopy not found on PATH: split-mode={} makes {} copies of each "
                                        "sub-kernel with it (install llvm, or use split-mode=1)",
                                        d.split, d.split - 1));
      }
      const fs::path copy = in.dir / fmt::format("obj_{}_split{}.o", i, k);
      SK_RETURN_IF_ERROR(tools.runTool(splitCopyArgv(objcopy, p, copy, d.objects[i], k),
                                       fmt::format("split-mode copy {} of {}", k, d.objects[i])));
      in.objects.push_back(copy);
      in.subKernelSymbols.push_back(splitSymbol(d.objects[i], k));
    }
  }
  return in;
}

}  // namespace sk::ascend
