// Checkpoints in TensorFlow's tensor bundle V2 format: the byte layouts
// (string tensors, slice keys, masked CRCs), round trips, tensors saved in
// slices over two shards and their merge, distflow's older DFBUNDLE files,
// the checkpoints TensorFlow wrote in ../shared/saved_models, and damaged
// files, each an error naming the file and the tensor.
#include "distflow/framework/tensor_bundle.h"

#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "distflow/core/crc32c.h"
#include "distflow/core/env.h"
#include "distflow/core/varint.h"
#include "distflow/framework/bundle_index.h"
#include "distflow/framework/tensor_slice.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace distflow {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

class TensorBundleTest : public ::testing::Test {
 protected:
  TensorBundleTest() {
    dir_ =
        fs::path(::testing::TempDir()) /
        ("bundle_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(dir_);
  }
  ~TensorBundleTest() override { fs::remove_all(dir_); }

  std::string Prefix(const std::string& name) const { return (dir_ / name).string(); }

  static void ExpectStatus(const absl::Status& s, absl::StatusCode code,
                           const std::vector<std::string>& parts) {
    EXPECT_EQ(s.code(), code) << s;
    for (const std::string& p : parts) EXPECT_THAT(std::string(s.message()), HasSubstr(p));
  }

  fs::path dir_;
};

Tensor Strings(const std::vector<std::string>& v) {
  Tensor t(DT_STRING, TensorShape({static_cast<int64_t>(v.size())}));
  for (size_t i = 0; i < v.size(); ++i) t.flat<std::string>()[i] = v[i];
  return t;
}

std::vector<float> Floats(const Tensor& t) {
  return std::vector<float>(t.flat<float>().begin(), t.flat<float>().end());
}

uint32_t BitwiseCrc32c(absl::string_view bytes) {
  uint32_t crc = ~0u;
  for (unsigned char b : bytes) {
    crc ^= b;
    for (int k = 0; k < 8; ++k) crc = (crc >> 1) ^ (0x82F63B78u & (0u - (crc & 1u)));
  }
  return ~crc;
}

TEST(Crc32cTest, FastPathsAgreeWithTheDefinitionAndMaskingRoundTrips) {
  std::mt19937 rng(7);
  std::string bytes(4099, '\0');
  for (char& c : bytes) c = static_cast<char>(rng());
  for (size_t n : {0, 1, 7, 8, 9, 63, 4099}) {
    const absl::string_view part(bytes.data() + 3, n - (n == 4099 ? 3 : 0));
    EXPECT_EQ(crc32c::Value(part), BitwiseCrc32c(part)) << n;
  }
  for (uint32_t crc : {0u, 1u, 0xE3069283u, 0xffffffffu}) {
    EXPECT_NE(crc32c::Mask(crc), crc);
    EXPECT_EQ(crc32c::Unmask(crc32c::Mask(crc)), crc);
  }
}

TEST(SliceKeyTest, IsTensorFlowsOrderedCode) {
  // 0, the name (0x00 escaped as 0x00 0xff, terminated by 0x00 0x01), the
  // rank, then start and length of each extent (-1: whole), signed.
  EXPECT_EQ(SliceKey("w", *TensorSlice::Parse("0,2:-")),
            std::string("\x00w\x00\x01\x01\x02\x80\x82\x80\x7f", 10));
  // Signed numbers: n bytes for magnitudes below 2^(7n - 1), the first
  // byte's leading bits n - 1 ones and a zero (flipped for negatives).
  EXPECT_EQ(SliceKey(std::string("a\0b\xff", 4), *TensorSlice::Parse("64,8192")),
            std::string("\x00"
                        "a\x00\xff"
                        "b\xff\x00\x00\x01\x01\x01\xc0\x40\xe0\x20\x00",
                        16));
}

TEST_F(TensorBundleTest, StringTensorsUseTensorFlowsLayout) {
  const std::string prefix = Prefix("s");
  BundleWriter w(prefix);
  ASSERT_TRUE(w.Add("s", Strings({"ab", ""})).ok());
  ASSERT_TRUE(w.Finish().ok());
  // Varint lengths, their masked CRC (over each length as 4 bytes), the bytes.
  uint32_t lengths_crc = 0;
  for (uint32_t len : {2u, 0u}) {
    lengths_crc = crc32c::Extend(lengths_crc, reinterpret_cast<const char*>(&len), 4);
  }
  const uint32_t masked = crc32c::Mask(lengths_crc);
  std::string want("\x02\x00", 2);
  want.append(reinterpret_cast<const char*>(&masked), 4);
  want += "ab";
  EXPECT_EQ(*ReadFileToString(BundleDataFilename(prefix)), want);
  absl::StatusOr<BundleIndex> index = ReadBundleIndex(prefix);
  ASSERT_TRUE(index.ok()) << index.status();
  const BundleEntryProto& e = index->entries.at("s");
  EXPECT_EQ(e.size(), 8);
  EXPECT_EQ(crc32c::Unmask(e.crc32c()),
            crc32c::Extend(crc32c::Extend(lengths_crc, want.data() + 2, 4), "ab", 2));
  EXPECT_EQ(index->header.num_shards(), 1);
  EXPECT_EQ(index->header.version().producer(), 1);
}

TEST_F(TensorBundleTest, RoundTripOfStringsAndEmptyTensors) {
  const std::string prefix = Prefix("rt");
  const std::string binary("\x00\xff\x80\n\x00", 5);
  const std::string long_string(300, 'z');  // a 2-byte varint length
  BundleWriter w(prefix);
  ASSERT_TRUE(w.Add("strings", Strings({"", binary, long_string, "x"})).ok());
  ASSERT_TRUE(w.Add("no_strings", Strings({})).ok());
  ASSERT_TRUE(w.Add("empty", Tensor(DT_FLOAT, TensorShape({3, 0}))).ok());
  ASSERT_TRUE(w.Add("scalar", Tensor::Scalar<double>(-0.25)).ok());
  ASSERT_TRUE(w.Finish().ok());
  absl::StatusOr<std::unique_ptr<BundleReader>> r = BundleReader::Open(prefix);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_THAT((*r)->Names(), ElementsAre("empty", "no_strings", "scalar", "strings"));
  absl::StatusOr<Tensor> s = (*r)->Read("strings", DT_STRING);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_THAT(s->flat<std::string>(), ElementsAre("", binary, long_string, "x"));
  absl::StatusOr<Tensor> none = (*r)->Read("no_strings", DT_STRING);
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_EQ(none->shape(), TensorShape({0}));
  absl::StatusOr<Tensor> empty = (*r)->Read("empty", DT_FLOAT);
  ASSERT_TRUE(empty.ok()) << empty.status();
  EXPECT_EQ(empty->shape(), TensorShape({3, 0}));
  absl::StatusOr<Tensor> scalar = (*r)->Read("scalar", DT_DOUBLE);
  ASSERT_TRUE(scalar.ok()) << scalar.status();
  EXPECT_EQ(scalar->scalar<double>(), -0.25);
}

// A 4x3 float variable 0..11, row-major.
Tensor Rows(int64_t first, int64_t n) {
  Tensor t(DT_FLOAT, TensorShape({n, 3}));
  for (int64_t i = 0; i < n * 3; ++i) t.flat<float>()[i] = static_cast<float>(first * 3 + i);
  return t;
}

TEST_F(TensorBundleTest, PartitionedVariableOverTwoShardsMergesAndReadsWhole) {
  // As TensorFlow's sharded Saver writes a variable partitioned by rows:
  // each task saves its part into a bundle of its own, then one merge.
  const TensorShape full({4, 3});
  const std::string part0 = Prefix("tmp/part-00000-of-00002");
  const std::string part1 = Prefix("tmp/part-00001-of-00002");
  {
    BundleWriter w(part0);
    ASSERT_TRUE(w.AddSlice("w", full, *TensorSlice::Parse("0,2:-"), Rows(0, 2)).ok());
    ASSERT_TRUE(w.Add("step", Tensor::Scalar<int64_t>(7)).ok());
    ASSERT_TRUE(w.Finish().ok());
  }
  {
    BundleWriter w(part1);
    ASSERT_TRUE(w.AddSlice("w", full, *TensorSlice::Parse("2,2:-"), Rows(2, 2)).ok());
    ASSERT_TRUE(w.Add("names", Strings({"p", "q"})).ok());
    ASSERT_TRUE(w.Finish().ok());
  }
  const std::string merged = Prefix("model.ckpt-7");
  ASSERT_TRUE(MergeBundles({part0, part1}, merged).ok());
  EXPECT_TRUE(fs::exists(merged + ".index"));
  EXPECT_TRUE(fs::exists(merged + ".data-00000-of-00002"));
  EXPECT_TRUE(fs::exists(merged + ".data-00001-of-00002"));
  EXPECT_TRUE(fs::is_empty(dir_ / "tmp"));

  absl::StatusOr<std::unique_ptr<BundleReader>> r = BundleReader::Open(merged);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)->index().header.num_shards(), 2);
  // The slices' own entries are not listed; the full entry has both slices.
  EXPECT_THAT((*r)->Names(), ElementsAre("names", "step", "w"));
  EXPECT_EQ((*r)->Find("w")->slices_size(), 2);
  EXPECT_EQ((*r)->index().entries.size(), 5u);
  absl::StatusOr<Tensor> w = (*r)->Read("w", DT_FLOAT);
  ASSERT_TRUE(w.ok()) << w.status();
  EXPECT_EQ(w->shape(), full);
  EXPECT_THAT(Floats(*w), ElementsAre(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11));
  // A slice across both parts: rows 1 and 2, columns 1 and 2.
  absl::StatusOr<Tensor> mid = (*r)->ReadSlice("w", DT_FLOAT, full, *TensorSlice::Parse("1,2:1,2"));
  ASSERT_TRUE(mid.ok()) << mid.status();
  EXPECT_THAT(Floats(*mid), ElementsAre(4, 5, 7, 8));
  absl::StatusOr<Tensor> names = (*r)->Read("names", DT_STRING);
  ASSERT_TRUE(names.ok()) << names.status();
  EXPECT_THAT(names->flat<std::string>(), ElementsAre("p", "q"));
  EXPECT_EQ((*r)->Read("step", DT_INT64)->scalar<int64_t>(), 7);

  // The second shard's data file gone: its tensors fail naming file and slice.
  fs::remove(merged + ".data-00001-of-00002");
  r = BundleReader::Open(merged);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)->Read("step", DT_INT64)->scalar<int64_t>(), 7);
  ExpectStatus((*r)->Read("w", DT_FLOAT).status(), absl::StatusCode::kDataLoss,
               {merged + ".data-00001-of-00002", "slice 2,2:- of tensor 'w'"});
  ExpectStatus((*r)->Read("names", DT_STRING).status(), absl::StatusCode::kDataLoss,
               {merged + ".data-00001-of-00002", "tensor 'names'"});
}

TEST_F(TensorBundleTest, SlicesNotCoveringARequestAreNotFound) {
  const std::string prefix = Prefix("half");
  const TensorShape full({4, 3});
  BundleWriter w(prefix);
  ASSERT_TRUE(w.AddSlice("w", full, *TensorSlice::Parse("0,2:-"), Rows(0, 2)).ok());
  ExpectStatus(w.AddSlice("w", TensorShape({5, 3}), *TensorSlice::Parse("2,2:-"), Rows(2, 2)),
               absl::StatusCode::kInvalidArgument, {"'w'", "full shape"});
  ASSERT_TRUE(w.Finish().ok() == false);  // the error sticks
  BundleWriter w2(prefix);
  ASSERT_TRUE(w2.AddSlice("w", full, *TensorSlice::Parse("0,2:-"), Rows(0, 2)).ok());
  ASSERT_TRUE(w2.Finish().ok());
  absl::StatusOr<std::unique_ptr<BundleReader>> r = BundleReader::Open(prefix);
  ASSERT_TRUE(r.ok()) << r.status();
  ExpectStatus((*r)->Read("w", DT_FLOAT).status(), absl::StatusCode::kNotFound,
               {"'w'", "do not cover"});
  absl::StatusOr<Tensor> top = (*r)->ReadSlice("w", DT_FLOAT, full, *TensorSlice::Parse("1,1:-"));
  ASSERT_TRUE(top.ok()) << top.status();
  EXPECT_THAT(Floats(*top), ElementsAre(3, 4, 5));
  ExpectStatus((*r)->ReadSlice("w", DT_FLOAT, TensorShape({4, 4}), TensorSlice(2)).status(),
               absl::StatusCode::kInvalidArgument, {"'w'", "[4,3]", "[4,4]"});
}

TEST_F(TensorBundleTest, MergeRefusesATensorTwiceAndMayAllowMissingInputs) {
  for (const char* p : {"a", "b"}) {
    BundleWriter w(Prefix(p));
    ASSERT_TRUE(w.Add("x", Tensor::Scalar<float>(1)).ok());
    ASSERT_TRUE(w.Finish().ok());
  }
  ExpectStatus(MergeBundles({Prefix("a"), Prefix("b")}, Prefix("m")),
               absl::StatusCode::kInvalidArgument, {"'x'", Prefix("b")});
  ExpectStatus(MergeBundles({Prefix("a"), Prefix("nope")}, Prefix("m")),
               absl::StatusCode::kNotFound, {Prefix("nope")});
  ASSERT_TRUE(MergeBundles({Prefix("nope"), Prefix("a")}, Prefix("m"), true).ok());
  absl::StatusOr<std::unique_ptr<BundleReader>> r = BundleReader::Open(Prefix("m"));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)->Read("x", DT_FLOAT)->scalar<float>(), 1.0f);
  EXPECT_FALSE(fs::exists(Prefix("a") + ".index"));
}

// The DFBUNDLE index of distflow before checkpoints were TensorFlow's.
std::string DfBundleIndex(
    const std::vector<std::tuple<std::string, DataType, std::vector<int64_t>, std::string>>&
        entries,
    std::string* data) {
  auto put = [](std::string* s, auto v) {
    s->append(reinterpret_cast<const char*>(&v), sizeof(v));
  };
  std::string body;
  for (const auto& [name, dtype, dims, payload] : entries) {
    put(&body, static_cast<uint32_t>(name.size()));
    body += name;
    put(&body, static_cast<uint32_t>(dtype));
    put(&body, static_cast<uint32_t>(dims.size()));
    for (int64_t d : dims) put(&body, d);
    put(&body, static_cast<uint64_t>(data->size()));
    put(&body, static_cast<uint64_t>(payload.size()));
    put(&body, crc32c::Value(payload));
    *data += payload;
  }
  std::string index = "DFBUNDLE";
  put(&index, uint32_t{1});
  put(&index, static_cast<uint32_t>(entries.size()));
  put(&index, static_cast<uint64_t>(data->size()));
  put(&index, crc32c::Value(*data));
  index += body;
  put(&index, crc32c::Value(index));
  return index;
}

TEST_F(TensorBundleTest, OldDfBundleCheckpointsStillRead) {
  const std::string prefix = Prefix("old");
  fs::create_directories(dir_);
  std::string data;
  std::string floats(8, '\0');
  const float values[2] = {1.5f, -2.0f};
  std::memcpy(floats.data(), values, 8);
  std::string strings;
  for (const std::string& s : {std::string("hi"), std::string()}) {
    const uint64_t len = s.size();
    strings.append(reinterpret_cast<const char*>(&len), 8);
    strings += s;
  }
  const std::string index =
      DfBundleIndex({{"s", DT_STRING, {2}, strings}, {"w", DT_FLOAT, {2}, floats}}, &data);
  ASSERT_TRUE(WriteStringToFileAtomic(prefix + ".index", index).ok());
  ASSERT_TRUE(WriteStringToFileAtomic(prefix + ".data-00000-of-00001", data).ok());
  absl::StatusOr<std::unique_ptr<BundleReader>> r = BundleReader::Open(prefix);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)->index().format, BundleIndex::Format::kDfBundle);
  EXPECT_THAT(Floats(*(*r)->Read("w", DT_FLOAT)), ElementsAre(1.5f, -2.0f));
  EXPECT_THAT((*r)->Read("s", DT_STRING)->flat<std::string>(), ElementsAre("hi", ""));
  // Its checksums still guard it.
  data[3] ^= 1;
  ASSERT_TRUE(WriteStringToFileAtomic(prefix + ".data-00000-of-00001", data).ok());
  r = BundleReader::Open(prefix);
  ASSERT_TRUE(r.ok()) << r.status();
  ExpectStatus((*r)->Read("s", DT_STRING).status(), absl::StatusCode::kDataLoss,
               {"checksum", "'s'"});
}

TEST_F(TensorBundleTest, DamagedFilesAreErrorsNamingFileAndTensor) {
  const std::string prefix = Prefix("bad");
  {
    BundleWriter w(prefix);
    ASSERT_TRUE(w.Add("a", Tensor::FromVector<float>({1, 2})).ok());
    ASSERT_TRUE(w.Add("s", Strings({"xyz"})).ok());
    ASSERT_TRUE(w.Finish().ok());
  }
  const std::string index_file = prefix + ".index";
  const std::string data_file = prefix + ".data-00000-of-00001";
  const std::string index = *ReadFileToString(index_file);
  const std::string data = *ReadFileToString(data_file);

  // A truncated index, at every length.
  for (size_t n = 0; n < index.size(); ++n) {
    ASSERT_TRUE(WriteStringToFileAtomic(index_file, index.substr(0, n)).ok());
    absl::StatusOr<std::unique_ptr<BundleReader>> r = BundleReader::Open(prefix);
    ExpectStatus(r.status(), absl::StatusCode::kDataLoss, {index_file});
  }
  // Any flipped byte of the index is DataLoss naming it, or lies where the
  // table has no content (the footer's padding) and changes nothing.
  for (size_t i = 0; i < index.size(); ++i) {
    std::string bad = index;
    bad[i] ^= 0x10;
    ASSERT_TRUE(WriteStringToFileAtomic(index_file, bad).ok());
    absl::StatusOr<std::unique_ptr<BundleReader>> r = BundleReader::Open(prefix);
    if (r.ok()) {
      EXPECT_THAT(Floats(*(*r)->Read("a", DT_FLOAT)), ElementsAre(1, 2)) << "byte " << i;
      EXPECT_THAT((*r)->Read("s", DT_STRING)->flat<std::string>(), ElementsAre("xyz"));
      continue;
    }
    ExpectStatus(r.status(), absl::StatusCode::kDataLoss, {index_file});
  }
  ASSERT_TRUE(WriteStringToFileAtomic(index_file, index).ok());

  // Any flipped byte of the data: the tensor it belongs to fails.
  for (size_t i = 0; i < data.size(); ++i) {
    std::string bad = data;
    bad[i] ^= 0x01;
    ASSERT_TRUE(WriteStringToFileAtomic(data_file, bad).ok());
    absl::StatusOr<std::unique_ptr<BundleReader>> r = BundleReader::Open(prefix);
    ASSERT_TRUE(r.ok()) << r.status();
    const std::string name = i < 8 ? "a" : "s";
    absl::Status s = (*r)->Read(name, name == "a" ? DT_FLOAT : DT_STRING).status();
    ExpectStatus(s, absl::StatusCode::kDataLoss, {"'" + name + "'"});
    if (name == "a") {
      EXPECT_THAT(std::string(s.message()), HasSubstr(data_file));
    }
  }
  // A truncated data file.
  ASSERT_TRUE(WriteStringToFileAtomic(data_file, data.substr(0, 10)).ok());
  absl::StatusOr<std::unique_ptr<BundleReader>> r = BundleReader::Open(prefix);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE((*r)->Read("a", DT_FLOAT).ok());
  ExpectStatus((*r)->Read("s", DT_STRING).status(), absl::StatusCode::kDataLoss,
               {data_file, "truncated", "'s'"});
  // A missing data file, a missing checkpoint, a missing tensor.
  fs::remove(data_file);
  r = BundleReader::Open(prefix);
  ASSERT_TRUE(r.ok()) << r.status();
  ExpectStatus((*r)->Read("a", DT_FLOAT).status(), absl::StatusCode::kDataLoss, {data_file, "'a'"});
  ExpectStatus(BundleReader::Open(Prefix("none")).status(), absl::StatusCode::kNotFound,
               {Prefix("none")});
  ExpectStatus((*r)->Read("b", DT_FLOAT).status(), absl::StatusCode::kNotFound, {"'b'", prefix});
  // An entry whose shard the header does not have.
  absl::StatusOr<BundleIndex> parsed = ReadBundleIndex(prefix);
  ASSERT_TRUE(parsed.ok());
  parsed->entries["a"].set_shard_id(3);
  ASSERT_TRUE(WriteBundleIndex(prefix, *parsed).ok());
  ExpectStatus(BundleReader::Open(prefix).status(), absl::StatusCode::kDataLoss,
               {index_file, "'a'", "shard 3"});
}

// A LevelDB table footer naming one block (offset, size) as both its
// metaindex and its index block.
std::string Footer(uint64_t offset, uint64_t size) {
  std::string f;
  for (uint64_t v : {offset, size, offset, size}) PutVarint64(&f, v);
  f.resize(40, '\0');
  const uint64_t magic = 0xdb4775248b80fb57ull;
  f.append(reinterpret_cast<const char*>(&magic), 8);
  return f;
}

TEST(BundleIndexTest, SizesACraftedTableNamesAreCheckedBeforeAllocating) {
  // An index block of 2^60 bytes.
  absl::StatusOr<BundleIndex> huge =
      ParseBundleIndex("x.index", std::string(5, '\0') + Footer(0, uint64_t{1} << 60));
  EXPECT_EQ(huge.status().code(), absl::StatusCode::kDataLoss) << huge.status();
  EXPECT_THAT(std::string(huge.status().message()), HasSubstr("lies outside the file"));
  // A Snappy block claiming 2^32 - 1 bytes uncompressed.
  std::string block("\xff\xff\xff\xff\x0f", 5);
  block += std::string("\x01\0\0\0\0", 5);  // trailer: Snappy, a CRC
  absl::StatusOr<BundleIndex> bomb = ParseBundleIndex("x.index", block + Footer(0, 5));
  EXPECT_EQ(bomb.status().code(), absl::StatusCode::kDataLoss) << bomb.status();
  EXPECT_THAT(std::string(bomb.status().message()), HasSubstr("bad uncompressed size"));
  // Not a table at all.
  EXPECT_EQ(ParseBundleIndex("x.index", std::string(100, 'x')).status().code(),
            absl::StatusCode::kDataLoss);
}

TEST_F(TensorBundleTest, WriterRefusesBadNamesAndTypes) {
  BundleWriter w(Prefix("w"));
  ExpectStatus(w.Add("", Tensor::Scalar<float>(1)), absl::StatusCode::kInvalidArgument, {"empty"});
  BundleWriter w2(Prefix("w"));
  ExpectStatus(w2.Add(std::string("\0x", 2), Tensor::Scalar<float>(1)),
               absl::StatusCode::kInvalidArgument, {"NUL"});
  BundleWriter w3(Prefix("w"));
  ExpectStatus(w3.Add("h", Tensor(DT_RESOURCE, TensorShape())), absl::StatusCode::kInvalidArgument,
               {"'h'", "resource"});
  EXPECT_FALSE(fs::exists(Prefix("w") + ".index"));
}

// The checkpoints TensorFlow wrote, beside the repository.
const fs::path kSavedModels = fs::path(DISTFLOW_SOURCE_DIR) / ".." / "shared" / "saved_models";

std::vector<std::string> TensorFlowIndexFiles() {
  std::vector<std::string> files;
  for (const auto& e : fs::recursive_directory_iterator(kSavedModels)) {
    if (e.path().extension() == ".index") files.push_back(e.path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

TEST(TensorFlowCheckpointTest, EveryTensorOfEveryCheckpointReads) {
  ASSERT_TRUE(fs::is_directory(kSavedModels)) << kSavedModels;
  const std::vector<std::string> files = TensorFlowIndexFiles();
  ASSERT_GE(files.size(), 13u);
  int tensors = 0;
  for (const std::string& file : files) {
    SCOPED_TRACE(file);
    const std::string prefix = file.substr(0, file.size() - 6);
    absl::StatusOr<std::unique_ptr<BundleReader>> r = BundleReader::Open(prefix);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_FALSE((*r)->Names().empty());
    for (const std::string& name : (*r)->Names()) {
      const BundleEntryProto* e = (*r)->Find(name);
      absl::StatusOr<Tensor> t = (*r)->Read(name, e->dtype());
      ASSERT_TRUE(t.ok()) << name << ": " << t.status();
      EXPECT_EQ(t->shape().dims(), e->shape().dim_size()) << name;
      ++tensors;
    }
  }
  EXPECT_GT(tensors, 100);
}

TEST(TensorFlowCheckpointTest, ReserializedIndexesAreByteForByteTensorFlows) {
  // Uncompressed tables come out of our writer exactly as TensorFlow wrote
  // them; two files have Snappy-compressed blocks, which we read but do not
  // write.
  std::vector<std::string> differ;
  for (const std::string& file : TensorFlowIndexFiles()) {
    const std::string bytes = *ReadFileToString(file);
    absl::StatusOr<BundleIndex> index = ParseBundleIndex(file, bytes);
    ASSERT_TRUE(index.ok()) << index.status();
    const std::string ours = SerializeBundleIndex(*index);
    if (ours != bytes) {
      size_t at = 0;
      while (at < ours.size() && at < bytes.size() && ours[at] == bytes[at]) ++at;
      differ.push_back(absl::StrCat(file, " (", bytes.size(), " vs ", ours.size(),
                                    " bytes, from byte ", at, ")"));
    }
  }
  ASSERT_EQ(differ.size(), 2u) << absl::StrJoin(differ, "\n");
  EXPECT_THAT(differ[0], HasSubstr("serving_half_plus_two_cpu/"));
  EXPECT_THAT(differ[1], HasSubstr("serving_half_plus_two_tf2/"));
}

float ReadScalar(const std::string& prefix, const std::string& name) {
  absl::StatusOr<std::unique_ptr<BundleReader>> r = BundleReader::Open(prefix);
  EXPECT_TRUE(r.ok()) << r.status();
  if (!r.ok()) return -1;
  absl::StatusOr<Tensor> t = (*r)->Read(name, DT_FLOAT);
  EXPECT_TRUE(t.ok()) << t.status();
  return t.ok() ? t->scalar<float>() : -1;
}

TEST(TensorFlowCheckpointTest, HalfPlusTwoHoldsItsFormula) {
  for (const char* model :
       {"serving_half_plus_two_cpu/00000123", "serving_half_plus_two_mkl/00000123",
        "serving_half_plus_two_2_versions/00000123"}) {
    const std::string prefix = (kSavedModels / model / "variables" / "variables").string();
    EXPECT_EQ(ReadScalar(prefix, "a"), 0.5f) << model;
    EXPECT_EQ(ReadScalar(prefix, "b"), 2.0f) << model;
  }
  const std::string three =
      (kSavedModels / "serving_half_plus_three/00000123/variables/variables").string();
  EXPECT_EQ(ReadScalar(three, "a"), 0.5f);
  EXPECT_EQ(ReadScalar(three, "b"), 3.0f);
  const std::string tf2 =
      (kSavedModels / "serving_half_plus_two_tf2/00000123/variables/variables").string();
  EXPECT_EQ(ReadScalar(tf2, "a/.ATTRIBUTES/VARIABLE_VALUE"), 0.5f);
  EXPECT_EQ(ReadScalar(tf2, "b/.ATTRIBUTES/VARIABLE_VALUE"), 2.0f);
}

}  // namespace
}  // namespace distflow
