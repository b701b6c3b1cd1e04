#include <atomic>
#include <set>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "distflow/core/env.h"
#include "distflow/core/random.h"
#include "distflow/core/threadpool.h"
#include "distflow/core/timer.h"
#include "distflow/framework/device_name_utils.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace distflow {
namespace {

using ::testing::HasSubstr;

TEST(TimerTest, RunsCallbacksInDeadlineOrder) {
  Timer timer;
  absl::Mutex mu;
  std::vector<int> order;
  absl::Notification last;
  timer.Schedule(absl::Milliseconds(60), [&] {
    absl::MutexLock lock(&mu);
    order.push_back(3);
    last.Notify();
  });
  timer.Schedule(absl::Milliseconds(20), [&] {
    absl::MutexLock lock(&mu);
    order.push_back(2);
  });
  timer.Schedule(absl::ZeroDuration(), [&] {
    absl::MutexLock lock(&mu);
    order.push_back(1);
  });
  last.WaitForNotification();
  absl::MutexLock lock(&mu);
  EXPECT_EQ(order, (std::vector<int>{1, 2, 3}));
}

TEST(TimerTest, CancelledCallbackNeverRuns) {
  Timer timer;
  std::atomic<int> runs{0};
  Timer::Id id = timer.Schedule(absl::Milliseconds(30), [&] { runs++; });
  EXPECT_TRUE(timer.Cancel(id));
  EXPECT_FALSE(timer.Cancel(id));
  absl::Notification later;
  timer.Schedule(absl::Milliseconds(60), [&] { later.Notify(); });
  later.WaitForNotification();
  EXPECT_EQ(runs.load(), 0);
}

// The loop sleeps until the cancelled hour-long deadline unless a nearer
// deadline wakes it; so does a timer destroyed with that deadline pending.
TEST(TimerTest, NearerDeadlineAfterACancelledFarOneRuns) {
  Timer timer;
  Timer::Id far = timer.Schedule(absl::Hours(1), [] {});
  absl::SleepFor(absl::Milliseconds(5));  // the loop now sleeps until `far`
  EXPECT_TRUE(timer.Cancel(far));
  timer.Schedule(absl::Hours(2), [] {});
  absl::Notification near;
  timer.Schedule(absl::Milliseconds(10), [&] { near.Notify(); });
  EXPECT_TRUE(near.WaitForNotificationWithTimeout(absl::Seconds(30)));
}

TEST(ThreadPoolTest, ParallelForCoversRangeOnce) {
  ThreadPool pool("test", 3);
  std::vector<std::atomic<int>> hits(10007);
  pool.ParallelFor(10007, 100000, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) hits[i]++;
  });
  for (auto& h : hits) EXPECT_EQ(h.load(), 1);
  std::atomic<int> n{0};
  {
    ThreadPool p2("t2", 2);
    for (int i = 0; i < 100; ++i) p2.Schedule([&n] { n++; });
  }  // destructor waits
  EXPECT_EQ(n.load(), 100);
}

TEST(RandomTest, PhiloxIsDeterministic) {
  random::SimplePhilox a(42, 7), b(42, 7), c(43, 7);
  std::set<uint32_t> seen;
  for (int i = 0; i < 100; ++i) {
    const uint32_t x = a.Rand32();
    EXPECT_EQ(x, b.Rand32());
    seen.insert(x);
  }
  EXPECT_GT(seen.size(), 95u);
  EXPECT_NE(a.Rand64(), c.Rand64());
  for (int i = 0; i < 1000; ++i) {
    const float f = a.RandFloat();
    EXPECT_GE(f, 0.0f);
    EXPECT_LT(f, 1.0f);
    EXPECT_LE(std::fabs(a.TruncatedNormal()), 2.0);
  }
}

TEST(EnvTest, AtomicWriteAndRead) {
  const std::string path = ::testing::TempDir() + "/env_test.txt";
  ASSERT_TRUE(WriteStringToFileAtomic(path, "hello").ok());
  auto r = ReadFileToString(path);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, "hello");
  EXPECT_EQ(ReadFileToString(path + ".missing").status().code(), absl::StatusCode::kNotFound);
  EXPECT_FALSE(WriteStringToFileAtomic("/nonexistent-dir/x", "a").ok());
}

TEST(DeviceNameTest, ParseFullPartialAndLegacy) {
  ParsedDeviceName p;
  ASSERT_TRUE(device_name::Parse("/job:worker/replica:0/task:3/device:CPU:1", &p));
  EXPECT_TRUE(device_name::IsFullySpecified(p));
  EXPECT_EQ(p.job, "worker");
  EXPECT_EQ(p.task, 3);
  EXPECT_EQ(p.type, "CPU");
  EXPECT_EQ(p.id, 1);
  EXPECT_EQ(device_name::ToString(p), "/job:worker/replica:0/task:3/device:CPU:1");
  EXPECT_EQ(device_name::TaskName(p), "/job:worker/replica:0/task:3");

  ASSERT_TRUE(device_name::Parse("/job:ps", &p));
  EXPECT_TRUE(p.has_job);
  EXPECT_FALSE(p.has_task);
  ASSERT_TRUE(device_name::Parse("/cpu:0", &p));
  EXPECT_EQ(p.type, "CPU");
  ASSERT_TRUE(device_name::Parse("/device:cpu:*", &p));
  EXPECT_FALSE(p.has_id);
  ASSERT_TRUE(device_name::Parse("", &p));

  for (const char* bad :
       {"job:x", "/job:", "/task:x", "/job:a/job:b", "/device:CPU:-1", "/foo:1"}) {
    EXPECT_FALSE(device_name::Parse(bad, &p)) << bad;
  }
  EXPECT_THAT(device_name::ParseOrError("/task:x", &p).message(),
              HasSubstr("malformed device name '/task:x'"));
}

TEST(DeviceNameTest, MatchMergeAddressSpace) {
  ParsedDeviceName full, partial, other;
  device_name::Parse("/job:worker/replica:0/task:1/device:CPU:0", &full);
  device_name::Parse("/job:worker/task:1", &partial);
  device_name::Parse("/job:ps/device:CPU:0", &other);
  EXPECT_TRUE(device_name::Matches(partial, full));
  EXPECT_FALSE(device_name::Matches(other, full));
  EXPECT_FALSE(device_name::AreCompatible(partial, other));
  ParsedDeviceName merged = partial;
  ASSERT_TRUE(device_name::Merge(&merged, full).ok());
  EXPECT_EQ(merged, full);
  merged = partial;
  EXPECT_THAT(device_name::Merge(&merged, other).message(), HasSubstr("incompatible jobs"));
  EXPECT_TRUE(device_name::IsSameAddressSpace("/job:a/replica:0/task:0/device:CPU:0",
                                              "/job:a/replica:0/task:0/device:CPU:3"));
  EXPECT_FALSE(device_name::IsSameAddressSpace("/job:a/replica:0/task:0/device:CPU:0",
                                               "/job:a/replica:0/task:1/device:CPU:0"));
}

}  // namespace
}  // namespace distflow
