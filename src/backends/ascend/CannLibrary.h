// Where the CANN device looks for a CANN library it loads by dlopen (libascendcl, libhccl): the path in its
// own environment variable, else the loader's path, else the toolkit that set_env.sh named
// ($ASCEND_HOME_PATH/lib64). One rule for both libraries, and one error that names every place tried.
#pragma once

#include <string>

#include "support/DynamicLibrary.h"

namespace sk::ascend {

/// `file` (e.g. "libhccl.so") loaded from $`envVar` when set, else from the loader's path or
/// $ASCEND_HOME_PATH/lib64. When none loads, *error says what was not found (`what`), where it looked, and
/// what to set; `alternative` ends it (what to do without CANN).
OpenedLibrary openCannLibrary(const char* envVar, const char* file, const char* what, const char* alternative,
                              std::string* error);

}  // namespace sk::ascend
