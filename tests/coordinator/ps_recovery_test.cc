// PsRecovery in one process, with probes standing in for a parameter
// server: what each probe answer means, one recovery for several callers,
// the bounded wait, and Stop.
#include "distflow/coordinator/ps_recovery.h"

#include <atomic>
#include <thread>
#include <vector>

#include "absl/synchronization/notification.h"
#include "distflow/core/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace distflow {
namespace {

using ::testing::HasSubstr;

PsRecovery::Options Fast(absl::Duration timeout = absl::Seconds(10)) {
  PsRecovery::Options o;
  o.timeout = timeout;
  o.backoff_min = absl::Milliseconds(1);
  o.backoff_max = absl::Milliseconds(5);
  return o;
}

TEST(PsRecoveryTest, AnsweringAtOnceWithItsStateIsNoFailure) {
  int probes = 0;
  PsRecovery r(
      [&](int task, int64_t generation) -> absl::StatusOr<PsProbe> {
        EXPECT_EQ(task, 1);
        EXPECT_EQ(generation, 1);
        ++probes;
        return PsProbe::kIntact;
      },
      Fast());
  absl::StatusOr<PsProbe> got =
      r.Recover(1, "/job:ps/replica:0/task:1", 0, errors::Unavailable("one lost packet"));
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(*got, PsProbe::kIntact);
  EXPECT_EQ(probes, 1);
  EXPECT_EQ(r.generation(), 1);
  EXPECT_EQ(r.failures(), 0);
  EXPECT_EQ(r.restores(), 0);
}

TEST(PsRecoveryTest, WaitsForTheTaskAndCountsTheRestore) {
  int probes = 0;
  PsRecovery r(
      [&](int, int64_t) -> absl::StatusOr<PsProbe> {
        if (++probes < 4) return errors::Unavailable("connection refused");
        return PsProbe::kRestored;
      },
      Fast());
  absl::StatusOr<PsProbe> got = r.Recover(0, "ps0", 0, errors::Unavailable("socket closed"));
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(*got, PsProbe::kRestored);
  EXPECT_EQ(probes, 4);
  EXPECT_EQ(r.failures(), 1);
  EXPECT_EQ(r.restores(), 1);
}

TEST(PsRecoveryTest, CallersOfOneFailureShareOneRecovery) {
  std::atomic<int> probes{0};
  absl::Notification release;
  PsRecovery r(
      [&](int, int64_t) -> absl::StatusOr<PsProbe> {
        ++probes;
        release.WaitForNotificationWithTimeout(absl::Seconds(10));
        return PsProbe::kRestored;
      },
      Fast());
  std::vector<std::thread> callers;
  std::atomic<int> restored{0}, recovered{0};
  for (int i = 0; i < 4; ++i) {
    callers.emplace_back([&] {
      absl::StatusOr<PsProbe> got = r.Recover(0, "ps0", 0, errors::Unavailable("down"));
      ASSERT_TRUE(got.ok());
      (*got == PsProbe::kRestored ? restored : recovered)++;
    });
  }
  absl::SleepFor(absl::Milliseconds(50));
  release.Notify();
  for (auto& t : callers) t.join();
  EXPECT_EQ(probes, 1);
  EXPECT_EQ(restored, 1);
  EXPECT_EQ(recovered, 3);
  EXPECT_EQ(r.restores(), 1);
  // A failure seen after that recovery is a new one.
  ASSERT_TRUE(r.Recover(0, "ps0", r.generation(), errors::Unavailable("down again")).ok());
  EXPECT_EQ(probes, 2);
}

TEST(PsRecoveryTest, GivesUpAtTheTimeoutNamingTheTask) {
  PsRecovery r(
      [](int, int64_t) -> absl::StatusOr<PsProbe> { return errors::Unavailable("no route"); },
      Fast(absl::Milliseconds(30)));
  absl::StatusOr<PsProbe> got =
      r.Recover(2, "/job:ps/replica:0/task:2 at 10.0.0.3:2222", 0, errors::Unavailable("gone"));
  ASSERT_EQ(got.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(got.status().message(),
              HasSubstr("parameter server /job:ps/replica:0/task:2 at 10.0.0.3:2222 did not come "
                        "back within the ps recovery timeout of 30ms"));
  EXPECT_THAT(got.status().message(), HasSubstr("no route"));
}

TEST(PsRecoveryTest, TheProbesOwnErrorEndsTheRecovery) {
  PsRecovery r(
      [](int, int64_t) -> absl::StatusOr<PsProbe> {
        return errors::DataLoss("checkpoint index damaged");
      },
      Fast());
  absl::StatusOr<PsProbe> got = r.Recover(0, "ps0", 0, errors::Unavailable("gone"));
  EXPECT_EQ(got.status().code(), absl::StatusCode::kDataLoss);
}

TEST(PsRecoveryTest, StopEndsAWait) {
  PsRecovery r([](int, int64_t) -> absl::StatusOr<PsProbe> { return errors::Unavailable("down"); },
               Fast(absl::Hours(1)));
  std::thread stopper([&] {
    absl::SleepFor(absl::Milliseconds(30));
    r.Stop();
  });
  absl::StatusOr<PsProbe> got = r.Recover(0, "ps0", 0, errors::Unavailable("gone"));
  stopper.join();
  EXPECT_EQ(got.status().code(), absl::StatusCode::kCancelled);
}

}  // namespace
}  // namespace distflow
