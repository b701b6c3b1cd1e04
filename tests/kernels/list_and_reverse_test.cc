// The TensorList ops a Keras RNN's While loop uses (a list built from a
// tensor, read item by item, written into a reserved list, stacked back),
// their errors, and ReverseV2.
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernel_test_util.h"

namespace distflow {
namespace {

using test::AsTensor;
using test::ExpectTensorEqual;
using test::RunKernel;
using ::testing::HasSubstr;

const std::vector<test::KernelAttr> kFloatList = {{"element_dtype", DT_FLOAT}};

Tensor Shape(std::vector<int32_t> dims) { return AsTensor<int32_t>(dims); }

TEST(TensorListTest, FromTensorGetItemSetItemStack) {
  auto list =
      RunKernel("TensorListFromTensor", {AsTensor<float>({1, 2, 3, 4, 5, 6}, {3, 2}), Shape({2})},
                {{"element_dtype", DT_FLOAT}, {"shape_type", DT_INT32}});
  ASSERT_TRUE(list.ok()) << list.status();
  auto length = RunKernel("TensorListLength", {(*list)[0]});
  ASSERT_TRUE(length.ok()) << length.status();
  EXPECT_EQ((*length)[0].scalar<int32_t>(), 3);
  auto item = RunKernel("TensorListGetItem", {(*list)[0], Tensor::Scalar<int32_t>(1), Shape({2})},
                        kFloatList);
  ASSERT_TRUE(item.ok()) << item.status();
  ExpectTensorEqual(AsTensor<float>({3, 4}), (*item)[0]);

  auto reserved = RunKernel("TensorListReserve", {Shape({2}), Tensor::Scalar<int32_t>(3)},
                            {{"element_dtype", DT_FLOAT}, {"shape_type", DT_INT32}});
  ASSERT_TRUE(reserved.ok()) << reserved.status();
  auto set =
      RunKernel("TensorListSetItem",
                {(*reserved)[0], Tensor::Scalar<int32_t>(2), AsTensor<float>({7, 8})}, kFloatList);
  ASSERT_TRUE(set.ok()) << set.status();
  // Unset elements stack as zeros; the reserved list itself is unchanged.
  auto stacked = RunKernel("TensorListStack", {(*set)[0], Shape({2})},
                           {{"element_dtype", DT_FLOAT}, {"num_elements", int64_t{3}}});
  ASSERT_TRUE(stacked.ok()) << stacked.status();
  ExpectTensorEqual(AsTensor<float>({0, 0, 0, 0, 7, 8}, {3, 2}), (*stacked)[0]);
  auto before = RunKernel("TensorListGetItem",
                          {(*reserved)[0], Tensor::Scalar<int32_t>(2), Shape({2})}, kFloatList);
  ASSERT_TRUE(before.ok()) << before.status();
  ExpectTensorEqual(AsTensor<float>({0, 0}), (*before)[0]);

  auto pushed = RunKernel("TensorListPushBack", {(*set)[0], AsTensor<float>({9, 10})}, kFloatList);
  ASSERT_TRUE(pushed.ok()) << pushed.status();
  auto all = RunKernel("TensorListStack", {(*pushed)[0], Tensor::Scalar<int32_t>(-1)}, kFloatList);
  ASSERT_TRUE(all.ok()) << all.status();
  ExpectTensorEqual(AsTensor<float>({0, 0, 0, 0, 7, 8, 9, 10}, {4, 2}), (*all)[0]);
}

TEST(TensorListTest, BadIndicesShapesAndSizesAreErrors) {
  auto list = RunKernel("TensorListReserve", {Shape({2}), Tensor::Scalar<int32_t>(2)},
                        {{"element_dtype", DT_FLOAT}, {"shape_type", DT_INT32}});
  ASSERT_TRUE(list.ok()) << list.status();
  auto out_of_range = RunKernel("TensorListGetItem",
                                {(*list)[0], Tensor::Scalar<int32_t>(5), Shape({2})}, kFloatList);
  EXPECT_THAT(std::string(out_of_range.status().message()),
              HasSubstr("index 5 is out of range for a list of 2 elements"));
  auto wrong_shape =
      RunKernel("TensorListSetItem",
                {(*list)[0], Tensor::Scalar<int32_t>(0), AsTensor<float>({1, 2, 3})}, kFloatList);
  EXPECT_THAT(std::string(wrong_shape.status().message()),
              HasSubstr("an item of shape [3] does not fit the list's element shape [2]"));
  auto wrong_dtype =
      RunKernel("TensorListGetItem", {(*list)[0], Tensor::Scalar<int32_t>(0), Shape({2})},
                {{"element_dtype", DT_INT32}});
  EXPECT_THAT(std::string(wrong_dtype.status().message()),
              HasSubstr("the list holds float32 elements but the op's element_dtype is int32"));
  auto unknown =
      RunKernel("TensorListReserve", {Tensor::Scalar<int32_t>(-1), Tensor::Scalar<int32_t>(1)},
                {{"element_dtype", DT_FLOAT}, {"shape_type", DT_INT32}});
  ASSERT_TRUE(unknown.ok()) << unknown.status();
  auto unstackable =
      RunKernel("TensorListStack", {(*unknown)[0], Tensor::Scalar<int32_t>(-1)}, kFloatList);
  EXPECT_THAT(std::string(unstackable.status().message()), HasSubstr("is not known"));
  auto negative = RunKernel("TensorListReserve", {Shape({2}), Tensor::Scalar<int32_t>(-3)},
                            {{"element_dtype", DT_FLOAT}, {"shape_type", DT_INT32}});
  EXPECT_EQ(negative.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(ReverseV2Test, ReversesTheListedAxes) {
  const Tensor t = AsTensor<int32_t>({1, 2, 3, 4, 5, 6}, {2, 3});
  auto cols = RunKernel("ReverseV2", {t, AsTensor<int32_t>({1})}, {{"T", DT_INT32}});
  ASSERT_TRUE(cols.ok()) << cols.status();
  ExpectTensorEqual(AsTensor<int32_t>({3, 2, 1, 6, 5, 4}, {2, 3}), (*cols)[0]);
  auto both = RunKernel("ReverseV2", {t, AsTensor<int64_t>({0, -1})},
                        {{"T", DT_INT32}, {"Tidx", DT_INT64}});
  ASSERT_TRUE(both.ok()) << both.status();
  ExpectTensorEqual(AsTensor<int32_t>({6, 5, 4, 3, 2, 1}, {2, 3}), (*both)[0]);
  auto none = RunKernel("ReverseV2", {t, AsTensor<int32_t>({})}, {{"T", DT_INT32}});
  ASSERT_TRUE(none.ok()) << none.status();
  ExpectTensorEqual(t, (*none)[0]);
  auto bad = RunKernel("ReverseV2", {t, AsTensor<int32_t>({2})}, {{"T", DT_INT32}});
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  auto twice = RunKernel("ReverseV2", {t, AsTensor<int32_t>({1, -1})}, {{"T", DT_INT32}});
  EXPECT_THAT(std::string(twice.status().message()), HasSubstr("listed twice"));
}

}  // namespace
}  // namespace distflow
