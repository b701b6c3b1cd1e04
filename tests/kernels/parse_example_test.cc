// ParseExample and ParseExampleV2 on serialized tf.Example records built
// here: dense features with and without defaults, variable-length dense
// features padded, sparse and ragged features, a scalar batch; and bad
// records (not an Example, a missing required feature, another list kind,
// the wrong number of values, an absurd shape), each an error naming the
// example and the feature.
#include <string>
#include <vector>

#include "distflow/example.pb.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernel_test_util.h"

namespace distflow {
namespace {

using test::AsTensor;
using test::ExpectTensorEqual;
using test::RunKernel;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// Builds one tf.Example feature by feature.
class ExampleBuilder {
 public:
  ExampleBuilder& Floats(const std::string& key, std::vector<float> v) {
    auto* list = Feature(key).mutable_float_list();
    for (float x : v) list->add_value(x);
    return *this;
  }
  ExampleBuilder& Ints(const std::string& key, std::vector<int64_t> v) {
    auto* list = Feature(key).mutable_int64_list();
    for (int64_t x : v) list->add_value(x);
    return *this;
  }
  ExampleBuilder& Bytes(const std::string& key, std::vector<std::string> v) {
    auto* list = Feature(key).mutable_bytes_list();
    for (const auto& x : v) list->add_value(x);
    return *this;
  }
  std::string Serialized() const { return example_.SerializeAsString(); }

 private:
  distflow::Feature& Feature(const std::string& key) {
    return (*example_.mutable_features()->mutable_feature())[key];
  }
  Example example_;
};

Tensor Strings(const std::vector<std::string>& v) {
  Tensor t(DT_STRING, TensorShape({static_cast<int64_t>(v.size())}));
  for (size_t i = 0; i < v.size(); ++i) t.flat<std::string>()[i] = v[i];
  return t;
}

Tensor NoDefault(DataType dtype) { return Tensor(dtype, TensorShape({0})); }

TEST(ParseExampleTest, DenseFeaturesTakeTheirValuesOrTheirDefaults) {
  const std::vector<std::string> batch = {
      ExampleBuilder()
          .Floats("x", {1.5f})
          .Ints("age", {30, 31})
          .Bytes("name", {"ann"})
          .Serialized(),
      ExampleBuilder().Floats("x", {-2}).Serialized(),
      ExampleBuilder().Floats("x", {4}).Ints("age", {5, 6}).Floats("other", {9}).Serialized()};
  auto out = RunKernel(
      "ParseExample",
      {Strings(batch), Strings({}), Tensor::Scalar<std::string>("x"),
       Tensor::Scalar<std::string>("age"), Tensor::Scalar<std::string>("name"), NoDefault(DT_FLOAT),
       AsTensor<int64_t>({7, 8}, {2}), Tensor::Scalar<std::string>("anon")},
      {{"Nsparse", 0},
       {"Ndense", 3},
       {"sparse_types", DataTypeVector{}},
       {"Tdense", DataTypeVector{DT_FLOAT, DT_INT64, DT_STRING}},
       {"dense_shapes", std::vector<PartialTensorShape>{{1}, {2}, TensorShape()}}});
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ(out->size(), 3u);
  ExpectTensorEqual(AsTensor<float>({1.5f, -2, 4}, {3, 1}), (*out)[0]);
  ExpectTensorEqual(AsTensor<int64_t>({30, 31, 7, 8, 5, 6}, {3, 2}), (*out)[1]);
  EXPECT_THAT((*out)[2].flat<std::string>(), ElementsAre("ann", "anon", "anon"));
  EXPECT_EQ((*out)[2].shape(), TensorShape({3}));
}

TEST(ParseExampleTest, SparseFeaturesListEveryValueWithItsIndex) {
  const std::vector<std::string> batch = {ExampleBuilder().Ints("ids", {4, 5}).Serialized(),
                                          ExampleBuilder().Serialized(),
                                          ExampleBuilder().Ints("ids", {1, 2, 3}).Serialized()};
  auto out =
      RunKernel("ParseExample", {Strings(batch), Strings({}), Tensor::Scalar<std::string>("ids")},
                {{"Nsparse", 1},
                 {"Ndense", 0},
                 {"sparse_types", DataTypeVector{DT_INT64}},
                 {"Tdense", DataTypeVector{}},
                 {"dense_shapes", std::vector<PartialTensorShape>{}}});
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectTensorEqual(AsTensor<int64_t>({0, 0, 0, 1, 2, 0, 2, 1, 2, 2}, {5, 2}), (*out)[0]);
  ExpectTensorEqual(AsTensor<int64_t>({4, 5, 1, 2, 3}), (*out)[1]);
  ExpectTensorEqual(AsTensor<int64_t>({3, 3}), (*out)[2]);
}

// Runs ParseExample for one float dense feature "x" of shape [1].
absl::StatusOr<std::vector<Tensor>> ParseX(const std::vector<std::string>& batch,
                                           const std::vector<std::string>& names,
                                           Tensor default_value) {
  return RunKernel(
      "ParseExample",
      {Strings(batch), Strings(names), Tensor::Scalar<std::string>("x"), std::move(default_value)},
      {{"Nsparse", 0},
       {"Ndense", 1},
       {"sparse_types", DataTypeVector{}},
       {"Tdense", DataTypeVector{DT_FLOAT}},
       {"dense_shapes", std::vector<PartialTensorShape>{{1}}}});
}

TEST(ParseExampleTest, BadRecordsAreErrorsNamingTheExampleAndFeature) {
  const std::string good = ExampleBuilder().Floats("x", {1}).Serialized();
  auto missing = ParseX({good, ExampleBuilder().Floats("y", {1}).Serialized()}, {"first", "second"},
                        NoDefault(DT_FLOAT));
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(missing.status().message()),
              HasSubstr("example 1 ('second'), feature 'x': is required"));

  auto kind = ParseX({ExampleBuilder().Ints("x", {1}).Serialized()}, {}, NoDefault(DT_FLOAT));
  EXPECT_EQ(kind.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(kind.status().message()),
              HasSubstr("example 0, feature 'x': holds int64 values but float32 was expected"));

  auto count =
      ParseX({good, ExampleBuilder().Floats("x", {1, 2}).Serialized()}, {}, NoDefault(DT_FLOAT));
  EXPECT_EQ(count.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(count.status().message()),
              HasSubstr("example 1, feature 'x': has 2 values but its shape [1] needs 1"));

  auto garbage = ParseX({good, "\xff\xff\xff not a proto"}, {}, NoDefault(DT_FLOAT));
  EXPECT_EQ(garbage.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(garbage.status().message()),
              HasSubstr("example 1 is not a serialized tf.Example"));

  auto bad_default = ParseX({good}, {}, AsTensor<float>({1, 2}));
  EXPECT_EQ(bad_default.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(bad_default.status().message()), HasSubstr("its default has shape [2]"));

  auto names = ParseX({good}, {"a", "b"}, NoDefault(DT_FLOAT));
  EXPECT_EQ(names.status().code(), absl::StatusCode::kInvalidArgument);

  // An empty feature counts as missing: the default fills in.
  Example empty_x;
  (*empty_x.mutable_features()->mutable_feature())["x"];
  auto defaulted = ParseX({empty_x.SerializeAsString()}, {}, AsTensor<float>({3}));
  ASSERT_TRUE(defaulted.ok()) << defaulted.status();
  ExpectTensorEqual(AsTensor<float>({3}, {1, 1}), (*defaulted)[0]);
}

TEST(ParseExampleTest, AbsurdDenseShapesFailWithoutAllocating) {
  const int64_t huge = int64_t{1} << 40;
  auto out = RunKernel("ParseExample",
                       {Strings({ExampleBuilder().Serialized(), ExampleBuilder().Serialized()}),
                        Strings({}), Tensor::Scalar<std::string>("x"), AsTensor<float>({0})},
                       {{"Nsparse", 0},
                        {"Ndense", 1},
                        {"sparse_types", DataTypeVector{}},
                        {"Tdense", DataTypeVector{DT_FLOAT}},
                        {"dense_shapes", std::vector<PartialTensorShape>{{-1, huge, huge}}}});
  EXPECT_FALSE(out.ok());
  EXPECT_THAT(std::string(out.status().message()), HasSubstr("dense feature 'x'"));
  auto big = RunKernel("ParseExample",
                       {Strings({ExampleBuilder().Serialized()}), Strings({}),
                        Tensor::Scalar<std::string>("x"), AsTensor<float>({0})},
                       {{"Nsparse", 0},
                        {"Ndense", 1},
                        {"sparse_types", DataTypeVector{}},
                        {"Tdense", DataTypeVector{DT_FLOAT}},
                        {"dense_shapes", std::vector<PartialTensorShape>{{huge, huge}}}});
  EXPECT_FALSE(big.ok());
}

// ParseExampleV2's attrs for the given dtypes; dense shapes as given.
std::vector<test::KernelAttr> V2Attrs(DataTypeVector sparse, DataTypeVector dense,
                                      std::vector<PartialTensorShape> shapes, DataTypeVector ragged,
                                      DataTypeVector splits) {
  return {{"num_sparse", static_cast<int64_t>(sparse.size())},
          {"sparse_types", sparse},
          {"Tdense", dense},
          {"dense_shapes", shapes},
          {"ragged_value_types", ragged},
          {"ragged_split_types", splits}};
}

TEST(ParseExampleV2Test, SparseDenseAndRaggedFromOneBatch) {
  const std::vector<std::string> batch = {
      ExampleBuilder().Floats("w", {1, 2, 3, 4}).Bytes("tags", {"a", "b"}).Serialized(),
      ExampleBuilder().Bytes("tags", {"c"}).Ints("len", {9}).Serialized()};
  auto out = RunKernel(
      "ParseExampleV2",
      {Strings(batch), Strings({}), Strings({"tags"}), Strings({"w"}), Strings({"len", "tags"}),
       Tensor::Scalar<float>(-1)},
      V2Attrs({DT_STRING}, {DT_FLOAT}, {{-1, 2}}, {DT_INT64, DT_STRING}, {DT_INT32, DT_INT64}));
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ(out->size(), 8u);
  ExpectTensorEqual(AsTensor<int64_t>({0, 0, 0, 1, 1, 0}, {3, 2}), (*out)[0]);
  EXPECT_THAT((*out)[1].flat<std::string>(), ElementsAre("a", "b", "c"));
  ExpectTensorEqual(AsTensor<int64_t>({2, 2}), (*out)[2]);
  // w: variable-length rows of 2, padded with the default -1.
  ExpectTensorEqual(AsTensor<float>({1, 2, 3, 4, -1, -1, -1, -1}, {2, 2, 2}), (*out)[3]);
  ExpectTensorEqual(AsTensor<int64_t>({9}), (*out)[4]);
  EXPECT_THAT((*out)[5].flat<std::string>(), ElementsAre("a", "b", "c"));
  ExpectTensorEqual(AsTensor<int32_t>({0, 0, 1}), (*out)[6]);
  ExpectTensorEqual(AsTensor<int64_t>({0, 2, 3}), (*out)[7]);

  auto ragged_rows =
      RunKernel("ParseExampleV2",
                {Strings({ExampleBuilder().Floats("w", {1, 2, 3}).Serialized()}), Strings({}),
                 Strings({}), Strings({"w"}), Strings({}), NoDefault(DT_FLOAT)},
                V2Attrs({}, {DT_FLOAT}, {{-1, 2}}, {}, {}));
  EXPECT_EQ(ragged_rows.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(ragged_rows.status().message()),
              HasSubstr("has 3 values, not whole rows of 2"));
}

TEST(ParseExampleV2Test, AScalarBatchHasNoBatchDimension) {
  auto out = RunKernel("ParseExampleV2",
                       {Tensor::Scalar<std::string>(
                            ExampleBuilder().Floats("x", {5}).Ints("ids", {3, 4}).Serialized()),
                        Tensor(DT_STRING, TensorShape({0})), Strings({"ids"}), Strings({"x", "y"}),
                        Strings({}), NoDefault(DT_FLOAT), AsTensor<float>({0.5f, 0.25f}, {2})},
                       V2Attrs({DT_INT64}, {DT_FLOAT, DT_FLOAT}, {TensorShape(), {2}}, {}, {}));
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectTensorEqual(AsTensor<int64_t>({0, 1}, {2, 1}), (*out)[0]);
  ExpectTensorEqual(AsTensor<int64_t>({3, 4}), (*out)[1]);
  ExpectTensorEqual(AsTensor<int64_t>({2}), (*out)[2]);
  ExpectTensorEqual(Tensor::Scalar<float>(5), (*out)[3]);
  ExpectTensorEqual(AsTensor<float>({0.5f, 0.25f}), (*out)[4]);

  auto wrong_keys = RunKernel("ParseExampleV2",
                              {Strings({}), Strings({}), Strings({}), Strings({"x", "y"}),
                               Strings({}), NoDefault(DT_FLOAT)},
                              V2Attrs({}, {DT_FLOAT}, {{1}}, {}, {}));
  EXPECT_EQ(wrong_keys.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(wrong_keys.status().message()),
              HasSubstr("dense_keys must be a vector of 1 keys"));
}

}  // namespace
}  // namespace distflow
