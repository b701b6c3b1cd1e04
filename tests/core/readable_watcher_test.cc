// ReadableWatcher on real socket pairs: readiness, deadlines, stopping.
#include "distflow/core/readable_watcher.h"

#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "gtest/gtest.h"

namespace distflow {
namespace {

using Event = ReadableWatcher::Event;

// Both ends of a connected stream socket pair, closed at the end.
struct Pair {
  Pair() { EXPECT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, fd), 0); }
  ~Pair() {
    close(fd[0]);
    close(fd[1]);
  }
  int fd[2];
};

TEST(ReadableWatcherTest, RunsOnItsOwnThreadOnceBytesArrive) {
  ReadableWatcher watcher;
  Pair p;
  absl::Notification done;
  Event got = Event::kStopped;
  std::thread::id ran_on;
  char byte = 0;
  ASSERT_TRUE(watcher.Watch(p.fd[0], absl::InfiniteFuture(), [&](Event e) {
    got = e;
    ran_on = std::this_thread::get_id();
    EXPECT_EQ(recv(p.fd[0], &byte, 1, MSG_DONTWAIT), 1);
    done.Notify();
  }));
  EXPECT_EQ(watcher.Watching(), 1);
  ASSERT_EQ(write(p.fd[1], "x", 1), 1);
  ASSERT_TRUE(done.WaitForNotificationWithTimeout(absl::Seconds(30)));
  EXPECT_EQ(got, Event::kReadable);
  EXPECT_EQ(byte, 'x');
  EXPECT_NE(ran_on, std::this_thread::get_id());
  EXPECT_EQ(watcher.Watching(), 0);
}

TEST(ReadableWatcherTest, AHangUpIsReadable) {
  ReadableWatcher watcher;
  Pair p;
  absl::Notification done;
  Event got = Event::kStopped;
  ASSERT_TRUE(watcher.Watch(p.fd[0], absl::InfiniteFuture(), [&](Event e) {
    got = e;
    done.Notify();
  }));
  shutdown(p.fd[1], SHUT_WR);
  ASSERT_TRUE(done.WaitForNotificationWithTimeout(absl::Seconds(30)));
  EXPECT_EQ(got, Event::kReadable);
  char byte;
  EXPECT_EQ(recv(p.fd[0], &byte, 1, MSG_DONTWAIT), 0);  // end of file
}

TEST(ReadableWatcherTest, DeadlinesPassInOrderAndAnEarlierOneWakesTheLoop) {
  ReadableWatcher watcher;
  Pair far, near;
  absl::Mutex mu;
  std::vector<int> order;
  absl::Time near_fired_at;
  const absl::Time far_deadline = absl::Now() + absl::Seconds(20);
  // The loop first sleeps towards the far deadline; the near one, watched
  // after, must end that sleep.
  Event far_event = Event::kReadable;
  ASSERT_TRUE(watcher.Watch(far.fd[0], far_deadline, [&](Event e) {
    absl::MutexLock lock(&mu);
    far_event = e;
    order.push_back(1);
  }));
  absl::SleepFor(absl::Milliseconds(20));
  const absl::Time near_deadline = absl::Now() + absl::Milliseconds(50);
  ASSERT_TRUE(watcher.Watch(near.fd[0], near_deadline, [&](Event e) {
    EXPECT_EQ(e, Event::kDeadline);
    absl::MutexLock lock(&mu);
    order.push_back(0);
    near_fired_at = absl::Now();
  }));
  // The near one fires while the far one is still watched.
  for (int i = 0; i < 3000 && watcher.Watching() == 2; ++i) absl::SleepFor(absl::Milliseconds(5));
  {
    absl::MutexLock lock(&mu);
    ASSERT_EQ(order, std::vector<int>({0}));
    EXPECT_GE(near_fired_at, near_deadline);
  }
  EXPECT_EQ(watcher.Watching(), 1);
  watcher.Stop();  // the far one ends kStopped, never kDeadline
  absl::MutexLock lock(&mu);
  EXPECT_EQ(order, std::vector<int>({0, 1}));
  EXPECT_EQ(far_event, Event::kStopped);
}

TEST(ReadableWatcherTest, StopEndsPendingWatchesOnTheCallersThreadAndRefusesMore) {
  ReadableWatcher watcher;
  Pair p;
  Event got = Event::kReadable;
  std::thread::id ran_on;
  ASSERT_TRUE(watcher.Watch(p.fd[0], absl::Now() + absl::Hours(1), [&](Event e) {
    got = e;
    ran_on = std::this_thread::get_id();
  }));
  watcher.Stop();
  EXPECT_EQ(got, Event::kStopped);
  EXPECT_EQ(ran_on, std::this_thread::get_id());
  EXPECT_FALSE(watcher.Watch(p.fd[1], absl::InfiniteFuture(), [](Event) { ADD_FAILURE(); }));
  watcher.Stop();  // idempotent
}

TEST(ReadableWatcherTest, ACallbackMayWatchItsDescriptorAgainAndStopTheWatcher) {
  auto watcher = std::make_unique<ReadableWatcher>();
  Pair p;
  absl::Notification done;
  std::atomic<int> rounds{0};
  std::function<void(Event)> again = [&](Event e) {
    char byte;
    ASSERT_EQ(e, Event::kReadable);
    ASSERT_EQ(recv(p.fd[0], &byte, 1, MSG_DONTWAIT), 1);
    if (++rounds == 3) {
      watcher->Stop();  // from the watcher's own thread: no self-join
      done.Notify();
      return;
    }
    ASSERT_TRUE(watcher->Watch(p.fd[0], absl::InfiniteFuture(), again));
    ASSERT_EQ(write(p.fd[1], "y", 1), 1);
  };
  ASSERT_TRUE(watcher->Watch(p.fd[0], absl::InfiniteFuture(), again));
  ASSERT_EQ(write(p.fd[1], "y", 1), 1);
  ASSERT_TRUE(done.WaitForNotificationWithTimeout(absl::Seconds(30)));
  EXPECT_EQ(rounds.load(), 3);
  watcher.reset();
}

TEST(ReadableWatcherTest, ManyDescriptorsEachEndExactlyOnce) {
  constexpr int kPairs = 200;
  ReadableWatcher watcher;
  std::vector<std::unique_ptr<Pair>> pairs;
  std::vector<std::atomic<int>> runs(kPairs);
  std::atomic<int> total{0};
  absl::Notification all;
  for (int i = 0; i < kPairs; ++i) {
    pairs.push_back(std::make_unique<Pair>());
    ASSERT_TRUE(watcher.Watch(pairs[i]->fd[0], absl::InfiniteFuture(), [&, i](Event e) {
      EXPECT_EQ(e, Event::kReadable);
      ++runs[i];
      if (++total == kPairs) all.Notify();
    }));
  }
  for (int i = kPairs - 1; i >= 0; --i) ASSERT_EQ(write(pairs[i]->fd[1], "z", 1), 1);
  ASSERT_TRUE(all.WaitForNotificationWithTimeout(absl::Seconds(30)));
  for (int i = 0; i < kPairs; ++i) EXPECT_EQ(runs[i].load(), 1) << i;
  EXPECT_EQ(watcher.Watching(), 0);
}

TEST(ReadableWatcherTest, ADescriptorTheKernelRefusesIsNotWatched) {
  ReadableWatcher watcher;
  EXPECT_FALSE(watcher.Watch(-1, absl::InfiniteFuture(), [](Event) { ADD_FAILURE(); }));
  Pair p;
  const int closed = dup(p.fd[0]);
  close(closed);
  EXPECT_FALSE(watcher.Watch(closed, absl::InfiniteFuture(), [](Event) { ADD_FAILURE(); }));
  EXPECT_EQ(watcher.Watching(), 0);
}

}  // namespace
}  // namespace distflow
