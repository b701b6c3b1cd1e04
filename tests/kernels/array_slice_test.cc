// Slice and StridedSlice.
#include <string>
#include <vector>

#include "array_test_util.h"

namespace distflow {
namespace {

using test::AsTensor;
using test::ExpectInvalid;
using test::ExpectTensorEqual;
using test::KernelAttr;
using test::RunOne;

// [[0 1 2 3] [4 5 6 7] [8 9 10 11]]
Tensor Grid() { return AsTensor<int32_t>({0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, {3, 4}); }

Tensor Slice(const Tensor& in, std::vector<int32_t> begin, std::vector<int32_t> size) {
  return RunOne("Slice", {in, AsTensor<int32_t>(begin), AsTensor<int32_t>(size)},
                {{"T", in.dtype()}, {"Index", DT_INT32}});
}

TEST(SliceOpTest, Boxes) {
  ExpectTensorEqual(AsTensor<int32_t>({5, 6, 9, 10}, {2, 2}), Slice(Grid(), {1, 1}, {2, 2}));
  ExpectTensorEqual(AsTensor<int32_t>({2, 3, 6, 7, 10, 11}, {3, 2}), Slice(Grid(), {0, 2}, {3, 2}));
  ExpectTensorEqual(AsTensor<int32_t>({6}, {1, 1}), Slice(Grid(), {1, 2}, {1, 1}));
  ExpectTensorEqual(AsTensor<int32_t>({6, 7}, {1, 2}), Slice(Grid(), {1, 2}, {1, -1}));
}

TEST(SliceOpTest, AlignedContiguousBoxSharesBuffer) {
  // Rows of 16 int32 are 64 bytes, so whole rows start aligned.
  Tensor in = test::Iota32({3, 16});
  Tensor out = Slice(in, {1, 0}, {-1, -1});
  ExpectTensorEqual(test::Iota32({2, 16}, 16), out);
  EXPECT_TRUE(out.SharesBufferWith(in));
  Tensor part = Slice(in, {1, 1}, {1, 2});
  ExpectTensorEqual(AsTensor<int32_t>({17, 18}, {1, 2}), part);
  EXPECT_FALSE(part.SharesBufferWith(in));
  Tensor unaligned = Slice(Grid(), {1, 0}, {-1, -1});
  ExpectTensorEqual(AsTensor<int32_t>({4, 5, 6, 7, 8, 9, 10, 11}, {2, 4}), unaligned);
}

TEST(SliceOpTest, StringsScalarsEmptyAndInt64) {
  ExpectTensorEqual(AsTensor<std::string>({"b", "c"}),
                    Slice(AsTensor<std::string>({"a", "b", "c", "d"}), {1}, {2}));
  ExpectTensorEqual(Tensor::Scalar<float>(4), Slice(Tensor::Scalar<float>(4), {}, {}));
  ExpectTensorEqual(Tensor(DT_INT32, TensorShape({0, 2})), Slice(Grid(), {3, 1}, {0, 2}));
  ExpectTensorEqual(
      AsTensor<double>({2, 3}),
      RunOne("Slice",
             {AsTensor<double>({1, 2, 3}), AsTensor<int64_t>({1}), AsTensor<int64_t>({-1})},
             {{"T", DT_DOUBLE}, {"Index", DT_INT64}}));
}

TEST(SliceOpTest, Errors) {
  auto run = [](std::vector<int32_t> begin, std::vector<int32_t> size, const std::string& msg) {
    ExpectInvalid("Slice", {Grid(), AsTensor<int32_t>(begin), AsTensor<int32_t>(size)},
                  {{"T", DT_INT32}, {"Index", DT_INT32}}, msg);
  };
  run({0, 3}, {1, 2}, "Expected size[1] in [0, 1] or -1, but got 2");
  run({-1, 0}, {1, 1}, "Expected begin[0] in [0, 3], but got -1");
  run({4, 0}, {0, 1}, "Expected begin[0] in [0, 3], but got 4");
  run({0, 0}, {-2, 1}, "Expected size[0] in [0, 3] or -1, but got -2");
  run({0}, {1}, "need one entry per input dimension, but the input has shape [3,4]");
  run({0, 0}, {1}, "Slice begin [0,0] and size [1] must have the same length");
}

struct Masks {
  int begin = 0, end = 0, ellipsis = 0, new_axis = 0, shrink = 0;
};

std::vector<KernelAttr> SliceAttrs(DataType dtype, const Masks& m) {
  return {{"T", dtype},
          {"Index", DT_INT32},
          {"begin_mask", m.begin},
          {"end_mask", m.end},
          {"ellipsis_mask", m.ellipsis},
          {"new_axis_mask", m.new_axis},
          {"shrink_axis_mask", m.shrink}};
}

Tensor StridedSlice(const Tensor& in, std::vector<int32_t> begin, std::vector<int32_t> end,
                    std::vector<int32_t> strides, Masks m = {}) {
  return RunOne("StridedSlice",
                {in, AsTensor<int32_t>(begin), AsTensor<int32_t>(end), AsTensor<int32_t>(strides)},
                SliceAttrs(in.dtype(), m));
}

TEST(StridedSliceOpTest, RangesWithSteps) {
  // x[1:3, ::2]
  ExpectTensorEqual(AsTensor<int32_t>({4, 6, 8, 10}, {2, 2}),
                    StridedSlice(Grid(), {1, 0}, {3, 0}, {1, 2}, {.begin = 2, .end = 2}));
  // x[1:100] clamps; x[-2:] counts from the end.
  ExpectTensorEqual(AsTensor<int32_t>({4, 5, 6, 7, 8, 9, 10, 11}, {2, 4}),
                    StridedSlice(Grid(), {1}, {100}, {1}));
  ExpectTensorEqual(AsTensor<int32_t>({4, 5, 6, 7, 8, 9, 10, 11}, {2, 4}),
                    StridedSlice(Grid(), {-2}, {0}, {1}, {.end = 1}));
  // x[2:1] and x[1:3:-1] are empty.
  ExpectTensorEqual(Tensor(DT_INT32, TensorShape({0, 4})), StridedSlice(Grid(), {2}, {1}, {1}));
  ExpectTensorEqual(Tensor(DT_INT32, TensorShape({0, 4})), StridedSlice(Grid(), {1}, {3}, {-1}));
}

TEST(StridedSliceOpTest, NegativeStrides) {
  // x[::-1]
  ExpectTensorEqual(AsTensor<int32_t>({8, 9, 10, 11, 4, 5, 6, 7, 0, 1, 2, 3}, {3, 4}),
                    StridedSlice(Grid(), {0}, {0}, {-1}, {.begin = 1, .end = 1}));
  // x[:, ::-1]
  ExpectTensorEqual(AsTensor<int32_t>({3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8}, {3, 4}),
                    StridedSlice(Grid(), {0, 0}, {0, 0}, {1, -1}, {.begin = 3, .end = 3}));
  // x[3:0:-2] clamps the begin to the last row and stops before row 0.
  ExpectTensorEqual(AsTensor<int32_t>({8, 9, 10, 11}, {1, 4}),
                    StridedSlice(Grid(), {3}, {0}, {-2}));
  Tensor v = AsTensor<float>({0, 1, 2, 3, 4});
  ExpectTensorEqual(AsTensor<float>({4, 2, 0}),
                    StridedSlice(v, {0}, {0}, {-2}, {.begin = 1, .end = 1}));
  ExpectTensorEqual(AsTensor<float>({4, 3, 2, 1, 0}), StridedSlice(v, {4}, {-100}, {-1}));
  ExpectTensorEqual(AsTensor<float>({0, 1, 2, 3, 4}), StridedSlice(v, {-100}, {100}, {1}));
}

TEST(StridedSliceOpTest, ShrinkAxes) {
  ExpectTensorEqual(AsTensor<int32_t>({4, 5, 6, 7}),
                    StridedSlice(Grid(), {1}, {2}, {1}, {.shrink = 1}));
  // x[1] of 64-byte rows shares the row.
  Tensor in = test::Iota32({3, 16});
  Tensor row = StridedSlice(in, {1}, {2}, {1}, {.shrink = 1});
  ExpectTensorEqual(test::Iota32({16}, 16), row);
  EXPECT_TRUE(row.SharesBufferWith(in));
  // x[-1, -1]
  ExpectTensorEqual(Tensor::Scalar<int32_t>(11),
                    StridedSlice(Grid(), {-1, -1}, {0, 0}, {1, 1}, {.shrink = 3}));
  // x[2:0:-1, -1]
  ExpectTensorEqual(AsTensor<int32_t>({11, 7}),
                    StridedSlice(Grid(), {2, -1}, {0, 0}, {-1, 1}, {.shrink = 2}));
}

TEST(StridedSliceOpTest, EllipsisAndNewAxes) {
  // x[..., 1]
  ExpectTensorEqual(AsTensor<int32_t>({1, 5, 9}),
                    StridedSlice(Grid(), {0, 1}, {0, 2}, {1, 1}, {.ellipsis = 1, .shrink = 2}));
  // x[newaxis, 1:2]
  ExpectTensorEqual(AsTensor<int32_t>({4, 5, 6, 7}, {1, 1, 4}),
                    StridedSlice(Grid(), {0, 1}, {0, 2}, {1, 1}, {.new_axis = 1}));
  // x[:, newaxis]
  ExpectTensorEqual(
      AsTensor<int32_t>({0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, {3, 1, 4}),
      StridedSlice(Grid(), {0, 0}, {0, 0}, {1, 1}, {.begin = 1, .end = 1, .new_axis = 2}));
  // y[0, ..., 1] on a [2,3,4] tensor of 0..23.
  std::vector<int32_t> values(24);
  for (int i = 0; i < 24; ++i) values[i] = i;
  ExpectTensorEqual(AsTensor<int32_t>({1, 5, 9}),
                    StridedSlice(AsTensor<int32_t>(values, {2, 3, 4}), {0, 0, 1}, {1, 0, 2},
                                 {1, 1, 1}, {.ellipsis = 2, .shrink = 5}));
  // s[...] of a scalar is the scalar.
  ExpectTensorEqual(Tensor::Scalar<float>(3),
                    StridedSlice(Tensor::Scalar<float>(3), {0}, {0}, {1}, {.ellipsis = 1}));
}

TEST(StridedSliceOpTest, StringsAndInt64Indices) {
  ExpectTensorEqual(AsTensor<std::string>({"b", "c", "e", "f"}, {2, 2}),
                    StridedSlice(AsTensor<std::string>({"a", "b", "c", "d", "e", "f"}, {2, 3}),
                                 {0, 1}, {0, 3}, {1, 1}, {.begin = 1, .end = 1}));
  ExpectTensorEqual(AsTensor<std::string>({"f", "d"}, {1, 2}),
                    StridedSlice(AsTensor<std::string>({"a", "b", "c", "d", "e", "f"}, {2, 3}),
                                 {1, 2}, {2, 0}, {1, -2}, {.end = 2}));
  ExpectTensorEqual(AsTensor<int32_t>({9, 10}),
                    RunOne("StridedSlice",
                           {Grid(), AsTensor<int64_t>({2, 1}), AsTensor<int64_t>({3, 3}),
                            AsTensor<int64_t>({1, 1})},
                           {{"T", DT_INT32}, {"Index", DT_INT64}, {"shrink_axis_mask", 1}}));
}

TEST(StridedSliceOpTest, Errors) {
  auto run = [](std::vector<int32_t> b, std::vector<int32_t> e, std::vector<int32_t> s, Masks m,
                const std::string& msg) {
    ExpectInvalid("StridedSlice",
                  {Grid(), AsTensor<int32_t>(b), AsTensor<int32_t>(e), AsTensor<int32_t>(s)},
                  SliceAttrs(DT_INT32, m), msg);
  };
  run({0}, {1}, {0}, {}, "StridedSlice strides[0] must be non-zero");
  run({5}, {6}, {1}, {.shrink = 1},
      "StridedSlice index 5 of dimension 0 is out of bounds for shape [3,4]");
  run({-4}, {0}, {1}, {.shrink = 1}, "StridedSlice index -4 of dimension 0 is out of bounds");
  run({0, 0, 0}, {1, 1, 1}, {1, 1, 1}, {},
      "StridedSlice index 2 needs input dimension 2, but the input has shape "
      "[3,4]");
  run({0, 0}, {1, 1}, {1, 1}, {.ellipsis = 3},
      "StridedSlice allows at most one ellipsis, but ellipsis_mask is 3");
  run({0}, {1, 1}, {1}, {},
      "StridedSlice begin, end and strides must have the same length, got 1, 2 "
      "and 1");
  run({1}, {0}, {-1}, {.shrink = 1}, "shrinks an axis, which needs a positive stride, got -1");
}

}  // namespace
}  // namespace distflow
