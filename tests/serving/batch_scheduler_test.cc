// BatchScheduler with a stand-in for the session: calls joined into
// batches, each caller given exactly its own rows, the queue bound, the
// deadline, and a signature whose outputs are not per row.
#include "distflow/serving/batch_scheduler.h"

#include <atomic>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace distflow {
namespace {

using ::testing::HasSubstr;

// y = 10 x, row by row; records each batch's rows.
struct TimesTen {
  absl::Mutex mu;
  std::vector<int64_t> batches;
  absl::Status operator()(const NamedTensors& inputs, std::vector<Tensor>* outputs) {
    const Tensor& x = inputs[0].second;
    Tensor y(DT_FLOAT, x.shape());
    for (int64_t i = 0; i < x.NumElements(); ++i) y.flat<float>()[i] = 10 * x.flat<float>()[i];
    outputs->push_back(y);
    absl::MutexLock lock(&mu);
    batches.push_back(x.dim_size(0));
    return absl::OkStatus();
  }
};

TEST(BatchSchedulerTest, ConcurrentCallersShareBatchesAndGetTheirOwnRows) {
  TimesTen model;
  BatchingOptions options;
  options.max_batch_size = 8;
  options.batch_timeout_micros = 50000;
  options.num_batch_threads = 1;
  std::atomic<int64_t> observed_rows{0};
  BatchScheduler scheduler(
      options,
      [&](const std::string&, const NamedTensors& inputs, const std::vector<std::string>&,
          absl::Time, std::vector<Tensor>* outputs) { return model(inputs, outputs); },
      [&](const std::string& signature, int64_t rows) {
        EXPECT_EQ(signature, "sig");
        observed_rows += rows;
      });
  constexpr int kCallers = 12, kCalls = 20;
  std::atomic<int> wrong{0};
  std::vector<std::thread> callers;
  for (int c = 0; c < kCallers; ++c) {
    callers.emplace_back([&, c] {
      for (int r = 0; r < kCalls; ++r) {
        const int rows = 1 + (c + r) % 3;  // 1 to 3 rows, different per call
        std::vector<float> x;
        for (int i = 0; i < rows; ++i) x.push_back(c * 1000 + r * 10 + i);
        const NamedTensors inputs = {{"x", Tensor::FromVector<float>(x)}};
        ASSERT_TRUE(scheduler.CanBatch(inputs));
        std::vector<Tensor> out;
        absl::Status s = scheduler.Run("sig", inputs, {"y"}, absl::Now() + absl::Seconds(30), &out);
        ASSERT_TRUE(s.ok()) << s;
        ASSERT_EQ(out.size(), 1u);
        ASSERT_EQ(out[0].NumElements(), rows);
        for (int i = 0; i < rows; ++i) {
          if (out[0].flat<float>()[i] != 10 * x[i]) ++wrong;
        }
      }
    });
  }
  for (std::thread& t : callers) t.join();
  EXPECT_EQ(wrong.load(), 0);
  absl::MutexLock lock(&model.mu);
  int64_t rows = 0;
  for (int64_t b : model.batches) {
    EXPECT_LE(b, 8);
    rows += b;
  }
  EXPECT_EQ(rows, observed_rows.load());
  EXPECT_EQ(rows, kCallers * kCalls * 2);  // rows per call average 2 over each run of three
  // Twelve callers at once with a 50 ms window: calls were joined.
  EXPECT_LT(model.batches.size(), static_cast<size_t>(kCallers * kCalls));
}

TEST(BatchSchedulerTest, FullQueueRefusesAndDeadlinesAreKept) {
  absl::Notification release;
  std::atomic<int> runs{0};
  BatchingOptions options;
  options.max_batch_size = 1;
  options.max_enqueued_batches = 1;
  options.batch_timeout_micros = 0;
  options.num_batch_threads = 1;
  BatchScheduler scheduler(
      options,
      [&](const std::string&, const NamedTensors& inputs, const std::vector<std::string>&,
          absl::Time, std::vector<Tensor>* outputs) {
        ++runs;
        release.WaitForNotification();
        outputs->push_back(inputs[0].second);
        return absl::OkStatus();
      },
      nullptr);
  const NamedTensors one = {{"x", Tensor::FromVector<float>({1})}};
  std::vector<Tensor> out1, out2;
  std::thread first([&] {
    EXPECT_TRUE(scheduler.Run("s", one, {"y"}, absl::Now() + absl::Seconds(30), &out1).ok());
  });
  while (runs.load() == 0) absl::SleepFor(absl::Milliseconds(1));  // the first is running
  std::thread second([&] {
    EXPECT_TRUE(scheduler.Run("s", one, {"y"}, absl::Now() + absl::Seconds(30), &out2).ok());
  });
  // The second waits in the queue (one batch of one row): a third is refused.
  while (scheduler.QueuedRows() == 0) absl::SleepFor(absl::Milliseconds(1));
  std::vector<Tensor> out3;
  const absl::Status third = scheduler.Run("s", one, {"y"}, absl::Now() + absl::Seconds(30), &out3);
  EXPECT_EQ(third.code(), absl::StatusCode::kUnavailable) << third;
  EXPECT_THAT(std::string(third.message()), HasSubstr("the batch queue is full"));
  release.Notify();
  first.join();
  second.join();
  EXPECT_EQ(out2.size(), 1u);

  // A call whose deadline passes while its batch runs is answered at its
  // deadline.
  absl::Notification slow;
  BatchScheduler stuck(
      options,
      [&](const std::string&, const NamedTensors&, const std::vector<std::string>&, absl::Time,
          std::vector<Tensor>*) {
        slow.WaitForNotification();
        return absl::OkStatus();
      },
      nullptr);
  std::vector<Tensor> out;
  absl::Status s = stuck.Run("s", one, {"y"}, absl::Now() + absl::Milliseconds(50), &out);
  EXPECT_EQ(s.code(), absl::StatusCode::kDeadlineExceeded) << s;
  slow.Notify();
}

TEST(BatchSchedulerTest, OutputsWithoutOneRowPerInputRowFailTheBatch) {
  BatchingOptions options;
  options.num_batch_threads = 1;
  BatchScheduler scheduler(
      options,
      [](const std::string&, const NamedTensors&, const std::vector<std::string>&, absl::Time,
         std::vector<Tensor>* outputs) {
        outputs->push_back(Tensor::Scalar<float>(1));  // a sum over the batch, say
        return absl::OkStatus();
      },
      nullptr);
  std::vector<Tensor> out;
  absl::Status s = scheduler.Run("total", {{"x", Tensor::FromVector<float>({1, 2})}}, {"sum"},
                                 absl::Now() + absl::Seconds(30), &out);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()),
              HasSubstr("signature 'total' cannot be batched: output 'sum' has shape []"));
  EXPECT_FALSE(scheduler.CanBatch({{"x", Tensor::Scalar<float>(1)}}));
  EXPECT_FALSE(scheduler.CanBatch({}));
  EXPECT_FALSE(scheduler.CanBatch(
      {{"x", Tensor::FromVector<float>({1, 2})}, {"y", Tensor::FromVector<float>({1})}}));
}

TEST(BatchSchedulerTest, OptionsAreValidated) {
  BatchingOptions o;
  o.max_batch_size = 0;
  EXPECT_THAT(std::string(ValidateBatchingOptions(o).message()), HasSubstr("max_batch_size"));
  o = BatchingOptions();
  o.max_enqueued_batches = int64_t{1} << 62;
  o.max_batch_size = 8;
  EXPECT_THAT(std::string(ValidateBatchingOptions(o).message()), HasSubstr("overflows"));
  EXPECT_TRUE(ValidateBatchingOptions(BatchingOptions()).ok());
}

}  // namespace
}  // namespace distflow
