// Output shapes combined from several inputs can overflow even when every
// input is small (a zero dimension keeps an input empty however large its
// other dimensions are): kernels report that as an error, never build a
// shape whose element count wrapped.
#include <cstdint>
#include <limits>
#include <vector>

#include "gmock/gmock.h"
#include "kernel_test_util.h"

namespace distflow {
namespace {

using test::AsTensor;
using test::RunKernel;
using ::testing::HasSubstr;

constexpr int64_t k2p40 = int64_t{1} << 40;

void ExpectCode(const absl::StatusOr<std::vector<Tensor>>& r, absl::StatusCode code,
                const std::string& text) {
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), code) << r.status();
  EXPECT_THAT(r.status().message(), HasSubstr(text)) << r.status();
}

TEST(SizeOverflowTest, MatMulOfEmptyMatricesWithHugeOuterDims) {
  // [2^40,0] x [0,2^40] would be [2^40,2^40].
  Tensor a(DT_FLOAT, TensorShape({k2p40, 0}));
  Tensor b(DT_FLOAT, TensorShape({0, k2p40}));
  auto r = RunKernel("MatMul", {a, b}, {{"T", DT_FLOAT}});
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument) << r.status();
}

TEST(SizeOverflowTest, RangeCountBeyondInt64) {
  auto r = RunKernel(
      "Range",
      {Tensor::Scalar<int64_t>(std::numeric_limits<int64_t>::min()),
       Tensor::Scalar<int64_t>(std::numeric_limits<int64_t>::max()), Tensor::Scalar<int64_t>(1)},
      {{"Tidx", DT_INT64}});
  ExpectCode(r, absl::StatusCode::kInvalidArgument, "too many elements");
}

TEST(SizeOverflowTest, RangeTooBigToAllocate) {
  auto r = RunKernel(
      "Range",
      {Tensor::Scalar<int64_t>(0), Tensor::Scalar<int64_t>(k2p40), Tensor::Scalar<int64_t>(1)},
      {{"Tidx", DT_INT64}});
  ExpectCode(r, absl::StatusCode::kResourceExhausted,
             "OOM when allocating tensor of shape [1099511627776] and type int64");
}

TEST(SizeOverflowTest, UnsortedSegmentSumWithHugeSegmentCount) {
  // data [0, 2^40] is empty; 2^40 segments of 2^40 elements each overflow.
  Tensor data(DT_FLOAT, TensorShape({0, k2p40}));
  Tensor ids(DT_INT32, TensorShape({0}));
  auto r = RunKernel("UnsortedSegmentSum", {data, ids, Tensor::Scalar<int64_t>(k2p40)},
                     {{"T", DT_FLOAT}, {"Tindices", DT_INT32}, {"Tnumsegments", DT_INT64}});
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument) << r.status();
}

TEST(SizeOverflowTest, FillOfOverflowingDims) {
  auto r = RunKernel("Fill", {AsTensor<int64_t>({k2p40, k2p40}), Tensor::Scalar<float>(1)},
                     {{"T", DT_FLOAT}, {"index_type", DT_INT64}});
  ExpectCode(r, absl::StatusCode::kInvalidArgument, "2^63");
}

TEST(SizeOverflowTest, TileOfOverflowingMultiples) {
  auto r = RunKernel("Tile", {AsTensor<float>({1}, {1, 1}), AsTensor<int64_t>({k2p40, k2p40})},
                     {{"T", DT_FLOAT}, {"Tmultiples", DT_INT64}});
  ExpectCode(r, absl::StatusCode::kInvalidArgument, "2^63");
}

}  // namespace
}  // namespace distflow
