// u64 scalars: the whole unsigned range is accepted for a u64 parameter
// (JSON integers above INT64_MAX used to be rejected as "does not fit in 64
// signed bits"), stays exact through the writer, and is still out of range
// for every signed or narrower dtype.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "superkernel/codegen/Emitter.h"
#include "superkernel/frontend/OpList.h"

namespace sk {
namespace u64_scalar_test {

const std::filesystem::path kPlanData = std::filesystem::path(SK_SOURCE_ROOT) / "tests/plan/data";

std::string listWith(const std::string& dtype, const std::string& value) {
  return R"({"format": "superkernel.oplist", "version": 1,
    "kernels": {"k": {"source": "kernels/k.cpp", "entry": "k", "params": [
      {"name": "y", "kind": "buffer", "dtype": "f32", "access": "write", "partition": "block"},
      {"name": "n", "kind": "scalar", "dtype": ")" +
         dtype + R"("}]}},
    "buffers": {"b": {"dtype": "f32", "shape": [4]}},
    "ops": [{"name": "A", "kernel": "k", "block_dim": 1, "args": {"y": "b", "n": )" +
         value + "}}]}";
}

TEST(U64Scalar, FullRangeAcceptedForU64) {
  for (const char* v : {"0", "9223372036854775807", "9223372036854775808", "18446744073709551615"}) {
    auto l = parseOpList(listWith("u64", v), "u64.json", kPlanData);
    ASSERT_TRUE(l.ok()) << v << ": " << l.error().message();
    const ScalarValue& s = l->ops[0].findArg("n")->scalar();
    EXPECT_EQ(static_cast<unsigned long long>(*scalarInteger(s)), std::stoull(v)) << v;
    // Round trip through the writer keeps the exact value.
    auto again = parseOpList(writeOpList(*l), "again.json", kPlanData);
    ASSERT_TRUE(again.ok()) << again.error().message();
    EXPECT_EQ(again->ops[0].findArg("n")->scalar(), s) << v;
  }
  auto lit = cScalarLiteral(ScalarValue{uint64_t{18446744073709551615ull}}, DType::U64);
  ASSERT_TRUE(lit.ok());
  EXPECT_EQ(*lit, "UINT64_C(18446744073709551615)");
}

TEST(U64Scalar, AboveInt64MaxIsOutOfRangeForOtherDtypes) {
  for (const char* dt : {"i64", "u32", "i32"}) {
    auto l = parseOpList(listWith(dt, "18446744073709551615"), "u64.json", kPlanData);
    ASSERT_FALSE(l.ok()) << dt;
    EXPECT_NE(l.error().message().find("value 18446744073709551615 out of range of " + std::string(dt)),
              std::string::npos)
        << l.error().message();
  }
  // Beyond u64 is not an integer JSON can give us as one: still an error, not a wrap.
  auto l = parseOpList(listWith("u64", "18446744073709551616"), "u64.json", kPlanData);
  EXPECT_FALSE(l.ok());
  // A float parameter takes it as a double.
  l = parseOpList(listWith("f64", "18446744073709551615"), "u64.json", kPlanData);
  ASSERT_TRUE(l.ok()) << l.error().message();
  EXPECT_EQ(scalarAsDouble(l->ops[0].findArg("n")->scalar()), 18446744073709551615.0);
}

}  // namespace u64_scalar_test
}  // namespace sk
