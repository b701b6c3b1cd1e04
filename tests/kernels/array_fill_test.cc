// Fill, ZerosLike, OnesLike, Range and OneHot: ops that generate values.
#include <string>
#include <vector>

#include "array_test_util.h"

namespace distflow {
namespace {

using test::AsTensor;
using test::ExpectInvalid;
using test::ExpectTensorEqual;
using test::RunOne;

TEST(FillOpTest, FillsEveryElement) {
  ExpectTensorEqual(
      AsTensor<float>({7, 7, 7, 7, 7, 7}, {2, 3}),
      RunOne("Fill", {AsTensor<int32_t>({2, 3}), Tensor::Scalar<float>(7)}, {{"T", DT_FLOAT}}));
  ExpectTensorEqual(AsTensor<std::string>({"x", "x"}, {2}),
                    RunOne("Fill", {AsTensor<int64_t>({2}), Tensor::Scalar<std::string>("x")},
                           {{"T", DT_STRING}, {"index_type", DT_INT64}}));
  ExpectTensorEqual(
      Tensor::Scalar<int64_t>(-3),
      RunOne("Fill", {Tensor(DT_INT32, TensorShape({0})), Tensor::Scalar<int64_t>(-3)},
             {{"T", DT_INT64}}));
  ExpectTensorEqual(
      Tensor(DT_BOOL, TensorShape({0, 2})),
      RunOne("Fill", {AsTensor<int32_t>({0, 2}), Tensor::Scalar<bool>(true)}, {{"T", DT_BOOL}}));
  ExpectTensorEqual(AsTensor<bfloat16>({bfloat16(0.5f), bfloat16(0.5f)}, {2}),
                    RunOne("Fill", {AsTensor<int32_t>({2}), Tensor::Scalar(bfloat16(0.5f))},
                           {{"T", DT_BFLOAT16}}));
}

TEST(FillOpTest, Errors) {
  ExpectInvalid("Fill", {AsTensor<int32_t>({2, -1}), Tensor::Scalar<float>(1)}, {{"T", DT_FLOAT}},
                "Fill dims[1] = -1 must be non-negative");
  ExpectInvalid("Fill", {AsTensor<int32_t>({2}), AsTensor<float>({1, 2})}, {{"T", DT_FLOAT}},
                "must be rank 0 but has shape [2]");
}

TEST(ZerosLikeOpTest, ZerosOfEveryKind) {
  ExpectTensorEqual(AsTensor<float>({0, 0, 0}, {3}),
                    RunOne("ZerosLike", {AsTensor<float>({1, -2, 3})}, {{"T", DT_FLOAT}}));
  ExpectTensorEqual(
      AsTensor<std::string>({"", ""}, {1, 2}),
      RunOne("ZerosLike", {AsTensor<std::string>({"a", "b"}, {1, 2})}, {{"T", DT_STRING}}));
  ExpectTensorEqual(
      test::AsBoolTensor({false, false}, {2}),
      RunOne("ZerosLike", {test::AsBoolTensor({true, false}, {2})}, {{"T", DT_BOOL}}));
  ExpectTensorEqual(Tensor::Scalar<int64_t>(0),
                    RunOne("ZerosLike", {Tensor::Scalar<int64_t>(9)}, {{"T", DT_INT64}}));
  ExpectTensorEqual(
      AsTensor<bfloat16>({bfloat16(0.0f)}, {1}),
      RunOne("ZerosLike", {AsTensor<bfloat16>({bfloat16(3.0f)}, {1})}, {{"T", DT_BFLOAT16}}));
  ExpectTensorEqual(Tensor(DT_DOUBLE, TensorShape({0})),
                    RunOne("ZerosLike", {Tensor(DT_DOUBLE, TensorShape({0}))}, {{"T", DT_DOUBLE}}));
}

TEST(OnesLikeOpTest, OnesOfEveryNumberTypeAndTrue) {
  ExpectTensorEqual(
      AsTensor<int32_t>({1, 1, 1, 1}, {2, 2}),
      RunOne("OnesLike", {AsTensor<int32_t>({5, 6, 7, 8}, {2, 2})}, {{"T", DT_INT32}}));
  ExpectTensorEqual(test::AsBoolTensor({true}, {1}),
                    RunOne("OnesLike", {test::AsBoolTensor({false}, {1})}, {{"T", DT_BOOL}}));
  ExpectTensorEqual(AsTensor<bfloat16>({bfloat16(1.0f), bfloat16(1.0f)}, {2}),
                    RunOne("OnesLike", {AsTensor<bfloat16>({bfloat16(0.0f), bfloat16(2.0f)})},
                           {{"T", DT_BFLOAT16}}));
  ExpectTensorEqual(Tensor::Scalar<double>(1),
                    RunOne("OnesLike", {Tensor::Scalar<double>(0)}, {{"T", DT_DOUBLE}}));
  ExpectTensorEqual(AsTensor<uint8_t>({1, 1}, {2}),
                    RunOne("OnesLike", {AsTensor<uint8_t>({0, 200})}, {{"T", DT_UINT8}}));
}

TEST(OnesLikeOpTest, StringsAreNotAllowed) {
  ExpectInvalid("OnesLike", {AsTensor<std::string>({"a"})}, {{"T", DT_STRING}}, "T");
}

TEST(RangeOpTest, IntegerRanges) {
  auto range = [](int32_t s, int32_t l, int32_t d) {
    return RunOne(
        "Range",
        {Tensor::Scalar<int32_t>(s), Tensor::Scalar<int32_t>(l), Tensor::Scalar<int32_t>(d)}, {});
  };
  ExpectTensorEqual(AsTensor<int32_t>({0, 1, 2, 3, 4}), range(0, 5, 1));
  ExpectTensorEqual(AsTensor<int32_t>({0, 3, 6, 9}), range(0, 10, 3));
  ExpectTensorEqual(AsTensor<int32_t>({5, 3, 1}), range(5, 0, -2));
  ExpectTensorEqual(AsTensor<int32_t>({-2, -1}), range(-2, 0, 1));
  ExpectTensorEqual(Tensor(DT_INT32, TensorShape({0})), range(3, 3, 1));
  ExpectTensorEqual(
      AsTensor<int64_t>({10, 15}),
      RunOne("Range",
             {Tensor::Scalar<int64_t>(10), Tensor::Scalar<int64_t>(20), Tensor::Scalar<int64_t>(5)},
             {{"Tidx", DT_INT64}}));
}

TEST(RangeOpTest, FloatingRanges) {
  ExpectTensorEqual(
      AsTensor<float>({0, 0.25f, 0.5f, 0.75f}),
      RunOne("Range",
             {Tensor::Scalar<float>(0), Tensor::Scalar<float>(1), Tensor::Scalar<float>(0.25f)},
             {{"Tidx", DT_FLOAT}}));
  ExpectTensorEqual(
      AsTensor<double>({1, 0.5}),
      RunOne("Range",
             {Tensor::Scalar<double>(1), Tensor::Scalar<double>(0.2), Tensor::Scalar<double>(-0.5)},
             {{"Tidx", DT_DOUBLE}}));
}

TEST(RangeOpTest, Errors) {
  auto ints = [](int32_t s, int32_t l, int32_t d) {
    return std::vector<Tensor>{Tensor::Scalar<int32_t>(s), Tensor::Scalar<int32_t>(l),
                               Tensor::Scalar<int32_t>(d)};
  };
  ExpectInvalid("Range", ints(0, 5, 0), {}, "Range requires delta != 0");
  ExpectInvalid("Range", ints(5, 1, 1), {},
                "Range requires start <= limit when delta > 0, got start 5 and limit 1");
  ExpectInvalid("Range", ints(1, 5, -1), {},
                "Range requires start >= limit when delta < 0, got start 1 and limit 5");
  ExpectInvalid("Range",
                {AsTensor<int32_t>({0, 1}), Tensor::Scalar<int32_t>(5), Tensor::Scalar<int32_t>(1)},
                {}, "must be rank 0 but has shape [2]");
}

std::vector<Tensor> OneHotInputs(const Tensor& indices, int32_t depth) {
  return {indices, Tensor::Scalar<int32_t>(depth), Tensor::Scalar<float>(1),
          Tensor::Scalar<float>(0)};
}

TEST(OneHotOpTest, LastAxisByDefault) {
  ExpectTensorEqual(AsTensor<float>({1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0}, {4, 3}),
                    RunOne("OneHot", OneHotInputs(AsTensor<int32_t>({0, 2, -1, 1}), 3),
                           {{"T", DT_FLOAT}, {"TI", DT_INT32}}));
}

TEST(OneHotOpTest, OtherAxes) {
  ExpectTensorEqual(AsTensor<float>({1, 0, 0, 0, 0, 0, 0, 1, 0, 1, 0, 0}, {3, 4}),
                    RunOne("OneHot", OneHotInputs(AsTensor<int32_t>({0, 2, -1, 1}), 3),
                           {{"T", DT_FLOAT}, {"TI", DT_INT32}, {"axis", 0}}));
  ExpectTensorEqual(AsTensor<float>({1, 0, 0, 0, 0, 1, 0, 0, 1, 0, 0, 0}, {2, 3, 2}),
                    RunOne("OneHot", OneHotInputs(AsTensor<int64_t>({0, 2, 1, 5}, {2, 2}), 3),
                           {{"T", DT_FLOAT}, {"axis", 1}}));
}

TEST(OneHotOpTest, StringsScalarsAndEmpty) {
  ExpectTensorEqual(AsTensor<std::string>({"off", "on", "off"}, {3}),
                    RunOne("OneHot",
                           {Tensor::Scalar<uint8_t>(1), Tensor::Scalar<int32_t>(3),
                            Tensor::Scalar<std::string>("on"), Tensor::Scalar<std::string>("off")},
                           {{"T", DT_STRING}, {"TI", DT_UINT8}}));
  ExpectTensorEqual(
      Tensor(DT_FLOAT, TensorShape({0, 3})),
      RunOne("OneHot", OneHotInputs(Tensor(DT_INT64, TensorShape({0})), 3), {{"T", DT_FLOAT}}));
  ExpectTensorEqual(
      Tensor(DT_FLOAT, TensorShape({2, 0})),
      RunOne("OneHot", OneHotInputs(AsTensor<int64_t>({0, 1}), 0), {{"T", DT_FLOAT}}));
}

TEST(OneHotOpTest, Errors) {
  ExpectInvalid("OneHot", OneHotInputs(AsTensor<int64_t>({0}), -1), {{"T", DT_FLOAT}},
                "OneHot depth must be non-negative, got -1");
  ExpectInvalid("OneHot", OneHotInputs(AsTensor<int64_t>({0}), 2), {{"T", DT_FLOAT}, {"axis", 2}},
                "OneHot axis 2 must be -1 or in [0, 1] for indices of shape [1]");
  ExpectInvalid("OneHot",
                {AsTensor<int64_t>({0}), Tensor::Scalar<int32_t>(2), AsTensor<float>({1}),
                 Tensor::Scalar<float>(0)},
                {{"T", DT_FLOAT}}, "must be rank 0 but has shape [1]");
}

}  // namespace
}  // namespace distflow
