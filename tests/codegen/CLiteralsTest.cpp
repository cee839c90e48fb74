// The C literals every C-family emitter prints (codegen/CLiterals.cpp): the error paths a scalar can take on
// its way into generated source, each a BadInput with the value and the dtype, never a literal.
#include <gtest/gtest.h>

#include <string>

#include "superkernel/codegen/Emitter.h"

namespace sk {
namespace c_literals_test {

std::string errorOf(const ScalarValue& v, DType t) {
  auto r = cScalarLiteral(v, t);
  if (r.ok()) return "<ok: " + *r + ">";
  EXPECT_EQ(r.error().kind(), ErrorKind::BadInput);
  return r.error().message();
}

TEST(CLiterals, ValuesThatCannotBeLiteralsAreBadInput) {
  EXPECT_EQ(errorOf(ScalarValue{1.0}, DType::F16),
            "scalar of dtype f16 is not supported (2-byte storage types are buffers only)");
  EXPECT_EQ(errorOf(ScalarValue{1.0}, DType::BF16),
            "scalar of dtype bf16 is not supported (2-byte storage types are buffers only)");
  EXPECT_EQ(errorOf(ScalarValue{1e39}, DType::F32), "1e+39 does not fit in f32");
  EXPECT_EQ(errorOf(ScalarValue{2.5}, DType::I32), "2.5 is not an integer value for a i32 parameter");
  EXPECT_EQ(errorOf(ScalarValue{int64_t{300}}, DType::U8), "300 is out of range for a u8 parameter");
}

TEST(CLiterals, LiteralsAreExact) {
  EXPECT_EQ(*cScalarLiteral(ScalarValue{1.5}, DType::F32), "0x1.8p+0f");
  EXPECT_EQ(*cScalarLiteral(ScalarValue{int64_t{-2147483648LL}}, DType::I32), "(-2147483647 - 1)");
  EXPECT_EQ(std::string(cType(DType::BF16)), "uint16_t");
  EXPECT_EQ(sanitizeIdentifier("9 lives-x"), "_9_lives_x");
}

}  // namespace c_literals_test
}  // namespace sk
