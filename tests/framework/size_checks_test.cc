// Sizes that come from input (shapes, TensorProtos, checkpoint entries) are
// checked before anything is allocated: overflow is InvalidArgument or
// DataLoss, an allocation that cannot be made is ResourceExhausted.
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <limits>
#include <string>

#include "distflow/core/checked_math.h"
#include "distflow/core/crc32c.h"
#include "distflow/core/env.h"
#include "distflow/framework/tensor.h"
#include "distflow/framework/tensor_bundle.h"
#include "distflow/framework/tensor_proto.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace distflow {
namespace {

using ::testing::HasSubstr;

constexpr int64_t k2p40 = int64_t{1} << 40;
constexpr int64_t k2p62 = int64_t{1} << 62;

// Sets the per-tensor byte cap for one test and restores it after.
class ScopedMaxTensorBytes {
 public:
  explicit ScopedMaxTensorBytes(int64_t bytes) : saved_(MaxTensorBytes()) {
    SetMaxTensorBytes(bytes);
  }
  ~ScopedMaxTensorBytes() { SetMaxTensorBytes(saved_); }

 private:
  int64_t saved_;
};

TEST(CheckedMathTest, MultiplyAndAdd) {
  int64_t out;
  EXPECT_TRUE(MultiplyWithoutOverflow<int64_t>(k2p40, 1 << 20, &out));
  EXPECT_EQ(out, int64_t{1} << 60);
  EXPECT_FALSE(MultiplyWithoutOverflow<int64_t>(k2p40, k2p40, &out));
  EXPECT_FALSE(MultiplyWithoutOverflow<int64_t>(k2p62, 4, &out));
  EXPECT_TRUE(AddWithoutOverflow<int64_t>(k2p62 / 2, k2p62 / 2, &out));
  EXPECT_EQ(out, k2p62);
  EXPECT_FALSE(AddWithoutOverflow<int64_t>(k2p62, k2p62, &out));
  EXPECT_FALSE(AddWithoutOverflow<int64_t>(std::numeric_limits<int64_t>::max(), 1, &out));
  EXPECT_EQ(CheckedElementCount(std::vector<int64_t>{2, 3, 4}), 24);
  EXPECT_EQ(CheckedElementCount(std::vector<int64_t>{k2p40, k2p40}), -1);
  EXPECT_EQ(CheckedElementCount(std::vector<int64_t>{2, -1}), -1);
  EXPECT_EQ(CheckedElementCount(std::vector<int64_t>{k2p40, 0, k2p40}), 0);
  EXPECT_EQ(CheckedElementCount(std::vector<int64_t>{k2p40, k2p40, 0}), 0);
  EXPECT_EQ(CheckedElementCount(std::vector<int64_t>{k2p40, 0, -1}), -1);
}

TEST(TensorShapeSizeTest, BuildAndAddDimWithStatus) {
  TensorShape s;
  absl::Status st = TensorShape::BuildTensorShape({k2p40, k2p40}, &s);
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(st.message(), HasSubstr("more than 2^63 - 1 elements"));
  st = TensorShape::BuildTensorShape({3, -1}, &s);
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(st.message(), HasSubstr("dimension 1"));

  TensorShape t({k2p40});
  st = t.AddDimWithStatus(k2p40);
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(st.message(), HasSubstr("more than 2^63 - 1 elements"));
  EXPECT_EQ(t.dims(), 1);  // unchanged on failure
  st = t.AddDimWithStatus(-2);
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(st.message(), HasSubstr("must be >= 0"));
  ASSERT_TRUE(t.AddDimWithStatus(0).ok());
  EXPECT_EQ(t.num_elements(), 0);
  // A zero dim keeps the count at 0 however large the others are.
  ASSERT_TRUE(t.AddDimWithStatus(k2p62).ok());
  EXPECT_EQ(t.num_elements(), 0);
}

TEST(TensorShapeSizeTest, PartialShapeCountNeverWraps) {
  EXPECT_EQ(PartialTensorShape({k2p40, k2p40}).num_elements(), -1);
  EXPECT_EQ(PartialTensorShape({k2p40, k2p40, 0}).num_elements(), 0);
  EXPECT_EQ(PartialTensorShape({k2p40, -1}).num_elements(), -1);
  EXPECT_EQ(PartialTensorShape({3, 4}).num_elements(), 12);
}

TEST(TensorAllocateTest, OverflowingBytesAreResourceExhausted) {
  Tensor t;
  // 2^62 floats: the element count fits int64, the byte count does not.
  absl::Status st = Tensor::Allocate(DT_FLOAT, TensorShape({k2p62}), &t, "big");
  EXPECT_EQ(st.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(st.message(),
              HasSubstr("OOM when allocating tensor of shape [4611686018427387904] and "
                        "type float32 for node 'big'"));
  EXPECT_THAT(st.message(), HasSubstr("overflows"));
  EXPECT_FALSE(t.IsInitialized());
}

TEST(TensorAllocateTest, UncheckedOverflowingShapeNeverWraps) {
  // The unchecked constructor (for shapes the program computes) marks an
  // overflowing count as -1 instead of wrapping it to a small number.
  TensorShape s({k2p40, k2p40});
  EXPECT_EQ(s.num_elements(), -1);
  s.AddDim(0);
  EXPECT_EQ(s.num_elements(), 0);
  TensorShape t({k2p40});
  t.AddDim(k2p40);
  EXPECT_EQ(t.num_elements(), -1);
  EXPECT_EQ(t.AddDimWithStatus(1).code(), absl::StatusCode::kInvalidArgument);
  Tensor out;
  absl::Status st = Tensor::Allocate(DT_FLOAT, t, &out);
  EXPECT_EQ(st.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(st.message(), HasSubstr("element count overflows"));
}

TEST(TensorAllocateTest, HugeAllocationFailsCleanly) {
  Tensor t;
  // 2^40 doubles (8 TiB): beyond the default cap (physical memory) and any
  // allocator on a test machine.
  absl::Status st = Tensor::Allocate(DT_DOUBLE, TensorShape({k2p40}), &t);
  EXPECT_EQ(st.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(st.message(), HasSubstr("OOM when allocating tensor of shape [1099511627776]"));
  // With no cap it is the allocator that refuses.
  ScopedMaxTensorBytes no_cap(0);
  st = Tensor::Allocate(DT_DOUBLE, TensorShape({k2p40, 1 << 10}), &t);
  EXPECT_EQ(st.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(st.message(), HasSubstr("the allocator could not provide"));
}

TEST(TensorAllocateTest, CapIsEnforcedAndSettable) {
  ScopedMaxTensorBytes cap(1024);
  EXPECT_EQ(MaxTensorBytes(), 1024);
  Tensor t;
  ASSERT_TRUE(Tensor::Allocate(DT_FLOAT, TensorShape({256}), &t).ok());
  EXPECT_EQ(t.NumElements(), 256);
  absl::Status st = Tensor::Allocate(DT_FLOAT, TensorShape({257}), &t, "n");
  EXPECT_EQ(st.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(st.message(), HasSubstr("1028 bytes exceed the limit of 1024 bytes"));
  // Strings count their std::string slots.
  st = Tensor::Allocate(DT_STRING, TensorShape({1000}), &t);
  EXPECT_EQ(st.code(), absl::StatusCode::kResourceExhausted);
}

TEST(TensorAllocateTest, UnsupportedDtypeIsInvalidArgument) {
  Tensor t;
  absl::Status st = Tensor::Allocate(DT_INVALID, TensorShape({1}), &t);
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument);
}

TensorProto FloatProto(std::initializer_list<int64_t> dims) {
  TensorProto p;
  p.set_dtype(DT_FLOAT);
  for (int64_t d : dims) p.mutable_tensor_shape()->add_dim()->set_size(d);
  return p;
}

TEST(TensorProtoSizeTest, HugeShapeWithShortContentIsInvalidArgument) {
  // 2^62 floats need 2^64 bytes: wrapped, that was 0 and matched nothing.
  TensorProto p = FloatProto({k2p62});
  p.set_tensor_content("abcd");
  Tensor t;
  absl::Status st = TensorFromProto(p, &t);
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(st.message(), HasSubstr("needs more than 2^63 - 1 bytes of tensor_content, got 4"));

  p = FloatProto({k2p40});
  p.set_tensor_content("abcd");
  st = TensorFromProto(p, &t);
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(st.message(), HasSubstr("needs 4398046511104 bytes of tensor_content, got 4"));
}

TEST(TensorProtoSizeTest, ContentLengthMustMatchExactly) {
  TensorProto p = FloatProto({2});
  p.set_tensor_content(std::string(9, '\0'));
  Tensor t;
  absl::Status st = TensorFromProto(p, &t);
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(st.message(), HasSubstr("needs 8 bytes of tensor_content, got 9"));
  p.set_tensor_content(std::string(7, '\0'));
  EXPECT_EQ(TensorFromProto(p, &t).code(), absl::StatusCode::kInvalidArgument);
  p.set_tensor_content(std::string(8, '\0'));
  EXPECT_TRUE(TensorFromProto(p, &t).ok());
}

TEST(TensorProtoSizeTest, HugeShapeWithOneValueIsResourceExhausted) {
  // One float_val broadcast over 2^40 elements: a valid proto whose tensor
  // cannot be allocated.
  TensorProto p = FloatProto({k2p40});
  p.add_float_val(1.0f);
  Tensor t;
  absl::Status st = TensorFromProto(p, &t);
  EXPECT_EQ(st.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(st.message(), HasSubstr("OOM when allocating tensor of shape [1099511627776]"));

  p = FloatProto({k2p40, k2p40});
  p.add_float_val(1.0f);
  st = TensorFromProto(p, &t);
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(st.message(), HasSubstr("more than 2^63 - 1 elements"));

  p = FloatProto({-5});
  st = TensorFromProto(p, &t);
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument);
}

// Rewrites dimension 0 of entry "t" (rank 1) of a bundle, as a crafted file
// would.
void PatchFirstDim(const std::string& prefix, int64_t dim) {
  absl::StatusOr<BundleIndex> index = ReadBundleIndex(prefix);
  ASSERT_TRUE(index.ok()) << index.status();
  index->entries["t"].mutable_shape()->mutable_dim(0)->set_size(dim);
  ASSERT_TRUE(WriteBundleIndex(prefix, *index).ok());
}

TEST(TensorBundleSizeTest, EntryShapeBeyondItsBytesIsDataLoss) {
  const std::string dir = ::testing::TempDir() + "/size_checks_bundle";
  std::filesystem::create_directories(dir);
  const std::string prefix = dir + "/ckpt";
  {
    BundleWriter w(prefix);
    ASSERT_TRUE(w.Add("t", Tensor::FromVector<float>({1.5f})).ok());
    ASSERT_TRUE(w.Finish().ok());
  }
  PatchFirstDim(prefix, k2p62);
  auto reader = BundleReader::Open(prefix);
  ASSERT_TRUE(reader.ok()) << reader.status();
  absl::StatusOr<Tensor> t = (*reader)->Read("t", DT_FLOAT);
  EXPECT_EQ(t.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(t.status().message(),
              HasSubstr("has 4 bytes, which do not hold a float32 tensor of shape "
                        "[4611686018427387904]"));

  // Strings: each needs at least its 1-byte length, so 2^40 of them cannot
  // be in 5 bytes; refused before 2^40 strings are allocated.
  const std::string sprefix = dir + "/sckpt";
  {
    BundleWriter w(sprefix);
    Tensor s(DT_STRING, TensorShape({1}));
    ASSERT_TRUE(w.Add("t", s).ok());
    ASSERT_TRUE(w.Finish().ok());
  }
  PatchFirstDim(sprefix, k2p40);
  auto sreader = BundleReader::Open(sprefix);
  ASSERT_TRUE(sreader.ok()) << sreader.status();
  t = (*sreader)->Read("t", DT_STRING);
  EXPECT_EQ(t.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(t.status().message(), HasSubstr("tensor 't'"));

  // A negative dimension is rejected when the index is parsed.
  PatchFirstDim(prefix, -1);
  reader = BundleReader::Open(prefix);
  EXPECT_EQ(reader.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(reader.status().message(), HasSubstr("entry 't' has a bad shape"));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace distflow
