// TensorBoard event files: TFRecord framing with TensorFlow's masked
// CRC-32C, scalars written and read back, and damaged files refused with
// the file and offset named.
#include "distflow/monitoring/event_file.h"

#include <filesystem>
#include <fstream>
#include <string>

#include "distflow/core/crc32c.h"
#include "distflow/core/env.h"
#include "distflow/monitoring/record_io.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace distflow {
namespace {

using ::testing::HasSubstr;

std::string TempDir(const std::string& name) {
  const std::string dir = ::testing::TempDir() + "/event_file_" + name;
  std::filesystem::remove_all(dir);
  return dir;
}

TEST(RecordIoTest, MaskIsTensorFlowsAndRoundTrips) {
  EXPECT_EQ(crc32c::Mask(0), 0xa282ead8u);
  // TensorFlow's masked CRC of "123456789" (crc 0xe3069283 rotated right by
  // 15 bits, plus the delta).
  EXPECT_EQ(crc32c::Mask(0xe3069283u), ((0xe3069283u >> 15) | (0xe3069283u << 17)) + 0xa282ead8u);
  for (uint32_t c : {0u, 1u, 0xe3069283u, 0xffffffffu, 0x80000000u}) {
    EXPECT_EQ(crc32c::Unmask(crc32c::Mask(c)), c);
  }
}

TEST(RecordIoTest, FramingIsLengthCrcDataCrc) {
  std::string framed;
  AppendRecord("abc", &framed);
  ASSERT_EQ(framed.size(), 8u + 4u + 3u + 4u);
  EXPECT_EQ(framed.substr(0, 8), std::string("\x03\0\0\0\0\0\0\0", 8));
  EXPECT_EQ(framed.substr(12, 3), "abc");
  const uint32_t data_crc = static_cast<unsigned char>(framed[15]) |
                            static_cast<unsigned char>(framed[16]) << 8 |
                            static_cast<unsigned char>(framed[17]) << 16 |
                            static_cast<uint32_t>(static_cast<unsigned char>(framed[18])) << 24;
  EXPECT_EQ(data_crc, crc32c::Mask(crc32c::Value("abc")));
  AppendRecord("", &framed);
  auto records = ParseRecords(framed, "mem");
  ASSERT_TRUE(records.ok()) << records.status();
  EXPECT_THAT(*records, ::testing::ElementsAre("abc", ""));
}

TEST(RecordIoTest, DamageIsDataLossNamingTheOffset) {
  std::string framed;
  AppendRecord("first", &framed);
  const size_t second = framed.size();
  AppendRecord("second record", &framed);

  std::string flipped = framed;
  flipped[second + 14] ^= 0x40;  // a data byte of the second record
  auto r = ParseRecords(flipped, "f");
  EXPECT_EQ(r.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(r.status().message(), HasSubstr(absl::StrCat("f: record at byte ", second)));
  EXPECT_THAT(r.status().message(), HasSubstr("corrupt data"));

  std::string bad_length = framed;
  bad_length[second] ^= 0x01;
  r = ParseRecords(bad_length, "f");
  EXPECT_EQ(r.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(r.status().message(), HasSubstr("corrupt length"));

  for (size_t cut : {second + 3, second + 12, framed.size() - 1}) {
    r = ParseRecords(absl::string_view(framed).substr(0, cut), "f");
    EXPECT_EQ(r.status().code(), absl::StatusCode::kDataLoss) << cut;
    EXPECT_THAT(r.status().message(), HasSubstr("cut short")) << cut;
  }
}

TEST(RecordIoTest, AbsurdLengthIsRefusedBeforeAllocating) {
  // A well-checksummed header claiming 2^62 bytes.
  std::string header(8, '\0');
  header[7] = 0x40;
  const uint32_t crc = crc32c::Mask(crc32c::Value(header));
  for (int i = 0; i < 4; ++i) header.push_back(static_cast<char>((crc >> (8 * i)) & 0xff));
  auto r = ParseRecords(header, "huge");
  EXPECT_EQ(r.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(r.status().message(), HasSubstr("over the limit"));
}

TEST(EventFileTest, ScalarsReadBackAtTheirSteps) {
  const std::string dir = TempDir("scalars");
  std::string path;
  {
    auto writer = EventFileWriter::Open(dir + "/run");
    ASSERT_TRUE(writer.ok()) << writer.status();
    path = (*writer)->path();
    ASSERT_TRUE((*writer)->WriteScalars(10, {{"loss", 2.5}, {"accuracy", 0.25}}).ok());
    ASSERT_TRUE((*writer)->WriteScalars(20, {{"loss", 1.25}}).ok());
  }
  EXPECT_THAT(path, HasSubstr("/run/events.out.tfevents."));
  auto files = ListEventFiles(dir + "/run");
  ASSERT_TRUE(files.ok()) << files.status();
  EXPECT_THAT(*files, ::testing::ElementsAre(path));

  auto events = ReadEventFile(path);
  ASSERT_TRUE(events.ok()) << events.status();
  ASSERT_EQ(events->size(), 3u);
  EXPECT_EQ((*events)[0].file_version(), kEventFileVersion);
  EXPECT_GT((*events)[0].wall_time(), 1.6e9);
  EXPECT_EQ((*events)[1].step(), 10);
  ASSERT_EQ((*events)[1].summary().value_size(), 2);
  EXPECT_EQ((*events)[1].summary().value(0).tag(), "loss");
  EXPECT_EQ((*events)[1].summary().value(0).simple_value(), 2.5f);
  EXPECT_EQ((*events)[1].summary().value(1).tag(), "accuracy");
  EXPECT_EQ((*events)[1].summary().value(1).simple_value(), 0.25f);
  EXPECT_EQ((*events)[2].step(), 20);
  EXPECT_EQ((*events)[2].summary().value(0).simple_value(), 1.25f);
  EXPECT_GE((*events)[2].wall_time(), (*events)[1].wall_time());
}

TEST(EventFileTest, TwoWritersNeverShareAFile) {
  const std::string dir = TempDir("two");
  auto a = EventFileWriter::Open(dir);
  ASSERT_TRUE(a.ok()) << a.status();
  // Most likely the same second, host and pid: the second writer still gets
  // a file of its own.
  auto b = EventFileWriter::Open(dir);
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_NE((*a)->path(), (*b)->path());
  ASSERT_TRUE((*b)->WriteScalars(1, {{"x", 1}}).ok());
  auto files = ListEventFiles(dir);
  ASSERT_TRUE(files.ok());
  EXPECT_EQ(files->size(), 2u);
  EXPECT_EQ(ReadEventFile((*a)->path())->size(), 1u);
  EXPECT_EQ(ReadEventFile((*b)->path())->size(), 2u);
}

TEST(EventFileTest, BadInputIsAClearError) {
  EXPECT_EQ(EventFileWriter::Open("").status().code(), absl::StatusCode::kInvalidArgument);
  const std::string dir = TempDir("bad");
  std::filesystem::create_directories(dir);
  const std::string file = dir + "/not_a_dir";
  std::ofstream(file) << "x";
  auto w = EventFileWriter::Open(file + "/sub");
  EXPECT_FALSE(w.ok());
  EXPECT_THAT(w.status().message(), HasSubstr(file));
  EXPECT_EQ(ReadEventFile(dir + "/missing").status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(ListEventFiles(file).status().code(), absl::StatusCode::kNotFound);

  // A record that frames well but is not an Event.
  std::string framed;
  AppendRecord(std::string("\xff\xff\xff", 3), &framed);
  ASSERT_TRUE(WriteStringToFileAtomic(dir + "/garbage.tfevents.1", framed).ok());
  auto events = ReadEventFile(dir + "/garbage.tfevents.1");
  EXPECT_EQ(events.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(events.status().message(), HasSubstr("record 0 is not an Event"));
}

}  // namespace
}  // namespace distflow
