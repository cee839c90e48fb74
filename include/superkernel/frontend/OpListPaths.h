// Where in an op list: the pieces every stage's errors use to name the spot
// ("ops.json: ops[3].args.n: ..."), and a kernel declaration as one target
// compiles it. The parser, the validator and the planner's passes share
// these, so an error reads the same whichever stage finds it.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "superkernel/frontend/OpList.h"
#include "superkernel/support/Error.h"

namespace sk::oplist {

/// `s` as a JSON string literal (control characters escaped, invalid UTF-8 replaced): names in messages.
std::string quote(std::string_view s);
/// A key as a path component: ".name" for a plain key, `["odd key"]` otherwise.
std::string pathKey(std::string_view key);
/// The path of op `i`: "ops[i]".
std::string opPath(size_t i);
/// BadInput "origin: path: msg" (either part omitted when empty; a leading '.' of the path dropped).
Error pathError(const std::string& origin, const std::string& path, const std::string& msg);
/// `k` as `target` compiles it: a builtin reference resolved to the builtin's declaration (the referring
/// declaration's macros applied over its own), per-target "sources" resolved to the target's entry.
Expected<KernelDecl> resolveKernel(const KernelDecl& k, std::string_view target);

}  // namespace sk::oplist
