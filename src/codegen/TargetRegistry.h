// Private: constructors of the concrete targets, used by makeTarget().
#pragma once

#include <memory>

#include "superkernel/codegen/Target.h"

namespace sk {

/// Reads and parses templates/cpu/superkernel.cpp.tmpl.
Expected<std::shared_ptr<const Target>> makeCpuTarget();

}  // namespace sk
