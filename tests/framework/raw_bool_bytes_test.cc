// Bool tensors filled from raw bytes (a TensorProto's tensor_content, a
// checkpoint's data file) hold only 0 or 1: a byte such as 2 or 255 reads as
// true, where it used to be left in a bool (undefined behaviour to read,
// which UBSan reports).
#include <cstring>
#include <filesystem>
#include <string>

#include "distflow/core/crc32c.h"
#include "distflow/core/env.h"
#include "distflow/framework/tensor.h"
#include "distflow/framework/tensor_bundle.h"
#include "distflow/framework/tensor_proto.h"
#include "gtest/gtest.h"

namespace distflow {
namespace {

// The bytes of a tensor, read as bytes (not as bools).
std::string Bytes(const Tensor& t) {
  return std::string(static_cast<const char*>(t.raw_data()), t.TotalBytes());
}

TEST(RawBoolBytesTest, TensorContentBytesBecomeZeroOrOne) {
  TensorProto proto;
  proto.set_dtype(DT_BOOL);
  proto.mutable_tensor_shape()->add_dim()->set_size(4);
  proto.set_tensor_content(std::string("\x00\x02\xff\x01", 4));
  Tensor t;
  ASSERT_TRUE(TensorFromProto(proto, &t).ok());
  EXPECT_EQ(Bytes(t), std::string("\x00\x01\x01\x01", 4));
  TensorProto fields;
  TensorToProtoField(t, &fields);
  ASSERT_EQ(fields.bool_val_size(), 4);
  EXPECT_FALSE(fields.bool_val(0));
  EXPECT_TRUE(fields.bool_val(1));
  EXPECT_TRUE(fields.bool_val(2));
}

TEST(RawBoolBytesTest, CheckpointBoolBytesBecomeZeroOrOne) {
  const std::string dir = ::testing::TempDir() + "/raw_bool_bundle";
  std::filesystem::create_directories(dir);
  const std::string prefix = dir + "/ckpt";
  {
    BundleWriter w(prefix);
    Tensor b(DT_BOOL, TensorShape({2}));
    b.flat<bool>()[0] = false;
    b.flat<bool>()[1] = true;
    ASSERT_TRUE(w.Add("b", b).ok());
    ASSERT_TRUE(w.Finish().ok());
  }
  // Rewrite the data file's true (1) as 7 and fix the entry's checksum, as
  // a crafted checkpoint would.
  const std::string data = std::string("\x00\x07", 2);
  ASSERT_TRUE(WriteStringToFileAtomic(BundleDataFilename(prefix), data).ok());
  absl::StatusOr<BundleIndex> index = ReadBundleIndex(prefix);
  ASSERT_TRUE(index.ok()) << index.status();
  index->entries["b"].set_crc32c(crc32c::Mask(crc32c::Value(data)));
  ASSERT_TRUE(WriteBundleIndex(prefix, *index).ok());

  auto reader = BundleReader::Open(prefix);
  ASSERT_TRUE(reader.ok()) << reader.status();
  absl::StatusOr<Tensor> t = (*reader)->Read("b", DT_BOOL);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(Bytes(*t), std::string("\x00\x01", 2));
}

}  // namespace
}  // namespace distflow
