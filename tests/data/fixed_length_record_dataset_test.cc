// FixedLengthRecordDatasetV2 on small IDX files the test writes (plain and
// GZIP), DecodeRaw on its records, and the errors for truncated, corrupt
// and missing files.
#include <zlib.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "distflow/cc/client_session.h"
#include "distflow/cc/dataset.h"
#include "distflow/cc/ops/standard_ops.h"
#include "distflow/core/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace distflow {
namespace {

using ::testing::HasSubstr;

// An IDX image file: magic 0x00000803, count, rows, cols (big-endian), then
// one byte per pixel; pixel j of image i is i * 10 + j.
std::string IdxImages(int count, int rows, int cols) {
  std::string out;
  for (uint32_t v : {0x803u, static_cast<uint32_t>(count), static_cast<uint32_t>(rows),
                     static_cast<uint32_t>(cols)}) {
    for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<char>(v >> shift));
  }
  for (int i = 0; i < count; ++i) {
    for (int j = 0; j < rows * cols; ++j) out.push_back(static_cast<char>(i * 10 + j));
  }
  return out;
}

class RecordFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("distflow_records_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string WritePlain(const std::string& name, const std::string& bytes) {
    const std::string path = (dir_ / name).string();
    std::ofstream(path, std::ios::binary) << bytes;
    return path;
  }
  std::string WriteGzip(const std::string& name, const std::string& bytes) {
    const std::string path = (dir_ / name).string();
    gzFile f = gzopen(path.c_str(), "wb");
    EXPECT_NE(f, nullptr);
    EXPECT_EQ(gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size())),
              static_cast<int>(bytes.size()));
    gzclose(f);
    return path;
  }
  std::string ReadFile(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }

  // Every record of `files` decoded as uint8 vectors, or the first error.
  absl::Status ReadRecords(const std::vector<std::string>& files, int64_t header, int64_t record,
                           int64_t footer, const std::string& compression,
                           std::vector<std::vector<int>>* out) {
    Scope root = Scope::NewRootScope();
    DatasetIterator it = Dataset::FixedLengthRecords(root.WithOpName("records"), files, header,
                                                     record, footer, compression)
                             .MakeIterator();
    auto decoded = ops::DecodeRaw(root, it.next[0], DT_UINT8);
    if (!root.ok()) return root.status();
    ClientSession session(root);
    DF_RETURN_IF_ERROR(session.Run({}, {}, {it.initializer}, nullptr));
    for (;;) {
      std::vector<Tensor> t;
      absl::Status s = session.Run({decoded}, &t);
      if (s.code() == absl::StatusCode::kOutOfRange) return absl::OkStatus();
      DF_RETURN_IF_ERROR(s);
      std::vector<int> row;
      for (uint8_t b : t[0].flat<uint8_t>()) row.push_back(b);
      out->push_back(row);
    }
  }

  std::filesystem::path dir_;
};

TEST_F(RecordFileTest, ReadsTheRecordsOfAGzippedIdxFile) {
  const std::string path = WriteGzip("images.gz", IdxImages(3, 2, 2));
  std::vector<std::vector<int>> records;
  ASSERT_TRUE(ReadRecords({path}, 16, 4, 0, "GZIP", &records).ok());
  ASSERT_EQ(records.size(), 3u);
  EXPECT_EQ(records[0], (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(records[2], (std::vector<int>{20, 21, 22, 23}));
}

TEST_F(RecordFileTest, SkipsHeaderAndFooterAcrossFiles) {
  // header "HH", records of 3 bytes, footer "F"; two files in a row.
  const std::string a = WritePlain("a",
                                   "HH\x01\x02\x03\x04\x05\x06"
                                   "F");
  const std::string b = WriteGzip("b",
                                  "HH\x07\x08\x09"
                                  "F");
  std::vector<std::vector<int>> plain;
  ASSERT_TRUE(ReadRecords({a}, 2, 3, 1, "", &plain).ok());
  EXPECT_EQ(plain, (std::vector<std::vector<int>>{{1, 2, 3}, {4, 5, 6}}));
  std::vector<std::vector<int>> both;
  ASSERT_TRUE(ReadRecords({a, a}, 2, 3, 1, "", &both).ok());
  EXPECT_EQ(both.size(), 4u);
  std::vector<std::vector<int>> gz;
  ASSERT_TRUE(ReadRecords({b}, 2, 3, 1, "GZIP", &gz).ok());
  EXPECT_EQ(gz, (std::vector<std::vector<int>>{{7, 8, 9}}));
}

TEST_F(RecordFileTest, ATruncatedFileIsDataLossNamingTheFile) {
  std::string bytes = IdxImages(3, 2, 2);
  bytes.pop_back();  // the last image loses a pixel
  const std::string plain = WritePlain("short", bytes);
  std::vector<std::vector<int>> records;
  absl::Status s = ReadRecords({plain}, 16, 4, 0, "", &records);
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(s.message(), HasSubstr(plain));
  EXPECT_THAT(s.message(), HasSubstr("truncated"));

  // A gzip stream cut in half.
  const std::string gz = WriteGzip("full.gz", IdxImages(50, 4, 4));
  const std::string compressed = ReadFile(gz);
  const std::string cut = WritePlain("cut.gz", compressed.substr(0, compressed.size() / 2));
  records.clear();
  s = ReadRecords({cut}, 16, 16, 0, "GZIP", &records);
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(s.message(), HasSubstr(cut));
}

TEST_F(RecordFileTest, CorruptGzipDataIsDataLoss) {
  const std::string gz = WriteGzip("ok.gz", IdxImages(50, 4, 4));
  std::string bytes = ReadFile(gz);
  for (size_t i = 20; i < 60 && i < bytes.size(); ++i) bytes[i] = static_cast<char>(~bytes[i]);
  const std::string bad = WritePlain("bad.gz", bytes);
  std::vector<std::vector<int>> records;
  absl::Status s = ReadRecords({bad}, 16, 16, 0, "GZIP", &records);
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(s.message(), HasSubstr(bad));
  // A plain file read as GZIP.
  const std::string plain = WritePlain("plain", IdxImages(2, 2, 2));
  s = ReadRecords({plain}, 16, 4, 0, "GZIP", &records);
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(s.message(), HasSubstr("not GZIP"));
}

TEST_F(RecordFileTest, BadArgumentsAndMissingFiles) {
  std::vector<std::vector<int>> records;
  absl::Status s = ReadRecords({(dir_ / "nope").string()}, 0, 4, 0, "", &records);
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(s.message(), HasSubstr("nope"));
  const std::string path = WritePlain("x", "abcd");
  s = ReadRecords({path}, 0, 0, 0, "", &records);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("record_bytes"));
  s = ReadRecords({path}, 0, 4, 0, "ZLIB", &records);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("ZLIB"));
  s = ReadRecords({path}, 10, 4, 0, "", &records);
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(s.message(), HasSubstr("header"));
  s = ReadRecords({path}, 0, int64_t{1} << 62, int64_t{1} << 62, "", &records);
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted);
}

TEST(DecodeRawTest, DecodesLittleAndBigEndianNumbers) {
  Scope root = Scope::NewRootScope();
  Tensor bytes(DT_STRING, TensorShape({2}));
  bytes.flat<std::string>()[0] = std::string("\x01\x00\x02\x00", 4);
  bytes.flat<std::string>()[1] = std::string("\x00\x03\x00\x04", 4);
  auto in = ops::Const(root, bytes);
  auto little = ops::DecodeRaw(root, in, DT_INT16);
  auto big = ops::DecodeRaw(root, in, DT_INT16, /*little_endian=*/false);
  auto as_bool = ops::DecodeRaw(root, in, DT_BOOL);
  ClientSession session(root);
  std::vector<Tensor> out;
  ASSERT_TRUE(session.Run({little, big, as_bool}, &out).ok());
  EXPECT_EQ(out[0].DebugString(), "Tensor<type: int16 shape: [2,2] values: [[1 2][768 1024]]>");
  EXPECT_EQ(out[1].DebugString(), "Tensor<type: int16 shape: [2,2] values: [[256 512][3 4]]>");
  EXPECT_EQ(out[2].shape(), TensorShape({2, 4}));
  EXPECT_TRUE(out[2].flat<bool>()[0]);
  EXPECT_FALSE(out[2].flat<bool>()[1]);
}

TEST(DecodeRawTest, RaggedOrMisalignedStringsAreErrors) {
  Scope root = Scope::NewRootScope();
  Tensor ragged(DT_STRING, TensorShape({2}));
  ragged.flat<std::string>()[0] = "abcd";
  ragged.flat<std::string>()[1] = "ab";
  auto a = ops::DecodeRaw(root.WithOpName("ragged"), ops::Const(root, ragged), DT_UINT8);
  auto b = ops::DecodeRaw(root.WithOpName("odd"), ops::Const(root, std::string("abc")), DT_INT16);
  ClientSession session(root);
  std::vector<Tensor> out;
  absl::Status s = session.Run({a}, &out);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("ragged"));
  s = session.Run({b}, &out);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("multiple"));
}

}  // namespace
}  // namespace distflow
