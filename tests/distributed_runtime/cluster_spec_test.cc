#include "distflow/distributed_runtime/cluster_spec.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace distflow {
namespace {

using ::testing::HasSubstr;

TEST(ClusterSpecTest, FromFlag) {
  auto spec = ClusterSpec::FromFlag("ps=127.0.0.1:2222;worker=127.0.0.1:2223,127.0.0.1:2224");
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->NumTasks("worker"), 2);
  EXPECT_EQ(*spec->TaskAddress("worker", 1), "127.0.0.1:2224");
  EXPECT_THAT(spec->TaskNames(),
              ::testing::ElementsAre("/job:ps/replica:0/task:0", "/job:worker/replica:0/task:0",
                                     "/job:worker/replica:0/task:1"));
  EXPECT_EQ(spec->TaskAddress("worker", 5).status().code(), absl::StatusCode::kNotFound);
}

TEST(ClusterSpecTest, BadFlags) {
  EXPECT_THAT(ClusterSpec::FromFlag("ps").status().message(), HasSubstr("must be job=host:port"));
  EXPECT_THAT(ClusterSpec::FromFlag("ps=localhost").status().message(),
              HasSubstr("address 'localhost' must be host:port"));
  EXPECT_THAT(ClusterSpec::FromFlag("ps=a:1;ps=b:2").status().message(), HasSubstr("twice"));
  EXPECT_THAT(ClusterSpec::FromFlag("ps=h:99999").status().message(), HasSubstr("invalid port"));
  EXPECT_THAT(MakeServerDef("ps=h:1", "worker", 0).status().message(),
              HasSubstr("job 'worker' is not in the cluster"));
  EXPECT_THAT(MakeServerDef("ps=h:1", "ps", 3).status().message(), HasSubstr("has no task 3"));
}

TEST(ClusterSpecTest, TfConfig) {
  auto def = ServerDefFromTfConfig(
      R"({"cluster": {"ps": ["127.0.0.1:1"], "worker": ["127.0.0.1:2", "127.0.0.1:3"]},
          "task": {"type": "worker", "index": 1}})");
  ASSERT_TRUE(def.ok()) << def.status();
  EXPECT_EQ(def->job_name(), "worker");
  EXPECT_EQ(def->task_index(), 1);
  EXPECT_EQ(def->cluster().job_size(), 2);
  EXPECT_THAT(ServerDefFromTfConfig("{not json").status().message(),
              HasSubstr("not a JSON object"));
  EXPECT_THAT(ServerDefFromTfConfig(R"({"cluster": {"ps": ["h:1"]}})").status().message(),
              HasSubstr("\"task\""));
  EXPECT_THAT(ServerDefFromTfConfig(R"({"cluster": {"ps": "h:1"}, "task": {}})").status().message(),
              HasSubstr("must be a list"));
}

}  // namespace
}  // namespace distflow
