// "Did you mean" for the tools' command lines: a misspelt flag or
// subcommand gets the closest valid one (edit distance), the way git and
// cargo do, instead of only "The following arguments were not expected".
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace CLI {
class App;
}

namespace sk::tools {

/// Levenshtein distance (insert, delete, substitute; an adjacent swap counts 1).
size_t editDistance(std::string_view a, std::string_view b);

/// The candidate closest to `word` if it is close enough to be a likely typo
/// (distance <= max(1, len/3)), else "".
std::string closest(std::string_view word, const std::vector<std::string>& candidates);

/// For a failed parse: "did you mean" lines for each argument of argv that is
/// neither a flag of `app` (or of its subcommands) nor, for an app with
/// subcommands, a subcommand name in first position; "" if none has a close
/// match. Each line reads: `'--rnu' is not a flag of sk-compile; did you mean '--run'?`
std::string suggestForArgs(const CLI::App& app, int argc, char** argv);

/// For a failed parse of a tool with subcommands: "unknown subcommand 'stast'"
/// (or "unknown remote subcommand 'pnig'") when a word where a subcommand
/// belongs names none; "" otherwise. The error line says this first, the
/// suggestion follows as a hint.
std::string unknownSubcommand(const CLI::App& app, int argc, char** argv);

/// Each line of `suggestions` on stderr as "<tool>: hint: <line>".
void printSuggestions(std::string_view tool, const std::string& suggestions);

}  // namespace sk::tools
