#include "distflow/distributed_runtime/rpc/grpc_tensor_coding.h"
#include "distflow/framework/tensor_proto.h"
#include "distflow/worker.pb.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace distflow {
namespace {

using ::testing::HasSubstr;

std::string Flatten(const grpc::ByteBuffer& buf) {
  std::vector<grpc::Slice> slices;
  EXPECT_TRUE(buf.Dump(&slices).ok());
  std::string out;
  for (const auto& s : slices) out.append(reinterpret_cast<const char*>(s.begin()), s.size());
  return out;
}

grpc::ByteBuffer FromString(const std::string& s, size_t chunk) {
  std::vector<grpc::Slice> slices;
  for (size_t i = 0; i < s.size(); i += chunk) slices.emplace_back(s.substr(i, chunk));
  return grpc::ByteBuffer(slices.data(), slices.size());
}

TEST(TensorCodingTest, RoundTripZeroCopyEncoding) {
  Tensor t(DT_FLOAT, TensorShape({3, 1000}));
  for (int i = 0; i < 3000; ++i) t.flat<float>()[i] = i * 0.5f;
  grpc::ByteBuffer buf;
  EncodeRecvTensorResponse(t, /*is_dead=*/false, /*send_start_micros=*/1234, &buf);

  // The bytes are a regular RecvTensorResponse.
  RecvTensorResponse parsed;
  ASSERT_TRUE(parsed.ParseFromString(Flatten(buf)));
  EXPECT_EQ(parsed.send_start_micros(), 1234);
  EXPECT_EQ(parsed.tensor().tensor_content().size(), 12000u);

  // Decoding works however the bytes are split into slices.
  for (size_t chunk : {size_t{1}, size_t{7}, size_t{4096}, size_t{1} << 20}) {
    Tensor back;
    bool dead = true;
    int64_t start = 0;
    ASSERT_TRUE(
        DecodeRecvTensorResponse(FromString(Flatten(buf), chunk), &back, &dead, &start).ok());
    EXPECT_FALSE(dead);
    EXPECT_EQ(start, 1234);
    EXPECT_EQ(back.shape().DebugString(), "[3,1000]");
    EXPECT_EQ(back.flat<float>()[2999], 2999 * 0.5f);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(back.raw_data()) % 64, 0u);
  }
}

// A bool byte off the wire other than 0 or 1 reads as true; it used to be
// left as an invalid bool, undefined behaviour to read.
TEST(TensorCodingTest, BoolBytesBecomeZeroOrOne) {
  RecvTensorResponse resp;
  resp.mutable_tensor()->set_dtype(DT_BOOL);
  resp.mutable_tensor()->mutable_tensor_shape()->add_dim()->set_size(3);
  resp.mutable_tensor()->set_tensor_content(std::string("\x00\x02\xff", 3));
  Tensor t;
  bool dead = true;
  int64_t start = 0;
  ASSERT_TRUE(
      DecodeRecvTensorResponse(FromString(resp.SerializeAsString(), 2), &t, &dead, &start).ok());
  EXPECT_EQ(std::string(static_cast<const char*>(t.raw_data()), 3), std::string("\x00\x01\x01", 3));
}

TEST(TensorCodingTest, StringsEmptyAndDead) {
  Tensor s(DT_STRING, TensorShape({2}));
  s.flat<std::string>()[0] = "x";
  s.flat<std::string>()[1] = "yz";
  grpc::ByteBuffer buf;
  EncodeRecvTensorResponse(s, false, 0, &buf);
  Tensor back;
  bool dead;
  int64_t start;
  ASSERT_TRUE(DecodeRecvTensorResponse(buf, &back, &dead, &start).ok());
  EXPECT_FALSE(dead);
  EXPECT_EQ(back.flat<std::string>()[1], "yz");

  // A dead tensor has no value: only the flag travels (and whatever the
  // sender's tensor slot held is not sent), and it decodes as an empty
  // tensor. Dead tensors of any dtype, even the uninitialized one an unset
  // Switch output leaves, encode the same.
  for (const Tensor& t : {s, Tensor()}) {
    EncodeRecvTensorResponse(t, true, 0, &buf);
    EXPECT_LE(buf.Length(), 4u);
    ASSERT_TRUE(DecodeRecvTensorResponse(buf, &back, &dead, &start).ok());
    EXPECT_TRUE(dead);
    EXPECT_EQ(back.dtype(), DT_INVALID);
  }

  Tensor empty(DT_INT64, TensorShape({0, 4}));
  EncodeRecvTensorResponse(empty, false, 0, &buf);
  ASSERT_TRUE(DecodeRecvTensorResponse(buf, &back, &dead, &start).ok());
  EXPECT_EQ(back.shape().DebugString(), "[0,4]");
}

TEST(TensorCodingTest, ProtobufEncodedInputStillDecodes) {
  RecvTensorResponse resp;
  TensorToProtoField(Tensor::FromVector<int32_t>({4, 5, 6}), resp.mutable_tensor());
  grpc::ByteBuffer buf = FromString(resp.SerializeAsString(), 3);
  Tensor back;
  bool dead;
  int64_t start;
  ASSERT_TRUE(DecodeRecvTensorResponse(buf, &back, &dead, &start).ok());
  EXPECT_EQ(back.flat<int32_t>()[2], 6);
}

TEST(TensorCodingTest, GarbageAndTruncationAreDataLoss) {
  Tensor t = Tensor::FromVector<double>({1, 2, 3, 4});
  grpc::ByteBuffer buf;
  EncodeRecvTensorResponse(t, false, 0, &buf);
  const std::string good = Flatten(buf);
  Tensor back;
  bool dead;
  int64_t start;
  for (size_t cut = 1; cut < good.size(); cut += 5) {
    absl::Status s =
        DecodeRecvTensorResponse(FromString(good.substr(0, cut), 4), &back, &dead, &start);
    EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss) << cut;
    EXPECT_THAT(s.message(), HasSubstr("malformed RecvTensorResponse"));
  }
  absl::Status s =
      DecodeRecvTensorResponse(FromString("\xff\xff\xff garbage", 4), &back, &dead, &start);
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss);

  // Content length that does not match the shape.
  RecvTensorResponse resp;
  TensorToProto(t, resp.mutable_tensor());
  resp.mutable_tensor()->mutable_tensor_shape()->mutable_dim(0)->set_size(5);
  s = DecodeRecvTensorResponse(FromString(resp.SerializeAsString(), 8), &back, &dead, &start);
  EXPECT_THAT(s.message(), HasSubstr("needs 40"));
}

}  // namespace
}  // namespace distflow
