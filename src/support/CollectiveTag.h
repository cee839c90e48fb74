// A collective op's tag (docs/COLLECTIVES.md): the planner writes it into the
// collective kernel's arguments and every runtime checks it across ranks.
// High 32 bits: FNV-1a of the op's name continuing the plan's collective
// signature (ranks whose plans differ disagree); low 32 bits: FNV-1a of the
// name alone, so a runtime that knows a step's op names but not which op
// called it (the simulated devices) can name the op in its errors. The rule
// and its inverse live here together.
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <string>
#include <vector>

#include "support/Fnv1a.h"

namespace sk {

inline uint64_t collectiveTag(const std::string& name, uint64_t signature) {
  return (fnv1a(name, signature) & 0xffffffff00000000ull) | (fnv1a(name) & 0xffffffffull);
}

/// `"ar"`: the op among `names` (a step's op names; may be null) whose tag `tag` is, as the cpu executor's
/// messages name it; else "with tag 0x…".
inline std::string collectiveOpName(uint64_t tag, const std::vector<std::string>* names) {
  if (names)
    for (const std::string& n : *names)
      if ((fnv1a(n) & 0xffffffffull) == (tag & 0xffffffffull)) return "\"" + n + "\"";
  return fmt::format("with tag {:#x}", tag);
}

}  // namespace sk
