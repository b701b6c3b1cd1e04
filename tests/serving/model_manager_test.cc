// ModelManager and RestApi in one process (so that TSan sees them): a new
// version taking over while threads call predict, with batching on, so the
// old version's batch scheduler is torn down under load; labels and errors.
#include "distflow/serving/model_manager.h"

#include <atomic>
#include <filesystem>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "distflow/serving/rest_api.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "serving/half_plus_model.h"

namespace distflow {
namespace {

using ::testing::HasSubstr;

TEST(ModelManagerTest, NewVersionTakesOverWhileRequestsRun) {
  const std::string base = ::testing::TempDir() + "/manager_versions";
  std::filesystem::remove_all(base);
  std::filesystem::create_directories(base);
  WriteHalfPlus(base + "/1", 2);
  ModelServerConfig config;
  ModelConfig* model = config.mutable_model_config_list()->add_config();
  model->set_name("hp");
  model->set_base_path(base);
  ServingMetrics metrics;
  ModelManagerOptions options;
  options.poll_wait_seconds = 0;  // this test polls
  options.metrics = &metrics;
  BatchingOptions batching;
  batching.max_batch_size = 8;
  batching.batch_timeout_micros = 200;
  batching.num_batch_threads = 2;
  options.load.batching = batching;
  std::vector<std::string> log;
  absl::Mutex log_mu;
  options.log = [&](const std::string& line) {
    absl::MutexLock lock(&log_mu);
    log.push_back(line);
  };
  auto manager = ModelManager::Start(config, options);
  ASSERT_TRUE(manager.ok()) << manager.status();
  RestApi api(manager->get(), &metrics, absl::Seconds(30));

  std::atomic<bool> stop{false};
  std::atomic<int> failures{0}, old_answers{0}, new_answers{0};
  std::vector<std::thread> clients;
  for (int i = 0; i < 4; ++i) {
    clients.emplace_back([&] {
      while (!stop.load()) {
        HttpReply r = api.Handle("POST", "/v1/models/hp:predict", R"({"instances": [1.0]})");
        if (r.status != 200) {
          ++failures;
        } else if (r.body == R"({"predictions":[2.5]})") {
          ++old_answers;
        } else if (r.body == R"({"predictions":[3.5]})") {
          ++new_answers;
        } else {
          ++failures;
        }
      }
    });
  }
  while (old_answers.load() < 50) absl::SleepFor(absl::Milliseconds(1));
  WriteHalfPlus(base + "/2", 3);
  (*manager)->PollOnce();
  const int at_swap = new_answers.load();
  while (new_answers.load() < at_swap + 50) absl::SleepFor(absl::Milliseconds(1));
  stop = true;
  for (std::thread& t : clients) t.join();
  EXPECT_EQ(failures.load(), 0);

  auto statuses = (*manager)->VersionStatuses("hp", std::nullopt, "");
  ASSERT_TRUE(statuses.ok());
  ASSERT_EQ(statuses->size(), 2u);
  EXPECT_EQ((*statuses)[0].version, 2);
  EXPECT_EQ((*statuses)[0].state, ModelVersionState::kAvailable);
  EXPECT_EQ((*statuses)[1].version, 1);
  EXPECT_EQ((*statuses)[1].state, ModelVersionState::kEnd);
  {
    absl::MutexLock lock(&log_mu);
    EXPECT_THAT(log, ::testing::ElementsAre("model 'hp' version 1 is available",
                                            "model 'hp' version 2 is available",
                                            "model 'hp' version 1 is out of service"));
  }
  const std::string page = metrics.Render();
  EXPECT_THAT(page,
              HasSubstr("distflow_serving_model_loads_total{model=\"hp\",result=\"success\"} 2"));
  EXPECT_THAT(page, HasSubstr("distflow_serving_model_unloads_total{model=\"hp\"} 1"));

  // Versions by number, and what is not there.
  EXPECT_EQ((*manager)->Find("hp", 2, "").value()->version(), 2);
  EXPECT_THAT(std::string((*manager)->Find("hp", 1, "").status().message()),
              HasSubstr("version 1 is not available (END)"));
  EXPECT_EQ((*manager)->Find("nope", std::nullopt, "").status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string((*manager)->Find("hp", std::nullopt, "x").status().message()),
              HasSubstr("has no version label 'x'"));
  manager->reset();
  std::filesystem::remove_all(base);
}

}  // namespace
}  // namespace distflow
