// The array ops TensorFlow's feature columns use, with real values:
// Bucketize (TensorFlow's documented example), Where, GatherNd and
// SparseToDense, and their errors for bad indices and shapes.
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

TEST(BucketizeTest, CountsTheBoundariesAtOrBelowEachValue) {
  auto out = RunKernel("Bucketize", {AsTensor<int32_t>({-5, 10000, 150, 10, 5, 100}, {2, 3})},
                       {{"T", DT_INT32}, {"boundaries", std::vector<float>{0, 10, 100}}});
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectTensorEqual(AsTensor<int32_t>({0, 3, 3, 2, 1, 3}, {2, 3}), (*out)[0]);
  auto floats = RunKernel("Bucketize", {AsTensor<double>({27.9, 28, 76, 80})},
                          {{"T", DT_DOUBLE}, {"boundaries", std::vector<float>{28, 29, 76}}});
  ASSERT_TRUE(floats.ok()) << floats.status();
  ExpectTensorEqual(AsTensor<int32_t>({0, 1, 3, 3}), (*floats)[0]);
  auto unsorted = RunKernel("Bucketize", {AsTensor<float>({1})},
                            {{"T", DT_FLOAT}, {"boundaries", std::vector<float>{2, 1}}});
  EXPECT_THAT(std::string(unsorted.status().message()), HasSubstr("must be sorted"));
}

TEST(WhereTest, ListsTheCoordinatesOfTrueElements) {
  Tensor mask(DT_BOOL, TensorShape({2, 3}));
  const bool v[] = {false, true, false, true, false, true};
  for (int i = 0; i < 6; ++i) mask.flat<bool>()[i] = v[i];
  auto out = RunKernel("Where", {mask});
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectTensorEqual(AsTensor<int64_t>({0, 1, 1, 0, 1, 2}, {3, 2}), (*out)[0]);
  auto numbers = RunKernel("Where", {AsTensor<float>({0, 2.5f, 0, -1})}, {{"T", DT_FLOAT}});
  ASSERT_TRUE(numbers.ok()) << numbers.status();
  ExpectTensorEqual(AsTensor<int64_t>({1, 3}, {2, 1}), (*numbers)[0]);
}

TEST(GatherNdTest, GathersElementsAndSlices) {
  const Tensor params = AsTensor<int32_t>({1, 2, 3, 4, 5, 6}, {3, 2});
  auto elements = RunKernel("GatherNd", {params, AsTensor<int64_t>({2, 1, 0, 0}, {2, 2})},
                            {{"Tparams", DT_INT32}, {"Tindices", DT_INT64}});
  ASSERT_TRUE(elements.ok()) << elements.status();
  ExpectTensorEqual(AsTensor<int32_t>({6, 1}), (*elements)[0]);
  auto rows = RunKernel("GatherNd", {params, AsTensor<int32_t>({2, 0}, {2, 1})},
                        {{"Tparams", DT_INT32}, {"Tindices", DT_INT32}});
  ASSERT_TRUE(rows.ok()) << rows.status();
  ExpectTensorEqual(AsTensor<int32_t>({5, 6, 1, 2}, {2, 2}), (*rows)[0]);
  Tensor words(DT_STRING, TensorShape({2, 1}));
  words.flat<std::string>()[0] = "ATA";
  words.flat<std::string>()[1] = "TA";
  auto strings = RunKernel("GatherNd", {words, AsTensor<int64_t>({1, 0}, {1, 2})},
                           {{"Tparams", DT_STRING}, {"Tindices", DT_INT64}});
  ASSERT_TRUE(strings.ok()) << strings.status();
  EXPECT_EQ((*strings)[0].flat<std::string>()[0], "TA");
  auto bad = RunKernel("GatherNd", {params, AsTensor<int64_t>({3, 0}, {1, 2})},
                       {{"Tparams", DT_INT32}, {"Tindices", DT_INT64}});
  EXPECT_THAT(
      std::string(bad.status().message()),
      HasSubstr("GatherNd index [3, 0] (tuple 0) does not index into params of shape [3,2]"));
}

TEST(SparseToDenseTest, PlacesValuesOverTheDefault) {
  auto out = RunKernel("SparseToDense",
                       {AsTensor<int64_t>({0, 1, 2, 0}, {2, 2}), AsTensor<int64_t>({3, 2}),
                        AsTensor<int64_t>({7, 9}), Tensor::Scalar<int64_t>(-1)},
                       {{"T", DT_INT64}, {"Tindices", DT_INT64}});
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectTensorEqual(AsTensor<int64_t>({-1, 7, -1, -1, 9, -1}, {3, 2}), (*out)[0]);
  auto scalar_value = RunKernel("SparseToDense",
                                {AsTensor<int32_t>({1, 3}), AsTensor<int32_t>({4}),
                                 Tensor::Scalar<float>(1), Tensor::Scalar<float>(0)},
                                {{"T", DT_FLOAT}, {"Tindices", DT_INT32}});
  ASSERT_TRUE(scalar_value.ok()) << scalar_value.status();
  ExpectTensorEqual(AsTensor<float>({0, 1, 0, 1}), (*scalar_value)[0]);
  auto outside = RunKernel("SparseToDense",
                           {AsTensor<int32_t>({5}), AsTensor<int32_t>({4}),
                            Tensor::Scalar<float>(1), Tensor::Scalar<float>(0)},
                           {{"T", DT_FLOAT}, {"Tindices", DT_INT32}});
  EXPECT_THAT(std::string(outside.status().message()), HasSubstr("out of bounds of [4]"));
  auto unsorted = RunKernel("SparseToDense",
                            {AsTensor<int32_t>({3, 1}), AsTensor<int32_t>({4}),
                             Tensor::Scalar<float>(1), Tensor::Scalar<float>(0)},
                            {{"T", DT_FLOAT}, {"Tindices", DT_INT32}});
  EXPECT_THAT(std::string(unsorted.status().message()), HasSubstr("is out of order"));
}

}  // namespace
}  // namespace distflow
