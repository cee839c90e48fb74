// A deliberately tiny text-template engine for the codegen targets.
//
// Syntax (a small subset of mustache, no HTML escaping, no lambdas):
//   {{name}}            the value of `name` (an error if no enclosing scope has it)
//   {{#list}}...{{/list}} the body once per item of `list`; each item is a scope
//                       whose values shadow the enclosing ones. A list of one
//                       empty item is a conditional (TemplateValues::setIf).
//   {{^list}}...{{/list}} the body once if `list` is absent or empty
//   {{! comment }}      dropped
// A line holding nothing but one section/comment tag (and blanks) is removed
// entirely, so templates can put tags on their own lines without leaving
// blank lines in the output.
//
// Why not a library: the generated source must be byte-stable (golden tests,
// cache keys) and the needs are this small; an own 200-line engine is easier
// to audit than a dependency's escaping and whitespace rules.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "superkernel/support/Error.h"

namespace sk {

/// The values one template scope sees: scalars and lists of nested scopes.
class TemplateValues {
 public:
  TemplateValues& set(const std::string& name, std::string value);
  TemplateValues& set(const std::string& name, const char* value) { return set(name, std::string(value)); }
  TemplateValues& set(const std::string& name, uint64_t value);
  TemplateValues& set(const std::string& name, int64_t value);
  TemplateValues& set(const std::string& name, uint32_t value) { return set(name, uint64_t{value}); }
  TemplateValues& set(const std::string& name, int value) { return set(name, int64_t{value}); }
  /// Appends a new item to list `name` (creating the list) and returns it.
  TemplateValues& add(const std::string& name);
  /// Declares list `name` (possibly empty), so {{#name}} renders nothing
  /// rather than failing as unknown.
  TemplateValues& list(const std::string& name);
  /// A conditional: list `name` with one empty item when `on`, else empty.
  TemplateValues& setIf(const std::string& name, bool on);

  const std::string* findValue(const std::string& name) const;
  const std::vector<TemplateValues>* findList(const std::string& name) const;

 private:
  std::map<std::string, std::string> values_;
  std::map<std::string, std::vector<TemplateValues>> lists_;
};

/// A parsed template. Parse once, render many times.
class Template {
 public:
  /// Parses `text`; `origin` names it in error messages ("cpu/superkernel.cpp.tmpl").
  static Expected<Template> parse(std::string_view text, std::string origin);
  /// Renders with `values` as the outermost scope. Unknown names are errors
  /// naming the template, line and name: a typo never yields silent output.
  Expected<std::string> render(const TemplateValues& values) const;

  const std::string& origin() const { return origin_; }

  struct Node;

 private:
  std::string origin_;
  std::shared_ptr<const std::vector<Node>> nodes_;
};

struct Template::Node {
  enum class Kind { Text, Value, Section, Inverted };
  Kind kind = Kind::Text;
  std::string text;                          // Text: literal; others: the name
  int line = 0;                              // 1-based, for messages
  std::vector<Node> children;                // sections
};

}  // namespace sk
