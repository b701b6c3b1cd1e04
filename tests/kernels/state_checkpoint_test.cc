// Checkpoints through the kernels: SaveV2/RestoreV2 (round trip of every
// dtype, slices of a partitioned variable), MergeV2Checkpoints, and the
// errors of a restore — missing tensor, wrong dtype or shape, a corrupted
// byte, a truncated file, a missing checkpoint — each naming the tensor and
// never producing outputs.
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "distflow/core/crc32c.h"
#include "distflow/core/env.h"
#include "distflow/core/file_roots.h"
#include "distflow/framework/tensor_bundle.h"
#include "distflow/framework/tensor_slice.h"
#include "state_test_util.h"

namespace distflow {
namespace {

using test::AsTensor;
using test::ExpectError;
using test::ExpectTensorEqual;
using test::StateKernelRunner;
using test::StringVector;

TEST(Crc32cTest, KnownValues) {
  EXPECT_EQ(crc32c::Value(""), 0u);
  EXPECT_EQ(crc32c::Value("123456789"), 0xE3069283u);
  EXPECT_EQ(crc32c::Value(std::string(32, '\0')), 0x8A9136AAu);
  EXPECT_EQ(crc32c::Value(std::string(32, '\xff')), 0x62A8AB43u);
  const std::string text = "hello, checkpoint";
  EXPECT_EQ(crc32c::Extend(crc32c::Value(text.substr(0, 5)), text.data() + 5, text.size() - 5),
            crc32c::Value(text));
}

class CheckpointTest : public ::testing::Test {
 protected:
  CheckpointTest() {
    dir_ = std::filesystem::path(::testing::TempDir()) /
           ("state_ckpt_" +
            std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    std::filesystem::remove_all(dir_);
    prefix_ = (dir_ / "sub" / "model.ckpt").string();
  }
  ~CheckpointTest() override { std::filesystem::remove_all(dir_); }

  absl::Status Save(const std::vector<std::string>& names, const std::vector<Tensor>& tensors,
                    std::vector<std::string> specs = {}, std::string prefix = "") {
    specs.resize(names.size());
    std::vector<test::KernelInput> inputs = {
        Tensor::Scalar<std::string>(prefix.empty() ? prefix_ : prefix), StringVector(names),
        StringVector(specs)};
    DataTypeVector dtypes;
    for (const Tensor& t : tensors) {
      inputs.push_back(t);
      dtypes.push_back(t.dtype());
    }
    return r_.Run("SaveV2", inputs, {{"dtypes", dtypes}}).status();
  }
  absl::StatusOr<std::vector<Tensor>> Restore(const std::vector<std::string>& names,
                                              const DataTypeVector& dtypes,
                                              std::vector<std::string> specs = {}) {
    specs.resize(names.size());
    return r_.Run("RestoreV2",
                  {Tensor::Scalar<std::string>(prefix_), StringVector(names), StringVector(specs)},
                  {{"dtypes", dtypes}});
  }
  // Flips one byte of `file` at `offset` (negative: from the end).
  void CorruptByte(const std::string& file, int64_t offset) {
    std::string data = *ReadFileToString(file);
    if (offset < 0) offset += static_cast<int64_t>(data.size());
    data[offset] ^= 0x5a;
    ASSERT_TRUE(WriteStringToFileAtomic(file, data).ok());
  }
  void Truncate(const std::string& file, size_t keep) {
    std::string data = *ReadFileToString(file);
    ASSERT_TRUE(WriteStringToFileAtomic(file, data.substr(0, keep)).ok());
  }

  std::filesystem::path dir_;
  std::string prefix_;
  StateKernelRunner r_;
};

TEST_F(CheckpointTest, RoundTripEveryDtype) {
  Tensor b(DT_BOOL, TensorShape({3}));
  b.flat<bool>()[0] = true;
  b.flat<bool>()[1] = false;
  b.flat<bool>()[2] = true;
  std::vector<Tensor> tensors = {
      AsTensor<float>({1.5f, -2, 3, 4}, {2, 2}),
      AsTensor<double>({3.25}),
      AsTensor<int32_t>({7, -8, 9}),
      Tensor::Scalar<int64_t>(int64_t{1} << 40),
      AsTensor<uint8_t>({0, 255}),
      b,
      StringVector({"", "hello", std::string("a\0b", 3)}),
      Tensor(DT_FLOAT, TensorShape({0, 3})),
      Tensor::Scalar<bfloat16>(bfloat16(0.5f)),
      AsTensor<int8_t>({-128, 127}),
      AsTensor<int16_t>({-32768, 32767}),
      AsTensor<uint16_t>({0, 65535}),
      AsTensor<uint32_t>({0, 4294967295u}),
      AsTensor<uint64_t>({0, ~uint64_t{0}}),
      Tensor(DT_STRING, TensorShape({2, 0})),
      StringVector({}),
  };
  std::vector<std::string> names = {
      "w",  "scope/d", "ints", "step", "bytes", "flags", "words",      "empty",
      "bf", "i8",      "i16",  "u16",  "u32",   "u64",   "no_strings", "zero_strings"};
  ASSERT_TRUE(Save(names, tensors).ok());
  EXPECT_TRUE(std::filesystem::exists(BundleIndexFilename(prefix_)));
  EXPECT_TRUE(std::filesystem::exists(BundleDataFilename(prefix_)));

  DataTypeVector dtypes;
  for (const Tensor& t : tensors) dtypes.push_back(t.dtype());
  auto restored = Restore(names, dtypes);
  ASSERT_TRUE(restored.ok()) << restored.status();
  for (size_t i = 0; i < tensors.size(); ++i) ExpectTensorEqual(tensors[i], (*restored)[i]);

  // A subset, in another order, with full-tensor shape_and_slices.
  auto some = Restore({"step", "w"}, {DT_INT64, DT_FLOAT}, {"", "2 2 -:-"});
  ASSERT_TRUE(some.ok()) << some.status();
  ExpectTensorEqual(tensors[3], (*some)[0]);
  ExpectTensorEqual(tensors[0], (*some)[1]);

  auto reader = BundleReader::Open(prefix_);
  ASSERT_TRUE(reader.ok());
  EXPECT_EQ((*reader)->Names().size(), names.size());
  EXPECT_EQ((*reader)->Find("w")->shape().ShortDebugString(), "dim { size: 2 } dim { size: 2 }");
}

// A 4x3 variable 0..11 partitioned by rows over two tasks, saved as
// TensorFlow's sharded Saver saves it: each task's SaveV2 into a part of
// its own with shape_and_slices, then MergeV2Checkpoints.
TEST_F(CheckpointTest, PartitionedVariableOverTwoShards) {
  const std::string part0 = (dir_ / "sub" / "model.ckpt_temp" / "part-00000-of-00002").string();
  const std::string part1 = (dir_ / "sub" / "model.ckpt_temp" / "part-00001-of-00002").string();
  ASSERT_TRUE(Save({"w", "step"},
                   {AsTensor<float>({0, 1, 2, 3, 4, 5}, {2, 3}), Tensor::Scalar<int64_t>(9)},
                   {"4 3 0,2:-", ""}, part0)
                  .ok());
  ASSERT_TRUE(
      Save({"w"}, {AsTensor<float>({6, 7, 8, 9, 10, 11}, {2, 3})}, {"4 3 2,2:-"}, part1).ok());
  auto merged = r_.Run("MergeV2Checkpoints",
                       {StringVector({part0, part1}), Tensor::Scalar<std::string>(prefix_)}, {});
  ASSERT_TRUE(merged.ok()) << merged.status();
  EXPECT_TRUE(std::filesystem::exists(prefix_ + ".data-00000-of-00002"));
  EXPECT_TRUE(std::filesystem::exists(prefix_ + ".data-00001-of-00002"));
  // delete_old_dirs (true by default) removed the emptied part directory.
  EXPECT_FALSE(std::filesystem::exists(dir_ / "sub" / "model.ckpt_temp"));

  // Whole, and as each task restores its own part.
  auto whole = Restore({"w", "step"}, {DT_FLOAT, DT_INT64});
  ASSERT_TRUE(whole.ok()) << whole.status();
  ExpectTensorEqual(AsTensor<float>({0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, {4, 3}), (*whole)[0]);
  ExpectTensorEqual(Tensor::Scalar<int64_t>(9), (*whole)[1]);
  auto part = Restore({"w"}, {DT_FLOAT}, {"4 3 2,2:-"});
  ASSERT_TRUE(part.ok()) << part.status();
  ExpectTensorEqual(AsTensor<float>({6, 7, 8, 9, 10, 11}, {2, 3}), (*part)[0]);
  // Repartitioned: a column across both parts.
  auto column = Restore({"w"}, {DT_FLOAT}, {"4 3 -:1,1"});
  ASSERT_TRUE(column.ok()) << column.status();
  ExpectTensorEqual(AsTensor<float>({1, 4, 7, 10}, {4, 1}), (*column)[0]);
  ExpectError(Restore({"w"}, {DT_FLOAT}, {"5 3 0,2:-"}).status(),
              absl::StatusCode::kInvalidArgument, {"'w'", "[4,3]", "[5,3]"});

  // A missing part is DataLoss naming the data file and the slice.
  std::filesystem::remove(prefix_ + ".data-00001-of-00002");
  ExpectError(Restore({"w"}, {DT_FLOAT}).status(), absl::StatusCode::kDataLoss,
              {prefix_ + ".data-00001-of-00002", "slice 2,2:- of tensor 'w'"});
}

TEST_F(CheckpointTest, MergeOfTheSameTensorTwiceIsInvalidArgument) {
  const std::string a = (dir_ / "a").string(), b = (dir_ / "b").string();
  ASSERT_TRUE(Save({"w"}, {AsTensor<float>({1})}, {}, a).ok());
  ASSERT_TRUE(Save({"w"}, {AsTensor<float>({2})}, {}, b).ok());
  auto merged =
      r_.Run("MergeV2Checkpoints", {StringVector({a, b}), Tensor::Scalar<std::string>(prefix_)},
             {{"delete_old_dirs", false}});
  ExpectError(merged.status(), absl::StatusCode::kInvalidArgument, {"'w'", b});
  EXPECT_FALSE(std::filesystem::exists(BundleIndexFilename(prefix_)));
}

TEST_F(CheckpointTest, SaveReplacesAnOlderCheckpoint) {
  ASSERT_TRUE(Save({"w"}, {AsTensor<float>({1})}).ok());
  ASSERT_TRUE(Save({"w", "b"}, {AsTensor<float>({2}), AsTensor<float>({3})}).ok());
  auto restored = Restore({"w", "b"}, {DT_FLOAT, DT_FLOAT});
  ASSERT_TRUE(restored.ok()) << restored.status();
  ExpectTensorEqual(AsTensor<float>({2}), (*restored)[0]);
  // No temporary files are left behind.
  int files = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir_ / "sub")) {
    (void)e;
    ++files;
  }
  EXPECT_EQ(files, 2);
}

TEST_F(CheckpointTest, SaveErrors) {
  ExpectError(Save({"w", "w"}, {AsTensor<float>({1}), AsTensor<float>({2})}),
              absl::StatusCode::kInvalidArgument, {"'w'", "twice"});
  Tensor handle(DT_RESOURCE, TensorShape());
  ExpectError(Save({"h"}, {handle}), absl::StatusCode::kInvalidArgument, {"'h'", "resource"});
  // A slice whose tensor is not of the slice's shape.
  auto sliced = r_.Run("SaveV2",
                       {Tensor::Scalar<std::string>(prefix_), StringVector({"w"}),
                        StringVector({"2 0,1"}), AsTensor<float>({1, 2})},
                       {{"dtypes", DataTypeVector{DT_FLOAT}}});
  ExpectError(sliced.status(), absl::StatusCode::kInvalidArgument, {"'w'", "[2]", "[1]"});
  EXPECT_FALSE(std::filesystem::exists(BundleIndexFilename(prefix_)));
}

TEST_F(CheckpointTest, MissingCheckpointIsNotFound) {
  ExpectError(Restore({"w"}, {DT_FLOAT}).status(), absl::StatusCode::kNotFound, {prefix_});
}

TEST_F(CheckpointTest, MissingTensorIsNotFound) {
  ASSERT_TRUE(Save({"w"}, {AsTensor<float>({1})}).ok());
  ExpectError(Restore({"w", "bias"}, {DT_FLOAT, DT_FLOAT}).status(), absl::StatusCode::kNotFound,
              {"'bias'"});
}

TEST_F(CheckpointTest, WrongDtypeOrShapeIsInvalidArgument) {
  ASSERT_TRUE(Save({"w"}, {AsTensor<float>({1, 2})}).ok());
  ExpectError(Restore({"w"}, {DT_INT32}).status(), absl::StatusCode::kInvalidArgument,
              {"'w'", "float32", "int32"});
  ExpectError(Restore({"w"}, {DT_FLOAT}, {"3 -"}).status(), absl::StatusCode::kInvalidArgument,
              {"'w'", "[2]", "[3]"});
  ExpectError(Restore({"w"}, {DT_FLOAT}, {"2 1,2"}).status(), absl::StatusCode::kInvalidArgument,
              {"'w'", "1,2", "[2]"});
}

TEST_F(CheckpointTest, CorruptedDataByteIsDataLossNamingTheTensor) {
  ASSERT_TRUE(Save({"a", "b"}, {AsTensor<float>({1, 2}), AsTensor<float>({3, 4})}).ok());
  // The data file holds a's 8 bytes, then b's.
  CorruptByte(BundleDataFilename(prefix_), 9);
  ExpectError(Restore({"a", "b"}, {DT_FLOAT, DT_FLOAT}).status(), absl::StatusCode::kDataLoss,
              {"'b'", "checksum", BundleDataFilename(prefix_)});
  // As in TensorFlow, only the tensors read are checked: "a" is intact.
  auto a = Restore({"a"}, {DT_FLOAT});
  ASSERT_TRUE(a.ok()) << a.status();
  ExpectTensorEqual(AsTensor<float>({1, 2}), (*a)[0]);
}

TEST_F(CheckpointTest, CorruptedIndexIsDataLoss) {
  ASSERT_TRUE(Save({"a"}, {AsTensor<float>({1, 2})}).ok());
  CorruptByte(BundleIndexFilename(prefix_), 30);
  ExpectError(Restore({"a"}, {DT_FLOAT}).status(), absl::StatusCode::kDataLoss,
              {BundleIndexFilename(prefix_)});
}

TEST_F(CheckpointTest, TruncatedDataFileIsDataLossNamingTheTensor) {
  ASSERT_TRUE(Save({"a", "b"}, {AsTensor<float>({1, 2}), AsTensor<float>({3, 4})}).ok());
  Truncate(BundleDataFilename(prefix_), 12);
  ExpectError(Restore({"a", "b"}, {DT_FLOAT, DT_FLOAT}).status(), absl::StatusCode::kDataLoss,
              {"truncated", "'b'"});
}

TEST_F(CheckpointTest, TruncatedIndexIsDataLoss) {
  ASSERT_TRUE(Save({"a"}, {AsTensor<float>({1, 2})}).ok());
  const std::string index = BundleIndexFilename(prefix_);
  Truncate(index, ReadFileToString(index)->size() - 6);
  ExpectError(Restore({"a"}, {DT_FLOAT}).status(), absl::StatusCode::kDataLoss, {index});
  Truncate(index, 5);
  ExpectError(Restore({"a"}, {DT_FLOAT}).status(), absl::StatusCode::kDataLoss, {"truncated"});
}

TEST_F(CheckpointTest, DataFileOfAnotherSaveIsDataLoss) {
  ASSERT_TRUE(Save({"a"}, {AsTensor<float>({1, 2})}).ok());
  const std::string old_data = *ReadFileToString(BundleDataFilename(prefix_));
  ASSERT_TRUE(Save({"a"}, {AsTensor<float>({5, 6})}).ok());
  // As if a save stopped between its two renames.
  ASSERT_TRUE(WriteStringToFileAtomic(BundleDataFilename(prefix_), old_data).ok());
  ExpectError(Restore({"a"}, {DT_FLOAT}).status(), absl::StatusCode::kDataLoss, {"'a'"});
}

TEST(ShapeAndSliceTest, Parse) {
  TensorShape shape;
  TensorSlice slice;
  ASSERT_TRUE(ParseShapeAndSlice("4 5 -:-", &shape, &slice).ok());
  EXPECT_EQ(shape, TensorShape({4, 5}));
  EXPECT_TRUE(slice.Covers(shape));
  ASSERT_TRUE(ParseShapeAndSlice("4 5 1,2:-", &shape, &slice).ok());
  EXPECT_EQ(slice.SliceShape(shape), TensorShape({2, 5}));
  EXPECT_EQ(slice.DebugString(), "1,2:-");
  EXPECT_EQ(ParseShapeAndSlice("4 -", &shape, &slice).code(), absl::StatusCode::kOk);
  for (const char* bad : {"4 5 -", "x -", "-", "4 3,2", "4 -1,2", "4 0,x"}) {
    EXPECT_EQ(ParseShapeAndSlice(bad, &shape, &slice).code(), absl::StatusCode::kInvalidArgument)
        << bad;
  }
}

TEST_F(CheckpointTest, FileRootsConfineSaveAndRestore) {
  const Tensor v = AsTensor<float>({1, 2}, {2});
  const std::filesystem::path root = dir_ / "allowed";
  std::filesystem::create_directories(root);
  ASSERT_TRUE(SetAllowedFileRoots({root.string()}).ok());
  // Outside the root, also by "..": refused before any file is touched.
  for (const std::string& outside :
       {(dir_ / "elsewhere" / "model.ckpt").string(), (root / ".." / "escaped.ckpt").string()}) {
    prefix_ = outside;
    absl::Status s = Save({"v"}, {v});
    EXPECT_EQ(s.code(), absl::StatusCode::kPermissionDenied) << s;
    EXPECT_THAT(s.message(), ::testing::HasSubstr("is outside the directories this server allows"));
    EXPECT_EQ(Restore({"v"}, {DT_FLOAT}).status().code(), absl::StatusCode::kPermissionDenied);
  }
  EXPECT_FALSE(std::filesystem::exists(dir_ / "elsewhere"));
  // Inside it, saving and restoring work as ever.
  prefix_ = (root / "sub" / "model.ckpt").string();
  EXPECT_TRUE(Save({"v"}, {v}).ok());
  absl::StatusOr<std::vector<Tensor>> restored = Restore({"v"}, {DT_FLOAT});
  ASSERT_TRUE(restored.ok()) << restored.status();
  ExpectTensorEqual(v, (*restored)[0]);
  ASSERT_TRUE(SetAllowedFileRoots({}).ok());
}

}  // namespace
}  // namespace distflow
