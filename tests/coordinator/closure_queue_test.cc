#include "distflow/coordinator/closure_queue.h"

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/notification.h"
#include "distflow/coordinator/remote_value.h"
#include "distflow/core/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace distflow {
namespace {

using ::testing::HasSubstr;

constexpr absl::Duration kShort = absl::Milliseconds(30);
constexpr absl::Duration kLong = absl::Seconds(30);

// A closure whose function returns its own number as a scalar.
std::shared_ptr<Closure> Numbered(int n) {
  return std::make_shared<Closure>(
      [n](const ClosureContext&) -> absl::StatusOr<std::vector<Tensor>> {
        Tensor t(DT_INT32, TensorShape({}));
        t.flat<int32_t>()[0] = n;
        return std::vector<Tensor>{t};
      });
}

// Runs a closure taken from the queue and records its number.
int RunNumber(Closure& c) {
  absl::StatusOr<std::vector<Tensor>> out = c.Execute(0);
  EXPECT_TRUE(out.ok()) << out.status();
  return (*out)[0].flat<int32_t>()[0];
}

TEST(RemoteValueTest, PendingUntilSetThenReady) {
  RemoteValue v;
  EXPECT_EQ(v.state(), RemoteValue::State::kPending);
  absl::StatusOr<std::vector<Tensor>> early = v.Fetch(kShort);
  EXPECT_EQ(early.status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_THAT(early.status().message(), HasSubstr("not ready within"));

  RemoteValue copy = v;  // shares the state
  Tensor t(DT_FLOAT, TensorShape({2}));
  t.flat<float>()[0] = 1.5f;
  t.flat<float>()[1] = -2.0f;
  std::thread setter([&v, t] { v.SetReady({t}); });
  absl::StatusOr<std::vector<Tensor>> got = copy.Fetch(kLong);
  setter.join();
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_EQ(got->size(), 1u);
  EXPECT_EQ((*got)[0].flat<float>()[0], 1.5f);
  EXPECT_EQ((*got)[0].flat<float>()[1], -2.0f);
  EXPECT_EQ(copy.state(), RemoteValue::State::kReady);
}

TEST(RemoteValueTest, FetchAllReturnsEveryValueOrTheFirstError) {
  Tensor one(DT_FLOAT, TensorShape({}));
  one.flat<float>()[0] = 1;
  RemoteValue a, b, c;
  a.SetReady({one});
  b.SetReady({one, one});
  absl::StatusOr<std::vector<std::vector<Tensor>>> pending = FetchAll({a, b, c}, kShort);
  EXPECT_EQ(pending.status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_THAT(pending.status().message(), HasSubstr("value 2 of 3"));
  c.SetError(absl::InvalidArgumentError("bad x"));
  absl::StatusOr<std::vector<std::vector<Tensor>>> failed = FetchAll({a, b, c}, kShort);
  EXPECT_EQ(failed.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(failed.status().message(), HasSubstr("bad x"));
  absl::StatusOr<std::vector<std::vector<Tensor>>> got = FetchAll({a, b}, kShort);
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_EQ(got->size(), 2u);
  EXPECT_EQ((*got)[0].size(), 1u);
  EXPECT_EQ((*got)[1].size(), 2u);
}

TEST(RemoteValueTest, CancelOnlyWhilePendingAbortOnlyWhenReady) {
  RemoteValue ready;
  ready.SetReady({});
  ready.SetCancelled();
  EXPECT_EQ(ready.state(), RemoteValue::State::kReady);

  RemoteValue pending;
  pending.SetAborted();
  EXPECT_EQ(pending.state(), RemoteValue::State::kPending);
  pending.SetCancelled();
  EXPECT_EQ(pending.state(), RemoteValue::State::kCancelled);
  EXPECT_EQ(pending.Fetch(kShort).status().code(), absl::StatusCode::kCancelled);

  // A per-worker value is aborted when its worker is lost: Fetch waits for
  // the rebuild instead of returning stale tensors.
  ready.SetAborted();
  EXPECT_EQ(ready.state(), RemoteValue::State::kAborted);
  EXPECT_EQ(ready.status().code(), absl::StatusCode::kAborted);
  EXPECT_EQ(ready.Fetch(kShort).status().code(), absl::StatusCode::kDeadlineExceeded);
  ready.SetReady({});
  EXPECT_TRUE(ready.Fetch(kShort).ok());

  RemoteValue failed;
  failed.SetError(errors::InvalidArgument("bad input x"));
  EXPECT_EQ(failed.state(), RemoteValue::State::kError);
  absl::StatusOr<std::vector<Tensor>> got = failed.Fetch(kShort);
  EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(got.status().message(), "bad input x");
}

TEST(ClosureQueueTest, FifoOrderAndInFlightCount) {
  ClosureQueue q(10);
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(q.Put(Numbered(i), kShort).ok());
  EXPECT_EQ(q.queued(), 3u);
  std::vector<std::shared_ptr<Closure>> taken;
  for (int i = 0; i < 3; ++i) {
    taken.push_back(q.Get(kShort));
    ASSERT_NE(taken.back(), nullptr);
    EXPECT_EQ(RunNumber(*taken.back()), i);
  }
  EXPECT_EQ(q.in_flight(), 3);
  EXPECT_EQ(q.Get(kShort), nullptr);  // empty: times out
  EXPECT_FALSE(*q.Done());
  for (auto& c : taken) q.MarkFinished(*c);
  EXPECT_EQ(q.in_flight(), 0);
  EXPECT_TRUE(*q.Done());
  EXPECT_TRUE(q.Wait(kShort).ok());
}

TEST(ClosureQueueTest, PutBlocksWhileFullUntilAWorkerTakesOne) {
  ClosureQueue q(2);
  ASSERT_TRUE(q.Put(Numbered(0), kShort).ok());
  ASSERT_TRUE(q.Put(Numbered(1), kShort).ok());
  absl::Status full = q.Put(Numbered(2), kShort);
  EXPECT_EQ(full.code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_THAT(full.message(), HasSubstr("2 of 2"));
  EXPECT_EQ(q.queued(), 2u);

  absl::Notification put_done;
  absl::Status blocked_put;
  std::thread producer([&] {
    blocked_put = q.Put(Numbered(3), kLong);
    put_done.Notify();
  });
  EXPECT_FALSE(put_done.WaitForNotificationWithTimeout(kShort));  // still blocked
  std::shared_ptr<Closure> first = q.Get(kShort);
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(RunNumber(*first), 0);
  producer.join();
  EXPECT_TRUE(blocked_put.ok()) << blocked_put;
  // The order: 1 then 3 (2 was refused).
  EXPECT_EQ(RunNumber(*q.Get(kShort)), 1);
  EXPECT_EQ(RunNumber(*q.Get(kShort)), 3);
}

TEST(ClosureQueueTest, PutBackGoesToTheBackAndNeverBlocks) {
  ClosureQueue q(3);
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(q.Put(Numbered(i), kShort).ok());
  std::shared_ptr<Closure> a = q.Get(kShort);
  EXPECT_EQ(RunNumber(*a), 0);                   // say its worker failed after this
  ASSERT_TRUE(q.Put(Numbered(3), kShort).ok());  // the queue is full again
  q.PutBack(a);                                  // but a put back never waits
  EXPECT_EQ(q.queued(), 4u);
  EXPECT_EQ(q.in_flight(), 0);
  std::vector<int> order;
  for (int i = 0; i < 4; ++i) {
    std::shared_ptr<Closure> c = q.Get(kShort);
    order.push_back(RunNumber(*c));
    q.MarkFinished(*c);
  }
  EXPECT_EQ(order, (std::vector<int>{1, 2, 3, 0}));
  EXPECT_EQ(a->attempts(), 2);
  EXPECT_EQ(a->output().state(), RemoteValue::State::kPending);  // the caller sets it
}

TEST(ClosureQueueTest, FirstErrorRaisedOnceByPutCancellingQueuedClosures) {
  ClosureQueue q(10);
  std::vector<std::shared_ptr<Closure>> cs;
  for (int i = 0; i < 4; ++i) {
    cs.push_back(Numbered(i));
    ASSERT_TRUE(q.Put(cs.back(), kShort).ok());
  }
  std::shared_ptr<Closure> a = q.Get(kShort);
  std::shared_ptr<Closure> b = q.Get(kShort);
  q.MarkFailed(*a, errors::InvalidArgument("first failure"));
  q.MarkFailed(*b, errors::Internal("second failure"));  // the first error wins
  std::shared_ptr<Closure> late = Numbered(9);
  absl::Status raised = q.Put(late, kShort);
  EXPECT_EQ(raised.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(raised.message(), "first failure");
  // Queued closures, the one just put included, are cancelled.
  for (int i = 2; i < 4; ++i) {
    EXPECT_EQ(cs[i]->output().state(), RemoteValue::State::kCancelled) << i;
  }
  EXPECT_EQ(late->output().state(), RemoteValue::State::kCancelled);
  EXPECT_EQ(q.queued(), 0u);
  // Raised once, then cleared: scheduling goes on.
  EXPECT_TRUE(q.Put(Numbered(10), kShort).ok());
  EXPECT_TRUE(*q.Done() == false);
  std::shared_ptr<Closure> c = q.Get(kShort);
  EXPECT_EQ(RunNumber(*c), 10);
  q.MarkFinished(*c);
  EXPECT_TRUE(q.Wait(kShort).ok());
}

TEST(ClosureQueueTest, WaitAndDoneRaiseTheErrorOnce) {
  ClosureQueue q(4);
  ASSERT_TRUE(q.Put(Numbered(0), kShort).ok());
  std::shared_ptr<Closure> a = q.Get(kShort);
  q.MarkFailed(*a, errors::Unavailable("ps down"));
  absl::Status waited = q.Wait(kLong);  // returns at once: an error is pending
  EXPECT_EQ(waited.code(), absl::StatusCode::kUnavailable);
  EXPECT_TRUE(q.Wait(kShort).ok());

  ASSERT_TRUE(q.Put(Numbered(1), kShort).ok());
  std::shared_ptr<Closure> b = q.Get(kShort);
  q.MarkFailed(*b, errors::Aborted("step aborted"));
  absl::StatusOr<bool> done = q.Done();
  EXPECT_EQ(done.status().code(), absl::StatusCode::kAborted);
  EXPECT_TRUE(*q.Done());
}

TEST(ClosureQueueTest, RaisingCancelsInFlightClosuresAndIgnoresTheirLateReports) {
  ClosureQueue q(4);
  std::atomic<bool> saw_cancel{false};
  auto watcher = std::make_shared<Closure>(
      [&saw_cancel](const ClosureContext& ctx) -> absl::StatusOr<std::vector<Tensor>> {
        saw_cancel = ctx.cancellation->IsCancelled();
        return std::vector<Tensor>{};
      });
  ASSERT_TRUE(q.Put(Numbered(0), kShort).ok());
  ASSERT_TRUE(q.Put(watcher, kShort).ok());
  std::shared_ptr<Closure> failing = q.Get(kShort);
  std::shared_ptr<Closure> running = q.Get(kShort);
  q.MarkFailed(*failing, errors::Internal("boom"));
  EXPECT_EQ(q.Done().status().code(), absl::StatusCode::kInternal);
  EXPECT_EQ(q.in_flight(), 0);
  ASSERT_TRUE(running->Execute(1).ok());
  EXPECT_TRUE(saw_cancel);
  // The old generation's report changes nothing; its put back is cancelled.
  q.MarkFailed(*running, errors::Internal("late"));
  EXPECT_TRUE(*q.Done());
  q.PutBack(running);
  EXPECT_EQ(running->output().state(), RemoteValue::State::kCancelled);
  EXPECT_EQ(q.queued(), 0u);
  EXPECT_EQ(q.in_flight(), 0);
}

TEST(ClosureQueueTest, PutBackWhileAnErrorIsPendingCancels) {
  ClosureQueue q(4);
  ASSERT_TRUE(q.Put(Numbered(0), kShort).ok());
  ASSERT_TRUE(q.Put(Numbered(1), kShort).ok());
  std::shared_ptr<Closure> a = q.Get(kShort);
  std::shared_ptr<Closure> b = q.Get(kShort);
  q.MarkFailed(*a, errors::Internal("boom"));
  q.PutBack(b);
  EXPECT_EQ(b->output().state(), RemoteValue::State::kCancelled);
  EXPECT_EQ(q.Wait(kShort).code(), absl::StatusCode::kInternal);
}

TEST(ClosureQueueTest, WaitTimesOutNamingWhatIsLeft) {
  ClosureQueue q(4);
  ASSERT_TRUE(q.Put(Numbered(0), kShort).ok());
  ASSERT_TRUE(q.Put(Numbered(1), kShort).ok());
  std::shared_ptr<Closure> a = q.Get(kShort);
  absl::Status s = q.Wait(kShort);
  EXPECT_EQ(s.code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_THAT(s.message(), HasSubstr("1 queued, 1 in flight"));
  // Nothing was cancelled by the timeout.
  EXPECT_EQ(q.queued(), 1u);
}

TEST(ClosureQueueTest, StopReleasesGettersAndRefusesPuts) {
  ClosureQueue q(4);
  std::shared_ptr<Closure> got = Numbered(0);
  std::thread getter([&] { got = q.Get(kLong); });
  q.Stop();
  getter.join();
  EXPECT_EQ(got, nullptr);
  EXPECT_EQ(q.Put(Numbered(1), kShort).code(), absl::StatusCode::kFailedPrecondition);
}

// Many consumers at once, as the threads of workers with several closures
// in flight each: every closure taken is run and finished, or put back once
// (its first run "failed") and run again; each ends ready exactly once and
// Wait returns once all have, with nothing left in flight.
TEST(ClosureQueueTest, ManyConsumersFinishEachClosureOnceWithPutBacks) {
  constexpr int kClosures = 2000;
  constexpr int kConsumers = 16;
  ClosureQueue q(64);
  std::vector<std::atomic<int>> finished(kClosures);
  std::vector<RemoteValue> values;
  absl::Notification stop;
  std::vector<std::thread> consumers;
  for (int t = 0; t < kConsumers; ++t) {
    consumers.emplace_back([&] {
      while (!stop.HasBeenNotified()) {
        std::shared_ptr<Closure> c = q.Get(kShort);
        if (c == nullptr) continue;
        const int n = RunNumber(*c);
        if (n % 3 == 0 && c->attempts() == 1) {
          q.PutBack(std::move(c));
          continue;
        }
        finished[n].fetch_add(1);
        c->output().SetReady({});
        q.MarkFinished(*c);
      }
    });
  }
  for (int n = 0; n < kClosures; ++n) {
    std::shared_ptr<Closure> c = Numbered(n);
    values.push_back(c->output());
    ASSERT_TRUE(q.Put(std::move(c), kLong).ok());
  }
  EXPECT_TRUE(q.Wait(kLong).ok());
  EXPECT_EQ(q.in_flight(), 0);
  EXPECT_EQ(q.queued(), 0u);
  stop.Notify();
  for (std::thread& t : consumers) t.join();
  for (int n = 0; n < kClosures; ++n) {
    EXPECT_EQ(finished[n].load(), 1) << n;
    EXPECT_EQ(values[n].state(), RemoteValue::State::kReady) << n;
  }
}

}  // namespace
}  // namespace distflow
