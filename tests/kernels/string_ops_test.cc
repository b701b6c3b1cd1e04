// StringJoin and ShardedFilename, as TensorFlow's saver graphs use them to
// name checkpoint files.
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernel_test_util.h"

namespace distflow {
namespace {

using test::RunKernel;
using ::testing::ElementsAre;

Tensor Strings(const std::vector<std::string>& v) {
  Tensor t(DT_STRING, TensorShape({static_cast<int64_t>(v.size())}));
  for (size_t i = 0; i < v.size(); ++i) t.flat<std::string>()[i] = v[i];
  return t;
}

TEST(StringJoinTest, JoinsElementWiseAndBroadcastsScalars) {
  auto out =
      RunKernel("StringJoin", {Tensor::Scalar<std::string>("/tmp/model"), Strings({"_temp", "_x"})},
                {{"N", 2}, {"separator", std::string("|")}});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0].flat<std::string>(), ElementsAre("/tmp/model|_temp", "/tmp/model|_x"));
  auto plain =
      RunKernel("StringJoin", {Tensor::Scalar<std::string>("a"), Tensor::Scalar<std::string>("b")},
                {{"N", 2}});
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_EQ((*plain)[0].scalar<std::string>(), "ab");
  auto bad = RunKernel("StringJoin", {Strings({"a"}), Strings({"b", "c"})}, {{"N", 2}});
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument) << bad.status();
}

TEST(ShardedFilenameTest, IsTensorFlowsShardName) {
  auto out = RunKernel("ShardedFilename",
                       {Tensor::Scalar<std::string>("dir/part"), Tensor::Scalar<int32_t>(1),
                        Tensor::Scalar<int32_t>(2)},
                       {});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].scalar<std::string>(), "dir/part-00001-of-00002");
}

}  // namespace
}  // namespace distflow
