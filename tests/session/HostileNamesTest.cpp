// Names from an op list never become code (issue 10). Every name a graph
// engine chooses (kernels, buffers, ops, scopes, events) goes through the
// whole pipeline: op-list JSON or the C++ Graph API -> plan -> cpu source ->
// compiler -> run. A name is either rejected with one BadInput error, or
// the generated source, with comments and string literals removed (after
// the compiler's own line splicing), is token for token the source of the
// same list with plain names: nothing a name contains reaches code.
//
// Seeded and bounded: SK_HOSTILE_SEEDS (default 150) random name sets for
// the source check, SK_HOSTILE_RUNS (default 3) of them compiled and run.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <cstdlib>
#include <random>
// g++ 12 with sanitizers reports a false -Wmaybe-uninitialized inside
// libstdc++'s <regex> (std::function in the NFA); it is not this file's code.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <regex>
#include <set>

#include "frontend/OpListInternal.h"
#include "session/SessionFixture.h"
#include "superkernel/superkernel.h"

namespace sk {
namespace {
namespace fs = std::filesystem;
using testing::msg;

constexpr int64_t kN = 64;

struct Names {
  std::string kAdd, kKs, scope, event;
  std::vector<std::string> buf;  // x y t u partial v w
  std::vector<std::string> op;   // 4 launches
};

Names plainNames() {
  return Names{"add", "ks", "s", "e", {"x", "y", "t", "u", "partial", "v", "w"}, {"op0", "op1", "op2", "op3"}};
}

// ---- generation ------------------------------------------------------------

const std::vector<std::string>& goodFragments() {
  static const std::vector<std::string> f = {
      "\"", "\\", "*/", "/*", "//", "#", "?\?/", "?", "'", "{{name}}", "{{/ops}}", "%s", "$(id)", " ", "\xc3\xa9",
      "\xe4\xb8\xad", "\xe2\x80\xae", "\"); __builtin_trap(); (\"", "*/ __builtin_trap(); /*", "a", "_", ".",
      ":", ",", "=", ";", "}", "{", "\\x41", "\\101", "layer.0/attn", "#define run abort"};
  return f;
}
const std::vector<std::string>& badFragments() {
  static const std::vector<std::string> f = {"\n", "\r", std::string(1, '\0'), "\x01", "\x7f", "\xff", "\xc3",
                                             "\xc2\x85", "\\\n__builtin_trap();\n"};
  return f;
}

struct Generated {
  Names names;
  bool expectRejected = false;
};

Generated randomNames(uint64_t seed, bool allowBad) {
  std::mt19937_64 rng(seed);
  auto pick = [&](size_t n) { return static_cast<size_t>(rng() % n); };
  Generated g;
  auto one = [&](std::set<std::string>& used) {
    while (true) {
      // Whole fragments only: cutting a UTF-8 sequence would make a name invalid by accident.
      std::vector<std::string> parts;
      bool bad = false;
      const size_t count = 1 + pick(6);
      for (size_t i = 0; i < count; ++i) parts.push_back(goodFragments()[pick(goodFragments().size())]);
      if (!allowBad) {  // the compiled runs: every name carries something that breaks unescaped source
        static const std::vector<std::string> danger = {"\"", "\\", "*/", "?\?/", "\"); __builtin_trap(); (\"",
                                                        "*/ __builtin_trap(); /*", "\xe2\x80\xae"};
        parts.insert(parts.begin() + static_cast<std::ptrdiff_t>(pick(parts.size() + 1)), danger[pick(danger.size())]);
        if (pick(3) == 0) parts.push_back("\\");
      }
      if (allowBad && pick(20) == 0) {
        parts.insert(parts.begin() + static_cast<std::ptrdiff_t>(pick(parts.size() + 1)),
                     badFragments()[pick(badFragments().size())]);
        bad = true;
      }
      std::string s;
      for (const auto& p : parts) s += p;
      if (pick(25) == 0) {
        const size_t len = allowBad && pick(2) ? 257 + pick(40) : 200 + pick(57);
        while (s.size() < len) s += 'x';
        s.resize(len);
        if (pick(2)) s.back() = '\\';
        if (len > 256) bad = true;
      }
      if (used.insert(s).second) {
        g.expectRejected |= bad;
        return s;
      }
    }
  };
  std::set<std::string> kernels, buffers, ops, scopes, events;
  g.names.kAdd = one(kernels);
  g.names.kKs = one(kernels);
  g.names.scope = one(scopes);
  g.names.event = one(events);
  for (int i = 0; i < 7; ++i) g.names.buf.push_back(one(buffers));
  for (int i = 0; i < 4; ++i) g.names.op.push_back(one(ops));
  return g;
}

// ---- the list, through the JSON text and through the Graph API -------------

fs::path ksSource() { return testing::sessionDataDir() / "kernels" / "ks_sum.cpp"; }

// A JSON string literal that keeps invalid UTF-8 bytes raw (the parser must
// reject them itself), so hostile bytes reach the real parser unchanged.
std::string jsonString(const std::string& s) {
  std::string out = "\"";
  for (char ch : s) {
    unsigned char c = static_cast<unsigned char>(ch);
    if (c == '"' || c == '\\') out += std::string("\\") + ch;
    else if (c < 0x20) out += fmt::format("\\u{:04x}", c);
    else out += ch;
  }
  return out + "\"";
}

std::string opListJson(const Names& n) {
  auto q = jsonString;
  const auto& b = n.buf;
  std::string buffers;
  for (size_t i = 0; i < b.size(); ++i)
    buffers += fmt::format("{}{}: {{\"dtype\": \"f32\", \"shape\": [{}]}}", i ? ", " : "", q(b[i]), i == 4 ? 2 : kN);
  return fmt::format(
      R"({{"format": "superkernel.oplist", "version": 1, "options": "stream-fusion=1",
  "kernels": {{{kadd}: {{"builtin": "add_f32"}},
    {kks}: {{"source": {kss}, "entry": "fx_ks_sum", "kernel_sync": true, "params": [
      {{"name": "x", "kind": "buffer", "dtype": "f32", "access": "read", "partition": "all"}},
      {{"name": "partial", "kind": "buffer", "dtype": "f32", "access": "readwrite", "partition": "all"}},
      {{"name": "y", "kind": "buffer", "dtype": "f32", "access": "write", "partition": "block"}},
      {{"name": "n", "kind": "scalar", "dtype": "i64"}}]}}}},
  "buffers": {{{buffers}}},
  "scopes": {{{scope}: {{"options": "early-start=0"}}}},
  "ops": [
    {{"name": {o0}, "kernel": {kadd}, "block_dim": 4, "scope": {scope}, "args": {{"x": {x}, "y": {y}, "z": {t}, "n": {n}}}}},
    {{"record": {ev}, "stream": 0}},
    {{"name": {o1}, "kernel": {kadd}, "block_dim": 8, "scope": {scope}, "args": {{"x": {t}, "y": {y}, "z": {u}, "n": {n}}}}},
    {{"name": {o2}, "kernel": {kks}, "block_dim": 2, "scope": {scope}, "args": {{"x": {u}, "partial": {p}, "y": {v}, "n": {n}}}}},
    {{"wait": {ev}, "stream": 1}},
    {{"name": {o3}, "kernel": {kadd}, "block_dim": 3, "stream": 1, "scope": {scope}, "args": {{"x": {t}, "y": {y}, "z": {w}, "n": {n}}}}}
  ]}})",
      fmt::arg("kadd", q(n.kAdd)), fmt::arg("kks", q(n.kKs)), fmt::arg("kss", q(ksSource().string())),
      fmt::arg("buffers", buffers), fmt::arg("scope", q(n.scope)), fmt::arg("ev", q(n.event)),
      fmt::arg("o0", q(n.op[0])), fmt::arg("o1", q(n.op[1])), fmt::arg("o2", q(n.op[2])), fmt::arg("o3", q(n.op[3])),
      fmt::arg("x", q(b[0])), fmt::arg("y", q(b[1])), fmt::arg("t", q(b[2])), fmt::arg("u", q(b[3])),
      fmt::arg("p", q(b[4])), fmt::arg("v", q(b[5])), fmt::arg("w", q(b[6])), fmt::arg("n", kN));
}

struct HostData {
  std::vector<std::vector<float>> bufs;
  HostData() : bufs(7, std::vector<float>(kN, 0.0f)) {
    bufs[4].assign(2, 0.0f);
    for (int64_t i = 0; i < kN; ++i) {
      bufs[0][i] = 0.25f * static_cast<float>(i);
      bufs[1][i] = 1.5f;
    }
  }
};

// The same list recorded through the C++ API; the first failing call's error.
Status recordGraph(Graph& g, const Names& n, HostData& h) {
  SK_RETURN_IF_ERROR(g.setOptions("stream-fusion=1"));
  SK_RETURN_IF_ERROR(g.addBuiltinKernel(n.kAdd, "add_f32"));
  KernelDecl ks;
  ks.name = n.kKs;
  ks.source = ksSource().string();
  ks.entry = "fx_ks_sum";
  ks.kernelSync = true;
  auto param = [](const char* name, Access a, Partition p) {
    ParamDecl d;
    d.name = name;
    d.kind = ParamKind::Buffer;
    d.dtype = DType::F32;
    d.access = a;
    d.partition = p;
    return d;
  };
  ks.params = {param("x", Access::Read, Partition::All), param("partial", Access::ReadWrite, Partition::All),
               param("y", Access::Write, Partition::Block)};
  ParamDecl np;
  np.name = "n";
  np.kind = ParamKind::Scalar;
  np.dtype = DType::I64;
  ks.params.push_back(np);
  SK_RETURN_IF_ERROR(g.addKernel(ks));
  for (size_t i = 0; i < n.buf.size(); ++i)
    SK_RETURN_IF_ERROR(g.addBuffer(n.buf[i], DType::F32, {i == 4 ? 2 : kN}, h.bufs[i].data()));
  const auto& b = n.buf;
  Scope scope(g, n.scope, "early-start=0");
  SK_RETURN_IF_ERROR(scope.status());
  SK_RETURN_IF_ERROR(g.launch({.name = n.op[0], .kernel = n.kAdd, .blockDim = 4,
                               .args = {{"x", arg(b[0])}, {"y", arg(b[1])}, {"z", arg(b[2])}, {"n", arg(kN)}}, .macros = {}}));
  SK_RETURN_IF_ERROR(g.record(n.event, 0));
  SK_RETURN_IF_ERROR(g.launch({.name = n.op[1], .kernel = n.kAdd, .blockDim = 8,
                               .args = {{"x", arg(b[2])}, {"y", arg(b[1])}, {"z", arg(b[3])}, {"n", arg(kN)}}, .macros = {}}));
  SK_RETURN_IF_ERROR(g.launch({.name = n.op[2], .kernel = n.kKs, .blockDim = 2,
                               .args = {{"x", arg(b[3])}, {"partial", arg(b[4])}, {"y", arg(b[5])}, {"n", arg(kN)}}, .macros = {}}));
  SK_RETURN_IF_ERROR(g.wait(n.event, 1));
  SK_RETURN_IF_ERROR(g.launch({.name = n.op[3], .kernel = n.kAdd, .blockDim = 3, .stream = 1,
                               .args = {{"x", arg(b[2])}, {"y", arg(b[1])}, {"z", arg(b[6])}, {"n", arg(kN)}}, .macros = {}}));
  return Status::success();
}

// ---- a C++ lexer that reads the source the way the compiler does -----------

struct Lexed {
  std::string code;                   // non-blank code bytes; each literal as "@"
  std::vector<std::string> literals;  // decoded string literals
};

Lexed lex(const std::string& text) {
  std::string s;  // translation phase 2: backslash-newline splices lines
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\\' && i + 1 < text.size() && text[i + 1] == '\n') {
      ++i;
      continue;
    }
    s += text[i];
  }
  Lexed out;
  size_t i = 0;
  auto isOct = [](char c) { return c >= '0' && c <= '7'; };
  while (i < s.size()) {
    if (s.compare(i, 2, "//") == 0) {
      while (i < s.size() && s[i] != '\n') ++i;
    } else if (s.compare(i, 2, "/*") == 0) {
      size_t e = s.find("*/", i + 2);
      i = e == std::string::npos ? s.size() : e + 2;
      out.code += ' ';
    } else if (s[i] == '"' || s[i] == '\'') {
      const char quote = s[i++];
      std::string lit;
      while (i < s.size() && s[i] != quote && s[i] != '\n') {
        if (s[i] != '\\') {
          lit += s[i++];
          continue;
        }
        ++i;
        char c = i < s.size() ? s[i] : '\0';
        if (isOct(c)) {
          int v = 0, k = 0;
          while (k < 3 && i < s.size() && isOct(s[i])) v = v * 8 + (s[i++] - '0'), ++k;
          lit += static_cast<char>(v);
          continue;
        }
        if (c == 'x') {
          int v = 0;
          ++i;
          while (i < s.size() && std::isxdigit(static_cast<unsigned char>(s[i])))
            v = v * 16 + (std::isdigit(static_cast<unsigned char>(s[i])) ? s[i] - '0' : (std::tolower(s[i]) - 'a' + 10)), ++i;
          lit += static_cast<char>(v);
          continue;
        }
        lit += c == 'n' ? '\n' : c == 't' ? '\t' : c == 'r' ? '\r' : c;
        ++i;
      }
      ++i;  // closing quote (an unterminated literal shows up as a code difference)
      out.code += quote == '"' ? "\"@\"" : "'@'";
      if (quote == '"') out.literals.push_back(lit);
    } else {
      if (!std::isspace(static_cast<unsigned char>(s[i]))) out.code += s[i];
      ++i;
    }
  }
  // Variant symbols hash the kernel's name: compare them as one identifier.
  static const std::regex variant("__v[0-9a-f]{12}");
  out.code = std::regex_replace(out.code, variant, "__vX");
  return out;
}

// ---- plan and emit ----------------------------------------------------------

Expected<std::vector<std::string>> emitAll(const OpList& list) {
  SK_ASSIGN_OR_RETURN(Options o, parseOptions(list.options));
  SK_ASSIGN_OR_RETURN(FusionPlan plan, planOpList(list, o, PlanConfig{MachineModel::singlePool("cpu", 4, "executor", "workers"), true}));
  SK_ASSIGN_OR_RETURN(auto target, makeEmitter("cpu"));
  std::vector<std::string> out;
  for (size_t s = 0; s < plan.steps.size(); ++s) {
    SK_ASSIGN_OR_RETURN(GeneratedSource src, target->emit(plan, s));
    out.push_back(src.text);
  }
  return out;
}

bool rejectedCleanly(const Error& e) {
  const std::string m = e.message();
  return e.kind() == ErrorKind::BadInput &&
         (m.find("control character") != std::string::npos || m.find("not valid UTF-8") != std::string::npos ||
          m.find("longer than 256 bytes") != std::string::npos || m.find("invalid JSON") != std::string::npos);
}

int envCount(const char* name, int dflt) {
  const char* v = std::getenv(name);
  return v && *v ? std::atoi(v) : dflt;
}

// Checks one name set through both front ends; returns false after a failure.
void checkSourceFor(const Generated& gen, uint64_t seed) {
  SCOPED_TRACE(fmt::format("seed {} (rerun: SK_HOSTILE_SEED={})", seed, seed));
  static const std::vector<std::string> plain = [] {
    auto l = parseOpList(opListJson(plainNames()), "plain.json", "/");
    EXPECT_TRUE(l) << msg(l.error());
    auto s = emitAll(*l);
    EXPECT_TRUE(s) << msg(s.error());
    return *s;
  }();
  auto fromJson = parseOpList(opListJson(gen.names), "hostile.json", "/");
  HostData h;
  Graph g;
  Status graphStatus = recordGraph(g, gen.names, h);
  if (gen.expectRejected) {
    ASSERT_FALSE(fromJson) << "accepted a name the grammar forbids";
    EXPECT_TRUE(rejectedCleanly(fromJson.error())) << msg(fromJson.error());
    ASSERT_FALSE(graphStatus) << "the Graph API accepted a name the grammar forbids";
    EXPECT_TRUE(rejectedCleanly(graphStatus.error())) << msg(graphStatus.error());
    return;
  }
  ASSERT_TRUE(fromJson) << msg(fromJson.error());
  ASSERT_TRUE(graphStatus) << msg(graphStatus.error());
  for (const OpList* list : {static_cast<const OpList*>(&*fromJson), &g.opList()}) {
    auto sources = emitAll(*list);
    ASSERT_TRUE(sources) << msg(sources.error());
    ASSERT_EQ(sources->size(), plain.size());
    std::set<std::string> literals;
    for (size_t s = 0; s < plain.size(); ++s) {
      Lexed hostile = lex((*sources)[s]), reference = lex(plain[s]);
      EXPECT_EQ(hostile.code, reference.code) << "step " << s << " differs outside comments and literals:\n"
                                              << (*sources)[s];
      literals.insert(hostile.literals.begin(), hostile.literals.end());
    }
    // The names are still there, intact, inside their literals.
    EXPECT_TRUE(literals.count("barrier before " + gen.names.op[1])) << "no barrier message for op 1";
    EXPECT_TRUE(literals.count(gen.names.op[2] + ": sk_kernel_sync")) << "no kernel_sync message for op 2";
  }
}

TEST(HostileNames, PlainNamesPlanAsExpected) {
  // The reference itself has the shape the property relies on: a barrier
  // before op 1 (early-start=0) and a kernel_sync op.
  auto l = parseOpList(opListJson(plainNames()), "plain.json", "/");
  ASSERT_TRUE(l) << msg(l.error());
  auto s = emitAll(*l);
  ASSERT_TRUE(s) << msg(s.error());
  std::string all;
  for (const auto& t : *s) all += t;
  EXPECT_NE(all.find("\"barrier before op1\""), std::string::npos);
  EXPECT_NE(all.find("\"op2: sk_kernel_sync\""), std::string::npos);
}

TEST(HostileNames, HandPickedNamesInEveryContext) {
  const std::vector<std::string> hostile = {
      "q\"uote", "back\\slash", "trailing\\", "end*/", "/*open", "#pragma once", "?\?/", "x\"); __builtin_trap(); (\"",
      "*/ __builtin_trap(); /*", "\xe2\x80\xae" "bidi", std::string(256, 'L'), std::string(255, 'L') + "\\",
      "{{op_name}}", "%s%n"};
  for (size_t i = 0; i < hostile.size(); ++i) {
    Generated g;
    g.names = plainNames();
    // The name everywhere a name goes, made unique per slot.
    auto v = [&](int k) { return k == 0 ? hostile[i] : hostile[i].substr(0, 250) + std::to_string(k) + "\\"; };
    g.names.kAdd = v(0);
    g.names.kKs = v(1);
    g.names.scope = v(0);
    g.names.event = v(0);
    for (int k = 0; k < 7; ++k) g.names.buf[k] = v(k);
    for (int k = 0; k < 4; ++k) g.names.op[k] = v(k);
    checkSourceFor(g, i);
  }
}

TEST(HostileNames, ControlBytesInvalidUtf8AndOverlongNamesAreRejected) {
  for (const std::string& bad : {std::string("a\nb"), std::string("a\0b", 3), std::string("a\\\n__builtin_trap();"),
                                 std::string("\xff"), std::string("\xc3"), std::string("x\xc2\x85"),
                                 std::string(257, 'x')}) {
    Generated g;
    g.names = plainNames();
    g.names.op[1] = bad;
    g.expectRejected = true;
    checkSourceFor(g, 0);
    // The JSON path names where: ops[2] is op 1 (a record comes first).
    auto l = parseOpList(opListJson(g.names), "hostile.json", "/");
    ASSERT_FALSE(l);
    if (bad != "\xff" && bad != "\xc3") {  // (invalid UTF-8 is already invalid JSON)
      EXPECT_NE(l.error().message().find("hostile.json: ops[2].name: name"), std::string::npos) << l.error().message();
    }
  }
}

TEST(HostileNames, RandomNamesNeverReachCode) {
  const int seeds = envCount("SK_HOSTILE_SEEDS", 150);
  const int only = envCount("SK_HOSTILE_SEED", -1);
  for (int seed = only >= 0 ? only : 1; seed <= (only >= 0 ? only : seeds); ++seed) {
    checkSourceFor(randomNames(static_cast<uint64_t>(seed), true), static_cast<uint64_t>(seed));
    if (::testing::Test::HasFatalFailure()) return;
  }
}

// The whole pipeline: compile what the hostile names produced and run it;
// the results are those of the plain list (an injected __builtin_trap or a
// swallowed line would crash, hang or change them).
TEST(HostileNames, RandomNamesCompileAndRunCorrectly) {
  const int runs = envCount("SK_HOSTILE_RUNS", 3);
  Session& session = testing::sessionFor(4);
  for (int r = 1; r <= runs; ++r) {
    const uint64_t seed = 1000 + static_cast<uint64_t>(r);
    SCOPED_TRACE(fmt::format("seed {}", seed));
    Generated gen = randomNames(seed, false);
    HostData h;
    Graph g;
    Status recorded = recordGraph(g, gen.names, h);
    ASSERT_TRUE(recorded) << msg(recorded.error());
    auto plan = session.compile(g);
    ASSERT_TRUE(plan) << msg(plan.error());
    std::set<std::string> literals;
    for (const CompiledStep& st : plan->steps) {
      Lexed l = lex(st.source.text);
      literals.insert(l.literals.begin(), l.literals.end());
    }
    ASSERT_TRUE(literals.count("barrier before " + gen.names.op[1])) << "the compiled source lost op 1's barrier";
    ASSERT_TRUE(session.run(*plan, g.hostPointers().data(), g.hostPointers().size()));
    const auto& b = h.bufs;
    float partial[2] = {0.0f, 0.0f};
    for (int64_t i = 0; i < kN; ++i) {
      const float t = b[0][i] + b[1][i];
      ASSERT_EQ(b[2][i], t) << i;
      ASSERT_EQ(b[3][i], t + b[1][i]) << i;
      ASSERT_EQ(b[6][i], t + b[1][i]) << i;
      partial[i < kN / 2 ? 0 : 1] += b[3][i];
    }
    const float total = partial[0] + partial[1];
    for (int64_t i = 0; i < kN; ++i) ASSERT_EQ(b[5][i], b[3][i] + total) << i;
  }
}

}  // namespace
}  // namespace sk
