// The grammar of every op-list string that reaches a compiler command line
// or generated source (docs/OPLIST.md, "What strings may contain").
//
// Names (ops, scopes, kernels, buffers, events) only ever land in generated
// source through support/Escape.h, so their grammar is about what can be
// stored and reported: non-empty, bounded, valid UTF-8, no control
// characters. Macro names and values and compile-options are different:
// they become compiler argv items (-D<name>=<value>, flags) and through
// them code, so they are restricted to forms that cannot add statements,
// read or write files, or load code into the compiler or the SuperKernel.
//
// Each check returns "" when the text is acceptable, else what is wrong
// with it (a sentence fragment naming the offending part and the rule);
// callers prefix the JSON path.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace sk::grammar {

/// Well-formed UTF-8 (no overlong forms, surrogates or code points above U+10FFFF).
bool validUtf8(std::string_view s);

/// A name: 1..maxBytes bytes of valid UTF-8 without control characters
/// (U+0000..U+001F, U+007F..U+009F).
std::string nameProblem(std::string_view s, size_t maxBytes);

/// A macro name: a C identifier that is not reserved (leading `_`, or `__`
/// anywhere), not a C or C++ keyword, not in the runtime's namespace (`sk_`
/// prefix, SK_KERNEL, SK_EXTERN_C, SK_ABI_VERSION, SK_SERVICES_VERSION,
/// SK_CACHELINE) and not the kernel's entry (which the driver renames with
/// its own -D). `entry` may be empty when unknown.
std::string macroNameProblem(std::string_view name, std::string_view entry);

/// A macro value: empty, or one preprocessing token with an optional sign:
/// a number (a C pp-number: `4096`, `0x10`, `1e-6f`, `2.5`) or an
/// identifier (`float`, `INT32_MAX`). One token cannot form a call, a
/// statement or a string, whatever the kernel does with it.
std::string macroValueProblem(std::string_view value);

/// One compile-options item: an allow-listed flag form (see the .cpp and
/// docs/OPLIST.md): -O*, -g*, -w, -pedantic, -pthread, -std=*, -W<warning>,
/// -f<feature>[=value] and -m<machine>[=value] except the families that load
/// plugins, read or write files or change how source text is read, and
/// -Wl, with a few linker hardening items.
std::string compileOptionProblem(std::string_view item);

/// The first problem among `items` (compile-options), "" if none.
std::string compileOptionsProblem(const std::vector<std::string>& items);

/// The first problem among macros (name, value) of a kernel with `entry`.
std::string macrosProblem(const std::map<std::string, std::string>& macros, std::string_view entry);

/// The `arch` field (-march=<arch>): letters, digits and `._+-`, 1..64 bytes.
std::string archProblem(std::string_view arch);

}  // namespace sk::grammar
