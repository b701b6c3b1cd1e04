// GatherV2, including batch_dims and index validation.
#include <string>
#include <vector>

#include "array_test_util.h"

namespace distflow {
namespace {

using test::AsTensor;
using test::ExpectInvalid;
using test::ExpectTensorEqual;
using test::RunOne;

// [[1 2] [3 4] [5 6]]
Tensor Params() { return AsTensor<float>({1, 2, 3, 4, 5, 6}, {3, 2}); }

Tensor Gather(const Tensor& params, const Tensor& indices, int32_t axis, int batch_dims = 0) {
  return RunOne("GatherV2", {params, indices, Tensor::Scalar<int32_t>(axis)},
                {{"Tparams", params.dtype()},
                 {"Tindices", indices.dtype()},
                 {"Taxis", DT_INT32},
                 {"batch_dims", batch_dims}});
}

TEST(GatherV2OpTest, Rows) {
  ExpectTensorEqual(AsTensor<float>({5, 6, 1, 2}, {2, 2}),
                    Gather(Params(), AsTensor<int32_t>({2, 0}), 0));
  ExpectTensorEqual(AsTensor<float>({3, 4}), Gather(Params(), Tensor::Scalar<int32_t>(1), 0));
  ExpectTensorEqual(AsTensor<float>({1, 2, 3, 4, 5, 6, 5, 6}, {2, 2, 2}),
                    Gather(Params(), AsTensor<int64_t>({0, 1, 2, 2}, {2, 2}), 0));
}

TEST(GatherV2OpTest, InnerAxis) {
  ExpectTensorEqual(AsTensor<float>({2, 4, 6}, {3, 1}),
                    Gather(Params(), AsTensor<int32_t>({1}), 1));
  ExpectTensorEqual(AsTensor<float>({2, 1, 4, 3, 6, 5}, {3, 2}),
                    Gather(Params(), AsTensor<int16_t>({1, 0}), -1));
  ExpectTensorEqual(AsTensor<float>({2, 4, 6}), Gather(Params(), Tensor::Scalar<int32_t>(1), 1));
}

TEST(GatherV2OpTest, StringsEmptyAndInt64Axis) {
  ExpectTensorEqual(
      AsTensor<std::string>({"c", "a", "c"}),
      Gather(AsTensor<std::string>({"a", "b", "c"}), AsTensor<int32_t>({2, 0, 2}), 0));
  ExpectTensorEqual(Tensor(DT_FLOAT, TensorShape({0, 2})),
                    Gather(Params(), Tensor(DT_INT32, TensorShape({0})), 0));
  ExpectTensorEqual(AsTensor<int64_t>({30, 10}),
                    RunOne("GatherV2",
                           {AsTensor<int64_t>({10, 20, 30}), AsTensor<int64_t>({2, 0}),
                            Tensor::Scalar<int64_t>(0)},
                           {{"Tparams", DT_INT64}, {"Tindices", DT_INT64}, {"Taxis", DT_INT64}}));
}

TEST(GatherV2OpTest, BatchDims) {
  Tensor params = AsTensor<int32_t>({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor indices = AsTensor<int32_t>({2, 0, 1, 1}, {2, 2});
  ExpectTensorEqual(AsTensor<int32_t>({3, 1, 5, 5}, {2, 2}), Gather(params, indices, 1, 1));
  ExpectTensorEqual(AsTensor<int32_t>({3, 1, 5, 5}, {2, 2}), Gather(params, indices, 1, -1));
  std::vector<int32_t> values(12);
  for (int i = 0; i < 12; ++i) values[i] = i;
  ExpectTensorEqual(
      AsTensor<int32_t>({2, 5, 6, 9}, {2, 2, 1}),
      Gather(AsTensor<int32_t>(values, {2, 2, 3}), AsTensor<int32_t>({2, 0}, {2, 1}), 2, 1));
}

TEST(GatherV2OpTest, OutOfRangeIndicesNameValueAndBound) {
  auto run = [](const Tensor& indices, const std::string& msg) {
    ExpectInvalid("GatherV2", {Params(), indices, Tensor::Scalar<int32_t>(0)},
                  {{"Tparams", DT_FLOAT}, {"Tindices", indices.dtype()}, {"Taxis", DT_INT32}}, msg);
  };
  run(AsTensor<int32_t>({0, 3}), "GatherV2 indices[1] = 3 is not in [0, 3)");
  run(AsTensor<int64_t>({-1}), "GatherV2 indices[0] = -1 is not in [0, 3)");
  run(AsTensor<int32_t>({0, 1, 7, 2}, {2, 2}), "GatherV2 indices[1,0] = 7 is not in [0, 3)");
  run(Tensor::Scalar<int32_t>(9), "GatherV2 indices[] = 9 is not in [0, 3)");
}

TEST(GatherV2OpTest, BadAxisAndBatchDims) {
  auto run = [](int32_t axis, int batch_dims, const Tensor& indices, const std::string& msg) {
    ExpectInvalid("GatherV2", {Params(), indices, Tensor::Scalar<int32_t>(axis)},
                  {{"Tparams", DT_FLOAT},
                   {"Tindices", DT_INT32},
                   {"Taxis", DT_INT32},
                   {"batch_dims", batch_dims}},
                  msg);
  };
  run(2, 0, AsTensor<int32_t>({0}),
      "GatherV2 axis 2 is out of range for a rank-2 tensor, expected [-2, 2)");
  run(0, 1, AsTensor<int32_t>({0, 0, 0}, {3, 1}),
      "batch_dims 1 must be less than or equal to axis 0");
  run(1, 2, AsTensor<int32_t>({0}), "batch_dims 2 must be in [-1, 1] for indices of shape [1]");
  run(1, 1, AsTensor<int32_t>({0, 0}, {2, 1}),
      "params and indices must agree on the 1 batch dims, but params has shape "
      "[3,2] and "
      "indices has shape [2,1]");
  ExpectInvalid("GatherV2",
                {Tensor::Scalar<float>(1), AsTensor<int32_t>({0}), Tensor::Scalar<int32_t>(0)},
                {{"Tparams", DT_FLOAT}, {"Tindices", DT_INT32}, {"Taxis", DT_INT32}},
                "GatherV2 params must be at least rank 1, got a scalar");
}

}  // namespace
}  // namespace distflow
