#include "common/Suggest.h"

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>

namespace sk::tools {

size_t editDistance(std::string_view a, std::string_view b) {
  // Optimal string alignment distance: Levenshtein plus adjacent transposition.
  const size_t n = a.size(), m = b.size();
  std::vector<std::vector<size_t>> d(n + 1, std::vector<size_t>(m + 1));
  for (size_t i = 0; i <= n; ++i) d[i][0] = i;
  for (size_t j = 0; j <= m; ++j) d[0][j] = j;
  for (size_t i = 1; i <= n; ++i)
    for (size_t j = 1; j <= m; ++j) {
      const size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[n][m];
}

std::string closest(std::string_view word, const std::vector<std::string>& candidates) {
  std::string best;
  size_t bestD = std::max<size_t>(1, word.size() / 3) + 1;
  for (const std::string& c : candidates) {
    size_t d = editDistance(word, c);
    if (d < bestD) bestD = d, best = c;
  }
  return best;
}

namespace {
void collectFlags(const CLI::App& app, std::vector<std::string>& out) {
  for (const CLI::Option* o : app.get_options()) {
    for (const std::string& l : o->get_lnames()) out.push_back("--" + l);
    for (const std::string& s : o->get_snames()) out.push_back("-" + s);
  }
}
}  // namespace

std::string suggestForArgs(const CLI::App& app, int argc, char** argv) {
  std::vector<std::string> flags;
  collectFlags(app, flags);
  std::vector<std::string> subs;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    subs.push_back(sub->get_name());
    collectFlags(*sub, flags);
  }
  std::string out;
  bool sawPositional = false;
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (arg == "--") break;
    if (arg.size() > 1 && arg[0] == '-') {
      std::string_view name = arg.substr(0, arg.find('='));
      if (std::find(flags.begin(), flags.end(), name) != flags.end()) continue;
      std::string best = closest(name, flags);
      if (!best.empty())
        out += fmt::format("'{}' is not a flag of {}; did you mean '{}'?\n", name, app.get_name(), best);
      continue;
    }
    // The first bare word of a tool with subcommands is the subcommand.
    if (!subs.empty() && !sawPositional) {
      sawPositional = true;
      if (std::find(subs.begin(), subs.end(), arg) != subs.end()) continue;
      // A value of a preceding option (--cache-dir DIR) is not a subcommand.
      if (i > 1 && std::string_view(argv[i - 1]).size() > 1 && argv[i - 1][0] == '-' &&
          std::string_view(argv[i - 1]).find('=') == std::string_view::npos) {
        const CLI::Option* o = app.get_option_no_throw(argv[i - 1]);
        if (o && o->get_type_size() > 0) {
          sawPositional = false;
          continue;
        }
      }
      std::string best = closest(arg, subs);
      if (!best.empty())
        out += fmt::format("'{}' is not a {} command; did you mean '{}'?\n", arg, app.get_name(), best);
    }
  }
  return out;
}

std::string unknownSubcommand(const CLI::App& app, int argc, char** argv) {
  const CLI::App* current = &app;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--") break;
    if (arg.size() > 1 && arg[0] == '-') {
      // An option's value (--cache-dir DIR) is not a subcommand.
      const CLI::Option* o = arg.find('=') == std::string::npos ? current->get_option_no_throw(arg) : nullptr;
      if (!o && current != &app) o = app.get_option_no_throw(arg);
      if (o && o->get_type_size() > 0) ++i;
      continue;
    }
    const auto subs = current->get_subcommands([](const CLI::App*) { return true; });
    if (subs.empty()) return "";
    auto it = std::find_if(subs.begin(), subs.end(), [&](const CLI::App* s) { return s->get_name() == arg; });
    if (it == subs.end())
      return current == &app ? fmt::format("unknown subcommand '{}'", arg)
                             : fmt::format("unknown {} subcommand '{}'", current->get_name(), arg);
    current = *it;
  }
  return "";
}

void printSuggestions(std::string_view tool, const std::string& suggestions) {
  size_t start = 0;
  while (start < suggestions.size()) {
    size_t end = suggestions.find('\n', start);
    if (end == std::string::npos) end = suggestions.size();
    std::fprintf(stderr, "%.*s: hint: %.*s\n", static_cast<int>(tool.size()), tool.data(),
                 static_cast<int>(end - start), suggestions.data() + start);
    start = end + 1;
  }
}

}  // namespace sk::tools
