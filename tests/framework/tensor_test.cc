#include "distflow/framework/tensor.h"

#include <cstdint>
#include <thread>
#include <vector>

#include "distflow/framework/tensor_proto.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace distflow {
namespace {

using ::testing::HasSubstr;

// Small buffers are reused from a per-thread list once freed, also when
// another thread freed them; every tensor keeps its own values, and a
// reused block never hands out a larger tensor than it can hold.
TEST(TensorTest, SmallBuffersAreReusedWithoutSharing) {
  std::vector<Tensor> live;
  for (int round = 0; round < 3; ++round) {
    for (int i = 0; i < 20000; ++i) {
      const int64_t n = 1 + i % 16;  // up to 64 bytes of float
      Tensor t(DT_FLOAT, TensorShape({n}));
      for (int64_t k = 0; k < n; ++k) t.flat<float>()[k] = static_cast<float>(i + k);
      live.push_back(std::move(t));
    }
    Tensor big(DT_FLOAT, TensorShape({1000}));  // never from the small list
    for (int k = 0; k < 1000; ++k) big.flat<float>()[k] = static_cast<float>(k);
    for (size_t i = 0; i < live.size(); ++i) {
      const int64_t n = 1 + static_cast<int64_t>(i) % 16;
      ASSERT_EQ(live[i].NumElements(), n);
      for (int64_t k = 0; k < n; ++k) {
        ASSERT_EQ(live[i].flat<float>()[k], static_cast<float>(i + k)) << i;
      }
    }
    EXPECT_EQ(big.flat<float>()[999], 999.0f);
    // Half are freed by another thread, half by this one.
    std::vector<Tensor> other(std::make_move_iterator(live.begin()),
                              std::make_move_iterator(live.begin() + live.size() / 2));
    std::thread([moved = std::move(other)]() mutable { moved.clear(); }).join();
    live.clear();
  }
}

// Freed buffers of 32 MiB and more are kept mapped for the next tensor of
// about their size; a kept buffer serves a request no larger than it holds,
// and each new tensor owns its bytes.
TEST(TensorTest, LargeBuffersAreReusedForTensorsThatFit) {
  const int64_t n = int64_t{40} << 20 >> 2;  // 40 MiB of float
  for (int round = 0; round < 3; ++round) {
    Tensor a(DT_FLOAT, TensorShape({n}));
    Tensor b(DT_FLOAT, TensorShape({n - 1000}));
    a.flat<float>()[n - 1] = 1.0f + round;
    b.flat<float>()[n - 1001] = 2.0f + round;
    EXPECT_NE(a.raw_data(), b.raw_data());
    EXPECT_EQ(a.flat<float>()[n - 1], 1.0f + round);
    EXPECT_EQ(b.flat<float>()[n - 1001], 2.0f + round);
  }
  // Larger than any kept buffer: a fresh one, written end to end.
  Tensor c(DT_FLOAT, TensorShape({2 * n}));
  c.flat<float>()[2 * n - 1] = 3.0f;
  EXPECT_EQ(c.flat<float>()[2 * n - 1], 3.0f);
}

TEST(TensorShapeTest, BasicsAndDebugString) {
  TensorShape s({2, 3, 4});
  EXPECT_EQ(s.dims(), 3);
  EXPECT_EQ(s.num_elements(), 24);
  EXPECT_EQ(s.DebugString(), "[2,3,4]");
  s.RemoveDim(1);
  EXPECT_EQ(s.DebugString(), "[2,4]");
  s.InsertDim(0, 5);
  EXPECT_EQ(s.num_elements(), 40);
  EXPECT_EQ(TensorShape().DebugString(), "[]");
  EXPECT_EQ(TensorShape().num_elements(), 1);
}

TEST(TensorShapeTest, BuildRejectsNegativeAndOverflow) {
  TensorShape s;
  absl::Status st = TensorShape::BuildTensorShape({2, -3}, &s);
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(st.message(), HasSubstr("dimension 1"));
  st = TensorShape::BuildTensorShape({int64_t{1} << 40, int64_t{1} << 40}, &s);
  EXPECT_THAT(st.message(), HasSubstr("2^63"));
}

TEST(PartialTensorShapeTest, MergeAndCompatibility) {
  PartialTensorShape a({-1, 3});
  PartialTensorShape b({2, -1});
  PartialTensorShape m;
  ASSERT_TRUE(a.MergeWith(b, &m).ok());
  EXPECT_EQ(m.DebugString(), "[2,3]");
  EXPECT_TRUE(m.IsFullyDefined());
  EXPECT_FALSE(PartialTensorShape({2}).IsCompatibleWith(PartialTensorShape({3})));
  EXPECT_TRUE(PartialTensorShape().IsCompatibleWith(PartialTensorShape({3, 4})));
  EXPECT_EQ(PartialTensorShape().DebugString(), "<unknown>");
  EXPECT_EQ(a.DebugString(), "[?,3]");
  EXPECT_FALSE(PartialTensorShape({2, 3}).MergeWith(PartialTensorShape({2}), &m).ok());
}

TEST(TensorTest, AlignedAndShared) {
  Tensor t(DT_FLOAT, TensorShape({4, 2}));
  EXPECT_EQ(reinterpret_cast<uintptr_t>(t.raw_data()) % 64, 0u);
  for (int i = 0; i < 8; ++i) t.flat<float>()[i] = static_cast<float>(i);
  Tensor copy = t;
  EXPECT_TRUE(copy.SharesBufferWith(t));
  EXPECT_FALSE(t.RefCountIsOne());
  Tensor slice = t.Slice(1, 3);
  EXPECT_EQ(slice.shape().DebugString(), "[2,2]");
  EXPECT_EQ(slice.flat<float>()[0], 2.0f);
  EXPECT_TRUE(slice.SharesBufferWith(t));
  slice.flat<float>()[0] = 42;
  EXPECT_EQ(t.flat<float>()[2], 42.0f);
  Tensor deep = t.DeepCopy();
  EXPECT_FALSE(deep.SharesBufferWith(t));
  EXPECT_EQ(deep.flat<float>()[2], 42.0f);
  Tensor reshaped;
  EXPECT_TRUE(reshaped.CopyFrom(t, TensorShape({8})));
  EXPECT_FALSE(reshaped.CopyFrom(t, TensorShape({7})));
}

TEST(TensorTest, SliceOutlivesParent) {
  Tensor slice;
  {
    Tensor t = Tensor::FromVector<int32_t>({1, 2, 3, 4});
    slice = t.Slice(2, 4);
  }
  EXPECT_EQ(slice.flat<int32_t>()[0], 3);
  EXPECT_EQ(slice.flat<int32_t>()[1], 4);
}

TEST(TensorTest, StringsAndDebugString) {
  Tensor t(DT_STRING, TensorShape({2}));
  t.flat<std::string>()[0] = "a";
  t.flat<std::string>()[1] = "bc";
  EXPECT_EQ(t.TotalBytes(), 3u);
  EXPECT_EQ(t.DeepCopy().flat<std::string>()[1], "bc");
  Tensor m = Tensor::FromVector<float>({1, 2, 3, 4}, TensorShape({2, 2}));
  EXPECT_EQ(m.DebugString(), "Tensor<type: float32 shape: [2,2] values: [[1 2][3 4]]>");
  EXPECT_EQ(Tensor::Scalar<int64_t>(7).SummarizeValue(10), "7");
}

TEST(TensorProtoTest, TensorContentRoundTrip) {
  Tensor t = Tensor::FromVector<float>({1.5f, -2, 3, 4, 5, 6}, TensorShape({2, 3}));
  TensorProto p;
  TensorToProto(t, &p);
  EXPECT_EQ(p.tensor_content().size(), 24u);
  Tensor back;
  ASSERT_TRUE(TensorFromProto(p, &back).ok());
  EXPECT_EQ(back.DebugString(), t.DebugString());
}

TEST(TensorProtoTest, TypedFieldsAndBroadcast) {
  TensorProto p;
  p.set_dtype(DT_FLOAT);
  p.mutable_tensor_shape()->add_dim()->set_size(2);
  p.mutable_tensor_shape()->add_dim()->set_size(2);
  p.add_float_val(7);
  Tensor t;
  ASSERT_TRUE(TensorFromProto(p, &t).ok());
  for (float v : t.flat<float>()) EXPECT_EQ(v, 7.0f);

  p.Clear();
  p.set_dtype(DT_INT64);
  p.mutable_tensor_shape()->add_dim()->set_size(3);
  p.add_int64_val(1);
  p.add_int64_val(2);
  ASSERT_TRUE(TensorFromProto(p, &t).ok());
  EXPECT_EQ(t.flat<int64_t>()[2], 2);  // last value repeats

  p.Clear();
  p.set_dtype(DT_INT32);
  p.mutable_tensor_shape()->add_dim()->set_size(2);
  ASSERT_TRUE(TensorFromProto(p, &t).ok());
  EXPECT_EQ(t.flat<int32_t>()[1], 0);  // no values: zeros

  p.Clear();
  p.set_dtype(DT_BOOL);
  p.add_bool_val(true);
  ASSERT_TRUE(TensorFromProto(p, &t).ok());
  EXPECT_TRUE(t.scalar<bool>());

  Tensor bf = Tensor::FromVector<bfloat16>({bfloat16(1.5f), bfloat16(-2.0f)});
  TensorToProtoField(bf, &p);
  EXPECT_EQ(p.half_val_size(), 2);
  ASSERT_TRUE(TensorFromProto(p, &t).ok());
  EXPECT_EQ(static_cast<float>(t.flat<bfloat16>()[1]), -2.0f);

  Tensor s(DT_STRING, TensorShape({1}));
  s.flat<std::string>()[0] = "hi";
  TensorToProto(s, &p);
  ASSERT_TRUE(TensorFromProto(p, &t).ok());
  EXPECT_EQ(t.flat<std::string>()[0], "hi");
}

TEST(TensorProtoTest, Errors) {
  TensorProto p;
  p.set_dtype(DT_FLOAT);
  p.mutable_tensor_shape()->add_dim()->set_size(2);
  p.set_tensor_content(std::string(7, '\0'));
  Tensor t;
  absl::Status s = TensorFromProto(p, &t);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("needs 8 bytes"));

  p.clear_tensor_content();
  for (int i = 0; i < 3; ++i) p.add_float_val(1);
  EXPECT_THAT(TensorFromProto(p, &t).message(), HasSubstr("3 values in float_val"));

  p.Clear();
  p.set_dtype(DT_COMPLEX64);
  EXPECT_THAT(TensorFromProto(p, &t).message(), HasSubstr("unsupported dtype complex64"));

  p.Clear();
  p.set_dtype(DT_FLOAT);
  p.mutable_tensor_shape()->add_dim()->set_size(-1);
  EXPECT_THAT(TensorFromProto(p, &t).message(), HasSubstr("unknown dimension"));
}

TEST(DataTypeTest, Names) {
  EXPECT_EQ(DataTypeString(DT_FLOAT), "float32");
  EXPECT_EQ(DataTypeString(DT_INT64), "int64");
  EXPECT_EQ(DataTypeString(DT_FLOAT_REF), "float32_ref");
  DataType t;
  ASSERT_TRUE(DataTypeFromString("float", &t));
  EXPECT_EQ(t, DT_FLOAT);
  ASSERT_TRUE(DataTypeFromString("DT_INT32", &t));
  EXPECT_EQ(t, DT_INT32);
  ASSERT_TRUE(DataTypeFromString("float64", &t));
  EXPECT_EQ(t, DT_DOUBLE);
  EXPECT_FALSE(DataTypeFromString("complex256", &t));
  EXPECT_EQ(BaseType(MakeRefType(DT_INT32)), DT_INT32);
}

}  // namespace
}  // namespace distflow
