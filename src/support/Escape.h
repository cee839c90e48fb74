// Escaping for the exact places where text that came from data (op, scope,
// kernel, buffer and event names) lands in generated C/C++ source.
//
// Why each rule: the generated SuperKernel is compiled and run, so a name
// that could end a string literal or a comment would become code. The
// helpers therefore emit printable ASCII only: every other byte, and every
// character that has a meaning inside its context, is written as an escape.
// That also keeps bidirectional-override characters (CVE-2021-42574) and
// line separators out of the source, whatever the compiler's input charset.
#pragma once

#include <string>
#include <string_view>

namespace sk {

/// The inside of a C/C++ string literal (the quotes are not included):
/// printable ASCII is kept except `"`, `\` and `?` (no trigraph can form);
/// every other byte becomes a three-digit octal escape, so the next
/// character can never extend it (unlike \x, which is greedy).
std::string escapeCString(std::string_view s);

/// Text for a `//` or `/* */` comment, safe at the end of a line: printable
/// ASCII is kept except `\` (a trailing one would splice the next source
/// line into the comment), which becomes `\x5c`; `*/` becomes `*\x2f`, `/*`
/// becomes `/\x2a` (-Wcomment), `??`
/// becomes `?\x3f`, and every byte outside printable ASCII (newline, NUL,
/// UTF-8) becomes `\xNN`. Readable, one line, and never ends the comment.
std::string escapeComment(std::string_view s);

}  // namespace sk
