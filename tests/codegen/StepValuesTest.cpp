// The pieces the cpu and cuda emitters share (codegen/StepValues.h,
// codegen/TemplateEmitter.h). The goldens of both back ends pin the text they
// produce together; these pin the parameters that make the two differ (the
// core test's suffix, the buffer array's name) and the shared error paths.
#include "superkernel/codegen/StepValues.h"
#include "superkernel/codegen/TemplateEmitter.h"

#include <gtest/gtest.h>

#include "codegen/TestPlans.h"

namespace sk {
namespace {

// The text, or the error in its place (so an EXPECT_EQ on it shows the error).
std::string render(std::string_view text, const TemplateValues& v) {
  auto t = Template::parse(text, "t.tmpl");
  if (!t) return "<parse error: " + t.error().message() + ">";
  auto r = t->render(v);
  return r ? *r : "<render error: " + r.error().message() + ">";
}

TEST(StepValues, FlagRangesWrapEveryEightAndWriteEmptyRangesAsOneZero) {
  std::vector<std::pair<uint32_t, uint32_t>> ranges;
  for (uint32_t b = 0; b < 9; ++b) ranges.emplace_back(b, b + 1);
  ranges[2] = {3, 2};  // empty: the wait loop must not run
  EXPECT_EQ(formatFlagRanges(ranges),
            "{0, 1}, {1, 2}, {1, 0}, {3, 4}, {4, 5}, {5, 6}, {6, 7}, {7, 8},\n    {8, 9}");
  EXPECT_EQ(formatFlagRanges({}), "");
}

TEST(StepValues, CoreTestTakesTheBackEndsIntegerSuffix) {
  const FusionPlan plan = testplans::twoStreamsPlan();  // queues on cores [0, 2) and [2, 4)
  const char* tmpl = "{{#queues}}{{q}}: {{core_test}}; {{/queues}}";
  TemplateValues cpu;
  addQueues(cpu, plan, plan.steps[0], "");
  EXPECT_EQ(render(tmpl, cpu), "0: core < 2; 1: core >= 2 && core < 4; ");
  TemplateValues cuda;
  addQueues(cuda, plan, plan.steps[0], "u");
  EXPECT_EQ(render(tmpl, cuda), "0: core < 2u; 1: core >= 2u && core < 4u; ");
}

TEST(StepValues, PerOpCallbackSeesEveryQueuedOpInQueueOrder) {
  const FusionPlan plan = testplans::twoStreamsPlan();
  TemplateValues v;
  std::vector<std::string> seen;
  const bool anyPreload = addQueues(v, plan, plan.steps[0], "", [&](TemplateValues& item, const PlannedOp& op) {
    seen.push_back(op.name);
    item.set("extra", op.name);
  });
  EXPECT_FALSE(anyPreload);  // the plan's one preload is under preload-code=none
  EXPECT_EQ(seen, (std::vector<std::string>{"s0_first", "s0_last", "s1_first", "s1_join"}));
  EXPECT_EQ(render("{{#queues}}{{#ops}}{{op}}={{extra}} {{/ops}}{{/queues}}", v),
            "0=s0_first 3=s0_last 1=s1_first 2=s1_join ");
}

TEST(StepValues, CallArgsUseTheNamedBufferArray) {
  const FusionPlan plan = testplans::seedPlan();
  const SuperKernelPlan& sk = plan.steps[0];
  const PlannedOp& op = sk.ops[0];
  TemplateValues of;
  auto usesBuf = addCallArgs(of, plan.variants[op.variant], op, "sk_buf");
  ASSERT_TRUE(usesBuf.ok()) << usesBuf.error().message();
  EXPECT_TRUE(*usesBuf);
  const std::string text = render("{{#args}}{{arg}}|{{/args}}", of);
  EXPECT_NE(text.find("static_cast<const float*>(sk_buf["), std::string::npos) << text;
  EXPECT_EQ(text.find("(buf["), std::string::npos) << text;
}

TEST(StepValues, UnfusedStepIsLabelledByItsKernel) {
  const FusionPlan plan = testplans::unfusedPlan();
  EXPECT_EQ(stepLabel(plan, plan.steps[0]), "unfused add");
  EXPECT_EQ(stepOpLabel(plan, plan.steps[0], plan.steps[0].ops[0]), "add");
}

// A TemplateEmitter whose emitStep fails, to see the shared checks and context.
class FailingEmitter final : public TemplateEmitter {
 public:
  FailingEmitter() : TemplateEmitter("test", *Template::parse("x", "t.tmpl"), "t.tmpl") {}

 private:
  Expected<GeneratedSource> emitStep(const FusionPlan&, const SuperKernelPlan&) const override {
    return badInput("no luck");
  }
};

TEST(TemplateEmitter, ChecksTheStepAndNamesTargetAndStepInErrors) {
  const FusionPlan plan = testplans::seedPlan();
  FailingEmitter t;
  EXPECT_EQ(t.name(), "test");
  EXPECT_EQ(t.templateFiles(), (std::vector<std::filesystem::path>{"t.tmpl"}));
  auto out = t.emit(plan, plan.steps.size());
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.error().kind(), ErrorKind::Internal);
  EXPECT_NE(out.error().message().find("out of range"), std::string::npos) << out.error().message();
  auto failed = t.emit(plan, 0);
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.error().kind(), ErrorKind::BadInput);
  EXPECT_EQ(failed.error().message(), "while generating test code for SuperKernel " + plan.steps[0].name + ": no luck");
}

TEST(TemplateEmitter, UnreadableTemplateFileIsAnIoErrorNamingIt) {
  auto t = readTemplateFile("/nonexistent/superkernel.tmpl");
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.error().kind(), ErrorKind::Io);
  EXPECT_NE(t.error().message().find("/nonexistent/superkernel.tmpl"), std::string::npos) << t.error().message();
}

}  // namespace
}  // namespace sk
