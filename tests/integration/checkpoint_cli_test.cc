// Runs `distflow checkpoint list|dump` as a user would: on a checkpoint
// TensorFlow wrote (a SavedModel's variables, ../shared/saved_models), and
// on one with a partitioned variable saved in slices over two data files.
#include <cstring>
#include <filesystem>
#include <string>

#include "absl/strings/str_cat.h"
#include "command_line.h"
#include "distflow/core/env.h"
#include "distflow/framework/tensor_bundle.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace distflow {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

struct Result {
  int exit_code = -1;
  std::string out;
  std::string err;
};

class CheckpointCliTest : public ::testing::Test {
 protected:
  CheckpointCliTest() {
    dir_ = fs::path(::testing::TempDir()) /
           ("checkpoint_cli_" +
            std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  ~CheckpointCliTest() override { fs::remove_all(dir_); }

  // Runs `distflow checkpoint <args>`.
  Result Run(const std::string& args) {
    const std::string err_path = (dir_ / "stderr").string();
    test::CommandOutput o =
        test::RunCommandLine(absl::StrCat(DISTFLOW_BINARY, " checkpoint ", args, " 2>", err_path));
    return Result{o.exit_code, o.out, ReadFileToString(err_path).value_or("")};
  }

  fs::path dir_;
};

// Where the array's bytes start in an .npy file of format version 1.
size_t DataOffset(const std::string& npy) {
  return 10 + static_cast<unsigned char>(npy[8]) + 256 * static_cast<unsigned char>(npy[9]);
}

const std::string kHalfPlusTwo =
    absl::StrCat(DISTFLOW_SOURCE_DIR,
                 "/../shared/saved_models/serving_half_plus_two_cpu/00000123/variables/variables");

TEST_F(CheckpointCliTest, ListsAndDumpsATensorFlowCheckpoint) {
  Result list = Run("list " + kHalfPlusTwo);
  ASSERT_EQ(list.exit_code, 0) << list.err;
  EXPECT_THAT(list.out, HasSubstr("a\tfloat32\t[]\n"));
  EXPECT_THAT(list.out, HasSubstr("b\tfloat32\t[]\n"));

  const std::string npy = (dir_ / "b.npy").string();
  Result dump = Run(absl::StrCat("dump ", kHalfPlusTwo, " b ", npy));
  ASSERT_EQ(dump.exit_code, 0) << dump.err;
  const std::string bytes = *ReadFileToString(npy);
  ASSERT_GT(bytes.size(), 64u);
  EXPECT_EQ(bytes.substr(0, 8), std::string("\x93NUMPY\x01\x00", 8));
  EXPECT_THAT(bytes, HasSubstr("'descr': '<f4', 'fortran_order': False, 'shape': ()"));
  const size_t data_at = DataOffset(bytes);
  EXPECT_EQ(data_at % 64, 0u);  // NumPy's alignment
  ASSERT_EQ(bytes.size(), data_at + 4);
  float b;
  std::memcpy(&b, bytes.data() + data_at, 4);
  EXPECT_EQ(b, 2.0f);
}

TEST_F(CheckpointCliTest, PartitionedVariablesListAndDumpWhole) {
  const std::string part0 = (dir_ / "tmp/part-00000-of-00002").string();
  const std::string part1 = (dir_ / "tmp/part-00001-of-00002").string();
  const TensorShape full({4, 2});
  for (int p = 0; p < 2; ++p) {
    BundleWriter w(p == 0 ? part0 : part1);
    Tensor rows(DT_INT32, TensorShape({2, 2}));
    for (int i = 0; i < 4; ++i) rows.flat<int32_t>()[i] = p * 4 + i;
    ASSERT_TRUE(
        w.AddSlice("emb", full, *TensorSlice::Parse(p == 0 ? "0,2:-" : "2,2:-"), rows).ok());
    if (p == 1) {
      Tensor words(DT_STRING, TensorShape({2}));
      words.flat<std::string>()[0] = "ab";
      words.flat<std::string>()[1] = "c";
      ASSERT_TRUE(w.Add("vocab", words).ok());
    }
    ASSERT_TRUE(w.Finish().ok());
  }
  const std::string prefix = (dir_ / "model.ckpt-1").string();
  ASSERT_TRUE(MergeBundles({part0, part1}, prefix).ok());

  Result list = Run("list " + prefix);
  ASSERT_EQ(list.exit_code, 0) << list.err;
  EXPECT_EQ(list.out, "emb\tint32\t[4,2]\nvocab\tstring\t[2]\n");

  const std::string npy = (dir_ / "emb.npy").string();
  Result dump = Run(absl::StrCat("dump ", prefix, " emb ", npy));
  ASSERT_EQ(dump.exit_code, 0) << dump.err;
  const std::string bytes = *ReadFileToString(npy);
  EXPECT_THAT(bytes, HasSubstr("'descr': '<i4', 'fortran_order': False, 'shape': (4, 2)"));
  ASSERT_EQ(bytes.size(), DataOffset(bytes) + 32);
  for (int i = 0; i < 8; ++i) {
    int32_t v;
    std::memcpy(&v, bytes.data() + DataOffset(bytes) + 4 * i, 4);
    EXPECT_EQ(v, i);
  }
  const std::string vocab = (dir_ / "vocab.npy").string();
  ASSERT_EQ(Run(absl::StrCat("dump ", prefix, " vocab ", vocab)).exit_code, 0);
  const std::string vbytes = *ReadFileToString(vocab);
  EXPECT_THAT(vbytes, HasSubstr("'descr': '|S2', 'fortran_order': False, 'shape': (2,)"));
  EXPECT_EQ(vbytes.substr(vbytes.size() - 4), std::string("abc\0", 4));
}

TEST_F(CheckpointCliTest, ErrorsNameWhatIsMissing) {
  Result none = Run("list " + (dir_ / "nothing").string());
  EXPECT_EQ(none.exit_code, 1);
  EXPECT_THAT(none.err,
              HasSubstr("error: NotFound: no checkpoint at '" + (dir_ / "nothing").string()));
  Result missing = Run(absl::StrCat("dump ", kHalfPlusTwo, " zz ", (dir_ / "z.npy").string()));
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_THAT(missing.err, HasSubstr("error: NotFound: tensor 'zz' not found in checkpoint"));
  EXPECT_FALSE(fs::exists(dir_ / "z.npy"));
  Result usage = Run("dump " + kHalfPlusTwo);
  EXPECT_EQ(usage.exit_code, 1);
  EXPECT_THAT(usage.err, HasSubstr("error: InvalidArgument: "));
}

}  // namespace
}  // namespace distflow
