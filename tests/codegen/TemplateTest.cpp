#include "superkernel/codegen/Template.h"

#include <gtest/gtest.h>

namespace sk {
namespace template_test {

std::string render(std::string_view text, const TemplateValues& v) {
  auto t = Template::parse(text, "t.tmpl");
  EXPECT_TRUE(t.ok()) << (t.ok() ? "" : t.error().message());
  if (!t) return "<parse error>";
  auto r = t->render(v);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message());
  return r.ok() ? *r : "<render error>";
}

TEST(Template, SubstitutesValues) {
  TemplateValues v;
  v.set("a", "x").set("n", 42).set("big", uint64_t{18446744073709551615ull});
  EXPECT_EQ(render("[{{a}}] {{ n }} {{big}}", v), "[x] 42 18446744073709551615");
}

TEST(Template, RepeatsSectionsWithNestedScopes) {
  TemplateValues v;
  v.set("outer", "O");
  for (int i = 0; i < 3; ++i) {
    auto& item = v.add("items");
    item.set("i", i);
    item.add("inner").set("j", i * 10);
  }
  EXPECT_EQ(render("{{#items}}<{{i}}{{#inner}}:{{j}}{{outer}}{{/inner}}>{{/items}}", v), "<0:0O><1:10O><2:20O>");
}

TEST(Template, InnerValuesShadowOuterOnes) {
  TemplateValues v;
  v.set("x", "outer");
  v.add("l").set("x", "inner");
  EXPECT_EQ(render("{{x}} {{#l}}{{x}}{{/l}} {{x}}", v), "outer inner outer");
}

TEST(Template, ConditionalsAndInvertedSections) {
  TemplateValues v;
  v.setIf("yes", true).setIf("no", false);
  EXPECT_EQ(render("{{#yes}}Y{{/yes}}{{#no}}N{{/no}}{{^no}}!N{{/no}}{{^yes}}!Y{{/yes}}{{^absent}}A{{/absent}}", v),
            "Y!NA");
}

TEST(Template, StandaloneTagLinesLeaveNoBlankLines) {
  TemplateValues v;
  v.add("l").set("x", "1");
  v.add("l").set("x", "2");
  std::string text =
      "begin\n"
      "  {{! a comment line }}\n"
      "{{#l}}\n"
      "  item {{x}}\n"
      "  {{/l}}\n"
      "end\n";
  EXPECT_EQ(render(text, v), "begin\n  item 1\n  item 2\nend\n");
}

TEST(Template, InlineCommentsAreDropped) {
  TemplateValues v;
  EXPECT_EQ(render("a{{! note }}b\n", v), "ab\n");
}

TEST(Template, UnknownNamesAreErrorsWithLine) {
  auto t = Template::parse("ok\n{{missing}}\n", "x.tmpl");
  ASSERT_TRUE(t.ok());
  auto r = t->render(TemplateValues{});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message().find("x.tmpl:2"), std::string::npos) << r.error().message();
  EXPECT_NE(r.error().message().find("missing"), std::string::npos);

  auto t2 = Template::parse("{{#nolist}}x{{/nolist}}", "y.tmpl");
  ASSERT_TRUE(t2.ok());
  auto r2 = t2->render(TemplateValues{});
  ASSERT_FALSE(r2.ok());
  EXPECT_NE(r2.error().message().find("nolist"), std::string::npos);
}

TEST(Template, MalformedTemplatesAreRejected) {
  struct Case {
    const char* text;
    const char* needle;
  } cases[] = {
      {"{{#a}}x", "never closed"},
      {"x{{/a}}", "closes nothing"},
      {"{{#a}}{{#b}}{{/a}}{{/b}}", "closes section 'b'"},
      {"{{ bad name }}", "bad template tag"},
      {"{{unterminated\n}}", "unterminated"},
      {"{{}}", "bad template tag"},
  };
  for (const auto& c : cases) {
    auto t = Template::parse(c.text, "m.tmpl");
    ASSERT_FALSE(t.ok()) << c.text;
    EXPECT_NE(t.error().message().find(c.needle), std::string::npos) << c.text << " -> " << t.error().message();
  }
}

TEST(Template, BracesThatAreNotTagsPassThrough) {
  TemplateValues v;
  v.set("e", "{0, 1}");
  EXPECT_EQ(render("int a[] = { {{e}} }; { }", v), "int a[] = { {0, 1} }; { }");
}

TEST(Template, RenderIsRepeatable) {
  auto t = Template::parse("{{#l}}{{x}}{{/l}}", "r.tmpl");
  ASSERT_TRUE(t.ok());
  TemplateValues a, b;
  a.add("l").set("x", "A");
  b.add("l").set("x", "B");
  b.add("l").set("x", "C");
  EXPECT_EQ(*t->render(a), "A");
  EXPECT_EQ(*t->render(b), "BC");
  EXPECT_EQ(*t->render(a), "A");
}

}  // namespace template_test
}  // namespace sk
