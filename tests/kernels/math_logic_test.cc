// Tests for comparisons, logical ops, Select/SelectV2 and Cast.
#include <cmath>
#include <limits>
#include <string>

#include "gmock/gmock.h"
#include "kernel_test_util.h"

namespace distflow {
namespace {

using test::AsTensor;
using test::ExpectTensorEqual;
using test::ExpectTensorNear;
using test::RunKernel;
using ::testing::HasSubstr;

Tensor RunOne(const std::string& op, const std::vector<Tensor>& inputs,
              const std::vector<test::KernelAttr>& attrs) {
  auto out = RunKernel(op, inputs, attrs);
  EXPECT_TRUE(out.ok()) << op << ": " << out.status();
  if (!out.ok() || out->size() != 1) return Tensor();
  return (*out)[0];
}

Tensor Bools(std::vector<bool> v, std::initializer_list<int64_t> shape) {
  Tensor t(DT_BOOL, TensorShape(shape));
  for (size_t i = 0; i < v.size(); ++i) t.flat<bool>()[i] = v[i];
  return t;
}

TEST(MathCompareTest, AllComparisonsWithBroadcast) {
  Tensor x = AsTensor<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor y = AsTensor<float>({2, 2, 5}, {3});
  const std::vector<test::KernelAttr> attrs = {{"T", DT_FLOAT}};
  ExpectTensorEqual(Bools({true, false, true, false, false, false}, {2, 3}),
                    RunOne("Less", {x, y}, attrs));
  ExpectTensorEqual(Bools({true, true, true, false, false, false}, {2, 3}),
                    RunOne("LessEqual", {x, y}, attrs));
  ExpectTensorEqual(Bools({false, false, false, true, true, true}, {2, 3}),
                    RunOne("Greater", {x, y}, attrs));
  ExpectTensorEqual(Bools({false, true, false, true, true, true}, {2, 3}),
                    RunOne("GreaterEqual", {x, y}, attrs));
  ExpectTensorEqual(Bools({false, true, false, false, false, false}, {2, 3}),
                    RunOne("Equal", {x, y}, attrs));
  ExpectTensorEqual(Bools({true, false, true, true, true, true}, {2, 3}),
                    RunOne("NotEqual", {x, y}, attrs));
}

TEST(MathCompareTest, IntsScalarsAndColumnRow) {
  ExpectTensorEqual(
      Bools({false, true, true, true}, {2, 2}),
      RunOne("Greater", {AsTensor<int64_t>({1, 2}, {2, 1}), AsTensor<int64_t>({1, 0}, {1, 2})},
             {{"T", DT_INT64}}));
  ExpectTensorEqual(
      Bools({true}, {}),
      RunOne("Equal", {Tensor::Scalar<int32_t>(3), Tensor::Scalar<int32_t>(3)}, {{"T", DT_INT32}}));
  Tensor empty = RunOne("Less", {AsTensor<int32_t>({}, {0, 3}), Tensor::Scalar<int32_t>(1)},
                        {{"T", DT_INT32}});
  EXPECT_EQ(empty.shape().DebugString(), "[0,3]");
  EXPECT_EQ(empty.dtype(), DT_BOOL);
}

TEST(MathCompareTest, EqualOnStringsAndBools) {
  ExpectTensorEqual(Bools({true, false}, {2}), RunOne("Equal",
                                                      {Tensor::FromVector<std::string>({"a", "b"}),
                                                       Tensor::Scalar<std::string>("a")},
                                                      {{"T", DT_STRING}}));
  ExpectTensorEqual(
      Bools({false, true}, {2}),
      RunOne("NotEqual", {Bools({true, true}, {2}), Bools({true, false}, {2})}, {{"T", DT_BOOL}}));
}

TEST(MathCompareTest, IncompatibleShapes) {
  Tensor x = AsTensor<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor y = AsTensor<float>({1, 2, 3, 4}, {4});
  auto out = RunKernel("Less", {x, y}, {{"T", DT_FLOAT}});
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(std::string(out.status().message()),
              HasSubstr("incompatible shapes for broadcasting: [2,3] and [4]"));
  out = RunKernel("Equal", {x, y}, {{"T", DT_FLOAT}});
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  // Without incompatible_shape_error the answer is a scalar.
  ExpectTensorEqual(
      Bools({false}, {}),
      RunOne("Equal", {x, y}, {{"T", DT_FLOAT}, {"incompatible_shape_error", false}}));
  ExpectTensorEqual(
      Bools({true}, {}),
      RunOne("NotEqual", {x, y}, {{"T", DT_FLOAT}, {"incompatible_shape_error", false}}));
}

TEST(MathLogicalTest, AndOrNot) {
  Tensor x = Bools({true, true, false, false}, {2, 2});
  Tensor y = Bools({true, false}, {2});
  ExpectTensorEqual(Bools({true, false, false, false}, {2, 2}), RunOne("LogicalAnd", {x, y}, {}));
  ExpectTensorEqual(Bools({true, true, true, false}, {2, 2}), RunOne("LogicalOr", {x, y}, {}));
  ExpectTensorEqual(Bools({false, false, true, true}, {2, 2}), RunOne("LogicalNot", {x}, {}));
  ExpectTensorEqual(Bools({true, false}, {2}), RunOne("LogicalAnd", {Bools({true}, {}), y}, {}));
}

TEST(MathSelectTest, SameShapeCondition) {
  ExpectTensorNear(
      AsTensor<float>({1, 20, 3, 40}, {2, 2}),
      RunOne("Select",
             {Bools({true, false, true, false}, {2, 2}), AsTensor<float>({1, 2, 3, 4}, {2, 2}),
              AsTensor<float>({10, 20, 30, 40}, {2, 2})},
             {{"T", DT_FLOAT}}));
}

TEST(MathSelectTest, VectorConditionPicksRows) {
  ExpectTensorEqual(
      AsTensor<int64_t>({10, 20, 3, 4, 50, 60}, {3, 2}),
      RunOne("Select",
             {Bools({false, true, false}, {3}), AsTensor<int64_t>({1, 2, 3, 4, 5, 6}, {3, 2}),
              AsTensor<int64_t>({10, 20, 30, 40, 50, 60}, {3, 2})},
             {{"T", DT_INT64}}));
}

TEST(MathSelectTest, ScalarConditionAndStrings) {
  ExpectTensorEqual(Tensor::FromVector<std::string>({"x", "y"}),
                    RunOne("Select",
                           {Bools({true}, {}), Tensor::FromVector<std::string>({"x", "y"}),
                            Tensor::FromVector<std::string>({"p", "q"})},
                           {{"T", DT_STRING}}));
  ExpectTensorEqual(Tensor::FromVector<std::string>({"p", "y"}),
                    RunOne("Select",
                           {Bools({false, true}, {2}), Tensor::FromVector<std::string>({"x", "y"}),
                            Tensor::FromVector<std::string>({"p", "q"})},
                           {{"T", DT_STRING}}));
}

TEST(MathSelectTest, BadConditionShape) {
  auto out = RunKernel("Select",
                       {Bools({true, false}, {2}), AsTensor<float>({1, 2, 3, 4, 5, 6}, {3, 2}),
                        AsTensor<float>({1, 2, 3, 4, 5, 6}, {3, 2})},
                       {{"T", DT_FLOAT}});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(out.status().message()), HasSubstr("[2] vs t [3,2]"));
  out = RunKernel(
      "Select",
      {Bools({true, false}, {2}), AsTensor<float>({1, 2}, {2}), AsTensor<float>({1, 2, 3}, {3})},
      {{"T", DT_FLOAT}});
  EXPECT_THAT(std::string(out.status().message()), HasSubstr("[2] vs [3]"));
}

TEST(MathSelectTest, SelectV2BroadcastsAllThree) {
  // cond [2,1], t [1,3], e scalar -> [2,3].
  ExpectTensorNear(AsTensor<double>({1, 2, 3, 0, 0, 0}, {2, 3}),
                   RunOne("SelectV2",
                          {Bools({true, false}, {2, 1}), AsTensor<double>({1, 2, 3}, {1, 3}),
                           Tensor::Scalar<double>(0)},
                          {{"T", DT_DOUBLE}}));
  ExpectTensorEqual(AsTensor<int32_t>({7, 2, 7}, {3}),
                    RunOne("SelectV2",
                           {Bools({false, true, false}, {3}), AsTensor<int32_t>({1, 2, 3}, {3}),
                            Tensor::Scalar<int32_t>(7)},
                           {{"T", DT_INT32}}));
  auto out = RunKernel(
      "SelectV2",
      {Bools({true, false}, {2}), AsTensor<float>({1, 2, 3}, {3}), Tensor::Scalar<float>(0)},
      {{"T", DT_FLOAT}});
  EXPECT_THAT(std::string(out.status().message()),
              HasSubstr("incompatible shapes for broadcasting"));
}

TEST(MathCastTest, FloatToIntTruncatesAndSaturates) {
  const float inf = std::numeric_limits<float>::infinity();
  ExpectTensorEqual(AsTensor<int32_t>({1, -1, 0, std::numeric_limits<int32_t>::max(),
                                       std::numeric_limits<int32_t>::min(), 0},
                                      {6}),
                    RunOne("Cast", {AsTensor<float>({1.9f, -1.9f, 0.2f, 1e20f, -inf, NAN}, {6})},
                           {{"SrcT", DT_FLOAT}, {"DstT", DT_INT32}}));
  ExpectTensorEqual(AsTensor<uint8_t>({255, 0, 7}, {3}),
                    RunOne("Cast", {AsTensor<double>({300, -5, 7.5}, {3})},
                           {{"SrcT", DT_DOUBLE}, {"DstT", DT_UINT8}}));
}

TEST(MathCastTest, BoolAndIntConversions) {
  ExpectTensorEqual(Bools({true, false, true}, {3}),
                    RunOne("Cast", {AsTensor<float>({0.5f, 0, -2}, {3})},
                           {{"SrcT", DT_FLOAT}, {"DstT", DT_BOOL}}));
  ExpectTensorNear(AsTensor<float>({1, 0}, {2}), RunOne("Cast", {Bools({true, false}, {2})},
                                                        {{"SrcT", DT_BOOL}, {"DstT", DT_FLOAT}}));
  ExpectTensorEqual(
      AsTensor<int64_t>({-3, 4}, {2}),
      RunOne("Cast", {AsTensor<int32_t>({-3, 4}, {2})}, {{"SrcT", DT_INT32}, {"DstT", DT_INT64}}));
  ExpectTensorNear(
      AsTensor<double>({3, 4}, {2}),
      RunOne("Cast", {AsTensor<int64_t>({3, 4}, {2})}, {{"SrcT", DT_INT64}, {"DstT", DT_DOUBLE}}));
  // Same type: passes the input through.
  ExpectTensorEqual(AsTensor<int32_t>({5}, {1}), RunOne("Cast", {AsTensor<int32_t>({5}, {1})},
                                                        {{"SrcT", DT_INT32}, {"DstT", DT_INT32}}));
}

TEST(MathCastTest, Bfloat16RoundingAndTruncation) {
  // 1 + 2^-8 + 2^-9 is between two bfloat16 values: rounding goes up,
  // truncation goes down.
  const float v = 1.0f + 1.0f / 256 + 1.0f / 512;
  Tensor rounded =
      RunOne("Cast", {AsTensor<float>({v}, {1})}, {{"SrcT", DT_FLOAT}, {"DstT", DT_BFLOAT16}});
  EXPECT_EQ(static_cast<float>(rounded.flat<bfloat16>()[0]), 1.0f + 1.0f / 128);
  Tensor truncated = RunOne("Cast", {AsTensor<float>({v}, {1})},
                            {{"SrcT", DT_FLOAT}, {"DstT", DT_BFLOAT16}, {"Truncate", true}});
  EXPECT_EQ(static_cast<float>(truncated.flat<bfloat16>()[0]), 1.0f);
  ExpectTensorEqual(AsTensor<int32_t>({1}, {1}),
                    RunOne("Cast", {rounded}, {{"SrcT", DT_BFLOAT16}, {"DstT", DT_INT32}}));
}

TEST(MathCastTest, EmptyAndScalar) {
  Tensor out =
      RunOne("Cast", {AsTensor<float>({}, {0, 3})}, {{"SrcT", DT_FLOAT}, {"DstT", DT_INT64}});
  EXPECT_EQ(out.shape().DebugString(), "[0,3]");
  ExpectTensorEqual(Tensor::Scalar<int32_t>(2), RunOne("Cast", {Tensor::Scalar<double>(2.7)},
                                                       {{"SrcT", DT_DOUBLE}, {"DstT", DT_INT32}}));
}

}  // namespace
}  // namespace distflow
