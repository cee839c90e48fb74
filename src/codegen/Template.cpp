#include "superkernel/codegen/Template.h"

#include <fmt/format.h>

#include <optional>

namespace sk {

// ---- TemplateValues --------------------------------------------------------

TemplateValues& TemplateValues::set(const std::string& name, std::string value) {
  values_[name] = std::move(value);
  return *this;
}
TemplateValues& TemplateValues::set(const std::string& name, uint64_t value) {
  return set(name, std::to_string(value));
}
TemplateValues& TemplateValues::set(const std::string& name, int64_t value) {
  return set(name, std::to_string(value));
}
TemplateValues& TemplateValues::add(const std::string& name) { return lists_[name].emplace_back(); }
TemplateValues& TemplateValues::list(const std::string& name) {
  lists_[name];
  return *this;
}
TemplateValues& TemplateValues::setIf(const std::string& name, bool on) {
  auto& l = lists_[name];
  l.clear();
  if (on) l.emplace_back();
  return *this;
}
const std::string* TemplateValues::findValue(const std::string& name) const {
  auto it = values_.find(name);
  return it == values_.end() ? nullptr : &it->second;
}
const std::vector<TemplateValues>* TemplateValues::findList(const std::string& name) const {
  auto it = lists_.find(name);
  return it == lists_.end() ? nullptr : &it->second;
}

// ---- parsing ---------------------------------------------------------------

namespace {

using Node = Template::Node;

struct Token {
  enum class Kind { Text, Value, Open, OpenInverted, Close, Comment };
  Kind kind;
  std::string text;
  int line;
};

bool isBlank(char c) { return c == ' ' || c == '\t' || c == '\r'; }

std::string_view trimBlanks(std::string_view s) {
  while (!s.empty() && isBlank(s.front())) s.remove_prefix(1);
  while (!s.empty() && isBlank(s.back())) s.remove_suffix(1);
  return s;
}

bool validName(std::string_view n) {
  if (n.empty()) return false;
  for (char c : n) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
              c == '.' || c == '-';
    if (!ok) return false;
  }
  return true;
}

// One tag's inside ("#name", "name", "! text") -> token.
Expected<Token> classify(std::string_view inner, int line, const std::string& origin) {
  Token t{Token::Kind::Value, "", line};
  std::string_view body = inner;
  if (!body.empty() && body.front() == '!') {
    t.kind = Token::Kind::Comment;
    return t;
  }
  if (!body.empty() && (body.front() == '#' || body.front() == '^' || body.front() == '/')) {
    t.kind = body.front() == '#'   ? Token::Kind::Open
             : body.front() == '^' ? Token::Kind::OpenInverted
                                   : Token::Kind::Close;
    body.remove_prefix(1);
  }
  body = trimBlanks(body);
  if (!validName(body)) {
    return internalError(fmt::format("{}:{}: bad template tag '{{{{{}}}}}'", origin, line, inner));
  }
  t.text = std::string(body);
  return t;
}

// Tokenizes one line (without applying the standalone rule).
Status tokenizeLine(std::string_view lineText, int line, const std::string& origin, std::vector<Token>& out) {
  size_t pos = 0;
  while (pos < lineText.size()) {
    size_t open = lineText.find("{{", pos);
    if (open == std::string_view::npos) {
      out.push_back({Token::Kind::Text, std::string(lineText.substr(pos)), line});
      break;
    }
    if (open > pos) out.push_back({Token::Kind::Text, std::string(lineText.substr(pos, open - pos)), line});
    size_t close = lineText.find("}}", open + 2);
    if (close == std::string_view::npos) {
      return internalError(fmt::format("{}:{}: unterminated '{{{{' (tags do not span lines)", origin, line));
    }
    auto tok = classify(lineText.substr(open + 2, close - open - 2), line, origin);
    if (!tok) return tok.error();
    if (tok->kind != Token::Kind::Comment) out.push_back(std::move(*tok));
    pos = close + 2;
  }
  return Status::success();
}

// A line that is only one section/comment tag: returns that tag's inside.
std::optional<std::string_view> standaloneTag(std::string_view lineText) {
  std::string_view t = trimBlanks(lineText);
  if (t.size() < 5 || t.substr(0, 2) != "{{" || t.substr(t.size() - 2) != "}}") return std::nullopt;
  std::string_view inner = t.substr(2, t.size() - 4);
  if (inner.find("{{") != std::string_view::npos || inner.find("}}") != std::string_view::npos) return std::nullopt;
  if (inner.empty() || (inner.front() != '#' && inner.front() != '^' && inner.front() != '/' && inner.front() != '!'))
    return std::nullopt;
  return inner;
}

}  // namespace

Expected<Template> Template::parse(std::string_view text, std::string origin) {
  std::vector<Token> tokens;
  int line = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    ++line;
    size_t nl = text.find('\n', pos);
    size_t end = nl == std::string_view::npos ? text.size() : nl + 1;
    std::string_view lineText = text.substr(pos, end - pos);
    std::string_view content = lineText;
    if (!content.empty() && content.back() == '\n') content.remove_suffix(1);
    if (auto inner = standaloneTag(content)) {
      auto tok = classify(*inner, line, origin);
      if (!tok) return tok.error();
      if (tok->kind != Token::Kind::Comment) tokens.push_back(std::move(*tok));
    } else {
      SK_RETURN_IF_ERROR(tokenizeLine(lineText, line, origin, tokens));
    }
    pos = end;
  }

  // Build the tree with a stack of open sections.
  std::vector<Node> root;
  std::vector<std::vector<Node>*> stack{&root};
  std::vector<const Node*> open;
  for (auto& t : tokens) {
    auto& cur = *stack.back();
    switch (t.kind) {
      case Token::Kind::Text:
        // Merge adjacent text so rendering appends fewer pieces.
        if (!cur.empty() && cur.back().kind == Node::Kind::Text) {
          cur.back().text += t.text;
        } else {
          cur.push_back({Node::Kind::Text, std::move(t.text), t.line, {}});
        }
        break;
      case Token::Kind::Value:
        cur.push_back({Node::Kind::Value, std::move(t.text), t.line, {}});
        break;
      case Token::Kind::Open:
      case Token::Kind::OpenInverted:
        cur.push_back({t.kind == Token::Kind::Open ? Node::Kind::Section : Node::Kind::Inverted, std::move(t.text),
                       t.line, {}});
        open.push_back(&cur.back());
        stack.push_back(&cur.back().children);
        break;
      case Token::Kind::Close:
        if (open.empty()) {
          return internalError(fmt::format("{}:{}: '{{{{/{}}}}}' closes nothing", origin, t.line, t.text));
        }
        if (open.back()->text != t.text) {
          return internalError(fmt::format("{}:{}: '{{{{/{}}}}}' closes section '{}' opened on line {}", origin,
                                           t.line, t.text, open.back()->text, open.back()->line));
        }
        open.pop_back();
        stack.pop_back();
        break;
      case Token::Kind::Comment:
        break;
    }
  }
  if (!open.empty()) {
    return internalError(
        fmt::format("{}:{}: section '{}' is never closed", origin, open.back()->line, open.back()->text));
  }
  Template tmpl;
  tmpl.origin_ = std::move(origin);
  tmpl.nodes_ = std::make_shared<const std::vector<Node>>(std::move(root));
  return tmpl;
}

// ---- rendering -------------------------------------------------------------

namespace {

struct Renderer {
  const std::string& origin;
  std::vector<const TemplateValues*> scopes;   // innermost last
  std::string out;

  const std::string* value(const std::string& n) const {
    for (auto it = scopes.rbegin(); it != scopes.rend(); ++it)
      if (auto* v = (*it)->findValue(n)) return v;
    return nullptr;
  }
  const std::vector<TemplateValues>* list(const std::string& n) const {
    for (auto it = scopes.rbegin(); it != scopes.rend(); ++it)
      if (auto* l = (*it)->findList(n)) return l;
    return nullptr;
  }

  Status render(const std::vector<Node>& nodes) {
    for (const auto& n : nodes) {
      switch (n.kind) {
        case Node::Kind::Text:
          out += n.text;
          break;
        case Node::Kind::Value: {
          const std::string* v = value(n.text);
          if (!v) return internalError(fmt::format("{}:{}: no value for '{{{{{}}}}}'", origin, n.line, n.text));
          out += *v;
          break;
        }
        case Node::Kind::Section: {
          const auto* items = list(n.text);
          if (!items) return internalError(fmt::format("{}:{}: no list for '{{{{#{}}}}}'", origin, n.line, n.text));
          for (const auto& item : *items) {
            scopes.push_back(&item);
            Status s = render(n.children);
            scopes.pop_back();
            if (!s) return s;
          }
          break;
        }
        case Node::Kind::Inverted: {
          const auto* items = list(n.text);
          if (!items || items->empty()) SK_RETURN_IF_ERROR(render(n.children));
          break;
        }
      }
    }
    return Status::success();
  }
};

}  // namespace

Expected<std::string> Template::render(const TemplateValues& values) const {
  if (!nodes_) return internalError("render of an empty (unparsed) template");
  Renderer r{origin_, {&values}, {}};
  SK_RETURN_IF_ERROR(r.render(*nodes_));
  return std::move(r.out);
}

}  // namespace sk
