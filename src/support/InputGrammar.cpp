#include "support/InputGrammar.h"

#include <algorithm>
#include <iterator>
#include <cstdint>

namespace sk::grammar {
namespace {

bool isAlpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool isDigit(char c) { return c >= '0' && c <= '9'; }
bool isAlnum(char c) { return isAlpha(c) || isDigit(c); }

bool isIdentifier(std::string_view s) {
  return !s.empty() && isAlpha(s[0]) && std::all_of(s.begin(), s.end(), isAlnum);
}

bool startsWith(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

// Show a rejected item in a message without letting it garble the message.
std::string shown(std::string_view s) {
  std::string out = "\"";
  for (char ch : s.substr(0, 80)) {
    unsigned char c = static_cast<unsigned char>(ch);
    if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') {
      out += ch;
    } else {
      static const char* hex = "0123456789abcdef";
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  if (s.size() > 80) out += "...";
  return out + "\"";
}

// C11 and C++20 keywords and C++ alternative tokens: a macro of that name
// would change the meaning of the kernel's own code.
constexpr std::string_view kKeywords[] = {
    "_Alignas", "_Alignof", "_Atomic", "_Bool", "_Complex", "_Generic", "_Imaginary", "_Noreturn",
    "_Static_assert", "_Thread_local", "alignas", "alignof", "and", "and_eq", "asm", "auto", "bitand", "bitor",
    "bool", "break", "case", "catch", "char", "char8_t", "char16_t", "char32_t", "class", "co_await", "co_return",
    "co_yield", "compl", "concept", "const", "const_cast", "consteval", "constexpr", "constinit", "continue",
    "decltype", "default", "delete", "do", "double", "dynamic_cast", "else", "enum", "explicit", "export",
    "extern", "false", "float", "for", "friend", "goto", "if", "inline", "int", "long", "mutable", "namespace",
    "new", "noexcept", "not", "not_eq", "nullptr", "operator", "or", "or_eq", "private", "protected", "public",
    "register", "reinterpret_cast", "requires", "restrict", "return", "short", "signed", "sizeof", "static",
    "static_assert", "static_cast", "struct", "switch", "template", "this", "thread_local", "throw", "true",
    "try", "typedef", "typeid", "typename", "union", "unsigned", "using", "virtual", "void", "volatile",
    "wchar_t", "while", "xor", "xor_eq", "defined", "__asm__"};

constexpr std::string_view kRuntimeMacros[] = {"SK_KERNEL", "SK_EXTERN_C", "SK_ABI_VERSION",
                                                            "SK_SERVICES_VERSION", "SK_CACHELINE", "SK_SPIN_ITERS"};
// Prefixes of the runtime headers' own macros (include guards, the cuda
// runtime's tunables and enumerators, the ascend kernel header's guard and
// GM cast, the simulator's switch and ABI): a kernel macro of such a name
// would switch off a header or retune the runtime under the kernel.
constexpr std::string_view kRuntimeMacroPrefixes[] = {"SUPERKERNEL_", "SK_CUDA_", "SK_ASCEND_", "SK_WAIT_",
                                                      "SK_RUN_"};

// -f families that are refused, matched on the feature name with any "no-"
// removed: they load code into the compiler (plugin, pass-plugin, use-ld,
// ld-path), read or write files named by the flag or next to the output
// (profile*, auto-profile, dump*, save-*, stack-usage, callgraph-info,
// time-trace, opt-record, proc-stat, crash-diagnostics, coverage,
// test-coverage, diagnostics-format, module*, pch, embed, sanitize* (its
// ignore lists), record-command-line), change how the source text is read
// (input-charset, exec-charset, wide-exec-charset, trigraphs,
// preprocessed, directives-only, extended-identifiers), or need a runtime
// the SuperKernel does not link (instrument-functions, xray, sanitize), or
// would merge kernels' tentative definitions across objects (common).
constexpr std::string_view kDeniedFeatures[] = {
    "plugin", "pass-plugin", "use-ld", "ld-path", "profile", "auto-profile", "dump", "save-", "stack-usage",
    "callgraph-info", "time-trace", "opt-record", "proc-stat", "crash-diagnostics", "coverage", "test-coverage",
    "diagnostics-format", "module", "implicit-module", "prebuilt-module", "pch", "embed", "sanitize",
    "record-command-line", "input-charset", "exec-charset", "wide-exec-charset", "trigraphs", "preprocessed",
    "directives-only", "extended-identifiers", "instrument", "xray", "common"};

// -Wl, items allowed (linker hardening and size options only; no paths, no
// scripts, no extra libraries, no symbol redirection).
constexpr std::string_view kLinkerWords[] = {
    "-z", "now", "lazy", "relro", "norelro", "noexecstack", "-O0", "-O1", "-O2",
    "--gc-sections", "--as-needed", "--no-as-needed", "--build-id", "--hash-style=gnu"};

// [a-z0-9] then [a-z0-9+.-]*: a flag's name part.
bool flagName(std::string_view s) {
  if (s.empty() || !(isDigit(s[0]) || (s[0] >= 'a' && s[0] <= 'z'))) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return isDigit(c) || (c >= 'a' && c <= 'z') || c == '+' || c == '.' || c == '-';
  });
}

// A flag's value: no paths ('/'), no spaces, no '=' or '@'.
bool flagValue(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return isAlnum(c) || c == '.' || c == '+' || c == '-' || c == ',';
  });
}

// "name[=value]" with the grammar above.
bool nameAndValue(std::string_view s) {
  size_t eq = s.find('=');
  if (eq == std::string_view::npos) return flagName(s);
  return flagName(s.substr(0, eq)) && flagValue(s.substr(eq + 1));
}

}  // namespace

bool validUtf8(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      ++i;
      continue;
    }
    size_t len = 0;
    uint32_t cp = 0;
    if ((c & 0xe0) == 0xc0) len = 2, cp = c & 0x1f;
    else if ((c & 0xf0) == 0xe0) len = 3, cp = c & 0x0f;
    else if ((c & 0xf8) == 0xf0) len = 4, cp = c & 0x07;
    else return false;
    if (i + len > s.size()) return false;
    for (size_t k = 1; k < len; ++k) {
      const unsigned char t = static_cast<unsigned char>(s[i + k]);
      if ((t & 0xc0) != 0x80) return false;
      cp = (cp << 6) | (t & 0x3f);
    }
    static constexpr uint32_t kMin[5] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < kMin[len] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return false;
    i += len;
  }
  return true;
}

std::string nameProblem(std::string_view s, size_t maxBytes) {
  if (s.empty()) return "name must not be empty";
  if (s.size() > maxBytes) return "name longer than " + std::to_string(maxBytes) + " bytes";
  if (!validUtf8(s)) return "name is not valid UTF-8";
  for (size_t i = 0; i < s.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    // C1 controls are U+0080..U+009F: 0xC2 0x80..0x9F in UTF-8.
    const bool c1 = c == 0xc2 && i + 1 < s.size() && static_cast<unsigned char>(s[i + 1]) <= 0x9f;
    if (c < 0x20 || c == 0x7f || c1) return "name contains a control character";
  }
  return {};
}

std::string macroNameProblem(std::string_view name, std::string_view entry) {
  const std::string n = shown(name);
  if (!isIdentifier(name)) return "macro name " + n + " is not a C identifier";
  if (name[0] == '_' || name.find("__") != std::string_view::npos)
    return "macro name " + n + " is reserved (a leading '_' or a '__' belongs to the compiler and the C library)";
  if (std::find(std::begin(kKeywords), std::end(kKeywords), name) != std::end(kKeywords))
    return "macro name " + n + " is a C/C++ keyword";
  if (startsWith(name, "sk_") || std::find(std::begin(kRuntimeMacros), std::end(kRuntimeMacros), name) != std::end(kRuntimeMacros))
    return "macro name " + n + " belongs to the superkernel runtime";
  for (std::string_view prefix : kRuntimeMacroPrefixes)
    if (startsWith(name, prefix)) return "macro name " + n + " belongs to the superkernel runtime";
  if (!entry.empty() && name == entry) return "macro name " + n + " is the kernel's entry (the driver renames it)";
  return {};
}

std::string macroValueProblem(std::string_view value) {
  std::string_view v = value;
  if (v.empty()) return {};
  if (v[0] == '-' || v[0] == '+') v.remove_prefix(1);
  if (isIdentifier(v)) return {};
  // pp-number: digit or .digit, then digits, identifier characters, '.',
  // and e+ e- p+ p- (E, P too).
  bool number = !v.empty() && (isDigit(v[0]) || (v.size() > 1 && v[0] == '.' && isDigit(v[1])));
  for (size_t i = 0; number && i < v.size(); ++i) {
    const char c = v[i];
    if (isAlnum(c) || c == '.') continue;
    if ((c == '+' || c == '-') && i > 0 && (v[i - 1] == 'e' || v[i - 1] == 'E' || v[i - 1] == 'p' || v[i - 1] == 'P'))
      continue;
    number = false;
  }
  if (number) return {};
  return "macro value " + shown(value) +
         " is not a single number or identifier (macros are static shapes and switches: -DN=4096, -DT=float)";
}

std::string compileOptionProblem(std::string_view item) {
  const std::string n = "compile-options item " + shown(item);
  auto refuse = [&](std::string why) { return n + " is not allowed: " + why; };
  if (item.empty()) return n + " is empty";
  if (item[0] != '-') return refuse("not a flag (items must start with '-'; sources and files are not accepted)");
  static constexpr std::string_view kExact[] = {"-O0", "-O1", "-O2", "-O3", "-Os", "-Oz", "-Og",
                                                              "-Ofast", "-w", "-pedantic", "-pedantic-errors",
                                                              "-pthread", "-g"};
  if (std::find(std::begin(kExact), std::end(kExact), item) != std::end(kExact)) return {};
  if (startsWith(item, "-g") && flagName(item.substr(2))) return {};
  if (startsWith(item, "-std=")) {
    std::string_view s = item.substr(5);
    if (startsWith(s, "gnu")) s.remove_prefix(3);
    else if (startsWith(s, "c")) s.remove_prefix(1);
    else return refuse("unknown -std= value");
    if (startsWith(s, "++")) s.remove_prefix(2);
    if (!s.empty() && std::all_of(s.begin(), s.end(), isAlnum)) return {};
    return refuse("unknown -std= value");
  }
  if (startsWith(item, "-Wl,")) {
    std::string_view rest = item.substr(4);
    while (true) {
      size_t comma = rest.find(',');
      std::string_view word = rest.substr(0, comma);
      if (std::find(std::begin(kLinkerWords), std::end(kLinkerWords), word) == std::end(kLinkerWords))
        return refuse("linker item " + shown(word) +
                      " is outside the allowed set (-z now/lazy/relro/norelro/noexecstack, -O0..2, --gc-sections, "
                      "--as-needed, --no-as-needed, --build-id, --hash-style=gnu)");
      if (comma == std::string_view::npos) return {};
      rest.remove_prefix(comma + 1);
    }
  }
  if (startsWith(item, "-W")) {
    std::string_view w = item.substr(2);
    if (w == "l" || w == "a" || w == "p" || startsWith(w, "a,") || startsWith(w, "p,"))
      return refuse("-Wa, and -Wp, pass text to the assembler and the preprocessor");
    if (nameAndValue(w) && w.find(',') == std::string_view::npos) return {};
    return refuse("a warning flag is -W[no-]<name>[=<value>] with letters, digits and '+.-'");
  }
  if (startsWith(item, "-f")) {
    std::string_view f = item.substr(2);
    if (!nameAndValue(f)) return refuse("a feature flag is -f[no-]<name>[=<value>] with letters, digits and '+.,-'");
    std::string_view feature = startsWith(f, "no-") ? f.substr(3) : f;
    for (std::string_view d : kDeniedFeatures)
      if (startsWith(feature, d))
        return refuse("-f" + std::string(d) +
                      "... loads code, reads or writes files, or changes how the source is read");
    return {};
  }
  if (startsWith(item, "-m")) {
    std::string_view m = item.substr(2);
    if (m == "llvm" || startsWith(m, "llvm=")) return refuse("-mllvm passes options to LLVM itself");
    if (nameAndValue(m)) return {};
    return refuse("a machine flag is -m<name>[=<value>] with letters, digits and '+.,-'");
  }
  return refuse(
      "outside the allowed forms (-O*, -g*, -w, -pedantic, -pthread, -std=, -W<warning>, -f<feature>, "
      "-m<machine>, -Wl,<hardening>); -D, -U, -I, -include, -o, -x, -B, -L, -l, -specs, -wrapper, -Xclang and "
      "@file are never accepted: use the kernel's macros for -D");
}

std::string compileOptionsProblem(const std::vector<std::string>& items) {
  for (const std::string& item : items)
    if (std::string p = compileOptionProblem(item); !p.empty()) return p;
  return {};
}

std::string macrosProblem(const std::map<std::string, std::string>& macros, std::string_view entry) {
  for (const auto& [name, value] : macros) {
    if (std::string p = macroNameProblem(name, entry); !p.empty()) return p;
    if (std::string p = macroValueProblem(value); !p.empty()) return "macro " + name + ": " + p;
  }
  return {};
}

std::string archProblem(std::string_view arch) {
  if (arch.empty()) return "must not be empty";
  if (arch.size() > 64) return "longer than 64 bytes";
  for (char c : arch)
    if (!(isAlnum(c) || c == '.' || c == '+' || c == '-'))
      return "arch " + shown(arch) + " may contain only letters, digits and '._+-'";
  return {};
}

}  // namespace sk::grammar
